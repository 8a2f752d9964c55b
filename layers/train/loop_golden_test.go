package train

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/fairmp/fairmp/internal/problem"
	"github.com/fairmp/fairmp/internal/testutil"
	"github.com/fairmp/fairmp/layers"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gorgonia.org/tensor"
)

// historyDigest writes a run's history exactly: every epoch's numbers
// (not the times), the best and last epochs, whether it stopped, and
// hashes of the kept parameter sets and of the model's.
func historyDigest(res *Result, model layers.Model) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "epochs %d best %d last %d stopped %v selected %v best-params %016x last-params %016x model %016x\n",
		res.Epochs, res.Best.Epoch, res.Last.Epoch, res.Stopped, res.Selected,
		testutil.BitsHash(res.BestParams), testutil.BitsHash(res.LastParams), testutil.BitsHash(modelParams(model)))
	for _, st := range res.History {
		sb.WriteString(testutil.EpochLine(st.Epoch, st.Best, st.Loss, st.CE, st.Extra, st.TrainAcc, st.ValAcc, st.ValLoss, st.ValDP))
	}
	return sb.String()
}

func modelParams(m layers.Model) []*tensor.Dense {
	var out []*tensor.Dense
	for _, p := range m.Learnables() {
		out = append(out, p.Value().(*tensor.Dense))
	}
	return out
}

// TestLoopGoldenHistory pins Fit's per-epoch history, stopping and
// selection, bit for bit, to the numbers of main at f914321 (before the
// one training loop): early stopping after SelectAfter with the progress
// lines, ErrStop with SelectLast, and a task without validation nodes.
// The numbers are amd64's (another architecture may fuse multiply-adds).
func TestLoopGoldenHistory(t *testing.T) {
	testutil.SkipUnlessGoldenKernels(t)
	p := problem.New(t, 3, 200, 8, 2, 400, 0.8)
	sens := make([]int, p.N)
	for i := range sens {
		sens[i] = (i * 7 / 3) % 2
	}
	var got strings.Builder
	for _, dt := range []tensor.Dtype{tensor.Float64, tensor.Float32} {
		for _, name := range []string{"patience", "last-errstop", "no-val"} {
			task := newTask(t, p, dt, layers.NewPhase())
			task.Sens = sens
			mc := layers.DefaultMLPConfig(p.D, p.C)
			mc.Hidden, mc.Dtype, mc.Seed, mc.InputDropout = 16, dt, 4, 0.1
			m, err := layers.NewMLP(task.Graph, nil, mc, task.Phase)
			require.NoError(t, err)
			cfg := fastTrain(80)
			var log bytes.Buffer
			switch name {
			case "patience":
				cfg.Patience, cfg.SelectAfter, cfg.LogEvery, cfg.Log = 6, 4, 9, &log
			case "last-errstop":
				cfg.Select, cfg.Patience = SelectLast, 5
				cfg.OnEpoch = func(st EpochStats) error {
					if st.Epoch == 10 {
						return ErrStop
					}
					return nil
				}
			case "no-val":
				task.Val, cfg.Epochs, cfg.SelectAfter, cfg.Patience = nil, 8, 3, 2
			}
			res, err := Fit(context.Background(), m, task, cfg)
			require.NoError(t, err)
			fmt.Fprintf(&got, "== %v %s\n%s%s", dt, name, historyDigest(res, m), log.String())
		}
	}
	assert.Equal(t, goldenFit, got.String())
}
