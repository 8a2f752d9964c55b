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

// TestGrowIsFromEdges: growing a graph gives FromEdges of all the edges,
// bit for bit, with the dropped input counted.
func TestGrowIsFromEdges(t *testing.T) {
	rng := rand.New(rand.NewSource(9))
	for trial := 0; trial < 30; trial++ {
		n, k := 1+rng.Intn(30), rng.Intn(10)
		var old, add [][2]int
		for e := 0; e < 2*n; e++ {
			old = append(old, [2]int{rng.Intn(n), rng.Intn(n)})
		}
		for e := 0; e < 3*k+rng.Intn(5); e++ {
			add = append(add, [2]int{rng.Intn(n + k), rng.Intn(n + k)})
		}
		g, err := FromEdges(n, old)
		require.NoError(t, err)
		got, err := g.Grow(k, add)
		require.NoError(t, err)
		want, err := FromEdges(n+k, append(g.Edges(), add...))
		require.NoError(t, err)
		require.Equal(t, want.indptr, got.indptr, "trial %d", trial)
		require.Equal(t, want.indices, got.indices, "trial %d", trial)
		require.Equal(t, want.Fingerprint(), got.Fingerprint())
		assert.Equal(t, len(add), got.Cleanup().Input)
		assert.Equal(t, want.Cleanup().SelfLoops, got.Cleanup().SelfLoops)
		assert.Equal(t, want.Cleanup().Duplicates, got.Cleanup().Duplicates, "trial %d: the input's repeats and edges already in g", trial)
	}
	g := pathGraph(t)
	_, err := g.Grow(-1, nil)
	assert.ErrorContains(t, err, "k = -1")
	_, err = g.Grow(1, [][2]int{{0, 7}})
	assert.ErrorContains(t, err, "edge 0 is (0, 7), want both ends in [0, 7) (6 old nodes, 1 new)")
}

// TestBallAgainstBFS: on a graph large enough for both of the set's
// representations, Ball is a plain breadth-first search's node set.
func TestBallAgainstBFS(t *testing.T) {
	rng := rand.New(rand.NewSource(4))
	n := 3000
	var edges [][2]int
	for k := 0; k < 2*n; k++ {
		edges = append(edges, [2]int{rng.Intn(n), rng.Intn(n)})
	}
	g, err := FromEdges(n, edges)
	require.NoError(t, err)
	for _, c := range []struct{ seeds, hops int }{{1, 0}, {1, 1}, {1, 2}, {3, 3}, {1, 6}, {200, 1}, {50, 4}} {
		seeds := make([]int, c.seeds)
		for k := range seeds {
			seeds[k] = rng.Intn(n)
		}
		dist := make([]int, n)
		for i := range dist {
			dist[i] = -1
		}
		queue := []int{}
		for _, s := range seeds {
			if dist[s] < 0 {
				dist[s] = 0
				queue = append(queue, s)
			}
		}
		for len(queue) > 0 {
			i := queue[0]
			queue = queue[1:]
			for _, j := range g.Neighbors(i) {
				if dist[j] < 0 {
					dist[j] = dist[i] + 1
					queue = append(queue, int(j))
				}
			}
		}
		var want []int
		for i, d := range dist {
			if d >= 0 && d <= c.hops {
				want = append(want, i)
			}
		}
		got, err := g.Ball(seeds, c.hops)
		require.NoError(t, err)
		assert.Equal(t, want, got, "%d seeds, %d hops (%d nodes)", c.seeds, c.hops, len(want))
	}
}
