package metrics

import (
	"encoding/json"
	"math"
	"math/rand"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// binaryRows turns a P(y = 1) vector into the n × 2 matrix Evaluate takes.
func binaryRows(p []float64) []float64 {
	probs := make([]float64, 2*len(p))
	for i, v := range p {
		probs[2*i], probs[2*i+1] = 1-v, v
	}
	return probs
}

// multiclassCase returns an n × classes probability matrix (rows of
// multiples of 0.1 with ties, so the argmax tie rule matters), labels
// with unknowns and groups 0..groups−1 with unknowns; every group keeps
// a known node of each class.
func multiclassCase(rng *rand.Rand, n, classes, groups int) (probs []float64, labels, sens []int) {
	probs = make([]float64, n*classes)
	labels = make([]int, n)
	sens = make([]int, n)
	for i := range n {
		row := probs[i*classes : (i+1)*classes]
		left := 10
		for j := range classes - 1 {
			k := rng.Intn(left + 1)
			row[j] = float64(k) / 10
			left -= k
		}
		row[classes-1] = float64(left) / 10
		labels[i] = rng.Intn(classes)
		sens[i] = i % groups
		if i >= classes*groups && rng.Intn(10) == 0 {
			labels[i] = -1
		}
		if i >= classes*groups && rng.Intn(12) == 0 {
			sens[i] = -1
		}
	}
	for i := range classes * groups {
		labels[i] = i / groups
	}
	return probs, labels, sens
}

// bootCase is one set of Bootstrap arguments.
type bootCase struct {
	name    string
	probs   []float64
	classes int
	labels  []int
	sens    []int
	nodes   []int
	opt     Options
}

// bootCases returns binary cases (all nodes and a subset, 2–4 groups,
// thresholds) and multiclass cases (argmax, Positive 0 and 2).
func bootCases(rng *rand.Rand) []bootCase {
	var cs []bootCase
	for trial := range 12 {
		n, groups := 60+rng.Intn(400), 2+rng.Intn(3)
		p, labels, sens := randomCase(rng, n, groups)
		opt := DefaultOptions()
		opt.Threshold = []float64{0.5, 0.3, 0.65}[trial%3]
		c := bootCase{name: "binary", probs: binaryRows(p), classes: 2, labels: labels, sens: sens, opt: opt}
		if trial%2 == 1 {
			// A subset that keeps the nodes randomCase guarantees.
			c.name = "binary subset"
			c.nodes = []int{}
			for i := range n {
				if i < 2*groups || rng.Intn(3) > 0 {
					c.nodes = append(c.nodes, i)
				}
			}
			rng.Shuffle(len(c.nodes), func(a, b int) { c.nodes[a], c.nodes[b] = c.nodes[b], c.nodes[a] })
		}
		cs = append(cs, c)
	}
	for trial := range 6 {
		n, classes, groups := 80+rng.Intn(300), 3+rng.Intn(2), 2+rng.Intn(2)
		probs, labels, sens := multiclassCase(rng, n, classes, groups)
		opt := DefaultOptions()
		opt.Positive = []int{0, 2}[trial%2]
		cs = append(cs, bootCase{name: "multiclass", probs: probs, classes: classes, labels: labels, sens: sens, opt: opt})
	}
	return cs
}

func (c bootCase) evaluate() (Report, error) {
	return Evaluate(c.probs, c.classes, c.labels, c.sens, c.nodes, c.opt)
}

func (c bootCase) bootstrap(cfg BootstrapConfig) (Intervals, error) {
	return Bootstrap(c.probs, c.classes, c.labels, c.sens, c.nodes, c.opt, cfg)
}

func TestBootstrapPointIsEvaluate(t *testing.T) {
	rng := rand.New(rand.NewSource(11))
	for k, c := range bootCases(rng) {
		r, err := c.evaluate()
		require.NoError(t, err, "case %d (%s)", k, c.name)
		iv, err := c.bootstrap(DefaultBootstrapConfig())
		require.NoError(t, err, "case %d (%s)", k, c.name)
		assert.Equal(t, r.Accuracy, iv.Accuracy.Point, "case %d (%s): accuracy", k, c.name)
		assert.Equal(t, r.DemographicParity, iv.DemographicParity.Point, "case %d (%s): ΔDP", k, c.name)
		assert.Equal(t, r.EqualOpportunity, iv.EqualOpportunity.Point, "case %d (%s): ΔEO", k, c.name)
		assert.Equal(t, r.Evaluated, iv.Evaluated, "case %d (%s): evaluated", k, c.name)
		assert.Equal(t, 1000, iv.Resamples)
		assert.Equal(t, 0.95, iv.Level)

		// The counting path gives the same numbers on the original nodes
		// (no resampling), bit for bit.
		bs := newBootstrapper(c.probs, c.classes, c.labels, c.sens, c.nodes, c.opt, len(r.Groups))
		cnt := make([]codeCounts, len(bs.members))
		for g, m := range bs.members {
			assert.Len(t, m, r.Groups[g].Count, "case %d: group %d", k, g)
			for _, code := range m {
				cnt[g][code]++
			}
		}
		s := statsOf(cnt)
		assert.Equal(t, r.Accuracy, s.acc, "case %d (%s): counted accuracy", k, c.name)
		assert.Equal(t, r.DemographicParity, s.vals[DPDifference], "case %d (%s): counted ΔDP", k, c.name)
		assert.Equal(t, r.EqualOpportunity, s.vals[EODifference], "case %d (%s): counted ΔEO", k, c.name)
		assert.True(t, s.ok[EODifference], "case %d", k)
	}
}

// TestBootstrapCountsOnMultisets checks the counting path on multisets
// (what a resample is) against Evaluate on the multiset written out as
// distinct nodes, including multisets where a group lacks positives.
func TestBootstrapCountsOnMultisets(t *testing.T) {
	rng := rand.New(rand.NewSource(12))
	for k, c := range bootCases(rng) {
		r, err := c.evaluate()
		require.NoError(t, err, "case %d", k)
		nodes := c.nodes
		if nodes == nil {
			nodes = make([]int, len(c.labels))
			for i := range nodes {
				nodes[i] = i
			}
		}
		for rep := range 5 {
			// Draw with replacement, keeping a positive and a negative
			// node of every group.
			var picks []int
			for g := range r.Groups {
				for _, positive := range []bool{true, false} {
					for _, i := range nodes {
						if c.sens[i] == g && c.labels[i] != -1 && (c.labels[i] == c.opt.Positive) == positive {
							picks = append(picks, i)
							break
						}
					}
				}
			}
			for range 1 + rng.Intn(2*len(nodes)) {
				picks = append(picks, nodes[rng.Intn(len(nodes))])
			}
			if rep == 4 {
				// Drop group 0's positives: ΔEO undefined.
				kept := picks[:0]
				for _, i := range picks {
					if c.sens[i] != 0 || c.labels[i] != c.opt.Positive {
						kept = append(kept, i)
					}
				}
				picks = kept
			}
			var probs []float64
			var labels, sens []int
			for _, i := range picks {
				probs = append(probs, c.probs[i*c.classes:(i+1)*c.classes]...)
				labels = append(labels, c.labels[i])
				sens = append(sens, c.sens[i])
			}
			bs := newBootstrapper(probs, c.classes, labels, sens, nil, c.opt, len(r.Groups))
			cnt := make([]codeCounts, len(bs.members))
			for g, m := range bs.members {
				for _, code := range m {
					cnt[g][code]++
				}
			}
			s := statsOf(cnt)
			b, err := tallyFor(probs, c.classes, labels, sens, c.opt)
			require.NoError(t, err, "case %d rep %d", k, rep)
			for _, cr := range Criteria() {
				v, err := cr.Of(b)
				assert.Equal(t, err == nil, s.ok[cr], "case %d rep %d: %s defined", k, rep, cr)
				if err == nil {
					assert.Equal(t, v, s.vals[cr], "case %d rep %d: %s", k, rep, cr)
				}
			}
			assert.Equal(t, b.Overall.Accuracy, s.acc, "case %d rep %d: accuracy", k, rep)
			assert.Equal(t, b.DemographicParity(), s.vals[DPDifference], "case %d rep %d: ΔDP", k, rep)
			eo, err := b.EqualOpportunity()
			if rep == 4 {
				assert.ErrorIs(t, err, ErrNoPositives, "case %d rep %d", k, rep)
				assert.False(t, s.ok[EODifference], "case %d rep %d", k, rep)
				continue
			}
			require.NoError(t, err, "case %d rep %d", k, rep)
			assert.True(t, s.ok[EODifference], "case %d rep %d", k, rep)
			assert.Equal(t, eo, s.vals[EODifference], "case %d rep %d: ΔEO", k, rep)
		}
	}
}

// tallyFor is the Breakdown Evaluate would build (Evaluate itself may
// refuse a multiset, e.g. for a missing AUC class).
func tallyFor(probs []float64, classes int, labels, sens []int, opt Options) (*Breakdown, error) {
	pred := make([]int, len(labels))
	for i := range pred {
		row := probs[i*classes : (i+1)*classes]
		if classes == 2 {
			if row[1] > opt.Threshold {
				pred[i] = 1
			}
			continue
		}
		for j, v := range row {
			if v > row[pred[i]] {
				pred[i] = j
			}
		}
	}
	return tally(pred, labels, sens, classes, opt.Positive, -1)
}

func TestBootstrapDeterministic(t *testing.T) {
	rng := rand.New(rand.NewSource(13))
	p, labels, sens := randomCase(rng, 500, 2)
	probs := binaryRows(p)
	cfg := DefaultBootstrapConfig()
	a, err := Bootstrap(probs, 2, labels, sens, nil, DefaultOptions(), cfg)
	require.NoError(t, err)
	b, err := Bootstrap(probs, 2, labels, sens, nil, DefaultOptions(), cfg)
	require.NoError(t, err)
	assert.Equal(t, a, b, "same seed")

	cfg.Seed = 2
	c, err := Bootstrap(probs, 2, labels, sens, nil, DefaultOptions(), cfg)
	require.NoError(t, err)
	assert.Equal(t, a.Accuracy.Point, c.Accuracy.Point)
	assert.NotEqual(t, a, c, "another seed")
	assert.NotEqual(t, [2]float64{a.DemographicParity.Lo, a.DemographicParity.Hi},
		[2]float64{c.DemographicParity.Lo, c.DemographicParity.Hi}, "another seed: ΔDP interval")
}

func TestBootstrapIntervalOrder(t *testing.T) {
	rng := rand.New(rand.NewSource(14))
	cfg := DefaultBootstrapConfig()
	for k, c := range bootCases(rng) {
		cfg.Seed = int64(k)
		iv, err := c.bootstrap(cfg)
		require.NoError(t, err, "case %d", k)
		for name, v := range map[string]Interval{"accuracy": iv.Accuracy, "ΔDP": iv.DemographicParity, "ΔEO": iv.EqualOpportunity} {
			assert.LessOrEqual(t, v.Lo, v.Hi, "case %d (%s): %s", k, c.name, name)
			assert.GreaterOrEqual(t, v.Lo, 0.0, "case %d: %s", k, name)
			assert.LessOrEqual(t, v.Hi, 1.0, "case %d: %s", k, name)
			assert.Positive(t, v.Used, "case %d: %s", k, name)
		}
		// Accuracy is a mean: its percentile interval holds the point.
		assert.LessOrEqual(t, iv.Accuracy.Lo, iv.Accuracy.Point, "case %d (%s)", k, c.name)
		assert.GreaterOrEqual(t, iv.Accuracy.Hi, iv.Accuracy.Point, "case %d (%s)", k, c.name)
		assert.Equal(t, cfg.Resamples, iv.Accuracy.Used, "case %d", k)
		assert.Equal(t, cfg.Resamples, iv.DemographicParity.Used, "case %d", k)
		assert.LessOrEqual(t, iv.EqualOpportunity.Used, cfg.Resamples, "case %d", k)
	}

	// A clear gap (selection rates 0.2 and 0.6, 300 nodes per group) is
	// far from 0, so the ΔDP and ΔEO intervals hold their points.
	n := 600
	probs := make([]float64, 2*n)
	labels := make([]int, n)
	sens := make([]int, n)
	for i := range n {
		sens[i] = i % 2
		labels[i] = rng.Intn(2)
		pSel := []float64{0.2, 0.6}[sens[i]]
		v := 0.1
		if rng.Float64() < pSel {
			v = 0.9
		}
		probs[2*i], probs[2*i+1] = 1-v, v
	}
	iv, err := Bootstrap(probs, 2, labels, sens, nil, DefaultOptions(), DefaultBootstrapConfig())
	require.NoError(t, err)
	for name, v := range map[string]Interval{"accuracy": iv.Accuracy, "ΔDP": iv.DemographicParity, "ΔEO": iv.EqualOpportunity} {
		assert.LessOrEqual(t, v.Lo, v.Point, name)
		assert.GreaterOrEqual(t, v.Hi, v.Point, name)
		assert.Less(t, v.Lo, v.Hi, name)
	}
}

func TestBootstrapHand(t *testing.T) {
	// Two groups; group 0 has 6 nodes (positives 0, 1, 2), group 1 has 4
	// (positives 6, 7); node 10 has an unknown group and node 11 an
	// unknown label (excluded; node 11's prediction would be wrong).
	labels := []int{1, 1, 1, 0, 0, 0, 1, 1, 0, 0, 1, -1}
	sens := []int{0, 0, 0, 0, 0, 0, 1, 1, 1, 1, -1, 0}
	cfg := DefaultBootstrapConfig()

	// A perfect classifier: every resample is classified perfectly, and
	// every group's TPR is 1 whenever it is defined.
	perfect := make([]float64, 0, 2*len(labels))
	for _, y := range labels {
		v := 0.2
		if y == 1 {
			v = 0.8
		}
		perfect = append(perfect, 1-v, v)
	}
	perfect[2*11+1] = 0.9 // unknown label: excluded
	iv, err := Bootstrap(perfect, 2, labels, sens, nil, DefaultOptions(), cfg)
	require.NoError(t, err)
	assert.Equal(t, Interval{Point: 1, Lo: 1, Hi: 1, Used: 1000}, iv.Accuracy)
	assert.Equal(t, 0.0, iv.EqualOpportunity.Lo)
	assert.Equal(t, 0.0, iv.EqualOpportunity.Hi)
	assert.Equal(t, 10, iv.Evaluated)
	// ΔDP is the gap in positive rates, 3/6 − 2/4 = 0, which resampling
	// widens to [0, Hi] with Hi > 0.
	assert.Equal(t, 0.0, iv.DemographicParity.Point)
	assert.Equal(t, 0.0, iv.DemographicParity.Lo)
	assert.Positive(t, iv.DemographicParity.Hi)
	// The ΔEO resamples where a group drew none of its positives are
	// skipped: group 0 misses all 3 of 6 with probability (1/2)^6, group
	// 1 misses 2 of 4 with (1/2)^4, so about 1000·(1 − 63/64·15/16) ≈ 77
	// are skipped.
	assert.InDelta(t, 1000*(63.0/64)*(15.0/16), float64(iv.EqualOpportunity.Used), 30)

	// A constant predictor (every node class 1): every group's selection
	// rate and TPR are 1 on every resample.
	constant := make([]float64, 0, 2*len(labels))
	for range labels {
		constant = append(constant, 0.3, 0.7)
	}
	iv, err = Bootstrap(constant, 2, labels, sens, nil, DefaultOptions(), cfg)
	require.NoError(t, err)
	assert.Equal(t, Interval{Point: 0, Lo: 0, Hi: 0, Used: 1000}, iv.DemographicParity)
	assert.Equal(t, 0.0, iv.EqualOpportunity.Lo)
	assert.Equal(t, 0.0, iv.EqualOpportunity.Hi)
	assert.Equal(t, 0.5, iv.Accuracy.Point)
	assert.Less(t, iv.Accuracy.Lo, 0.5)
	assert.Greater(t, iv.Accuracy.Hi, 0.5)
}

// TestBootstrapCoverage draws 200 independent samples of 400 nodes from a
// population where ΔDP is known (selection probability 0.3 in group 0,
// 0.5 in group 1: ΔDP = 0.2) and checks that the 90% intervals cover it
// about 90% of the time.
func TestBootstrapCoverage(t *testing.T) {
	const (
		samples = 200
		n       = 400
		trueDP  = 0.2
	)
	rng := rand.New(rand.NewSource(15))
	cfg := BootstrapConfig{Resamples: 1000, Level: 0.90}
	probs := make([]float64, 2*n)
	labels := make([]int, n)
	sens := make([]int, n)
	covered := 0
	for k := range samples {
		for i := range n {
			sens[i] = rng.Intn(2)
			labels[i] = rng.Intn(2)
			v := 0.1
			if rng.Float64() < []float64{0.3, 0.5}[sens[i]] {
				v = 0.9
			}
			probs[2*i], probs[2*i+1] = 1-v, v
		}
		cfg.Seed = int64(k)
		iv, err := Bootstrap(probs, 2, labels, sens, nil, DefaultOptions(), cfg)
		require.NoError(t, err, "sample %d", k)
		if iv.DemographicParity.Lo <= trueDP && trueDP <= iv.DemographicParity.Hi {
			covered++
		}
	}
	coverage := float64(covered) / samples
	t.Logf("coverage of the 90%% ΔDP interval: %d/%d = %.3f", covered, samples, coverage)
	assert.GreaterOrEqual(t, coverage, 0.82)
	assert.LessOrEqual(t, coverage, 0.96)
}

func TestBootstrapErrors(t *testing.T) {
	labels := []int{1, 0, 1, 0}
	sens := []int{0, 0, 1, 1}
	probs := []float64{0.1, 0.9, 0.8, 0.2, 0.4, 0.6, 0.7, 0.3}
	opt := DefaultOptions()
	good := DefaultBootstrapConfig()
	_, err := Bootstrap(probs, 2, labels, sens, nil, opt, good)
	require.NoError(t, err)

	for _, c := range []struct {
		cfg   BootstrapConfig
		field string
	}{
		{BootstrapConfig{Resamples: 0, Level: 0.95}, "Resamples = 0"},
		{BootstrapConfig{Resamples: 99, Level: 0.95}, "Resamples = 99"},
		{BootstrapConfig{Resamples: 1_000_001, Level: 0.95}, "Resamples = 1000001"},
		{BootstrapConfig{Resamples: 1000, Level: 0}, "Level = 0"},
		{BootstrapConfig{Resamples: 1000, Level: 1}, "Level = 1"},
		{BootstrapConfig{Resamples: 1000, Level: 95}, "Level = 95"},
		{BootstrapConfig{Resamples: 1000, Level: -0.5}, "Level = -0.5"},
		{BootstrapConfig{Resamples: 1000, Level: math.NaN()}, "Level = NaN"},
	} {
		err := c.cfg.Validate()
		assert.ErrorIs(t, err, ErrValue, c.field)
		if assert.Error(t, err) {
			assert.Contains(t, err.Error(), "BootstrapConfig."+c.field)
			assert.Contains(t, err.Error(), "want")
		}
		_, err = Bootstrap(probs, 2, labels, sens, nil, opt, c.cfg)
		assert.ErrorIs(t, err, ErrValue, c.field)
	}
	assert.Contains(t, BootstrapConfig{Resamples: 5, Level: 0.9}.Validate().Error(), "[100, 1000000]")
	assert.Contains(t, BootstrapConfig{Resamples: 500, Level: 2}.Validate().Error(), "(0, 1)")
	assert.NoError(t, BootstrapConfig{Resamples: 100, Level: 0.5, Seed: -7}.Validate())
	assert.NoError(t, BootstrapConfig{Resamples: 1_000_000, Level: 0.999}.Validate())

	for _, c := range []struct {
		name    string
		probs   []float64
		classes int
		labels  []int
		sens    []int
		nodes   []int
		opt     Options
		want    error
	}{
		{"classes 1", probs[:4], 1, labels, sens, nil, opt, ErrValue},
		{"probs length", probs[:6], 2, labels, sens, nil, opt, ErrLength},
		{"sens length", probs, 2, labels, sens[:3], nil, opt, ErrLength},
		{"node out of range", probs, 2, labels, sens, []int{0, 4}, opt, ErrValue},
		{"repeated node", probs, 2, labels, sens, []int{0, 1, 2, 3, 0}, opt, ErrValue},
		{"empty subset", probs, 2, labels, sens, []int{}, opt, ErrEmpty},
		{"probability", []float64{0.1, 0.9, 0.8, 0.2, 0.4, 1.6, 0.7, 0.3}, 2, labels, sens, nil, opt, ErrValue},
		{"label", probs, 2, []int{1, 0, 2, 0}, sens, nil, opt, ErrValue},
		{"threshold", probs, 2, labels, sens, nil, Options{Threshold: 2, Positive: 1}, ErrValue},
		{"positive class", probs, 2, labels, sens, nil, Options{Threshold: 0.5, Positive: 2}, ErrValue},
		{"all unknown", probs, 2, []int{-1, -1, -1, -1}, sens, nil, opt, ErrEmpty},
		{"one group", probs, 2, labels, []int{0, 0, 0, 0}, nil, opt, ErrEmptyGroup},
		{"gap in groups", probs, 2, labels, []int{0, 0, 2, 2}, nil, opt, ErrEmptyGroup},
		{"group without positives", probs, 2, []int{1, 0, 0, 0}, sens, nil, opt, ErrNoPositives},
	} {
		_, err := Bootstrap(c.probs, c.classes, c.labels, c.sens, c.nodes, c.opt, good)
		assert.ErrorIs(t, err, c.want, c.name)
		_, evalErr := Evaluate(c.probs, c.classes, c.labels, c.sens, c.nodes, c.opt)
		if assert.Error(t, evalErr, c.name) && assert.Error(t, err, c.name) {
			assert.Equal(t, evalErr.Error(), err.Error(), "%s: Evaluate's error", c.name)
		}
	}
}

func TestQuantile(t *testing.T) {
	xs := make([]float64, 1000)
	for i := range xs {
		xs[i] = float64(i + 1) // x_k = k
	}
	// (1 − 0.95)/2 · 1000 is 25.000000000000025 in floating point: the
	// rounding keeps it at the 25th order statistic.
	a := (1 - 0.95) / 2
	assert.Equal(t, 25.0, quantile(xs, a))
	assert.Equal(t, 975.0, quantile(xs, 1-a))
	assert.Equal(t, 50.0, quantile(xs, 0.05))
	assert.Equal(t, 950.0, quantile(xs, 0.95))
	assert.Equal(t, 1.0, quantile(xs, 0.0001), "clamped to the first")
	assert.Equal(t, 1.0, quantile(xs, 0), "clamped to the first")
	assert.Equal(t, 1000.0, quantile(xs, 1))
	assert.Equal(t, 251.0, quantile(xs, 0.2505), "ceiling")
	assert.Equal(t, 7.0, quantile([]float64{7}, 0.025))
	assert.Equal(t, 7.0, quantile([]float64{7}, 0.975))

	iv := Percentile([]float64{0.3, 0.1, 0.2, 0.5, 0.4}, 0.3, 0.6)
	// q = 0.2 → k = 1; q = 0.8 → k = 4.
	assert.Equal(t, Interval{Point: 0.3, Lo: 0.1, Hi: 0.4, Used: 5}, iv)
}

func TestDrawAndResample(t *testing.T) {
	rng := rand.New(rand.NewSource(16))
	// Each of 7 members drawn about 70,000 / 7 = 10,000 times (sd ≈ 93);
	// one member is always drawn.
	var c codeCounts
	drawCounts(rng, []uint8{0, 1, 2, 3, 4, 5, 6}, &c)
	assert.Equal(t, 7, sum(c[:]))
	c = codeCounts{}
	m := make([]uint8, 70000)
	for i := range m {
		m[i] = uint8(i % 7)
	}
	drawCounts(rng, m, &c)
	for v, k := range c[:7] {
		assert.InDelta(t, 10000, k, 500, "member %d", v)
	}
	c = codeCounts{}
	drawCounts(rng, []uint8{5}, &c)
	assert.Equal(t, codeCounts{5: 1}, c)
	drawCounts(rng, nil, &c)
	assert.Equal(t, codeCounts{5: 1}, c)

	// A resample keeps every group's size and draws each member about
	// equally often.
	bs := &bootstrapper{members: [][]uint8{{0, 1, 2, 3, 4, 5, 6, 7}, {7, 7, 0}}}
	cnt := make([]codeCounts, 2)
	var total [2]codeCounts
	for range 2000 {
		bs.resample(rng, cnt)
		for g := range cnt {
			for code, k := range cnt[g] {
				total[g][code] += k
			}
			require.Equal(t, len(bs.members[g]), sum(cnt[g][:]), "group %d size", g)
		}
	}
	for code := range numCodes {
		assert.InDelta(t, 2000, total[0][code], 200, "group 0 code %d", code)
	}
	assert.InDelta(t, 4000, total[1][7], 300)
	assert.InDelta(t, 2000, total[1][0], 300)
}

func TestIntervalFormat(t *testing.T) {
	iv := Interval{Point: 0.8123, Lo: 0.79, Hi: 0.8345678, Used: 1000}
	assert.Equal(t, "81.23 [79.00, 83.46]", iv.String())
	out, err := json.Marshal(Intervals{Accuracy: iv, Level: 0.95, Resamples: 1000, Evaluated: 63})
	require.NoError(t, err)
	assert.JSONEq(t, `{
		"accuracy": {"point": 0.8123, "lo": 0.79, "hi": 0.8345678, "used": 1000},
		"demographic_parity": {"point": 0, "lo": 0, "hi": 0, "used": 0},
		"equal_opportunity": {"point": 0, "lo": 0, "hi": 0, "used": 0},
		"level": 0.95, "resamples": 1000, "evaluated": 63}`, string(out))
	// Criteria are keyed by name.
	out, err = json.Marshal(Intervals{Criteria: map[Criterion]Interval{DPRatio: iv}})
	require.NoError(t, err)
	assert.Contains(t, string(out), `"criteria":{"dp-ratio":{"point":0.8123,"lo":0.79,"hi":0.8345678,"used":1000}}`)
	var back Intervals
	require.NoError(t, json.Unmarshal(out, &back))
	assert.Equal(t, iv, back.Criteria[DPRatio])
}

// BenchmarkBootstrap resamples a Bail-sized test split (4,719 nodes, two
// groups) 1000 times.
func BenchmarkBootstrap(b *testing.B) {
	rng := rand.New(rand.NewSource(17))
	p, labels, sens := randomCase(rng, 4719, 2)
	probs := binaryRows(p)
	cfg := DefaultBootstrapConfig()
	b.ReportAllocs()
	for range b.N {
		if _, err := Bootstrap(probs, 2, labels, sens, nil, DefaultOptions(), cfg); err != nil {
			b.Fatal(err)
		}
	}
}

func sum(xs []int) int {
	s := 0
	for _, x := range xs {
		s += x
	}
	return s
}

func TestBootstrapMean(t *testing.T) {
	rng := rand.New(rand.NewSource(21))
	p1, labels, sens := randomCase(rng, 2000, 2)
	p2 := make([]float64, len(p1))
	for i := range p2 {
		p2[i] = math.Min(1, math.Max(0, p1[i]+0.3*(rng.Float64()-0.5)))
	}
	a, b := binaryRows(p1), binaryRows(p2)
	opt, cfg := DefaultOptions(), DefaultBootstrapConfig()
	ra, err := Evaluate(a, 2, labels, sens, nil, opt)
	require.NoError(t, err)
	rb, err := Evaluate(b, 2, labels, sens, nil, opt)
	require.NoError(t, err)
	m, err := BootstrapMean([][]float64{a, b}, 2, labels, sens, nil, opt, cfg)
	require.NoError(t, err)
	// Points: the mean over runs of Evaluate's values.
	assert.InDelta(t, (ra.Accuracy+rb.Accuracy)/2, m.Accuracy.Point, 1e-15)
	assert.InDelta(t, (ra.DemographicParity+rb.DemographicParity)/2, m.DemographicParity.Point, 1e-15)
	assert.InDelta(t, (ra.EqualOpportunity+rb.EqualOpportunity)/2, m.EqualOpportunity.Point, 1e-15)
	assert.Equal(t, ra.Evaluated, m.Evaluated)
	// The same run twice is the run once, bit for bit (x + x and / 2 are
	// exact).
	once, err := BootstrapMean([][]float64{a}, 2, labels, sens, nil, opt, cfg)
	require.NoError(t, err)
	twice, err := BootstrapMean([][]float64{a, a}, 2, labels, sens, nil, opt, cfg)
	require.NoError(t, err)
	assert.Equal(t, once, twice)
	// One run: the same resampling distribution as Bootstrap (other
	// draws): the intervals agree to a fraction of their width.
	single, err := Bootstrap(a, 2, labels, sens, nil, opt, cfg)
	require.NoError(t, err)
	assert.Equal(t, single.Accuracy.Point, once.Accuracy.Point)
	for _, pair := range [][2]Interval{{single.Accuracy, once.Accuracy}, {single.DemographicParity, once.DemographicParity}} {
		w := pair[0].Hi - pair[0].Lo
		require.Positive(t, w)
		assert.InDelta(t, pair[0].Lo, pair[1].Lo, 0.25*w)
		assert.InDelta(t, pair[0].Hi, pair[1].Hi, 0.25*w)
	}
	// Deterministic.
	again, err := BootstrapMean([][]float64{a, b}, 2, labels, sens, nil, opt, cfg)
	require.NoError(t, err)
	assert.Equal(t, m, again)
	// Errors.
	_, err = BootstrapMean(nil, 2, labels, sens, nil, opt, cfg)
	assert.ErrorIs(t, err, ErrValue)
	_, err = BootstrapMean([][]float64{a, b[:10]}, 2, labels, sens, nil, opt, cfg)
	assert.ErrorIs(t, err, ErrLength)
	assert.ErrorContains(t, err, "run 1")
	cfg.Resamples = 5
	_, err = BootstrapMean([][]float64{a}, 2, labels, sens, nil, opt, cfg)
	assert.ErrorIs(t, err, ErrValue)
}
