package metrics

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestFrameRefusesNonFinite: a user's metric that returns NaN or ±Inf,
// overall or in any group, is refused with the metric and the group
// named, whichever group it is (before, a NaN in group 0 made Difference
// NaN and one in group 1 was silently ignored by GroupMin/GroupMax).
func TestFrameRefusesNonFinite(t *testing.T) {
	bad := func(v float64, on int) Metric {
		return func(pred, labels []int) (float64, error) {
			if len(pred) == on {
				return v, nil
			}
			return 0.5, nil
		}
	}
	// triSens has groups of 6, 4 and 5 evaluated nodes, 15 in all.
	for _, v := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		for on, who := range map[int]string{6: "group 0", 4: "group 1", 5: "group 2", 15: "all evaluated nodes"} {
			f, err := NewFrame("mine", bad(v, on), triPred, triLabels, triSens)
			require.Error(t, err, "%v on %s", v, who)
			assert.Nil(t, f)
			assert.ErrorIs(t, err, ErrValue)
			assert.ErrorContains(t, err, "mine")
			assert.ErrorContains(t, err, who)
			assert.ErrorContains(t, err, "not finite")
		}
	}
	f, err := NewFrame("mine", bad(0.25, 4), triPred, triLabels, triSens)
	require.NoError(t, err)
	near(t, "difference", f.Difference(BetweenGroups), 0.25)
}

// TestMissingGroupEitherPosition: the groups are 0..G−1 with G = 1 + the
// largest id anywhere in sens (every node given, also those left out for
// an unknown label and, for Evaluate, those outside the subset), and a
// group without an evaluated node is an error naming it, whether it is a
// middle id or the highest. Before, a highest group whose nodes all had
// unknown labels (or lay outside the subset) was dropped silently and the
// differences were those of the other groups.
func TestMissingGroupEitherPosition(t *testing.T) {
	for _, missing := range []int{1, 2} {
		// Unknown labels for every node of the missing group.
		labels := append([]int(nil), triLabels...)
		var others []int
		for i, s := range triSens {
			if s == missing {
				labels[i] = -1
			} else {
				others = append(others, i)
			}
		}
		msg := func(f string) string { return f + " without group " + string(rune('0'+missing)) }
		_, err := NewFrame("accuracy", Accuracy, triPred, labels, triSens)
		assert.ErrorIs(t, err, ErrEmptyGroup, msg("NewFrame"))
		assert.ErrorContains(t, err, "group "+string(rune('0'+missing)), msg("NewFrame"))
		_, err = ByGroup(triPred, labels, triSens)
		assert.ErrorIs(t, err, ErrEmptyGroup, msg("ByGroup"))
		assert.ErrorContains(t, err, "group "+string(rune('0'+missing)), msg("ByGroup"))
		_, err = BootstrapFrame("accuracy", Accuracy, triPred, labels, triSens, DefaultBootstrapConfig())
		assert.ErrorIs(t, err, ErrEmptyGroup, msg("BootstrapFrame"))

		// Evaluate on a subset without the group (labels all known).
		p := make([]float64, len(triPred))
		for i, y := range triPred {
			p[i] = 0.25 + 0.5*float64(y)
		}
		_, err = EvaluateBinary(p, triLabels, triSens, others, DefaultOptions())
		assert.ErrorIs(t, err, ErrEmptyGroup, msg("EvaluateBinary"))
		assert.ErrorContains(t, err, "group "+string(rune('0'+missing)), msg("EvaluateBinary"))
		_, err = Bootstrap(oneHot(p), 2, triLabels, triSens, others, DefaultOptions(), DefaultBootstrapConfig())
		assert.ErrorIs(t, err, ErrEmptyGroup, msg("Bootstrap"))
	}
}

// TestHugeGroupIDBounded: a group id far above the number of nodes is an
// error before anything of its size is allocated.
func TestHugeGroupIDBounded(t *testing.T) {
	sens := []int{0, 1, 1 << 40}
	pred, labels := []int{0, 1, 1}, []int{0, 1, -1}
	_, err := NewFrame("accuracy", Accuracy, pred, labels, sens)
	assert.ErrorIs(t, err, ErrEmptyGroup)
	_, err = ByGroup(pred, labels, sens)
	assert.ErrorIs(t, err, ErrEmptyGroup)
	_, err = EvaluateBinary([]float64{0.1, 0.9, 0.9}, labels, sens, []int{0, 1}, DefaultOptions())
	assert.ErrorIs(t, err, ErrEmptyGroup)
}

func oneHot(p []float64) []float64 {
	out := make([]float64, 0, 2*len(p))
	for _, v := range p {
		out = append(out, 1-v, v)
	}
	return out
}

// TestFrameF1ZeroDivision: F1 of a group with no positive label and no
// positive prediction is 0/0. F1 refuses it (ErrNoPositives, the group
// named, and the error says how to get sklearn's value);
// F1ZeroDivision(v) is sklearn's f1_score(zero_division=v), which
// fairlearn's MetricFrame reports: v for that group, explicitly chosen.
func TestFrameF1ZeroDivision(t *testing.T) {
	// Group 2 (nodes 10..14): every label and prediction 0.
	labels := append([]int(nil), triLabels...)
	pred := append([]int(nil), triPred...)
	for i := 10; i < 15; i++ {
		labels[i], pred[i] = 0, 0
	}
	_, err := NewFrame("f1", F1, pred, labels, triSens)
	assert.ErrorIs(t, err, ErrNoPositives)
	assert.ErrorContains(t, err, "f1 of group 2")
	assert.ErrorContains(t, err, "F1ZeroDivision")

	// Groups 0 and 1 as in TestFrameHandComputed: 4/6 and 4/5; overall TP
	// 4 FP 2 FN 1 → 8/11.
	for _, v := range []float64{0, 1} {
		f, err := NewFrame("f1", F1ZeroDivision(v), pred, labels, triSens)
		require.NoError(t, err, "zero_division=%v", v)
		for g, w := range []float64{4.0 / 6, 4.0 / 5, v} {
			near(t, "F1 by group", f.ByGroup[g], w)
		}
		near(t, "overall", f.Overall, 8.0/11)
		assert.Equal(t, []int{6, 4, 5}, f.Counts)
	}
	near(t, "difference with 0", mustFrame(t, F1ZeroDivision(0), pred, labels).Difference(BetweenGroups), 4.0/5)
	// A defined F1 is F1's; other errors stay errors.
	got, err := F1ZeroDivision(1)(triPred, triLabels)
	require.NoError(t, err)
	want, err := F1(triPred, triLabels)
	require.NoError(t, err)
	assert.Equal(t, want, got)
	_, err = F1ZeroDivision(0)([]int{0}, []int{-1})
	assert.ErrorIs(t, err, ErrEmpty)
	_, err = F1ZeroDivision(0)([]int{2}, []int{0})
	assert.ErrorIs(t, err, ErrValue)
	for _, v := range []float64{-1, 0.5, 2, math.NaN()} {
		_, err = F1ZeroDivision(v)([]int{0}, []int{0})
		assert.ErrorIs(t, err, ErrValue, "zero_division=%v", v)
	}
}

func mustFrame(t *testing.T, m Metric, pred, labels []int) *Frame {
	t.Helper()
	f, err := NewFrame("f1", m, pred, labels, triSens)
	require.NoError(t, err)
	return f
}
