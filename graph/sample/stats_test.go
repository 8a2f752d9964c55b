package sample

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fairmp/fairmp/graph"
)

// circulant returns the 2r-regular graph on n nodes joining i to i±1..±r.
func circulant(t *testing.T, n, r int) *graph.Graph {
	t.Helper()
	var edges [][2]int
	for i := 0; i < n; i++ {
		for d := 1; d <= r; d++ {
			edges = append(edges, [2]int{i, (i + d) % n})
		}
	}
	g, err := graph.FromEdges(n, edges)
	require.NoError(t, err)
	return g
}

// assertBinomial checks that count successes in trials are consistent with
// probability p within 5 standard deviations.
func assertBinomial(t *testing.T, count, trials int, p float64, msg string, args ...any) {
	t.Helper()
	mean := float64(trials) * p
	sd := math.Sqrt(float64(trials) * p * (1 - p))
	assert.InDelta(t, mean, float64(count), 5*sd, append([]any{msg + " (%d trials, p %.3f)"}, append(args, trials, p)...)...)
}

func TestDrawFrequencies(t *testing.T) {
	// Circulant graph: degree 10 everywhere. Target 0 draws 3 of its 10
	// neighbours (p = 0.3), each hop-1 node draws 4 of its 10 (p = 0.4).
	const n, seeds = 60, 3000
	g := circulant(t, n, 5)
	a := gcnNorm(t, g, true)
	s := newSampler(t, a, []int{3, 4}, 8)

	hop0 := make([]int, n)     // hop0[u]: times 0 drew u
	hop1 := map[[2]int]int{}   // (v, u): times hop-1 node v drew u
	expanded := make([]int, n) // times v was a hop-1 node
	for seed := range seeds {
		b, err := s.Sample([]int{0}, int64(seed))
		require.NoError(t, err)
		blk := b.Blocks[0] // rows: target and hop-1 nodes
		ip, ix := blk.Indptr(), blk.Indices()
		for i := 0; i < b.Sizes[1]; i++ {
			v := b.Nodes[i]
			drawn := 0
			for p := ip[i]; p < ip[i+1]; p++ {
				u := b.Nodes[ix[p]]
				if u == v {
					continue
				}
				drawn++
				if i == 0 {
					hop0[u]++
				} else {
					hop1[[2]int{v, u}]++
				}
			}
			if i == 0 {
				require.Equal(t, 3, drawn)
			} else {
				require.Equal(t, 4, drawn)
				expanded[v]++
			}
		}
		// The target's draw is the one used in the output-side block too.
		assert.Equal(t, blk.Indices()[:ip[1]], b.Blocks[1].Indices())
	}
	for _, u := range g.Neighbors(0) {
		assertBinomial(t, hop0[u], seeds, 0.3, "target 0 drew %d", u)
	}
	for v := 0; v < n; v++ {
		if expanded[v] == 0 {
			continue
		}
		for _, u := range g.Neighbors(v) {
			assertBinomial(t, hop1[[2]int{v, int(u)}], expanded[v], 0.4, "hop-1 node %d drew %d", v, u)
		}
	}
}

func TestUnbiasedNeighbourSum(t *testing.T) {
	// Star with 20 leaves, fan-out 5: each leaf drawn with p = 1/4 and the
	// estimate of (a·x)_0 is unbiased. Also a large fan-out (40 of 60
	// leaves), which takes Floyd's map path.
	for _, tc := range []struct{ leaves, fanout int }{{20, 5}, {60, 40}} {
		n := tc.leaves + 1
		edges := make([][2]int, tc.leaves)
		for k := range edges {
			edges[k] = [2]int{0, k + 1}
		}
		g, err := graph.FromEdges(n, edges)
		require.NoError(t, err)
		a := gcnNorm(t, g, true)
		s := newSampler(t, a, []int{tc.fanout}, 1)

		r := rand.New(rand.NewPCG(9, 9))
		x := make([]float64, n)
		for i := range x {
			x[i] = r.NormFloat64()
		}
		full := make([]float64, n)
		a.MulDense64(full, x, 1)

		const seeds = 4000
		count := make([]int, n)
		var sum, sumSq float64
		for seed := range seeds {
			b, err := s.Batch([]int{0}, seed, 0)
			require.NoError(t, err)
			h := make([]float64, len(b.Nodes))
			for j, v := range b.Nodes {
				h[j] = x[v]
			}
			y := make([]float64, 1)
			b.Blocks[0].MulDense64(y, h, 1)
			sum += y[0]
			sumSq += y[0] * y[0]
			for _, v := range b.Nodes[1:] {
				count[v]++
			}
		}
		p := float64(tc.fanout) / float64(tc.leaves)
		for u := 1; u < n; u++ {
			assertBinomial(t, count[u], seeds, p, "leaf %d", u)
		}
		mean := sum / seeds
		sd := math.Sqrt(sumSq/seeds - mean*mean)
		require.Greater(t, sd, 0.0)
		assert.InDelta(t, full[0], mean, 5*sd/math.Sqrt(seeds), "mean of block·x over %d seeds (sd %.3g)", seeds, sd)
	}
}
