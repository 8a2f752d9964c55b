package fmp_test

import (
	"bytes"
	"math"
	"math/rand"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/fairmp/fairmp/fmp"
	"github.com/fairmp/fairmp/fmp/modelio"
	"github.com/fairmp/fairmp/graph"
	"github.com/fairmp/fairmp/graph/features"
	"github.com/fairmp/fairmp/internal/testutil"
)

// fittedCase is a random graph with random logits and groups.
func fittedCase(t *testing.T, n, groups int, seed int64) (*graph.Graph, []int, []float64) {
	t.Helper()
	rng := rand.New(rand.NewSource(seed))
	var edges [][2]int
	for k := 0; k < 3*n; k++ {
		edges = append(edges, [2]int{rng.Intn(n), rng.Intn(n)})
	}
	g, err := graph.FromEdges(n, edges)
	require.NoError(t, err)
	sens := make([]int, n)
	for i := range sens {
		sens[i] = i % groups
		if i%7 == 3 {
			sens[i] = -1
		}
	}
	x := make([]float64, 2*n)
	for i := range x {
		x[i] = 2 * rng.NormFloat64()
	}
	return g, sens, x
}

func fittedConfigs() map[string]fmp.Config {
	base := fmp.DefaultConfig()
	base.LambdaF = 4
	noProp := base
	noProp.LambdaS = 0
	hot := base
	hot.Temperature = 0.3
	per := base
	per.PerGroupRows = true
	zero := base
	zero.LambdaF = 0
	return map[string]fmp.Config{"default λf 4": base, "λs 0": noProp, "τ 0.3": hot, "per-group rows": per, "λf 0": zero}
}

// TestRecordedOnItsGraphIsApply: the fitted duals applied on the graph they
// were fitted on give Layer.Apply's output (float64 and float32 layers,
// two and three groups, every scaling knob).
func TestRecordedOnItsGraphIsApply(t *testing.T) {
	for _, groups := range []int{2, 3} {
		g, sens, x := fittedCase(t, 120, groups, int64(groups))
		adj := graph.NormalizedAdjacency(g)
		for name, cfg := range fittedConfigs() {
			for _, dt := range testutil.Dtypes {
				l, err := fmp.New(adj, sens, cfg)
				require.NoError(t, err)
				xt := testutil.Tensor(dt, x, g.N(), 2)
				want, err := l.Apply(xt)
				require.NoError(t, err)
				got, fit, err := l.Record(xt)
				require.NoError(t, err)
				assert.Equal(t, testutil.ToF64(want), testutil.ToF64(got), "%d groups, %s, %v: Record's output is Apply's", groups, name, dt)
				if cfg.LambdaF == 0 {
					assert.Empty(t, fit.Duals, "λf = 0 has zero duals")
				} else {
					require.Len(t, fit.Duals, cfg.K)
				}
				applied, err := fit.Apply(adj, sens, xt)
				require.NoError(t, err)
				tol := 1e-12
				if dt == tensor.Float32 {
					tol = 1e-4
				}
				testutil.AllClose(t, name, testutil.ToF64(applied), testutil.ToF64(want), tol, tol)
			}
		}
	}
}

