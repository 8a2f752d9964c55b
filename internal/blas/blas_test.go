package blas_test

import (
	"math/rand"
	"testing"

	fb "github.com/fairmp/fairmp/internal/blas"
	"github.com/fairmp/fairmp/internal/testutil"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// TestBLASMatchesPureGo runs the active BLAS (the build's default, which
// TestMain installs: fastblas, or OpenBLAS with -tags openblas) and gonum's pure-Go BLAS on the same
// products, in both transposition cases a layer's forward and backward
// pass use, and requires equal results within float tolerance.
func TestBLASMatchesPureGo(t *testing.T) {
	active := G.WhichBLAS()
	ref := gonum.Implementation{}
	rng := rand.New(rand.NewSource(3))
	const m, k, n = 301, 276, 64
	a := testutil.RandSlice(rng, m*k, -1, 1)
	b := testutil.RandSlice(rng, k*n, -1, 1)
	c := testutil.RandSlice(rng, m*n, -1, 1)
	for _, tc := range []struct {
		name          string
		ta, tb        blas.Transpose
		m, n, k       int
		lda, ldb, ldc int
	}{
		{"A·B", blas.NoTrans, blas.NoTrans, m, n, k, k, n, n}, // X·W
		{"Aᵀ·C", blas.Trans, blas.NoTrans, k, n, m, k, n, n},  // Xᵀ·dY
		{"C·Bᵀ", blas.NoTrans, blas.Trans, m, k, n, n, n, k},  // dY·Wᵀ
	} {
		var x, y []float64
		switch tc.name {
		case "A·B":
			x, y = a, b
		case "Aᵀ·C":
			x, y = a, c
		case "C·Bᵀ":
			x, y = c, b
		}
		got64 := make([]float64, tc.m*tc.n)
		want64 := make([]float64, tc.m*tc.n)
		active.Dgemm(tc.ta, tc.tb, tc.m, tc.n, tc.k, 1, x, tc.lda, y, tc.ldb, 0, got64, tc.ldc)
		ref.Dgemm(tc.ta, tc.tb, tc.m, tc.n, tc.k, 1, x, tc.lda, y, tc.ldb, 0, want64, tc.ldc)
		testutil.AllClose(t, fb.Name()+" Dgemm "+tc.name, got64, want64, 1e-12, 1e-10)

		x32, y32 := to32(x), to32(y)
		got32 := make([]float32, tc.m*tc.n)
		want32 := make([]float32, tc.m*tc.n)
		active.Sgemm(tc.ta, tc.tb, tc.m, tc.n, tc.k, 1, x32, tc.lda, y32, tc.ldb, 0, got32, tc.ldc)
		ref.Sgemm(tc.ta, tc.tb, tc.m, tc.n, tc.k, 1, x32, tc.lda, y32, tc.ldb, 0, want32, tc.ldc)
		testutil.AllClose(t, fb.Name()+" Sgemm "+tc.name, testutil.ToF64(got32), testutil.ToF64(want32), 1e-4, 1e-4)
		// The float32 result must also agree with the float64 one.
		testutil.AllClose(t, fb.Name()+" Sgemm vs Dgemm "+tc.name, testutil.ToF64(got32), want64, 1e-4, 1e-4)
	}
}

// TestBLASGraphProduct checks a gorgonia product and its weight gradient,
// run by whichever BLAS is active, against plain Go loops.
func TestBLASGraphProduct(t *testing.T) {
	rng := rand.New(rand.NewSource(5))
	const m, k, n = 97, 40, 7
	xv := testutil.RandSlice(rng, m*k, -1, 1)
	wv := testutil.RandSlice(rng, k*n, -1, 1)
	want := make([]float64, m*n)
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			for p := 0; p < k; p++ {
				want[i*n+j] += xv[i*k+p] * wv[p*n+j]
			}
		}
	}
	// d(sum(X·W))/dW = Xᵀ·1: column sums of X repeated over W's columns.
	wantGrad := make([]float64, k*n)
	for p := 0; p < k; p++ {
		var s float64
		for i := 0; i < m; i++ {
			s += xv[i*k+p]
		}
		for j := 0; j < n; j++ {
			wantGrad[p*n+j] = s
		}
	}
	for _, dt := range testutil.Dtypes {
		g := G.NewGraph()
		x := G.NewMatrix(g, dt, G.WithShape(m, k), G.WithName("x"), G.WithValue(testutil.Tensor(dt, xv, m, k)))
		w := G.NewMatrix(g, dt, G.WithShape(k, n), G.WithName("w"), G.WithValue(testutil.Tensor(dt, wv, k, n)))
		y := G.Must(G.Mul(x, w))
		var yv G.Value
		G.Read(y, &yv)
		cost := G.Must(G.Sum(y))
		if _, err := G.Grad(cost, w); err != nil {
			t.Fatal(err)
		}
		testutil.Run(t, g)
		atol, rtol := testutil.Tol(dt)
		if dt == tensor.Float32 {
			atol, rtol = 1e-4, 1e-4
		}
		testutil.AllClose(t, fb.Name()+" "+dt.String()+" X·W", testutil.ToF64(yv), want, atol, rtol)
		gw, err := w.Grad()
		require.NoError(t, err)
		testutil.AllClose(t, fb.Name()+" "+dt.String()+" dW", testutil.ToF64(gw), wantGrad, atol, rtol)
	}
}

func to32(s []float64) []float32 {
	out := make([]float32, len(s))
	for i, v := range s {
		out[i] = float32(v)
	}
	return out
}
