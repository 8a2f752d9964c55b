package metrics

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Three groups, hand-computed:
//
//	group 0 (6 nodes): labels 1 1 1 0 0 0, pred 1 1 0 1 0 0:
//	  SR 3/6, TPR 2/3, FPR 1/3, accuracy 4/6
//	group 1 (4 nodes): labels 1 1 0 0, pred 1 1 1 0:
//	  SR 3/4, TPR 2/2, FPR 1/2, accuracy 3/4
//	group 2 (5 nodes): labels 1 1 0 0 0, pred 1 0 1 0 0:
//	  SR 2/5, TPR 1/2, FPR 1/3, accuracy 3/5
//	overall (15): SR 8/15, TPR 5/7, FPR 3/8, accuracy 10/15
var (
	triSens   = []int{0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 2}
	triLabels = []int{1, 1, 1, 0, 0, 0, 1, 1, 0, 0, 1, 1, 0, 0, 0}
	triPred   = []int{1, 1, 0, 1, 0, 0, 1, 1, 1, 0, 1, 0, 1, 0, 0}
)

// TestCriteriaHandComputed checks every criterion, named after fairlearn's
// function, against hand-computed values on two cases.
func TestCriteriaHandComputed(t *testing.T) {
	want := map[Criterion]float64{
		DPDifference:    3.0/4 - 2.0/5,
		DPRatio:         (2.0 / 5) / (3.0 / 4),
		EODifference:    1 - 1.0/2,
		EORatio:         (1.0 / 2) / 1,
		FPRDifference:   1.0/2 - 1.0/3,
		FPRRatio:        (1.0 / 3) / (1.0 / 2),
		EOddsDifference: 1.0 / 2, // max(ΔTPR 1/2, ΔFPR 1/6)
		EOddsRatio:      1.0 / 2, // min(TPR ratio 1/2, FPR ratio 2/3)
	}
	require.Len(t, want, len(Criteria()))
	for c, w := range want {
		got, err := c.Measure(triPred, triLabels, triSens)
		require.NoError(t, err, c.Fairlearn())
		near(t, c.Fairlearn(), got, w)
	}

	// Two groups where the false-positive rates differ more:
	// group 0: labels 1 1 0 0, pred 1 1 1 0: SR 3/4, TPR 1, FPR 1/2;
	// group 1: labels 1 1 0 0 0 0, pred 1 1 1 0 0 0: SR 1/2, TPR 1, FPR 1/4.
	sens := []int{0, 0, 0, 0, 1, 1, 1, 1, 1, 1}
	labels := []int{1, 1, 0, 0, 1, 1, 0, 0, 0, 0}
	pred := []int{1, 1, 1, 0, 1, 1, 1, 0, 0, 0}
	want = map[Criterion]float64{
		DPDifference: 1.0 / 4, DPRatio: 2.0 / 3,
		EODifference: 0, EORatio: 1,
		FPRDifference: 1.0 / 4, FPRRatio: 1.0 / 2,
		EOddsDifference: 1.0 / 4, EOddsRatio: 1.0 / 2,
	}
	for c, w := range want {
		got, err := c.Measure(pred, labels, sens)
		require.NoError(t, err, c.Fairlearn())
		near(t, c.Fairlearn(), got, w)
	}
	// The Breakdown methods are the difference criteria.
	b, err := ByGroup(triPred, triLabels, triSens)
	require.NoError(t, err)
	near(t, "ΔDP", b.DemographicParity(), 3.0/4-2.0/5)
	eo, err := b.EqualOpportunity()
	require.NoError(t, err)
	near(t, "ΔEO", eo, 0.5)
}

