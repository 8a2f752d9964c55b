package train

import (
	"context"
	"testing"

	"github.com/fairmp/fairmp/internal/problem"
	"github.com/fairmp/fairmp/internal/testutil"
	"github.com/fairmp/fairmp/layers"
	"github.com/stretchr/testify/require"
	"gorgonia.org/tensor"
)

// TestGATTrains trains the two-layer model with every dropout on a
// small homophilous problem: the training loss must fall, validation
// accuracy must be well above chance, and two runs with the same seed
// must give bit-identical parameters.
func TestGATTrains(t *testing.T) {
	p := problem.New(t, 31, 160, 6, 2, 400, 0.85)
	train := func(dt tensor.Dtype) (layers.Model, *Result) {
		task := newTask(t, p, dt, layers.NewPhase())
		c := layers.DefaultGATConfig(p.D, p.C)
		c.Heads, c.Hidden, c.InputDropout, c.AttentionDropout, c.Dtype = 2, 8, 0.1, 0.2, dt
		m, err := layers.NewGAT(task.Graph, p.Graph, c, task.Phase)
		require.NoError(t, err)
		res, err := Fit(context.Background(), m, task, fastTrain(60))
		require.NoError(t, err)
		return m, res
	}
	for _, dt := range testutil.Dtypes {
		m, res := train(dt)
		if first, last := res.History[0].CE, res.Last.CE; !(last < 0.7*first) {
			t.Errorf("%v: training CE %.4f -> %.4f, want a clear fall", dt, first, last)
		}
		if res.Best.ValAcc < 0.8 {
			t.Errorf("%v: best validation accuracy %.3f, want >= 0.8", dt, res.Best.ValAcc)
		}
		m2, _ := train(dt)
		a, b := paramBits(m), paramBits(m2)
		for i := range a {
			if a[i] != b[i] {
				t.Fatalf("%v: parameter %d differs between two runs with one seed", dt, i)
			}
		}
	}
}
