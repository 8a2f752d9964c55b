package graph

import (
	"fmt"
	"math/rand"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestFromCSRMatchesFromEdges rebuilds random graphs from FromEdges's own
// arrays and checks that nothing changes.
func TestFromCSRMatchesFromEdges(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	for _, n := range []int{1, 2, 5, 50, 300} {
		edges := make([][2]int, 3*n)
		for k := range edges {
			edges[k] = [2]int{rng.Intn(n), rng.Intn(n)}
		}
		want, err := FromEdges(n, edges)
		require.NoError(t, err)
		indptr := slices.Clone(want.indptr)
		indices := slices.Clone(want.indices)
		got, err := FromCSR(indptr, indices)
		require.NoError(t, err, "n = %d", n)
		assert.Equal(t, want.Fingerprint(), got.Fingerprint(), "n = %d", n)
		assert.Equal(t, want.N(), got.N())
		assert.Equal(t, want.NumEdges(), got.NumEdges())
		assert.Equal(t, want.Degrees(), got.Degrees())
		assert.Equal(t, want.Edges(), got.Edges())
		assert.Equal(t, want.Isolated(), got.Isolated())
		assert.Equal(t, Cleanup{Input: want.NumEdges()}, got.Cleanup())
		// Ownership: no copy.
		if len(indices) > 0 {
			assert.Same(t, &indices[0], &got.indices[0])
		}
	}
}

// TestFromCSRErrors gives one invalid input per rule and checks that the
// error names the rule and where it was broken.
func TestFromCSRErrors(t *testing.T) {
	// The valid path 0 - 1 - 2 is indptr {0, 1, 3, 4}, indices {1, 0, 2, 1}.
	for _, c := range []struct {
		name    string
		indptr  []int
		indices []int32
		want    string
	}{
		{"nil indptr", nil, nil, "len(indptr) = 0, want >= 2"},
		{"no nodes", []int{0}, nil, "len(indptr) = 1, want >= 2"},
		{"first not zero", []int{1, 1, 3, 4}, []int32{1, 0, 2, 1}, "indptr[0] = 1, want 0"},
		{"decreasing", []int{0, 2, 1, 4}, []int32{1, 0, 2, 1}, "indptr[2] = 1 < indptr[1] = 2, want indptr non-decreasing (row 1"},
		{"end mismatch", []int{0, 1, 3, 4}, []int32{1, 0, 2, 1, 0}, "indptr[3] = 4, want len(indices) = 5"},
		{"index too large", []int{0, 1, 3, 4}, []int32{1, 0, 3, 1}, "row 1, position 1 (indices[2]) is 3, want a node in [0, 3)"},
		{"negative index", []int{0, 1, 3, 4}, []int32{1, -1, 2, 1}, "row 1, position 0 (indices[1]) is -1, want a node in [0, 3)"},
		{"self-loop", []int{0, 1, 3, 4}, []int32{1, 1, 2, 1}, "row 1, position 0 (indices[1]) is a self-loop (1, 1)"},
		{"descending row", []int{0, 1, 3, 4}, []int32{1, 2, 0, 1}, "row 1, position 1 (indices[2]) is 0 after 2, want strictly ascending"},
		{"duplicate", []int{0, 1, 3, 5}, []int32{1, 0, 2, 1, 1}, "row 2, position 1 (indices[4]) is 1 after 1, want strictly ascending rows (no duplicates)"},
		// Row 0 holds 1, row 1 lacks 0: an upper entry without mirror.
		{"asymmetric upper", []int{0, 1, 2, 3}, []int32{1, 2, 1}, "row 0, position 0 (indices[0]) holds 1, but row 1 does not hold 0"},
		// Row 2 holds 0, row 0 holds nothing: a lower entry without mirror.
		{"asymmetric lower", []int{0, 0, 1, 3}, []int32{2, 0, 1}, "row 2, position 0 (indices[1]) holds 0, but row 0 does not hold 2"},
	} {
		g, err := FromCSR(c.indptr, c.indices)
		assert.Nil(t, g, c.name)
		if assert.Error(t, err, c.name) {
			assert.Contains(t, err.Error(), "graph: FromCSR: ", c.name)
			assert.Contains(t, err.Error(), c.want, c.name)
		}
	}
}

// TestFromCSREmpty: nodes without edges are a valid graph.
func TestFromCSREmpty(t *testing.T) {
	g, err := FromCSR([]int{0, 0, 0}, nil)
	require.NoError(t, err)
	assert.Equal(t, 2, g.N())
	assert.Equal(t, 0, g.NumEdges())
	assert.Equal(t, 2, g.Isolated())
	want, err := FromEdges(2, nil)
	require.NoError(t, err)
	assert.Equal(t, want.Fingerprint(), g.Fingerprint())
}

// TestFromCSRLargeAsymmetric checks the parallel symmetry check on a graph
// large enough to use it: the error names the first bad row, with any
// number of procs.
func TestFromCSRLargeAsymmetric(t *testing.T) {
	rng := rand.New(rand.NewSource(11))
	n := 20000
	edges := make([][2]int, 100000)
	for k := range edges {
		edges[k] = [2]int{rng.Intn(n), rng.Intn(n)}
	}
	g, err := FromEdges(n, edges)
	require.NoError(t, err)
	require.Greater(t, len(g.indices), 1<<16)
	ok, err := FromCSR(slices.Clone(g.indptr), slices.Clone(g.indices))
	require.NoError(t, err)
	assert.Equal(t, g.Fingerprint(), ok.Fingerprint())
	// Break the mirror of one edge in a late row and of one in an early
	// row, by moving the entry to a neighbour not yet in the row.
	indices := slices.Clone(g.indices)
	breakRow := func(u int) int32 {
		row := indices[g.indptr[u]:g.indptr[u+1]]
		require.NotEmpty(t, row)
		last := row[len(row)-1]
		require.Less(t, int(last)+1, n)
		row[len(row)-1] = last + 1 // strictly ascending still
		return last + 1
	}
	breakRow(n - 50)
	u := 100
	for int(g.indices[g.indptr[u+1]-1]) >= n-1 || g.indptr[u+1] == g.indptr[u] {
		u++
	}
	v := breakRow(u)
	_, err = FromCSR(slices.Clone(g.indptr), indices)
	require.Error(t, err)
	if int(v) > u {
		assert.Contains(t, err.Error(), fmt.Sprintf("row %d, position %d", u, g.Degree(u)-1))
	}
}
