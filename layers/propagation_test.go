package layers

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/fairmp/fairmp/graph"
)

// randomGraphDS is a random graph of n nodes with some isolated ones.
func randomGraphDS(t *testing.T, seed int64, n, m int) *graph.Graph {
	t.Helper()
	rng := rand.New(rand.NewSource(seed))
	edges := make([][2]int, m)
	for k := range edges {
		edges[k] = [2]int{rng.Intn(n - 2), rng.Intn(n - 2)}
	}
	g, err := graph.FromEdges(n, edges)
	require.NoError(t, err)
	return g
}

// requireDS checks every row and column of a sums to 1 within tol.
func requireDS(t *testing.T, a *graph.Matrix, tol float64, msg string) {
	t.Helper()
	n, _ := a.Dims()
	rows, cols := make([]float64, n), make([]float64, n)
	ip, ix, v := a.Indptr(), a.Indices(), a.Values64()
	for i := 0; i < n; i++ {
		for p := ip[i]; p < ip[i+1]; p++ {
			rows[i] += v[p]
			cols[ix[p]] += v[p]
		}
	}
	for i := range rows {
		require.InDelta(t, 1, rows[i], tol+1e-12, "%s: row %d", msg, i)
		require.InDelta(t, 1, cols[i], tol+1e-12, "%s: column %d", msg, i)
	}
}

// TestPropagationDefaultUnchanged: the default propagation encodes and
// builds exactly as before DoublyStochastic existed, so that model files
// and matrices stay bit-identical.
func TestPropagationDefaultUnchanged(t *testing.T) {
	raw, err := json.Marshal(DefaultPropagation())
	require.NoError(t, err)
	assert.Equal(t, `{"improved":false,"add_self_loops":true,"normalize":true}`, string(raw))
	g := randomGraphDS(t, 1, 50, 120)
	for _, p := range []Propagation{DefaultPropagation(), {Improved: true, AddSelfLoops: true, Normalize: true}, {AddSelfLoops: true}, {Normalize: true}} {
		a, err := p.Matrix(g)
		require.NoError(t, err)
		want, err := graph.GCNNorm(g, p.normOptions())
		require.NoError(t, err)
		assert.Equal(t, want.Indptr(), a.Indptr())
		assert.Equal(t, want.Indices(), a.Indices())
		assert.Equal(t, want.Values64(), a.Values64(), "%+v", p)
	}
	for _, k := range Kinds() {
		if k.Wraps() {
			continue
		}
		cfg, err := k.Default(3, 2)
		require.NoError(t, err)
		raw, err := json.Marshal(cfg)
		require.NoError(t, err)
		assert.NotContains(t, string(raw), "doubly_stochastic", k.Name())
		assert.NotContains(t, string(raw), "sinkhorn", k.Name())
	}
}

// TestPropagationDoublyStochastic checks the matrix, MatrixOf and the
// errors of a doubly stochastic propagation.
func TestPropagationDoublyStochastic(t *testing.T) {
	g := randomGraphDS(t, 2, 60, 150)
	p := DoublyStochasticPropagation()
	require.NoError(t, p.Validate())
	a, err := p.Matrix(g)
	require.NoError(t, err)
	requireDS(t, a, p.Sinkhorn.Tol, "default")
	assert.True(t, a.Symmetric())
	gcn, err := DefaultPropagation().Matrix(g)
	require.NoError(t, err)
	assert.Equal(t, gcn.Indices(), a.Indices(), "the same edges")

	imp := p
	imp.Improved = true
	ai, err := imp.Matrix(g)
	require.NoError(t, err)
	requireDS(t, ai, p.Sinkhorn.Tol, "improved")
	assert.NotEqual(t, a.Values64(), ai.Values64(), "self-loops of weight 2 scale to another matrix")

	// MatrixOf is the rows and columns of Matrix.
	nodes := []int{0, 3, 4, 10, 11, 12, 40, 59}
	sub, err := p.MatrixOf(g, nodes)
	require.NoError(t, err)
	for r, i := range nodes {
		for c, j := range nodes {
			want, okw := a.At(i, j)
			got, okg := sub.At(r, c)
			require.Equal(t, okw, okg, "(%d, %d)", i, j)
			require.Equal(t, want, got, "(%d, %d)", i, j)
		}
	}
	all := make([]int, g.N())
	for i := range all {
		all[i] = i
	}
	whole, err := p.MatrixOf(g, all)
	require.NoError(t, err)
	assert.Equal(t, a.Values64(), whole.Values64())
	_, err = p.MatrixOf(g, []int{3, 2})
	assert.ErrorContains(t, err, "strictly ascending")
	_, err = p.MatrixOf(g, nil)
	assert.ErrorContains(t, err, "no nodes")

	// Errors, not panics.
	bad := p
	bad.Sinkhorn = graph.SinkhornOptions{}
	assert.ErrorContains(t, bad.Validate(), "SinkhornOptions.Tol = 0")
	stray := DefaultPropagation()
	stray.Sinkhorn = graph.DefaultSinkhornOptions()
	assert.ErrorContains(t, stray.Validate(), "without DoublyStochastic")
	_, err = stray.Matrix(g)
	assert.ErrorContains(t, err, "without DoublyStochastic")
	// Without self-loops: an isolated node has no scaling, and a star
	// has no total support.
	noLoops := p
	noLoops.AddSelfLoops = false
	_, err = noLoops.Matrix(g)
	assert.ErrorContains(t, err, "has no positive entry")
	star, err := graph.FromEdges(4, [][2]int{{0, 1}, {0, 2}, {0, 3}})
	require.NoError(t, err)
	noLoops.Sinkhorn.MaxIter = 30
	_, err = noLoops.Matrix(star)
	assert.True(t, errors.Is(err, graph.ErrNotConverged), "%v", err)
	assert.ErrorContains(t, err, "Propagation.DoublyStochastic")
	a2, err := p.Matrix(star)
	require.NoError(t, err, "with self-loops the star converges")
	requireDS(t, a2, p.Sinkhorn.Tol, "star")
}

