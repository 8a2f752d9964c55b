package score_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	G "gorgonia.org/gorgonia"

	"github.com/fairmp/fairmp/fmp"
	"github.com/fairmp/fairmp/fmp/modelio"
	"github.com/fairmp/fairmp/fmp/score"
	"github.com/fairmp/fairmp/graph"
	"github.com/fairmp/fairmp/graph/datasets"
	"github.com/fairmp/fairmp/graph/features"
	"github.com/fairmp/fairmp/internal/opkit"
	"github.com/fairmp/fairmp/internal/testutil"
	"github.com/fairmp/fairmp/layers"
)

func small(t *testing.T, n int, seed int64) *datasets.Dataset {
	t.Helper()
	c := datasets.DefaultSyntheticConfig()
	c.N, c.MeanDegree, c.Seed = n, 4, seed
	d, err := datasets.Synthetic(c)
	require.NoError(t, err)
	return d
}

// grow returns d's graph, features and groups with extra nodes (copies of
// existing nodes' features and groups), each joined to 3 nodes.
func grow(t *testing.T, d *datasets.Dataset, extra int) (*graph.Graph, *features.Dense, []int) {
	t.Helper()
	n := d.N()
	edges := d.Graph.Edges()
	x := append([]float64(nil), d.Features...)
	sens := append([]int(nil), d.Sens...)
	for k := 0; k < extra; k++ {
		i, src := n+k, (7*k+3)%n
		x = append(x, d.Features[src*d.NumFeatures:(src+1)*d.NumFeatures]...)
		sens = append(sens, d.Sens[src])
		for _, j := range []int{src, (src + 11) % n, (13*k + 5) % n} {
			edges = append(edges, [2]int{i, j})
		}
	}
	g, err := graph.FromEdges(n+extra, edges)
	require.NoError(t, err)
	xs, err := features.NewDense(x, n+extra, d.NumFeatures)
	require.NoError(t, err)
	return g, xs, sens
}

func save(t *testing.T, m layers.Model) []byte {
	t.Helper()
	var buf bytes.Buffer
	require.NoError(t, modelio.Save(&buf, m, modelio.SaveConfig{Untrained: true}))
	return buf.Bytes()
}

func softmaxRows(z []float64, c int) []float64 {
	p := make([]float64, len(z))
	for i := 0; i < len(z); i += c {
		opkit.SoftmaxRow(z[i:i+c], p[i:i+c], 1)
	}
	return p
}

func pick(p []float64, c int, nodes []int) []float64 {
	var out []float64
	for _, i := range nodes {
		out = append(out, p[i*c:(i+1)*c]...)
	}
	return out
}

