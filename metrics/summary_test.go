package metrics

import (
	"errors"
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestMeanStd(t *testing.T) {
	st, err := MeanStd([]float64{0.2, 0.4, 0.6, 0.8})
	require.NoError(t, err)
	near(t, "mean", st.Mean, 0.5)
	near(t, "std", st.Std, math.Sqrt(0.05)) // (0.09+0.01+0.01+0.09)/4
	if got := st.String(); got != "50.00±22.36" {
		t.Errorf("String() = %q, want 50.00±22.36", got)
	}
	if _, err := MeanStd(nil); !errors.Is(err, ErrEmpty) {
		t.Errorf("empty: err = %v", err)
	}
	if _, err := MeanStd([]float64{1, math.NaN()}); !errors.Is(err, ErrValue) {
		t.Errorf("NaN: err = %v", err)
	}
	one, err := MeanStd([]float64{0.7})
	if err != nil || one.Mean != 0.7 || one.Std != 0 {
		t.Errorf("single value: %+v, %v", one, err)
	}
}

func TestSummarize(t *testing.T) {
	rs := []Report{
		{Accuracy: 0.70, F1: 0.6, AUC: 0.8, DemographicParity: 0.01, EqualOpportunity: 0.02, EqualizedOdds: 0.03},
		{Accuracy: 0.72, F1: 0.6, AUC: 0.8, DemographicParity: 0.03, EqualOpportunity: 0.02, EqualizedOdds: 0.05},
	}
	s, err := Summarize(rs)
	require.NoError(t, err)
	if s.Runs != 2 {
		t.Errorf("runs %d", s.Runs)
	}
	near(t, "acc mean", s.Accuracy.Mean, 0.71)
	near(t, "acc std", s.Accuracy.Std, 0.01)
	near(t, "ΔDP mean", s.DemographicParity.Mean, 0.02)
	near(t, "ΔDP std", s.DemographicParity.Std, 0.01)
	near(t, "odds mean", s.EqualizedOdds.Mean, 0.04)
	near(t, "F1 std", s.F1.Std, 0)
	want := "   71.00±1.00    60.00±0.00    80.00±0.00     2.00±1.00     2.00±0.00     4.00±1.00    2"
	if got := s.String(); got != want {
		t.Errorf("String() = %q\nwant        %q", got, want)
	}
	if h := SummaryHeader(); len([]rune(h)) != len([]rune(want)) {
		t.Errorf("header %q has %d runes, row %d", h, len([]rune(h)), len([]rune(want)))
	}
	if _, err := Summarize(nil); !errors.Is(err, ErrEmpty) {
		t.Errorf("no reports: err = %v", err)
	}
}
