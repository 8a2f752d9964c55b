package fairtrain

import (
	"math/rand"
	"testing"

	"github.com/fairmp/fairmp/graph/datasets"
	"github.com/fairmp/fairmp/layers"
	"github.com/fairmp/fairmp/layers/train"
	"github.com/stretchr/testify/require"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// BenchmarkFairVGNNEpochBailShaped times one epoch on a generated graph of
// Bail's size (18,876 nodes, 18 features, mean degree 33) with the GCN
// backbone at its defaults (64 hidden): plain training (one step and the
// evaluation) against FairVGNN at its defaults (10 masks, 5 steps of each
// phase: 150 forward and backward passes of the encoder an epoch) and at
// the reference code's Bail setting (5, 10 and 10 steps: 250 passes). A
// FairVGNN epoch includes its clamping and evaluation; building the
// phases' graphs is not timed.
//
//	go test -run - -bench FairVGNNEpoch -benchtime 3x ./layers/fairtrain
func BenchmarkFairVGNNEpochBailShaped(b *testing.B) {
	c := datasets.DefaultSyntheticConfig()
	c.N, c.NumFeatures, c.MeanDegree = 18876, 18, 33
	ds, err := datasets.Synthetic(c)
	require.NoError(b, err)
	setup := func() (Setup, layers.Config) {
		g := G.NewGraph()
		x, err := train.FeatureNode(g, tensor.Float64, ds.Features, ds.N(), ds.NumFeatures, "x")
		require.NoError(b, err)
		ph := layers.NewPhase()
		task := &train.Task{Graph: g, X: x, Labels: ds.Labels, Train: ds.Split.Train, Val: ds.Split.Val, Classes: 2, Phase: ph}
		return NewSetup(ds.Graph, task, ds.Sens), layers.DefaultGCNConfig(ds.NumFeatures, 2)
	}
	b.Run("plain", func(b *testing.B) {
		s, cfg := setup()
		m, err := layers.Build(s.Task.Graph, ds.Graph, cfg, s.Task.Phase)
		require.NoError(b, err)
		tr, err := train.NewTrainer(m, s.Task, train.DefaultConfig())
		require.NoError(b, err)
		defer tr.Close()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			if _, err := tr.Epoch(); err != nil {
				b.Fatal(err)
			}
		}
	})
	bail := DefaultFairVGNNConfig()
	bail.ClassifierSteps, bail.GeneratorSteps = 10, 10
	for _, v := range []struct {
		name string
		cfg  FairVGNNConfig
	}{{"fairvgnn-defaults", DefaultFairVGNNConfig()}, {"fairvgnn-bail-script", bail}} {
		b.Run(v.name, func(b *testing.B) {
			s, cfg := setup()
			enc, err := NewEncoder(s.Task.Graph, s.Graph, bodyConfig(cfg, v.cfg.Hidden), 2, s.Task.Phase)
			require.NoError(b, err)
			var known []int
			for i := range ds.Sens {
				known = append(known, i)
			}
			r := &vgnnRun{cfg: v.cfg, task: s.Task, n: ds.N(), d: ds.NumFeatures, dt: tensor.Float64,
				rng: rand.New(rand.NewSource(v.cfg.Seed)), model: &MaskedEncoder{enc: enc}}
			require.NoError(b, r.build(s, known, train.DefaultConfig().Adam))
			defer r.close()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := r.epoch(i + 1); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
