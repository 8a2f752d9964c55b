// Package augment holds the perturbations of features and graphs that
// several of fairmp's packages draw: flipping a binary feature column and
// dropping edges at random. NIFTY's training views (layers/fairtrain) and
// the counterfactual and instability measures (layers/perturb) both use
// them, so that one drop of an edge means one thing.
package augment

import (
	"math/rand"

	"github.com/fairmp/fairmp/graph"
)

// FlipColumn flips column col of the n × d features x in place: 0
// becomes 1 and 1 becomes 0; other values (an unknown group, −1) are left
// as they are.
func FlipColumn(x []float64, d, col int) {
	for i := 0; i < len(x)/d; i++ {
		switch x[i*d+col] {
		case 0:
			x[i*d+col] = 1
		case 1:
			x[i*d+col] = 0
		}
	}
}

// DropEdges returns gr without each of its undirected edges with
// probability p, one draw of rng per edge in the order of gr.Edges. It
// returns graph.FromEdges's error.
func DropEdges(gr *graph.Graph, p float64, rng *rand.Rand) (*graph.Graph, error) {
	var kept [][2]int
	for _, e := range gr.Edges() {
		if rng.Float64() >= p {
			kept = append(kept, e)
		}
	}
	return graph.FromEdges(gr.N(), kept)
}
