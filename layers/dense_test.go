package layers

import (
	"fmt"
	"math"
	"math/rand"
	"testing"

	"github.com/stretchr/testify/require"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/fairmp/fairmp/graph"
	"github.com/fairmp/fairmp/internal/opkit"
	"github.com/fairmp/fairmp/internal/testutil"
)

// unfusedDense is what Linear.Forward and Activate built before denseSpec:
// gorgonia's Mul, AddRow, then the activation op.
func unfusedDense(x, w, b *G.Node, relu bool) (*G.Node, error) {
	y, err := G.Mul(x, w)
	if err != nil {
		return nil, err
	}
	if b != nil {
		if y, err = addRowBias(y, b); err != nil {
			return nil, err
		}
	}
	if relu {
		return Activate(y, ReLU())
	}
	return y, nil
}

// denseRun returns the output and the gradients with respect to x, w and
// b (when set) of Σ u ⊙ f(x, w, b), over two runs of one machine.
func denseRun(t *testing.T, f func(x, w, b *G.Node, relu bool) (*G.Node, error), dt tensor.Dtype, xv, wv, bv, uv []float64, n, k, m int, relu bool) [][]float64 {
	t.Helper()
	g := G.NewGraph()
	x := G.NewMatrix(g, dt, G.WithShape(n, k), G.WithName("x"), G.WithValue(testutil.Tensor(dt, xv, n, k)))
	w := G.NewMatrix(g, dt, G.WithShape(k, m), G.WithName("w"), G.WithValue(testutil.Tensor(dt, wv, k, m)))
	u := G.NewMatrix(g, dt, G.WithShape(n, m), G.WithName("u"), G.WithValue(testutil.Tensor(dt, uv, n, m)))
	var b *G.Node
	wrt := G.Nodes{x, w}
	if bv != nil {
		b = G.NewMatrix(g, dt, G.WithShape(1, m), G.WithName("b"), G.WithValue(testutil.Tensor(dt, bv, 1, m)))
		wrt = append(wrt, b)
	}
	y, err := f(x, w, b, relu)
	require.NoError(t, err)
	cost := G.Must(G.Sum(G.Must(G.HadamardProd(y, u))))
	grads, err := G.Grad(cost, wrt...)
	require.NoError(t, err)
	var yv G.Value
	G.Read(y, &yv)
	vm := G.NewTapeMachine(g.SubgraphRoots(append(grads, cost)...), G.BindDualValues(wrt...))
	defer vm.Close()
	var out [][]float64
	for r := 0; r < 2; r++ {
		for _, p := range wrt {
			if gr, err := p.Grad(); err == nil && gr != nil {
				gr.(*tensor.Dense).Zero()
			}
		}
		require.NoError(t, vm.RunAll())
		vm.Reset()
		out = [][]float64{testutil.ToF64(yv.Data())}
		for _, p := range wrt {
			gr, err := p.Grad()
			require.NoError(t, err)
			out = append(out, testutil.ToF64(gr.Data()))
		}
	}
	return out
}

// TestDenseBitIdentical checks denseSpec (the product, bias and ReLU as one
// op, its gradients as custom ops) against gorgonia's Mul, AddRow and
// Activate, bit for bit, on shapes that take every path of the BLAS: the
// MLP's layers on Bail's shape (18,876 × 18 → 64 → 2) and small ones.
func TestDenseBitIdentical(t *testing.T) {
	rng := rand.New(rand.NewSource(9))
	for _, dt := range []tensor.Dtype{tensor.Float32, tensor.Float64} {
		for _, s := range [][3]int{{18876, 18, 64}, {18876, 64, 2}, {403, 95, 64}, {7, 3, 5}, {33, 64, 2}} {
			for _, relu := range []bool{true, false} {
				for _, bias := range []bool{true, false} {
					n, k, m := s[0], s[1], s[2]
					t.Run(fmt.Sprintf("%v/%dx%dx%d/relu=%v/bias=%v", dt, n, k, m, relu, bias), func(t *testing.T) {
						xv := testutil.RandSlice(rng, n*k, -2, 2)
						wv := testutil.RandSlice(rng, k*m, -1, 1)
						uv := testutil.RandSlice(rng, n*m, -1, 1)
						var bv []float64
						if bias {
							bv = testutil.RandSlice(rng, m, -0.5, 0.5)
						}
						want := denseRun(t, unfusedDense, dt, xv, wv, bv, uv, n, k, m, relu)
						got := denseRun(t, denseAct, dt, xv, wv, bv, uv, n, k, m, relu)
						for q := range want {
							require.Len(t, got[q], len(want[q]))
							for i := range want[q] {
								if math.Float64bits(want[q][i]) != math.Float64bits(got[q][i]) {
									t.Fatalf("output %d element %d: %v, want %v", q, i, got[q][i], want[q][i])
								}
							}
						}
					})
				}
			}
		}
	}
}

