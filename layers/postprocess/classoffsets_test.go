package postprocess

import (
	"math"
	"math/rand"
	"testing"

	"github.com/fairmp/fairmp/metrics/selection"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fairmp/fairmp/metrics"
)

// handCase: two groups of four nodes, three classes. The argmax gives
// group 0 the classes 0, 0, 1, 2 (rates ½, ¼, ¼) and group 1 the classes
// 0, 1, 1, 2 (¼, ½, ¼): ΔDP ¼, accuracy 7/8 (node 5, of class 0, is
// given 1). Raising group 1's class-0 offset above log(0.5/0.4) (and
// below log(0.7/0.2), where node 7 would follow) gives node 5 class 0:
// both groups at (½, ¼, ¼), ΔDP 0, accuracy 1. Any move in group 0
// costs a correct node (accuracy 6/8, more than one point lost).
func handCase() (probs []float64, labels, sens, val []int) {
	probs = []float64{
		0.6, 0.3, 0.1,
		0.5, 0.4, 0.1,
		0.2, 0.7, 0.1,
		0.1, 0.2, 0.7,
		0.7, 0.2, 0.1,
		0.4, 0.5, 0.1,
		0.1, 0.8, 0.1,
		0.2, 0.1, 0.7,
	}
	return probs, []int{0, 0, 1, 2, 0, 0, 1, 2}, []int{0, 0, 0, 0, 1, 1, 1, 1}, []int{0, 1, 2, 3, 4, 5, 6, 7}
}

func TestClassOffsetsHandComputed(t *testing.T) {
	probs, labels, sens, val := handCase()
	o, err := FitClassOffsets(probs, 3, labels, sens, val, DefaultClassOffsetsConfig())
	require.NoError(t, err)
	assert.InDelta(t, 0.25, o.Reference.Fairness, 1e-15)
	assert.InDelta(t, 7.0/8, o.Reference.Accuracy, 1e-15)
	assert.Equal(t, 0.0, o.Val.Fairness)
	assert.Equal(t, 1.0, o.Val.Accuracy)
	assert.Equal(t, []float64{0, 0, 0}, o.Offsets[0], "group 0 is left alone")
	d01, d02 := o.Offsets[1][0]-o.Offsets[1][1], o.Offsets[1][0]-o.Offsets[1][2]
	assert.Greater(t, d01, math.Log(0.5/0.4), "node 5 goes to class 0")
	assert.Less(t, d01, math.Log(0.8/0.1), "node 6 stays in class 1")
	assert.Less(t, d02, math.Log(0.7/0.2), "node 7 stays in class 2")
	assert.True(t, o.Converged)
	assert.Empty(t, o.Diagnostics())

	pred, err := o.Decide(probs, sens)
	require.NoError(t, err)
	assert.Equal(t, []int{0, 0, 1, 2, 0, 0, 1, 2}, pred)
	dp, err := metrics.DemographicParityClasses(pred, sens, 3)
	require.NoError(t, err)
	assert.Equal(t, 0.0, dp)
}

// randomTask draws n nodes over c classes and two groups whose
// probabilities lean towards a group-dependent class.
func randomTask(rng *rand.Rand, n, c int) (probs []float64, labels, sens []int) {
	probs = make([]float64, n*c)
	labels, sens = make([]int, n), make([]int, n)
	for i := range n {
		sens[i] = i % 2
		row := probs[i*c : (i+1)*c]
		sum := 0.0
		for k := range row {
			row[k] = rng.Float64() + 0.05
			if k == sens[i] {
				row[k] += 0.6 // group g leans to class g
			}
			sum += row[k]
		}
		for k := range row {
			row[k] /= sum
		}
		// The label follows the probabilities.
		u, acc := rng.Float64(), 0.0
		labels[i] = c - 1
		for k, p := range row {
			acc += p
			if u < acc {
				labels[i] = k
				break
			}
		}
	}
	return probs, labels, sens
}

