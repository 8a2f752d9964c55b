package metrics

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const eps = 1e-12

func near(t *testing.T, name string, got, want float64) {
	t.Helper()
	assert.InDelta(t, want, got, eps, name) // fails on NaN too
}

// Two groups of sizes 6 and 3 (hand-computed in the comments).
var (
	ubPred   = []int{1, 1, 0, 0, 1, 0, 1, 0, 0}
	ubLabels = []int{1, 0, 1, 0, 1, 0, 1, 1, 0}
	ubSens   = []int{0, 0, 0, 0, 0, 0, 1, 1, 1}
)

func TestUnbalancedGroups(t *testing.T) {
	// Group 0: 6 nodes, selected {0,1,4} → 3/6; positives {0,2,4}, TP {0,4}
	// → TPR 2/3; negatives {1,3,5}, FP {1} → FPR 1/3; correct {0,3,4,5}.
	// Group 1: 3 nodes, selected {6} → 1/3; positives {6,7}, TP {6} → 1/2;
	// negative {8}, FP none → 0; correct {6,8}.
	dp, err := DemographicParity(ubPred, ubSens)
	require.NoError(t, err)
	near(t, "ΔDP", dp, 1.0/2-1.0/3)
	eo, err := EqualOpportunity(ubPred, ubLabels, ubSens)
	require.NoError(t, err)
	near(t, "ΔEO", eo, 2.0/3-1.0/2)
	odds, err := EqualizedOdds(ubPred, ubLabels, ubSens)
	require.NoError(t, err)
	near(t, "equalized odds", odds, 1.0/3) // FPR gap 1/3 > TPR gap 1/6
	acc, err := Accuracy(ubPred, ubLabels)
	require.NoError(t, err)
	near(t, "accuracy", acc, 6.0/9)
	f, err := F1(ubPred, ubLabels)
	require.NoError(t, err)
	near(t, "F1", f, 2*3.0/(2*3+1+2)) // TP 3, FP 1, FN 2

	b, err := ByGroup(ubPred, ubLabels, ubSens)
	require.NoError(t, err)
	want := []GroupStats{
		{Group: 0, Count: 6, Positives: 3, Negatives: 3, Selected: 3, TruePositives: 2, FalsePositives: 1, Correct: 4,
			SelectionRate: 0.5, TPR: 2.0 / 3, FPR: 1.0 / 3, Accuracy: 4.0 / 6},
		{Group: 1, Count: 3, Positives: 2, Negatives: 1, Selected: 1, TruePositives: 1, FalsePositives: 0, Correct: 2,
			SelectionRate: 1.0 / 3, TPR: 0.5, FPR: 0, Accuracy: 2.0 / 3},
	}
	require.Len(t, b.Groups, 2)
	for g := range want {
		assert.Equal(t, want[g], b.Groups[g], "group %d", g)
	}
	wantAll := GroupStats{Group: -1, Count: 9, Positives: 5, Negatives: 4, Selected: 4, TruePositives: 3, FalsePositives: 1, Correct: 6,
		SelectionRate: 4.0 / 9, TPR: 3.0 / 5, FPR: 1.0 / 4, Accuracy: 6.0 / 9}
	assert.Equal(t, wantAll, b.Overall, "overall")
	assert.Zero(t, b.Excluded, "excluded")
	assert.Zero(t, b.UnknownLabel, "unknown label")
	assert.Zero(t, b.UnknownSens, "unknown sens")
}

func TestThreeGroups(t *testing.T) {
	sens := []int{0, 0, 1, 1, 1, 2, 2, 2, 2, 2}
	pred := []int{1, 0, 1, 1, 1, 0, 0, 1, 0, 0}
	labels := []int{1, 1, 1, 0, 1, 1, 0, 1, 0, 1}
	// Selection rates 1/2, 3/3, 1/5; TPRs 1/2, 2/2, 1/3; group 0 has no
	// negatives.
	dp, err := DemographicParity(pred, sens)
	require.NoError(t, err)
	near(t, "ΔDP", dp, 1-0.2)
	eo, err := EqualOpportunity(pred, labels, sens)
	require.NoError(t, err)
	near(t, "ΔEO", eo, 1-1.0/3)
	_, err = EqualizedOdds(pred, labels, sens)
	assert.ErrorIs(t, err, ErrNoNegatives, "equalized odds with a group without negatives")
	acc, err := Accuracy(pred, labels)
	require.NoError(t, err)
	near(t, "accuracy", acc, 0.6)

	// Give group 0 a negative (node 1, predicted 0): FPRs 0, 1, 0 → gap 1.
	labels[1] = 0
	odds, err := EqualizedOdds(pred, labels, sens)
	require.NoError(t, err)
	near(t, "equalized odds", odds, 1)
	eo, err = EqualOpportunity(pred, labels, sens)
	require.NoError(t, err)
	near(t, "ΔEO after relabel", eo, 1-1.0/3) // TPRs 1, 1, 1/3
}

