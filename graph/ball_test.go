package graph

import (
	"math/rand"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A path 0-1-2-3-4 and an isolated node 5.
func pathGraph(t *testing.T) *Graph {
	g, err := FromEdges(6, [][2]int{{0, 1}, {1, 2}, {2, 3}, {3, 4}})
	require.NoError(t, err)
	return g
}

func TestBallHandComputed(t *testing.T) {
	g := pathGraph(t)
	for _, c := range []struct {
		seeds []int
		hops  int
		want  []int
	}{
		{[]int{2}, 0, []int{2}},
		{[]int{2}, 1, []int{1, 2, 3}},
		{[]int{0}, 2, []int{0, 1, 2}},
		{[]int{4, 0, 4}, 1, []int{0, 1, 3, 4}},
		{[]int{5}, 3, []int{5}},
		{[]int{0}, 10, []int{0, 1, 2, 3, 4}},
	} {
		got, err := g.Ball(c.seeds, c.hops)
		require.NoError(t, err)
		assert.Equal(t, c.want, got, "seeds %v, %d hops", c.seeds, c.hops)
	}
	_, err := g.Ball([]int{6}, 1)
	assert.ErrorContains(t, err, "seed 0 is node 6")
	_, err = g.Ball([]int{0}, -1)
	assert.ErrorContains(t, err, "hops = -1")
}

// TestGCNNormOfIsTheSubmatrix: on random graphs and random node sets,
// GCNNormOf equals GCNNorm's rows and columns bit for bit, for every
// normalisation option.
func TestGCNNormOfIsTheSubmatrix(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	for trial := 0; trial < 20; trial++ {
		n := 5 + rng.Intn(40)
		var edges [][2]int
		for k := 0; k < 2*n; k++ {
			edges = append(edges, [2]int{rng.Intn(n), rng.Intn(n)})
		}
		g, err := FromEdges(n, edges)
		require.NoError(t, err)
		var nodes []int
		for i := 0; i < n; i++ {
			if rng.Intn(2) == 0 {
				nodes = append(nodes, i)
			}
		}
		if len(nodes) == 0 {
			nodes = []int{rng.Intn(n)}
		}
		for _, o := range []NormOptions{DefaultNormOptions(), {AddSelfLoops: true, SelfLoopWeight: 2, Normalize: true}, {Normalize: true}, {AddSelfLoops: true, SelfLoopWeight: 1}} {
			full, err := GCNNorm(g, o)
			require.NoError(t, err)
			sub, err := GCNNormOf(g, nodes, o)
			require.NoError(t, err)
			dense := full.Dense()
			got := sub.Dense()
			for r, i := range nodes {
				for c, j := range nodes {
					require.Equal(t, dense[i*n+j], got[r*len(nodes)+c], "trial %d %+v: entry (%d, %d)", trial, o, i, j)
				}
			}
			assert.True(t, sub.Symmetric())
		}
	}
}

func TestGCNNormOfErrors(t *testing.T) {
	g := pathGraph(t)
	_, err := GCNNormOf(g, []int{2, 1}, DefaultNormOptions())
	assert.ErrorContains(t, err, "nodes[1] = 1")
	_, err = GCNNormOf(g, []int{9}, DefaultNormOptions())
	assert.ErrorContains(t, err, "nodes[0] = 9")
	_, err = GCNNormOf(g, nil, DefaultNormOptions())
	assert.ErrorContains(t, err, "no nodes")
	_, err = GCNNormOf(g, []int{0}, NormOptions{AddSelfLoops: true})
	assert.ErrorContains(t, err, "SelfLoopWeight = 0")
}
