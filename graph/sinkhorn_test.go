package graph

import (
	"errors"
	"math"
	"math/rand"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// sums returns the row and column sums of m.
func sums(m *Matrix) (rows, cols []float64) {
	r, c := m.Dims()
	rows, cols = make([]float64, r), make([]float64, c)
	for i := 0; i < r; i++ {
		for p := m.indptr[i]; p < m.indptr[i+1]; p++ {
			rows[i] += m.val64[p]
			cols[m.indices[p]] += m.val64[p]
		}
	}
	return rows, cols
}

// requireDoublyStochastic checks every row and column sum of p is within
// tol of 1 (plus the rounding of a float64 sum).
func requireDoublyStochastic(t *testing.T, p *Matrix, tol float64, msg string) {
	t.Helper()
	rows, cols := sums(p)
	for i := range rows {
		require.InDelta(t, 1, rows[i], tol+1e-12, "%s: row %d", msg, i)
		require.InDelta(t, 1, cols[i], tol+1e-12, "%s: column %d", msg, i)
	}
}

// TestDoublyStochasticHandComputed checks three matrices whose scaling
// is known in closed form.
func TestDoublyStochasticHandComputed(t *testing.T) {
	opts := SinkhornOptions{Tol: 1e-12, MaxIter: 1000}

	// Two nodes, one edge, self-loops: every entry 1/2.
	g, err := FromEdges(2, [][2]int{{0, 1}})
	require.NoError(t, err)
	p, err := DoublyStochastic(NormalizedAdjacency(g), opts)
	require.NoError(t, err)
	assert.InDeltaSlice(t, []float64{0.5, 0.5, 0.5, 0.5}, p.Dense(), 1e-12)

	// The path 0 − 1 − 2 with self-loops: P = D(A + I)D with d₀ = d₂ = a,
	// d₁ = b. Row 0: a(a + b) = 1; row 1: b(2a + b) = 1; so a/b = φ, the
	// golden ratio, a² = 1/φ and b² = 1/φ³.
	g, err = FromEdges(3, [][2]int{{0, 1}, {1, 2}})
	require.NoError(t, err)
	phi := (1 + math.Sqrt(5)) / 2
	want := []float64{
		1 / phi, 1 / (phi * phi), 0,
		1 / (phi * phi), 1 / (phi * phi * phi), 1 / (phi * phi),
		0, 1 / (phi * phi), 1 / phi,
	}
	for _, norm := range []bool{true, false} {
		o := DefaultNormOptions()
		o.Normalize = norm
		a, err := GCNNorm(g, o)
		require.NoError(t, err)
		p, steps, err := DoublyStochasticSteps(a, opts)
		require.NoError(t, err)
		assert.InDeltaSlice(t, want, p.Dense(), 1e-12, "normalize %v", norm)
		assert.True(t, p.Symmetric())
		assert.Positive(t, steps)
	}

	// A non-symmetric 2 × 2 matrix [[1, 2], [1, 1]]: a doubly
	// stochastic 2 × 2 matrix is [[q, 1−q], [1−q, q]], and scaling keeps
	// the cross ratio a₀₀a₁₁/(a₀₁a₁₀) = 1/2 = q²/(1−q)², so q = √2 − 1.
	m, err := NewMatrix(2, 2, []int{0, 0, 1, 1}, []int{0, 1, 0, 1}, []float64{1, 2, 1, 1})
	require.NoError(t, err)
	require.False(t, m.Symmetric())
	p, err = DoublyStochastic(m, opts)
	require.NoError(t, err)
	q := math.Sqrt2 - 1
	assert.InDeltaSlice(t, []float64{q, 1 - q, 1 - q, q}, p.Dense(), 1e-11)
}

// TestDoublyStochasticErrors checks every refusal is an error naming
// what is wrong.
func TestDoublyStochasticErrors(t *testing.T) {
	def := DefaultSinkhornOptions()
	_, err := DoublyStochastic(nil, def)
	assert.ErrorContains(t, err, "nil matrix")

	rect, err := NewMatrix(2, 3, []int{0, 1}, []int{0, 2}, []float64{1, 1})
	require.NoError(t, err)
	_, err = DoublyStochastic(rect, def)
	assert.ErrorContains(t, err, "2 × 3")

	neg, err := NewMatrix(2, 2, []int{0, 1}, []int{0, 1}, []float64{1, -1})
	require.NoError(t, err)
	_, err = DoublyStochastic(neg, def)
	assert.ErrorContains(t, err, "entry (1, 1) is -1")

	// Node 2 has no edge and no self-loop: its row is empty.
	g, err := FromEdges(3, [][2]int{{0, 1}})
	require.NoError(t, err)
	_, err = DoublyStochastic(Adjacency(g), def)
	assert.ErrorContains(t, err, "row 2 has no positive entry")

	// A zero column in a non-symmetric matrix.
	zc, err := NewMatrix(2, 2, []int{0, 1}, []int{0, 0}, []float64{1, 1})
	require.NoError(t, err)
	_, err = DoublyStochastic(zc, def)
	assert.ErrorContains(t, err, "column 1 has no positive entry")

	// A star without self-loops lacks total support: the centre's row
	// must give all its weight to leaves whose columns it must fill
	// alone. The iteration does not converge: an error, not a matrix.
	star, err := FromEdges(3, [][2]int{{0, 1}, {0, 2}})
	require.NoError(t, err)
	_, steps, err := DoublyStochasticSteps(Adjacency(star), SinkhornOptions{Tol: 1e-6, MaxIter: 50})
	assert.True(t, errors.Is(err, ErrNotConverged), "%v", err)
	assert.ErrorContains(t, err, "in 50 steps")
	assert.Equal(t, 50, steps)
	// [[1, 1], [0, 1]] too (its limit is I, never reached).
	tri, err := NewMatrix(2, 2, []int{0, 0, 1}, []int{0, 1, 1}, []float64{1, 1, 1})
	require.NoError(t, err)
	_, err = DoublyStochastic(tri, SinkhornOptions{Tol: 1e-6, MaxIter: 100})
	assert.True(t, errors.Is(err, ErrNotConverged), "%v", err)

	for _, o := range []SinkhornOptions{{Tol: 0, MaxIter: 10}, {Tol: 1, MaxIter: 10}, {Tol: math.NaN(), MaxIter: 10}, {Tol: 1e-13, MaxIter: 10}, {Tol: 1e-3, MaxIter: 0}, {Tol: 1e-3, MaxIter: 2_000_000}} {
		_, err := DoublyStochastic(NormalizedAdjacency(star), o)
		assert.ErrorContains(t, err, "SinkhornOptions", "%+v", o)
	}
	assert.NoError(t, def.Validate())
}

// TestDoublyStochasticProperties checks, on random graphs with
// self-loops (isolated nodes included): every row and column sums to 1
// within Tol; the result is exactly symmetric; it keeps the pattern and
// is D·Â·D for a positive diagonal D; it does not depend on where the
// iteration starts (normalised or not: the scaling is unique); and a
// doubly stochastic matrix is its own scaling, in no step. Random
// non-negative non-symmetric matrices with a positive diagonal go
// (and a symmetric pattern, for total support) go through the general
// iteration and must sum to 1 too.
func TestDoublyStochasticProperties(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	opts := DefaultSinkhornOptions()
	for trial := 0; trial < 30; trial++ {
		n := 2 + rng.Intn(60)
		g := randomGraph(t, rng, n, rng.Intn(4*n))
		o := DefaultNormOptions()
		if trial%3 == 0 {
			o.SelfLoopWeight = 2
		}
		a, err := GCNNorm(g, o)
		require.NoError(t, err)
		p, err := DoublyStochastic(a, opts)
		require.NoError(t, err, "trial %d", trial)
		requireDoublyStochastic(t, p, opts.Tol, "trial")
		require.True(t, p.Symmetric(), "trial %d", trial)
		require.Equal(t, a.Indptr(), p.Indptr())
		require.Equal(t, a.Indices(), p.Indices())
		// P = D Â D: P_ij / Â_ij = d_i d_j, and d_i² = P_ii / Â_ii.
		d := make([]float64, n)
		for i := 0; i < n; i++ {
			pii, _ := p.At(i, i)
			aii, _ := a.At(i, i)
			d[i] = math.Sqrt(pii / aii)
		}
		for i := 0; i < n; i++ {
			for q := a.indptr[i]; q < a.indptr[i+1]; q++ {
				j := a.indices[q]
				require.Positive(t, p.val64[q])
				require.InDelta(t, d[i]*d[j], p.val64[q]/a.val64[q], 1e-9*d[i]*d[j])
			}
		}
		// The same scaling from the unnormalised Â.
		o.Normalize = false
		raw, err := GCNNorm(g, o)
		require.NoError(t, err)
		p2, err := DoublyStochastic(raw, opts)
		require.NoError(t, err)
		for q := range p.val64 {
			require.InDelta(t, p.val64[q], p2.val64[q], 10*opts.Tol, "trial %d", trial)
		}
		// Idempotent at a tighter tolerance.
		pt, err := DoublyStochastic(a, SinkhornOptions{Tol: 1e-11, MaxIter: 10000})
		require.NoError(t, err)
		_, steps, err := DoublyStochasticSteps(pt, SinkhornOptions{Tol: 1e-10, MaxIter: 10})
		require.NoError(t, err)
		require.Zero(t, steps)

		// A random non-symmetric matrix with a positive diagonal and a
		// symmetric pattern (total support: every entry (i, j) lies on
		// the diagonal that swaps i and j), different values each way.
		var r, c []int
		var v []float64
		for i := 0; i < n; i++ {
			r, c, v = append(r, i), append(c, i), append(v, 0.1+rng.Float64())
		}
		for k := 0; k < 2*n; k++ {
			i, j := rng.Intn(n), rng.Intn(n)
			r, c, v = append(r, i, j), append(c, j, i), append(v, 0.1+rng.Float64(), 0.1+rng.Float64())
		}
		m, err := NewMatrix(n, n, r, c, v)
		require.NoError(t, err)
		pm, err := DoublyStochastic(m, opts)
		require.NoError(t, err, "trial %d", trial)
		requireDoublyStochastic(t, pm, opts.Tol, "non-symmetric")
	}
}

// BenchmarkDoublyStochastic scales Ã of a random graph of Pokec-z's size
// (67,796 nodes, about 618,000 edges) at the default tolerance.
func BenchmarkDoublyStochastic(b *testing.B) {
	rng := rand.New(rand.NewSource(1))
	n := 67796
	edges := make([][2]int, 618000)
	for k := range edges {
		edges[k] = [2]int{rng.Intn(n), rng.Intn(n)}
	}
	g, err := FromEdges(n, edges)
	if err != nil {
		b.Fatal(err)
	}
	a := NormalizedAdjacency(g)
	b.ResetTimer()
	for range b.N {
		_, steps, err := DoublyStochasticSteps(a, DefaultSinkhornOptions())
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(steps), "steps")
	}
}
