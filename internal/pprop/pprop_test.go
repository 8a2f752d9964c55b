package pprop_test

import (
	"fmt"
	"math"
	"math/rand"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/fairmp/fairmp/graph"
	"github.com/fairmp/fairmp/internal/pprop"
	"github.com/fairmp/fairmp/internal/testutil"
	"github.com/fairmp/fairmp/layers"
)

func randomGraph(t *testing.T, rng *rand.Rand, n, m int) *graph.Graph {
	t.Helper()
	edges := make([][2]int, 0, m)
	for len(edges) < m {
		a, b := rng.Intn(n), rng.Intn(n)
		if a != b {
			edges = append(edges, [2]int{a, b})
		}
	}
	g, err := graph.FromEdges(n, edges)
	require.NoError(t, err)
	return g
}

func scalar(dt tensor.Dtype, v float64) *G.Node {
	if dt == tensor.Float32 {
		return G.NewConstant(float32(v))
	}
	return G.NewConstant(v)
}

// unfused builds the recurrence from separate nodes, as fmp.Layer built it
// before the op: γX once, then per step SpMM, (1−γ)·, +.
func unfused(a *graph.Matrix, x *G.Node, gamma float64, k int) (*G.Node, error) {
	dt := x.Dtype()
	gx, err := G.Mul(x, scalar(dt, gamma))
	if err != nil {
		return nil, err
	}
	f := x
	for s := 0; s < k; s++ {
		af, err := layers.SpMM(a, f)
		if err != nil {
			return nil, err
		}
		if af, err = G.Mul(af, scalar(dt, 1-gamma)); err != nil {
			return nil, err
		}
		if f, err = G.Add(gx, af); err != nil {
			return nil, err
		}
	}
	return f, nil
}

// run returns F_K and dX for the loss Σ W ⊙ F_K.
func run(t *testing.T, build func(*graph.Matrix, *G.Node, float64, int) (*G.Node, error), a *graph.Matrix, dt tensor.Dtype, xv, wv []float64, n, c int, gamma float64, k int) (out, grad []float64) {
	t.Helper()
	g := G.NewGraph()
	x := G.NewMatrix(g, dt, G.WithShape(n, c), G.WithName("x"), G.WithValue(testutil.Tensor(dt, xv, n, c)))
	w := G.NewMatrix(g, dt, G.WithShape(n, c), G.WithName("w"), G.WithValue(testutil.Tensor(dt, wv, n, c)))
	f, err := build(a, x, gamma, k)
	require.NoError(t, err)
	cost := G.Must(G.Sum(G.Must(G.HadamardProd(f, w))))
	_, err = G.Grad(cost, x)
	require.NoError(t, err)
	var fv G.Value
	G.Read(f, &fv)
	m := G.NewTapeMachine(g, G.BindDualValues(x))
	defer m.Close()
	// Twice: the second run reuses the op's buffers.
	for r := 0; r < 2; r++ {
		require.NoError(t, m.RunAll())
		out = testutil.ToF64(fv.Data())
		gr, err := x.Grad()
		require.NoError(t, err)
		grad = testutil.ToF64(gr.Data())
		m.Reset()
		if r == 0 {
			gr.(*tensor.Dense).Zero()
		}
	}
	return out, grad
}

// TestApplyBitIdentical checks the op against the separate nodes it
// replaces, forward values and gradient, bit for bit.
func TestApplyBitIdentical(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	const n, c = 300, 2
	a := graph.NormalizedAdjacency(randomGraph(t, rng, n, 900))
	for _, dt := range []tensor.Dtype{tensor.Float32, tensor.Float64} {
		for _, cols := range []int{c, 3} {
			for _, gamma := range []float64{0.5, 1.0 / 6, 0.1} {
				for _, k := range []int{1, 2, 3, 10} {
					t.Run(fmt.Sprintf("%v/c=%d/γ=%.3g/K=%d", dt, cols, gamma, k), func(t *testing.T) {
						xv := testutil.RandSlice(rng, n*cols, -3, 3)
						wv := testutil.RandSlice(rng, n*cols, -1, 1)
						wantF, wantG := run(t, unfused, a, dt, xv, wv, n, cols, gamma, k)
						gotF, gotG := run(t, pprop.Apply, a, dt, xv, wv, n, cols, gamma, k)
						for i := range wantF {
							require.Equal(t, math.Float64bits(wantF[i]), math.Float64bits(gotF[i]), "F[%d]: %v vs %v", i, gotF[i], wantF[i])
							require.Equal(t, math.Float64bits(wantG[i]), math.Float64bits(gotG[i]), "dX[%d]: %v vs %v", i, gotG[i], wantG[i])
						}
					})
				}
			}
		}
	}
}

