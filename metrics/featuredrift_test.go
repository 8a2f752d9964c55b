package metrics

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRecordFeaturesHand(t *testing.T) {
	// Column a: 1..10 → deciles 1..9 (the ⌈k⌉th value), ten bins of 0.1.
	// Column b: six 0s and four 1s → deciles 0 ×6, 1 ×3 → edges 0, 1;
	// bins (−∞, 0], (0, 1], (1, ∞): 0.6, 0.4, 0.
	x := make([]float64, 0, 20)
	for i := range 10 {
		b := 0.0
		if i >= 6 {
			b = 1
		}
		x = append(x, float64(i+1), b)
	}
	var bl Baseline
	require.NoError(t, bl.RecordFeatures(x, 2, []string{"a", "b"}, nil))
	require.Len(t, bl.Features, 2)
	assert.Equal(t, 2, bl.FeatureColumns)
	a := bl.Features[0]
	assert.Equal(t, FeatureRef{Name: "a", Nodes: 10, Min: 1, Max: 10, Edges: []float64{1, 2, 3, 4, 5, 6, 7, 8, 9},
		Fractions: []float64{0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1}}, a)
	assert.Equal(t, FeatureRef{Name: "b", Nodes: 10, Min: 0, Max: 1, Edges: []float64{0, 1}, Fractions: []float64{0.6, 0.4, 0}}, bl.Features[1])
	assert.Equal(t, 2.0, FeatureRef{Min: 0, Max: 1}.Beyond(3), "three times the maximum of [0, 1]: two widths beyond")
	assert.Equal(t, 0.0, a.Beyond(5))
	assert.Equal(t, 1.0, a.Beyond(-8), "9 below 1 over a width of 9")
	assert.Equal(t, 1.0, FeatureRef{Min: 2, Max: 2}.Width(), "constant feature: width 1")

	// Only the training rows: rows 0..4 of a are 1..5.
	require.NoError(t, bl.RecordFeatures(x, 2, nil, []int{0, 1, 2, 3, 4}))
	assert.Equal(t, "x0", bl.Features[0].Name)
	assert.Equal(t, 5.0, bl.Features[0].Max)

	// Errors leave the baseline as it was.
	before := bl
	for _, c := range []struct {
		x     []float64
		d     int
		names []string
		nodes []int
		want  error
	}{
		{x[:3], 2, nil, nil, ErrLength},
		{x, 2, []string{"a"}, nil, ErrValue},
		{x, 2, []string{"a", "a"}, nil, ErrValue},
		{x, 2, []string{"a", ""}, nil, ErrValue},
		{x, 2, nil, []int{10}, ErrValue},
		{x, 2, nil, []int{}, ErrEmpty},
		{[]float64{1, math.NaN()}, 2, nil, nil, ErrValue},
	} {
		assert.ErrorIs(t, bl.RecordFeatures(c.x, c.d, c.names, c.nodes), c.want)
	}
	assert.Equal(t, before, bl)
}

// normalRows returns n rows of d features, each N(0, 1) plus shift[j].
func normalRows(rng *rand.Rand, n, d int, shift []float64) []float64 {
	x := make([]float64, n*d)
	for i := range x {
		x[i] = rng.NormFloat64()
		if shift != nil {
			x[i] += shift[i%d]
		}
	}
	return x
}

