package graph

import (
	"math/rand"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestFromEdges(t *testing.T) {
	edges := [][2]int{{0, 1}, {1, 0}, {2, 1}, {1, 2}, {0, 0}, {3, 3}, {0, 1}}
	g, err := FromEdges(5, edges)
	require.NoError(t, err)
	assert.Equal(t, 5, g.N())
	assert.Equal(t, 2, g.NumEdges())
	assert.Equal(t, 2, g.Isolated())
	assert.Equal(t, Cleanup{Input: 7, SelfLoops: 2, Duplicates: 3}, g.Cleanup())
	assert.Equal(t, []int{1, 2, 1, 0, 0}, g.Degrees())
	for i, want := range [][]int32{{1}, {0, 2}, {1}, {}, {}} {
		if len(want) == 0 {
			assert.Empty(t, g.Neighbors(i), "neighbours of %d", i)
		} else {
			assert.Equal(t, want, g.Neighbors(i), "neighbours of %d", i)
		}
		assert.Equal(t, len(want), g.Degree(i), "degree of %d", i)
	}
	assert.Equal(t, [][2]int{{0, 1}, {1, 2}}, g.Edges())
	// No edges at all is a valid graph.
	g, err = FromEdges(3, nil)
	require.NoError(t, err)
	assert.Equal(t, 0, g.NumEdges())
	assert.Equal(t, 3, g.Isolated())
}

func TestFromEdgesErrors(t *testing.T) {
	for _, c := range []struct {
		n     int
		edges [][2]int
		want  string
	}{
		{0, nil, "n = 0, want n > 0"},
		{-3, nil, "n = -3, want n > 0"},
		{4, [][2]int{{0, 1}, {2, 3}, {1, 4}}, "edge 2 is (1, 4), want both ends in [0, 4)"},
		{4, [][2]int{{-1, 1}}, "edge 0 is (-1, 1)"},
	} {
		_, err := FromEdges(c.n, c.edges)
		assert.ErrorContains(t, err, c.want, "FromEdges(%d, %v)", c.n, c.edges)
	}
}

// TestFromEdgesRandom compares FromEdges with a set-based construction.
func TestFromEdgesRandom(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	n := 50
	edges := make([][2]int, 400)
	set := map[[2]int]bool{}
	loops := 0
	for k := range edges {
		u, v := rng.Intn(n), rng.Intn(n)
		edges[k] = [2]int{u, v}
		if u == v {
			loops++
			continue
		}
		set[[2]int{min(u, v), max(u, v)}] = true
	}
	g, err := FromEdges(n, edges)
	require.NoError(t, err)
	assert.Equal(t, len(set), g.NumEdges())
	assert.Equal(t, loops, g.Cleanup().SelfLoops)
	assert.Equal(t, len(edges)-loops-len(set), g.Cleanup().Duplicates)
	for _, e := range g.Edges() {
		assert.True(t, set[e], "edge %v not in input", e)
	}
	for i := 0; i < n; i++ {
		nb := g.Neighbors(i)
		for k := 1; k < len(nb); k++ {
			require.Greater(t, nb[k], nb[k-1], "neighbours of %d not strictly ascending: %v", i, nb)
		}
	}
}

func TestHomophily(t *testing.T) {
	// Edges 0-1, 1-2, 2-3, 0-2; node 3 unlabelled.
	g, err := FromEdges(4, [][2]int{{0, 1}, {1, 2}, {2, 3}, {0, 2}})
	require.NoError(t, err)
	h, err := g.Homophily([]int{0, 0, 1, -1})
	require.NoError(t, err)
	assert.Equal(t, 1.0/3, h, "0-1 same; 1-2, 0-2 differ; 2-3 unknown")
	h, err = g.Homophily([]int{5, 5, 5, 5})
	require.NoError(t, err)
	assert.Equal(t, 1.0, h, "a constant labelling")
	h, err = g.Homophily([]int{0, 1, 0, 1})
	require.NoError(t, err)
	assert.Equal(t, 0.25, h, "0-1, 1-2, 2-3 differ; 0-2 same")
	_, err = g.Homophily([]int{0, 1})
	assert.ErrorContains(t, err, "2 labels for 4 nodes")
	_, err = g.Homophily([]int{0, -1, -1, 0})
	assert.ErrorContains(t, err, "no edge has two labelled ends")
}

// TestFingerprint: the fingerprint depends on the structure only (edge
// order, duplicates and direction do not change it), and changes with
// one edge or the node count.
func TestFingerprint(t *testing.T) {
	mk := func(n int, es [][2]int) uint64 {
		g, err := FromEdges(n, es)
		require.NoError(t, err)
		return g.Fingerprint()
	}
	a := mk(5, [][2]int{{0, 1}, {1, 2}, {3, 4}})
	if b := mk(5, [][2]int{{4, 3}, {2, 1}, {1, 0}, {0, 1}}); a != b {
		t.Errorf("same graph, other edge list: %x != %x", a, b)
	}
	if b := mk(5, [][2]int{{0, 1}, {1, 2}, {2, 4}}); a == b {
		t.Error("one edge moved, same fingerprint")
	}
	if b := mk(6, [][2]int{{0, 1}, {1, 2}, {3, 4}}); a == b {
		t.Error("one more node, same fingerprint")
	}
}