// TestApplyNaive checks the op against the recurrence computed densely in
// float64, and its gradient by finite differences.
func TestApplyNaive(t *testing.T) {
	rng := rand.New(rand.NewSource(4))
	const n, c, k, gamma = 40, 2, 4, 0.3
	a := graph.NormalizedAdjacency(randomGraph(t, rng, n, 80))
	dense := a.Dense()
	xv := testutil.RandSlice(rng, n*c, -2, 2)
	wv := testutil.RandSlice(rng, n*c, -1, 1)
	naive := func(x []float64) []float64 {
		f := append([]float64(nil), x...)
		for s := 0; s < k; s++ {
			next := make([]float64, n*c)
			for i := 0; i < n; i++ {
				for j := 0; j < n; j++ {
					for q := 0; q < c; q++ {
						next[i*c+q] += dense[i*n+j] * f[j*c+q]
					}
				}
			}
			for i := range next {
				next[i] = gamma*x[i] + (1-gamma)*next[i]
			}
			f = next
		}
		return f
	}
	loss := func(x []float64) float64 {
		s := 0.0
		for i, v := range naive(x) {
			s += wv[i] * v
		}
		return s
	}
	for _, dt := range []tensor.Dtype{tensor.Float32, tensor.Float64} {
		atol, rtol := testutil.Tol(dt)
		f, gr := run(t, pprop.Apply, a, dt, xv, wv, n, c, gamma, k)
		testutil.AllClose(t, fmt.Sprint(dt, " F"), f, naive(xv), atol, rtol)
		x := append([]float64(nil), xv...)
		// The loss is linear: central differences are exact up to
		// rounding, about 1e-10 at h = 1e-4.
		testutil.AllClose(t, fmt.Sprint(dt, " dX"), gr, testutil.NumGrad(func() float64 { return loss(x) }, x, 1e-4), max(atol, 1e-8), max(rtol, 1e-7))
	}
}

func TestApplyErrors(t *testing.T) {
	g := G.NewGraph()
	a := graph.NormalizedAdjacency(randomGraph(t, rand.New(rand.NewSource(1)), 10, 20))
	x := G.NewMatrix(g, tensor.Float64, G.WithShape(10, 2), G.WithName("x"))
	bad := G.NewMatrix(g, tensor.Float64, G.WithShape(9, 2), G.WithName("bad"))
	for name, f := range map[string]func() (*G.Node, error){
		"nil matrix": func() (*G.Node, error) { return pprop.Apply(nil, x, 0.5, 2) },
		"rows":       func() (*G.Node, error) { return pprop.Apply(a, bad, 0.5, 2) },
		"gamma":      func() (*G.Node, error) { return pprop.Apply(a, x, 1.5, 2) },
		"k":          func() (*G.Node, error) { return pprop.Apply(a, x, 0.5, 0) },
	} {
		_, err := f()
		assert.Error(t, err, name)
	}
}

// TestApplyMemo runs one forward program on an input, then on a changed
// input (in place, as a trainer's parameters change), then on the first
// again: each run must give the fresh result, whether it propagated or
// copied its memo.
func TestApplyMemo(t *testing.T) {
	rng := rand.New(rand.NewSource(6))
	const n, c, k, gamma = 50, 2, 3, 0.4
	a := graph.NormalizedAdjacency(randomGraph(t, rng, n, 120))
	for _, dt := range []tensor.Dtype{tensor.Float32, tensor.Float64} {
		x0 := testutil.RandSlice(rng, n*c, -1, 1)
		x1 := append([]float64(nil), x0...)
		x1[n*c-1] += 0.5 // differs in the last element only
		g := G.NewGraph()
		xt := testutil.Tensor(dt, x0, n, c)
		x := G.NewMatrix(g, dt, G.WithShape(n, c), G.WithName("x"), G.WithValue(xt))
		f, err := pprop.Apply(a, x, gamma, k)
		require.NoError(t, err)
		var fv G.Value
		G.Read(f, &fv)
		m := G.NewTapeMachine(g)
		for _, xv := range [][]float64{x0, x1, x1, x0} {
			switch d := xt.Data().(type) {
			case []float32:
				for i, v := range xv {
					d[i] = float32(v)
				}
			case []float64:
				copy(d, xv)
			}
			require.NoError(t, m.RunAll())
			m.Reset()
			want, _ := run(t, unfused, a, dt, xv, make([]float64, n*c), n, c, gamma, k)
			assert.Equal(t, want, testutil.ToF64(fv.Data()))
		}
		m.Close()
	}
}
