package metrics

import (
	"bytes"
	"encoding/gob"
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// undefinedCase: four nodes, group 0 = {0, 1} with labels 1, 0 and group
// 1 = {2, 3} with labels 1, 1: group 1 has no negative node, so its
// false-positive rate, and equalized odds, are undefined; ΔDP and ΔEO are
// defined. Decisions (P(y=1) > 0.5): 1, 0, 1, 0.
func undefinedCase() (p []float64, labels, sens []int) {
	return []float64{0.9, 0.2, 0.8, 0.3}, []int{1, 0, 1, 1}, []int{0, 0, 1, 1}
}

// TestAllowUndefined: with Options.AllowUndefined an undefined metric is
// NaN, named in Report.Undefined with the group, null in JSON and "n/a"
// in the row; the others are their hand values. Without it, Evaluate
// returns the error, as before.
func TestAllowUndefined(t *testing.T) {
	p, labels, sens := undefinedCase()
	_, err := EvaluateBinary(p, labels, sens, nil, DefaultOptions())
	require.ErrorIs(t, err, ErrNoNegatives, "the default stays strict")

	opt := DefaultOptions()
	opt.AllowUndefined = true
	r, err := EvaluateBinary(p, labels, sens, nil, opt)
	require.NoError(t, err)
	// Selection rates 1/2 and 1/2: ΔDP 0. TPR 1/1 and 1/2: ΔEO 0.5.
	assert.InDelta(t, 0.0, r.DemographicParity, 1e-15)
	assert.InDelta(t, 0.5, r.EqualOpportunity, 1e-15)
	assert.True(t, math.IsNaN(r.EqualizedOdds), "equalized odds needs group 1's FPR")
	require.Len(t, r.Undefined, 1)
	assert.Equal(t, "equalized_odds", r.Undefined[0].Metric)
	assert.Contains(t, r.Undefined[0].Reason, "group 1")
	assert.NotContains(t, r.Undefined[0].Reason, ErrNoNegatives.Error(), "the reason reads without the sentinel's prefix")
	assert.Equal(t, "no-negatives", r.Undefined[0].Cause)
	assert.ErrorIs(t, r.Undefined[0].Err(), ErrNoNegatives)
	assert.Contains(t, r.Undefined[0].Err().Error(), "group 1")
	assert.True(t, r.IsUndefined("equalized_odds"))
	assert.False(t, r.IsUndefined("equal_opportunity"))
	// Accuracy 3/4, F1: tp 2, fp 0, fn 1 → 4/5.
	assert.InDelta(t, 0.75, r.Accuracy, 1e-15)
	assert.InDelta(t, 0.8, r.F1, 1e-15)

	row := r.String()
	assert.Equal(t, 1, strings.Count(row, "n/a"), row)

	b, err := json.Marshal(r)
	require.NoError(t, err, "NaN must not break the JSON")
	var m map[string]any
	require.NoError(t, json.Unmarshal(b, &m))
	assert.Nil(t, m["equalized_odds"], "undefined is null")
	assert.InDelta(t, 0.5, m["equal_opportunity"], 1e-15)
	groups := m["groups"].([]any)
	assert.Nil(t, groups[1].(map[string]any)["fpr"], "group 1's FPR has no denominator: null, not 0")
	assert.InDelta(t, 0.0, groups[0].(map[string]any)["fpr"], 1e-15, "group 0's FPR is a true 0")

	var back Report
	require.NoError(t, json.Unmarshal(b, &back))
	assert.True(t, math.IsNaN(back.EqualizedOdds))
	assert.InDelta(t, r.EqualOpportunity, back.EqualOpportunity, 0)
	assert.Equal(t, r.Groups, back.Groups)
	require.Len(t, back.Undefined, 1)
	assert.Equal(t, r.Undefined[0], back.Undefined[0], "plain data: the JSON round trip keeps everything")

	assert.Error(t, json.Unmarshal([]byte(`{"accuracy": 1, "surprise": 2}`), &back), "strict: an unknown field is an error")

	// Plain data for gob too (and Beam's coders): no interface inside.
	var buf bytes.Buffer
	require.NoError(t, gob.NewEncoder(&buf).Encode(r))
	var viaGob Report
	require.NoError(t, gob.NewDecoder(&buf).Decode(&viaGob))
	assert.True(t, math.IsNaN(viaGob.EqualizedOdds))
	assert.Equal(t, r.Undefined, viaGob.Undefined)
}

// TestAllowUndefinedInputErrors: AllowUndefined keeps every input error
// an error (it only concerns metrics undefined on valid input).
func TestAllowUndefinedInputErrors(t *testing.T) {
	p, labels, sens := undefinedCase()
	opt := DefaultOptions()
	opt.AllowUndefined = true
	p[0] = 1.5
	_, err := EvaluateBinary(p, labels, sens, nil, opt)
	assert.ErrorIs(t, err, ErrValue)
	_, err = EvaluateBinary(p[:3], labels, sens, nil, opt)
	assert.ErrorIs(t, err, ErrLength)
}

// TestBootstrapAllowUndefined: a group without positives makes ΔEO
// undefined; with AllowUndefined Bootstrap returns the other intervals,
// ΔEO's as undefined (null in JSON, "n/a"), and no ΔEO entry in Criteria.
func TestBootstrapAllowUndefined(t *testing.T) {
	var p []float64 // two columns: P(y=0), P(y=1)
	for _, q := range []float64{0.9, 0.2, 0.8, 0.3, 0.6, 0.1} {
		p = append(p, 1-q, q)
	}
	labels := []int{1, 0, 1, 0, 0, 0}
	sens := []int{0, 0, 0, 1, 1, 1}
	_, err := Bootstrap(p, 2, labels, sens, nil, DefaultOptions(), DefaultBootstrapConfig())
	require.ErrorIs(t, err, ErrNoPositives)

	opt := DefaultOptions()
	opt.AllowUndefined = true
	iv, err := Bootstrap(p, 2, labels, sens, nil, opt, DefaultBootstrapConfig())
	require.NoError(t, err)
	assert.True(t, iv.EqualOpportunity.Undefined())
	assert.Equal(t, "n/a", iv.EqualOpportunity.String())
	_, ok := iv.Of(EODifference)
	assert.False(t, ok)
	assert.False(t, iv.DemographicParity.Undefined())
	// Selection rates 2/3 and 1/3: ΔDP 1/3.
	assert.InDelta(t, 1.0/3, iv.DemographicParity.Point, 1e-12)
	b, err := json.Marshal(iv)
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, json.Unmarshal(b, &m))
	assert.Nil(t, m["equal_opportunity"])
	var back Intervals
	require.NoError(t, json.Unmarshal(b, &back))
	assert.True(t, back.EqualOpportunity.Undefined())
	assert.InDelta(t, iv.DemographicParity.Point, back.DemographicParity.Point, 0)
}

// TestNoGroups: a report without groups (built by hand) gives an error
// for every criterion, not a panic.
func TestNoGroups(t *testing.T) {
	for _, c := range Criteria() {
		_, err := c.Of(Report{Classes: 2, Accuracy: 1})
		assert.ErrorIs(t, err, ErrEmptyGroup, c.Name())
	}
	v, g := (&Frame{}).GroupMax()
	assert.True(t, math.IsNaN(v))
	assert.Equal(t, -1, g)
}
