package metrics

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// codes returns the diagnostics' codes.
func codes(ds []Diagnostic) []DiagnosticCode {
	var out []DiagnosticCode
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
	rep, err := EvaluateBinary(p1, labels, sens, nil, DefaultOptions())
	require.NoError(t, err)
	require.Equal(t, 0.7, rep.Accuracy)
	require.Equal(t, 0.0, rep.DemographicParity)
	ds, err := DiagnoseReport(rep, "thresholds", DefaultDiagnoseConfig())
	require.NoError(t, err)
	assert.Equal(t, []DiagnosticCode{BelowMajority, TrivialSelection}, codes(ds))
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
	rep, err := EvaluateBinary(p1, labels, sens, nil, DefaultOptions())
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

	ds, err := DiagnoseReport(rep, "fmp", DefaultDiagnoseConfig())
	require.NoError(t, err)
	assert.Nil(t, below(ds), "70.40%% is above 70.00%%: %v", ds)

	wide := Interval{Point: 0.704, Lo: 0.678, Hi: 0.729}
	ds, err = DiagnoseReportWithin(rep, &wide, "fmp", DefaultDiagnoseConfig())
	require.NoError(t, err)
	d := below(ds)
	require.NotNil(t, d, "the interval reaches the majority rate")
	assert.Equal(t, "not above the majority rate: accuracy 70.40%, interval [67.80%, 72.90%], is not shown to be above the 70.00% that predicting the more frequent class for every one of these 500 nodes scores", d.Message)

	narrow := Interval{Point: 0.704, Lo: 0.701, Hi: 0.707}
	ds, err = DiagnoseReportWithin(rep, &narrow, "fmp", DefaultDiagnoseConfig())
	require.NoError(t, err)
	assert.Nil(t, below(ds), "an interval above the majority rate")

	assert.True(t, NotAboveMajority(0.7, nil, 0.7), "at the rate")
	assert.False(t, NotAboveMajority(0.7001, nil, 0.7))
	assert.True(t, NotAboveMajority(0.75, &Interval{Point: 0.75, Lo: 0.7, Hi: 0.8}, 0.7), "the low end at the rate")
	assert.False(t, NotAboveMajority(0.69, &Interval{Point: math.NaN()}, 0.6), "an undefined interval: the point decides")
	_, ok = Report{Classes: 3, Overall: GroupStats{Count: 5}}.MajorityRate()
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
	rep, err := EvaluateBinary(p1, labels, sens, nil, DefaultOptions())
	require.NoError(t, err)
	ds, err := DiagnoseReport(rep, "fmp", DefaultDiagnoseConfig())
	require.NoError(t, err)
	assert.Empty(t, ds)

	cfg := DefaultDiagnoseConfig()
	cfg.MinGroupCount = 101
	ds, err = DiagnoseReport(rep, "fmp", cfg)
	require.NoError(t, err)
	assert.Equal(t, []DiagnosticCode{SmallGroup, SmallGroup}, codes(ds))
	assert.Contains(t, ds[0].Message, "group 0 has 100 evaluated nodes: one node moves its rates by 1.0 points")
	cfg.GroupNames = []string{"urban", "rural"}
	ds, err = DiagnoseReport(rep, "fmp", cfg)
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
	rep, err = EvaluateBinary(p1, labels, sens, nil, DefaultOptions())
	require.NoError(t, err)
	ds, err = DiagnoseReport(rep, "backbone", DefaultDiagnoseConfig())
	require.NoError(t, err)
	assert.Equal(t, []DiagnosticCode{BelowMajority, TrivialSelection, ImbalancedLabel}, codes(ds))
	assert.Contains(t, ds[1].Message, "selects no node")

	bad := DefaultDiagnoseConfig()
	bad.TrivialRate = 0.7
	_, err = DiagnoseReport(rep, "x", bad)
	assert.ErrorIs(t, err, ErrValue)
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
	ds, err := DiagnoseFeatures(x, 3, []string{"gender", "g2", "age"}, sens, DefaultDiagnoseConfig())
	require.NoError(t, err)
	require.Len(t, ds, 2)
	assert.Equal(t, SensitiveLeak, ds[0].Code)
	assert.Contains(t, ds[0].Message, `feature "g2" is (nearly) the sensitive attribute: correlation -1.000`)
	assert.Contains(t, ds[1].Message, `feature "gender" is (nearly) the sensitive attribute: correlation 1.000`)
	_, err = DiagnoseFeatures(x, 4, nil, sens, DefaultDiagnoseConfig())
	assert.ErrorIs(t, err, ErrLength)

	// Three groups: the indicator of each group is tried.
	for i := 0; i < n; i++ {
		sens[i] = i % 3
		x[3*i] = 0
		if sens[i] == 2 {
			x[3*i] = 1
		}
	}
	ds, err = DiagnoseFeatures(x, 3, nil, sens, DefaultDiagnoseConfig())
	require.NoError(t, err)
	require.Len(t, ds, 1)
	assert.Contains(t, ds[0].Message, "feature column 0 is (nearly) the sensitive attribute: correlation 1.000 with membership of group 2")
}