func TestExcludedNodes(t *testing.T) {
	// The unbalanced case plus three nodes that must not change anything.
	pred := append(append([]int(nil), ubPred...), 1, 1, 0)
	labels := append(append([]int(nil), ubLabels...), -1, 0, -1)
	sens := append(append([]int(nil), ubSens...), 1, -1, -1)
	b, err := ByGroup(pred, labels, sens)
	require.NoError(t, err)
	assert.Equal(t, 2, b.UnknownLabel, "unknown label")
	assert.Equal(t, 2, b.UnknownSens, "unknown sens")
	assert.Equal(t, 3, b.Excluded, "excluded")
	assert.Equal(t, 9, b.Overall.Count, "overall count")
	eo, err := EqualOpportunity(pred, labels, sens)
	require.NoError(t, err)
	near(t, "ΔEO", eo, 1.0/6)
	// DemographicParity ignores labels: only node 9 (sens 1, pred 1) joins.
	dp, err := DemographicParity(pred, sens)
	require.NoError(t, err)
	near(t, "ΔDP", dp, 2.0/4-1.0/2)
	acc, err := Accuracy(pred, labels)
	require.NoError(t, err)
	near(t, "accuracy", acc, 6.0/10) // node 10 (pred 1, label 0) joins
}

func TestAUCHand(t *testing.T) {
	cases := []struct {
		name   string
		scores []float64
		labels []int
		want   float64
	}{
		// Pairs (pos, neg): 0.4>0.1, 0.4=0.4 (½), 0.8>0.1, 0.8>0.4,
		// 0.4>0.1, 0.4=0.4 (½) → 5/6.
		{"ties", []float64{0.1, 0.4, 0.4, 0.8, 0.4}, []int{0, 0, 1, 1, 1}, 5.0 / 6},
		{"all tied", []float64{3, 3, 3, 3}, []int{0, 1, 1, 0}, 0.5},
		{"perfect", []float64{-2, -1, 5, 7}, []int{0, 0, 1, 1}, 1},
		{"reversed", []float64{0.9, 0.8, 0.2}, []int{0, 0, 1}, 0},
		// 0.7 beats 0.3 and 0.6, ties 0.7: 2.5; 0.3 ties 0.3: 0.5 → 3/6.
		{"mixed ties", []float64{0.3, 0.7, 0.3, 0.6, 0.7}, []int{1, 1, 0, 0, 0}, 3.0 / 6},
		{"unknown skipped", []float64{0.1, 0.9, 0.5}, []int{0, 1, -1}, 1},
	}
	for _, c := range cases {
		got, err := AUC(c.scores, c.labels)
		if !assert.NoError(t, err, c.name) {
			continue
		}
		near(t, c.name, got, c.want)
	}
}

