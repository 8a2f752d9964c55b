package fmp

import (
	"fmt"
	"math"
	"sync/atomic"
)

var deltaIDs atomic.Uint64

// deltaS is the group-contrast matrix Δs (R × n) of FMP, built from a
// sensitive attribute. (Δs·SF(F)) is an R × c matrix of differences of
// mean predicted probabilities between groups: the quantity FMP drives
// towards zero.
//
// Two forms exist:
//
//   - Binary (R = 1), the paper's form, used when the attribute has exactly
//     two groups (values 0 and 1): Δs_i = +1/n₁ if s_i = 1, −1/n₀ if
//     s_i = 0, 0 if s_i is unknown (−1). (Δs·SF(F))_j is the difference
//     of the groups' mean probability of class j (group 1 minus group 0).
//   - Per-group rows (R = G), used for G ≥ 3 groups (or for G = 2 when
//     asked): row g is 1/n_g on the members of group g minus 1/n_known on
//     every node whose group is known, so (Δs·SF(F))_{g,j} is group g's
//     mean probability of class j minus the mean over all known nodes.
//
// For two groups the per-group rows are p₀·Δ and −p₁·Δ, where Δ is the
// binary row and p_g = n_g/n_known, so λf Σ_g ‖row_g·SF(F)‖₁ equals the
// paper's λf ‖Δ·SF(F)‖₁: both forms define the same objective. Their
// primal-dual iterations differ (a 1 × c dual against a 2 × c one), which
// is why the binary attribute uses the paper's single row by default.
//
// A deltaS is immutable and safe for concurrent use. Its ID identifies it
// in op hashes.
type deltaS struct {
	rows, n int
	d64     []float64 // rows × n, row-major
	groups  int
	counts  []int // members per group value
	known   int
	normSq  float64
	id      uint64
}

// newDeltaS builds Δs from sens, the sensitive group of each node (0, 1,
// ..., G−1; −1 = unknown, masked out). Every group value from 0 to the
// largest one must have at least one member, and at least two groups must
// be present. With exactly two groups the binary (paper) form is used
// unless perGroup is true; with three or more the per-group form is used.
//
// newDeltaS returns an error for values below −1, for an empty group, and
// for fewer than two groups.
func newDeltaS(sens []int, perGroup bool) (*deltaS, error) {
	n := len(sens)
	if n == 0 {
		return nil, fmt.Errorf("fmp: the sensitive attribute: empty sensitive attribute")
	}
	maxG := -1
	for i, s := range sens {
		if s < -1 {
			return nil, fmt.Errorf("fmp: the sensitive attribute: sens[%d] = %d, want a group id ≥ 0 or −1 (unknown)", i, s)
		}
		if s > maxG {
			maxG = s
		}
	}
	groups := maxG + 1
	if groups < 2 {
		return nil, fmt.Errorf("fmp: the sensitive attribute: %d known group(s), want at least 2", groups)
	}
	if groups > n {
		return nil, fmt.Errorf("fmp: the sensitive attribute: largest group id %d exceeds the %d nodes", maxG, n)
	}
	counts := make([]int, groups)
	known := 0
	for _, s := range sens {
		if s >= 0 {
			counts[s]++
			known++
		}
	}
	for g, c := range counts {
		if c == 0 {
			return nil, fmt.Errorf("fmp: the sensitive attribute: group %d has no known member (group ids must be 0..%d without gaps)", g, maxG)
		}
	}
	ds := &deltaS{n: n, groups: groups, counts: counts, known: known, id: deltaIDs.Add(1)}
	rows, coef := contrast(counts, perGroup)
	ds.rows = rows
	ds.d64 = make([]float64, rows*n)
	for r := 0; r < rows; r++ {
		row := ds.d64[r*n : (r+1)*n]
		for i, s := range sens {
			if s >= 0 {
				row[i] = coef[r*groups+s]
			}
		}
	}
	ds.normSq = spectralNormSq(ds.d64, ds.rows, n)
	return ds, nil
}

// Rows returns R, the number of rows of Δs (1 for the binary form, G for
// the per-group form); the dual u is R × c.
func (d *deltaS) Rows() int { return d.rows }

// N returns the number of nodes (columns of Δs).
func (d *deltaS) N() int { return d.n }

// Groups returns G, the number of group values.
func (d *deltaS) Groups() int { return d.groups }

// Counts returns the number of known members of each group. Do not modify.
func (d *deltaS) Counts() []int { return d.counts }

// Known returns the number of nodes whose group is known.
func (d *deltaS) Known() int { return d.known }

// PerGroup reports whether Δs has one row per group (false: the binary
// single row of the paper).
func (d *deltaS) PerGroup() bool { return d.rows > 1 }

