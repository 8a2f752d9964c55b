package fairtrain

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/fairmp/fairmp/internal/testutil"
	"github.com/fairmp/fairmp/layers/fairness"
	"github.com/fairmp/fairmp/layers/train"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gorgonia.org/tensor"
)

// TestFairVGNNLoopGoldenHistory pins FairVGNN's per-epoch history,
// stopping and selection, bit for bit, to the numbers of main at f914321
// (before the one training loop): early stopping after SelectAfter with
// the progress lines, and ErrStop with SelectLast. The numbers are
// amd64's (another architecture may fuse multiply-adds).
func TestFairVGNNLoopGoldenHistory(t *testing.T) {
	testutil.SkipUnlessGoldenKernels(t)
	ds := biased(t, 80)
	var got strings.Builder
	for _, dt := range []tensor.Dtype{tensor.Float64, tensor.Float32} {
		for _, name := range []string{"patience", "last-errstop"} {
			s, cfg := setupFor(t, ds, "gcn", dt, 3, false)
			s.Task.Sens = ds.Sens
			tc := train.DefaultConfig()
			tc.Epochs, tc.Adam.LR = 25, 0.01
			var log bytes.Buffer
			switch name {
			case "patience":
				tc.Patience, tc.SelectAfter, tc.LogEvery, tc.Log = 5, 1, 4, &log
			case "last-errstop":
				tc.Select, tc.Patience = train.SelectLast, 8
				tc.OnEpoch = func(st train.EpochStats) error {
					if st.Epoch == 4 {
						return train.ErrStop
					}
					return nil
				}
			}
			fit, err := fairness.Fit(context.Background(), quickVGNN(), cfg, s, tc)
			require.NoError(t, err)
			res := fit.Result
			var model []*tensor.Dense
			for _, p := range fit.Model.Learnables() {
				model = append(model, p.Value().(*tensor.Dense))
			}
			fmt.Fprintf(&got, "== %v %s\nepochs %d best %d last %d stopped %v selected %v best-params %016x last-params %016x model %016x\n",
				dt, name, res.Epochs, res.Best.Epoch, res.Last.Epoch, res.Stopped, res.Selected,
				testutil.BitsHash(res.BestParams), testutil.BitsHash(res.LastParams), testutil.BitsHash(model))
			for _, st := range res.History {
				got.WriteString(testutil.EpochLine(st.Epoch, st.Best, st.Loss, st.CE, st.Extra, st.TrainAcc, st.ValAcc, st.ValLoss, st.ValDP))
			}
			got.WriteString(log.String())
		}
	}
	assert.Equal(t, goldenFairVGNN, got.String())
}

// TestFairVGNNCustomCriterion: FairVGNN runs the training loop's
// criteria, a caller's own among them: the epoch of the lowest
// validation ΔDP is kept.
func TestFairVGNNCustomCriterion(t *testing.T) {
	ds := biased(t, 80)
	s, cfg := setupFor(t, ds, "gcn", tensor.Float64, 3, false)
	s.Task.Sens = ds.Sens
	tc := train.DefaultConfig()
	tc.Epochs, tc.Adam.LR = 6, 0.01
	tc.Select, tc.Criterion = train.SelectCustom, func(st train.EpochStats) float64 { return -st.ValDP }
	fit, err := fairness.Fit(context.Background(), quickVGNN(), cfg, s, tc)
	require.NoError(t, err)
	res := fit.Result
	for _, st := range res.History {
		assert.GreaterOrEqual(t, st.ValDP, res.Best.ValDP, "epoch %d", st.Epoch)
	}
	for i, p := range fit.Model.Learnables() {
		assert.Equal(t, res.BestParams[i].Data(), p.Value().Data(), "parameter %d: the best epoch's", i)
	}
}