// TestSpMMBiasActBitIdentical checks spmmBiasAct (the product, bias and
// ReLU as one op) against SpMM, AddRow and Activate, bit for bit, forward
// and gradients, with and without bias and ReLU, on 64, 13 and 2 columns.
func TestSpMMBiasActBitIdentical(t *testing.T) {
	rng := rand.New(rand.NewSource(10))
	const n = 3000
	a := graph.NormalizedAdjacency(randomGraph(t, rng, n, 12000))
	unfused := func(x, b *G.Node, relu bool) (*G.Node, error) {
		y, err := SpMM(a, x)
		if err != nil {
			return nil, err
		}
		if b != nil {
			if y, err = addRowBias(y, b); err != nil {
				return nil, err
			}
		}
		if relu {
			return Activate(y, ReLU())
		}
		return y, nil
	}
	fused := func(x, b *G.Node, relu bool) (*G.Node, error) { return spmmBiasAct(a, x, b, relu) }
	runOne := func(f func(x, b *G.Node, relu bool) (*G.Node, error), dt tensor.Dtype, xv, bv, uv []float64, m int, relu bool) [][]float64 {
		g := G.NewGraph()
		x := G.NewMatrix(g, dt, G.WithShape(n, m), G.WithName("x"), G.WithValue(testutil.Tensor(dt, xv, n, m)))
		u := G.NewMatrix(g, dt, G.WithShape(n, m), G.WithName("u"), G.WithValue(testutil.Tensor(dt, uv, n, m)))
		wrt := G.Nodes{x}
		var b *G.Node
		if bv != nil {
			b = G.NewMatrix(g, dt, G.WithShape(1, m), G.WithName("b"), G.WithValue(testutil.Tensor(dt, bv, 1, m)))
			wrt = append(wrt, b)
		}
		y, err := f(x, b, relu)
		require.NoError(t, err)
		cost := G.Must(G.Sum(G.Must(G.HadamardProd(y, u))))
		grads, err := G.Grad(cost, wrt...)
		require.NoError(t, err)
		var yv G.Value
		G.Read(y, &yv)
		vm := G.NewTapeMachine(g.SubgraphRoots(append(grads, cost)...), G.BindDualValues(wrt...))
		defer vm.Close()
		require.NoError(t, vm.RunAll())
		out := [][]float64{testutil.ToF64(yv.Data())}
		for _, p := range wrt {
			gr, err := p.Grad()
			require.NoError(t, err)
			out = append(out, testutil.ToF64(gr.Data()))
		}
		return out
	}
	for _, dt := range []tensor.Dtype{tensor.Float32, tensor.Float64} {
		for _, m := range []int{64, 13, 2} {
			for _, relu := range []bool{true, false} {
				for _, bias := range []bool{true, false} {
					t.Run(fmt.Sprintf("%v/%d/relu=%v/bias=%v", dt, m, relu, bias), func(t *testing.T) {
						xv := testutil.RandSlice(rng, n*m, -2, 2)
						uv := testutil.RandSlice(rng, n*m, -1, 1)
						var bv []float64
						if bias {
							bv = testutil.RandSlice(rng, m, -0.5, 0.5)
						}
						want := runOne(unfused, dt, xv, bv, uv, m, relu)
						got := runOne(fused, dt, xv, bv, uv, m, relu)
						for q := range want {
							for i := range want[q] {
								if math.Float64bits(want[q][i]) != math.Float64bits(got[q][i]) {
									t.Fatalf("output %d element %d: %v, want %v", q, i, got[q][i], want[q][i])
								}
							}
						}
					})
				}
			}
		}
	}
}

