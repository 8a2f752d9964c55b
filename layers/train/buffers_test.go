package train

import (
	"context"
	"math"
	"testing"

	"github.com/stretchr/testify/require"
	"gorgonia.org/tensor"

	"github.com/fairmp/fairmp/internal/opkit"
	"github.com/fairmp/fairmp/internal/problem"
	"github.com/fairmp/fairmp/layers"
)

// TestKeptBuffersChangeNothing trains every kind (dropout on, as the
// defaults have it) with the ops' outputs kept between runs (opkit.Buf)
// and with fresh outputs every run (opkit.KeepBuffersIn), and checks
// that every epoch's statistics, the final parameters and Predict's
// probabilities agree bit for bit: the training and evaluation tapes share the forward ops and
// their buffers, and nothing may leak from one run into another.
func TestKeptBuffersChangeNothing(t *testing.T) {
	p := problem.New(t, 3, 120, 6, 2, 400, 0.8)
	for _, kind := range layers.Kinds() {
		if kind.Wraps() {
			continue
		}
		for _, dt := range []tensor.Dtype{tensor.Float32, tensor.Float64} {
			t.Run(kind.Name()+"/"+dt.String(), func(t *testing.T) {
				fit := func(keep bool) ([]EpochStats, [][]float64, []float64) {
					phase := layers.NewPhase()
					task := newTask(t, p, dt, phase)
					cfg, err := kind.Configure(p.D, p.C, layers.Options{Dtype: dt, Seed: 5})
					require.NoError(t, err)
					m, err := kind.Build(task.Graph, p.Graph, cfg, phase)
					require.NoError(t, err)
					_, err = m.Forward(task.X) // the forward ops, switched here; the trainer's follow
					require.NoError(t, err)
					opkit.KeepBuffersIn(task.Graph, keep)
					// switched checks that every op that can keep buffers
					// (the trainer's too) is switched as keep says.
					switched := func() {
						ops := 0
						for _, n := range task.Graph.AllNodes() {
							if k, ok := n.Op().(opkit.Keeper); ok {
								ops++
								require.Equal(t, keep, k.KeepsBuffers(), "%v", n.Op())
							}
						}
						require.NotZero(t, ops)
					}
					tc := DefaultConfig()
					tc.Epochs = 6
					res, err := Fit(context.Background(), m, task, tc)
					require.NoError(t, err)
					switched()
					pr, err := Predict(m, task, nil)
					require.NoError(t, err)
					probs := append([]float64(nil), pr.Probs...)
					switched()
					for i := range res.History {
						res.History[i].StepTime, res.History[i].EvalTime = 0, 0
					}
					return res.History, paramValues(m), probs
				}
				h0, p0, q0 := fit(false)
				h1, p1, q1 := fit(true)
				require.Equal(t, h0, h1)
				require.Equal(t, p0, p1)
				for i := range q0 {
					require.Equal(t, math.Float64bits(q0[i]), math.Float64bits(q1[i]), "probability %d", i)
				}
			})
		}
	}
}
