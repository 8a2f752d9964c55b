package datasets

import (
	"fmt"
	"math"

	"github.com/fairmp/fairmp/internal/par"
)

// similarityEdges builds NIFTY's feature-similarity edges over the n rows
// of the row-major n × d matrix x: with sim(i, j) = 1/(1 + ‖x_i − x_j‖₂),
// node i is linked to every j ≠ i whose similarity exceeds threshold times
// the largest similarity of i to any other node. The result lists the
// directed pairs (i, j) by ascending i, then j (build a graph with
// graph.FromEdges, which symmetrises them).
//
// It takes O(n²·d) time and O(n) memory per worker; rows are processed in
// parallel in fixed blocks, and the result does not depend on the number
// of workers. It returns an error if n < 2, d < 1, len(x) != n·d, x holds
// a non-finite value, or threshold is not in [0, 1].
func similarityEdges(x []float64, n, d int, threshold float64) ([][2]int, error) {
	if n < 2 || d < 1 || len(x) != n*d {
		return nil, fmt.Errorf("datasets: similarityEdges: %d values for %d × %d rows × columns, want n >= 2, d >= 1 and n·d values", len(x), n, d)
	}
	if !(threshold >= 0 && threshold <= 1) {
		return nil, fmt.Errorf("datasets: similarityEdges: threshold = %v, want a value in [0, 1]", threshold)
	}
	for k, v := range x {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("datasets: similarityEdges: x[%d] (row %d, column %d) = %v, want a finite value", k, k/d, k%d, v)
		}
	}
	const block = 64
	nb := (n + block - 1) / block
	out := make([][][2]int, nb)
	par.ForWith(nb, func() []float64 { return make([]float64, n) }, func(sqd []float64, b int) {
		var pairs [][2]int
		for i := b * block; i < n && i < (b+1)*block; i++ {
			xi := x[i*d : (i+1)*d : (i+1)*d]
			// Squared distances first; sim is a non-increasing
			// function of them (also in floating point), so the
			// largest similarity is that of the smallest distance.
			minSS := math.Inf(1)
			for j := 0; j < n; j++ {
				xj := x[j*d : (j+1)*d : (j+1)*d]
				ss := 0.0
				for k, v := range xi {
					t := v - xj[k]
					ss += t * t
				}
				sqd[j] = ss
				if j != i && ss < minSS {
					minSS = ss
				}
			}
			cut := threshold * (1 / (1 + math.Sqrt(minSS)))
			// sim > cut needs ss < (1/cut − 1)²; skip rows far
			// beyond that bound (with a wide margin for rounding)
			// and test the rest exactly as NIFTY does.
			bound := math.Inf(1)
			if cut > 0 {
				r := 1/cut - 1
				bound = r*r*(1+1e-6) + 1e-300
			}
			for j, ss := range sqd {
				if j != i && ss <= bound && 1/(1+math.Sqrt(ss)) > cut {
					pairs = append(pairs, [2]int{i, j})
				}
			}
		}
		out[b] = pairs
	})
	total := 0
	for _, p := range out {
		total += len(p)
	}
	edges := make([][2]int, 0, total)
	for _, p := range out {
		edges = append(edges, p...)
	}
	return edges, nil
}
