package sample

import (
	"math"
	"math/rand/v2"
	"reflect"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fairmp/fairmp/graph"
)

// randomGraph returns a seeded Erdős–Rényi-like graph on n nodes with about
// n·meanDeg/2 edges (and a few isolated nodes when meanDeg is small).
func randomGraph(t testing.TB, n int, meanDeg float64, seed uint64) *graph.Graph {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, 7))
	m := int(float64(n) * meanDeg / 2)
	edges := make([][2]int, m)
	for k := range edges {
		edges[k] = [2]int{r.IntN(n), r.IntN(n)}
	}
	g, err := graph.FromEdges(n, edges)
	require.NoError(t, err)
	return g
}

func gcnNorm(t testing.TB, g *graph.Graph, selfLoops bool) *graph.Matrix {
	t.Helper()
	o := graph.DefaultNormOptions()
	o.AddSelfLoops = selfLoops
	a, err := graph.GCNNorm(g, o)
	require.NoError(t, err)
	return a
}

func newSampler(t testing.TB, a *graph.Matrix, fanouts []int, batch int) *Sampler {
	t.Helper()
	cfg := DefaultConfig()
	cfg.Fanouts = fanouts
	cfg.BatchSize = batch
	s, err := NewSampler(a, cfg)
	require.NoError(t, err)
	return s
}

// checkStructure checks the invariants every batch has, whatever the
// fan-outs: hop order, sizes, block shapes, columns of a row among the
// node's neighbours and itself.
func checkStructure(t *testing.T, a *graph.Matrix, b *Batch, L int) {
	t.Helper()
	require.Len(t, b.Sizes, L+1)
	require.Len(t, b.Blocks, L)
	assert.Equal(t, len(b.Nodes), b.Sizes[L])
	for h := 1; h <= L; h++ {
		assert.LessOrEqual(t, b.Sizes[h-1], b.Sizes[h])
	}
	seen := map[int]bool{}
	for _, v := range b.Nodes {
		assert.False(t, seen[v], "node %d repeats", v)
		seen[v] = true
	}
	for l, blk := range b.Blocks {
		r, c := blk.Dims()
		assert.Equal(t, b.Sizes[L-1-l], r, "block %d rows", l)
		assert.Equal(t, b.Sizes[L-l], c, "block %d cols", l)
		ip, ix := blk.Indptr(), blk.Indices()
		for i := 0; i < r; i++ {
			for p := ip[i]; p < ip[i+1]; p++ {
				_, ok := a.At(b.Nodes[i], b.Nodes[ix[p]])
				assert.True(t, ok, "block %d (%d, %d) is not an entry of a", l, i, ix[p])
			}
		}
	}
}

func TestPathFullFanout(t *testing.T) {
	// Path 0-1-2-3 with GCN self-loops: d̂ = 2, 3, 3, 2.
	g, err := graph.FromEdges(4, [][2]int{{0, 1}, {1, 2}, {2, 3}})
	require.NoError(t, err)
	a := gcnNorm(t, g, true)
	s := newSampler(t, a, []int{-1, -1}, 8)

	b, err := s.Sample([]int{0}, 42)
	require.NoError(t, err)
	assert.Equal(t, []int{0, 1, 2}, b.Nodes) // 0; its neighbour 1; 1's new neighbour 2
	assert.Equal(t, []int{1, 2, 3}, b.Sizes)
	require.Len(t, b.Blocks, 2)

	s6 := 1 / math.Sqrt(6)
	want0 := []float64{ // Blocks[0]: 2 × 3, rows nodes 0, 1; columns 0, 1, 2
		0.5, s6, 0,
		s6, 1.0 / 3, 1.0 / 3,
	}
	want1 := []float64{0.5, s6} // Blocks[1]: 1 × 2
	r, c := b.Blocks[0].Dims()
	assert.Equal(t, [2]int{2, 3}, [2]int{r, c})
	r, c = b.Blocks[1].Dims()
	assert.Equal(t, [2]int{1, 2}, [2]int{r, c})
	assert.InDeltaSlice(t, want0, b.Blocks[0].Dense(), 1e-15)
	assert.InDeltaSlice(t, want1, b.Blocks[1].Dense(), 1e-15)
	// And exactly the rows of GCNNorm.
	for l, blk := range b.Blocks {
		rows, cols := blk.Dims()
		d := blk.Dense()
		for i := 0; i < rows; i++ {
			for j := 0; j < cols; j++ {
				v, _ := a.At(b.Nodes[i], b.Nodes[j])
				assert.Equal(t, v, d[i*cols+j], "block %d (%d, %d)", l, i, j)
			}
		}
	}
}