// TestKindsDoublyStochastic: every propagating kind but GAT takes a
// doubly stochastic propagation through its "propagation" key (as
// fairtrain's rawlsgcn sets it), builds on that matrix, and its
// configuration round-trips through JSON with the Sinkhorn options;
// a configuration written before the field existed still decodes.
func TestKindsDoublyStochastic(t *testing.T) {
	g := randomGraphDS(t, 3, 40, 90)
	for _, name := range []string{"gcn", "sgc", "appnp", "jknet"} {
		k, err := LookupKind(name)
		require.NoError(t, err)
		cfg, err := k.Configure(3, 2, DefaultOptions())
		require.NoError(t, err)
		old, err := json.Marshal(cfg)
		require.NoError(t, err)
		cfg, err = k.Override(cfg, map[string]any{"propagation": DoublyStochasticPropagation()})
		require.NoError(t, err, name)
		p, ok, err := k.Propagation(cfg)
		require.NoError(t, err)
		require.True(t, ok)
		assert.Equal(t, DoublyStochasticPropagation(), p, name)
		m, err := k.Build(G.NewGraph(), g, cfg, nil)
		require.NoError(t, err, name)
		requireDS(t, m.(BlockModel).Matrix(), p.Sinkhorn.Tol, name)

		raw, err := json.Marshal(cfg)
		require.NoError(t, err)
		assert.Contains(t, string(raw), `"doubly_stochastic":true,"sinkhorn":{"tol":0.000001,"max_iter":1000}`, name)
		back, err := k.DecodeConfig(raw, tensor.Float64)
		require.NoError(t, err, name)
		assert.Equal(t, cfg, back, name)
		// A file of the default configuration, as written before.
		prev, err := k.DecodeConfig(old, tensor.Float64)
		require.NoError(t, err, name)
		pp, _, _ := k.Propagation(prev)
		assert.Equal(t, DefaultPropagation(), pp, name)
	}
	// A file that switches it on must give the options, every key of them.
	k, err := LookupKind("gcn")
	require.NoError(t, err)
	base := `{"name":"gcn","in":3,"classes":2,"seed":1,"hidden":4,"layers":2,"activation":{"kind":"relu","alpha":0},"dropout":0.5,"input_dropout":0,"bias":true,"propagation":{"improved":false,"add_self_loops":true,"normalize":true%s}}`
	for extra, want := range map[string]string{
		`,"doubly_stochastic":true`:                                       "SinkhornOptions.Tol = 0",
		`,"doubly_stochastic":true,"sinkhorn":{"tol":0.001}`:              `no key "max_iter" in propagation.sinkhorn`,
		`,"sinkhorn":{"tol":0.001,"max_iter":10}`:                         "without DoublyStochastic",
		`,"doubly_stochastic":true,"sinkhorn":{"tol":2,"max_iter":10}`:    "SinkhornOptions.Tol = 2",
		`,"doubly_stochastic":true,"sinkhorn":{"tol":0.01,"max_iter":10}`: "",
	} {
		_, err := k.DecodeConfig(json.RawMessage(fmt.Sprintf(base, extra)), tensor.Float64)
		if want == "" {
			assert.NoError(t, err, extra)
		} else {
			assert.ErrorContains(t, err, want, extra)
		}
	}
	// GAT attends: its configuration has no propagation to rescale.
	gat, err := LookupKind("gat")
	require.NoError(t, err)
	cfg, err := gat.Configure(3, 2, DefaultOptions())
	require.NoError(t, err)
	_, err = gat.Override(cfg, map[string]any{"propagation": DoublyStochasticPropagation()})
	assert.ErrorContains(t, err, `has no field "propagation"`)
}
