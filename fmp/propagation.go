package fmp

import (
	"errors"
	"fmt"
	"math"

	"github.com/fairmp/fairmp/graph"
)

// ErrNotPropagation is returned by New for a matrix that is not the
// normalised propagation matrix of a graph.
var ErrNotPropagation = errors.New("not a normalised propagation matrix D̂^-½(A + wI)D̂^-½ of a graph: build it with graph.NormalizedAdjacency or graph.GCNNorm (Normalize on)")

// checkPropagation returns an error wrapping ErrNotPropagation unless adj
// is D̂^-½(A + wI)D̂^-½ for an unweighted, undirected graph A and one
// self-loop weight w ≥ 0 for every node (w = 0: no self-loops; 1: GCN's
// Ã; 2: PyG's improved GCN), D̂ the degrees of A + wI, to a relative
// tolerance of 1e-9. FMP's step sizes and the meaning of λf assume it;
// an unnormalised adjacency, for instance, makes the propagation diverge
// from the backbone's logits and the debiasing meaningless. O(nnz).
func checkPropagation(adj *graph.Matrix) error {
	if !adj.Symmetric() {
		return fmt.Errorf("%w: the matrix is not symmetric", ErrNotPropagation)
	}
	indptr, idx, val := adj.Indptr(), adj.Indices(), adj.Values64()
	n := len(indptr) - 1
	off := make([]int, n) // off-diagonal entries per row
	diag := make([]float64, n)
	for i := 0; i < n; i++ {
		for p := indptr[i]; p < indptr[i+1]; p++ {
			v := val[p]
			if !(v > 0) || math.IsInf(v, 0) {
				return fmt.Errorf("%w: entry (%d, %d) is %v, want a finite value > 0", ErrNotPropagation, i, idx[p], v)
			}
			if int(idx[p]) == i {
				diag[i] = v
			} else {
				off[i]++
			}
		}
	}
	// The self-loop weight, from the first row with a self-loop and
	// neighbours: a_ii = w/(e_i + w).
	w := 0.0
	for i := 0; i < n; i++ {
		if diag[i] > 0 && off[i] > 0 {
			if diag[i] >= 1 {
				return fmt.Errorf("%w: entry (%d, %d) is %v with %d neighbours, want < 1", ErrNotPropagation, i, i, diag[i], off[i])
			}
			w = diag[i] * float64(off[i]) / (1 - diag[i])
			break
		}
		if diag[i] > 0 && off[i] == 0 {
			w = math.NaN() // an isolated node with a self-loop: w undetermined here
		}
	}
	if math.IsNaN(w) {
		w = 1
	}
	close := func(got, want float64) bool { return math.Abs(got-want) <= 1e-9*math.Abs(want) }
	for i := 0; i < n; i++ {
		di := float64(off[i]) + w
		if wantDiag := w / di; (w > 0 || diag[i] > 0) && !(off[i] == 0 && diag[i] == 1) && !close(diag[i], wantDiag) {
			return fmt.Errorf("%w: entry (%d, %d) is %v, want %v for %d neighbours and self-loop weight %v", ErrNotPropagation, i, i, diag[i], wantDiag, off[i], w)
		}
		for p := indptr[i]; p < indptr[i+1]; p++ {
			j := int(idx[p])
			if j == i {
				continue
			}
			want := 1 / math.Sqrt(di*(float64(off[j])+w))
			if !close(val[p], want) {
				return fmt.Errorf("%w: entry (%d, %d) is %v, want 1/√(d̂_%d·d̂_%d) = %v (self-loop weight %v)", ErrNotPropagation, i, j, val[p], i, j, want, w)
			}
		}
	}
	return nil
}