// TestRecordedIsLocal: a node's fitted output depends only on its K-hop
// ball: computed on the ball (graph.GCNNormOf) it is what the whole graph
// gives, and adding nodes and edges farther than K hops changes nothing.
func TestRecordedIsLocal(t *testing.T) {
	g, sens, x := fittedCase(t, 300, 2, 5)
	cfg := fmp.DefaultConfig()
	cfg.LambdaF, cfg.K = 4, 3
	adj := graph.NormalizedAdjacency(g)
	l, err := fmp.New(adj, sens, cfg)
	require.NoError(t, err)
	_, fit, err := l.Record(testutil.Tensor(tensor.Float64, x, g.N(), 2))
	require.NoError(t, err)
	whole, err := fit.Apply(adj, sens, testutil.Tensor(tensor.Float64, x, g.N(), 2))
	require.NoError(t, err)
	w := testutil.ToF64(whole)
	for _, seeds := range [][]int{{0}, {17, 250}, {299}} {
		ball, err := g.Ball(seeds, cfg.K)
		require.NoError(t, err)
		sub, err := graph.GCNNormOf(g, ball, graph.DefaultNormOptions())
		require.NoError(t, err)
		xs := make([]float64, 2*len(ball))
		ss := make([]int, len(ball))
		pos := map[int]int{}
		for r, i := range ball {
			copy(xs[2*r:], x[2*i:2*i+2])
			ss[r], pos[i] = sens[i], r
		}
		out, err := fit.Apply(sub, ss, testutil.Tensor(tensor.Float64, xs, len(ball), 2))
		require.NoError(t, err)
		o := testutil.ToF64(out)
		for _, s := range seeds {
			r := pos[s]
			assert.Equal(t, w[2*s:2*s+2], o[2*r:2*r+2], "node %d on its %d-node ball", s, len(ball))
		}
	}
}

func TestRecordedErrors(t *testing.T) {
	g, sens, x := fittedCase(t, 40, 2, 1)
	adj := graph.NormalizedAdjacency(g)
	cfg := fmp.DefaultConfig()
	l, err := fmp.New(adj, sens, cfg)
	require.NoError(t, err)
	_, fit, err := l.Record(testutil.Tensor(tensor.Float64, x, g.N(), 2))
	require.NoError(t, err)
	xt := testutil.Tensor(tensor.Float64, x, g.N(), 2)
	bad := append([]int(nil), sens...)
	bad[5] = 2
	_, err = fit.Apply(adj, bad, xt)
	assert.ErrorContains(t, err, "node 5 is in group 2; the fit saw groups 0..1")
	short := *fit
	short.Duals = short.Duals[:1]
	_, err = short.Apply(adj, sens, xt)
	assert.ErrorContains(t, err, "1 duals for K = 10 steps")
	nan := *fit
	nan.Duals = append([][]float64{{math.NaN(), 0}}, fit.Duals[1:]...)
	assert.ErrorContains(t, nan.Validate(), "want finite values")
	_, err = fit.Apply(adj, sens[:3], xt)
	assert.ErrorContains(t, err, "want n × n")
}

// TestModelRecordSaveLoad: a Model's Record records the duals of its layer on
// the backbone's logits; a model file keeps them; WithFMP drops them (they
// belong to another setting).
func TestModelRecordSaveLoad(t *testing.T) {
	d := smallSynthetic(t)
	g := G.NewGraph()
	cfg := fmp.DefaultModelConfig(d.NumFeatures, 2)
	cfg.FMP.LambdaF = 3
	m, err := fmp.NewModel(g, d.Graph, d.Sens, cfg, nil)
	require.NoError(t, err)
	assert.Nil(t, m.Recorded())
	x, err := features.NewDense(d.Features, d.N(), d.NumFeatures)
	require.NoError(t, err)
	require.NoError(t, m.Record(x))
	require.NotNil(t, m.Recorded())
	require.Len(t, m.Recorded().Duals, cfg.FMP.K)
	assert.Equal(t, cfg.FMP, m.Recorded().Config)

	var buf bytes.Buffer
	require.NoError(t, modelio.Save(&buf, m, modelio.SaveConfig{Untrained: true}))
	got, err := modelio.Load(bytes.NewReader(buf.Bytes()), G.NewGraph(), modelio.Env{Graph: d.Graph, Sens: d.Sens})
	require.NoError(t, err)
	assert.Equal(t, m.Recorded(), got.(*fmp.Model).Recorded())

	other, err := m.WithFMP(fmp.DefaultConfig())
	require.NoError(t, err)
	assert.Nil(t, other.Recorded())

	assert.ErrorContains(t, m.Record(nil), "features for 0 nodes")
}