// TestClassOffsetsZeroIsArgmax: zero offsets decide the argmax of the
// probabilities (the lowest class on ties, a zero probability never over
// a positive one), for every class count.
func TestClassOffsetsZeroIsArgmax(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	for _, c := range []int{2, 3, 5} {
		probs, _, sens := randomTask(rng, 200, c)
		// Ties and zeros.
		copy(probs[0:c], make([]float64, c))
		probs[c-1] = 1
		for k := range c {
			probs[c+k] = 1 / float64(c)
		}
		sens[2] = -1
		o := &ClassOffsets{Classes: c, Offsets: [][]float64{make([]float64, c), make([]float64, c)}}
		pred, err := o.Decide(probs, sens)
		require.NoError(t, err)
		for i := range sens {
			want := 0
			for k := 1; k < c; k++ {
				if probs[i*c+k] > probs[i*c+want] {
					want = k
				}
			}
			assert.Equal(t, want, pred[i], "c %d node %d", c, i)
		}
		assert.Equal(t, c-1, pred[0])
		assert.Equal(t, 0, pred[1])
	}
}

// TestClassOffsetsReachParity: with 60 validation nodes a group (rates
// of any common multiple of 1/60) and a loose accuracy bound, the search
// reaches ΔDP 0 on validation; the reported figures are those of the
// decisions Decide gives, as metrics computes them; the unknown-group
// nodes keep their argmax.
func TestClassOffsetsReachParity(t *testing.T) {
	for _, c := range []int{3, 5} {
		for seed := int64(1); seed <= 3; seed++ {
			rng := rand.New(rand.NewSource(seed))
			probs, labels, sens := randomTask(rng, 160, c)
			sens[150], labels[151] = -1, -1
			val := make([]int, 0, 120)
			for i := range 120 {
				val = append(val, i)
			}
			val = append(val, 150, 151)
			cfg := DefaultClassOffsetsConfig()
			cfg.Rule = selection.FairestWithin(metrics.DPDifference, 0.3)
			o, err := FitClassOffsets(probs, c, labels, sens, val, cfg)
			require.NoError(t, err, "c %d seed %d", c, seed)
			assert.Greater(t, o.Reference.Fairness, 0.1, "c %d seed %d: the task is unfair to start with", c, seed)
			assert.Equal(t, 0.0, o.Val.Fairness, "c %d seed %d: %v", c, seed, o.Diagnostics())
			assert.Empty(t, o.Diagnostics())

			pred, err := o.Decide(probs, sens)
			require.NoError(t, err)
			vp, vl, vs := make([]int, 0, len(val)), make([]int, 0, len(val)), make([]int, 0, len(val))
			correct, known := 0, 0
			for _, i := range val {
				if labels[i] == -1 {
					continue
				}
				known++
				if pred[i] == labels[i] {
					correct++
				}
				vp, vl, vs = append(vp, pred[i]), append(vl, labels[i]), append(vs, sens[i])
			}
			dp, err := metrics.DPDifference.MeasureClasses(vp, vl, vs, c)
			require.NoError(t, err)
			assert.Equal(t, o.Val.Fairness, dp)
			assert.Equal(t, float64(correct)/float64(known), o.Val.Accuracy)
			assert.GreaterOrEqual(t, o.Val.Accuracy, o.Reference.Accuracy-0.3-1e-12)
			argmax := argmaxOffset(probs[150*c:151*c], nil, -1)
			assert.Equal(t, argmax, pred[150], "unknown group: the argmax")
		}
	}
}

// TestClassOffsetsMostAccurate: the MostAccurate goal meets its bound,
// and every result is deterministic (the same fit twice).
func TestClassOffsetsMostAccurate(t *testing.T) {
	rng := rand.New(rand.NewSource(9))
	probs, labels, sens := randomTask(rng, 200, 4)
	val := make([]int, 100)
	for i := range val {
		val[i] = 2 * i
		if i%2 == 1 {
			val[i]++
		}
	}
	cfg := DefaultClassOffsetsConfig()
	cfg.Rule = selection.MostAccurateWithin(metrics.DPDifference, 0.05)
	o, err := FitClassOffsets(probs, 4, labels, sens, val, cfg)
	require.NoError(t, err)
	assert.LessOrEqual(t, o.Val.Fairness, 0.05)
	again, err := FitClassOffsets(probs, 4, labels, sens, val, cfg)
	require.NoError(t, err)
	assert.Equal(t, o.Offsets, again.Offsets)
	assert.Equal(t, o.Val, again.Val)
}

