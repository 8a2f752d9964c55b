package metrics

import (
	"errors"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestGroupByDegree(t *testing.T) {
	deg := []int{3, 1, 8, 1, 2, 3, 5, 3}
	// The paper's protocol: one group per distinct degree.
	d, err := GroupByDegree(deg, nil, EachDegree)
	require.NoError(t, err)
	assert.Equal(t, []int{2, 0, 4, 0, 1, 2, 3, 2}, d.Group)
	assert.Equal(t, []int{1, 2, 3, 5, 8}, d.Lo)
	assert.Equal(t, d.Lo, d.Hi)
	assert.Equal(t, []int{2, 1, 3, 1, 1}, d.Counts)
	assert.Equal(t, "degree 3", d.Name(2))

	// Two buckets of 4 nodes: degrees 1, 1, 2 make 3 < 4, degree 3 brings
	// 6; the rest (5, 8) are the second group.
	d, err = GroupByDegree(deg, nil, 2)
	require.NoError(t, err)
	assert.Equal(t, []int{0, 0, 1, 0, 0, 0, 1, 0}, d.Group)
	assert.Equal(t, []string{"degree 1–3", "degree 5–8"}, d.Names())
	assert.Equal(t, []int{6, 2}, d.Counts)

	// Four buckets of 2: {1}, {2, 3} (cumulative 6 ≥ 4), {5} (7 ≥ 6),
	// {8}.
	d, err = GroupByDegree(deg, nil, 4)
	require.NoError(t, err)
	assert.Equal(t, []int{1, 0, 3, 0, 1, 1, 2, 1}, d.Group)
	assert.Equal(t, []int{2, 4, 1, 1}, d.Counts)

	// A last group below half a share joins the one before it.
	d, err = GroupByDegree([]int{1, 1, 1, 1, 1, 1, 1, 9}, nil, 2)
	require.NoError(t, err)
	assert.Equal(t, []int{8}, d.Counts, "ties leave one group")
	d, err = GroupByDegree([]int{1, 1, 1, 2, 2, 2, 9}, nil, 2)
	require.NoError(t, err)
	assert.Equal(t, []int{7}, d.Counts, "{1, 2} (6 ≥ 3.5), then {9}: 1 < 3.5/2, merged")
	d, err = GroupByDegree([]int{1, 1, 2, 2, 3, 3, 4, 4, 5, 9}, nil, 3)
	require.NoError(t, err)
	assert.Equal(t, []int{4, 4, 2}, d.Counts, "{1, 2} (4 ≥ 3.3), {3, 4} (8 ≥ 6.7), {5, 9}: 2 ≥ 3.3/2, kept")

	// A subset: the others are −1, and only the subset's degrees count.
	d, err = GroupByDegree(deg, []int{2, 4, 6}, EachDegree)
	require.NoError(t, err)
	assert.Equal(t, []int{-1, -1, 2, -1, 0, -1, 1, -1}, d.Group)

	for _, c := range []struct {
		deg, nodes []int
		buckets    int
		want       error
		msg        string
	}{
		{deg, nil, 1, ErrValue, "buckets = 1"},
		{deg, nil, -2, ErrValue, "buckets = -2"},
		{[]int{1, -1}, nil, 0, ErrValue, "degrees[1] = -1"},
		{deg, []int{0, 9}, 0, ErrValue, "nodes[1] = 9"},
		{deg, []int{0, 0}, 0, ErrValue, "repeats"},
		{deg, []int{}, 0, ErrEmpty, "no nodes"},
	} {
		_, err := GroupByDegree(c.deg, c.nodes, c.buckets)
		assert.True(t, errors.Is(err, c.want), "%v", err)
		assert.ErrorContains(t, err, c.msg)
	}
}

func TestDegreeBiasHandComputed(t *testing.T) {
	probs := []float64{
		0.2, 0.8, // y 1, right
		0.6, 0.4, // y 1, wrong
		0.9, 0.1, // y 0, right
		0.5, 0.5, // y 0, right (0.5 is not above the threshold)
		0.3, 0.7, // unknown label
	}
	labels := []int{1, 1, 0, 0, -1}
	groups := []int{0, 0, 1, 1, 1}
	r, err := DegreeBias(probs, 2, labels, groups, nil, DefaultOptions())
	require.NoError(t, err)
	l0 := (-math.Log(0.8) - math.Log(0.4)) / 2
	l1 := (-math.Log(0.9) - math.Log(0.5)) / 2
	assert.Equal(t, 2, r.Groups)
	assert.Equal(t, 4, r.Evaluated)
	assert.Equal(t, []int{2, 2}, r.Counts)
	assert.Equal(t, 0.75, r.Accuracy)
	assert.Equal(t, []float64{0.5, 1}, r.AccuracyByGroup)
	assert.Equal(t, 0.5, r.AccuracyGap)
	assert.Equal(t, 0.5, r.WorstAccuracy)
	assert.InDeltaSlice(t, []float64{l0, l1}, r.LossByGroup, 1e-15)
	assert.InDelta(t, (l0+l1)/2, r.Loss, 1e-15)
	assert.InDelta(t, l0-l1, r.LossGap, 1e-15)
	assert.InDelta(t, (l0-l1)*(l0-l1)/2, r.LossVariance, 1e-15, "n − 1 = 1: the sample variance")

	// The accuracy gap is the accuracy Frame's difference between groups.
	pred := []int{1, 0, 0, 0, 1}
	f, err := NewFrame("accuracy", Accuracy, pred, labels, groups)
	require.NoError(t, err)
	assert.Equal(t, f.Difference(BetweenGroups), r.AccuracyGap)

	// Three groups: the variance has n − 1 = 2.
	r, err = DegreeBias([]float64{0.5, 0.5, 0.2, 0.8, 1, 0}, 2, []int{0, 1, 1}, []int{0, 1, 2}, nil, DefaultOptions())
	require.NoError(t, err)
	ls := []float64{-math.Log(0.5), -math.Log(0.8), -math.Log(1e-12)}
	m := (ls[0] + ls[1] + ls[2]) / 3
	v := ((ls[0]-m)*(ls[0]-m) + (ls[1]-m)*(ls[1]-m) + (ls[2]-m)*(ls[2]-m)) / 2
	assert.InDelta(t, v, r.LossVariance, 1e-12)
	assert.Equal(t, 0.0, r.WorstAccuracy, "the node certain and wrong")
}

func TestDegreeBiasErrors(t *testing.T) {
	probs := []float64{0.2, 0.8, 0.6, 0.4, 0.9, 0.1}
	labels := []int{1, 1, 0}
	for _, c := range []struct {
		probs         []float64
		labels, group []int
		nodes         []int
		want          error
		msg           string
	}{
		{probs, labels, []int{0, 0, 2}, nil, ErrEmptyGroup, "group 1 of 0..2"},
		{probs, labels, []int{0, 0, 0}, nil, ErrEmptyGroup, "only group 0"},
		{probs, labels, []int{0, 1, 1}, []int{0}, ErrEmptyGroup, "some group has no evaluated node"},
		{probs, labels, []int{0, 1}, nil, ErrLength, "len(groups)"},
		{probs[:4], labels, []int{0, 1, 1}, nil, ErrLength, "len(probs)"},
		{[]float64{0.2, 0.8, 0.6, 0.4, 1.5, 0}, labels, []int{0, 1, 1}, nil, ErrValue, "probs[4] = 1.5"},
		{probs, []int{1, 2, 0}, []int{0, 1, 1}, nil, ErrValue, "labels[1] = 2"},
		{probs, labels, []int{0, -2, 1}, nil, ErrValue, "groups[1] = -2"},
		{probs, []int{-1, -1, -1}, []int{0, 1, 1}, nil, ErrEmpty, "unknown"},
	} {
		_, err := DegreeBias(c.probs, 2, c.labels, c.group, c.nodes, DefaultOptions())
		assert.True(t, errors.Is(err, c.want), "%s: %v", c.msg, err)
		assert.ErrorContains(t, err, c.msg)
		_, err = BootstrapDegreeBias(c.probs, 2, c.labels, c.group, c.nodes, DefaultOptions(), DefaultBootstrapConfig())
		assert.True(t, errors.Is(err, c.want), "%s: %v", c.msg, err)
	}
	_, err := BootstrapDegreeBias(probs, 2, labels, []int{0, 1, 1}, nil, DefaultOptions(), BootstrapConfig{Resamples: 5, Level: 0.95})
	assert.True(t, errors.Is(err, ErrValue))
}

func TestBootstrapDegreeBias(t *testing.T) {
	// 200 nodes, 4 groups by degree; the lower the group, the worse.
	n := 200
	probs := make([]float64, 2*n)
	labels := make([]int, n)
	deg := make([]int, n)
	for i := 0; i < n; i++ {
		deg[i] = 1 + i%20
		labels[i] = i % 2
		p := 0.3 + 0.03*float64(deg[i]) // P(right)
		if (i/2)%3 == 0 {
			p = 1 - p
		}
		probs[2*i+labels[i]] = p
		probs[2*i+1-labels[i]] = 1 - p
	}
	d, err := GroupByDegree(deg, nil, 4)
	require.NoError(t, err)
	require.Equal(t, 4, d.Len())
	cfg := DefaultBootstrapConfig()
	iv, err := BootstrapDegreeBias(probs, 2, labels, d.Group, nil, DefaultOptions(), cfg)
	require.NoError(t, err)
	r, err := DegreeBias(probs, 2, labels, d.Group, nil, DefaultOptions())
	require.NoError(t, err)
	for _, c := range []struct {
		iv    Interval
		point float64
	}{{iv.Accuracy, r.Accuracy}, {iv.AccuracyGap, r.AccuracyGap}, {iv.WorstAccuracy, r.WorstAccuracy}, {iv.LossGap, r.LossGap}, {iv.LossVariance, r.LossVariance}} {
		assert.Equal(t, c.point, c.iv.Point)
		assert.LessOrEqual(t, c.iv.Lo, c.iv.Hi)
		assert.Equal(t, cfg.Resamples, c.iv.Used)
	}
	assert.Less(t, iv.Accuracy.Lo, iv.Accuracy.Hi, "a real interval")
	assert.Equal(t, n, iv.Evaluated)
	again, err := BootstrapDegreeBias(probs, 2, labels, d.Group, nil, DefaultOptions(), cfg)
	require.NoError(t, err)
	assert.Equal(t, iv, again, "seeded")

	// One node per group: every resample is the original.
	one, err := BootstrapDegreeBias(probs[:6], 2, labels[:3], []int{0, 1, 2}, nil, DefaultOptions(), cfg)
	require.NoError(t, err)
	assert.Equal(t, one.LossVariance.Lo, one.LossVariance.Hi)
	assert.Equal(t, one.AccuracyGap.Point, one.AccuracyGap.Hi)
}
