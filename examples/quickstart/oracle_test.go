package main

import (
	"context"
	"math"
	"sort"
	"testing"

	"github.com/fairmp/fairmp/graph/datasets"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// oracleAccuracy returns the best test accuracy reachable by thresholding
// probs (P(y=1) per node) with one threshold per group chosen on the test
// labels themselves, subject to ΔDP < maxDP. It is a bound for any
// post-processing of the model, not a method.
func oracleAccuracy(probs []float64, labels, sens, test []int, maxDP float64) float64 {
	var cands [2][]float64
	for _, i := range test {
		cands[sens[i]] = append(cands[sens[i]], probs[i])
	}
	for g := range cands {
		cands[g] = append(cands[g], 0, 2)
		sort.Float64s(cands[g])
	}
	best := 0.0
	for _, t0 := range cands[0] {
		for _, t1 := range cands[1] {
			var sel, cnt [2]float64
			correct := 0
			for _, i := range test {
				g := sens[i]
				th := t0
				if g == 1 {
					th = t1
				}
				y := 0
				if probs[i] >= th {
					y = 1
				}
				cnt[g]++
				sel[g] += float64(y)
				if y == labels[i] {
					correct++
				}
			}
			dp := math.Abs(sel[0]/cnt[0] - sel[1]/cnt[1])
			if acc := float64(correct) / float64(len(test)); dp < maxDP && acc > best {
				best = acc
			}
		}
	}
	return best
}

// TestQuickstartOracleBound backs the README's statement that the
// quickstart's target (ΔDP clearly below the MLP's, at most 3 points below
// GCN's accuracy) is out of reach for any post-processing of GCN on the
// default graph. With per-group thresholds chosen on the test labels
// themselves (an oracle), a ΔDP 3 points below the MLP's allows less than
// GCN's accuracy minus 3 points. (A run gave: GCN 91.2%, MLP ΔDP 23.66%;
// the oracle reaches 88.6% at ΔDP < 23.66% and 87.4% at ΔDP < 20%.)
func TestQuickstartOracleBound(t *testing.T) {
	if testing.Short() {
		t.Skip("trains GCN and the MLP on the quickstart graph; skipped with -short")
	}
	cfg := defaultConfig()
	ds, err := datasets.Synthetic(cfg.Data)
	require.NoError(t, err)
	require.Equal(t, "mlp", models[0].name)
	require.Equal(t, "gcn", models[1].name)
	mlp, _, _, err := trainAndTest(context.Background(), models[0], ds, cfg.Train)
	require.NoError(t, err)
	gcn, pred, _, err := trainAndTest(context.Background(), models[1], ds, cfg.Train)
	require.NoError(t, err)
	p1 := pred.Column(1)
	mlpDP, gcnAcc := mlp.DemographicParity, gcn.Accuracy
	atMLP := oracleAccuracy(p1, ds.Labels, ds.Sens, ds.Split.Test, mlpDP)
	below := oracleAccuracy(p1, ds.Labels, ds.Sens, ds.Split.Test, mlpDP-0.03)
	t.Logf("GCN accuracy %.4f, MLP ΔDP %.4f; oracle accuracy %.4f at ΔDP < MLP's, %.4f at ΔDP < MLP's − 3 points", gcnAcc, mlpDP, atMLP, below)
	assert.Greater(t, gcn.DemographicParity, mlpDP, "GCN is more biased than the MLP on this graph")
	assert.LessOrEqual(t, below, atMLP, "the oracle is monotone in the ΔDP budget")
	assert.Less(t, below, gcnAcc-0.03, "with ΔDP 3 points below the MLP's, even the oracle stays more than 3 points below GCN")
}
