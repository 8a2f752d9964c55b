package metrics

import (
	"fmt"
	"math"
	"strings"
)

// Stat is the mean and the population standard deviation (divisor n, as
// the FMP paper's tables) of one metric over repeated runs.
type Stat struct {
	Mean float64 `json:"mean"`
	Std  float64 `json:"std"`
}

// MeanStd returns the mean and population standard deviation of xs. It
// returns an error wrapping ErrEmpty for no values and ErrValue for a NaN
// or infinite value.
func MeanStd(xs []float64) (Stat, error) {
	if len(xs) == 0 {
		return Stat{}, fmt.Errorf("%w: no values", ErrEmpty)
	}
	var sum float64
	for i, x := range xs {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return Stat{}, fmt.Errorf("%w: value %d = %v, want a finite number", ErrValue, i, x)
		}
		sum += x
	}
	mean := sum / float64(len(xs))
	var ss float64
	for _, x := range xs {
		ss += (x - mean) * (x - mean)
	}
	return Stat{Mean: mean, Std: math.Sqrt(ss / float64(len(xs)))}, nil
}

// String formats s in percent as "mean±std" with two decimals.
func (s Stat) String() string {
	return fmt.Sprintf("%.2f±%.2f", Percent(s.Mean), Percent(s.Std))
}

// Summary aggregates the Reports of repeated runs (seeds) of one
// experiment: each metric's mean and population standard deviation.
type Summary struct {
	// Runs is the number of reports aggregated.
	Runs              int  `json:"runs"`
	Accuracy          Stat `json:"accuracy"`
	F1                Stat `json:"f1"`
	AUC               Stat `json:"auc"`
	DemographicParity Stat `json:"demographic_parity"`
	EqualOpportunity  Stat `json:"equal_opportunity"`
	EqualizedOdds     Stat `json:"equalized_odds"`
}

// Summarize returns the mean ± population std of every metric over
// reports. It returns an error wrapping ErrEmpty when reports is empty.
func Summarize(reports []Report) (Summary, error) {
	if len(reports) == 0 {
		return Summary{}, fmt.Errorf("%w: no reports to summarize", ErrEmpty)
	}
	s := Summary{Runs: len(reports)}
	fields := []struct {
		dst *Stat
		get func(Report) float64
	}{
		{&s.Accuracy, func(r Report) float64 { return r.Accuracy }},
		{&s.F1, func(r Report) float64 { return r.F1 }},
		{&s.AUC, func(r Report) float64 { return r.AUC }},
		{&s.DemographicParity, func(r Report) float64 { return r.DemographicParity }},
		{&s.EqualOpportunity, func(r Report) float64 { return r.EqualOpportunity }},
		{&s.EqualizedOdds, func(r Report) float64 { return r.EqualizedOdds }},
	}
	xs := make([]float64, len(reports))
	for _, f := range fields {
		for i, r := range reports {
			xs[i] = f.get(r)
		}
		st, err := MeanStd(xs)
		if err != nil {
			return Summary{}, err
		}
		*f.dst = st
	}
	return s, nil
}

// SummaryHeader returns the column titles matching Summary.String.
func SummaryHeader() string {
	return fmt.Sprintf("%13s %13s %13s %13s %13s %13s %4s", append(reportTitles(), "runs")...)
}

// String formats s as one table row under [SummaryHeader]: every metric as
// mean±std in percent with two decimals, then the number of runs.
func (s Summary) String() string {
	var b strings.Builder
	for _, st := range []Stat{s.Accuracy, s.F1, s.AUC, s.DemographicParity, s.EqualOpportunity, s.EqualizedOdds} {
		fmt.Fprintf(&b, "%13s ", st)
	}
	fmt.Fprintf(&b, "%4d", s.Runs)
	return b.String()
}
