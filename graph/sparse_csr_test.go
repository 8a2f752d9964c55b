package graph

import (
	"math"
	"math/rand"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestNewMatrixCSR(t *testing.T) {
	// [[0 2 0 1]
	//  [0 0 0 0]
	//  [3 0 4 0]]
	m, err := NewMatrixCSR(3, 4, []int{0, 2, 2, 4}, []int32{1, 3, 0, 2}, []float64{2, 1, 3, 4})
	require.NoError(t, err)
	want, err := NewMatrix(3, 4, []int{0, 0, 2, 2}, []int{1, 3, 0, 2}, []float64{2, 1, 3, 4})
	require.NoError(t, err)
	assert.Equal(t, want.Dense(), m.Dense())
	assert.Equal(t, want.Indptr(), m.Indptr())
	assert.Equal(t, []float32{2, 1, 3, 4}, m.Values32())
	assert.False(t, m.Symmetric())
	s, err := NewMatrixCSR(2, 2, []int{0, 1, 2}, []int32{1, 0}, []float64{5, 5})
	require.NoError(t, err)
	assert.True(t, s.Symmetric())

	for name, c := range map[string]struct {
		rows, cols int
		indptr     []int
		idx        []int32
		val        []float64
		msg        string
	}{
		"size":      {0, 2, []int{0}, nil, nil, "size 0 × 2"},
		"pointers":  {2, 2, []int{0, 1}, []int32{0}, []float64{1}, "2 row pointers"},
		"last":      {2, 2, []int{0, 1, 3}, []int32{0, 1}, []float64{1, 1}, "want 3 pointers"},
		"values":    {1, 2, []int{0, 2}, []int32{0, 1}, []float64{1}, "1 values"},
		"backwards": {2, 2, []int{0, 2, 1}, []int32{0}, []float64{1}, "row 1 ends at 1 before it starts at 2"},
		"range":     {1, 2, []int{0, 1}, []int32{2}, []float64{1}, "row 0, position 0: column 2"},
		"order":     {1, 3, []int{0, 2}, []int32{2, 1}, []float64{1, 1}, "strictly ascending"},
		"repeat":    {1, 3, []int{0, 2}, []int32{1, 1}, []float64{1, 1}, "strictly ascending"},
		"decrease":  {2, 2, []int{0, 1, 1}, []int32{0}, []float64{1}, ""},
	} {
		_, err := NewMatrixCSR(c.rows, c.cols, c.indptr, c.idx, c.val)
		if c.msg == "" {
			assert.NoError(t, err, name)
			continue
		}
		assert.ErrorContains(t, err, c.msg, name)
	}
	_, err = NewMatrixCSR(2, 2, []int{0, 2, 1}, []int32{0, 1}, []float64{1, 1})
	assert.ErrorContains(t, err, "want 3 pointers")
	_, err = NewMatrixCSR(3, 2, []int{0, 2, 1, 2}, []int32{0, 1}, []float64{1, 1})
	assert.ErrorContains(t, err, "row 1 ends at 1 before it starts at 2")
	_, err = NewMatrixCSR(1, 2, []int{0, 1}, []int32{0}, []float64{math.NaN()})
	assert.ErrorContains(t, err, "is NaN, want a finite value")
}

// TestMulDenseRows: every block of rows equals the same rows of the whole
// product, bit for bit, in float32 (with and without the AVX2 strips:
// 3, 16 and 70 columns) and float64, the kernels taking rows from lo on.
func TestMulDenseRows(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	var edges [][2]int
	for k := 0; k < 3000; k++ {
		edges = append(edges, [2]int{rng.Intn(500), rng.Intn(500)})
	}
	g, err := FromEdges(500, edges)
	require.NoError(t, err)
	a, err := GCNNorm(g, DefaultNormOptions())
	require.NoError(t, err)
	for _, cols := range []int{1, 2, 3, 16, 70} {
		x64 := make([]float64, 500*cols)
		x32 := make([]float32, 500*cols)
		for i := range x64 {
			x64[i] = rng.NormFloat64()
			x32[i] = float32(x64[i])
		}
		w64 := make([]float64, 500*cols)
		w32 := make([]float32, 500*cols)
		a.MulDense64(w64, x64, cols)
		a.MulDense32(w32, x32, cols)
		for _, r := range [][2]int{{0, 500}, {0, 1}, {17, 230}, {499, 500}} {
			lo, hi := r[0], r[1]
			o64 := make([]float64, (hi-lo)*cols)
			o32 := make([]float32, (hi-lo)*cols)
			a.MulDenseRows64(o64, x64, cols, lo, hi)
			a.MulDenseRows32(o32, x32, cols, lo, hi)
			assert.Equal(t, w64[lo*cols:hi*cols], o64, "float64 rows %v, %d columns", r, cols)
			assert.Equal(t, w32[lo*cols:hi*cols], o32, "float32 rows %v, %d columns", r, cols)
		}
	}
	assert.Panics(t, func() { a.MulDenseRows64(make([]float64, 10), make([]float64, 500), 1, 5, 5) })
	assert.Panics(t, func() { a.MulDenseRows64(make([]float64, 10), make([]float64, 500), 1, 490, 501) })
	assert.Panics(t, func() { a.MulDenseRows32(make([]float32, 9), make([]float32, 500), 1, 0, 10) })
}
