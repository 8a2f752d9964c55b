package fmp

import (
	"math"
	"math/rand"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fairmp/fairmp/graph"
	"github.com/fairmp/fairmp/internal/testutil"
)

// unweightedDelta is NewDeltaS's arithmetic before the weighted form
// shared its code: 1/n₁ and −1/n₀, or 1/n_g − 1/n_known and −1/n_known.
func unweightedDelta(sens []int, groups int, perGroup bool) []float64 {
	n := len(sens)
	counts := make([]int, groups)
	known := 0
	for _, s := range sens {
		if s >= 0 {
			counts[s]++
			known++
		}
	}
	if groups == 2 && !perGroup {
		d := make([]float64, n)
		pos, neg := 1/float64(counts[1]), -1/float64(counts[0])
		for i, s := range sens {
			switch s {
			case 1:
				d[i] = pos
			case 0:
				d[i] = neg
			}
		}
		return d
	}
	d := make([]float64, groups*n)
	all := 1 / float64(known)
	for g := 0; g < groups; g++ {
		inv := 1 / float64(counts[g])
		for i, s := range sens {
			switch {
			case s == g:
				d[g*n+i] = inv - all
			case s >= 0:
				d[g*n+i] = -all
			}
		}
	}
	return d
}

// TestWeightedUnitWeightsAreNewDeltaS: weights ≡ 1 give bit for bit
// NewDeltaS's Δs and ‖Δs‖², which is bit for bit the arithmetic of
// NewDeltaS before the refactor.
func TestWeightedUnitWeightsAreNewDeltaS(t *testing.T) {
	rng := rand.New(rand.NewSource(41))
	for _, dc := range deltaCases {
		sens := randSens(rng, 37, dc.groups, 0.2)
		ones := make([]float64, len(sens))
		for i := range ones {
			ones[i] = 1
		}
		w, err := NewWeightedDeltaS(sens, ones, dc.perGroup)
		require.NoError(t, err, dc.name)
		u := mustDelta(t, sens, dc.perGroup)
		assert.Equal(t, u.d64, w.d64, dc.name)
		assert.Equal(t, unweightedDelta(sens, dc.groups, dc.perGroup), u.d64, dc.name)
		assert.Equal(t, u.NormSq(), w.NormSq(), dc.name)
		assert.Equal(t, u.Rows(), w.Rows(), dc.name)
		assert.Equal(t, u.Counts(), w.Counts(), dc.name)
		assert.Equal(t, u.Known(), w.Known(), dc.name)
		assert.NotEqual(t, u.ID(), w.ID(), dc.name)
	}
}

// TestWeightedHandComputed: five nodes, groups 1, 0, 1, 0 and unknown,
// weights 0.5, 0.2, 0.25, 0.6 and 7 (ignored): W₁ = 0.75, W₀ = 0.8,
// W = 1.55.
func TestWeightedHandComputed(t *testing.T) {
	sens := []int{1, 0, 1, 0, -1}
	w := []float64{0.5, 0.2, 0.25, 0.6, 7}
	ds, err := NewWeightedDeltaS(sens, w, false)
	require.NoError(t, err)
	require.Equal(t, 1, ds.Rows())
	want := []float64{0.5 / 0.75, -0.2 / 0.8, 0.25 / 0.75, -0.6 / 0.8, 0}
	testutil.AllClose(t, "binary row", ds.Row(0), want, 0, 1e-15)
	sq := 0.0
	for _, v := range want {
		sq += v * v
	}
	assert.InDelta(t, sq, ds.NormSq(), 1e-15)
	// Δs·p is the gap of the groups' weighted mean probabilities.
	p := []float64{0.9, 0.4, 0.3, 0.1, 0.5}
	gap := 0.0
	for i, v := range ds.Row(0) {
		gap += v * p[i]
	}
	assert.InDelta(t, (0.5*0.9+0.25*0.3)/0.75-(0.2*0.4+0.6*0.1)/0.8, gap, 1e-15)

	rows, err := NewWeightedDeltaS(sens, w, true)
	require.NoError(t, err)
	require.Equal(t, 2, rows.Rows())
	testutil.AllClose(t, "row 0", rows.Row(0), []float64{-0.5 / 1.55, 0.2/0.8 - 0.2/1.55, -0.25 / 1.55, 0.6/0.8 - 0.6/1.55, 0}, 0, 1e-15)
	testutil.AllClose(t, "row 1", rows.Row(1), []float64{0.5/0.75 - 0.5/1.55, -0.2 / 1.55, 0.25/0.75 - 0.25/1.55, -0.6 / 1.55, 0}, 0, 1e-15)
	// The per-group rows are p₀Δ and −p₁Δ with p_g = W_g/W.
	for i := range sens {
		assert.InDelta(t, 0.8/1.55*ds.Row(0)[i], rows.Row(1)[i], 1e-15, "node %d", i)
		assert.InDelta(t, -0.75/1.55*ds.Row(0)[i], rows.Row(0)[i], 1e-15, "node %d", i)
	}
}