func TestFeatureDriftShiftedAndSame(t *testing.T) {
	rng := rand.New(rand.NewSource(21))
	const d = 5
	names := []string{"age", "income", "priors", "score", "tenure"}
	var bl Baseline
	require.NoError(t, bl.RecordFeatures(normalRows(rng, 2000, d, nil), d, names, nil))

	// The same population: no warning.
	fd, err := bl.CompareFeatures(normalRows(rng, 500, d, nil), d, nil)
	require.NoError(t, err)
	assert.Empty(t, fd.Warnings)
	require.Len(t, fd.Features, d)
	for _, f := range fd.Features {
		assert.Less(t, f.PSI, 0.1, f.Name)
	}

	// "income" shifted by one standard deviation: a major shift, named.
	fd, err = bl.CompareFeatures(normalRows(rng, 500, d, []float64{0, 1, 0, 0, 0}), d, nil)
	require.NoError(t, err)
	require.Len(t, fd.Warnings, 1, fd.String())
	assert.Contains(t, fd.Warnings[0], `feature "income": its distribution on the 500 scored nodes has a PSI of`)
	assert.Contains(t, fd.Warnings[0], "a major shift")
	assert.True(t, fd.Features[1].Significant)
	assert.Greater(t, fd.Features[1].PSI, 0.25)

	// "priors" at three times its training maximum on 10 of 200 nodes:
	// at least one width beyond the range, a warning naming it.
	x := normalRows(rng, 200, d, nil)
	mx := bl.Features[2].Max
	for i := range 10 {
		x[i*d+2] = 3 * mx
	}
	fd, err = bl.CompareFeatures(x, d, nil)
	require.NoError(t, err)
	want := fmt.Sprintf(`feature "priors": 5.0%% of the 200 scored nodes (10) are above its training maximum %.4g`, mx)
	found := false
	for _, w := range fd.Warnings {
		if strings.HasPrefix(w, want) {
			found = true
			assert.Contains(t, w, fmt.Sprintf("up to %.3g× the range's width beyond it", 2*mx/bl.Features[2].Width()))
		}
	}
	assert.True(t, found, "%q in %q", want, fd.Warnings)
	assert.InDelta(t, 2*mx/bl.Features[2].Width(), fd.Features[2].Beyond, 1e-12)
	assert.Equal(t, 0.05, fd.Features[2].Above)

	// One node whose "age" is 1e18 (issue 53's B3: x0 = 1e18 against a
	// range of −3.5…3.25): far beyond the range, a warning on its own.
	x = normalRows(rng, 200, d, nil)
	x[7*d] = 1e18
	fd, err = bl.CompareFeatures(x, d, nil)
	require.NoError(t, err)
	require.Len(t, fd.Warnings, 1, fd.String())
	age := bl.Features[0]
	assert.Equal(t, fmt.Sprintf(`feature "age": 0.5%% of the 200 scored nodes (1) are above its training maximum %.4g (training range %.4g…%.4g), up to %.3g× the range's width beyond it`,
		age.Max, age.Min, age.Max, (1e18-age.Max)/age.Width()), fd.Warnings[0])

	// Errors.
	_, err = bl.CompareFeatures(x, d+1, nil)
	assert.ErrorIs(t, err, ErrValue)
	_, err = Baseline{}.CompareFeatures(x, d, nil)
	assert.ErrorIs(t, err, ErrNoFeatures)
	x[3] = math.Inf(1)
	_, err = bl.CompareFeatures(x, d, nil)
	assert.ErrorContains(t, err, `node 0's feature "score" is +Inf`)
}

// TestFeatureDriftFalseAlarms measures how often scored nodes drawn from
// the training population raise a feature warning: 300 seeded
// repetitions per size of the scored set, 8 features of 1000 training
// nodes (normal, and a skewed, a discrete and a binary one).
func TestFeatureDriftFalseAlarms(t *testing.T) {
	const (
		reps = 300
		n    = 1000
		d    = 8
	)
	draw := func(rng *rand.Rand, m int) []float64 {
		x := normalRows(rng, m, d, nil)
		for i := range m {
			x[i*d+5] = math.Exp(x[i*d+5])           // log-normal: a long right tail
			x[i*d+6] = float64(rng.Intn(4))         // discrete 0..3
			x[i*d+7] = float64(rng.Intn(10) / 7)    // binary, 30% ones
			x[i*d+4] = math.Round(x[i*d+4]*10) / 10 // ties
		}
		return x
	}
	for _, m := range []int{30, 200, 1000} {
		rng := rand.New(rand.NewSource(int64(m)))
		alarms, notes := 0, 0
		for range reps {
			var bl Baseline
			require.NoError(t, bl.RecordFeatures(draw(rng, n), d, nil, nil))
			fd, err := bl.CompareFeatures(draw(rng, m), d, nil)
			require.NoError(t, err)
			if len(fd.Warnings) > 0 {
				alarms++
			}
			if len(fd.Notes) > 0 {
				notes++
			}
		}
		t.Logf("%d scored nodes from the training population: a feature warning in %d of %d repetitions (%.1f%%), a note in %d", m, alarms, reps, 100*float64(alarms)/reps, notes)
		assert.LessOrEqual(t, alarms, reps*3/100, "m = %d", m)
	}
}

