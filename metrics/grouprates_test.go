package metrics

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// NewGroupRates: hand-counted rates per group, Wilson intervals around
// them, and nil (undefined) TPR or FPR for a group without positive or
// negative labelled nodes.
func TestNewGroupRates(t *testing.T) {
	// Decisions (P(1) > 0.5): 1 1 0 0 | 1 0 0.
	p1 := []float64{0.9, 0.8, 0.1, 0.2, 0.7, 0.3, 0.4}
	probs := make([]float64, 0, 2*len(p1))
	for _, p := range p1 {
		probs = append(probs, 1-p, p)
	}
	labels := []int{1, 0, 1, 0, 1, 1, -1}
	sens := []int{0, 0, 0, 0, 1, 1, 1}
	got, err := NewGroupRates(probs, 2, labels, sens, nil, DefaultOptions(), 0.95)
	require.NoError(t, err)
	require.Len(t, got, 2)
	g0, g1 := got[0], got[1]
	assert.Equal(t, 4, g0.Count)
	assert.InDelta(t, 0.5, g0.Selection.Point, 1e-12)
	require.NotNil(t, g0.TPR)
	require.NotNil(t, g0.FPR)
	assert.InDelta(t, 0.5, g0.TPR.Point, 1e-12) // 1 of the positives 0, 2
	assert.InDelta(t, 0.5, g0.FPR.Point, 1e-12) // 1 of the negatives 1, 3
	assert.Equal(t, 3, g1.Count)
	assert.Equal(t, 2, g1.Labelled)
	assert.InDelta(t, 1.0/3, g1.Selection.Point, 1e-12)
	require.NotNil(t, g1.TPR)
	assert.InDelta(t, 0.5, g1.TPR.Point, 1e-12)
	assert.Nil(t, g1.FPR, "no negative labelled node: undefined")
	for _, iv := range []Interval{g0.Selection, *g0.TPR, g1.Selection} {
		assert.True(t, iv.Lo <= iv.Point && iv.Point <= iv.Hi && iv.Lo >= 0 && iv.Hi <= 1, "%v", iv)
	}
	assert.Equal(t, wilson(1, 2, 0.95), *g0.TPR, "the Wilson interval of Baseline")

	_, err = NewGroupRates(probs, 2, labels, sens, nil, DefaultOptions(), 1)
	assert.ErrorIs(t, err, ErrValue)
	_, err = NewGroupRates(probs, 2, labels[:3], sens, nil, DefaultOptions(), 0.95)
	assert.ErrorIs(t, err, ErrLength)
}
