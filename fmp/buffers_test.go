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
// (opkit.Buf) and without (opkit.KeepBuffersIn; the trainer's ops
// follow), and checks that the epochs' statistics, the parameters and
// the final logits agree bit for bit.
func TestKeptBuffersChangeNothing(t *testing.T) {
	d := smallSynthetic(t)
	for _, dt := range testutil.Dtypes {
		for _, mode := range []string{"EndToEnd", "ConstantDual", "InferenceOnly", "FitTwoStage"} {
			t.Run(fmt.Sprint(dt, "/", mode), func(t *testing.T) {
				fit := func(keep bool) ([]train.EpochStats, [][]float64) {
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
					_, err = m.Forward(x) // the forward ops, switched here; the trainer's follow
					require.NoError(t, err)
					opkit.KeepBuffersIn(g, keep)
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
					requireKeeping(t, g, keep)
					for i := range res.History {
						res.History[i].StepTime, res.History[i].EvalTime = 0, 0
					}
					out, err := m.Forward(x)
					require.NoError(t, err)
					opkit.FollowBuffers(g)
					vals := evalLogits(t, g, out)
					requireKeeping(t, g, keep)
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

// requireKeeping checks that every op of g that can keep buffers has the
// reuse switched as keep says, and that there are such ops.
func requireKeeping(t *testing.T, g *G.ExprGraph, keep bool) {
	t.Helper()
	ops := 0
	for _, n := range g.AllNodes() {
		if k, ok := n.Op().(opkit.Keeper); ok {
			ops++
			require.Equal(t, keep, k.KeepsBuffers(), "%v", n.Op())
		}
	}
	require.NotZero(t, ops)
}
