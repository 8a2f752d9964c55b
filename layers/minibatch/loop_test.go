package minibatch

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/fairmp/fairmp/internal/testutil"
	"github.com/fairmp/fairmp/layers"
	"github.com/fairmp/fairmp/layers/train"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gorgonia.org/tensor"
)

// TestLoopGoldenHistory pins Fit's per-epoch history, stopping and
// selection, bit for bit, to the numbers of main at f914321 (before the
// one training loop): sampled GCN batches with dropout, early stopping
// after SelectAfter, and ErrStop with SelectLast. The numbers are amd64's
// (another architecture may fuse multiply-adds).
func TestLoopGoldenHistory(t *testing.T) {
	testutil.SkipUnlessGoldenKernels(t)
	ds := smallData(t, 300)
	var got strings.Builder
	for _, dt := range []tensor.Dtype{tensor.Float64, tensor.Float32} {
		for _, name := range []string{"patience", "last-errstop"} {
			cfg := layers.DefaultGCNConfig(ds.NumFeatures, 2)
			cfg.Hidden, cfg.Dtype = 16, dt
			mc := DefaultConfig(cfg)
			mc.Train.Epochs, mc.Train.Adam.LR = 40, 0.01
			mc.Sampler.BatchSize, mc.Sampler.Fanouts = 64, []int{3, 2}
			switch name {
			case "patience":
				mc.Train.Patience, mc.Train.SelectAfter = 4, 2
			case "last-errstop":
				mc.Train.Select, mc.Train.Patience = train.SelectLast, 6
				mc.Train.OnEpoch = func(st train.EpochStats) error {
					if st.Epoch == 5 {
						return train.ErrStop
					}
					return nil
				}
			}
			res, err := Fit(context.Background(), task(t, ds, cfg), mc)
			require.NoError(t, err)
			fmt.Fprintf(&got, "== %v %s\nepochs %d best %d last %d stopped %v params %016x best-params %016x last-params %016x\n",
				dt, name, res.Epochs, res.Best.Epoch, res.Last.Epoch, res.Stopped,
				testutil.BitsHash(res.Params), testutil.BitsHash(res.BestParams), testutil.BitsHash(res.LastParams))
			for _, st := range res.History {
				got.WriteString(testutil.EpochLine(st.Epoch, st.Best, st.Loss, st.CE, st.Extra, st.TrainAcc, st.ValAcc, st.ValLoss, st.ValDP))
			}
		}
	}
	assert.Equal(t, goldenFit, got.String())
}

// TestFitSelectsByTheCriterion: mini-batch training runs the training
// loop's criteria: by validation loss it keeps the epoch of the lowest
// validation loss, and by AUC it refuses validation nodes of one class.
func TestFitSelectsByTheCriterion(t *testing.T) {
	ds := smallData(t, 300)
	cfg := layers.DefaultGCNConfig(ds.NumFeatures, 2)
	cfg.Hidden = 16
	mc := DefaultConfig(cfg)
	mc.Train.Epochs, mc.Train.Adam.LR, mc.Train.Select = 12, 0.01, train.SelectValLoss
	mc.Sampler.BatchSize, mc.Sampler.Fanouts = 64, []int{3, 2}
	res, err := Fit(context.Background(), task(t, ds, cfg), mc)
	require.NoError(t, err)
	for _, st := range res.History {
		assert.GreaterOrEqual(t, st.ValLoss, res.Best.ValLoss, "epoch %d", st.Epoch)
		assert.Zero(t, st.ValAUC, "epoch %d: computed only when the selection reads it", st.Epoch)
	}
	assert.Equal(t, res.BestParams, res.Params)

	tk := task(t, ds, cfg)
	var ones []int
	for _, i := range tk.Val {
		if tk.Labels[i] == 1 {
			ones = append(ones, i)
		}
	}
	tk.Val = ones
	mc.Train.Select = train.SelectValAUC
	_, err = Fit(context.Background(), tk, mc)
	assert.ErrorIs(t, err, train.ErrUndefinedSelection)
	assert.ErrorContains(t, err, "is of class 0")
}
