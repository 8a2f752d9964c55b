package fairtrain

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gorgonia.org/tensor"

	"github.com/fairmp/fairmp/graph/features"
	"github.com/fairmp/fairmp/layers/fairness"
	"github.com/fairmp/fairmp/layers/minibatch"
	"github.com/fairmp/fairmp/layers/train"
)

// TestCancelStopsTraining: a cancelled context stops every trainer of
// the library — the loop (train.Fit, through fairness.Fit with an
// in-training method), each architecture, and mini-batches between
// batches — with an error wrapping context.Canceled that says where.
func TestCancelStopsTraining(t *testing.T) {
	ds := biased(t, 120)
	tc := train.DefaultConfig()
	tc.Epochs = 20

	// Cancelled after epoch 3: the loop stops before epoch 4.
	s, cfg := setupFor(t, ds, "gcn", tensor.Float64, 1, false)
	ctx, cancel := context.WithCancel(context.Background())
	epochs := 0
	stop := tc
	stop.OnEpoch = func(st train.EpochStats) error {
		epochs = st.Epoch
		if st.Epoch == 3 {
			cancel()
		}
		return nil
	}
	_, err := fairness.Fit(ctx, DefaultRegularizerConfig(), cfg, s, stop)
	require.Error(t, err)
	assert.True(t, errors.Is(err, context.Canceled), "%v", err)
	assert.ErrorContains(t, err, "before epoch 4")
	assert.Equal(t, 3, epochs)

	// Every architecture refuses to go on with a cancelled context.
	done, cancelAll := context.WithCancel(context.Background())
	cancelAll()
	for _, m := range []fairness.Method{DefaultFairGNNConfig(), DefaultNIFTYConfig(), quickVGNN(), DefaultRawlsGCNConfig(), DefaultMixupConfig(), DefaultREDRESSConfig()} {
		s, cfg := setupFor(t, ds, "gcn", tensor.Float64, 1, false)
		_, err := fairness.Fit(done, m, cfg, s, tc)
		assert.True(t, errors.Is(err, context.Canceled), "%s: %v", m.Name(), err)
	}

	// Mini-batches: cancelled while the first batch is logged, the run
	// stops before the second.
	adj, err := minibatch.Matrix(cfg, ds.Graph)
	require.NoError(t, err)
	x, err := features.NewDense(ds.Features, ds.N(), ds.NumFeatures)
	require.NoError(t, err)
	mc := minibatch.DefaultConfig(cfg)
	mc.Train.Epochs, mc.Sampler.BatchSize, mc.BatchLogEvery = 3, 16, 1
	ctx, cancel = context.WithCancel(context.Background())
	mc.BatchLog = writerFunc(func(p []byte) (int, error) { cancel(); return len(p), nil })
	_, err = minibatch.Fit(ctx, &minibatch.Task{Adj: adj, Features: x, Labels: ds.Labels, Train: ds.Split.Train, Val: ds.Split.Val, Classes: 2}, mc)
	assert.True(t, errors.Is(err, context.Canceled), "%v", err)
	assert.ErrorContains(t, err, "before batch 2 of")
}

type writerFunc func(p []byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }
