package exp

import (
	"context"
	"testing"

	"github.com/fairmp/fairmp/graph/datasets"
	"github.com/fairmp/fairmp/layers"
	"github.com/fairmp/fairmp/layers/train"
	"github.com/stretchr/testify/require"
	"gorgonia.org/tensor"
)

func tiny(t *testing.T) *datasets.Dataset {
	t.Helper()
	c := datasets.DefaultSyntheticConfig()
	c.N, c.MeanDegree = 150, 6
	ds, err := datasets.Synthetic(c)
	require.NoError(t, err)
	return ds
}

// Run with last-epoch selection skips Train's evaluation passes; the
// trained parameters, hence the predictions, must be bit-identical to
// train.Fit with SelectLast, for every model (dropout included).
func TestRunLastMatchesTrain(t *testing.T) {
	ds := tiny(t)
	o := DefaultTrainOptions()
	o.Epochs, o.Select = 7, train.SelectLast
	for _, name := range Models {
		t.Run(name, func(t *testing.T) {
			s := DefaultSpec(name)
			s.Seed = 3
			p1, err := NewProblem(ds, tensor.Float64)
			require.NoError(t, err)
			got, err := Run(p1, s, o)
			require.NoError(t, err)
			p2, _ := NewProblem(ds, tensor.Float64)
			m, err := Build(p2, s)
			require.NoError(t, err)
			tc := train.DefaultConfig()
			tc.Epochs, tc.Select, tc.Adam = o.Epochs, o.Select, o.Adam
			if _, err := train.Fit(context.Background(), m, p2.Task, tc); err != nil {
				t.Fatal(err)
			}
			a, err := train.Predict(got.Model, p1.Task, nil)
			require.NoError(t, err)
			b, err := train.Predict(m, p2.Task, nil)
			require.NoError(t, err)
			for i := range a.Probs {
				if a.Probs[i] != b.Probs[i] {
					t.Fatalf("prob %d: Run %v, train.Fit %v", i, a.Probs[i], b.Probs[i])
				}
			}
			if got.Result.Epochs != 7 {
				t.Errorf("Result.Epochs = %d, want 7", got.Result.Epochs)
			}
		})
	}
}

func TestParseModels(t *testing.T) {
	got, err := ParseModels(" MLP, fmp ,gcn")
	if err != nil || len(got) != 3 || got[0] != "mlp" || got[1] != "fmp" || got[2] != "gcn" {
		t.Fatalf("ParseModels = %v, %v", got, err)
	}
	for _, bad := range []string{"", "mlp,xx", "gcn,gcn", ","} {
		if _, err := ParseModels(bad); err == nil {
			t.Errorf("ParseModels(%q) accepted", bad)
		}
	}
}

// With best-validation selection, FMP in InferenceOnly mode runs the
// two-stage workflow: the trained backbone is exactly the λf = 0 model's
// (same parameters, selected on propagation-only accuracy), and the
// evaluated model applies the default FMP on top of it.
func TestRunFMPTwoStage(t *testing.T) {
	ds := tiny(t)
	o := DefaultTrainOptions()
	o.Epochs = 30
	s := DefaultSpec("fmp")
	p1, _ := NewProblem(ds, tensor.Float64)
	got, err := Run(p1, s, o)
	require.NoError(t, err)
	zero := s
	zero.FMP.LambdaF = 0
	p2, _ := NewProblem(ds, tensor.Float64)
	base, err := Run(p2, zero, o)
	require.NoError(t, err)
	if got.Result.Best.Epoch != base.Result.Best.Epoch {
		t.Errorf("selected epoch %d, want the λf = 0 run's %d", got.Result.Best.Epoch, base.Result.Best.Epoch)
	}
	pa, pb := got.Model.Learnables(), base.Model.Learnables()
	for k := range pa {
		a, b := pa[k].Value().Data().([]float64), pb[k].Value().Data().([]float64)
		for i := range a {
			if a[i] != b[i] {
				t.Fatalf("parameter %q[%d] = %v, want the λf = 0 run's %v", pa[k].Name(), i, a[i], b[i])
			}
		}
	}
	// FMP shrinks the gap between the groups' mean P(y=1) over all nodes
	// (what its fairness term controls; the tiny test split is too small to
	// judge thresholded ΔDP).
	gap := func(m layers.Model, p *Problem) float64 {
		pred, err := train.Predict(m, p.Task, nil)
		require.NoError(t, err)
		var sum, cnt [2]float64
		for i, g := range ds.Sens {
			if g >= 0 {
				sum[g] += pred.Probs[2*i+1]
				cnt[g]++
			}
		}
		d := sum[1]/cnt[1] - sum[0]/cnt[0]
		if d < 0 {
			d = -d
		}
		return d
	}
	if gf, gb := gap(got.Model, p1), gap(base.Model, p2); !(gf < gb) {
		t.Errorf("group gap in mean P(y=1) %.4f with FMP, want below the backbone's %.4f", gf, gb)
	}
}
