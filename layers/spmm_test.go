package layers

import (
	"fmt"
	"math/rand"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/fairmp/fairmp/graph"
	"github.com/fairmp/fairmp/internal/testutil"
	"github.com/stretchr/testify/require"
)

func randomGraph(t *testing.T, rng *rand.Rand, n, m int) *graph.Graph {
	t.Helper()
	edges := make([][2]int, m)
	for k := range edges {
		edges[k] = [2]int{rng.Intn(n), rng.Intn(n)}
	}
	g, err := graph.FromEdges(n, edges)
	require.NoError(t, err)
	return g
}

func randomDirected(t *testing.T, rng *rand.Rand, n, m int) *graph.Matrix {
	t.Helper()
	r, c, v := make([]int, m), make([]int, m), make([]float64, m)
	for k := range r {
		r[k], c[k], v[k] = rng.Intn(n), rng.Intn(n), rng.NormFloat64()
	}
	a, err := graph.NewMatrix(n, n, r, c, v)
	require.NoError(t, err)
	return a
}

func denseMul(a []float64, n, k int, x []float64, c int) []float64 {
	out := make([]float64, n*c)
	for i := 0; i < n; i++ {
		for j := 0; j < k; j++ {
			for q := 0; q < c; q++ {
				out[i*c+q] += a[i*k+j] * x[j*c+q]
			}
		}
	}
	return out
}

// TestSpMMForwardAndGradient checks A·X against a dense product and the
// gradient of sum(W ⊙ A·X) with respect to X against finite differences,
// for symmetric (normalised adjacency) and non-symmetric matrices, in
// float64 and float32, for the specialised widths 1 and 2 and a general one.
func TestSpMMForwardAndGradient(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	n := 37
	mats := map[string]*graph.Matrix{
		"normalised": graph.NormalizedAdjacency(randomGraph(t, rng, n, 90)),
		"directed":   randomDirected(t, rng, n, 150),
	}
	for name, a := range mats {
		for _, c := range []int{1, 2, 5} {
			for _, dt := range testutil.Dtypes {
				t.Run(fmt.Sprintf("%s/c=%d/%v", name, c, dt), func(t *testing.T) {
					xv := testutil.RandSlice(rng, n*c, -1, 1)
					wv := testutil.RandSlice(rng, n*c, -1, 1)
					g := G.NewGraph()
					x := G.NewMatrix(g, dt, G.WithShape(n, c), G.WithName("x"), G.WithValue(testutil.Tensor(dt, xv, n, c)))
					w := G.NewMatrix(g, dt, G.WithShape(n, c), G.WithName("w"), G.WithValue(testutil.Tensor(dt, wv, n, c)))
					y, err := SpMM(a, x)
					require.NoError(t, err)
					var yv G.Value
					G.Read(y, &yv)
					cost := G.Must(G.Sum(G.Must(G.HadamardProd(y, w))))
					grads, err := G.Grad(cost, x)
					require.NoError(t, err)
					testutil.Run(t, g)
					atol, rtol := testutil.Tol(dt)
					want := denseMul(a.Dense(), n, n, xv, c)
					testutil.AllClose(t, "A·X", testutil.ToF64(yv), want, atol, rtol)
					// d/dX sum(W ⊙ A X) = Aᵀ W, checked by finite differences.
					at := a.Transpose()
					num := testutil.NumGrad(func() float64 {
						y := denseMul(a.Dense(), n, n, xv, c)
						s := 0.0
						for i := range y {
							s += y[i] * wv[i]
						}
						return s
					}, xv, 1e-6)
					testutil.AllClose(t, "dX", testutil.ToF64(grads[0].Value()), num, 1e-6+atol, 1e-5+rtol)
					testutil.AllClose(t, "dX=AᵀW", testutil.ToF64(grads[0].Value()), denseMul(at.Dense(), n, n, wv, c), atol, rtol)
				})
			}
		}
	}
}

func TestSpMMErrors(t *testing.T) {
	a := graph.NormalizedAdjacency(mustGraph(t, 4, [][2]int{{0, 1}}))
	g := G.NewGraph()
	bad := G.NewMatrix(g, tensor.Float64, G.WithShape(3, 2), G.WithName("bad"))
	if _, err := SpMM(a, bad); err == nil {
		t.Error("SpMM accepted 3 rows for a 4 × 4 matrix")
	}
	vec := G.NewVector(g, tensor.Float64, G.WithShape(4), G.WithName("vec"))
	if _, err := SpMM(a, vec); err == nil {
		t.Error("SpMM accepted a vector")
	}
	ints := G.NewMatrix(g, tensor.Int, G.WithShape(4, 2), G.WithName("ints"))
	if _, err := SpMM(a, ints); err == nil {
		t.Error("SpMM accepted an int matrix")
	}
}

// TestSpMMHashDistinguishesMatrices is the regression test for the node
// deduplication pitfall: two products of the same x with different
// matrices must stay two nodes with different values.
func TestSpMMHashDistinguishesMatrices(t *testing.T) {
	gr := mustGraph(t, 3, [][2]int{{0, 1}, {1, 2}})
	a1 := graph.NormalizedAdjacency(gr)
	a2 := graph.Adjacency(gr)
	g := G.NewGraph()
	x := G.NewMatrix(g, tensor.Float64, G.WithShape(3, 1), G.WithName("x"),
		G.WithValue(tensor.New(tensor.WithShape(3, 1), tensor.WithBacking([]float64{1, 2, 3}))))
	y1, _ := SpMM(a1, x)
	y2, _ := SpMM(a2, x)
	if y1 == y2 {
		t.Fatal("two different matrices produced one node")
	}
	var v1, v2 G.Value
	G.Read(y1, &v1)
	G.Read(y2, &v2)
	testutil.Run(t, g)
	testutil.AllClose(t, "A·x", testutil.ToF64(v2), []float64{2, 4, 2}, 0, 0)
	if testutil.ToF64(v1)[0] == 2 {
		t.Error("normalised product equals plain product")
	}
}

func mustGraph(t *testing.T, n int, edges [][2]int) *graph.Graph {
	t.Helper()
	g, err := graph.FromEdges(n, edges)
	require.NoError(t, err)
	return g
}
