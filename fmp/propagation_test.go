package fmp

import (
	"math/rand"
	"testing"

	"github.com/fairmp/fairmp/graph"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCheckPropagation: New accepts the normalised adjacencies graph
// builds (GCN, improved, without self-loops, with isolated nodes) and
// refuses the unnormalised adjacency, a scaled one and a row-normalised
// one, naming the entry.
func TestCheckPropagation(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	gr := randomGraph(t, rng, 40, 80)
	iso, err := graph.FromEdges(5, [][2]int{{0, 1}, {1, 2}})
	require.NoError(t, err)
	sens := func(n int) []int {
		s := make([]int, n)
		for i := range s {
			s[i] = i % 2
		}
		return s
	}
	norm := func(g *graph.Graph, o graph.NormOptions) *graph.Matrix {
		m, err := graph.GCNNorm(g, o)
		require.NoError(t, err)
		return m
	}
	for name, o := range map[string]graph.NormOptions{
		"gcn":           graph.DefaultNormOptions(),
		"improved":      {AddSelfLoops: true, SelfLoopWeight: 2, Normalize: true},
		"no self-loops": {Normalize: true},
	} {
		for _, g := range []*graph.Graph{gr, iso} {
			_, err := New(norm(g, o), sens(g.N()), DefaultConfig())
			assert.NoError(t, err, "%s on %d nodes", name, g.N())
		}
	}
	a := graph.NormalizedAdjacency(gr)
	idx, v := a.Indptr(), a.Values64()
	var rows, cols []int
	var vals, scaled, rowNorm []float64
	for i := 0; i+1 < len(idx); i++ {
		sum := 0.0
		for p := idx[i]; p < idx[i+1]; p++ {
			sum += v[p]
		}
		for p := idx[i]; p < idx[i+1]; p++ {
			rows, cols = append(rows, i), append(cols, int(a.Indices()[p]))
			vals, scaled, rowNorm = append(vals, v[p]), append(scaled, 2*v[p]), append(rowNorm, v[p]/sum)
		}
	}
	mk := func(x []float64) *graph.Matrix {
		m, err := graph.NewMatrix(gr.N(), gr.N(), rows, cols, x)
		require.NoError(t, err)
		return m
	}
	_, err = New(mk(vals), sens(gr.N()), DefaultConfig())
	assert.NoError(t, err, "the same matrix rebuilt from its entries")
	for name, c := range map[string]struct {
		m    *graph.Matrix
		want string
	}{
		"unnormalised":   {norm(gr, graph.NormOptions{AddSelfLoops: true, SelfLoopWeight: 1}), "want < 1"},
		"scaled":         {mk(scaled), "want 1/√(d̂"},
		"row-normalised": {mk(rowNorm), "not symmetric"},
	} {
		_, err := New(c.m, sens(gr.N()), DefaultConfig())
		assert.ErrorIs(t, err, ErrNotPropagation, name)
		assert.ErrorContains(t, err, c.want, name)
	}
}