func TestStarSampled(t *testing.T) {
	// Star: centre 0, leaves 1..4. GCN: a00 = 1/5, a0u = 1/√10.
	g, err := graph.FromEdges(5, [][2]int{{0, 1}, {0, 2}, {0, 3}, {0, 4}})
	require.NoError(t, err)
	a := gcnNorm(t, g, true)
	s := newSampler(t, a, []int{2}, 8)
	b, err := s.Sample([]int{0}, 3)
	require.NoError(t, err)
	require.Len(t, b.Nodes, 3)
	assert.Equal(t, []int{1, 3}, b.Sizes)
	assert.Equal(t, 0, b.Nodes[0])
	assert.Less(t, b.Nodes[1], b.Nodes[2], "new neighbours in ascending id")
	want := []float64{0.2, 2 / math.Sqrt(10), 2 / math.Sqrt(10)} // scale deg/k = 4/2
	assert.InDeltaSlice(t, want, b.Blocks[0].Dense(), 1e-15)

	// A leaf target with fan-out 2 takes its only neighbour, unscaled.
	b, err = s.Sample([]int{3}, 3)
	require.NoError(t, err)
	assert.Equal(t, []int{3, 0}, b.Nodes)
	assert.InDeltaSlice(t, []float64{0.5, 1 / math.Sqrt(10)}, b.Blocks[0].Dense(), 1e-15)
}

func TestFullFanoutEqualsRows(t *testing.T) {
	g := randomGraph(t, 300, 6, 11)
	maxDeg := 0
	for _, d := range g.Degrees() {
		maxDeg = max(maxDeg, d)
	}
	for _, tc := range []struct {
		name      string
		selfLoops bool
		fanouts   []int
	}{
		{"all-2", true, []int{-1, -1}},
		{"maxdeg-3", true, []int{maxDeg, maxDeg, maxDeg}},
		{"no-self-loops", false, []int{-1, maxDeg + 5}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := gcnNorm(t, g, tc.selfLoops)
			s := newSampler(t, a, tc.fanouts, 40)
			r := rand.New(rand.NewPCG(5, 5))
			targets := r.Perm(300)[:100]
			L := len(tc.fanouts)
			x := make([]float64, 300)
			for i := range x {
				x[i] = r.NormFloat64()
			}
			// Full-batch L-fold propagation a^L·x.
			full := x
			for range L {
				y := make([]float64, 300)
				a.MulDense64(y, full, 1)
				full = y
			}
			for i := range s.NumBatches(targets) {
				b, err := s.Batch(targets, 2, i)
				require.NoError(t, err)
				checkStructure(t, a, b, L)
				for l, blk := range b.Blocks {
					rows, _ := blk.Dims()
					ip, ix, vs := blk.Indptr(), blk.Indices(), blk.Values64()
					aip := a.Indptr()
					for i := 0; i < rows; i++ {
						v := b.Nodes[i]
						require.Equal(t, aip[v+1]-aip[v], ip[i+1]-ip[i], "block %d row %d (node %d): entry count", l, i, v)
						for p := ip[i]; p < ip[i+1]; p++ {
							want, _ := a.At(v, b.Nodes[ix[p]])
							assert.Equal(t, want, vs[p], "block %d (%d, %d)", l, i, ix[p])
						}
					}
				}
				// Mini-batch forward: h = Blocks[l]·h from the features of Nodes.
				h := make([]float64, len(b.Nodes))
				for j, v := range b.Nodes {
					h[j] = x[v]
				}
				for _, blk := range b.Blocks {
					rows, _ := blk.Dims()
					y := make([]float64, rows)
					blk.MulDense64(y, h, 1)
					h = y
				}
				require.Len(t, h, b.Sizes[0])
				for j := range h {
					assert.InDelta(t, full[b.Nodes[j]], h[j], 1e-12, "target %d", b.Nodes[j])
				}
			}
		})
	}
}

func batchesEqual(t *testing.T, want, got *Batch, msg string) {
	t.Helper()
	assert.Equal(t, want.Nodes, got.Nodes, msg)
	assert.Equal(t, want.Sizes, got.Sizes, msg)
	require.Len(t, got.Blocks, len(want.Blocks), msg)
	for l := range want.Blocks {
		w, g := want.Blocks[l], got.Blocks[l]
		wr, wc := w.Dims()
		gr, gc := g.Dims()
		assert.Equal(t, [2]int{wr, wc}, [2]int{gr, gc}, msg)
		assert.True(t, reflect.DeepEqual(w.Indptr(), g.Indptr()), "%s: block %d Indptr", msg, l)
		assert.True(t, reflect.DeepEqual(w.Indices(), g.Indices()), "%s: block %d Indices", msg, l)
		assert.True(t, reflect.DeepEqual(w.Values64(), g.Values64()), "%s: block %d Values64", msg, l)
	}
}

