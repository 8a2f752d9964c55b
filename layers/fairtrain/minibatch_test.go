package fairtrain

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/fairmp/fairmp/graph/datasets"
	"github.com/fairmp/fairmp/graph/features"
	"github.com/fairmp/fairmp/internal/testutil"
	"github.com/fairmp/fairmp/layers"
	"github.com/fairmp/fairmp/layers/fairness"
	"github.com/fairmp/fairmp/layers/minibatch"
	"github.com/fairmp/fairmp/layers/preprocess"
	"github.com/fairmp/fairmp/layers/train"
)

// batchMethods are the methods with a per-batch form, at test settings.
func batchMethods() []minibatch.BatchMethod {
	adv := testAdversary(1)
	adv.PretrainClassifier, adv.PretrainAdversary = 2, 3
	rd := DefaultREDRESSConfig()
	rd.Warmup = 1
	rg := DefaultRegularizerConfig()
	rg.Alpha = 2
	return []minibatch.BatchMethod{rg, adv, DefaultMixupConfig(), rd}
}

func mbTask(t testing.TB, ds *datasets.Dataset, cfg layers.Config) *minibatch.Task {
	t.Helper()
	adj, err := minibatch.Matrix(cfg, ds.Graph)
	require.NoError(t, err)
	x, err := features.NewDense(ds.Features, ds.N(), ds.NumFeatures)
	require.NoError(t, err)
	return &minibatch.Task{Adj: adj, Features: x, Labels: ds.Labels, Train: ds.Split.Train, Val: ds.Split.Val, Classes: 2, Sens: ds.Sens}
}

func mbGCN(ds *datasets.Dataset) layers.GCNConfig {
	cfg := layers.DefaultGCNConfig(ds.NumFeatures, 2)
	cfg.Hidden, cfg.Dropout = 16, 0
	return cfg
}

// TestMiniBatchOneBatchIsFullBatch: with every neighbour, one batch
// holding every training node and no shuffling, each method's per-batch
// term is its full-batch term: epoch by epoch the same term (Extra), the
// same cross-entropy and at the end the same parameters as train.Fit with
// the method's Apply (float64, dropout off). Mixup draws its pairs anew
// from each batch's pools, the full-batch run from pools it keeps
// reordering: their first steps agree, so it runs one epoch.
func TestMiniBatchOneBatchIsFullBatch(t *testing.T) {
	ds := biased(t, 300)
	cfg := mbGCN(ds)
	for _, m := range batchMethods() {
		t.Run(m.Name(), func(t *testing.T) {
			mc := minibatch.DefaultConfig(cfg)
			mc.Train.Epochs = 5
			if m.Name() == "mixup" {
				mc.Train.Epochs = 1
			}
			mc.Train.Select = train.SelectLast
			mc.Sampler.BatchSize = len(ds.Split.Train)
			mc.Sampler.Shuffle = false
			mc.Sampler.Fanouts = []int{-1, -1}
			mc.Method = m
			res, err := minibatch.Fit(context.Background(), mbTask(t, ds, cfg), mc)
			require.NoError(t, err)

			g := G.NewGraph()
			phase := layers.NewPhase()
			model, err := layers.Build(g, ds.Graph, cfg, phase)
			require.NoError(t, err)
			x, err := train.FeatureNode(g, tensor.Float64, ds.Features, ds.N(), ds.NumFeatures, "x")
			require.NoError(t, err)
			task := &train.Task{Graph: g, X: x, Labels: ds.Labels, Train: ds.Split.Train, Val: ds.Split.Val, Classes: 2, Phase: phase}
			tc, err := m.(fairness.Loss).Apply(mc.Train, task, ds.Sens)
			require.NoError(t, err)
			full, err := train.Fit(context.Background(), model, task, tc)
			require.NoError(t, err)

			require.Len(t, res.History, len(full.History))
			extra := false
			for e := range res.History {
				assert.InDelta(t, full.History[e].Extra, res.History[e].Extra, 1e-9, "epoch %d term", e+1)
				assert.InDelta(t, full.History[e].CE, res.History[e].CE, 1e-9, "epoch %d CE", e+1)
				extra = extra || res.History[e].Extra != 0
			}
			assert.True(t, extra, "the term never acted")
			require.Len(t, res.LastParams, len(full.LastParams))
			for i := range res.LastParams {
				testutil.AllClose(t, fmt.Sprintf("param %d", i), testutil.ToF64(res.LastParams[i]), testutil.ToF64(full.LastParams[i]), 1e-9, 1e-7)
			}
		})
	}
}

