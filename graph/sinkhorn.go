package graph

import (
	"errors"
	"fmt"
	"math"
)

// SinkhornOptions configures [DoublyStochastic]: when the Sinkhorn–Knopp
// iteration stops. The zero value is not valid; start from
// [DefaultSinkhornOptions].
type SinkhornOptions struct {
	// Tol is the tolerance: the iteration stops as soon as every row sum
	// and every column sum of the scaled matrix is within Tol of 1. In
	// [1e-12, 1). Default 1e-6. RawlsGCN's reference code stops at
	// 1e-2, a matrix whose rows may sum to 0.99 or 1.01; the default asks
	// for six decimals, which the iteration reaches in 26 steps on NBA, 28
	// on Bail and 32 on Credit from GCN's matrix (about 20 ms on Bail):
	// each step gains about one decimal in five.
	Tol float64 `json:"tol"`
	// MaxIter caps the number of scaling steps, in [1, 1e6]. Default
	// 1000. A matrix still outside Tol after MaxIter steps is an error
	// (ErrNotConverged), never a matrix returned as if it converged.
	MaxIter int `json:"max_iter"`
}

// DefaultSinkhornOptions returns Tol 1e-6 and MaxIter 1000.
func DefaultSinkhornOptions() SinkhornOptions {
	return SinkhornOptions{Tol: 1e-6, MaxIter: 1000}
}

// Bounds of SinkhornOptions.
const (
	minSinkhornTol     = 1e-12
	maxSinkhornMaxIter = 1_000_000
)

// Validate returns an error for a Tol outside [1e-12, 1) (or NaN) or a
// MaxIter outside [1, 1e6]. The lower bound on Tol is the rounding of a
// float64 row sum: a smaller tolerance could not be checked.
func (o SinkhornOptions) Validate() error {
	if !(o.Tol >= minSinkhornTol && o.Tol < 1) {
		return fmt.Errorf("SinkhornOptions.Tol = %v, want a tolerance in [%g, 1), e.g. %g", o.Tol, minSinkhornTol, DefaultSinkhornOptions().Tol)
	}
	if o.MaxIter < 1 || o.MaxIter > maxSinkhornMaxIter {
		return fmt.Errorf("SinkhornOptions.MaxIter = %d, want a number of steps in [1, %d], e.g. %d", o.MaxIter, maxSinkhornMaxIter, DefaultSinkhornOptions().MaxIter)
	}
	return nil
}

// ErrNotConverged is returned (wrapped) by DoublyStochastic when the
// iteration does not bring every row and column sum within the tolerance
// in the steps allowed.
var ErrNotConverged = errors.New("graph: Sinkhorn–Knopp did not converge")

// DoublyStochastic returns the doubly stochastic scaling of the square
// non-negative matrix m: the matrix P = D₁ m D₂, with D₁ and D₂ diagonal
// and positive, whose every row and every column sums to 1 (within
// opts.Tol). It is computed by the Sinkhorn–Knopp iteration (Sinkhorn &
// Knopp 1967), alternately scaling rows and columns to sum to 1. P keeps
// m's pattern of entries, and it is unique: two such scalings of m are
// the same matrix. RawlsGCN-Graph (Kang et al., WWW 2022) propagates over
// the P of a GCN's matrix D̂^-½(A + I)D̂^-½ instead of the matrix itself
// (see layers.Propagation.DoublyStochastic): every node then gives and
// receives the same total weight, whatever its degree.
//
// P exists when m has total support (every entry lies on a diagonal of
// positive entries, as in any symmetric matrix with a positive diagonal:
// A + I, and its normalisation). A matrix without it, such as the
// adjacency of a star without self-loops, does not converge, and
// DoublyStochastic returns an error wrapping ErrNotConverged after
// opts.MaxIter steps.
//
// For a symmetric m it scales rows and columns together, P = D m D, so
// that P is exactly symmetric (P_ij and P_ji are the same float64): the
// iteration is x ← √(x ⊘ m x), the geometric mean of two successive
// Sinkhorn–Knopp steps, started from x = d^-½ (d the row sums of m), so
// that its first matrix is m's symmetric normalisation. Each step costs
// one sparse product m·x; DoublyStochasticSteps reports how many were
// taken.
//
// It returns an error for invalid opts, a matrix that is not square, a
// negative entry, or a row or column without a positive entry (naming
// it: a node without edges and without self-loop has no doubly
// stochastic scaling; add self-loops).
func DoublyStochastic(m *Matrix, opts SinkhornOptions) (*Matrix, error) {
	p, _, err := DoublyStochasticSteps(m, opts)
	return p, err
}