// TestCriteriaUndefined: empty groups, groups without positives or
// negatives, and ratios of zero rates are errors (fairlearn: NaN or 0),
// while a zero rate in some groups is a value.
func TestCriteriaUndefined(t *testing.T) {
	// Nobody selected: the difference is 0, every ratio is 0/0.
	none := make([]int, len(triPred))
	for _, c := range Criteria() {
		v, err := c.Measure(none, triLabels, triSens)
		if c.IsRatio() {
			assert.ErrorIs(t, err, ErrZeroRate, c.Name())
			continue
		}
		require.NoError(t, err, c.Name())
		assert.Zero(t, v, c.Name())
	}
	// Group 1 selects nobody, the others do: the ratios are 0.
	pred := append([]int(nil), triPred...)
	for i, s := range triSens {
		if s == 1 {
			pred[i] = 0
		}
	}
	for _, c := range []Criterion{DPRatio, EORatio, FPRRatio, EOddsRatio} {
		v, err := c.Measure(pred, triLabels, triSens)
		require.NoError(t, err, c.Name())
		assert.Zero(t, v, c.Name())
	}
	// Group 2 without positives: the true-positive rate's criteria fail,
	// the selection rate's do not.
	labels := append([]int(nil), triLabels...)
	labels[10], labels[11] = 0, 0
	for _, c := range Criteria() {
		_, err := c.Measure(triPred, labels, triSens)
		switch c {
		case EODifference, EORatio, EOddsDifference, EOddsRatio:
			assert.ErrorIs(t, err, ErrNoPositives, c.Name())
			assert.ErrorContains(t, err, "group 2 has 5 evaluated nodes, none positive")
		default:
			assert.NoError(t, err, c.Name())
		}
	}
	// Group 1 without negatives: the false-positive rate's criteria fail.
	labels = append([]int(nil), triLabels...)
	labels[8], labels[9] = 1, 1
	for _, c := range []Criterion{FPRDifference, FPRRatio, EOddsDifference, EOddsRatio} {
		_, err := c.Measure(triPred, labels, triSens)
		assert.ErrorIs(t, err, ErrNoNegatives, c.Name())
	}
	// An empty group 1 (ids 0 and 2 only) and a single group.
	sens := append([]int(nil), triSens...)
	for i, s := range sens {
		if s == 1 {
			sens[i] = 0
		}
	}
	for _, c := range Criteria() {
		_, err := c.Measure(triPred, triLabels, sens)
		assert.ErrorIs(t, err, ErrEmptyGroup, c.Name())
		_, err = c.Measure(triPred, triLabels, make([]int, len(sens)))
		assert.ErrorIs(t, err, ErrEmptyGroup, c.Name())
	}
}