// TestScoreIsTheWholeGraphsOutput: for every kind, the scores of a few
// nodes of a grown graph, computed on their receptive field, are the
// whole grown graph's layer-by-layer output (up to the summation order
// of the dense products, which block rows by count), and the field is
// a small part of the graph.
func TestScoreIsTheWholeGraphsOutput(t *testing.T) {
	d := small(t, 400, 1)
	gg, x, sens := grow(t, d, 20)
	builders := map[string]func(g *G.ExprGraph) (layers.Model, error){
		"gcn": func(g *G.ExprGraph) (layers.Model, error) {
			return layers.NewGCN(g, d.Graph, layers.DefaultGCNConfig(d.NumFeatures, 2), nil)
		},
		"gat": func(g *G.ExprGraph) (layers.Model, error) {
			c := layers.DefaultGATConfig(d.NumFeatures, 2)
			c.Heads, c.Hidden = 2, 4
			return layers.NewGAT(g, d.Graph, c, nil)
		},
		"sgc": func(g *G.ExprGraph) (layers.Model, error) {
			c := layers.DefaultSGCConfig(d.NumFeatures, 2)
			c.K = 2
			return layers.NewSGC(g, d.Graph, c, nil)
		},
		"jknet": func(g *G.ExprGraph) (layers.Model, error) {
			return layers.NewJKNet(g, d.Graph, layers.DefaultJKNetConfig(d.NumFeatures, 2), nil)
		},
		"appnp": func(g *G.ExprGraph) (layers.Model, error) {
			c := layers.DefaultAPPNPConfig(d.NumFeatures, 2)
			c.K = 3
			return layers.NewAPPNP(g, d.Graph, c, nil)
		},
		"mlp": func(g *G.ExprGraph) (layers.Model, error) {
			return layers.NewMLP(g, nil, layers.DefaultMLPConfig(d.NumFeatures, 2), nil)
		},
		"sage": func(g *G.ExprGraph) (layers.Model, error) {
			return layers.NewSAGE(g, d.Graph, layers.DefaultSAGEConfig(d.NumFeatures, 2), nil)
		},
		"sage-max": func(g *G.ExprGraph) (layers.Model, error) {
			c := layers.DefaultSAGEConfig(d.NumFeatures, 2)
			c.Aggr = "max"
			return layers.NewSAGE(g, d.Graph, c, nil)
		},
		"gin": func(g *G.ExprGraph) (layers.Model, error) {
			return layers.NewGIN(g, d.Graph, layers.DefaultGINConfig(d.NumFeatures, 2), nil)
		},
	}
	nodes := []int{d.N() + 3, 5, d.N() + 19}
	for kind, build := range builders {
		m, err := build(G.NewGraph())
		require.NoError(t, err, kind)
		s, err := score.Open(bytes.NewReader(save(t, m)), score.DefaultConfig())
		require.NoError(t, err, kind)
		got, err := s.Score(context.Background(), gg, x, sens, nodes)
		require.NoError(t, err, kind)
		// The whole grown graph, layer by layer.
		bm := m.(layers.BlockModel)
		var adj *graph.Matrix
		if p, ok, _ := mustKind(t, m).Propagation(kindConfig(t, m)); ok {
			adj, err = p.Matrix(gg)
			require.NoError(t, err)
		}
		z, err := layers.LayerwiseLogits(bm, adj, x)
		require.NoError(t, err, kind)
		want := pick(softmaxRows(testutil.ToF64(z), 2), 2, nodes)
		testutil.AllClose(t, kind, got.Probs, want, 1e-13, 1e-12)
		assert.Equal(t, nodes, got.Nodes)
		assert.Less(t, got.Field, gg.N(), "%s: the receptive field is part of the graph", kind)
		if kind == "mlp" {
			assert.Equal(t, len(nodes), got.Field, "an MLP reads the nodes alone")
		}
	}
}

func mustKind(t *testing.T, m layers.Model) *layers.Kind {
	k, err := layers.KindOf(m)
	require.NoError(t, err)
	return k
}

func kindConfig(t *testing.T, m layers.Model) layers.Config {
	k := mustKind(t, m)
	c, err := k.ConfigOf(m)
	require.NoError(t, err)
	return c
}

// fmpModel trains nothing: an FMP model on a GCN with its duals fitted on
// d's graph.
func fmpModel(t *testing.T, d *datasets.Dataset, fit bool) *fmp.Model {
	t.Helper()
	gcn, err := layers.NewGCN(G.NewGraph(), d.Graph, layers.DefaultGCNConfig(d.NumFeatures, 2), nil)
	require.NoError(t, err)
	oc := fmp.DefaultOnConfig()
	oc.FMP.LambdaF, oc.FMP.K = 8, 3
	m, err := fmp.On(gcn, d.Graph, d.Sens, oc, nil)
	require.NoError(t, err)
	if fit {
		x, err := features.NewDense(d.Features, d.N(), d.NumFeatures)
		require.NoError(t, err)
		require.NoError(t, m.Record(x))
	}
	return m
}