// DoublyStochasticSteps is DoublyStochastic that also returns the
// number of scaling steps taken (0 when m is already doubly stochastic
// within opts.Tol, or, for a symmetric m, when its symmetric
// normalisation is).
func DoublyStochasticSteps(m *Matrix, opts SinkhornOptions) (*Matrix, int, error) {
	if m == nil {
		return nil, 0, fmt.Errorf("graph: DoublyStochastic: nil matrix")
	}
	if err := opts.Validate(); err != nil {
		return nil, 0, fmt.Errorf("graph: DoublyStochastic: %w", err)
	}
	if m.rows != m.cols {
		return nil, 0, fmt.Errorf("graph: DoublyStochastic: the matrix is %d × %d, want a square matrix", m.rows, m.cols)
	}
	n := m.rows
	rowSum := make([]float64, n)
	colSum := make([]float64, n)
	for i := 0; i < n; i++ {
		for p := m.indptr[i]; p < m.indptr[i+1]; p++ {
			v := m.val64[p]
			if v < 0 {
				return nil, 0, fmt.Errorf("graph: DoublyStochastic: entry (%d, %d) is %v, want a non-negative matrix", i, m.indices[p], v)
			}
			rowSum[i] += v
			colSum[m.indices[p]] += v
		}
	}
	for i := 0; i < n; i++ {
		if !(rowSum[i] > 0) {
			return nil, 0, fmt.Errorf("graph: DoublyStochastic: row %d has no positive entry (a node without edges or self-loop?), want every row and column to have one: add self-loops", i)
		}
		if !(colSum[i] > 0) {
			return nil, 0, fmt.Errorf("graph: DoublyStochastic: column %d has no positive entry, want every row and column to have one", i)
		}
	}
	if m.symmetric {
		return sinkhornSymmetric(m, rowSum, opts)
	}
	return sinkhornGeneral(m, opts)
}

// sinkhornSymmetric scales a symmetric m to D m D (see DoublyStochastic);
// d holds m's row sums.
func sinkhornSymmetric(m *Matrix, d []float64, opts SinkhornOptions) (*Matrix, int, error) {
	n := m.rows
	x := make([]float64, n)
	for i, v := range d {
		x[i] = 1 / math.Sqrt(v)
	}
	s := make([]float64, n)
	steps := 0
	for {
		m.MulDense64(s, x, 1)
		dev, at := 0.0, 0
		for i := range x {
			if e := math.Abs(x[i]*s[i] - 1); e > dev || math.IsNaN(e) {
				dev, at = e, i
			}
		}
		if dev <= opts.Tol {
			break
		}
		if steps == opts.MaxIter || math.IsNaN(dev) || math.IsInf(dev, 0) {
			return nil, steps, notConverged(steps, x[at]*s[at], "row", at, opts)
		}
		for i := range x {
			x[i] = math.Sqrt(x[i] / s[i])
		}
		steps++
	}
	val := make([]float64, len(m.val64))
	for i := 0; i < n; i++ {
		for p := m.indptr[i]; p < m.indptr[i+1]; p++ {
			// x_i·x_j is commutative in floating point, so P_ij and
			// P_ji are the same number.
			val[p] = m.val64[p] * (x[i] * x[m.indices[p]])
		}
	}
	return newMatrix(n, n, append([]int(nil), m.indptr...), append([]int32(nil), m.indices...), val, true), steps, nil
}

// sinkhornGeneral scales any square m to D₁ m D₂ by alternating row and
// column scalings (Sinkhorn–Knopp): r = 1 ⊘ (m c) makes every row sum 1,
// then the column sums c ⊙ mᵀr are checked and c = 1 ⊘ mᵀr makes them 1.
func sinkhornGeneral(m *Matrix, opts SinkhornOptions) (*Matrix, int, error) {
	n := m.rows
	mt := m.Transpose()
	r, c := make([]float64, n), make([]float64, n)
	s, t := make([]float64, n), make([]float64, n)
	for j := range c {
		c[j] = 1
	}
	steps := 0
	for {
		m.MulDense64(s, c, 1)
		for i := range r {
			r[i] = 1 / s[i]
		}
		mt.MulDense64(t, r, 1)
		dev, at := 0.0, 0
		for j := range c {
			if e := math.Abs(c[j]*t[j] - 1); e > dev || math.IsNaN(e) {
				dev, at = e, j
			}
		}
		if dev <= opts.Tol {
			break
		}
		if steps == opts.MaxIter || math.IsNaN(dev) || math.IsInf(dev, 0) {
			return nil, steps, notConverged(steps, c[at]*t[at], "column", at, opts)
		}
		for j := range c {
			c[j] = 1 / t[j]
		}
		steps++
	}
	val := make([]float64, len(m.val64))
	for i := 0; i < n; i++ {
		for p := m.indptr[i]; p < m.indptr[i+1]; p++ {
			val[p] = r[i] * m.val64[p] * c[m.indices[p]]
		}
	}
	out := newMatrix(n, n, append([]int(nil), m.indptr...), append([]int32(nil), m.indices...), val, false)
	out.symmetric = out.isSymmetric()
	return out, steps, nil
}

// notConverged is DoublyStochastic's error after steps steps, sum being
// the sum furthest from 1 (of row or column at).
func notConverged(steps int, sum float64, what string, at int, opts SinkhornOptions) error {
	return fmt.Errorf("%w in %d steps: %s %d sums to %.12g, want 1 within Tol = %g (a matrix without total support, such as a graph's adjacency without self-loops, has no doubly stochastic scaling; otherwise raise MaxIter = %d or Tol)",
		ErrNotConverged, steps, what, at, sum, opts.Tol, opts.MaxIter)
}
