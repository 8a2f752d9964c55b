package selection

import (
	"errors"
	"testing"

	"github.com/fairmp/fairmp/metrics"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestChoose(t *testing.T) {
	ref := Candidate{Accuracy: 0.90, Fairness: 0.30}
	cands := []Candidate{
		{Accuracy: 0.90, Fairness: 0.30}, // the reference itself (λf = 0)
		{Accuracy: 0.895, Fairness: 0.20},
		{Accuracy: 0.889, Fairness: 0.10}, // 1.1 points below: outside a 1-point budget
		{Accuracy: 0.895, Fairness: 0.20}, // tie with 1: the first wins
		{Accuracy: 0.80, Fairness: 0.01},
	}
	for _, c := range []struct {
		rule Rule
		want int
	}{
		{DefaultRule(), 1},
		{FairestWithin(metrics.DPDifference, 0.011), 2},
		{FairestWithin(metrics.EODifference, 0.2), 4},
		{MostAccurateWithin(metrics.DPDifference, 0.25), 1},
		{MostAccurateWithin(metrics.DPDifference, 0.15), 2},
		{MostAccurateWithin(metrics.DPDifference, 1), 0},
		{MostAccurateWithin(metrics.DPDifference, 0.01), 4}, // the bound itself is allowed
	} {
		got, err := Choose(cands, ref, c.rule)
		require.NoError(t, err, c.rule.String())
		assert.Equal(t, c.want, got, c.rule.String())
	}
	_, err := Choose(cands, ref, MostAccurateWithin(metrics.DPDifference, 0.005))
	assert.ErrorIs(t, err, ErrNoCandidate)
	for _, bad := range []Rule{
		{},
		{MaxAccuracyLoss: 0.01, Bound: 0.1},
		{Goal: MostAccurate, Bound: -1},
		{Goal: MostAccurate, Criterion: metrics.DPRatio, Bound: 0},
		{Goal: MostAccurate, Bound: 0.1, MaxAccuracyLoss: 0.01},
		{MaxAccuracyLoss: 2},
		{Goal: 7, MaxAccuracyLoss: 0.01},
		{Criterion: 99, MaxAccuracyLoss: 0.01},
	} {
		_, err := Choose(cands, ref, bad)
		assert.ErrorIs(t, err, metrics.ErrValue, "%+v", bad)
	}
	_, err = Choose(nil, ref, DefaultRule())
	assert.ErrorIs(t, err, metrics.ErrEmpty)
}

// TestChooseRatio: for a ratio higher is fairer, the bound is a floor,
// and a candidate whose ratio is undefined is never chosen.
func TestChooseRatio(t *testing.T) {
	ref := Candidate{Accuracy: 0.90, Fairness: 0.5}
	cands := []Candidate{
		{Accuracy: 0.90, Fairness: 0.5},
		{Accuracy: 0.89, Fairness: 0.8},
		{Accuracy: 0.895, Fairness: 0.79},
		{Accuracy: 0.95, Undefined: errors.New("0/0")},
		{Accuracy: 0.70, Fairness: 1},
	}
	for _, c := range []struct {
		rule Rule
		want int
	}{
		{FairestWithin(metrics.DPRatio, 0.01), 1},
		{FairestWithin(metrics.DPRatio, 0.2), 4},
		{MostAccurateWithin(metrics.DPRatio, 0.8), 1}, // the four-fifths rule
		{MostAccurateWithin(metrics.DPRatio, 0.7), 2},
		{MostAccurateWithin(metrics.DPRatio, 0.1), 0}, // the undefined 0.95 is skipped
		{MostAccurateWithin(metrics.EOddsRatio, 1), 4},
	} {
		got, err := Choose(cands, ref, c.rule)
		require.NoError(t, err, c.rule.String())
		assert.Equal(t, c.want, got, c.rule.String())
	}
	_, err := Choose(cands[3:4], ref, MostAccurateWithin(metrics.DPRatio, 0.1))
	assert.ErrorIs(t, err, ErrNoCandidate)
	assert.ErrorContains(t, err, "DP ratio undefined for 1 of them")
}

func TestRuleString(t *testing.T) {
	assert.Equal(t, "lowest validation ΔDP within 1 accuracy point of the reference", DefaultRule().String())
	assert.Equal(t, "highest validation EO ratio within 2 accuracy points of the reference", FairestWithin(metrics.EORatio, 0.02).String())
	assert.Equal(t, "highest validation accuracy with DP ratio ≥ 0.8", MostAccurateWithin(metrics.DPRatio, 0.8).String())
	assert.Equal(t, "highest validation accuracy with ΔEOdds ≤ 5%", MostAccurateWithin(metrics.EOddsDifference, 0.05).String())
}

// TestCandidateFromReport: Rule.Candidate reads the criterion from a
// report's groups, and marks it undefined where it has no value.
func TestCandidateFromReport(t *testing.T) {
	// Group 0: selects 1 of 2; group 1: selects none.
	p := []float64{0.9, 0.1, 0.2, 0.3}
	labels := []int{1, 0, 1, 0}
	sens := []int{0, 0, 1, 1}
	r, err := metrics.EvaluateBinary(p, labels, sens, nil, metrics.DefaultOptions())
	require.NoError(t, err)
	c := FairestWithin(metrics.DPRatio, 0.01).Candidate(r)
	require.NoError(t, c.Undefined)
	assert.Equal(t, Candidate{Accuracy: 0.75, Fairness: 0}, c)
	c = FairestWithin(metrics.FPRRatio, 0.01).Candidate(r) // no false positive anywhere: 0/0
	assert.ErrorIs(t, c.Undefined, metrics.ErrZeroRate)
	c = FairestWithin(metrics.EODifference, 0.01).Candidate(r)
	assert.Equal(t, Candidate{Accuracy: 0.75, Fairness: 1}, c)
}

// TestFairestWithinOneIsNotHundredPoints is issue 53's D1:
// FairestWithin(DPDifference, 1) was accepted as 100 accuracy points
// while the commands' -max-acc-loss 1 is one point. The library's unit is
// the fraction; a loss that reads as points is refused with the fraction
// meant.
func TestFairestWithinOneIsNotHundredPoints(t *testing.T) {
	for _, c := range []struct {
		loss float64
		want string
	}{
		{1, "Rule.MaxAccuracyLoss = 1 is a fraction of accuracy (100 accuracy points): did you mean 0.01 (1 point)?"},
		{2, "did you mean 0.02 (2 points)?"},
		{0.5, "did you mean 0.005 (0.5 points)?"},
		{100, "did you mean 1 (100 points)?"},
		{0.7, "want a fraction in (0, 0.5)"},
	} {
		err := FairestWithin(metrics.DPDifference, c.loss).Validate()
		assert.ErrorIs(t, err, metrics.ErrValue, "%v", c.loss)
		assert.ErrorContains(t, err, c.want, "%v", c.loss)
	}
	for _, bad := range []float64{0, -0.01, 101} {
		err := FairestWithin(metrics.DPDifference, bad).Validate()
		assert.ErrorContains(t, err, "want a fraction in (0, 0.5) for the goal fairest (0.01 is one accuracy point)", "%v", bad)
	}
	for _, ok := range []float64{0.01, 0.001, 0.2, 0.49} {
		assert.NoError(t, FairestWithin(metrics.DPDifference, ok).Validate(), "%v", ok)
	}
	assert.Equal(t, "lowest validation ΔDP within 1 accuracy point of the reference", FairestWithin(metrics.DPDifference, 0.01).String())
}

// TestRuleClassCandidate: a c-class report's candidate carries its
// accuracy and the rule's c-class criterion (the worst class's), and an
// undefined criterion (a group without a node of a class, for ΔEO) is
// Undefined, never chosen.
func TestRuleClassCandidate(t *testing.T) {
	// Group 0: classes 0, 1, 2 predicted 0, 1, 1; group 1: 0, 1 predicted 0, 0.
	probs := []float64{
		0.8, 0.1, 0.1,
		0.1, 0.8, 0.1,
		0.1, 0.8, 0.1,
		0.8, 0.1, 0.1,
		0.8, 0.1, 0.1,
	}
	labels, sens := []int{0, 1, 2, 0, 1}, []int{0, 0, 0, 1, 1}
	opt := metrics.DefaultOptions()
	opt.AllowUndefined = true
	rep, err := metrics.EvaluateClasses(probs, 3, labels, sens, nil, opt)
	require.NoError(t, err)
	c := FairestWithin(metrics.DPDifference, 0.01).ClassCandidate(rep)
	assert.Equal(t, 3.0/5, c.Accuracy)
	assert.NoError(t, c.Undefined)
	assert.InDelta(t, 2.0/3, c.Fairness, 1e-15) // class 1: ⅔ in group 0, 0 in group 1
	assert.Equal(t, rep.DemographicParity, c.Fairness)
	u := FairestWithin(metrics.EODifference, 0.01).ClassCandidate(rep)
	assert.ErrorIs(t, u.Undefined, metrics.ErrNoPositives)
}
