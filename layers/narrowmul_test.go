package layers

import (
	"math/rand"
	"runtime"
	"testing"

	"github.com/fairmp/fairmp/internal/testutil"
	G "gorgonia.org/gorgonia"
)

// TestNarrowMul checks a·b and the gradients of sum(w ⊙ a·b) against
// dense loops on a size with several row blocks, in both dtypes, and that
// the results are bit-identical with one and with several threads.
func TestNarrowMul(t *testing.T) {
	rng := rand.New(rand.NewSource(31))
	n, k, m := 5000, 7, 3
	av := testutil.RandSlice(rng, n*k, -1, 1)
	bv := testutil.RandSlice(rng, k*m, -1, 1)
	wv := testutil.RandSlice(rng, n*m, -1, 1)
	for i := 0; i < n*k; i += 5 {
		av[i] = 0 // exercise the zero skip
	}
	for _, dt := range testutil.Dtypes {
		var results [2][3][]float64
		for r, procs := range []int{1, 2} {
			old := runtime.GOMAXPROCS(procs)
			g := G.NewGraph()
			a := G.NewMatrix(g, dt, G.WithShape(n, k), G.WithName("a"), G.WithValue(testutil.Tensor(dt, av, n, k)))
			b := G.NewMatrix(g, dt, G.WithShape(k, m), G.WithName("b"), G.WithValue(testutil.Tensor(dt, bv, k, m)))
			w := G.NewMatrix(g, dt, G.WithShape(n, m), G.WithName("w"), G.WithValue(testutil.Tensor(dt, wv, n, m)))
			y, err := narrowMul(a, b)
			if err != nil {
				t.Fatal(err)
			}
			var yv, dav, dbv G.Value
			G.Read(y, &yv)
			gr, err := G.Grad(G.Must(G.Sum(G.Must(G.HadamardProd(y, w)))), a, b)
			if err != nil {
				t.Fatal(err)
			}
			G.Read(gr[0], &dav)
			G.Read(gr[1], &dbv)
			testutil.Run(t, g)
			runtime.GOMAXPROCS(old)
			results[r] = [3][]float64{testutil.ToF64(yv), testutil.ToF64(dav), testutil.ToF64(dbv)}
		}
		atol, rtol := testutil.Tol(dt)
		bt := make([]float64, m*k)
		for l := 0; l < k; l++ {
			for j := 0; j < m; j++ {
				bt[j*k+l] = bv[l*m+j]
			}
		}
		at := make([]float64, k*n)
		for i := 0; i < n; i++ {
			for l := 0; l < k; l++ {
				at[l*n+i] = av[i*k+l]
			}
		}
		testutil.AllClose(t, "a·b", results[0][0], matmul(av, n, k, bv, m), atol, rtol)
		testutil.AllClose(t, "dA = W·bᵀ", results[0][1], matmul(wv, n, m, bt, k), atol, rtol)
		// dB sums 5000 terms: float32 rounding grows with n.
		testutil.AllClose(t, "dB = aᵀ·W", results[0][2], matmul(at, k, n, wv, m), 100*atol, 10*rtol)
		for q := range results[0] {
			if !equalSlices(results[0][q], results[1][q]) {
				t.Errorf("%v: output %d differs between 1 and 2 threads", dt, q)
			}
		}
	}
	g := G.NewGraph()
	a := G.NewMatrix(g, testutil.Dtypes[0], G.WithShape(3, 4), G.WithName("a"))
	b := G.NewMatrix(g, testutil.Dtypes[0], G.WithShape(3, 2), G.WithName("b"))
	if _, err := narrowMul(a, b); err == nil {
		t.Error("narrowMul accepted 3 × 4 · 3 × 2")
	}
}