func TestBaselineJSONWithFeaturesAndNames(t *testing.T) {
	p, labels, sens := driftData(400, 0.5, 4)
	b, err := NewBaseline(p, 2, labels, sens, nil, DefaultOptions(), DefaultBootstrapConfig())
	require.NoError(t, err)
	// A file written before names and features: its JSON has neither
	// key, and it still validates.
	old, err := json.Marshal(b)
	require.NoError(t, err)
	assert.NotContains(t, string(old), "group_names")
	assert.NotContains(t, string(old), "features")
	var back Baseline
	require.NoError(t, json.Unmarshal(old, &back))
	require.NoError(t, back.Validate())

	b.GroupNames = []string{"Male", "Female"}
	rng := rand.New(rand.NewSource(5))
	const d = 300 // more than a baseline records
	require.NoError(t, b.RecordFeatures(normalRows(rng, 400, d, nil), d, nil, nil))
	assert.Len(t, b.Features, MaxFeatureColumns)
	require.NoError(t, b.Validate())
	js, err := json.Marshal(b)
	require.NoError(t, err)
	t.Logf("a baseline with %d feature references: %d bytes of JSON", len(b.Features), len(js))
	assert.Less(t, len(js), 256<<10, "a quarter of a model file's 1 MiB header at most")
	back = Baseline{}
	require.NoError(t, json.Unmarshal(js, &back))
	require.NoError(t, back.Validate())
	assert.Equal(t, b.Features, back.Features)
	assert.Equal(t, b.GroupNames, back.GroupNames)
	fd, err := back.CompareFeatures(normalRows(rng, 50, d, nil), d, nil)
	require.NoError(t, err)
	assert.Contains(t, fd.String(), "features 256 to 299 of 300 are not compared")

	for name, bad := range map[string]func(*Baseline){
		"one name":        func(b *Baseline) { b.GroupNames = []string{"Male"} },
		"empty name":      func(b *Baseline) { b.GroupNames = []string{"Male", ""} },
		"repeated name":   func(b *Baseline) { b.GroupNames = []string{"F", "F"} },
		"no columns":      func(b *Baseline) { b.FeatureColumns = 0 },
		"edges unordered": func(b *Baseline) { b.Features[0].Edges[1] = b.Features[0].Edges[0] },
		"fractions":       func(b *Baseline) { b.Features[0].Fractions[0] += 0.5 },
		"range":           func(b *Baseline) { b.Features[0].Min = b.Features[0].Max + 1 },
		"names repeat":    func(b *Baseline) { b.Features[1].Name = b.Features[0].Name },
	} {
		c := back
		c.GroupNames = slicesClone(back.GroupNames)
		c.Features = append([]FeatureRef(nil), back.Features...)
		c.Features[0].Edges = slicesClone(back.Features[0].Edges)
		c.Features[0].Fractions = slicesClone(back.Features[0].Fractions)
		bad(&c)
		assert.ErrorIs(t, c.Validate(), ErrValue, name)
	}
}

func slicesClone[T any](s []T) []T { return append([]T(nil), s...) }