// TestScoreFMP: under Fitted, new nodes' scores are the fitted duals
// applied over the whole grown graph, and an old node far from every new
// one keeps its training-graph score; under Recompute, the scores are
// FMP run again over the whole grown graph.
func TestScoreFMP(t *testing.T) {
	d := small(t, 400, 2)
	m := fmpModel(t, d, true)
	file := save(t, m)
	gg, x, sens := grow(t, d, 10)
	nodes := []int{d.N(), d.N() + 9}

	s, err := score.Open(bytes.NewReader(file), score.DefaultConfig())
	require.NoError(t, err)
	assert.True(t, s.FMP())
	assert.Equal(t, 2+3, s.Hops())
	got, err := s.Score(context.Background(), gg, x, sens, nodes)
	require.NoError(t, err)

	gcn := m.Backbone().(layers.BlockModel)
	a, err := layers.DefaultPropagation().Matrix(gg)
	require.NoError(t, err)
	z, err := layers.LayerwiseLogits(gcn, a, x)
	require.NoError(t, err)
	f, err := m.Recorded().Apply(a, sens, z)
	require.NoError(t, err)
	testutil.AllClose(t, "fitted", got.Probs, pick(softmaxRows(testutil.ToF64(f), 2), 2, nodes), 1e-13, 1e-12)

	// An old node whose 5-hop ball holds no new node keeps its score.
	x0, err := features.NewDense(d.Features, d.N(), d.NumFeatures)
	require.NoError(t, err)
	far := -1
	for i := 0; i < d.N() && far < 0; i++ {
		b, err := gg.Ball([]int{i}, s.Hops())
		require.NoError(t, err)
		if b[len(b)-1] < d.N() {
			far = i
		}
	}
	require.GreaterOrEqual(t, far, 0, "no old node is 5 hops from every new one")
	{
		before, err := s.Score(context.Background(), d.Graph, x0, d.Sens, []int{far})
		require.NoError(t, err)
		after, err := s.Score(context.Background(), gg, x, sens, []int{far})
		require.NoError(t, err)
		testutil.AllClose(t, "a far node", after.Probs, before.Probs, 1e-13, 1e-12)
	}

	rc := score.DefaultConfig()
	rc.FMP = score.Recompute
	r, err := score.Open(bytes.NewReader(file), rc)
	require.NoError(t, err)
	assert.Equal(t, -1, r.Hops())
	got, err = r.Score(context.Background(), gg, x, sens, nodes)
	require.NoError(t, err)
	assert.Equal(t, gg.N(), got.Field)
	l, err := fmp.New(a, sens, m.Config())
	require.NoError(t, err)
	fr, err := l.Apply(z)
	require.NoError(t, err)
	testutil.AllClose(t, "recompute", got.Probs, pick(softmaxRows(testutil.ToF64(fr), 2), 2, nodes), 1e-13, 1e-12)
}

func TestScoreErrors(t *testing.T) {
	d := small(t, 200, 3)
	// An FMP model without its duals is refused when saved (it used to
	// reach Open, which returned ErrNotFitted).
	var unrecorded bytes.Buffer
	err := modelio.Save(&unrecorded, fmpModel(t, d, false), modelio.SaveConfig{Untrained: true})
	assert.ErrorIs(t, err, fmp.ErrNotRecorded)

	s, err := score.Open(bytes.NewReader(save(t, fmpModel(t, d, true))), score.DefaultConfig())
	require.NoError(t, err)
	x, err := features.NewDense(d.Features, d.N(), d.NumFeatures)
	require.NoError(t, err)
	_, err = s.Score(context.Background(), d.Graph, x, d.Sens[:5], []int{0})
	assert.ErrorContains(t, err, "5 groups for a graph of 200 nodes")
	_, err = s.Score(context.Background(), d.Graph, x, d.Sens, []int{0, 0})
	assert.ErrorContains(t, err, "nodes[1] = 0 repeats nodes[0]")
	_, err = s.Score(context.Background(), d.Graph, x, d.Sens, []int{200})
	assert.ErrorContains(t, err, "nodes[0] = 200")
	_, err = s.Score(context.Background(), d.Graph, x, d.Sens, nil)
	assert.ErrorContains(t, err, "no nodes")
	bad := append([]int(nil), d.Sens...)
	bad[0] = 7
	_, err = s.Score(context.Background(), d.Graph, x, bad, []int{0})
	assert.ErrorContains(t, err, "group 7")
	narrow, err := features.NewDense(d.Features[:d.N()], d.N(), 1)
	require.NoError(t, err)
	_, err = s.Score(context.Background(), d.Graph, narrow, d.Sens, []int{0})
	assert.ErrorContains(t, err, "the model's columns")
	_, err = score.ParseSemantics("both")
	assert.ErrorContains(t, err, "want fitted or recompute")
	assert.ErrorContains(t, score.Config{FMP: 5}.Validate(), "Config.FMP")
}