func TestWeightedErrors(t *testing.T) {
	sens := []int{0, 1, 0, 1}
	for _, tc := range []struct {
		name string
		sens []int
		w    []float64
		msg  string
	}{
		{"short", sens, []float64{1, 1, 1}, "3 weights for 4 nodes"},
		{"negative", sens, []float64{1, -0.5, 1, 1}, "weights[1] = -0.5"},
		{"NaN", sens, []float64{1, 1, math.NaN(), 1}, "weights[2] = NaN"},
		{"Inf", sens, []float64{1, 1, 1, math.Inf(1)}, "weights[3] = +Inf"},
		{"zero group", sens, []float64{1, 0, 1, 0}, "group 1 has total weight 0"},
		{"bad sens", []int{0, 1, -2, 1}, []float64{1, 1, 1, 1}, "sens[2] = -2"},
		{"one group", []int{0, 0, -1, 0}, []float64{1, 1, 1, 1}, "1 known group(s)"},
	} {
		_, err := NewWeightedDeltaS(tc.sens, tc.w, false)
		if assert.Error(t, err, tc.name) {
			assert.Contains(t, err.Error(), "NewWeightedDeltaS: "+tc.msg, tc.name)
		}
	}
}

// TestNewWithDeltaS: the layer of an unweighted Δs is New's, bit for bit;
// a weighted one matches the naive dense loop with its Δs; mismatches
// are errors.
func TestNewWithDeltaS(t *testing.T) {
	rng := rand.New(rand.NewSource(42))
	n, c := 16, 2
	gr := randomGraph(t, rng, n, 30)
	adj := graph.NormalizedAdjacency(gr)
	sens := randSens(rng, n, 2, 0.1)
	cfg := DefaultConfig()
	x := testutil.Tensor(testutil.Dtypes[0], testutil.RandSlice(rng, n*c, -2, 2), n, c)

	ref, err := New(adj, sens, cfg)
	require.NoError(t, err)
	l, err := NewWithDeltaS(adj, sens, mustDelta(t, sens, false), cfg)
	require.NoError(t, err)
	want, err := ref.Apply(x)
	require.NoError(t, err)
	got, err := l.Apply(x)
	require.NoError(t, err)
	assert.Equal(t, want.Data(), got.Data())

	w := testutil.RandSlice(rng, n, 0, 1)
	wds, err := NewWeightedDeltaS(sens, w, false)
	require.NoError(t, err)
	l, err = NewWithDeltaS(adj, sens, wds, cfg)
	require.NoError(t, err)
	got, err = l.Apply(x)
	require.NoError(t, err)
	naive, _ := naiveFMP(naiveNormAdj(gr), testutil.ToF64(x), n, c, wds.d64, 1, cfg, wds.NormSq(), nil)
	testutil.AllClose(t, "weighted Apply vs naive", testutil.ToF64(got), naive, 1e-12, 1e-10)
	assert.NotEqual(t, testutil.ToF64(want), testutil.ToF64(got), "the weights change the output")

	other := append([]int(nil), sens...)
	for i, s := range other {
		if s == 0 {
			other[i] = 1
			break
		}
	}
	perGroup := cfg
	perGroup.PerGroupRows = true
	bad := cfg
	bad.K = 0
	for _, tc := range []struct {
		name string
		adj  *graph.Matrix
		sens []int
		ds   *DeltaS
		cfg  Config
		msg  string
	}{
		{"nil ds", adj, sens, nil, cfg, "nil group contrast"},
		{"nil adj", nil, sens, wds, cfg, "nil adjacency"},
		{"config", adj, sens, wds, bad, "Config.K"},
		{"length", adj, sens[:n-1], wds, cfg, "sens has 15 entries"},
		{"groups", adj, other, wds, cfg, "want Δs built from sens"},
		{"form", adj, sens, wds, perGroup, "Config.PerGroupRows = true"},
	} {
		_, err := NewWithDeltaS(tc.adj, tc.sens, tc.ds, tc.cfg)
		if assert.Error(t, err, tc.name) {
			assert.Contains(t, err.Error(), tc.msg, tc.name)
		}
	}
}
