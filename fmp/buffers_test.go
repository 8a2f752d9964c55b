package fmp_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
	G "gorgonia.org/gorgonia"

	"github.com/fairmp/fairmp/fmp"
	"github.com/fairmp/fairmp/internal/opkit"
	"github.com/fairmp/fairmp/internal/testutil"
	"github.com/fairmp/fairmp/layers"
	"github.com/fairmp/fairmp/layers/train"
)

// TestKeptBuffersChangeNothing trains FMP models in every training mode
// and with FitTwoStage, with the ops' outputs kept between runs
// (opkit.Buf) and without, and checks that the epochs' statistics, the
// parameters and the final logits agree bit for bit.
func TestKeptBuffersChangeNothing(t *testing.T) {
	d := smallSynthetic(t)
	for _, dt := range testutil.Dtypes {
		for _, mode := range []string{"EndToEnd", "ConstantDual", "InferenceOnly", "FitTwoStage"} {
			t.Run(fmt.Sprint(dt, "/", mode), func(t *testing.T) {
				fit := func(keep bool) ([]train.EpochStats, [][]float64) {
					defer opkit.KeepBuffers(opkit.KeepBuffers(keep))
					g := G.NewGraph()
					x, err := train.FeatureNode(g, dt, d.Features, d.N(), d.NumFeatures, "X")
					require.NoError(t, err)
					phase := layers.NewPhase()
					cfg := fmp.DefaultModelConfig(d.NumFeatures, 2)
					cfg.MLP.Dtype = dt
					switch mode {
					case "EndToEnd":
						cfg.FMP.TrainMode = fmp.EndToEnd
					case "ConstantDual":
						cfg.FMP.TrainMode = fmp.ConstantDual
					}
					m, err := fmp.NewModel(g, d.Graph, d.Sens, cfg, phase)
					require.NoError(t, err)
					task := &train.Task{Graph: g, X: x, Labels: d.Labels, Train: d.Split.Train, Val: d.Split.Val, Classes: 2, Phase: phase}
					tc := train.DefaultConfig()
					tc.Epochs, tc.Adam.LR = 5, 0.01
					var res *train.Result
					if mode == "FitTwoStage" {
						res, err = m.FitTwoStage(context.Background(), task, tc)
					} else {
						res, err = train.Fit(context.Background(), m, task, tc)
					}
					require.NoError(t, err)
					for i := range res.History {
						res.History[i].StepTime, res.History[i].EvalTime = 0, 0
					}
					out, err := m.Forward(x)
					require.NoError(t, err)
					vals := evalLogits(t, g, out)
					for _, p := range m.Learnables() {
						vals = append(vals, testutil.ToF64(p.Value()))
					}
					return res.History, vals
				}
				h0, v0 := fit(false)
				h1, v1 := fit(true)
				require.Equal(t, h0, h1)
				require.Equal(t, v0, v1)
			})
		}
	}
}