func TestDeterminism(t *testing.T) {
	g := randomGraph(t, 2000, 12, 3)
	a := gcnNorm(t, g, true)
	s := newSampler(t, a, []int{5, 3}, 64)
	targets := rand.New(rand.NewPCG(1, 2)).Perm(2000)[:500]
	nb := s.NumBatches(targets)
	require.Equal(t, 8, nb)

	// Same (seed, epoch, i) → identical batch, also from a fresh Sampler.
	s2 := newSampler(t, a, []int{5, 3}, 64)
	for i := range nb {
		b1, err := s.Batch(targets, 3, i)
		require.NoError(t, err)
		b2, err := s2.Batch(targets, 3, i)
		require.NoError(t, err)
		batchesEqual(t, b1, b2, "same inputs")
		checkStructure(t, a, b1, 2)
	}

	// The batches of an epoch partition the targets; epochs permute differently.
	order := func(epoch int) []int {
		var out []int
		for i := range nb {
			b, err := s.Batch(targets, epoch, i)
			require.NoError(t, err)
			out = append(out, b.Nodes[:b.Sizes[0]]...)
		}
		return out
	}
	o0, o1 := order(0), order(1)
	assert.ElementsMatch(t, targets, o0)
	assert.ElementsMatch(t, targets, o1)
	assert.NotEqual(t, o0, o1, "epochs 0 and 1 give the same permutation")
	assert.NotEqual(t, targets, o0, "Shuffle left the targets in order")
	assert.Equal(t, o0, order(0))

	// Different seeds change the draw.
	cfg := s.Config()
	cfg.Seed = 2
	s3, err := NewSampler(a, cfg)
	require.NoError(t, err)
	b1, err := s.Batch(targets, 0, 0)
	require.NoError(t, err)
	b3, err := s3.Batch(targets, 0, 0)
	require.NoError(t, err)
	assert.NotEqual(t, b1.Nodes, b3.Nodes)

	// Without Shuffle, chunk i is targets[i·B:(i+1)·B] in order.
	cfg.Shuffle = false
	s4, err := NewSampler(a, cfg)
	require.NoError(t, err)
	b4, err := s4.Batch(targets, 5, nb-1)
	require.NoError(t, err)
	assert.Equal(t, targets[(nb-1)*64:], b4.Nodes[:b4.Sizes[0]])

	// Concurrent calls give the sequential results.
	seq := make([]*Batch, 2*nb)
	for k := range seq {
		seq[k], err = s.Batch(targets, k/nb, k%nb)
		require.NoError(t, err)
	}
	par := make([]*Batch, len(seq))
	errs := make([]error, len(seq))
	var wg sync.WaitGroup
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for k := len(seq) - 1 - w; k >= 0; k -= 4 {
				par[k], errs[k] = s.Batch(targets, k/nb, k%nb)
			}
		}(w)
	}
	wg.Wait()
	for k := range seq {
		require.NoError(t, errs[k])
		batchesEqual(t, seq[k], par[k], "concurrent")
	}
}

func TestPermutation(t *testing.T) {
	for _, n := range []int{1, 2, 3, 5, 17, 64, 1000, 4097} {
		p := newPerm(n, uint64(n)*31)
		seen := make([]bool, n)
		for x := 0; x < n; x++ {
			y := p.at(x)
			require.True(t, y >= 0 && y < n, "n %d: %d → %d", n, x, y)
			require.False(t, seen[y], "n %d: %d hit twice", n, y)
			seen[y] = true
		}
	}
}

