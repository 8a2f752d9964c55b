package perturb

import (
	"context"
	"testing"

	"github.com/fairmp/fairmp/fmp"
	"github.com/fairmp/fairmp/graph/datasets"
	"github.com/fairmp/fairmp/internal/testutil"
	"github.com/fairmp/fairmp/layers"
	"github.com/fairmp/fairmp/layers/fairness"
	"github.com/fairmp/fairmp/layers/fairtrain"
	"github.com/fairmp/fairmp/layers/train"
	"github.com/fairmp/fairmp/metrics"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// TestCounterfactualHandBuilt: a logistic regression whose class-1 logit
// is 2·x₀ + x₁ − 1.5 (x₀ the sensitive column) decides 1 for s = 1 when
// x₁ > −0.5 and for s = 0 when x₁ > 1.5. Of the six nodes, those with
// x₁ in (−0.5, 1.5] change when s flips: nodes 1, 2 and 4.
func TestCounterfactualHandBuilt(t *testing.T) {
	for _, dt := range testutil.Dtypes {
		x := []float64{
			1, -1, // s 1, x₁ −1: 0 → 0
			1, 0, // s 1: 1; flipped 0
			0, 1, // s 0: 0; flipped 1
			0, 2, // s 0: 1; flipped 1
			1, 1.5, // s 1: 1; flipped 0 (1.5 is not > 1.5)
			0, -2, // 0 → 0
		}
		sens := []int{1, 1, 0, 0, 1, 0}
		g := G.NewGraph()
		c := layers.DefaultMLPConfig(2, 2)
		c.Layers, c.Dtype = 1, dt
		m, err := layers.NewMLP(g, nil, c, nil)
		require.NoError(t, err)
		require.NoError(t, train.SetParams(m, []*tensor.Dense{
			testutil.Tensor(dt, []float64{0, 2, 0, 1}, 2, 2),
			testutil.Tensor(dt, []float64{0, -1.5}, 1, 2),
		}))
		in := Input{Model: m, Features: x, NumFeatures: 2, Sens: sens, SensFeature: 0, Classes: 2}
		cfg := DefaultConfig()
		cfg.NoiseStd = 0
		r, err := Evaluate(in, nil, cfg, metrics.DefaultOptions(), metrics.DefaultBootstrapConfig())
		require.NoError(t, err)
		assert.InDelta(t, 0.5, r.Unfairness.Point, 1e-15, "%v", dt)
		assert.Equal(t, 0.0, r.Instability.Point)
		r, err = Evaluate(in, []int{0, 3, 5}, cfg, metrics.DefaultOptions(), metrics.DefaultBootstrapConfig())
		require.NoError(t, err)
		assert.Equal(t, 0.0, r.Unfairness.Point)
		// Without the column the model cannot see the flip.
		in.SensFeature = -1
		r, err = Evaluate(in, nil, cfg, metrics.DefaultOptions(), metrics.DefaultBootstrapConfig())
		require.NoError(t, err)
		assert.Equal(t, 0.0, r.Unfairness.Point)
		// Large noise moves decisions.
		cfg.NoiseStd = 5
		r, err = Evaluate(in, nil, cfg, metrics.DefaultOptions(), metrics.DefaultBootstrapConfig())
		require.NoError(t, err)
		assert.Greater(t, r.Instability.Point, 0.0)
	}
}

func biased(t *testing.T) *datasets.Dataset {
	c := datasets.DefaultSyntheticConfig()
	c.N, c.MeanDegree = 150, 6
	ds, err := datasets.Synthetic(c)
	require.NoError(t, err)
	return ds
}

// TestRebuildMatchesPredict: the rebuilt model predicts what the trained
// one predicts, for a kind, FMP on a kind, and an encoder.
func TestRebuildMatchesPredict(t *testing.T) {
	ds := biased(t)
	g := G.NewGraph()
	x, err := train.FeatureNode(g, tensor.Float64, ds.Features, ds.N(), ds.NumFeatures, "x")
	require.NoError(t, err)
	ph := layers.NewPhase()
	task := &train.Task{Graph: g, X: x, Labels: ds.Labels, Train: ds.Split.Train, Val: ds.Split.Val, Classes: 2, Phase: ph}
	gc := layers.DefaultGCNConfig(ds.NumFeatures, 2)
	gc.Hidden = 8
	gcn, err := layers.NewGCN(g, ds.Graph, gc, ph)
	require.NoError(t, err)
	tc := train.DefaultConfig()
	tc.Epochs, tc.Adam.LR = 30, 0.01
	_, err = train.Fit(context.Background(), gcn, task, tc)
	require.NoError(t, err)
	fm, err := fmp.On(gcn, ds.Graph, ds.Sens, fmp.DefaultOnConfig(), ph)
	require.NoError(t, err)

	ec := layers.DefaultGCNConfig(ds.NumFeatures, 2)
	ec.Name, ec.Hidden = "enc", 8
	fit, err := fairness.Fit(context.Background(), fairtrain.DefaultNIFTYConfig(), ec, fairness.NewSetup(ds.Graph, task, ds.Sens), tc)
	require.NoError(t, err)

	for name, m := range map[string]layers.Model{"gcn": gcn, "fmp": fm, "nifty encoder": fit.Model} {
		want, err := train.Predict(m, task, nil)
		require.NoError(t, err)
		in := Input{Model: m, Graph: ds.Graph, Features: ds.Features, NumFeatures: ds.NumFeatures, Sens: ds.Sens, SensFeature: -1, Classes: 2}
		got, err := predict(in, ds.Features, ds.Graph, ds.Sens)
		require.NoError(t, err)
		testutil.AllClose(t, name, got, want.Probs, 1e-12, 1e-10)
		r, err := Evaluate(in, ds.Split.Test, DefaultConfig(), metrics.DefaultOptions(), metrics.DefaultBootstrapConfig())
		require.NoError(t, err)
		if name == "gcn" || name == "nifty encoder" {
			assert.Equal(t, 0.0, r.Unfairness.Point, "%s reads no attribute", name)
		}
		t.Logf("%s: unfairness %v, instability %v", name, r.Unfairness, r.Instability)
	}
	// FMP reads the attribute, but flipping every group at once swaps
	// the groups' roles in Δs and in the gap it corrects, and FMP's
	// correction is symmetric in them: its output does not move.
	in := Input{Model: fm, Graph: ds.Graph, Features: ds.Features, NumFeatures: ds.NumFeatures, Sens: ds.Sens, SensFeature: -1, Classes: 2}
	orig, err := predict(in, ds.Features, ds.Graph, ds.Sens)
	require.NoError(t, err)
	_, fs, err := flip(ds.Features, ds.NumFeatures, -1, ds.Sens)
	require.NoError(t, err)
	flipped, err := predict(in, ds.Features, ds.Graph, fs)
	require.NoError(t, err)
	testutil.AllClose(t, "fmp, every group flipped", flipped, orig, 1e-9, 1e-9)
}

func TestErrors(t *testing.T) {
	_, _, err := flip([]float64{0, 1}, 1, 0, []int{0, 2})
	assert.ErrorContains(t, err, "binary attribute")
	_, _, err = perturbInputs([]float64{0}, 1, -1, nil, Config{NoiseStd: -1})
	assert.ErrorContains(t, err, "NoiseStd")
	_, err = predict(Input{Model: nil}, nil, nil, nil)
	assert.ErrorContains(t, err, "nil Model")
}