// TestClassOffsetsZeroProbabilityClass: class 2 has probability 0 for
// every node of group 1, and group 0's nodes of class 2 are predicted
// right. Parity in class 2 then means never choosing it in group 0,
// which costs more than one point: the fit stops short of parity and its
// diagnostic says why; a bound of exact parity is met only by giving up
// class 2 in group 0.
func TestClassOffsetsZeroProbabilityClass(t *testing.T) {
	rng := rand.New(rand.NewSource(5))
	probs, labels, sens := randomTask(rng, 200, 3)
	for i := range sens {
		row := probs[i*3 : i*3+3]
		if sens[i] == 1 {
			row[0], row[1], row[2] = row[0]/(row[0]+row[1]), row[1]/(row[0]+row[1]), 0
			if labels[i] == 2 {
				labels[i] = 1
			}
		} else if i%3 == 0 {
			row[0], row[1], row[2], labels[i] = 0.1, 0.1, 0.8, 2
		}
	}
	val := make([]int, 200)
	for i := range val {
		val[i] = i
	}
	o, err := FitClassOffsets(probs, 3, labels, sens, val, DefaultClassOffsetsConfig())
	require.NoError(t, err)
	assert.Greater(t, o.Val.Fairness, 0.1)
	d := o.Diagnostics()
	require.Len(t, d, 1)
	assert.Equal(t, ParityNotReached, d[0].Code)
	assert.Contains(t, d[0].Message, "class 2 has probability 0 for every validation node of group 1")
	assert.Contains(t, d[0].Message, "the accuracy bound binds")

	cfg := DefaultClassOffsetsConfig()
	cfg.Rule = selection.MostAccurateWithin(metrics.DPDifference, 0)
	o, err = FitClassOffsets(probs, 3, labels, sens, val, cfg)
	require.NoError(t, err)
	assert.Equal(t, 0.0, o.Val.Fairness)
	assert.Less(t, o.Val.Accuracy, o.Reference.Accuracy-0.1, "parity costs the class-2 nodes of group 0")
	pred, err := o.Decide(probs, sens)
	require.NoError(t, err)
	for i, p := range pred {
		assert.NotEqual(t, 2, p, "node %d: parity in class 2 means no node of it", i)
	}
}

// TestClassOffsetsSmallGroups: groups of 3 and 4 validation nodes have
// no common selection rate but 0 and 1: the diagnostic says so.
func TestClassOffsetsSmallGroups(t *testing.T) {
	probs, labels, sens, _ := handCase()
	val := []int{0, 1, 2, 4, 5, 6, 7}
	o, err := FitClassOffsets(probs, 3, labels, sens, val, DefaultClassOffsetsConfig())
	require.NoError(t, err)
	require.Len(t, o.Diagnostics(), 1)
	assert.Contains(t, o.Diagnostics()[0].Message, "the groups have 3, 4 validation nodes: a rate common to every group is a multiple of 1/1")
}

// TestClassOffsetsUndefinedCriterion: ΔEO needs every group to have a
// validation node of every class; group 1 has none of class 2.
func TestClassOffsetsUndefinedCriterion(t *testing.T) {
	probs, labels, sens, val := handCase()
	labels[7] = 1
	cfg := DefaultClassOffsetsConfig()
	cfg.Rule = selection.FairestWithin(metrics.EODifference, 0.01)
	_, err := FitClassOffsets(probs, 3, labels, sens, val, cfg)
	require.ErrorIs(t, err, metrics.ErrNoPositives)
	assert.Contains(t, err.Error(), "group 1 has no validation node of class 2")
	assert.Contains(t, err.Error(), "whatever the offsets")
}

