package train

import (
	"context"
	"errors"
	"testing"

	"github.com/fairmp/fairmp/layers"
	"github.com/stretchr/testify/require"

	"github.com/fairmp/fairmp/internal/opkit"
	"github.com/fairmp/fairmp/internal/problem"
	"github.com/fairmp/fairmp/internal/testutil"
	"gorgonia.org/tensor"
)

// TestTrainGradientsNotAccumulated is the regression test for gradients
// summed over epochs (the machine adds each run's gradient into the bound
// dual values): with a learning rate too small to move the parameters,
// the gradient after a second step equals the first step's (not twice
// it), and on a convex problem (logistic regression, no dropout) the
// training loss never rises by more than noise once it has fallen.
func TestTrainGradientsNotAccumulated(t *testing.T) {
	p := problem.New(t, 11, 300, 6, 2, 300, 0.5)
	task := newTask(t, p, tensor.Float64, nil)
	mc := layers.DefaultMLPConfig(p.D, p.C)
	mc.Layers, mc.Dropout = 1, 0
	m, err := layers.NewMLP(task.Graph, nil, mc, nil)
	require.NoError(t, err)
	frozen := fastTrain(2)
	frozen.Adam.LR, frozen.Adam.WeightDecay = 1e-300, 0
	ft, err := NewTrainer(m, task, frozen)
	require.NoError(t, err)
	grads := func() [][]float64 {
		var out [][]float64
		for _, q := range m.Learnables() {
			g, err := q.Grad()
			require.NoError(t, err)
			d, err := opkit.Dense(g)
			require.NoError(t, err)
			out = append(out, append([]float64(nil), d.Data().([]float64)...))
		}
		return out
	}
	if _, err := ft.Step(); err != nil {
		t.Fatal(err)
	}
	first := grads()
	if _, err := ft.Step(); err != nil {
		t.Fatal(err)
	}
	second := grads()
	ft.Close()
	nonzero := false
	for k := range first {
		testutil.AllClose(t, m.Learnables()[k].Name()+" gradient at step 2", second[k], first[k], 1e-12, 1e-9)
		for _, v := range first[k] {
			nonzero = nonzero || v != 0
		}
	}
	if !nonzero {
		t.Fatal("every gradient is zero after a step")
	}
	cfg := fastTrain(300)
	cfg.Adam.WeightDecay = 0
	tr, err := NewTrainer(m, task, cfg)
	require.NoError(t, err)
	defer tr.Close()
	var ce []float64
	for e := 0; e < 300; e++ {
		st, err := tr.Step()
		require.NoError(t, err)
		ce = append(ce, st.CE)
	}
	for e := 150; e < 300; e++ {
		if ce[e] > ce[e-1]+1e-6 {
			t.Errorf("convex training loss rose from %.6f to %.6f at epoch %d", ce[e-1], ce[e], e+1)
			break
		}
	}
	if !(ce[299] < 0.6*ce[0]) {
		t.Errorf("loss %.4f → %.4f, want a clear fall", ce[0], ce[299])
	}
}

func TestTrainAfterStepAndSelectAfter(t *testing.T) {
	p := problem.New(t, 5, 80, 4, 2, 100, 0.5)
	cfg := fastTrain(30)
	var seen []int
	cfg.AfterStep = func(e int) error { seen = append(seen, e); return nil }
	cfg.SelectAfter = 20
	_, _, res := trainMLP(t, p, tensor.Float64, 1, cfg)
	if len(seen) != 30 || seen[0] != 1 || seen[29] != 30 {
		t.Errorf("AfterStep saw epochs %v, want 1..30", seen)
	}
	if res.Best.Epoch <= 20 {
		t.Errorf("best epoch %d, want > SelectAfter = 20", res.Best.Epoch)
	}
	for _, h := range res.History[:20] {
		if h.Best {
			t.Errorf("epoch %d marked best inside SelectAfter", h.Epoch)
		}
	}
	// Without SelectAfter the best epoch of this run is earlier (else the
	// test above proves nothing).
	cfg.SelectAfter = 0
	cfg.AfterStep = nil
	_, _, res0 := trainMLP(t, p, tensor.Float64, 1, cfg)
	if res0.Best.Epoch > 20 {
		t.Logf("note: plain best epoch %d", res0.Best.Epoch)
	}
	boom := errors.New("boom")
	cfg.AfterStep = func(e int) error {
		if e == 3 {
			return boom
		}
		return nil
	}
	task := newTask(t, p, tensor.Float64, nil)
	m, _ := layers.NewMLP(task.Graph, nil, layers.DefaultMLPConfig(p.D, p.C), nil)
	if _, err := Fit(context.Background(), m, task, cfg); !errors.Is(err, boom) {
		t.Errorf("AfterStep error: got %v", err)
	}
	cfg.SelectAfter = 30
	if err := cfg.Validate(); err == nil {
		t.Errorf("SelectAfter = Epochs validated")
	}
}
