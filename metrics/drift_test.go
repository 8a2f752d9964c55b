package metrics

import (
	"math"
	"math/rand"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestWilsonHandComputed(t *testing.T) {
	assert.InDelta(t, 1.959963985, normalQuantile(0.975), 1e-8)
	assert.InDelta(t, -1.644853627, normalQuantile(0.05), 1e-8)
	assert.InDelta(t, 0, normalQuantile(0.5), 1e-15)
	// 5 of 10 at 95%: 0.5 ± 1.96·sqrt(.25/10 + 1.96²/400) / (1 + 1.96²/10).
	iv := wilson(5, 10, 0.95)
	assert.InDelta(t, 0.2366, iv.Lo, 1e-4)
	assert.InDelta(t, 0.7634, iv.Hi, 1e-4)
	assert.Equal(t, 10, iv.Used)
	// 0 of 20: the interval starts at 0 and is not empty.
	iv = wilson(0, 20, 0.95)
	assert.Equal(t, 0.0, iv.Lo)
	assert.InDelta(t, 0.1611, iv.Hi, 1e-4)
	iv = wilson(20, 20, 0.95)
	assert.Equal(t, 1.0, iv.Hi)
}

// driftData: n nodes, two groups, a score that depends on the group by
// shift, labels drawn from the score.
func driftData(n int, shift float64, seed int64) (p []float64, labels, sens []int) {
	rng := rand.New(rand.NewSource(seed))
	p = make([]float64, 2*n)
	labels = make([]int, n)
	sens = make([]int, n)
	for i := range sens {
		sens[i] = i % 2
		z := rng.NormFloat64() + shift*float64(sens[i])
		p[2*i+1] = 1 / (1 + math.Exp(-z))
		p[2*i] = 1 - p[2*i+1]
		if rng.Float64() < p[2*i+1] {
			labels[i] = 1
		}
	}
	return
}

func TestDriftAgainstItselfAndAShift(t *testing.T) {
	p, labels, sens := driftData(2000, 0.2, 1)
	all := make([]int, len(sens))
	for i := range all {
		all[i] = i
	}
	val := all[:1000]
	b, err := NewBaseline(p, 2, labels, sens, val, DefaultOptions(), DefaultBootstrapConfig())
	require.NoError(t, err)
	require.NoError(t, b.Validate())
	require.Len(t, b.Groups, 2)
	assert.Equal(t, 500, b.Groups[0].Count)
	assert.Contains(t, b.Criteria, DPDifference)

	// The baseline's own nodes never leave it.
	d, err := CompareBaseline(b, p, 2, labels, sens, val, DefaultOptions(), DefaultBootstrapConfig())
	require.NoError(t, err)
	assert.Empty(t, d.Warnings)
	assert.Empty(t, d.Notes)
	assert.Equal(t, "no drift: every rate, criterion and group share is within its validation-time interval", d.String())

	// New nodes from a much more biased population, unlabelled: the
	// selection rates and ΔDP leave significantly, nothing needing labels
	// is compared.
	q, _, qs := driftData(600, 2.5, 2)
	np := append(append([]float64(nil), p...), q...)
	nl := append(append([]int(nil), labels...), make([]int, 600)...)
	for i := 2000; i < 2600; i++ {
		nl[i] = -1
	}
	ns := append(append([]int(nil), sens...), qs...)
	var fresh []int
	for i := 2000; i < 2600; i++ {
		fresh = append(fresh, i)
	}
	d, err = CompareBaseline(b, np, 2, nl, ns, fresh, DefaultOptions(), DefaultBootstrapConfig())
	require.NoError(t, err)
	assert.Equal(t, 600, d.Nodes)
	assert.Equal(t, 0, d.Labelled)
	var dp *CriterionDrift
	for k := range d.Criteria {
		assert.Empty(t, d.Criteria[k].Criterion.Rates()[1:], "only selection-rate criteria without labels")
		if d.Criteria[k].Criterion == DPDifference {
			dp = &d.Criteria[k]
		}
	}
	require.NotNil(t, dp)
	assert.True(t, dp.Significant)
	pred := make([]int, len(fresh))
	sub := make([]int, len(fresh))
	for k, i := range fresh {
		if np[2*i+1] > 0.5 {
			pred[k] = 1
		}
		sub[k] = ns[i]
	}
	want, err := DemographicParity(pred, sub)
	require.NoError(t, err)
	assert.Equal(t, want, dp.Now.Point, "ΔDP on unlabelled nodes is DemographicParity of their decisions")
	assert.Contains(t, d.String(), "ΔDP is")
	assert.Contains(t, d.String(), "outside its validation-time interval")
	assert.Contains(t, d.String(), "group 1's selection rate")
}

func TestDriftTrivialAndOneGroup(t *testing.T) {
	p, labels, sens := driftData(400, 0.5, 3)
	b, err := NewBaseline(p, 2, labels, sens, nil, DefaultOptions(), DefaultBootstrapConfig())
	require.NoError(t, err)
	zeros := make([]float64, len(p))
	for i := 0; i < len(zeros); i += 2 {
		zeros[i] = 1
	}
	d, err := CompareBaseline(b, zeros, 2, labels, sens, []int{0, 1, 2, 3}, DefaultOptions(), DefaultBootstrapConfig())
	require.NoError(t, err)
	assert.Contains(t, d.String(), "every scored node is predicted class 0: the fairness criteria are trivially at parity")
	d, err = CompareBaseline(b, p, 2, labels, sens, []int{0, 2, 4}, DefaultOptions(), DefaultBootstrapConfig())
	require.NoError(t, err)
	assert.Contains(t, d.String(), "all of one group")
	bad := b
	bad.Level = 2
	_, err = CompareBaseline(bad, p, 2, labels, sens, nil, DefaultOptions(), DefaultBootstrapConfig())
	assert.ErrorIs(t, err, ErrValue)
}
