package fairtrain

import (
	"context"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/fairmp/fairmp/graph"
	"github.com/fairmp/fairmp/graph/datasets"
	"github.com/fairmp/fairmp/internal/testutil"
	"github.com/fairmp/fairmp/layers"
	"github.com/fairmp/fairmp/layers/fairness"
	"github.com/fairmp/fairmp/layers/train"
)

// TestRawlsGCNTrainsOnTheDoublyStochasticMatrix: on every propagating
// backbone the trained model propagates over a doubly stochastic matrix
// with the edges of its own, its configuration records it, and two runs
// are bit-identical; Strength 0 is plain training, bit for bit.
func TestRawlsGCNTrainsOnTheDoublyStochasticMatrix(t *testing.T) {
	ds := biased(t, 120)
	tc := train.DefaultConfig()
	tc.Epochs, tc.Adam.LR = 30, 0.01
	for _, kind := range []string{"gcn", "sgc", "appnp", "jknet"} {
		for _, dt := range testutil.Dtypes {
			var runs [2][][]float64
			for r := range runs {
				s, cfg := setupFor(t, ds, kind, dt, 3, false)
				fit, err := fairness.Fit(context.Background(), DefaultRawlsGCNConfig(), cfg, s, tc)
				require.NoError(t, err, kind)
				runs[r] = params(fit.Model)
				a := fit.Model.(layers.BlockModel).Matrix()
				n, _ := a.Dims()
				rows := make([]float64, n)
				for i := 0; i < n; i++ {
					for p := a.Indptr()[i]; p < a.Indptr()[i+1]; p++ {
						rows[i] += a.Values64()[p]
					}
				}
				for i, v := range rows {
					require.InDelta(t, 1, v, 1e-6+1e-12, "%s: row %d", kind, i)
				}
				require.True(t, a.Symmetric())
				plain, err := layers.DefaultPropagation().Matrix(ds.Graph)
				require.NoError(t, err)
				assert.Equal(t, plain.Indices(), a.Indices(), "%s: the same edges", kind)
				k, err := layers.KindOf(fit.Model)
				require.NoError(t, err)
				mc, err := k.ConfigOf(fit.Model)
				require.NoError(t, err)
				p, _, err := k.Propagation(mc)
				require.NoError(t, err)
				assert.True(t, p.DoublyStochastic, kind)
				assert.Equal(t, graph.DefaultSinkhornOptions(), p.Sinkhorn, kind)
			}
			assert.Equal(t, runs[0], runs[1], "%s %v: reruns must be bit-identical", kind, dt)

			// Strength 0: the plain backbone.
			s, cfg := setupFor(t, ds, kind, dt, 3, false)
			off, err := fairness.Fit(context.Background(), DefaultRawlsGCNConfig().WithWeight(0), cfg, s, tc)
			require.NoError(t, err)
			s, cfg = setupFor(t, ds, kind, dt, 3, false)
			plain, err := fairness.Fit(context.Background(), nil, cfg, s, tc)
			require.NoError(t, err)
			assert.Equal(t, params(plain.Model), params(off.Model), "%s %v: Strength 0 is plain training", kind, dt)
			assert.NotEqual(t, params(plain.Model), runs[0], "%s %v: the doubly stochastic matrix changes the model", kind, dt)
		}
	}
}

// TestRawlsGCNErrors: invalid configurations and backbones are errors
// that say what to do.
func TestRawlsGCNErrors(t *testing.T) {
	c := DefaultRawlsGCNConfig()
	require.NoError(t, c.Validate())
	assert.Equal(t, 1.0, c.Weight())
	assert.Equal(t, c, fairness.WithSeed(c, 5), "RawlsGCN draws nothing")
	for _, w := range []float64{0.5, 2, -1, math.NaN()} {
		assert.ErrorContains(t, c.WithWeight(w).Validate(), "want 1 (the doubly stochastic matrix) or 0", "%v", w)
	}
	bad := c
	bad.Sinkhorn.MaxIter = 0
	assert.ErrorContains(t, bad.Validate(), "RawlsGCNConfig.SinkhornOptions.MaxIter = 0")

	_, err := c.Backbone(layers.DefaultMLPConfig(3, 2))
	assert.ErrorContains(t, err, "the mlp backbone does not propagate")
	_, err = c.Backbone(layers.DefaultGATConfig(3, 2))
	assert.ErrorContains(t, err, "the gat backbone's propagation cannot be made doubly stochastic")
	_, err = c.Backbone(layers.DefaultSAGEConfig(3, 2))
	assert.ErrorContains(t, err, "the sage backbone's mean aggregation reads which neighbours its matrix holds")
	_, err = c.Backbone(nil)
	assert.ErrorContains(t, err, "nil backbone")
	out, err := c.WithWeight(0).(RawlsGCNConfig).Backbone(layers.DefaultMLPConfig(3, 2))
	require.NoError(t, err, "Strength 0 leaves any backbone alone")
	assert.Equal(t, layers.Config(layers.DefaultMLPConfig(3, 2)), out)

	// The backbone's own propagation options are kept.
	g := layers.DefaultGCNConfig(3, 2)
	g.Propagation.Improved = true
	out, err = c.Backbone(g)
	require.NoError(t, err)
	p := out.(layers.GCNConfig).Propagation
	assert.True(t, p.Improved && p.AddSelfLoops && p.Normalize && p.DoublyStochastic)

	ds := biased(t, 60)
	s, cfg := setupFor(t, ds, "gcn", tensor.Float64, 1, false)
	_, err = fairness.Fit(context.Background(), c.WithWeight(0.3), cfg, s, train.DefaultConfig())
	assert.ErrorContains(t, err, "fairtrain: rawlsgcn: Strength (the weight) = 0.3")
}

// BenchmarkRawlsGCNBailShaped times, on a generated graph of Bail's size
// (18,876 nodes, 18 features, mean degree 33), the building of the
// propagation matrix (GCN's and its doubly stochastic scaling) and one
// training epoch of a GCN (64 hidden) on each: RawlsGCN-Graph's matrix
// has the same entries, so its epoch costs the same.
func BenchmarkRawlsGCNBailShaped(b *testing.B) {
	c := datasets.DefaultSyntheticConfig()
	c.N, c.NumFeatures, c.MeanDegree = 18876, 18, 33
	ds, err := datasets.Synthetic(c)
	require.NoError(b, err)
	for _, name := range []string{"gcn", "rawlsgcn"} {
		prop := layers.DefaultPropagation()
		if name == "rawlsgcn" {
			prop = layers.DoublyStochasticPropagation()
		}
		b.Run("matrix/"+name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				if _, err := prop.Matrix(ds.Graph); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("epoch/"+name, func(b *testing.B) {
			g := G.NewGraph()
			x, err := train.FeatureNode(g, tensor.Float64, ds.Features, ds.N(), ds.NumFeatures, "x")
			require.NoError(b, err)
			ph := layers.NewPhase()
			cfg := layers.DefaultGCNConfig(ds.NumFeatures, 2)
			cfg.Propagation = prop
			m, err := layers.NewGCN(g, ds.Graph, cfg, ph)
			require.NoError(b, err)
			task := &train.Task{Graph: g, X: x, Labels: ds.Labels, Train: ds.Split.Train, Val: ds.Split.Val, Classes: 2, Phase: ph}
			tc := train.DefaultConfig()
			tc.Epochs = 1 << 30
			tr, err := train.NewTrainer(m, task, tc)
			require.NoError(b, err)
			defer tr.Close()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := tr.Epoch(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
