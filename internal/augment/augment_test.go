package augment

import (
	"math/rand"
	"testing"

	"github.com/fairmp/fairmp/graph"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestFlipColumn: 3 nodes × 2 features, column 1 flipped by hand; −1 and
// other values stay.
func TestFlipColumn(t *testing.T) {
	x := []float64{5, 0, 6, 1, 7, -1}
	FlipColumn(x, 2, 1)
	assert.Equal(t, []float64{5, 1, 6, 0, 7, -1}, x)
}

// TestDropEdges: p = 0 keeps every edge, p just under 1 drops each edge
// whose draw is below it, one draw per edge in the order of Edges.
func TestDropEdges(t *testing.T) {
	gr, err := graph.FromEdges(4, [][2]int{{0, 1}, {1, 2}, {2, 3}, {0, 3}})
	require.NoError(t, err)
	all, err := DropEdges(gr, 0, rand.New(rand.NewSource(1)))
	require.NoError(t, err)
	assert.Equal(t, gr.Edges(), all.Edges())

	const p = 0.5
	rng := rand.New(rand.NewSource(7))
	var want [][2]int
	for _, e := range gr.Edges() {
		if rng.Float64() >= p {
			want = append(want, e)
		}
	}
	got, err := DropEdges(gr, p, rand.New(rand.NewSource(7)))
	require.NoError(t, err)
	assert.Equal(t, want, got.Edges())
	assert.Equal(t, gr.N(), got.N())
}
