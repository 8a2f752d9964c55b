package graph

import (
	"math"
	"math/rand"
	"testing"

	"github.com/stretchr/testify/require"
)

// randomMatrix returns a rows × cols sparse matrix with about density·rows·cols
// random entries, some rows empty.
func randomMatrix(t *testing.T, rng *rand.Rand, rows, cols int, density float64) *Matrix {
	t.Helper()
	var r, c []int
	var v []float64
	for i := 0; i < rows; i++ {
		if i%7 == 3 {
			continue // an empty row
		}
		for j := 0; j < cols; j++ {
			if rng.Float64() < density {
				r, c, v = append(r, i), append(c, j), append(v, rng.NormFloat64())
			}
		}
	}
	m, err := NewMatrix(rows, cols, r, c, v)
	require.NoError(t, err)
	return m
}

// TestMulDenseAgainstDense checks MulDense64 and MulDense32 against a
// dense product for every column-count path of the kernel (1, 2, strips of
// 8 and 4 and single columns), on matrices large enough to run in
// parallel blocks, and checks that float32 agrees with float64 and that
// repeated calls are bit-identical.
func TestMulDenseAgainstDense(t *testing.T) {
	rng := rand.New(rand.NewSource(11))
	for _, sz := range [][2]int{{5, 3}, {300, 200}, {3000, 2500}} {
		density := 0.3
		if sz[0] > 1000 {
			density = 0.004 // ~10 non-zeros per row, > 1<<14 in all: parallel path
		}
		a := randomMatrix(t, rng, sz[0], sz[1], density)
		rows, inner := a.Dims()
		dense := a.Dense()
		for _, cols := range []int{1, 2, 3, 4, 5, 8, 13, 16, 64, 67} {
			x := make([]float64, inner*cols)
			for i := range x {
				x[i] = rng.NormFloat64()
			}
			want := make([]float64, rows*cols)
			for i := 0; i < rows; i++ {
				for k := 0; k < inner; k++ {
					if d := dense[i*inner+k]; d != 0 {
						for c := 0; c < cols; c++ {
							want[i*cols+c] += d * x[k*cols+c]
						}
					}
				}
			}
			got := make([]float64, rows*cols)
			for i := range got {
				got[i] = math.NaN() // the kernel must overwrite every element
			}
			a.MulDense64(got, x, cols)
			for i := range want {
				require.InDelta(t, want[i], got[i], 1e-12+1e-10*math.Abs(want[i]), "%dx%d cols=%d: MulDense64[%d]", rows, inner, cols, i)
			}
			again := make([]float64, rows*cols)
			a.MulDense64(again, x, cols)
			require.Equal(t, got, again, "%dx%d cols=%d: MulDense64 not deterministic", rows, inner, cols)
			x32 := make([]float32, len(x))
			for i, v := range x {
				x32[i] = float32(v)
			}
			got32 := make([]float32, rows*cols)
			for i := range got32 {
				got32[i] = float32(math.NaN())
			}
			a.MulDense32(got32, x32, cols)
			for i := range want {
				require.InDelta(t, want[i], float64(got32[i]), 1e-4+1e-4*math.Abs(want[i]), "%dx%d cols=%d: MulDense32[%d]", rows, inner, cols, i)
			}
		}
	}
}

// TestMulDense64KernelBitIdentical checks that the float64 assembly path
// (strips of 32 and 8 columns) gives exactly the Go loops' result, for
// every column count that mixes the strips with Go's last columns: the
// same model must come out on a CPU with AVX2 and on one without.
func TestMulDense64KernelBitIdentical(t *testing.T) {
	rng := rand.New(rand.NewSource(12))
	a := randomMatrix(t, rng, 400, 350, 0.05) // ~17 non-zeros a row: the prefetching loop
	rows, inner := a.Dims()
	for _, cols := range []int{8, 9, 13, 16, 31, 32, 33, 40, 64, 67, 100} {
		x := make([]float64, inner*cols)
		for i := range x {
			x[i] = rng.NormFloat64() * math.Exp(4*rng.NormFloat64()) // wide magnitudes: roundings differ if the order does
		}
		want := make([]float64, rows*cols)
		mulRowsN(a.indptr, a.indices, a.val64, want, x, cols, 0, rows)
		got := make([]float64, rows*cols)
		for i := range got {
			got[i] = math.NaN()
		}
		a.MulDense64(got, x, cols)
		for i := range want {
			require.Equal(t, math.Float64bits(want[i]), math.Float64bits(got[i]), "cols=%d: element %d: kernel %v, Go loop %v", cols, i, got[i], want[i])
		}
	}
}