// TestDenseChainBitIdentical checks two dense layers in a row (ReLU, then
// none: an MLP), where the first layer's gradient is the second's dY·Wᵀ
// masked in the product's epilogue, against gorgonia's Mul, AddRow and
// Activate, bit for bit: the output and the gradients of x, both weights
// and both biases.
func TestDenseChainBitIdentical(t *testing.T) {
	rng := rand.New(rand.NewSource(12))
	chain := func(dense func(x, w, b *G.Node, relu bool) (*G.Node, error)) func(x, w, b *G.Node, relu bool) (*G.Node, error) {
		return func(x, w, b *G.Node, relu bool) (*G.Node, error) {
			// The runner's w and b are the first layer's; the second
			// layer's (m → m, no ReLU) are fixed.
			h, err := dense(x, w, b, true)
			if err != nil {
				return nil, err
			}
			g := x.Graph()
			m := w.Shape()[1]
			w2v := testutil.RandSlice(rand.New(rand.NewSource(7)), m*m, -1, 1)
			b2v := testutil.RandSlice(rand.New(rand.NewSource(8)), m, -0.5, 0.5)
			w2 := G.NewMatrix(g, x.Dtype(), G.WithShape(m, m), G.WithName("w2"), G.WithValue(testutil.Tensor(x.Dtype(), w2v, m, m)))
			b2 := G.NewMatrix(g, x.Dtype(), G.WithShape(1, m), G.WithName("b2"), G.WithValue(testutil.Tensor(x.Dtype(), b2v, 1, m)))
			return dense(h, w2, b2, false)
		}
	}
	for _, dt := range []tensor.Dtype{tensor.Float32, tensor.Float64} {
		for _, s := range [][3]int{{18876, 18, 64}, {403, 95, 64}, {33, 5, 16}} {
			n, k, m := s[0], s[1], s[2]
			t.Run(fmt.Sprintf("%v/%dx%dx%d", dt, n, k, m), func(t *testing.T) {
				xv := testutil.RandSlice(rng, n*k, -2, 2)
				wv := testutil.RandSlice(rng, k*m, -1, 1)
				uv := testutil.RandSlice(rng, n*m, -1, 1)
				bv := testutil.RandSlice(rng, m, -0.5, 0.5)
				want := denseRun(t, chain(unfusedDense), dt, xv, wv, bv, uv, n, k, m, true)
				got := denseRun(t, chain(denseAct), dt, xv, wv, bv, uv, n, k, m, true)
				for q := range want {
					for i := range want[q] {
						if math.Float64bits(want[q][i]) != math.Float64bits(got[q][i]) {
							t.Fatalf("output %d element %d: %v, want %v", q, i, got[q][i], want[q][i])
						}
					}
				}
			})
		}
	}
}

// TestDenseChainFuses checks that an MLP's first layer takes its gradient
// from the masked product (no separate ReLU-gradient op in the tape).
func TestDenseChainFuses(t *testing.T) {
	g := G.NewGraph()
	x := G.NewMatrix(g, tensor.Float32, G.WithShape(50, 4), G.WithName("x"), G.WithInit(G.Zeroes()))
	w1 := G.NewMatrix(g, tensor.Float32, G.WithShape(4, 16), G.WithName("w1"), G.WithInit(G.Zeroes()))
	w2 := G.NewMatrix(g, tensor.Float32, G.WithShape(16, 2), G.WithName("w2"), G.WithInit(G.Zeroes()))
	h, err := denseAct(x, w1, nil, true)
	require.NoError(t, err)
	y, err := denseAct(h, w2, nil, false)
	require.NoError(t, err)
	grads, err := G.Grad(G.Must(G.Sum(y)), w1, w2)
	require.NoError(t, err)
	masked, plain := 0, 0
	for _, n := range g.SubgraphRoots(grads...).AllNodes() {
		if op, ok := opkit.ParamsOf(matMulSpec, n.Op()); ok && op.maskReLU {
			masked++
		}
		if _, ok := opkit.ParamsOf(actSpec, n.Op()); ok {
			plain++
		}
	}
	require.Equal(t, 1, masked, "masked products")
	require.Equal(t, 0, plain, "separate ReLU gradients")
}
