package spkern

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestNewGATWhole: from the pattern of an undirected graph's matrix
// (self-loops stored), NewGATWhole gives NewGATCSR's structure, reverse
// edges included; a pattern with an edge whose reverse is missing is
// refused.
func TestNewGATWhole(t *testing.T) {
	nb := [][]int32{{1, 3}, {0, 2}, {1}, {0}} // a path 3–0–1–2
	for _, loops := range []bool{false, true} {
		want := NewGATCSR(4, func(i int) []int32 { return nb[i] }, loops)
		got, ok := NewGATWhole(4, append([]int(nil), want.Indptr...), append([]int32(nil), want.Src...))
		require.True(t, ok, "self-loops %v", loops)
		assert.Equal(t, want.Indptr, got.Indptr)
		assert.Equal(t, want.Src, got.Src)
		assert.Equal(t, want.Rev, got.Rev)
		assert.Equal(t, want.TEdge, got.TEdge)
	}
	// 0→1 stored, 1→0 not.
	_, ok := NewGATWhole(2, []int{0, 1, 1}, []int32{1})
	assert.False(t, ok)
	// Both stored but row 1 out of order: the reverse is not where the
	// ascending order puts it.
	_, ok = NewGATWhole(3, []int{0, 2, 4, 6}, []int32{1, 2, 2, 0, 0, 1})
	assert.False(t, ok)
}
