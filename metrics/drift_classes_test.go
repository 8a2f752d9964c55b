package metrics

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// predProbs returns the n × c probabilities of the predictions pred (1 on
// the predicted class), so that the argmax and, for c = 2, the threshold
// 0.5 both decide pred.
func predProbs(pred []int, c int) []float64 {
	p := make([]float64, len(pred)*c)
	for i, k := range pred {
		p[i*c+k] = 1
	}
	return p
}

// threeClassShift: 600 validation nodes (groups 0 and 1, 300 each, every
// group predicting each of the 3 classes 100 times, labels = the
// predictions) and 600 scored, unlabelled nodes: group 0 as before,
// group 1 predicting class 0 160 times, class 1 100 times (as before),
// class 2 40 times.
func threeClassShift() (pred, labels, sens, val, scored []int) {
	add := func(g, k, n, y int) {
		for range n {
			pred = append(pred, k)
			labels = append(labels, y)
			sens = append(sens, g)
		}
	}
	for g := range 2 {
		for k := range 3 {
			add(g, k, 100, k)
		}
	}
	for k := range 3 {
		add(0, k, 100, -1)
	}
	add(1, 0, 160, -1)
	add(1, 1, 100, -1)
	add(1, 2, 40, -1)
	for i := range sens {
		if i < 600 {
			val = append(val, i)
		} else {
			scored = append(scored, i)
		}
	}
	return
}

// Issue 57, item 5: class 0's selection rate moves in one group of a
// three-class task. The baseline of three classes reports it, by class and
// group name, with the c-class ΔDP; the binary baseline (class 1 against
// the rest, what every baseline was before) sees nothing, as class 1's
// rates do not move.
func TestDriftThreeClassesClassZeroMoves(t *testing.T) {
	pred, labels, sens, val, scored := threeClassShift()
	probs := predProbs(pred, 3)
	opt, cfg := DefaultOptions(), DefaultBootstrapConfig()
	b, err := NewBaseline(probs, 3, labels, sens, val, opt, cfg)
	require.NoError(t, err)
	b.GroupNames = []string{"A", "B"}
	b.ClassNames = []string{"low", "mid", "high"}
	require.NoError(t, b.Validate())
	assert.Equal(t, 3, b.Classes)
	assert.Empty(t, b.Groups)
	require.Len(t, b.ClassGroups, 3)
	for k := range 3 {
		require.Len(t, b.ClassGroups[k], 2)
		for g := range 2 {
			r := b.ClassGroups[k][g]
			assert.Equal(t, 300, r.Count)
			assert.Equal(t, wilson(100, 300, 0.95), r.Selection, "class %d group %d: 100 of 300 predicted", k, g)
			require.NotNil(t, r.TPR)
			assert.Equal(t, wilson(100, 100, 0.95), *r.TPR, "labels = predictions")
			require.NotNil(t, r.FPR)
			assert.Equal(t, wilson(0, 200, 0.95), *r.FPR)
		}
	}
	require.Contains(t, b.Criteria, DPDifference)
	assert.Equal(t, 0.0, b.Criteria[DPDifference].Point, "every class equally selected in both groups")

	d, err := b.Compare(Scored{Probs: probs, Classes: 3, Sens: sens, Nodes: scored}, opt, cfg)
	require.NoError(t, err)
	assert.Equal(t, 600, d.Nodes)
	assert.Equal(t, 0, d.Labelled)
	assert.Empty(t, d.Groups)
	require.Len(t, d.Classes, 3)
	assert.Equal(t, "low", d.Classes[0].Name)
	now := d.Classes[0].Groups[1].Now.Selection
	assert.Equal(t, 160.0/300, now.Point, "class 0 in group B: 160 of 300")
	assert.Equal(t, wilson(160, 300, 0.95), now)
	assert.Equal(t, wilson(100, 300, 0.95), d.Classes[1].Groups[1].Now.Selection, "class 1 did not move")
	assert.Contains(t, d.Warnings, fmt.Sprintf(`group "B"'s selection rate of class "low" is %s on 300 scored nodes, outside its validation-time interval %s`, pct(wilson(160, 300, 0.95)), pct(wilson(100, 300, 0.95))))
	assert.Contains(t, d.Warnings, fmt.Sprintf(`group "B"'s selection rate of class "high" is %s on 300 scored nodes, outside its validation-time interval %s`, pct(wilson(40, 300, 0.95)), pct(wilson(100, 300, 0.95))))
	for _, w := range append(append([]string(nil), d.Warnings...), d.Notes...) {
		assert.NotContains(t, w, `class "mid"`, "class 1's rates did not move")
		assert.NotContains(t, w, `group "A"'s`, "group A did not move")
	}

	// The c-class ΔDP: 60/300 for class 0 and for class 2 (a tie: the
	// higher class attains it), on every scored node, labels unread.
	var dp *CriterionDrift
	for k := range d.Criteria {
		assert.Empty(t, d.Criteria[k].Criterion.Rates()[1:], "only selection-rate criteria without labels")
		if d.Criteria[k].Criterion == DPDifference {
			dp = &d.Criteria[k]
		}
	}
	require.NotNil(t, dp)
	assert.InDelta(t, 0.2, dp.Now.Point, 1e-15)
	require.NotNil(t, dp.Class)
	assert.Equal(t, 2, *dp.Class)
	assert.True(t, dp.Significant)
	assert.Contains(t, d.String(), `ΔDP over the 3 classes is 20.0% [`)
	assert.Contains(t, d.String(), `(class "high" against the rest, the worst class now)`)

	// The binary baseline of the same decisions (class 1 against the
	// rest) is blind to it.
	bin := make([]float64, 2*len(pred))
	binLabels := make([]int, len(pred))
	for i, k := range pred {
		if k == 1 {
			bin[2*i+1] = 1
		} else {
			bin[2*i] = 1
		}
		binLabels[i] = -1
		if labels[i] >= 0 && labels[i] == 1 {
			binLabels[i] = 1
		} else if labels[i] >= 0 {
			binLabels[i] = 0
		}
	}
	bb, err := NewBaseline(bin, 2, binLabels, sens, val, opt, cfg)
	require.NoError(t, err)
	assert.Equal(t, bb.Groups, b.ClassGroups[1], "class 1's rates are the binary baseline's")
	bd, err := bb.Compare(Scored{Probs: bin, Classes: 2, Sens: sens, Nodes: scored}, opt, cfg)
	require.NoError(t, err)
	assert.Empty(t, bd.Warnings, "the binary baseline sees no drift")
	assert.Empty(t, bd.Notes)
}

