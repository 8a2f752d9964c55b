package fmp

import (
	"context"
	"fmt"
	"math/rand"
	"testing"

	"github.com/stretchr/testify/require"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/fairmp/fairmp/graph/datasets"
	"github.com/fairmp/fairmp/internal/testutil"
	"github.com/fairmp/fairmp/layers"
	"github.com/fairmp/fairmp/layers/train"
)

// TestSoftmaxCacheChangesNothing trains FMP end to end and with a
// constant dual, and applies a layer to fixed logits, with the softmax
// caches on and off: every epoch, parameter and output is the same, bit
// for bit.
func TestSoftmaxCacheChangesNothing(t *testing.T) {
	c := datasets.DefaultSyntheticConfig()
	c.N, c.MeanDegree = 300, 6
	d, err := datasets.Synthetic(c)
	require.NoError(t, err)
	for _, dt := range []tensor.Dtype{tensor.Float32, tensor.Float64} {
		for _, mode := range []TrainMode{EndToEnd, ConstantDual} {
			t.Run(fmt.Sprint(dt, "/", mode), func(t *testing.T) {
				fit := func(cache bool) ([]train.EpochStats, [][]float64, []float64) {
					g := G.NewGraph()
					x, err := train.FeatureNode(g, dt, d.Features, d.N(), d.NumFeatures, "X")
					require.NoError(t, err)
					phase := layers.NewPhase()
					cfg := DefaultModelConfig(d.NumFeatures, 2)
					cfg.MLP.Dtype, cfg.FMP.TrainMode, cfg.FMP.K = dt, mode, 3
					m, err := NewModel(g, d.Graph, d.Sens, cfg, phase)
					require.NoError(t, err)
					m.layer.noSoftmaxCache = !cache
					task := &train.Task{Graph: g, X: x, Labels: d.Labels, Train: d.Split.Train, Val: d.Split.Val, Classes: 2, Phase: phase}
					tc := train.DefaultConfig()
					tc.Epochs, tc.Adam.LR = 4, 0.01
					res, err := train.Fit(context.Background(), m, task, tc)
					require.NoError(t, err)
					for i := range res.History {
						res.History[i].StepTime, res.History[i].EvalTime = 0, 0
					}
					var params [][]float64
					for _, p := range m.Learnables() {
						params = append(params, testutil.ToF64(p.Value()))
					}
					rng := rand.New(rand.NewSource(2))
					z := testutil.RandSlice(rng, d.N()*2, -3, 3)
					out, err := m.Layer().Apply(testutil.Tensor(dt, z, d.N(), 2))
					require.NoError(t, err)
					return res.History, params, testutil.ToF64(out.Data())
				}
				h0, p0, o0 := fit(false)
				h1, p1, o1 := fit(true)
				require.Equal(t, h0, h1)
				require.Equal(t, p0, p1)
				require.Equal(t, o0, o1)
			})
		}
	}
}