// TestDriftGroupMixWithoutLabels is issue 53's A4: unlabelled new nodes,
// 90% of one group where validation had 30%, raised no warning. The
// group mix is compared without labels, and every message names the
// group by its value.
func TestDriftGroupMixWithoutLabels(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	// Validation: 1000 nodes, 30% Female (group 1); decisions independent
	// of the group, so only the mix can drift.
	mk := func(n int, female float64, labelled bool) (p []float64, labels, sens []int) {
		p = make([]float64, 2*n)
		labels = make([]int, n)
		sens = make([]int, n)
		for i := range n {
			if float64(i%100) < 100*female {
				sens[i] = 1
			}
			v := 0.2
			if rng.Float64() < 0.4 {
				v = 0.8
			}
			p[2*i], p[2*i+1] = 1-v, v
			labels[i] = -1
			if labelled {
				labels[i] = rng.Intn(2)
			}
		}
		return
	}
	p, labels, sens := mk(1000, 0.3, true)
	b, err := NewBaseline(p, 2, labels, sens, nil, DefaultOptions(), DefaultBootstrapConfig())
	require.NoError(t, err)
	b.GroupNames = []string{"Male", "Female"}
	require.NoError(t, b.Validate())

	// The same mix, unlabelled: nothing about the mix.
	q, ql, qs := mk(500, 0.3, false)
	d, err := b.Compare(Scored{Probs: q, Classes: 2, Labels: ql, Sens: qs}, DefaultOptions(), DefaultBootstrapConfig())
	require.NoError(t, err)
	for _, w := range d.Warnings {
		assert.NotContains(t, w, "share", w)
	}
	require.Len(t, d.GroupMix, 2)

	// 90% Female, no labels (Labels nil): a warning naming "Female".
	q, _, qs = mk(500, 0.9, false)
	d, err = b.Compare(Scored{Probs: q, Classes: 2, Sens: qs}, DefaultOptions(), DefaultBootstrapConfig())
	require.NoError(t, err)
	assert.Equal(t, 0, d.Labelled)
	require.Len(t, d.GroupMix, 2)
	f := d.GroupMix[1]
	assert.Equal(t, "Female", f.Name)
	assert.True(t, f.Significant)
	assert.Equal(t, 0.3, f.Baseline.Point)
	assert.Equal(t, 0.9, f.Now.Point)
	found := false
	for _, w := range d.Warnings {
		if strings.HasPrefix(w, `group "Female" is 90.0% [`) && strings.Contains(w, "of the 500 scored nodes of a known group, outside its validation-time share 30.0% [") {
			found = true
		}
	}
	assert.True(t, found, "%q", d.Warnings)
	for _, s := range append(append([]string(nil), d.Warnings...), d.Notes...) {
		assert.NotRegexp(t, `group \d`, s, "a group named by its index")
	}

	// Without names: "group 1".
	b.GroupNames = nil
	d, err = b.Compare(Scored{Probs: q, Classes: 2, Sens: qs}, DefaultOptions(), DefaultBootstrapConfig())
	require.NoError(t, err)
	assert.Contains(t, d.String(), "group 1 is 90.0%")
}

// TestDriftNamesEveryGroup: with names, no drift message names a group
// by its index (the shifted population of TestDriftAgainstItselfAndAShift,
// whose selection rates leave, and a group the baseline never saw).
func TestDriftNamesEveryGroup(t *testing.T) {
	p, labels, sens := driftData(2000, 0.2, 1)
	b, err := NewBaseline(p, 2, labels, sens, nil, DefaultOptions(), DefaultBootstrapConfig())
	require.NoError(t, err)
	b.GroupNames = []string{"North", "South", "East"}
	require.NoError(t, b.Validate())
	q, ql, qs := driftData(600, 2.5, 2)
	for i := 0; i < 600; i += 7 {
		qs[i] = 2 // a group with no baseline node
	}
	d, err := CompareBaseline(b, q, 2, ql, qs, nil, DefaultOptions(), DefaultBootstrapConfig())
	require.NoError(t, err)
	all := d.String()
	assert.Contains(t, all, `group "South"'s selection rate`)
	assert.Contains(t, all, `group "East" has 86 scored nodes and none in the baseline`)
	assert.NotRegexp(t, `group \d`, all)
	assert.Equal(t, "South", d.Groups[1].Name)
}

// TestCompareOneCall: outcomes, group mix and features from one call,
// and a baseline without features says so.
func TestCompareOneCall(t *testing.T) {
	rng := rand.New(rand.NewSource(9))
	p, labels, sens := driftData(1000, 0.2, 3)
	b, err := NewBaseline(p, 2, labels, sens, nil, DefaultOptions(), DefaultBootstrapConfig())
	require.NoError(t, err)
	s := Scored{Probs: p[:400], Classes: 2, Sens: sens[:200], X: normalRows(rng, 200, 3, nil), D: 3}
	d, err := b.Compare(s, DefaultOptions(), DefaultBootstrapConfig())
	require.NoError(t, err)
	assert.Nil(t, d.Features)
	assert.Contains(t, d.Notes, "the baseline records no features (Baseline.RecordFeatures before saving it): feature drift is not measured")

	require.NoError(t, b.RecordFeatures(normalRows(rng, 1000, 3, nil), 3, []string{"a", "b", "c"}, nil))
	s.X = normalRows(rng, 200, 3, []float64{0, 0, 2})
	d, err = b.Compare(s, DefaultOptions(), DefaultBootstrapConfig())
	require.NoError(t, err)
	require.NotNil(t, d.Features)
	assert.Len(t, d.GroupMix, 2)
	assert.Contains(t, d.String(), `feature "c"`)
	assert.Subset(t, d.Warnings, d.Features.Warnings)
	s.X = s.X[:5]
	_, err = b.Compare(s, DefaultOptions(), DefaultBootstrapConfig())
	assert.ErrorIs(t, err, ErrLength)
}