// A baseline of c > 2 classes compared with scores of another number of
// classes, or a binary one (or one written before per-class baselines)
// with c-class scores, is an error in words.
func TestDriftClassesMismatch(t *testing.T) {
	pred, labels, sens, val, scored := threeClassShift()
	opt, cfg := DefaultOptions(), DefaultBootstrapConfig()
	b, err := NewBaseline(predProbs(pred, 3), 3, labels, sens, val, opt, cfg)
	require.NoError(t, err)
	two := make([]int, len(pred))
	for i, k := range pred {
		two[i] = min(k, 1)
	}
	_, err = b.Compare(Scored{Probs: predProbs(two, 2), Classes: 2, Sens: sens, Nodes: scored}, opt, cfg)
	assert.ErrorIs(t, err, ErrClasses)
	assert.ErrorContains(t, err, "recorded for 3 classes and the scores have 2")
	_, err = b.Compare(Scored{Probs: predProbs(pred, 4)[:len(pred)*4], Classes: 4, Sens: sens, Nodes: scored}, opt, cfg)
	assert.ErrorIs(t, err, ErrClasses)

	old, _ := goldenBinary(t)
	_, err = old.Compare(Scored{Probs: predProbs(pred, 3), Classes: 3, Sens: sens, Nodes: scored}, opt, cfg)
	assert.ErrorIs(t, err, ErrClasses)
	assert.ErrorContains(t, err, "recorded for two classes (or before baselines recorded each class")
	assert.ErrorContains(t, err, "save the model again to record a baseline of its 3 classes")
}

// classData: n nodes, groups 0..2, 3 classes, scores biased by group,
// labels drawn from them (some unknown).
func classData(n int, bias float64, seed int64) (probs []float64, labels, sens []int) {
	rng := rand.New(rand.NewSource(seed))
	probs = make([]float64, 3*n)
	labels, sens = make([]int, n), make([]int, n)
	for i := range sens {
		sens[i] = i % 3
		w := []float64{1 + bias*float64(sens[i]), 1 + rng.Float64(), 1 + rng.Float64()}
		w[rng.Intn(3)] += 1.5
		sum := w[0] + w[1] + w[2]
		u := rng.Float64() * sum
		labels[i] = 2
		for k, acc := 0, 0.0; k < 3; k++ {
			probs[3*i+k] = w[k] / sum
			acc += w[k]
			if u < acc && labels[i] == 2 {
				labels[i] = k
				break
			}
		}
		if i%11 == 0 {
			labels[i] = -1
		}
	}
	return
}

