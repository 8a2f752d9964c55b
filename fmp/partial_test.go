package fmp

import (
	"math"
	"math/rand"
	"testing"

	"github.com/fairmp/fairmp/graph"
	"github.com/fairmp/fairmp/internal/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gorgonia.org/tensor"
)

// TestDeltaSUnknownNodes: nodes whose group is unknown (−1) get Δs = 0,
// and the groups' sizes count the known nodes alone.
func TestDeltaSUnknownNodes(t *testing.T) {
	ds, err := newDeltaS([]int{1, 0, -1, 1, 0, 0}, false)
	require.NoError(t, err)
	testutil.AllClose(t, "Δs", ds.Row(0), []float64{0.5, -1.0 / 3, 0, 0.5, -1.0 / 3, -1.0 / 3}, 1e-15, 0)
	assert.Equal(t, []int{3, 2}, ds.Counts())
	assert.Equal(t, 5, ds.Known())
	assert.InDelta(t, 0.5+1.0/3, ds.NormSq(), 1e-15)
}

func TestSoftDeltaS(t *testing.T) {
	// Hard memberships (NaN unknown) give newDeltaS's row exactly.
	hard, err := newSoftDeltaS([]float64{1, 0, math.NaN(), 1, 0, 0})
	require.NoError(t, err)
	bin, err := newDeltaS([]int{1, 0, -1, 1, 0, 0}, false)
	require.NoError(t, err)
	assert.Equal(t, bin.Row(0), hard.Row(0))
	assert.Equal(t, bin.NormSq(), hard.NormSq())
	// Soft: p = (1, 0, 0.5, 0.25): W₁ = 1.75, W₀ = 2.25.
	soft, err := newSoftDeltaS([]float64{1, 0, 0.5, 0.25})
	require.NoError(t, err)
	want := []float64{1 / 1.75, -1 / 2.25, 0.5/1.75 - 0.5/2.25, 0.25/1.75 - 0.75/2.25}
	testutil.AllClose(t, "soft Δs", soft.Row(0), want, 1e-15, 0)
	// The weighted group means: Δs·p₁ = Σ p_i q_i/W₁ − Σ (1−p_i) q_i/W₀.
	q := []float64{0.9, 0.2, 0.6, 0.4}
	dot := 0.0
	for i := range q {
		dot += soft.Row(0)[i] * q[i]
	}
	assert.InDelta(t, (0.9+0.3+0.1)/1.75-(0.2+0.3+0.3)/2.25, dot, 1e-15)

	_, err = newSoftDeltaS([]float64{1, 1.2})
	assert.ErrorContains(t, err, "p[1] = 1.2")
	_, err = newSoftDeltaS([]float64{1, 1, 0.9})
	assert.ErrorContains(t, err, "want both ≥ 1/2")
}

// TestFMPKnownSubset: with the group known for a third of the nodes, FMP
// narrows the gap of mean predicted probability among the known nodes
// (what its Δs sees), and a soft layer given the known groups as 0/1 and
// NaN elsewhere computes New's output bit for bit.
func TestFMPKnownSubset(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	n, c := 300, 2
	sens := make([]int, n)
	var edges [][2]int
	for i := range sens {
		sens[i] = i % 2
	}
	for k := 0; k < 4*n; k++ {
		a := rng.Intn(n)
		b := rng.Intn(n/2)*2 + sens[a] // mostly within a's group
		if rng.Float64() < 0.2 {
			b = rng.Intn(n)
		}
		edges = append(edges, [2]int{a, b})
	}
	g, err := graph.FromEdges(n, edges)
	require.NoError(t, err)
	adj := graph.NormalizedAdjacency(g)
	x := make([]float64, n*c)
	for i := 0; i < n; i++ {
		x[i*c+1] = 1.5*float64(sens[i]) - 0.75 + rng.NormFloat64()*0.5
	}
	known := make([]int, n)
	p := make([]float64, n)
	for i := range known {
		known[i], p[i] = -1, math.NaN()
		if i%3 == 0 {
			known[i], p[i] = sens[i], float64(sens[i])
		}
	}
	cfg := DefaultConfig()
	off := cfg
	off.LambdaF = 0
	for _, dt := range testutil.Dtypes {
		in := testutil.Tensor(dt, x, n, c)
		l0, err := New(adj, known, off)
		require.NoError(t, err)
		base, err := l0.Apply(in)
		require.NoError(t, err)
		l, err := New(adj, known, cfg)
		require.NoError(t, err)
		out, err := l.Apply(in)
		require.NoError(t, err)
		before := maxPairGap(groupMeans(testutil.ToF64(base.Data()), n, c, known, 2))
		after := maxPairGap(groupMeans(testutil.ToF64(out.Data()), n, c, known, 2))
		assert.Less(t, after, before/2, "%v: the known nodes' gap %v → %v", dt, before, after)
		// The nodes FMP never saw move too (through propagation and the
		// shared dual), here also towards parity.
		all := maxPairGap(groupMeans(testutil.ToF64(out.Data()), n, c, sens, 2))
		allBefore := maxPairGap(groupMeans(testutil.ToF64(base.Data()), n, c, sens, 2))
		assert.Less(t, all, allBefore, "%v: every node's gap %v → %v", dt, allBefore, all)

		ls, err := NewSoft(adj, p, cfg)
		require.NoError(t, err)
		soft, err := ls.Apply(in)
		require.NoError(t, err)
		assert.Equal(t, out.Data(), soft.Data(), "%v", dt)
	}
	// Without propagation (λs = 0) a node moves by Δs_i·u alone: the
	// nodes whose group is unknown keep their logits exactly. Debiasing
	// them needs λs > 0 or estimated memberships (NewSoft).
	s0 := cfg
	s0.LambdaS = 0
	l, err := New(adj, known, s0)
	require.NoError(t, err)
	out, err := l.Apply(testutil.Tensor(tensor.Float64, x, n, c))
	require.NoError(t, err)
	o := out.Data().([]float64)
	moved := 0
	for i := range known {
		if known[i] < 0 {
			assert.Equal(t, x[i*c:(i+1)*c], o[i*c:(i+1)*c], "unknown node %d", i)
		} else if o[i*c+1] != x[i*c+1] {
			moved++
		}
	}
	assert.Greater(t, moved, 0)
	_, err = NewSoft(adj, p[:3], cfg)
	assert.ErrorContains(t, err, "want n × n")
}