func TestErrors(t *testing.T) {
	inf := math.Inf(1)
	call := map[string]func() error{
		"accuracy length":    func() error { _, err := Accuracy([]int{1}, []int{1, 0}); return err },
		"accuracy empty":     func() error { _, err := Accuracy(nil, nil); return err },
		"accuracy all -1":    func() error { _, err := Accuracy([]int{1, 0}, []int{-1, -1}); return err },
		"accuracy pred -1":   func() error { _, err := Accuracy([]int{-1}, []int{0}); return err },
		"accuracy label -2":  func() error { _, err := Accuracy([]int{0}, []int{-2}); return err },
		"f1 pred 2":          func() error { _, err := F1([]int{2}, []int{1}); return err },
		"f1 label 2":         func() error { _, err := F1([]int{1}, []int{2}); return err },
		"f1 no positives":    func() error { _, err := F1([]int{0, 0}, []int{0, 0}); return err },
		"dp length":          func() error { _, err := DemographicParity([]int{1, 0}, []int{0}); return err },
		"dp empty":           func() error { _, err := DemographicParity(nil, nil); return err },
		"dp sens all -1":     func() error { _, err := DemographicParity([]int{1, 0}, []int{-1, -1}); return err },
		"dp pred 2":          func() error { _, err := DemographicParity([]int{2, 0}, []int{0, 1}); return err },
		"dp pred -1":         func() error { _, err := DemographicParity([]int{-1, 0}, []int{0, 1}); return err },
		"dp sens -2":         func() error { _, err := DemographicParity([]int{1, 0}, []int{0, -2}); return err },
		"dp one group":       func() error { _, err := DemographicParity([]int{1, 0}, []int{0, 0}); return err },
		"dp only group 1":    func() error { _, err := DemographicParity([]int{1, 0}, []int{1, 1}); return err },
		"dp group 1 missing": func() error { _, err := DemographicParity([]int{1, 0, 1}, []int{0, 2, 2}); return err },
		"eo length labels":   func() error { _, err := EqualOpportunity([]int{1, 0}, []int{1}, []int{0, 1}); return err },
		"eo length sens":     func() error { _, err := EqualOpportunity([]int{1, 0}, []int{1, 1}, []int{0}); return err },
		"eo label 2":         func() error { _, err := EqualOpportunity([]int{1, 0}, []int{1, 2}, []int{0, 1}); return err },
		"eo no positives g1": func() error { _, err := EqualOpportunity([]int{1, 0}, []int{1, 0}, []int{0, 1}); return err },
		"eo group empty":     func() error { _, err := EqualOpportunity([]int{1, 0}, []int{1, -1}, []int{0, 1}); return err },
		"odds no negatives":  func() error { _, err := EqualizedOdds([]int{1, 0}, []int{1, 1}, []int{0, 1}); return err },
		"bygroup empty":      func() error { _, err := ByGroup([]int{}, []int{}, []int{}); return err },
		"auc length":         func() error { _, err := AUC([]float64{1}, nil); return err },
		"auc empty":          func() error { _, err := AUC(nil, nil); return err },
		"auc nan":            func() error { _, err := AUC([]float64{math.NaN(), 1}, []int{0, 1}); return err },
		"auc inf":            func() error { _, err := AUC([]float64{inf, 1}, []int{0, 1}); return err },
		"auc label 2":        func() error { _, err := AUC([]float64{0, 1}, []int{0, 2}); return err },
		"auc only negatives": func() error { _, err := AUC([]float64{0, 1}, []int{0, 0}); return err },
		"auc only positives": func() error { _, err := AUC([]float64{0, 1}, []int{1, -1}); return err },
		"auc all unknown":    func() error { _, err := AUC([]float64{0, 1}, []int{-1, -1}); return err },
		"auc nan on unknown": func() error { _, err := AUC([]float64{math.NaN(), 1, 0}, []int{-1, 1, 0}); return err },
	}
	want := map[string]error{
		"accuracy length": ErrLength, "accuracy empty": ErrEmpty, "accuracy all -1": ErrEmpty,
		"accuracy pred -1": ErrValue, "accuracy label -2": ErrValue,
		"f1 pred 2": ErrValue, "f1 label 2": ErrValue, "f1 no positives": ErrNoPositives,
		"dp length": ErrLength, "dp empty": ErrEmpty, "dp sens all -1": ErrEmpty, "dp pred 2": ErrValue,
		"dp pred -1": ErrValue, "dp sens -2": ErrValue, "dp one group": ErrEmptyGroup,
		"dp only group 1": ErrEmptyGroup, "dp group 1 missing": ErrEmptyGroup,
		"eo length labels": ErrLength, "eo length sens": ErrLength, "eo label 2": ErrValue,
		"eo no positives g1": ErrNoPositives, "eo group empty": ErrEmptyGroup,
		"odds no negatives": ErrNoNegatives, "bygroup empty": ErrEmpty,
		"auc length": ErrLength, "auc empty": ErrEmpty, "auc nan": ErrValue, "auc inf": ErrValue,
		"auc label 2": ErrValue, "auc only negatives": ErrNoPositives, "auc only positives": ErrNoNegatives,
		"auc all unknown": ErrEmpty, "auc nan on unknown": ErrValue,
	}
	require.Len(t, want, len(call), "test table mismatch: one expectation per call")
	for name, f := range call {
		require.Contains(t, want, name, "no expectation for %s", name)
		assert.ErrorIs(t, f(), want[name], name)
	}
}
