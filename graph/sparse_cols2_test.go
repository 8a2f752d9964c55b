package graph

import (
	"math"
	"math/rand"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestCols2KernelBitIdentical checks the two-column assembly path
// (mulRows2Kern, four rows summed side by side) against the plain Go loop
// (mulRows2) bit for bit, in float32 and float64, on rows of every length
// from 0 up (so that every mix of common steps and tails occurs), on
// every sub-range of rows, and with −0, infinities and NaN in x.
func TestCols2KernelBitIdentical(t *testing.T) {
	rng := rand.New(rand.NewSource(5))
	const rows, cols = 203, 97
	var r, c []int
	var v []float64
	for i := 0; i < rows; i++ {
		n := (i * 7) % 23
		if i%11 == 0 {
			n = 0
		}
		for _, j := range rng.Perm(cols)[:n] {
			r, c, v = append(r, i), append(c, j), append(v, rng.NormFloat64())
		}
	}
	a, err := NewMatrix(rows, cols, r, c, v)
	require.NoError(t, err)
	x64 := make([]float64, 2*cols)
	for i := range x64 {
		x64[i] = rng.NormFloat64() * math.Pow(10, float64(rng.Intn(9)-4))
	}
	x64[3], x64[10], x64[20], x64[33] = math.Copysign(0, -1), math.Inf(1), math.NaN(), math.Inf(-1)
	x32 := make([]float32, len(x64))
	for i, e := range x64 {
		x32[i] = float32(e)
	}
	for _, rg := range [][2]int{{0, rows}, {0, 1}, {1, 4}, {3, 10}, {5, 6}, {17, 203}, {200, 203}} {
		lo, hi := rg[0], rg[1]
		w32, g32 := make([]float32, 2*rows), make([]float32, 2*rows)
		mulRows2(a.indptr, a.indices, a.val32, w32, x32, lo, hi)
		mulRows2Kern(a.csr, 0, a.indptr, a.indices, a.val32, g32, x32, lo, hi)
		for i := range w32 {
			require.Equal(t, math.Float32bits(w32[i]), math.Float32bits(g32[i]), "float32 rows [%d, %d), element %d: %v vs %v", lo, hi, i, g32[i], w32[i])
		}
		w64, g64 := make([]float64, 2*rows), make([]float64, 2*rows)
		mulRows2(a.indptr, a.indices, a.val64, w64, x64, lo, hi)
		mulRows2Kern(a.csr, 0, a.indptr, a.indices, a.val64, g64, x64, lo, hi)
		for i := range w64 {
			require.Equal(t, math.Float64bits(w64[i]), math.Float64bits(g64[i]), "float64 rows [%d, %d), element %d: %v vs %v", lo, hi, i, g64[i], w64[i])
		}
	}
}
