package fmp_test

import (
	"bytes"
	"context"
	"fmt"
	"testing"

	"github.com/fairmp/fairmp/fmp"
	"github.com/fairmp/fairmp/fmp/modelio"
	"github.com/fairmp/fairmp/graph"
	"github.com/fairmp/fairmp/graph/datasets"
	"github.com/fairmp/fairmp/graph/features"
	"github.com/fairmp/fairmp/internal/testutil"
	"github.com/fairmp/fairmp/layers"
	"github.com/fairmp/fairmp/layers/train"
	"github.com/fairmp/fairmp/metrics"
	"github.com/fairmp/fairmp/metrics/diagnose"
	"github.com/fairmp/fairmp/metrics/selection"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// backbone builds a model of the named kind on ds in g, through the
// registry of kinds, with a hidden width of 16 where the kind has one.
func backbone(name string, g *G.ExprGraph, ds *datasets.Dataset, dt tensor.Dtype, ph *layers.Phase) (layers.Model, error) {
	k, err := layers.LookupKind(name)
	if err != nil {
		return nil, err
	}
	o := layers.Options{Dtype: dt, Seed: 1}
	if k.HasHidden() {
		o.Hidden = 16
	}
	cfg, err := k.Configure(ds.NumFeatures, 2, o)
	if err != nil {
		return nil, err
	}
	return k.Build(g, ds.Graph, cfg, ph)
}

// backboneKinds lists every backbone kind (layers.BackboneNames: all but
// the wrappers and fairtrain's encoder, which its methods build).
func backboneKinds() []string {
	return layers.BackboneNames()
}

// onBackbone builds FMP on the named backbone in a new graph.
func onBackbone(t *testing.T, name string, ds *datasets.Dataset, dt tensor.Dtype, cfg fmp.Config) (*fmp.Model, *train.Task) {
	t.Helper()
	g := G.NewGraph()
	x, err := train.FeatureNode(g, dt, ds.Features, ds.N(), ds.NumFeatures, "x")
	require.NoError(t, err)
	ph := layers.NewPhase()
	if name == "sgc" {
		ph = nil // SGC has no stochastic layer and no phase
	}
	b, err := backbone(name, g, ds, dt, ph)
	require.NoError(t, err)
	m, err := fmp.On(b, ds.Graph, ds.Sens, fmp.OnConfig{Propagation: layers.DefaultPropagation(), FMP: cfg}, ph)
	require.NoError(t, err)
	return m, &train.Task{Graph: g, X: x, Labels: ds.Labels, Train: ds.Split.Train, Val: ds.Split.Val, Classes: 2, Phase: ph}
}

func fastConfig(epochs int) train.Config {
	c := train.DefaultConfig()
	c.Epochs, c.Adam.LR = epochs, 0.01
	return c
}

// TestOnEveryBackbone: FMP on each backbone trains (two-stage), saves and
// loads into a new graph with bit-identical predictions.
func TestOnEveryBackbone(t *testing.T) {
	ds := smallSynthetic(t)
	for _, name := range backboneKinds() {
		for _, dt := range testutil.Dtypes {
			t.Run(name+"/"+dt.String(), func(t *testing.T) {
				m, task := onBackbone(t, name, ds, dt, fmp.DefaultConfig())
				res, err := m.FitTwoStage(context.Background(), task, fastConfig(20))
				require.NoError(t, err)
				assert.Less(t, res.Last.CE, res.History[0].CE, "training lowers the loss")
				want, err := train.Predict(m, task, nil)
				require.NoError(t, err)
				var buf bytes.Buffer
				assert.ErrorIs(t, modelio.Save(&buf, m, modelio.DefaultSaveConfig()), fmp.ErrNotRecorded, "saving before Record")
				buf.Reset()
				xs, err := features.NewDense(ds.Features, ds.N(), ds.NumFeatures)
				require.NoError(t, err)
				require.NoError(t, m.Record(xs))
				require.NoError(t, modelio.Save(&buf, m, modelio.DefaultSaveConfig()))
				_, task2 := onBackbone(t, name, ds, dt, fmp.DefaultConfig()) // a fresh graph and phase
				g2 := G.NewGraph()
				x2, err := train.FeatureNode(g2, dt, ds.Features, ds.N(), ds.NumFeatures, "x")
				require.NoError(t, err)
				task2.Graph, task2.X = g2, x2
				loaded, err := modelio.Load(&buf, g2, modelio.Env{Graph: ds.Graph, Phase: task2.Phase, Sens: ds.Sens})
				require.NoError(t, err)
				lm, ok := loaded.(*fmp.Model)
				require.True(t, ok, "loaded %T", loaded)
				assert.Equal(t, m.Config(), lm.Config())
				got, err := train.Predict(lm, task2, nil)
				require.NoError(t, err)
				assert.Equal(t, want.Probs, got.Probs, "predictions after Load")
			})
		}
	}
}

// TestFrontierPointsAreModels: every frontier point's metrics are those of
// the model built with that setting (m.WithFMP), exactly; the chosen point
// obeys the rule; a larger λf grid point moves the decisions.
func TestFrontierPointsAreModels(t *testing.T) {
	ds := smallSynthetic(t)
	for _, dt := range testutil.Dtypes {
		m, task := onBackbone(t, "gcn", ds, dt, fmp.DefaultConfig())
		_, err := m.FitTwoStage(context.Background(), task, fastConfig(30))
		require.NoError(t, err)
		fc := fmp.DefaultFrontierConfig()
		fc.LambdaF = []float64{0, 0.5, 2, 8}
		fc.LambdaS = []float64{0, 1}
		fc.Test = ds.Split.Test
		bc := metrics.DefaultBootstrapConfig()
		bc.Resamples = 200
		fc.TestBootstrap = &bc
		f, err := fmp.NewFrontier(context.Background(), m, task, fc)
		require.NoError(t, err)
		require.Len(t, f.Points, 8)
		for _, p := range f.Points {
			mp, err := m.WithFMP(p.Config)
			require.NoError(t, err)
			pred, err := train.Predict(mp, task, nil)
			require.NoError(t, err)
			val, err := metrics.Evaluate(pred.Probs, 2, ds.Labels, ds.Sens, ds.Split.Val, metrics.DefaultOptions())
			require.NoError(t, err)
			test, err := metrics.Evaluate(pred.Probs, 2, ds.Labels, ds.Sens, ds.Split.Test, metrics.DefaultOptions())
			require.NoError(t, err)
			assert.Equal(t, val, p.Val, "%v λs %v λf %v: validation", dt, p.Config.LambdaS, p.Config.LambdaF)
			assert.Equal(t, test, p.Test, "%v λs %v λf %v: test", dt, p.Config.LambdaS, p.Config.LambdaF)
			iv, err := metrics.Bootstrap(pred.Probs, 2, ds.Labels, ds.Sens, ds.Split.Test, metrics.DefaultOptions(), bc)
			require.NoError(t, err)
			assert.Equal(t, iv, p.TestIntervals, "%v λs %v λf %v: test intervals", dt, p.Config.LambdaS, p.Config.LambdaF)
			assert.Less(t, p.TestIntervals.DemographicParity.Lo, p.TestIntervals.DemographicParity.Hi, "a nonempty ΔDP interval")
		}
		best := f.Best()
		assert.GreaterOrEqual(t, best.Val.Accuracy, f.Reference.Val.Accuracy-0.01, "within one point of the reference")
		for _, p := range f.Points {
			if p.Val.Accuracy >= f.Reference.Val.Accuracy-0.01 {
				assert.GreaterOrEqual(t, p.Val.DemographicParity, best.Val.DemographicParity, "no admissible point has a lower ΔDP")
			}
		}
		chosen, err := f.Model()
		require.NoError(t, err)
		assert.Equal(t, best.Config, chosen.Config())

		// The same grid on the backbone's logits, computed outside the
		// model (as for a backbone trained in mini-batches), gives the
		// same points and the same choice.
		z, err := train.Logits(m.Backbone(), task)
		require.NoError(t, err)
		lf, err := fmp.NewLogitsFrontier(context.Background(), z, m.Matrix(), ds.Sens, ds.Labels, ds.Split.Val, m.Config(), fc)
		require.NoError(t, err)
		assert.Equal(t, f.Points, lf.Points)
		assert.Equal(t, f.Reference, lf.Reference)
		assert.Equal(t, f.Chosen, lf.Chosen)
		_, err = lf.Model()
		assert.ErrorContains(t, err, "has no model")
		_, err = fmp.NewLogitsFrontier(context.Background(), z, m.Matrix(), ds.Sens, ds.Labels, nil, m.Config(), fc)
		assert.ErrorContains(t, err, "no validation nodes")
		noTest := fc
		noTest.Test = nil
		_, err = fmp.NewFrontier(context.Background(), m, task, noTest)
		assert.ErrorContains(t, err, "TestBootstrap is set but Test is empty")
		bad := bc
		bad.Resamples = 10
		noTest.Test, noTest.TestBootstrap = ds.Split.Test, &bad
		_, err = fmp.NewFrontier(context.Background(), m, task, noTest)
		assert.ErrorIs(t, err, metrics.ErrValue)
		_, err = fmp.NewLogitsFrontier(context.Background(), z, m.Matrix(), ds.Sens, ds.Labels[1:], ds.Split.Val, m.Config(), fc)
		assert.ErrorContains(t, err, "labels for")
	}
}

// TestTwoStageDebiases: on the generated biased graph, the two-stage model
// with the default λf has a lower test ΔDP than the same backbone with
// λf = 0.
func TestTwoStageDebiases(t *testing.T) {
	c := datasets.DefaultSyntheticConfig()
	c.N, c.MeanDegree = 600, 6
	ds, err := datasets.Synthetic(c)
	require.NoError(t, err)
	m, task := onBackbone(t, "mlp", ds, tensor.Float64, fmp.DefaultConfig())
	_, err = m.FitTwoStage(context.Background(), task, fastConfig(60))
	require.NoError(t, err)
	plain := m.Config()
	plain.LambdaF = 0
	pm, err := m.WithFMP(plain)
	require.NoError(t, err)
	dp := func(mm *fmp.Model) float64 {
		p, err := train.Predict(mm, task, nil)
		require.NoError(t, err)
		r, err := metrics.Evaluate(p.Probs, 2, ds.Labels, ds.Sens, ds.Split.Test, metrics.DefaultOptions())
		require.NoError(t, err)
		return r.DemographicParity
	}
	assert.Less(t, dp(m), dp(pm))
}

// TestOnGuardRails: On refuses a backbone built with another phase or on
// another graph, and a task with another phase.
func TestOnGuardRails(t *testing.T) {
	ds := smallSynthetic(t)
	g := G.NewGraph()
	ph := layers.NewPhase()
	b, err := backbone("gcn", g, ds, tensor.Float64, ph)
	require.NoError(t, err)
	_, err = fmp.On(b, ds.Graph, ds.Sens, fmp.DefaultOnConfig(), layers.NewPhase())
	assert.ErrorContains(t, err, "another *layers.Phase")
	c := datasets.DefaultSyntheticConfig()
	c.N, c.MeanDegree, c.Seed = 300, 6, 99
	other, err := datasets.Synthetic(c)
	require.NoError(t, err)
	_, err = fmp.On(b, other.Graph, other.Sens, fmp.DefaultOnConfig(), ph)
	assert.ErrorContains(t, err, "another graph")
	// The same counts, other edges: the message says so (it printed two
	// equal pairs of counts before).
	edges := ds.Graph.Edges()
	has := map[[2]int]bool{}
	for _, e := range edges {
		has[e], has[[2]int{e[1], e[0]}] = true, true
	}
	for edges[0][1] == edges[0][0] || has[edges[0]] {
		edges[0][1] = (edges[0][1] + 1) % ds.N()
	}
	moved, err := graph.FromEdges(ds.N(), edges)
	require.NoError(t, err)
	require.Equal(t, ds.Graph.NumEdges(), moved.NumEdges())
	_, err = fmp.On(b, moved, ds.Sens, fmp.DefaultOnConfig(), ph)
	assert.ErrorContains(t, err, fmt.Sprintf("the same %d nodes and %d edges, but other edges", ds.N(), ds.Graph.NumEdges()))
	m, err := fmp.On(b, ds.Graph, ds.Sens, fmp.DefaultOnConfig(), ph)
	require.NoError(t, err)
	x, err := train.FeatureNode(g, tensor.Float64, ds.Features, ds.N(), ds.NumFeatures, "x")
	require.NoError(t, err)
	task := &train.Task{Graph: g, X: x, Labels: ds.Labels, Train: ds.Split.Train, Val: ds.Split.Val, Classes: 2, Phase: layers.NewPhase()}
	_, err = train.Fit(context.Background(), m, task, fastConfig(1))
	assert.ErrorIs(t, err, train.ErrPhaseMismatch)
	_, err = fmp.NewFrontier(context.Background(), m, task, fmp.DefaultFrontierConfig())
	assert.ErrorIs(t, err, train.ErrPhaseMismatch)
	// An untrained backbone is not debiased as if it had been trained
	// (df69dad chose a setting for it without a word).
	task.Phase = ph
	_, err = fmp.NewFrontier(context.Background(), m, task, fmp.DefaultFrontierConfig())
	assert.ErrorIs(t, err, train.ErrUntrained)
}

// TestFrontierRuleNotMet: when no setting meets the rule, NewFrontier and
// NewLogitsFrontier still return every point with the error; the
// reference is kept (Chosen −1, Best, Model) and a RuleNotMet diagnostic
// names what was reachable.
func TestFrontierRuleNotMet(t *testing.T) {
	ds := smallSynthetic(t)
	m, task := onBackbone(t, "gcn", ds, tensor.Float64, fmp.DefaultConfig())
	_, err := m.FitTwoStage(context.Background(), task, fastConfig(20))
	require.NoError(t, err)
	fc := fmp.DefaultFrontierConfig()
	fc.LambdaF = []float64{0, 1}
	fc.LambdaS = []float64{0}
	fc.Rule = selection.MostAccurateWithin(metrics.DPDifference, 0) // exact parity: not reached
	f, err := fmp.NewFrontier(context.Background(), m, task, fc)
	require.ErrorIs(t, err, selection.ErrNoCandidate)
	require.NotNil(t, f, "the frontier is returned with the error")
	assert.Len(t, f.Points, 2)
	assert.False(t, f.Met())
	assert.Equal(t, -1, f.Chosen)
	assert.Equal(t, f.Reference, f.Best())
	chosen, err := f.Model()
	require.NoError(t, err)
	assert.Equal(t, f.Reference.Config, chosen.Config())
	d := f.Diagnostics()
	require.Len(t, d, 1)
	assert.Equal(t, diagnose.RuleNotMet, d[0].Code)
	assert.Equal(t, "fmp", d[0].Subject)
	assert.Contains(t, d[0].Message, "no FMP setting met the rule (highest validation accuracy with ΔDP ≤ 0%)")
	assert.Contains(t, d[0].Message, "the most accurate setting (λs 0, λf ")
	assert.Contains(t, d[0].Message, "the fairest (λs 0, λf ")

	z, err := train.Logits(m.Backbone(), task)
	require.NoError(t, err)
	lf, err := fmp.NewLogitsFrontier(context.Background(), z, m.Matrix(), ds.Sens, ds.Labels, ds.Split.Val, m.Config(), fc)
	require.ErrorIs(t, err, selection.ErrNoCandidate)
	require.NotNil(t, lf)
	assert.Equal(t, f.Points, lf.Points)
	assert.Equal(t, -1, lf.Chosen)

	fc.Rule = selection.DefaultRule()
	fc.LambdaS = []float64{0, 1} // the reference (λs 1, λf 0) among the points
	f, err = fmp.NewFrontier(context.Background(), m, task, fc)
	require.NoError(t, err)
	assert.True(t, f.Met())
	assert.Empty(t, f.Diagnostics())
}
