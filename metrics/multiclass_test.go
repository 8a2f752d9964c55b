package metrics

import (
	"encoding/json"
	"errors"
	"math"
	"math/rand"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A 3-class, 2-group case, worked by hand:
//
//	group 0 (nodes 0–5): labels 0 0 1 1 2 2, pred 0 1 1 1 2 0
//	  class 0: selected {0,5} SR 2/6; y=0 {0,1}, TP {0} TPR 1/2; y≠0 {2,3,4,5}, FP {5} FPR 1/4
//	  class 1: selected {1,2,3} SR 3/6; y=1 {2,3}, TP {2,3} TPR 1; y≠1 {0,1,4,5}, FP {1} FPR 1/4
//	  class 2: selected {4} SR 1/6; y=2 {4,5}, TP {4} TPR 1/2; y≠2 {0,1,2,3}, FP none FPR 0
//	  correct {0,2,3,4}: accuracy 4/6
//	group 1 (nodes 6–9): labels 0 1 2 2, pred 0 0 2 1
//	  class 0: selected {6,7} SR 2/4; y=0 {6}, TP {6} TPR 1; y≠0 {7,8,9}, FP {7} FPR 1/3
//	  class 1: selected {9} SR 1/4; y=1 {7}, TP none TPR 0; y≠1 {6,8,9}, FP {9} FPR 1/3
//	  class 2: selected {8} SR 1/4; y=2 {8,9}, TP {8} TPR 1/2; y≠2 {6,7}, FP none FPR 0
//	  correct {6,8}: accuracy 2/4
//
// Per class (between groups): ΔSR 1/6, 1/4, 1/12; SR ratio 2/3, 1/2,
// 2/3; ΔTPR 1/2, 1, 0; TPR ratio 1/2, 0, 1; ΔFPR 1/12, 1/12, 0; FPR
// ratio 3/4, 3/4, 0/0 (no group has a false positive of class 2).
// Overall: accuracy 6/10; F1 per class (TP, FP, FN) class 0 (2, 2, 1)
// 4/7, class 1 (2, 2, 1) 4/7, class 2 (2, 0, 2) 4/6: macro-F1 38/63.
var (
	mcSens   = []int{0, 0, 0, 0, 0, 0, 1, 1, 1, 1}
	mcLabels = []int{0, 0, 1, 1, 2, 2, 0, 1, 2, 2}
	mcPred   = []int{0, 1, 1, 1, 2, 0, 0, 0, 2, 1}
)

// TestClassesHandComputed checks the per-group, per-class rates, the
// c-class criteria (the worst class's, and which class) and accuracy and
// macro-F1 against the hand-computed case above.
func TestClassesHandComputed(t *testing.T) {
	b, err := ByGroupClasses(mcPred, mcLabels, mcSens, 3)
	require.NoError(t, err)
	require.Len(t, b.Class, 3)
	type rates struct{ sr, tpr, fpr float64 }
	want := [3][2]rates{ // [class][group]
		{{2.0 / 6, 1.0 / 2, 1.0 / 4}, {2.0 / 4, 1, 1.0 / 3}},
		{{3.0 / 6, 1, 1.0 / 4}, {1.0 / 4, 0, 1.0 / 3}},
		{{1.0 / 6, 1.0 / 2, 0}, {1.0 / 4, 1.0 / 2, 0}},
	}
	for k := range want {
		for g, w := range want[k] {
			s := b.Class[k].Groups[g]
			near(t, "SR", s.SelectionRate, w.sr)
			near(t, "TPR", s.TPR, w.tpr)
			near(t, "FPR", s.FPR, w.fpr)
		}
	}
	assert.Equal(t, GroupStats{Group: 1, Count: 4, Positives: 1, Negatives: 3, Selected: 1, TruePositives: 0, FalsePositives: 1, Correct: 2,
		SelectionRate: 0.25, TPR: 0, FPR: 1.0 / 3, Accuracy: 0.5}, b.Class[1].Groups[1], "class 1, group 1")
	near(t, "accuracy", b.Accuracy(), 0.6)
	f, err := b.MacroF1()
	require.NoError(t, err)
	near(t, "macro-F1", f, 38.0/63)

	for _, w := range []struct {
		c     Criterion
		v     float64
		class int
	}{
		{DPDifference, 1.0 / 4, 1},
		{DPRatio, 1.0 / 2, 1},
		{EODifference, 1, 1},
		{EORatio, 0, 1},
		{EOddsDifference, 1, 1},
		{FPRDifference, 1.0 / 12, 1}, // classes 0 and 1 tie exactly: the highest
	} {
		v, k, err := b.Criterion(w.c)
		require.NoError(t, err, w.c.Name())
		near(t, w.c.Name(), v, w.v)
		assert.Equal(t, w.class, k, w.c.Name())
	}
	per, err := b.PerClass(DPDifference)
	require.NoError(t, err)
	assert.InDeltaSlice(t, []float64{1.0 / 6, 1.0 / 4, 1.0 / 12}, per, eps)
	// Class 2's false-positive rates are 0 in both groups: its ratio is
	// 0/0, and so is the c-class ratio (no class is skipped).
	for _, c := range []Criterion{FPRRatio, EOddsRatio} {
		_, _, err := b.Criterion(c)
		assert.ErrorIs(t, err, ErrZeroRate, c.Name())
		assert.ErrorContains(t, err, "class 2 against the rest", c.Name())
	}
	dp, err := DemographicParityClasses(mcPred, mcSens, 3)
	require.NoError(t, err)
	near(t, "DemographicParityClasses", dp, 0.25)
	eodds, err := EqualizedOddsClasses(mcPred, mcLabels, mcSens, 3)
	require.NoError(t, err)
	near(t, "EqualizedOddsClasses", eodds, 1)
}

// classCase returns predictions and labels over c classes with unknown
// labels and groups; every group keeps a known node of every class, and
// predicts every class, so that most criteria are defined.
func classCase(rng *rand.Rand, n, c, groups int) (pred, labels, sens []int) {
	pred, labels, sens = make([]int, n), make([]int, n), make([]int, n)
	for i := range n {
		labels[i] = rng.Intn(c)
		pred[i] = labels[i]
		if rng.Intn(3) > 0 { // a third right by construction, the rest random
			pred[i] = rng.Intn(c)
		}
		sens[i] = i % groups
		if i >= 2*c*groups && rng.Intn(10) == 0 {
			labels[i] = -1
		}
		if i >= 2*c*groups && rng.Intn(12) == 0 {
			sens[i] = -1
		}
	}
	for i := range c * groups {
		labels[i] = i / groups
		pred[c*groups+i] = i / groups
	}
	return pred, labels, sens
}

// oneVsRest binarises class k: 1 where v = k, 0 elsewhere, −1 kept.
func oneVsRest(v []int, k int) []int {
	out := make([]int, len(v))
	for i, x := range v {
		switch {
		case x == -1:
			out[i] = -1
		case x == k:
			out[i] = 1
		}
	}
	return out
}

// TestClassesAgreeWithOneVsRest: every per-group rate, per-class criterion,
// the c-class criteria (max or min over classes), accuracy and macro-F1
// agree to 1e-12 with fairlearn's formulas on the one-vs-rest
// binarisation, computed with the binary functions (ByGroup,
// Criterion.Measure, F1, Accuracy); where the binary function errs, the
// c-class one errs with the same sentinel.
func TestClassesAgreeWithOneVsRest(t *testing.T) {
	rng := rand.New(rand.NewSource(57))
	for trial := range 60 {
		c, groups := []int{2, 3, 5}[trial%3], 2+rng.Intn(3)
		n := 2*c*groups + rng.Intn(200)
		pred, labels, sens := classCase(rng, n, c, groups)
		if trial%4 == 3 { // small groups: some class rates undefined
			pred, labels, sens = pred[:2*c*groups], labels[:2*c*groups], sens[:2*c*groups]
			for i := range labels {
				if rng.Intn(3) == 0 {
					labels[i] = rng.Intn(c)
				}
			}
		}
		b, err := ByGroupClasses(pred, labels, sens, c)
		require.NoError(t, err)
		macro, ok := 0.0, true
		for k := range c {
			pk, yk := oneVsRest(pred, k), oneVsRest(labels, k)
			bk, err := ByGroup(pk, yk, sens)
			require.NoError(t, err)
			for g := range bk.Groups {
				near(t, "SR", b.Class[k].Groups[g].SelectionRate, bk.Groups[g].SelectionRate)
				near(t, "TPR", b.Class[k].Groups[g].TPR, bk.Groups[g].TPR)
				near(t, "FPR", b.Class[k].Groups[g].FPR, bk.Groups[g].FPR)
			}
			// F1 and Accuracy leave out unknown labels only; the group
			// metrics leave out unknown groups too.
			f, err := F1(pk, oneVsRest(excludeUnknown(labels, sens), k))
			if err != nil {
				ok = false
			}
			macro += f
		}
		got, err := b.MacroF1()
		if ok {
			require.NoError(t, err)
			near(t, "macro-F1", got, macro/float64(c))
		} else {
			assert.ErrorIs(t, err, ErrNoPositives)
		}
		acc, err := Accuracy(pred, excludeUnknown(labels, sens))
		require.NoError(t, err)
		near(t, "accuracy", b.Accuracy(), acc)

		for _, cr := range Criteria() {
			var want float64
			var wantErr error
			for k := range c {
				v, err := cr.Measure(oneVsRest(pred, k), oneVsRest(labels, k), sens)
				if err != nil {
					wantErr = err
					break
				}
				if k == 0 || cr.Better(want, v) {
					want = v
				}
			}
			got, _, err := b.Criterion(cr)
			if wantErr != nil {
				require.Error(t, err, "%s, trial %d", cr.Name(), trial)
				assert.True(t, errors.Is(err, ErrNoPositives) == errors.Is(wantErr, ErrNoPositives) &&
					errors.Is(err, ErrNoNegatives) == errors.Is(wantErr, ErrNoNegatives) &&
					errors.Is(err, ErrZeroRate) == errors.Is(wantErr, ErrZeroRate), "%s: %v vs binary %v", cr.Name(), err, wantErr)
				continue
			}
			require.NoError(t, err, "%s, trial %d", cr.Name(), trial)
			near(t, cr.Name(), got, want)
			m, err := cr.MeasureClasses(pred, labels, sens, c)
			require.NoError(t, err)
			assert.Equal(t, got, m, cr.Name())
		}
	}
}

// excludeUnknown returns labels with −1 where the group is unknown (the
// nodes the group metrics leave out).
func excludeUnknown(labels, sens []int) []int {
	out := append([]int(nil), labels...)
	for i, s := range sens {
		if s == -1 {
			out[i] = -1
		}
	}
	return out
}

// TestClassesTwoClassesIsBinary: for c = 2 the c-class ΔDP and ΔEOdds are
// the binary ones exactly (bit for bit), ΔEO is max(ΔTPR, ΔFPR), and the
// bootstrap of ΔDP is Bootstrap's, digit for digit.
func TestClassesTwoClassesIsBinary(t *testing.T) {
	rng := rand.New(rand.NewSource(58))
	for trial := range 200 {
		groups := 2 + rng.Intn(3)
		pred, labels, sens := classCase(rng, 4*groups+rng.Intn(300), 2, groups)
		want, err := DemographicParity(pred, sens)
		require.NoError(t, err)
		got, err := DemographicParityClasses(pred, sens, 2)
		require.NoError(t, err)
		require.Equal(t, math.Float64bits(want), math.Float64bits(got), "trial %d: ΔDP %v vs binary %v", trial, got, want)
		wantOdds, err1 := EqualizedOdds(pred, labels, sens)
		gotOdds, err2 := EqualizedOddsClasses(pred, labels, sens, 2)
		require.Equal(t, err1 == nil, err2 == nil)
		if err1 == nil {
			require.Equal(t, math.Float64bits(wantOdds), math.Float64bits(gotOdds), "trial %d: ΔEOdds", trial)
			eo, err := EODifference.MeasureClasses(pred, labels, sens, 2)
			require.NoError(t, err)
			near(t, "c-class ΔEO of a binary task", eo, wantOdds)
		}
	}

	probs, labels, sens := make([]float64, 0), []int{}, []int{}
	for i := range 300 {
		p := math.Round(rng.Float64()*20) / 20
		probs = append(probs, 1-p, p)
		labels, sens = append(labels, rng.Intn(2)), append(sens, i%3)
	}
	opt := DefaultOptions()
	bin, err := Bootstrap(probs, 2, labels, sens, nil, opt, DefaultBootstrapConfig())
	require.NoError(t, err)
	cls, err := BootstrapClasses(probs, 2, labels, sens, nil, opt, DefaultBootstrapConfig())
	require.NoError(t, err)
	dp, ok := cls.Of(DPDifference)
	require.True(t, ok)
	assert.Equal(t, bin.DemographicParity, dp, "ΔDP interval")
	assert.Equal(t, bin.Accuracy, cls.Accuracy, "accuracy interval")
	odds, ok := cls.Of(EOddsDifference)
	require.True(t, ok)
	assert.Equal(t, bin.Criteria[EOddsDifference], odds, "ΔEOdds interval")
}

// TestEvaluateClasses: EvaluateClasses predicts by argmax (lowest class on
// ties) on a subset, excludes unknowns, and its metrics are those of
// ByGroupClasses on the predictions.
func TestEvaluateClasses(t *testing.T) {
	// Rows whose argmax is mcPred, with a tie (node 1: 0.4, 0.4, 0.2 → 0,
	// made 1 by raising class 1) and an unknown node appended.
	c := 3
	var probs []float64
	for _, p := range mcPred {
		row := []float64{0.2, 0.2, 0.2}
		row[p] = 0.6
		probs = append(probs, row...)
	}
	probs = append(probs, 0.5, 0.5, 0) // node 10: a tie, argmax 0; unknown label
	labels := append(append([]int(nil), mcLabels...), -1)
	sens := append(append([]int(nil), mcSens...), 1)
	r, err := EvaluateClasses(probs, c, labels, sens, nil, DefaultOptions())
	require.NoError(t, err)
	assert.Equal(t, 11, r.Nodes)
	assert.Equal(t, 10, r.Evaluated)
	assert.Equal(t, 1, r.Excluded)
	near(t, "accuracy", r.Accuracy, 0.6)
	near(t, "macro-F1", r.MacroF1, 38.0/63)
	near(t, "ΔDP", r.DemographicParity, 0.25)
	near(t, "ΔEO", r.EqualOpportunity, 1)
	near(t, "ΔEOdds", r.EqualizedOdds, 1)
	v, err := r.Of(DPRatio)
	require.NoError(t, err)
	near(t, "DP ratio", v, 0.5)

	// A subset: group 1's nodes 6, 7, 8 (labels 0, 1, 2) and group 0's.
	sub, err := EvaluateClasses(probs, c, labels, sens, []int{0, 1, 2, 3, 4, 5, 6, 7, 8}, DefaultOptions())
	require.NoError(t, err)
	b, err := ByGroupClasses(mcPred[:9], mcLabels[:9], mcSens[:9], c)
	require.NoError(t, err)
	assert.Equal(t, b, sub.Breakdown)

	for _, bad := range []struct {
		name string
		run  func() error
		want error
	}{
		{"classes 1", func() error { _, err := EvaluateClasses(probs, 1, labels, sens, nil, DefaultOptions()); return err }, ErrValue},
		{"length", func() error { _, err := EvaluateClasses(probs[1:], c, labels, sens, nil, DefaultOptions()); return err }, ErrLength},
		{"label 3", func() error {
			l := append([]int(nil), labels...)
			l[4] = 3
			_, err := EvaluateClasses(probs, c, l, sens, nil, DefaultOptions())
			return err
		}, ErrValue},
		{"probability NaN", func() error {
			p := append([]float64(nil), probs...)
			p[5] = math.NaN()
			_, err := EvaluateClasses(p, c, labels, sens, nil, DefaultOptions())
			return err
		}, ErrValue},
		{"pred 3", func() error { _, err := ByGroupClasses([]int{0, 3}, []int{0, 1}, []int{0, 1}, 3); return err }, ErrValue},
		{"one group", func() error { _, err := ByGroupClasses([]int{0, 2}, []int{0, 1}, []int{0, 0}, 3); return err }, ErrEmptyGroup},
		{"empty group", func() error { _, err := ByGroupClasses([]int{0, 2}, []int{0, 1}, []int{0, 2}, 3); return err }, ErrEmptyGroup},
		{"macro-F1 metric", func() error { _, err := MacroF1(3)([]int{0, 1}, []int{0, 1}); return err }, ErrNoPositives},
	} {
		assert.ErrorIs(t, bad.run(), bad.want, bad.name)
	}
	_, err = EvaluateClasses(probs, c, labels, sens, nil, DefaultOptions())
	require.NoError(t, err, "the cases did not change the inputs")
}

// TestEvaluateClassesAllowUndefined: a group without a node of some class
// makes ΔEO and ΔEOdds undefined (ErrNoPositives, naming the class); with
// AllowUndefined they are NaN, named in Undefined, null in JSON, and
// ΔDP keeps its value.
func TestEvaluateClassesAllowUndefined(t *testing.T) {
	// Group 1 has no node of label 1.
	labels := append([]int(nil), mcLabels...)
	labels[7] = 0
	var probs []float64
	for _, p := range mcPred {
		row := []float64{0.2, 0.2, 0.2}
		row[p] = 0.6
		probs = append(probs, row...)
	}
	_, err := EvaluateClasses(probs, 3, labels, mcSens, nil, DefaultOptions())
	require.ErrorIs(t, err, ErrNoPositives)
	assert.ErrorContains(t, err, "class 1 against the rest: ")
	assert.ErrorContains(t, err, "group 1")

	opt := DefaultOptions()
	opt.AllowUndefined = true
	r, err := EvaluateClasses(probs, 3, labels, mcSens, nil, opt)
	require.NoError(t, err)
	near(t, "ΔDP", r.DemographicParity, 0.25) // predictions unchanged
	assert.True(t, math.IsNaN(r.EqualOpportunity))
	assert.True(t, math.IsNaN(r.EqualizedOdds))
	require.Len(t, r.Undefined, 2)
	assert.Equal(t, "equal_opportunity", r.Undefined[0].Metric)
	assert.Equal(t, "no-positives", r.Undefined[0].Cause)
	assert.Contains(t, r.Undefined[0].Reason, "class 1 against the rest")
	assert.ErrorIs(t, r.Undefined[0].Err(), ErrNoPositives)
	assert.False(t, r.IsUndefined("demographic_parity"))

	b, err := json.Marshal(r)
	require.NoError(t, err, "NaN must not break the JSON")
	var m map[string]any
	require.NoError(t, json.Unmarshal(b, &m))
	assert.Nil(t, m["equal_opportunity"])
	assert.InDelta(t, 0.25, m["demographic_parity"], 1e-15)
	var back ClassReport
	require.NoError(t, json.Unmarshal(b, &back))
	assert.True(t, math.IsNaN(back.EqualizedOdds))
	assert.Equal(t, r.Breakdown, back.Breakdown)
	assert.Equal(t, r.Undefined, back.Undefined)
	assert.Error(t, json.Unmarshal([]byte(`{"classes": 3, "surprise": 1}`), &back), "strict")

	iv, err := BootstrapClasses(probs, 3, labels, mcSens, nil, opt, DefaultBootstrapConfig())
	require.NoError(t, err)
	_, ok := iv.Of(EODifference)
	assert.False(t, ok, "undefined on the nodes: no interval")
	dp, ok := iv.Of(DPDifference)
	require.True(t, ok)
	near(t, "ΔDP point", dp.Point, 0.25)
	_, err = BootstrapClasses(probs, 3, labels, mcSens, nil, DefaultOptions(), DefaultBootstrapConfig())
	assert.ErrorIs(t, err, ErrNoPositives, "strict without AllowUndefined")
}

// TestBootstrapClasses: each Point is EvaluateClasses' value, intervals
// are ordered, the same seed gives the same intervals and another seed
// others, per-group per-class selection rates have intervals around
// their values, and BootstrapFrame takes the macro-F1 metric.
func TestBootstrapClasses(t *testing.T) {
	rng := rand.New(rand.NewSource(59))
	for _, c := range []int{3, 5} {
		n, groups := 400, 3
		pred, labels, sens := classCase(rng, n, c, groups)
		probs := make([]float64, n*c)
		for i, p := range pred {
			for k := range c {
				probs[i*c+k] = 0.1 / float64(c)
			}
			probs[i*c+p] = 0.9
		}
		opt := DefaultOptions()
		r, err := EvaluateClasses(probs, c, labels, sens, nil, opt)
		require.NoError(t, err)
		cfg := DefaultBootstrapConfig()
		cfg.Resamples = 300
		iv, err := BootstrapClasses(probs, c, labels, sens, nil, opt, cfg)
		require.NoError(t, err)
		assert.Equal(t, r.Accuracy, iv.Accuracy.Point)
		assert.Equal(t, r.MacroF1, iv.MacroF1.Point)
		assert.Equal(t, r.Evaluated, iv.Evaluated)
		for _, cr := range Criteria() {
			want, err := r.Of(cr)
			got, ok := iv.Of(cr)
			if err != nil {
				assert.False(t, ok, cr.Name())
				continue
			}
			require.True(t, ok, cr.Name())
			assert.Equal(t, want, got.Point, cr.Name())
			assert.LessOrEqual(t, got.Lo, got.Hi, cr.Name())
			assert.Positive(t, got.Used, cr.Name())
		}
		dp, _ := iv.Of(DPDifference)
		assert.Equal(t, cfg.Resamples, dp.Used, "ΔDP is defined on every stratified resample")
		require.Len(t, iv.SelectionRates, groups)
		for g := range groups {
			require.Len(t, iv.SelectionRates[g], c)
			for k := range c {
				s := iv.SelectionRates[g][k]
				assert.Equal(t, r.Breakdown.Class[k].Groups[g].SelectionRate, s.Point)
				assert.True(t, s.Lo <= s.Point && s.Point <= s.Hi && s.Lo < s.Hi, "group %d class %d: %v", g, k, s)
			}
		}
		again, err := BootstrapClasses(probs, c, labels, sens, nil, opt, cfg)
		require.NoError(t, err)
		assert.Equal(t, iv, again, "seeded")
		cfg.Seed = 2
		other, err := BootstrapClasses(probs, c, labels, sens, nil, opt, cfg)
		require.NoError(t, err)
		// (Symmetric intervals of a discrete statistic can coincide for
		// two seeds on one metric: the whole set of intervals differs.)
		assert.NotEqual(t, iv, other, "another seed, other resamples")

		fi, err := BootstrapFrame("macro_f1", MacroF1(c), pred, labels, sens, cfg)
		require.NoError(t, err)
		b, err := ByGroupClasses(pred, labels, sens, c)
		require.NoError(t, err)
		f, err := b.MacroF1()
		require.NoError(t, err)
		near(t, "MacroF1 metric overall", fi.Overall.Point, f)
	}
	_, err := BootstrapClasses([]float64{1, 0, 0, 1}, 2, []int{0, 1}, []int{0, 1}, nil, DefaultOptions(), BootstrapConfig{Resamples: 10, Level: 0.95})
	assert.ErrorIs(t, err, ErrValue)
}
