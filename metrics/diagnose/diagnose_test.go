package diagnose

import (
	"math"
	"testing"

	"github.com/fairmp/fairmp/metrics"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// codes returns the diagnostics' codes.
func codes(ds []Diagnostic) []Code {
	var out []Code
	for _, d := range ds {
		out = append(out, d.Code)
	}
	return out
}

// A constant classifier on 70% positives: at the majority rate, selecting
// everyone (ΔDP 0 by triviality). The audit's credit-graph case.
func TestDiagnoseConstantClassifier(t *testing.T) {
	n := 100
	labels, sens, p1 := make([]int, n), make([]int, n), make([]float64, n)
	for i := range labels {
		if i%10 < 7 {
			labels[i] = 1
		}
		sens[i] = i % 2
		p1[i] = 0.9 // everyone selected
	}
	rep, err := metrics.EvaluateBinary(p1, labels, sens, nil, metrics.DefaultOptions())
	require.NoError(t, err)
	require.Equal(t, 0.7, rep.Accuracy)
	require.Equal(t, 0.0, rep.DemographicParity)
	ds, err := Report(rep, nil, "thresholds", DefaultConfig())
	require.NoError(t, err)
	assert.Equal(t, []Code{BelowMajority, TrivialSelection}, codes(ds))
	assert.Contains(t, ds[0].Message, "not above the majority rate: accuracy 70.00% is at or below the 70.00% that predicting the more frequent class for every one of these 100 nodes scores")
	assert.Contains(t, ds[1].Message, "selects every node (100.00% selected)")
	assert.Equal(t, "thresholds", ds[0].Subject)
	assert.Contains(t, ds[0].String(), "thresholds [below-majority]: not above the majority rate: accuracy")
}

// Issue 53 A7: a row at 70.40% against a 70.00% majority was reported
// "no better" than the majority rate because of a 0.5-point margin. One
// rule now: at or below the majority rate, or, with the accuracy's
// interval, an interval that reaches down to it; the message says which.
func TestDiagnoseNotAboveMajority(t *testing.T) {
	n := 500
	labels, sens, p1 := make([]int, n), make([]int, n), make([]float64, n)
	for i := range labels {
		sens[i] = i % 2
		if i < 350 { // 70% positives
			labels[i] = 1
		}
		p1[i] = 0.9
		if (i >= 350 && i < 370) || i < 18 {
			p1[i] = 0.1 // 20 negatives right, 18 positives wrong
		}
	}
	rep, err := metrics.EvaluateBinary(p1, labels, sens, nil, metrics.DefaultOptions())
	require.NoError(t, err)
	require.InDelta(t, 0.704, rep.Accuracy, 1e-12)
	major, ok := rep.MajorityRate()
	require.True(t, ok)
	require.InDelta(t, 0.7, major, 1e-12)
	below := func(ds []Diagnostic) *Diagnostic {
		for k := range ds {
			if ds[k].Code == BelowMajority {
				return &ds[k]
			}
		}
		return nil
	}

	ds, err := Report(rep, nil, "fmp", DefaultConfig())
	require.NoError(t, err)
	assert.Nil(t, below(ds), "70.40%% is above 70.00%%: %v", ds)

	wide := metrics.Interval{Point: 0.704, Lo: 0.678, Hi: 0.729}
	ds, err = Report(rep, &wide, "fmp", DefaultConfig())
	require.NoError(t, err)
	d := below(ds)
	require.NotNil(t, d, "the interval reaches the majority rate")
	assert.Equal(t, "not above the majority rate: accuracy 70.40%, interval [67.80%, 72.90%], is not shown to be above the 70.00% that predicting the more frequent class for every one of these 500 nodes scores", d.Message)

	narrow := metrics.Interval{Point: 0.704, Lo: 0.701, Hi: 0.707}
	ds, err = Report(rep, &narrow, "fmp", DefaultConfig())
	require.NoError(t, err)
	assert.Nil(t, below(ds), "an interval above the majority rate")

	assert.True(t, NotAboveMajority(0.7, nil, 0.7), "at the rate")
	assert.False(t, NotAboveMajority(0.7001, nil, 0.7))
	assert.True(t, NotAboveMajority(0.75, &metrics.Interval{Point: 0.75, Lo: 0.7, Hi: 0.8}, 0.7), "the low end at the rate")
	assert.False(t, NotAboveMajority(0.69, &metrics.Interval{Point: math.NaN()}, 0.6), "an undefined interval: the point decides")
	_, ok = metrics.Report{Classes: 3, Overall: metrics.GroupStats{Count: 5}}.MajorityRate()
	assert.False(t, ok, "binary reports only")
}

// A good classifier on balanced labels and large groups gets nothing; a
// small group and a rare class are reported.
func TestDiagnoseReport(t *testing.T) {
	n := 200
	labels, sens, p1 := make([]int, n), make([]int, n), make([]float64, n)
	for i := range labels {
		labels[i] = i % 2
		sens[i] = (i / 2) % 2
		p1[i] = 0.1 + 0.8*float64(labels[i])
		if i%20 == 0 {
			p1[i] = 1 - p1[i] // 10% wrong
		}
	}
	rep, err := metrics.EvaluateBinary(p1, labels, sens, nil, metrics.DefaultOptions())
	require.NoError(t, err)
	ds, err := Report(rep, nil, "fmp", DefaultConfig())
	require.NoError(t, err)
	assert.Empty(t, ds)

	cfg := DefaultConfig()
	cfg.MinGroupCount = 101
	ds, err = Report(rep, nil, "fmp", cfg)
	require.NoError(t, err)
	assert.Equal(t, []Code{SmallGroup, SmallGroup}, codes(ds))
	assert.Contains(t, ds[0].Message, "group 0 has 100 evaluated nodes: one node moves its rates by 1.0 points")
	cfg.GroupNames = []string{"urban", "rural"}
	ds, err = Report(rep, nil, "fmp", cfg)
	require.NoError(t, err)
	assert.Contains(t, ds[1].Message, `group "rural" has 100 evaluated nodes`)
	assert.Equal(t, "1 evaluated node", plural(1, "evaluated node"))

	for i := range labels {
		labels[i] = 0
		if i%25 == 0 {
			labels[i] = 1 // 4%, in both groups
		}
		p1[i] = 0.1
	}
	rep, err = metrics.EvaluateBinary(p1, labels, sens, nil, metrics.DefaultOptions())
	require.NoError(t, err)
	ds, err = Report(rep, nil, "backbone", DefaultConfig())
	require.NoError(t, err)
	assert.Equal(t, []Code{BelowMajority, TrivialSelection, ImbalancedLabel}, codes(ds))
	assert.Contains(t, ds[1].Message, "selects no node")

	bad := DefaultConfig()
	bad.TrivialRate = 0.7
	_, err = Report(rep, nil, "x", bad)
	assert.ErrorIs(t, err, metrics.ErrValue)
}

// A feature equal to the group (or its negation, or nearly) is a leak;
// others are not.
func TestDiagnoseFeatures(t *testing.T) {
	n := 50
	sens := make([]int, n)
	x := make([]float64, 3*n)
	for i := 0; i < n; i++ {
		sens[i] = i % 2
		x[3*i] = float64(sens[i])         // the attribute itself
		x[3*i+1] = 5 - 2*float64(sens[i]) // a rescaled, negated copy
		x[3*i+2] = float64(i % 7)         // unrelated
	}
	sens[3] = -1 // unknown: left out
	ds, err := Features(x, 3, []string{"gender", "g2", "age"}, sens, DefaultConfig())
	require.NoError(t, err)
	require.Len(t, ds, 2)
	assert.Equal(t, SensitiveLeak, ds[0].Code)
	assert.Contains(t, ds[0].Message, `feature "g2" is (nearly) the sensitive attribute: correlation -1.000`)
	assert.Contains(t, ds[1].Message, `feature "gender" is (nearly) the sensitive attribute: correlation 1.000`)
	_, err = Features(x, 4, nil, sens, DefaultConfig())
	assert.ErrorIs(t, err, metrics.ErrLength)

	// Three groups: the indicator of each group is tried.
	for i := 0; i < n; i++ {
		sens[i] = i % 3
		x[3*i] = 0
		if sens[i] == 2 {
			x[3*i] = 1
		}
	}
	ds, err = Features(x, 3, nil, sens, DefaultConfig())
	require.NoError(t, err)
	require.Len(t, ds, 1)
	assert.Contains(t, ds[0].Message, "feature column 0 is (nearly) the sensitive attribute: correlation 1.000 with membership of group 2")
}

// TestDiagnoseUndefined: each undefined metric of a report is one
// UndefinedMetric diagnostic naming the metric and the group by its name.
func TestDiagnoseUndefined(t *testing.T) {
	// metrics' undefinedCase: group 1 has no negative node, so no ΔEOdds.
	p, labels, sens := []float64{0.9, 0.2, 0.8, 0.3}, []int{1, 0, 1, 1}, []int{0, 0, 1, 1}
	opt := metrics.DefaultOptions()
	opt.AllowUndefined = true
	r, err := metrics.EvaluateBinary(p, labels, sens, nil, opt)
	require.NoError(t, err)
	cfg := DefaultConfig()
	cfg.GroupNames = []string{"north", "south"}
	ds, err := Report(r, nil, "fmp", cfg)
	require.NoError(t, err)
	var found []Diagnostic
	for _, d := range ds {
		if d.Code == UndefinedMetric {
			found = append(found, d)
		}
	}
	require.Len(t, found, 1)
	assert.Equal(t, "fmp", found[0].Subject)
	assert.Contains(t, found[0].Message, "ΔEOdds is undefined")
	assert.Contains(t, found[0].Message, `group "south"`)
	assert.NotContains(t, found[0].Message, "group 1")
	assert.Contains(t, found[0].Advice, "n/a")
}