func TestErrors(t *testing.T) {
	g := randomGraph(t, 50, 4, 1)
	a := gcnNorm(t, g, true)

	for _, tc := range []struct {
		name string
		edit func(*Config)
		want string
	}{
		{"empty fanouts", func(c *Config) { c.Fanouts = nil }, "sample: Config.Fanouts is empty"},
		{"zero fanout", func(c *Config) { c.Fanouts = []int{10, 0} }, "sample: Config.Fanouts[1] = 0, want -1 (every neighbour) or a value >= 1"},
		{"fanout -2", func(c *Config) { c.Fanouts = []int{-2} }, "sample: Config.Fanouts[0] = -2"},
		{"batch size 0", func(c *Config) { c.BatchSize = 0 }, "sample: Config.BatchSize = 0, want >= 1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := DefaultConfig()
			tc.edit(&c)
			err := c.Validate()
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			_, err = NewSampler(a, c)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
	assert.NoError(t, DefaultConfig().Validate())

	_, err := NewSampler(nil, DefaultConfig())
	assert.EqualError(t, err, "sample: NewSampler: the matrix is nil, want a square n × n propagation matrix")
	rect, err := graph.NewMatrix(3, 4, []int{0}, []int{1}, []float64{1})
	require.NoError(t, err)
	_, err = NewSampler(rect, DefaultConfig())
	assert.EqualError(t, err, "sample: NewSampler: the matrix is 3 × 4, want a square n × n propagation matrix")

	s := newSampler(t, a, []int{3, 3}, 4)
	_, err = s.Sample(nil, 1)
	assert.EqualError(t, err, "sample: Sampler.Sample: no targets, want at least one")
	_, err = s.Sample([]int{1, 50}, 1)
	assert.EqualError(t, err, "sample: Sampler.Sample: targets[1] = 50, want a node id in [0, 50)")
	_, err = s.Sample([]int{-1}, 1)
	assert.EqualError(t, err, "sample: Sampler.Sample: targets[0] = -1, want a node id in [0, 50)")
	_, err = s.Sample([]int{4, 7, 4}, 1)
	assert.EqualError(t, err, "sample: Sampler.Sample: targets[2] = 4 repeats targets[0], want distinct targets")

	targets := []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}
	_, err = s.Batch(targets, 0, 3)
	assert.EqualError(t, err, "sample: Sampler.Batch: batch 3, want an index in [0, 3) (10 targets in batches of 4)")
	_, err = s.Batch(targets, 0, -1)
	assert.Error(t, err)
	_, err = s.Batch(targets, -1, 0)
	assert.EqualError(t, err, "sample: Sampler.Batch: epoch -1, want >= 0")
	_, err = s.Batch(nil, 0, 0)
	assert.EqualError(t, err, "sample: Sampler.Batch: no targets, want at least one")

	// Errors in a chunk name positions in the caller's list.
	cfg := s.Config()
	cfg.Shuffle = false
	s2, err := NewSampler(a, cfg)
	require.NoError(t, err)
	_, err = s2.Batch([]int{0, 1, 2, 3, 4, 99}, 0, 1)
	assert.EqualError(t, err, "sample: Sampler.Batch: targets[5] = 99, want a node id in [0, 50)")
	_, err = s2.Batch([]int{0, 1, 2, 3, 4, 5, 4}, 0, 1)
	assert.EqualError(t, err, "sample: Sampler.Batch: targets[6] = 4 repeats targets[4], want distinct targets")
	// A shuffled batch of the whole list finds the repeat whatever the order.
	s3 := newSampler(t, a, []int{3}, 100)
	_, err = s3.Batch([]int{0, 1, 2, 1}, 0, 0)
	require.Error(t, err)
	assert.Regexp(t, `^sample: Sampler.Batch: targets\[[13]\] = 1 repeats targets\[[13]\], want distinct targets$`, err.Error())

	assert.NoError(t, s.CheckTargets(targets))
	assert.EqualError(t, s.CheckTargets([]int{0, 1, 2, 3, 4, 5, 1}), "sample: Sampler.CheckTargets: targets[6] = 1 repeats targets[1], want distinct targets")
	assert.EqualError(t, s.CheckTargets([]int{70}), "sample: Sampler.CheckTargets: targets[0] = 70, want a node id in [0, 50)")
	assert.Error(t, s.CheckTargets(nil))

	// A failed call leaves the scratch clean: the next call succeeds.
	b, err := s.Sample([]int{4, 7}, 1)
	require.NoError(t, err)
	checkStructure(t, a, b, 2)

	// Config is copied.
	c := DefaultConfig()
	s4, err := NewSampler(a, c)
	require.NoError(t, err)
	c.Fanouts[0] = 99
	assert.Equal(t, []int{10, 10}, s4.Config().Fanouts)
}

// TestChunkIsBatchTargets: Chunk gives every batch's targets, in order,
// with and without shuffling, and its errors.
func TestChunkIsBatchTargets(t *testing.T) {
	a := gcnNorm(t, randomGraph(t, 200, 6, 9), true)
	targets := make([]int, 0, 150)
	for i := 0; i < 150; i++ {
		targets = append(targets, (i*7)%200)
	}
	for _, shuffle := range []bool{true, false} {
		cfg := Config{Fanouts: []int{2}, BatchSize: 40, Shuffle: shuffle, Seed: 5}
		s, err := NewSampler(a, cfg)
		require.NoError(t, err)
		for i := 0; i < s.NumBatches(targets); i++ {
			b, err := s.Batch(targets, 3, i)
			require.NoError(t, err)
			c, err := Chunk(targets, cfg, 3, i)
			require.NoError(t, err)
			assert.Equal(t, b.Nodes[:b.Sizes[0]], c, "shuffle %v batch %d", shuffle, i)
		}
	}
	cfg := Config{BatchSize: 40, Shuffle: true, Seed: 5}
	_, err := Chunk(targets, cfg, 0, 4)
	assert.ErrorContains(t, err, "batch 4, want an index in [0, 4)")
	_, err = Chunk(targets, cfg, -1, 0)
	assert.ErrorContains(t, err, "epoch -1")
	cfg.BatchSize = 0
	_, err = Chunk(targets, cfg, 0, 0)
	assert.ErrorContains(t, err, "BatchSize = 0")
}