// TestFrameHandComputed: NewFrame and Breakdown.Frame give fairlearn's
// MetricFrame values: overall, by group, min, max, and the differences and
// ratios between groups and to the overall value.
func TestFrameHandComputed(t *testing.T) {
	b, err := ByGroup(triPred, triLabels, triSens)
	require.NoError(t, err)
	sr, err := b.Frame(SelectionRate)
	require.NoError(t, err)
	assert.Equal(t, "selection_rate", sr.Name)
	near(t, "overall", sr.Overall, 8.0/15)
	require.Len(t, sr.ByGroup, 3)
	for g, w := range []float64{0.5, 0.75, 0.4} {
		near(t, "by group", sr.ByGroup[g], w)
	}
	assert.Equal(t, []int{6, 4, 5}, sr.Counts)
	lo, glo := sr.GroupMin()
	hi, ghi := sr.GroupMax()
	near(t, "min", lo, 0.4)
	near(t, "max", hi, 0.75)
	assert.Equal(t, 2, glo)
	assert.Equal(t, 1, ghi)
	near(t, "difference", sr.Difference(BetweenGroups), 0.35)
	near(t, "difference to overall", sr.Difference(ToOverall), 0.75-8.0/15)
	r, err := sr.Ratio(BetweenGroups)
	require.NoError(t, err)
	near(t, "ratio", r, 0.4/0.75)
	// To overall: 0.5/(8/15) = 15/16, 0.75/(8/15) = 45/32 → 32/45,
	// 0.4/(8/15) = 3/4; the smallest is 32/45.
	r, err = sr.Ratio(ToOverall)
	require.NoError(t, err)
	near(t, "ratio to overall", r, 32.0/45)

	// Accuracy through NewFrame, any metric of predictions and labels:
	// 4/6, 3/4, 3/5, overall 10/15.
	acc, err := NewFrame("accuracy", Accuracy, triPred, triLabels, triSens)
	require.NoError(t, err)
	near(t, "overall accuracy", acc.Overall, 10.0/15)
	for g, w := range []float64{4.0 / 6, 3.0 / 4, 3.0 / 5} {
		near(t, "accuracy by group", acc.ByGroup[g], w)
	}
	ar, err := b.Frame(AccuracyRate)
	require.NoError(t, err)
	assert.Equal(t, acc.ByGroup, ar.ByGroup)
	assert.Equal(t, acc.Overall, ar.Overall)
	near(t, "accuracy difference to overall", acc.Difference(ToOverall), 3.0/4-10.0/15) // group 1

	// F1 by group: group 0 TP 2 FP 1 FN 1 → 4/6; group 1 TP 2 FP 1 FN 0
	// → 4/5; group 2 TP 1 FP 1 FN 1 → 2/4.
	f1, err := NewFrame("f1", F1, triPred, triLabels, triSens)
	require.NoError(t, err)
	for g, w := range []float64{4.0 / 6, 4.0 / 5, 2.0 / 4} {
		near(t, "F1 by group", f1.ByGroup[g], w)
	}
	// A metric failing on a group names it.
	labels := append([]int(nil), triLabels...)
	for i := 10; i < 15; i++ {
		labels[i] = 0
	}
	pred := append([]int(nil), triPred...)
	for i := 10; i < 15; i++ {
		pred[i] = 0
	}
	_, err = NewFrame("f1", F1, pred, labels, triSens)
	assert.ErrorIs(t, err, ErrNoPositives)
	assert.ErrorContains(t, err, "f1 of group 2")
}

func TestFrameRatioZeros(t *testing.T) {
	f := &Frame{Name: "selection_rate", Overall: 0, ByGroup: []float64{0, 0}}
	_, err := f.Ratio(BetweenGroups)
	assert.ErrorIs(t, err, ErrZeroRate)
	_, err = f.Ratio(ToOverall)
	assert.ErrorIs(t, err, ErrZeroRate)
	assert.Zero(t, f.Difference(BetweenGroups))
	f = &Frame{Name: "m", Overall: 0.2, ByGroup: []float64{0, 0.4}}
	r, err := f.Ratio(BetweenGroups)
	require.NoError(t, err)
	assert.Zero(t, r)
	r, err = f.Ratio(ToOverall)
	require.NoError(t, err)
	assert.Zero(t, r) // 0/0.2 = 0 beats 0.2/0.4
	f = &Frame{Name: "m", Overall: 0.2, ByGroup: []float64{-0.1, 0.4}}
	_, err = f.Ratio(BetweenGroups)
	assert.ErrorIs(t, err, ErrValue)
}

func TestParseCriterion(t *testing.T) {
	for _, c := range Criteria() {
		got, err := ParseCriterion(c.Name())
		require.NoError(t, err)
		assert.Equal(t, c, got)
		got, err = ParseCriterion(" " + c.Fairlearn() + " ")
		require.NoError(t, err)
		assert.Equal(t, c, got)
		assert.Equal(t, c.Name(), c.String())
		assert.NotEmpty(t, c.Title())
		assert.NotEmpty(t, c.Rates())
	}
	_, err := ParseCriterion("parity")
	assert.ErrorIs(t, err, ErrValue)
	assert.ErrorContains(t, err, "want one of dp, dp-ratio, eo, eo-ratio, eodds, eodds-ratio, fpr, fpr-ratio")
	assert.Equal(t, DPDifference, Criterion(0), "the zero value is ΔDP")
	assert.True(t, DPRatio.Better(0.9, 0.8))
	assert.True(t, DPDifference.Better(0.1, 0.2))
	assert.True(t, DPRatio.Meets(0.8, 0.8))
	assert.True(t, DPRatio.Meets(4.0/5, 0.8))
	assert.False(t, DPRatio.Meets(0.79, 0.8))
	assert.True(t, EODifference.Meets(0.05, 0.05))
	assert.False(t, EODifference.Meets(0.051, 0.05))
	assert.Error(t, Criterion(-1).Validate())
}

