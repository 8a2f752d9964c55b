package layers

import (
	"math"
	"math/rand"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/fairmp/fairmp/internal/testutil"
	"github.com/stretchr/testify/require"
)

// dropoutRun builds sum(w ⊙ Dropout(x)) and returns, for each of runs
// runs of one machine, the forward output and the gradient w.r.t. x.
func dropoutRun(t *testing.T, dt tensor.Dtype, xv, wv []float64, rows, cols int, p float64, seed int64, phase *Phase, runs int) (outs, grads [][]float64) {
	t.Helper()
	g := G.NewGraph()
	x := G.NewMatrix(g, dt, G.WithShape(rows, cols), G.WithName("x"), G.WithValue(testutil.Tensor(dt, xv, rows, cols)))
	w := G.NewMatrix(g, dt, G.WithShape(rows, cols), G.WithName("w"), G.WithValue(testutil.Tensor(dt, wv, rows, cols)))
	y, err := Dropout(x, p, seed, phase)
	require.NoError(t, err)
	var yv, gv G.Value
	G.Read(y, &yv)
	cost := G.Must(G.Sum(G.Must(G.HadamardProd(y, w))))
	gr, err := G.Grad(cost, x)
	require.NoError(t, err)
	G.Read(gr[0], &gv)
	m := G.NewTapeMachine(g)
	defer m.Close()
	for r := 0; r < runs; r++ {
		if err := m.RunAll(); err != nil {
			t.Fatal(err)
		}
		outs = append(outs, testutil.ToF64(yv))
		grads = append(grads, testutil.ToF64(gv))
		m.Reset()
	}
	return outs, grads
}

func TestDropoutTraining(t *testing.T) {
	rng := rand.New(rand.NewSource(2))
	rows, cols := 100, 40
	xv := testutil.RandSlice(rng, rows*cols, 0.5, 1.5) // no zeros: the mask is visible
	wv := testutil.RandSlice(rng, rows*cols, -1, 1)
	for _, dt := range testutil.Dtypes {
		for _, p := range []float64{0.2, 0.5, 0.8} {
			phase := NewPhase()
			phase.SetTraining(true)
			outs, grads := dropoutRun(t, dt, xv, wv, rows, cols, p, 7, phase, 3)
			atol, rtol := testutil.Tol(dt)
			for r := range outs {
				kept := 0
				for i, o := range outs[r] {
					switch {
					case o == 0:
						if grads[r][i] != 0 {
							t.Fatalf("%v p=%v run %d: dropped element %d has gradient %v", dt, p, r, i, grads[r][i])
						}
					default:
						kept++
						if !testutil.Close(o, xv[i]/(1-p), atol, rtol) {
							t.Fatalf("%v p=%v: kept element %d = %v, want x/(1-p) = %v", dt, p, i, o, xv[i]/(1-p))
						}
						if !testutil.Close(grads[r][i], wv[i]/(1-p), atol, rtol) {
							t.Fatalf("%v p=%v: gradient %d = %v, want w/(1-p) = %v", dt, p, i, grads[r][i], wv[i]/(1-p))
						}
					}
				}
				frac := float64(kept) / float64(rows*cols)
				// 4000 Bernoulli draws: the standard error is below 0.008.
				if math.Abs(frac-(1-p)) > 0.04 {
					t.Errorf("%v p=%v: kept fraction %.3f, want about %.2f", dt, p, frac, 1-p)
				}
			}
			if equalSlices(outs[0], outs[1]) {
				t.Errorf("%v p=%v: two training runs drew the same mask", dt, p)
			}
		}
	}
}

func equalSlices(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestDropoutSeeded(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	xv := testutil.RandSlice(rng, 300, 0.5, 1.5)
	wv := testutil.RandSlice(rng, 300, -1, 1)
	phase := NewPhase()
	phase.SetTraining(true)
	a, _ := dropoutRun(t, tensor.Float64, xv, wv, 30, 10, 0.5, 11, phase, 2)
	b, _ := dropoutRun(t, tensor.Float64, xv, wv, 30, 10, 0.5, 11, phase, 2)
	c, _ := dropoutRun(t, tensor.Float64, xv, wv, 30, 10, 0.5, 12, phase, 1)
	for r := range a {
		if !equalSlices(a[r], b[r]) {
			t.Errorf("run %d: same seed gave different masks", r)
		}
	}
	if equalSlices(a[0], c[0]) {
		t.Error("seeds 11 and 12 gave the same mask")
	}
}

func TestDropoutEval(t *testing.T) {
	rng := rand.New(rand.NewSource(4))
	xv := testutil.RandSlice(rng, 60, -1, 1)
	wv := testutil.RandSlice(rng, 60, -1, 1)
	for _, dt := range testutil.Dtypes {
		for name, phase := range map[string]*Phase{"nil": nil, "eval": NewPhase()} {
			outs, grads := dropoutRun(t, dt, xv, wv, 6, 10, 0.5, 1, phase, 1)
			atol, rtol := testutil.Tol(dt)
			testutil.AllClose(t, name+" out", outs[0], xv, atol, rtol)
			testutil.AllClose(t, name+" grad", grads[0], wv, atol, rtol)
		}
	}
}

// TestDropoutHashIncludesP is the regression test for gorgonia's Dropout,
// whose hash ignores p: two dropouts of one node must stay two nodes.
func TestDropoutHashIncludesP(t *testing.T) {
	g := G.NewGraph()
	x := G.NewMatrix(g, tensor.Float64, G.WithShape(4, 4), G.WithName("x"), G.WithInit(G.Zeroes()))
	phase := NewPhase()
	a, _ := Dropout(x, 0.3, 1, phase)
	b, _ := Dropout(x, 0.6, 1, phase)
	c, _ := Dropout(x, 0.3, 2, phase)
	d, _ := Dropout(x, 0.3, 1, phase)
	if a == b || a == c {
		t.Error("dropouts with different p or seed were merged into one node")
	}
	if a != d {
		t.Error("identical dropouts (same p, seed, phase) were not merged")
	}
	if y, _ := Dropout(x, 0, 1, phase); y != x {
		t.Error("p = 0 did not return the input node")
	}
}

func TestDropoutErrors(t *testing.T) {
	g := G.NewGraph()
	x := G.NewMatrix(g, tensor.Float64, G.WithShape(2, 2), G.WithName("x"))
	for _, p := range []float64{-0.1, 1, 1.5, math.NaN()} {
		if _, err := Dropout(x, p, 1, nil); err == nil {
			t.Errorf("Dropout accepted p = %v", p)
		}
	}
	if _, err := Dropout(nil, 0.5, 1, nil); err == nil {
		t.Error("Dropout accepted a nil node")
	}
	ints := G.NewMatrix(g, tensor.Int, G.WithShape(2, 2), G.WithName("ints"))
	if _, err := Dropout(ints, 0.5, 1, nil); err == nil {
		t.Error("Dropout accepted an int matrix")
	}
}