func TestClassOffsetsRefusesBadInputs(t *testing.T) {
	probs, labels, sens, val := handCase()
	def := DefaultClassOffsetsConfig()
	bad := def
	bad.Candidates = 2
	sweeps := def
	sweeps.Sweeps = 0
	rule := def
	rule.Rule.MaxAccuracyLoss = 1
	p2 := append([]float64(nil), probs...)
	p2[4] = 1.5
	l2 := append([]int(nil), labels...)
	l2[3] = 3
	s2 := append([]int(nil), sens...)
	s2[0] = -2
	s3 := []int{0, 0, 0, 0, 2, 2, 2, 2}
	for _, c := range []struct {
		name    string
		probs   []float64
		classes int
		labels  []int
		sens    []int
		val     []int
		cfg     ClassOffsetsConfig
		want    string
		is      error
	}{
		{"candidates", probs, 3, labels, sens, val, bad, "ClassOffsetsConfig.Candidates = 2", nil},
		{"sweeps", probs, 3, labels, sens, val, sweeps, "ClassOffsetsConfig.Sweeps = 0", nil},
		{"rule", probs, 3, labels, sens, val, rule, "did you mean 0.01", metrics.ErrValue},
		{"classes", probs, 1, labels, sens, val, def, "classes = 1, want ≥ 2", metrics.ErrValue},
		{"probs length", probs[:23], 3, labels, sens, val, def, "len(probs) = 23, want len(labels) × classes = 8 × 3 = 24", metrics.ErrLength},
		{"sens length", probs, 3, labels, sens[:7], val, def, "8 labels and 7 groups", metrics.ErrLength},
		{"val range", probs, 3, labels, sens, []int{0, 8}, def, "val[1] = 8, want a node in 0..7", metrics.ErrValue},
		{"no val", probs, 3, labels, sens, nil, def, "no validation nodes", metrics.ErrEmpty},
		{"probability", p2, 3, labels, sens, val, def, "probs[4] = 1.5 (node 1, class 1)", metrics.ErrValue},
		{"label", probs, 3, l2, sens, val, def, "labels[3] = 3, want a class in 0..2", metrics.ErrValue},
		{"group", probs, 3, labels, s2, val, def, "sens[0] = -2", metrics.ErrValue},
		{"missing group", probs, 3, labels, s3, val, def, "group 1 has no validation node", metrics.ErrEmptyGroup},
		{"one group", probs, 3, labels, make([]int, 8), val, def, "1 sensitive group(s), want ≥ 2", metrics.ErrEmptyGroup},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := FitClassOffsets(c.probs, c.classes, c.labels, c.sens, c.val, c.cfg)
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.want)
			if c.is != nil {
				assert.ErrorIs(t, err, c.is)
			}
		})
	}

	o, err := FitClassOffsets(probs, 3, labels, sens, val, def)
	require.NoError(t, err)
	_, err = o.Decide(probs[:5], sens)
	assert.ErrorContains(t, err, "len(probs) = 5, want len(sens) × classes = 8 × 3 = 24")
	_, err = o.Decide(probs, []int{0, 0, 0, 0, 1, 1, 1, 2})
	assert.ErrorContains(t, err, "node 7 is in group 2, but the offsets were fitted for groups 0..1")
	nan := append([]float64(nil), probs...)
	nan[5] = math.NaN()
	_, err = o.Decide(nan, sens)
	assert.ErrorContains(t, err, "probs[5] = NaN (node 1, class 2)")
	_, err = (&ClassOffsets{}).Decide(probs, sens)
	assert.ErrorContains(t, err, "fit it with FitClassOffsets")
	oh, err := o.OneHot(probs, sens)
	require.NoError(t, err)
	assert.Equal(t, []float64{1, 0, 0}, oh[15:18], "node 5 decided class 0")
}
