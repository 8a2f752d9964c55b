package fairtrain

import (
	"context"
	"fmt"
	"testing"

	"github.com/fairmp/fairmp/fmp"
	"github.com/fairmp/fairmp/graph/datasets"
	"github.com/fairmp/fairmp/layers"
	"github.com/fairmp/fairmp/layers/fairness"
	"github.com/fairmp/fairmp/layers/train"
	"github.com/fairmp/fairmp/metrics"
	"github.com/stretchr/testify/require"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// biased returns a small generated biased graph (datasets.Synthetic).
func biased(t testing.TB, n int) *datasets.Dataset {
	t.Helper()
	c := datasets.DefaultSyntheticConfig()
	c.N = n
	c.MeanDegree = 8
	ds, err := datasets.Synthetic(c)
	require.NoError(t, err)
	return ds
}

// backbones lists every backbone kind (layers.BackboneNames), and "fmp"
// (MLP → FMP): the strategies are tested on each.
func backbones() []string {
	return append(layers.BackboneNames(), "fmp")
}

// build returns a fresh model of the given backbone on ds (hidden width
// 16 where the kind has one), and its task.
func build(t testing.TB, ds *datasets.Dataset, backbone string, dt tensor.Dtype, seed int64) (layers.Model, *train.Task) {
	t.Helper()
	g := G.NewGraph()
	x, err := train.FeatureNode(g, dt, ds.Features, ds.N(), ds.NumFeatures, "x")
	require.NoError(t, err)
	ph := layers.NewPhase()
	d, c := ds.NumFeatures, ds.NumClasses()
	var m layers.Model
	if backbone == "fmp" {
		mc := fmp.DefaultModelConfig(d, c)
		mc.MLP.Hidden, mc.MLP.Dtype, mc.MLP.Seed = 16, dt, seed
		m, err = fmp.NewModel(g, ds.Graph, ds.Sens, mc, ph)
	} else {
		k, kerr := layers.LookupKind(backbone)
		require.NoError(t, kerr)
		opt := layers.Options{Dtype: dt, Seed: seed}
		if k.HasHidden() {
			opt.Hidden = 16
		}
		cfg, cerr := k.Configure(d, c, opt)
		require.NoError(t, cerr)
		m, err = k.Build(g, ds.Graph, cfg, ph)
	}
	require.NoError(t, err)
	task := &train.Task{Graph: g, X: x, Labels: ds.Labels, Train: ds.Split.Train, Val: ds.Split.Val, Classes: c, Phase: ph}
	return m, task
}

// run trains backbone on ds with strategy s (nil: plain) and returns the
// test report and the trained parameters.
func run(t testing.TB, ds *datasets.Dataset, backbone string, dt tensor.Dtype, s fairness.Loss, epochs int) (metrics.Report, []*tensor.Dense) {
	t.Helper()
	m, task := build(t, ds, backbone, dt, 3)
	tc := train.DefaultConfig()
	tc.Epochs, tc.Adam.LR, tc.Select = epochs, 0.01, train.SelectLast
	if s != nil {
		var err error
		if tc, err = s.Apply(tc, task, ds.Sens); err != nil {
			t.Fatal(err)
		}
	}
	res, err := train.Fit(context.Background(), m, task, tc)
	require.NoError(t, err)
	p, err := train.Predict(m, task, nil)
	require.NoError(t, err)
	rep, err := metrics.Evaluate(p.Probs, p.Classes, ds.Labels, ds.Sens, ds.Split.Test, metrics.DefaultOptions())
	require.NoError(t, err)
	return rep, res.LastParams
}

func describe(r metrics.Report) string {
	return fmt.Sprintf("acc %.2f ΔDP %.2f", metrics.Percent(r.Accuracy), metrics.Percent(r.DemographicParity))
}
