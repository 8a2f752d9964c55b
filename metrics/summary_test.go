package metrics

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestMeanStd(t *testing.T) {
	st, err := MeanStd([]float64{0.2, 0.4, 0.6, 0.8})
	require.NoError(t, err)
	near(t, "mean", st.Mean, 0.5)
	near(t, "std", st.Std, math.Sqrt(0.05)) // (0.09+0.01+0.01+0.09)/4
	assert.Equal(t, "50.00±22.36", st.String())
	_, err = MeanStd(nil)
	assert.ErrorIs(t, err, ErrEmpty, "empty")
	_, err = MeanStd([]float64{1, math.NaN()})
	assert.ErrorIs(t, err, ErrValue, "NaN")
	one, err := MeanStd([]float64{0.7})
	require.NoError(t, err)
	assert.Equal(t, 0.7, one.Mean, "single value")
	assert.Equal(t, 0.0, one.Std, "single value")
}

func TestSummarize(t *testing.T) {
	rs := []Report{
		{Accuracy: 0.70, F1: 0.6, AUC: 0.8, DemographicParity: 0.01, EqualOpportunity: 0.02, EqualizedOdds: 0.03},
		{Accuracy: 0.72, F1: 0.6, AUC: 0.8, DemographicParity: 0.03, EqualOpportunity: 0.02, EqualizedOdds: 0.05},
	}
	s, err := Summarize(rs)
	require.NoError(t, err)
	assert.Equal(t, 2, s.Runs)
	near(t, "acc mean", s.Accuracy.Mean, 0.71)
	near(t, "acc std", s.Accuracy.Std, 0.01)
	near(t, "ΔDP mean", s.DemographicParity.Mean, 0.02)
	near(t, "ΔDP std", s.DemographicParity.Std, 0.01)
	near(t, "odds mean", s.EqualizedOdds.Mean, 0.04)
	near(t, "F1 std", s.F1.Std, 0)
	want := "   71.00±1.00    60.00±0.00    80.00±0.00     2.00±1.00     2.00±0.00     4.00±1.00    2"
	assert.Equal(t, want, s.String())
	h := SummaryHeader()
	assert.Equal(t, len([]rune(want)), len([]rune(h)), "header %q is as wide as a row", h)
	_, err = Summarize(nil)
	assert.ErrorIs(t, err, ErrEmpty, "no reports")
}