// TestMiniBatchMethodsDeterministic: a seeded run in sampled, shuffled
// batches gives bit-identical parameters and statistics, and the term
// acts (and changes the parameters against plain mini-batch training).
func TestMiniBatchMethodsDeterministic(t *testing.T) {
	ds := biased(t, 400)
	cfg := mbGCN(ds)
	mc := minibatch.DefaultConfig(cfg)
	mc.Train.Epochs = 4
	mc.Sampler.BatchSize = 64
	mc.Sampler.Fanouts = []int{4, 3}
	mc.Sampler.Seed = 7
	plain, err := minibatch.Fit(context.Background(), mbTask(t, ds, cfg), mc)
	require.NoError(t, err)
	for _, m := range batchMethods() {
		t.Run(m.Name(), func(t *testing.T) {
			c := mc
			c.Method = m
			a, err := minibatch.Fit(context.Background(), mbTask(t, ds, cfg), c)
			require.NoError(t, err)
			c.Method = m // a fresh term for the second run
			b, err := minibatch.Fit(context.Background(), mbTask(t, ds, cfg), c)
			require.NoError(t, err)
			for i := range a.LastParams {
				assert.Equal(t, a.LastParams[i].Data(), b.LastParams[i].Data(), "param %d", i)
			}
			for e := range a.History {
				assert.Equal(t, a.History[e].Extra, b.History[e].Extra, "epoch %d", e+1)
				assert.Equal(t, a.History[e].ValAcc, b.History[e].ValAcc, "epoch %d", e+1)
			}
			assert.NotZero(t, a.Last.Extra)
			assert.NotEqual(t, plain.LastParams[0].Data(), a.LastParams[0].Data())
		})
	}
}

// TestMiniBatchRefusals: the methods that cannot run in mini-batches are
// refused by minibatch.Fit, by name, with the reason.
func TestMiniBatchRefusals(t *testing.T) {
	ds := biased(t, 100)
	cfg := mbGCN(ds)
	for _, c := range []struct {
		m    fairness.Method
		want string
	}{
		{DefaultFairGNNConfig(), "fairgnn cannot run in mini-batches: it trains an Encoder"},
		{DefaultNIFTYConfig(), "nifty cannot run in mini-batches: it trains an Encoder on two augmented views"},
		{DefaultFairVGNNConfig(), "fairvgnn cannot run in mini-batches: its epoch is five phases"},
		{DefaultRawlsGCNConfig(), "rawlsgcn cannot run in mini-batches: it changes the propagation matrix, not the loss: train RawlsGCNConfig.Backbone(model)"},
		{preprocess.DefaultEDITSConfig(), "edits cannot run in mini-batches: it is a pre-processing method"},
	} {
		mc := minibatch.DefaultConfig(cfg)
		mc.Train.Epochs = 1
		mc.Method = c.m
		_, err := minibatch.Fit(context.Background(), mbTask(t, ds, cfg), mc)
		require.Error(t, err, c.m.Name())
		assert.True(t, errors.Is(err, minibatch.ErrNotBatched), "%s: %v", c.m.Name(), err)
		assert.ErrorContains(t, err, c.want)
	}
}

// TestMiniBatchMethodErrors: what a per-batch method needs of the task
// and the trainer.
func TestMiniBatchMethodErrors(t *testing.T) {
	ds := biased(t, 100)
	cfg := mbGCN(ds)
	mc := minibatch.DefaultConfig(cfg)
	mc.Train.Epochs = 2
	noSens := mbTask(t, ds, cfg)
	noSens.Sens = nil
	for _, m := range []fairness.Method{DefaultRegularizerConfig(), DefaultMixupConfig(), testAdversary(1)} {
		c := mc
		c.Method = m
		_, err := minibatch.Fit(context.Background(), noSens, c)
		assert.ErrorContains(t, err, m.Name()+": Task.Sens is nil")
	}
	c := mc
	c.Method = testAdversary(1) // PretrainClassifier 20 ≥ Epochs 2
	_, err := minibatch.Fit(context.Background(), mbTask(t, ds, cfg), c)
	assert.ErrorContains(t, err, "Epochs = 2, want > PretrainClassifier = 20")
}

// TestMixupOnePair is the regression test of a one-pair sample (m = 1,
// here Fraction 0.01 of a small group): slicing one row of the mixed
// logits gave a vector, and the penalty failed to build ("along 1 is not
// a valid axis").
func TestMixupOnePair(t *testing.T) {
	ds := biased(t, 100)
	model, task := build(t, ds, "gcn", tensor.Float64, 1)
	m := DefaultMixupConfig()
	m.Fraction = 0.01
	tc := train.DefaultConfig()
	tc.Epochs = 2
	tc, err := m.Apply(tc, task, ds.Sens)
	require.NoError(t, err)
	res, err := train.Fit(context.Background(), model, task, tc)
	require.NoError(t, err)
	assert.NotZero(t, res.Last.Extra)
}

// TestOnePairSlopeByHand: |p_pos (d_pos − Σ_j p_j d_j)| for zm = (0, ln 3),
// d = (1, −1), positive class 1: p = (¼, ¾), Σ p d = −½, so
// |¾ · (−1 + ½)| = 3/8.
func TestOnePairSlopeByHand(t *testing.T) {
	g := G.NewGraph()
	zm := G.NewVector(g, tensor.Float64, G.WithShape(2), G.WithName("zm"), G.WithValue(tensor.New(tensor.WithBacking([]float64{0, 1.0986122886681098}))))
	d := G.NewVector(g, tensor.Float64, G.WithShape(2), G.WithName("d"), G.WithValue(tensor.New(tensor.WithBacking([]float64{1, -1}))))
	s, err := onePairSlope(zm, d, 2, 1)
	require.NoError(t, err)
	vm := G.NewTapeMachine(g)
	defer vm.Close()
	require.NoError(t, vm.RunAll())
	assert.InDelta(t, 0.375, s.Value().Data().(float64), 1e-12)
}
