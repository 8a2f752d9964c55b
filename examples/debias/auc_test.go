package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fairmp/fairmp/graph/datasets"
	"github.com/fairmp/fairmp/metrics"
)

// The thresholds row's AUC was that of its hard decisions (one-hot rows:
// 60.5 where the backbone's scores, the same ones, gave 70.2). An AUC
// ranks by scores: the thresholds' is the AUC of the probabilities they
// threshold, while accuracy, ΔDP and ΔEO stay the decisions'.
func TestThresholdsAUCFromScores(t *testing.T) {
	// Two groups of four nodes; the scores rank every positive above
	// every negative (AUC 1), the thresholds' decisions get two wrong.
	p1 := []float64{0.1, 0.2, 0.6, 0.7, 0.3, 0.35, 0.8, 0.9}
	ds := &datasets.Dataset{Name: "toy", Labels: []int{0, 0, 1, 1, 0, 0, 1, 1}, Sens: []int{0, 0, 0, 0, 1, 1, 1, 1}}
	all := []int{0, 1, 2, 3, 4, 5, 6, 7}
	ds.Split = datasets.Split{Val: all, Test: all}
	probs := make([]float64, 2*len(p1))
	for i, p := range p1 {
		probs[2*i], probs[2*i+1] = 1-p, p
	}
	th := &method{Name: "thresholds", probs: probs, decision: []int{0, 1, 1, 1, 0, 0, 0, 1}, thresholded: true}
	require.NoError(t, th.evaluate(ds, metrics.DPDifference))
	bb := &method{Name: "backbone", probs: probs}
	require.NoError(t, bb.evaluate(ds, metrics.DPDifference))

	for _, rep := range []*metrics.Report{th.Val, th.Test} {
		assert.Equal(t, 1.0, rep.AUC, "the AUC of the scores")
		assert.Equal(t, bb.Test.AUC, rep.AUC, "the backbone's")
		assert.Equal(t, 0.75, rep.Accuracy, "accuracy from the decisions: 6 of 8")
		assert.Equal(t, 0.5, rep.DemographicParity, "ΔDP from the decisions: 3/4 against 1/4")
		assert.Empty(t, rep.Undefined)
	}
	assert.Equal(t, 1.0, bb.Test.Accuracy, "the backbone's own decisions (p > 0.5) are all right")
	assert.Equal(t, 0.75, th.TestCI.Accuracy.Point, "the intervals are the decisions'")
	assert.Contains(t, th.AUCOf, "backbone's probabilities", "metrics.json says what the AUC ranks by")
	assert.Empty(t, bb.AUCOf)
}