// NormSq returns ‖Δs‖², the squared spectral norm (largest eigenvalue of
// Δs Δsᵀ). For the binary form it is 1/n₀ + 1/n₁.
func (d *deltaS) NormSq() float64 { return d.normSq }

// ID returns the identity used in op hashes.
func (d *deltaS) ID() uint64 { return d.id }

// Row returns row r of Δs in float64. Do not modify.
func (d *deltaS) Row(r int) []float64 { return d.d64[r*d.n : (r+1)*d.n] }

// spectralNormSq returns the largest eigenvalue of M Mᵀ for the rows × n
// matrix m: that of its small rows × rows Gram matrix.
func spectralNormSq(m []float64, rows, n int) float64 {
	a := make([]float64, rows*rows)
	for p := 0; p < rows; p++ {
		for q := p; q < rows; q++ {
			s := 0.0
			rp, rq := m[p*n:(p+1)*n], m[q*n:(q+1)*n]
			for i := range rp {
				s += rp[i] * rq[i]
			}
			a[p*rows+q], a[q*rows+p] = s, s
		}
	}
	return largestEigen(a, rows)
}

// largestEigen returns the largest eigenvalue of the symmetric rows × rows
// matrix a (overwritten), by the cyclic Jacobi method.
func largestEigen(a []float64, rows int) float64 {
	for sweep := 0; sweep < 100; sweep++ {
		off := 0.0
		for p := 0; p < rows; p++ {
			for q := p + 1; q < rows; q++ {
				off += a[p*rows+q] * a[p*rows+q]
			}
		}
		if off < 1e-300 {
			break
		}
		for p := 0; p < rows; p++ {
			for q := p + 1; q < rows; q++ {
				apq := a[p*rows+q]
				if apq == 0 {
					continue
				}
				theta := (a[q*rows+q] - a[p*rows+p]) / (2 * apq)
				t := math.Copysign(1, theta) / (math.Abs(theta) + math.Sqrt(theta*theta+1))
				c := 1 / math.Sqrt(t*t+1)
				s := t * c
				for k := 0; k < rows; k++ {
					akp, akq := a[k*rows+p], a[k*rows+q]
					a[k*rows+p] = c*akp - s*akq
					a[k*rows+q] = s*akp + c*akq
				}
				for k := 0; k < rows; k++ {
					apk, aqk := a[p*rows+k], a[q*rows+k]
					a[p*rows+k] = c*apk - s*aqk
					a[q*rows+k] = s*apk + c*aqk
				}
			}
		}
	}
	best := 0.0
	for p := 0; p < rows; p++ {
		if a[p*rows+p] > best {
			best = a[p*rows+p]
		}
	}
	return best
}

// newSoftDeltaS builds the binary Δs from soft group memberships: p[i] is
// the probability that node i is in group 1 (1 or 0 where the group is
// known, an estimate elsewhere, such as FairGNN's estimator gives;
// fairtrain.EstimateSens), or NaN for a node left out. With W₁ = Σ p_i
// and W₀ = Σ (1 − p_i) over the nodes not left out,
//
//	Δs_i = p_i/W₁ − (1 − p_i)/W₀,
//
// so (Δs·SF(F))_j is the difference of the groups' weighted mean
// probabilities of class j, each node counting in group 1 with weight
// p_i and in group 0 with weight 1 − p_i. With p in {0, 1} (and NaN for
// unknown) it is newDeltaS's binary form exactly. Counts reports the
// rounded weights W₀, W₁ and Known the nodes not left out.
//
// newSoftDeltaS returns an error for an empty p, a value outside [0, 1]
// that is not NaN, or a group of total weight below 1/2.
func newSoftDeltaS(p []float64) (*deltaS, error) {
	n := len(p)
	if n == 0 {
		return nil, fmt.Errorf("fmp: NewSoft: empty memberships")
	}
	var w0, w1 float64
	known := 0
	for i, v := range p {
		if math.IsNaN(v) {
			continue
		}
		if v < 0 || v > 1 {
			return nil, fmt.Errorf("fmp: NewSoft: p[%d] = %v, want a probability in [0, 1] or NaN (left out)", i, v)
		}
		w0 += 1 - v
		w1 += v
		known++
	}
	if w0 < 0.5 || w1 < 0.5 {
		return nil, fmt.Errorf("fmp: NewSoft: group weights %.3g (group 0) and %.3g (group 1), want both ≥ 1/2: the memberships put (almost) every node in one group", w0, w1)
	}
	ds := &deltaS{n: n, rows: 1, groups: 2, counts: []int{int(math.Round(w0)), int(math.Round(w1))}, known: known, id: deltaIDs.Add(1)}
	ds.d64 = make([]float64, n)
	for i, v := range p {
		if math.IsNaN(v) {
			continue
		}
		ds.d64[i] = v/w1 - (1-v)/w0
	}
	ds.normSq = spectralNormSq(ds.d64, 1, n)
	return ds, nil
}