// The c-class criteria of a baseline and of a comparison are
// BootstrapClasses', digit for digit: the baseline's on the validation
// nodes, the comparison's on the scored nodes (the selection-rate ones on
// every node of a known group: with every scored node labelled, the
// same), with the attaining class of EvaluateClasses.
func TestDriftClassesCriteriaAreBootstrapClasses(t *testing.T) {
	probs, labels, sens := classData(900, 0.8, 5)
	opt, cfg := DefaultOptions(), DefaultBootstrapConfig()
	cfg.Resamples = 300
	var val, scored []int
	for i := range sens {
		switch {
		case i < 450:
			val = append(val, i)
		case labels[i] >= 0:
			scored = append(scored, i)
		}
	}
	b, err := NewBaseline(probs, 3, labels, sens, val, opt, cfg)
	require.NoError(t, err)
	iv, err := BootstrapClasses(probs, 3, labels, sens, val, Options{Threshold: 0.5, Positive: 1, AllowUndefined: true}, cfg)
	require.NoError(t, err)
	assert.Equal(t, iv.Criteria, b.Criteria)
	assert.Equal(t, iv.Evaluated, b.Nodes)

	d, err := CompareBaseline(b, probs, 3, labels, sens, scored, opt, cfg)
	require.NoError(t, err)
	now, err := BootstrapClasses(probs, 3, labels, sens, scored, Options{Threshold: 0.5, Positive: 1, AllowUndefined: true}, cfg)
	require.NoError(t, err)
	r, err := EvaluateClasses(probs, 3, labels, sens, scored, opt)
	require.NoError(t, err)
	require.Len(t, d.Criteria, len(b.Criteria), "every criterion compared")
	for _, cd := range d.Criteria {
		assert.Equal(t, now.Criteria[cd.Criterion], cd.Now, "%s", cd.Criterion)
		assert.Equal(t, b.Criteria[cd.Criterion], cd.Baseline)
		_, k, err := r.Breakdown.Criterion(cd.Criterion)
		require.NoError(t, err)
		require.NotNil(t, cd.Class)
		assert.Equal(t, k, *cd.Class, "%s", cd.Criterion)
	}
	// Against itself, nothing moves.
	self, err := CompareBaseline(b, probs, 3, labels, sens, val, opt, cfg)
	require.NoError(t, err)
	assert.Empty(t, self.Warnings)
	assert.Empty(t, self.Notes)
}

// A baseline of c classes goes through JSON and back unchanged, strictly
// decoded, and compares as before; Validate refuses what NewBaseline
// never makes.
func TestBaselineClassesJSON(t *testing.T) {
	pred, labels, sens, val, scored := threeClassShift()
	probs := predProbs(pred, 3)
	opt, cfg := DefaultOptions(), DefaultBootstrapConfig()
	b, err := NewBaseline(probs, 3, labels, sens, val, opt, cfg)
	require.NoError(t, err)
	b.GroupNames = []string{"A", "B"}
	b.ClassNames = []string{"low", "mid", "high"}
	x := make([]float64, len(sens))
	for i := range x {
		x[i] = float64(i % 7)
	}
	require.NoError(t, b.RecordFeatures(x, 1, []string{"f"}, val))
	j, err := json.Marshal(b)
	require.NoError(t, err)
	assert.Contains(t, string(j), `"classes":3`)
	assert.Contains(t, string(j), `"class_names":["low","mid","high"]`)
	var back Baseline
	dec := json.NewDecoder(bytes.NewReader(j))
	dec.DisallowUnknownFields()
	require.NoError(t, dec.Decode(&back))
	assert.Equal(t, b, back)
	require.NoError(t, back.Validate())
	sc := Scored{Probs: probs, Classes: 3, Sens: sens, Nodes: scored, X: x, D: 1}
	want, err := b.Compare(sc, opt, cfg)
	require.NoError(t, err)
	got, err := back.Compare(sc, opt, cfg)
	require.NoError(t, err)
	assert.Equal(t, want, got)
	dj, err := json.Marshal(got)
	require.NoError(t, err)
	assert.Contains(t, string(dj), `"classes":[{"class":0,"name":"low","groups":[`)

	for name, tc := range map[string]struct {
		edit func(*Baseline)
		want string
	}{
		"two classes":     {func(b *Baseline) { b.Classes = 2 }, "want 0 for two classes or c ≥ 3"},
		"one class short": {func(b *Baseline) { b.ClassGroups = b.ClassGroups[:2] }, "ClassGroups has 2 classes, want Classes = 3"},
		"groups too":      {func(b *Baseline) { b.Groups = b.ClassGroups[0] }, "want the groups of c > 2 classes in ClassGroups alone"},
		"other counts": {func(b *Baseline) {
			g := append([]GroupRates(nil), b.ClassGroups[2]...)
			g[1].Count++
			b.ClassGroups[2] = g
		}, "ClassGroups[2] lists other groups or counts"},
		"rate out of unit": {func(b *Baseline) {
			g := append([]GroupRates(nil), b.ClassGroups[1]...)
			g[0].Selection.Hi = 1.5
			b.ClassGroups[1] = g
		}, "group 0's selection rate of class 1"},
		"names short":  {func(b *Baseline) { b.ClassNames = b.ClassNames[:2] }, "ClassNames has 2 names for 3 classes"},
		"names twice":  {func(b *Baseline) { b.ClassNames = []string{"low", "low", "high"} }, `classes 0 and 1 are both named "low"`},
		"name empty":   {func(b *Baseline) { b.ClassNames = []string{"low", "", "high"} }, "ClassNames[1] is empty"},
		"binary named": {func(b *Baseline) { b.Classes, b.ClassGroups, b.Groups = 0, nil, b.ClassGroups[1] }, "but Classes = 0"},
	} {
		t.Run(strings.ReplaceAll(name, " ", "_"), func(t *testing.T) {
			bad := back
			bad.ClassNames = append([]string(nil), back.ClassNames...)
			bad.ClassGroups = append([][]GroupRates(nil), back.ClassGroups...)
			tc.edit(&bad)
			err := bad.Validate()
			assert.ErrorIs(t, err, ErrValue)
			assert.ErrorContains(t, err, tc.want)
		})
	}
}
