package datasets

import (
	"sort"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestStratifiedSplit: the split is a partition of the labelled nodes;
// each (group, label) stratum is cut in the fractions (hand counts); a
// small group gets validation and test nodes; one-node strata alternate;
// the same seed gives the same split and another seed another.
func TestStratifiedSplit(t *testing.T) {
	// Group 0: 40 nodes of label 1, 20 of label 0; group 1: 2 of label 1,
	// 1 of label 0; group 2: one node of each label; one unlabelled node.
	var labels, sens []int
	add := func(s, y, n int) {
		for range n {
			labels, sens = append(labels, y), append(sens, s)
		}
	}
	add(0, 1, 40)
	add(0, 0, 20)
	add(1, 1, 2)
	add(1, 0, 1)
	add(2, 1, 1)
	add(2, 0, 1)
	add(0, -1, 1)
	sp, err := StratifiedSplit(labels, sens, [3]float64{0.5, 0.25, 0.25}, 7)
	require.NoError(t, err)

	all := append(append(append([]int{}, sp.Train...), sp.Val...), sp.Test...)
	sort.Ints(all)
	require.Len(t, all, len(labels)-1, "every labelled node once")
	for k := 1; k < len(all); k++ {
		require.NotEqual(t, all[k-1], all[k], "node %d twice", all[k])
	}
	count := func(part []int, s, y int) int {
		n := 0
		for _, i := range part {
			if sens[i] == s && labels[i] == y {
				n++
			}
		}
		return n
	}
	// 40 → 10 validation, 10 test, 20 train; 20 → 5, 5, 10.
	assert.Equal(t, [3]int{20, 10, 10}, [3]int{count(sp.Train, 0, 1), count(sp.Val, 0, 1), count(sp.Test, 0, 1)})
	assert.Equal(t, [3]int{10, 5, 5}, [3]int{count(sp.Train, 0, 0), count(sp.Val, 0, 0), count(sp.Test, 0, 0)})
	// Group 1: the two positives give one validation and one test node;
	// its single negative goes to validation (the group's first one-node
	// stratum).
	assert.Equal(t, [3]int{0, 1, 1}, [3]int{count(sp.Train, 1, 1), count(sp.Val, 1, 1), count(sp.Test, 1, 1)})
	assert.Equal(t, 1, count(sp.Val, 1, 0))
	// Group 2: two one-node strata, label 0 first: validation, then test.
	assert.Equal(t, 1, count(sp.Val, 2, 0))
	assert.Equal(t, 1, count(sp.Test, 2, 1))

	again, err := StratifiedSplit(labels, sens, [3]float64{0.5, 0.25, 0.25}, 7)
	require.NoError(t, err)
	assert.Equal(t, sp, again)
	other, err := StratifiedSplit(labels, sens, [3]float64{0.5, 0.25, 0.25}, 8)
	require.NoError(t, err)
	assert.NotEqual(t, sp.Train, other.Train)

	// Fractions summing to less than 1 leave the rest out.
	part, err := StratifiedSplit(labels, sens, [3]float64{0.25, 0.25, 0.25}, 7)
	require.NoError(t, err)
	assert.Equal(t, 10, count(part.Train, 0, 1))
	assert.Equal(t, 10, count(part.Val, 0, 1))

	_, err = StratifiedSplit(labels, sens[:3], [3]float64{0.5, 0.25, 0.25}, 7)
	assert.Error(t, err)
	_, err = StratifiedSplit(labels, sens, [3]float64{0.5, 0.5, 0.25}, 7)
	assert.Error(t, err)
}