// TestBootstrapEveryCriterion: the intervals cover every criterion
// defined on the evaluated nodes, with Evaluate's point, on three groups.
func TestBootstrapEveryCriterion(t *testing.T) {
	probs := make([]float64, 2*len(triPred))
	for i, y := range triPred {
		probs[2*i+y] = 1
	}
	r, err := Evaluate(probs, 2, triLabels, triSens, nil, DefaultOptions())
	require.NoError(t, err)
	cfg := DefaultBootstrapConfig()
	cfg.Resamples = 200
	iv, err := Bootstrap(probs, 2, triLabels, triSens, nil, DefaultOptions(), cfg)
	require.NoError(t, err)
	require.Len(t, iv.Criteria, len(Criteria()))
	for _, c := range Criteria() {
		p, err := c.Of(r)
		require.NoError(t, err)
		got, ok := iv.Of(c)
		require.True(t, ok, c.Name())
		assert.Equal(t, p, got.Point, c.Name())
		assert.LessOrEqual(t, got.Lo, got.Hi, c.Name())
		assert.Positive(t, got.Used, c.Name())
	}
	assert.Equal(t, iv.Criteria[DPDifference], iv.DemographicParity)
	assert.Equal(t, iv.Criteria[EODifference], iv.EqualOpportunity)
	// Nobody selected: no ratio interval, the differences are 0.
	none := make([]float64, len(probs))
	for i := range triPred {
		none[2*i] = 1
	}
	iv, err = Bootstrap(none, 2, triLabels, triSens, nil, DefaultOptions(), cfg)
	require.NoError(t, err)
	for _, c := range Criteria() {
		_, ok := iv.Of(c)
		assert.Equal(t, !c.IsRatio(), ok, c.Name())
	}
}

func TestBootstrapFrame(t *testing.T) {
	cfg := DefaultBootstrapConfig()
	cfg.Resamples = 300
	iv, err := BootstrapFrame("accuracy", Accuracy, triPred, triLabels, triSens, cfg)
	require.NoError(t, err)
	f, err := NewFrame("accuracy", Accuracy, triPred, triLabels, triSens)
	require.NoError(t, err)
	assert.Equal(t, f.Overall, iv.Overall.Point)
	for g := range f.ByGroup {
		assert.Equal(t, f.ByGroup[g], iv.ByGroup[g].Point)
		assert.Equal(t, 300, iv.ByGroup[g].Used)
	}
	assert.Equal(t, f.Difference(BetweenGroups), iv.Difference.Point)
	assert.Equal(t, f.Difference(ToOverall), iv.DifferenceToOverall.Point)
	r, err := f.Ratio(BetweenGroups)
	require.NoError(t, err)
	require.NotNil(t, iv.Ratio)
	assert.Equal(t, r, iv.Ratio.Point)
	require.NotNil(t, iv.RatioToOverall)
	assert.Equal(t, 15, iv.Evaluated)
	again, err := BootstrapFrame("accuracy", Accuracy, triPred, triLabels, triSens, cfg)
	require.NoError(t, err)
	assert.Equal(t, iv, again, "seeded: the same intervals")
	// F1 fails on resamples where a group draws no positive and no
	// selected node: those are skipped, and counted.
	iv, err = BootstrapFrame("f1", F1, triPred, triLabels, triSens, cfg)
	require.NoError(t, err)
	assert.LessOrEqual(t, iv.Overall.Used, 300)
}
