package metrics

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestChoose(t *testing.T) {
	ref := Candidate{Accuracy: 0.90, DemographicParity: 0.30}
	cands := []Candidate{
		{0.90, 0.30}, // the reference itself (λf = 0)
		{0.895, 0.20},
		{0.889, 0.10}, // 1.1 points below: outside a 1-point budget
		{0.895, 0.20}, // tie with 1: the first wins
		{0.80, 0.01},
	}
	for _, c := range []struct {
		rule Rule
		want int
	}{
		{Rule{MaxAccuracyLoss: 0.01}, 1},
		{Rule{MaxAccuracyLoss: 0.011}, 2},
		{Rule{MaxAccuracyLoss: 0.2}, 4},
		{Rule{MaxDP: 0.25}, 1},
		{Rule{MaxDP: 0.15}, 2},
		{Rule{MaxDP: 1}, 0},
	} {
		got, err := Choose(cands, ref, c.rule)
		require.NoError(t, err, c.rule.String())
		assert.Equal(t, c.want, got, c.rule.String())
	}
	_, err := Choose(cands, ref, Rule{MaxDP: 0.005})
	assert.ErrorIs(t, err, ErrNoCandidate)
	for _, bad := range []Rule{{}, {MaxAccuracyLoss: 0.01, MaxDP: 0.1}, {MaxDP: -1}, {MaxAccuracyLoss: 2}} {
		_, err := Choose(cands, ref, bad)
		assert.ErrorIs(t, err, ErrValue, "%+v", bad)
	}
	_, err = Choose(nil, ref, DefaultRule())
	assert.ErrorIs(t, err, ErrEmpty)
}
