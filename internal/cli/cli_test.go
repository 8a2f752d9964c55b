package cli

import (
	"math"
	"testing"

	"github.com/fairmp/fairmp/metrics"
	"github.com/fairmp/fairmp/metrics/selection"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestLists(t *testing.T) {
	assert.Equal(t, []string{"a", "b", "c"}, SplitList(" a, b,,c ,"))
	assert.Nil(t, SplitList(" , "))

	f, err := ParseFloats("2, 0.5,1e1", 0)
	require.NoError(t, err)
	assert.Equal(t, []float64{2, 0.5, 10}, f, "in the order given")
	f, err = ParseFloats("-3,4", math.Inf(-1))
	require.NoError(t, err)
	assert.Equal(t, []float64{-3, 4}, f)
	for s, want := range map[string]string{
		"1,-0.5": `"-0.5" is below 0`,
		"1,x":    `"x" is not a finite number`,
		"NaN":    `"NaN" is not a finite number`,
		"1,Inf":  `"Inf" is not a finite number`,
		" , ":    "no values",
	} {
		_, err := ParseFloats(s, 0)
		assert.EqualError(t, err, want, s)
	}

	n, err := ParseInts("10, -1", -1)
	require.NoError(t, err)
	assert.Equal(t, []int{10, -1}, n)
	for s, want := range map[string]string{
		"10,-2": `"-2" is below -1`,
		"1.5":   `"1.5" is not an integer`,
		"":      "no values",
	} {
		_, err := ParseInts(s, -1)
		assert.EqualError(t, err, want, s)
	}
}

func TestRule(t *testing.T) {
	r, err := Rule(RuleFlags{Criterion: "dp", MaxAccLoss: 1})
	require.NoError(t, err)
	assert.Equal(t, selection.FairestWithin(metrics.DPDifference, 0.01), r)
	r, err = Rule(RuleFlags{Criterion: "eo", Bound: 5, SetBound: true})
	require.NoError(t, err)
	assert.Equal(t, selection.MostAccurateWithin(metrics.EODifference, 0.05), r)
	r, err = Rule(RuleFlags{Criterion: "dp-ratio", Bound: 0.8, SetBound: true, MaxAccLoss: 1})
	require.NoError(t, err)
	assert.Equal(t, selection.MostAccurateWithin(metrics.DPRatio, 0.8), r)
	for _, c := range []struct {
		f    RuleFlags
		want string
	}{
		{RuleFlags{Criterion: "parity", MaxAccLoss: 1}, `-criterion "parity", want one of`},
		{RuleFlags{Criterion: "dp", MaxAccLoss: 1, SetMaxAccLoss: true, Bound: 5, SetBound: true}, "two rules, want one"},
		{RuleFlags{Criterion: "dp-ratio", Bound: 80, SetBound: true}, "-bound 80 for -criterion dp-ratio, want the smallest allowed ratio in (0, 1]"},
		{RuleFlags{Criterion: "dp", Bound: 150, SetBound: true}, "-bound 150 for -criterion dp, want the largest allowed difference in points"},
		{RuleFlags{Criterion: "dp", MaxAccLoss: 0}, "-max-acc-loss 0, want accuracy points in (0, 50): 1 is one point"},
	} {
		_, err := Rule(c.f)
		assert.ErrorContains(t, err, c.want)
	}
}
