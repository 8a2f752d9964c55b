package postprocess

import (
	"testing"

	"github.com/fairmp/fairmp/metrics"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestFitThresholds on a hand-computed case: eight validation nodes, four
// per group. With 0.5 for both, group 0 selects 3 of 4 and group 1 none
// (ΔDP 0.75) with 5 of 8 correct (3 in group 0, 2 in group 1). Thresholds
// 0.6 and 0.1 select exactly the positives: ΔDP 0, 8 of 8 correct.
func TestFitThresholds(t *testing.T) {
	p1 := []float64{0.9, 0.8, 0.6, 0.2, 0.45, 0.35, 0.1, 0.05, 0.99}
	labels := []int{1, 1, 0, 0, 1, 1, 0, 0, 1}
	sens := []int{0, 0, 0, 0, 1, 1, 1, 1, 0}
	val := []int{0, 1, 2, 3, 4, 5, 6, 7}
	cfg := DefaultThresholdsConfig()
	th, err := FitThresholds(p1, labels, sens, val, cfg)
	require.NoError(t, err)
	assert.Equal(t, metrics.Candidate{Accuracy: 5.0 / 8, DemographicParity: 0.75}, th.Reference)
	// Every group-0 threshold in [0.6, 0.8) with group 1 at [0.1, 0.35):
	// 2 of 4 selected in each group, all correct.
	assert.Equal(t, metrics.Candidate{Accuracy: 1, DemographicParity: 0}, th.Val)
	assert.Equal(t, [2]float64{0.6, 0.1}, th.T)
	assert.Equal(t, []int{1, 1, 0, 0, 1, 1, 0, 0, 1}, th.Decide(p1, sens))
	r, err := metrics.Evaluate(th.Probs(p1, sens), 2, labels, sens, val, metrics.DefaultOptions())
	require.NoError(t, err)
	assert.Equal(t, 1.0, r.Accuracy)
	assert.Equal(t, 0.0, r.DemographicParity)
	// Highest accuracy with ΔDP ≤ 0.3 is the same pair.
	cfg.Rule = metrics.Rule{MaxDP: 0.3}
	th2, err := FitThresholds(p1, labels, sens, val, cfg)
	require.NoError(t, err)
	assert.Equal(t, th.Val, th2.Val)
}

func TestFitThresholdsErrors(t *testing.T) {
	p1 := []float64{0.9, 0.1, 0.6}
	cfg := DefaultThresholdsConfig()
	for name, c := range map[string]struct {
		p1           []float64
		labels, sens []int
		val          []int
		cfg          ThresholdsConfig
		want         string
	}{
		"lengths":   {p1, []int{1, 0}, []int{0, 1, 0}, []int{0}, cfg, "one each per node"},
		"range":     {p1, []int{1, 0, 1}, []int{0, 1, 0}, []int{5}, cfg, "val[0] = 5"},
		"prob":      {[]float64{0.9, 1.5, 0.6}, []int{1, 0, 1}, []int{0, 1, 0}, []int{0, 1}, cfg, "want a probability"},
		"groups":    {p1, []int{1, 0, 1}, []int{0, 2, 0}, []int{0, 1}, cfg, "groups 0, 1"},
		"empty":     {p1, []int{1, 0, 1}, []int{0, 0, 0}, []int{0, 1}, cfg, "group 1 has no validation node"},
		"rule":      {p1, []int{1, 0, 1}, []int{0, 1, 0}, []int{0, 1}, ThresholdsConfig{Candidates: 10}, "Rule"},
		"candidate": {p1, []int{1, 0, 1}, []int{0, 1, 0}, []int{0, 1}, ThresholdsConfig{Rule: metrics.DefaultRule()}, "Candidates"},
	} {
		_, err := FitThresholds(c.p1, c.labels, c.sens, c.val, c.cfg)
		assert.ErrorContains(t, err, c.want, name)
	}
}
