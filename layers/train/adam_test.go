package train

import (
	"math"
	"testing"

	"github.com/fairmp/fairmp/internal/testutil"
	"github.com/stretchr/testify/require"
	G "gorgonia.org/gorgonia"
)

// TestAdamSteps checks two Adam steps against values derived by hand from
// PyTorch's update rule: with g₁ = ∇₁ + λw₀ the first step is
// w₁ = w₀ − lr·g₁/(|g₁| + ε) (bias correction cancels); the second uses
// m = (β₁(1−β₁)g₁ + (1−β₁)g₂)/(1−β₁²), v likewise.
func TestAdamSteps(t *testing.T) {
	w0 := []float64{1, -2, 0.5}
	g1 := []float64{0.3, -0.1, 2}
	g2 := []float64{-0.2, 0.4, 1}
	lr, wd, b1, b2, eps := 0.1, 0.01, 0.9, 0.999, 1e-8
	for _, dt := range testutil.Dtypes {
		g := G.NewGraph()
		w := G.NewMatrix(g, dt, G.WithShape(1, 3), G.WithName("w"), G.WithValue(testutil.Tensor(dt, w0, 1, 3)))
		a, err := NewAdam(AdamConfig{LR: lr, Beta1: b1, Beta2: b2, Eps: eps, WeightDecay: wd}, G.Nodes{w})
		require.NoError(t, err)
		if err := a.StepWith([]G.Value{testutil.Tensor(dt, g1, 1, 3)}); err != nil {
			t.Fatal(err)
		}
		w1 := make([]float64, 3)
		gg1 := make([]float64, 3)
		for i := range w0 {
			gg1[i] = g1[i] + wd*w0[i]
			w1[i] = w0[i] - lr*gg1[i]/(math.Abs(gg1[i])+eps)
		}
		atol, rtol := testutil.Tol(dt)
		testutil.AllClose(t, "step 1", testutil.ToF64(w.Value()), w1, atol, rtol)
		if err := a.StepWith([]G.Value{testutil.Tensor(dt, g2, 1, 3)}); err != nil {
			t.Fatal(err)
		}
		want := make([]float64, 3)
		for i := range w0 {
			gg2 := g2[i] + wd*w1[i]
			m := (b1*(1-b1)*gg1[i] + (1-b1)*gg2) / (1 - b1*b1)
			v := (b2*(1-b2)*gg1[i]*gg1[i] + (1-b2)*gg2*gg2) / (1 - b2*b2)
			want[i] = w1[i] - lr*m/(math.Sqrt(v)+eps)
		}
		testutil.AllClose(t, "step 2", testutil.ToF64(w.Value()), want, 10*atol, 10*rtol)
		if a.Steps() != 2 {
			t.Errorf("Steps() = %d, want 2", a.Steps())
		}
		if err := a.StepWith([]G.Value{testutil.Tensor(dt, g2[:2], 1, 2)}); err == nil {
			t.Error("a gradient of the wrong size was accepted")
		}
	}
	if _, err := NewAdam(AdamConfig{LR: 1, Beta1: 0.9, Beta2: 0.999, Eps: 0}, nil); err == nil {
		t.Error("Eps = 0 accepted")
	}
}
