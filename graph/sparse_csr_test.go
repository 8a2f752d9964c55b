package graph

import (
	"math"
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
