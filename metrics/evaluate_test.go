package metrics

import (
	"encoding/json"
	"math"
	"math/rand"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestEvaluateBinaryHand(t *testing.T) {
	// The unbalanced case of TestUnbalancedGroups as probabilities; 0.5
	// exactly is predicted 0 (strict threshold). Node 9 has an unknown
	// label, node 10 an unknown group, node 11 both; node 12 is outside
	// the subset (its probability would be invalid).
	p := []float64{0.9, 0.6, 0.5, 0.1, 0.7, 0.2, 0.51, 0.3, 0.0, 0.99, 0.01, 0.4, 2}
	labels := append(append([]int(nil), ubLabels...), -1, 1, -1, 1)
	sens := append(append([]int(nil), ubSens...), 0, -1, -1, 0)
	nodes := []int{11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0}
	r, err := EvaluateBinary(p, labels, sens, nodes, DefaultOptions())
	require.NoError(t, err)
	assert.Equal(t, 12, r.Nodes, "nodes")
	assert.Equal(t, 9, r.Evaluated, "evaluated")
	assert.Equal(t, 3, r.Excluded, "excluded")
	assert.Equal(t, 2, r.UnknownLabel, "unknown label")
	assert.Equal(t, 2, r.UnknownSens, "unknown sens")
	near(t, "accuracy", r.Accuracy, 6.0/9)
	near(t, "F1", r.F1, 6.0/9)
	near(t, "ΔDP", r.DemographicParity, 1.0/6)
	near(t, "ΔEO", r.EqualOpportunity, 1.0/6)
	near(t, "equalized odds", r.EqualizedOdds, 1.0/3)
	// Positives' scores 0.9, 0.5, 0.7, 0.51, 0.3; negatives' 0.6, 0.1,
	// 0.2, 0.0: 0.9, 0.7 beat all 4; 0.51 and 0.5 beat 3; 0.3 beats 3.
	near(t, "AUC", r.AUC, (4+4+3+3+3)/20.0)
	assert.Equal(t, 2, r.Classes)
	assert.Equal(t, 1, r.Positive)
	assert.Equal(t, 0.5, r.Threshold)
	require.Len(t, r.Groups, 2)
	assert.Equal(t, 6, r.Groups[0].Count)
	assert.Equal(t, 3, r.Groups[1].Count)
	assert.Equal(t, 9, r.Overall.Count)

	// The same as an n × 2 matrix.
	m := make([]float64, 2*len(p))
	for i, v := range p {
		m[2*i], m[2*i+1] = 1-v, v
	}
	m[2*12] = 0 // keep node 12 invalid only in column 1
	r2, err := Evaluate(m, 2, labels, sens, nodes, DefaultOptions())
	require.NoError(t, err)
	assertSameReport(t, r, r2, "Evaluate(n×2) vs EvaluateBinary")
}

// assertSameReport compares two reports through their JSON form, which
// holds every field.
func assertSameReport(t *testing.T, a, b Report, msg string, args ...any) bool {
	t.Helper()
	ja, err := json.Marshal(a)
	require.NoError(t, err)
	jb, err := json.Marshal(b)
	require.NoError(t, err)
	return assert.JSONEq(t, string(ja), string(jb), append([]any{msg}, args...)...)
}

func TestEvaluateThreshold(t *testing.T) {
	p := []float64{0.2, 0.35, 0.6, 0.3}
	labels := []int{0, 1, 1, 0}
	sens := []int{0, 0, 1, 1}
	opt := DefaultOptions()
	opt.Threshold = 0.3 // predictions 0, 1, 1, 0 (0.3 is not > 0.3)
	r, err := EvaluateBinary(p, labels, sens, nil, opt)
	require.NoError(t, err)
	near(t, "accuracy", r.Accuracy, 1)
	near(t, "ΔDP", r.DemographicParity, 0)
	assert.Equal(t, 0.3, r.Threshold)
}

func TestEvaluateMulticlass(t *testing.T) {
	// 3 classes, positive class 2 one-vs-rest; argmax ties → lowest class.
	probs := []float64{
		0.2, 0.3, 0.5, // 0: pred 2, y 2, s 0
		0.1, 0.1, 0.8, // 1: pred 2, y 1, s 0
		0.6, 0.2, 0.2, // 2: pred 0, y 0, s 0
		0.4, 0.2, 0.4, // 3: pred 0 (tie), y 2, s 1
		0.1, 0.7, 0.2, // 4: pred 1, y 1, s 1
		0.3, 0.1, 0.6, // 5: pred 2, y 2, s 1
		0.5, 0.4, 0.1, // 6: pred 0, y 0, s 1
	}
	labels := []int{2, 1, 0, 2, 1, 2, 0}
	sens := []int{0, 0, 0, 1, 1, 1, 1}
	opt := DefaultOptions()
	opt.Positive = 2
	r, err := Evaluate(probs, 3, labels, sens, nil, opt)
	require.NoError(t, err)
	near(t, "accuracy", r.Accuracy, 5.0/7) // wrong: 1, 3
	// Selection of class 2: group 0 {0,1} 2/3, group 1 {5} 1/4.
	near(t, "ΔDP", r.DemographicParity, 2.0/3-1.0/4)
	// Positives (y=2): group 0 {0} TPR 1, group 1 {3,5} TPR 1/2.
	near(t, "ΔEO", r.EqualOpportunity, 0.5)
	// FPR: group 0 {1,2} → 1/2; group 1 {4,6} → 0. Odds = max(1/2, 1/2).
	near(t, "equalized odds", r.EqualizedOdds, 0.5)
	// F1: TP 2 (0,5), FP 1 (1), FN 1 (3) → 4/6.
	near(t, "F1", r.F1, 4.0/6)
	// AUC of P(y=2): positives 0.5, 0.4, 0.6; negatives 0.8, 0.2, 0.2, 0.1:
	// 0.5 → 3, 0.4 → 3, 0.6 → 3 of 4 each → 9/12.
	near(t, "AUC", r.AUC, 9.0/12)
	assert.Equal(t, 0.0, r.Threshold)
	assert.Equal(t, 3, r.Classes)
	require.Len(t, r.Groups, 2)
	assert.Equal(t, 2, r.Groups[0].Correct, "correct in group 0 (multi-class match)")
	assert.Equal(t, 3, r.Groups[1].Correct, "correct in group 1 (multi-class match)")
}

func TestEvaluateErrors(t *testing.T) {
	p := []float64{0.9, 0.1, 0.8, 0.2}
	labels := []int{1, 0, 1, 0}
	sens := []int{0, 0, 1, 1}
	def := DefaultOptions()
	bad := func(mod func(*Options)) Options { o := def; mod(&o); return o }
	cases := []struct {
		name string
		f    func() error
		want error
	}{
		{"p length", func() error { _, e := EvaluateBinary(p[:3], labels, sens, nil, def); return e }, ErrLength},
		{"sens length", func() error { _, e := EvaluateBinary(p, labels, sens[:3], nil, def); return e }, ErrLength},
		{"matrix length", func() error { _, e := Evaluate(p, 2, labels, sens, nil, def); return e }, ErrLength},
		{"classes 1", func() error { _, e := Evaluate(p, 1, labels, sens, nil, def); return e }, ErrValue},
		{"empty", func() error { _, e := EvaluateBinary(nil, nil, nil, nil, def); return e }, ErrEmpty},
		{"empty subset", func() error { _, e := EvaluateBinary(p, labels, sens, []int{}, def); return e }, ErrEmpty},
		{"node out of range", func() error { _, e := EvaluateBinary(p, labels, sens, []int{0, 4}, def); return e }, ErrValue},
		{"node negative", func() error { _, e := EvaluateBinary(p, labels, sens, []int{-1}, def); return e }, ErrValue},
		{"node repeated", func() error { _, e := EvaluateBinary(p, labels, sens, []int{0, 2, 0}, def); return e }, ErrValue},
		{"prob > 1", func() error { _, e := EvaluateBinary([]float64{0.9, 1.1, 0.8, 0.2}, labels, sens, nil, def); return e }, ErrValue},
		{"prob NaN", func() error {
			_, e := EvaluateBinary([]float64{math.NaN(), 0.1, 0.8, 0.2}, labels, sens, nil, def)
			return e
		}, ErrValue},
		{"label 2", func() error { _, e := EvaluateBinary(p, []int{1, 2, 1, 0}, sens, nil, def); return e }, ErrValue},
		{"sens -2", func() error { _, e := EvaluateBinary(p, labels, []int{0, -2, 1, 1}, nil, def); return e }, ErrValue},
		{"threshold", func() error {
			_, e := EvaluateBinary(p, labels, sens, nil, bad(func(o *Options) { o.Threshold = 1.5 }))
			return e
		}, ErrValue},
		{"threshold NaN", func() error {
			_, e := EvaluateBinary(p, labels, sens, nil, bad(func(o *Options) { o.Threshold = math.NaN() }))
			return e
		}, ErrValue},
		{"positive 2", func() error {
			_, e := EvaluateBinary(p, labels, sens, nil, bad(func(o *Options) { o.Positive = 2 }))
			return e
		}, ErrValue},
		{"positive -1", func() error {
			_, e := EvaluateBinary(p, labels, sens, nil, bad(func(o *Options) { o.Positive = -1 }))
			return e
		}, ErrValue},
		{"one group in subset", func() error { _, e := EvaluateBinary(p, labels, sens, []int{0, 1}, def); return e }, ErrEmptyGroup},
		{"all excluded", func() error { _, e := EvaluateBinary(p, []int{-1, -1, 1, 0}, sens, []int{0, 1}, def); return e }, ErrEmpty},
		{"group without positives", func() error { _, e := EvaluateBinary(p, []int{1, 0, 0, 0}, sens, nil, def); return e }, ErrNoPositives},
		{"group without negatives", func() error { _, e := EvaluateBinary(p, []int{1, 0, 1, 1}, sens, nil, def); return e }, ErrNoNegatives},
	}
	for _, c := range cases {
		assert.ErrorIs(t, c.f(), c.want, c.name)
	}
}

func TestReportFormat(t *testing.T) {
	r := Report{Accuracy: 0.65556, F1: 0.5, AUC: 0.70001, DemographicParity: 0.2237, EqualOpportunity: 0.18, EqualizedOdds: 0.180049, Evaluated: 90, Excluded: 3}
	wantRow := "  65.56   50.00   70.00   22.37   18.00   18.00      90      3"
	assert.Equal(t, wantRow, r.String())
	h := ReportHeader()
	assert.Equal(t, len([]rune(wantRow)), len([]rune(h)), "header %q is as wide as a row", h)
	for _, col := range []string{"acc%", "ΔDP%", "ΔEO%", "excl"} {
		assert.Contains(t, h, col)
	}
}

func TestReportJSON(t *testing.T) {
	r, err := EvaluateBinary(
		[]float64{0.9, 0.6, 0.5, 0.1, 0.7, 0.2, 0.51, 0.3, 0.0, 0.4},
		append(append([]int(nil), ubLabels...), -1),
		append(append([]int(nil), ubSens...), 1), nil, DefaultOptions())
	require.NoError(t, err)
	data, err := json.Marshal(r)
	require.NoError(t, err)
	for _, key := range []string{`"demographic_parity":0.16666666666666`, `"equal_opportunity":`, `"excluded":1`, `"unknown_label":1`, `"groups":[{"group":0,"count":6,`, `"selection_rate":`, `"overall":{"group":-1`} {
		assert.Contains(t, string(data), key)
	}
	var back Report
	require.NoError(t, json.Unmarshal(data, &back))
	assertSameReport(t, r, back, "JSON round trip changed the report")
}

// randomCase returns n nodes with G groups, a few unknown labels and
// groups, and probabilities with ties (rounded to 0.05).
func randomCase(rng *rand.Rand, n, groups int) (p []float64, labels, sens []int) {
	p = make([]float64, n)
	labels = make([]int, n)
	sens = make([]int, n)
	for i := range p {
		p[i] = math.Round(rng.Float64()*20) / 20
		labels[i] = rng.Intn(2)
		sens[i] = i % groups // every group present
		if rng.Intn(10) == 0 {
			labels[i] = -1
		}
		if rng.Intn(15) == 0 && i >= 2*groups {
			sens[i] = -1
		}
	}
	// Make sure every group keeps a known positive and a known negative.
	for g := range groups {
		labels[g], labels[groups+g] = 1, 0
	}
	return p, labels, sens
}

func TestPermutationInvariance(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for trial := range 20 {
		n, groups := 30+rng.Intn(200), 2+rng.Intn(3)
		p, labels, sens := randomCase(rng, n, groups)
		r, err := EvaluateBinary(p, labels, sens, nil, DefaultOptions())
		require.NoError(t, err, "trial %d", trial)
		perm := rng.Perm(n)
		pp, pl, ps := make([]float64, n), make([]int, n), make([]int, n)
		for i, j := range perm {
			pp[i], pl[i], ps[i] = p[j], labels[j], sens[j]
		}
		rp, err := EvaluateBinary(pp, pl, ps, nil, DefaultOptions())
		require.NoError(t, err, "trial %d permuted", trial)
		assertSameReport(t, r, rp, "trial %d: permuting the nodes changed the report", trial)
		// A permuted subset order gives the same report too.
		rs, err := EvaluateBinary(p, labels, sens, perm, DefaultOptions())
		require.NoError(t, err)
		assertSameReport(t, r, rs, "trial %d: subset order changed the report", trial)
		// Renaming the groups (reversing the ids) changes no difference.
		rev := make([]int, n)
		for i, s := range sens {
			rev[i] = s
			if s >= 0 {
				rev[i] = groups - 1 - s
			}
		}
		rr, err := EvaluateBinary(p, labels, rev, nil, DefaultOptions())
		require.NoError(t, err)
		assert.Equal(t, r.DemographicParity, rr.DemographicParity, "trial %d: renaming groups changed ΔDP", trial)
		assert.Equal(t, r.EqualOpportunity, rr.EqualOpportunity, "trial %d: renaming groups changed ΔEO", trial)
		assert.Equal(t, r.EqualizedOdds, rr.EqualizedOdds, "trial %d: renaming groups changed equalized odds", trial)
	}
}

func TestGroupBlindPredictions(t *testing.T) {
	// Each group holds k_g copies of one base pattern of (prediction,
	// label) pairs, shuffled together: the predictions ignore the group by
	// construction, so every group has the same selection rate and TPR.
	rng := rand.New(rand.NewSource(2))
	for trial := range 20 {
		base := 3 + rng.Intn(20)
		bp, bl := make([]int, base), make([]int, base)
		for i := range bp {
			bp[i], bl[i] = rng.Intn(2), rng.Intn(2)
		}
		bl[0], bl[1] = 1, 0
		groups := 2 + rng.Intn(3)
		var pred, labels, sens []int
		for g := range groups {
			for range 1 + rng.Intn(5) { // unbalanced group sizes
				pred = append(pred, bp...)
				labels = append(labels, bl...)
				for range bp {
					sens = append(sens, g)
				}
			}
		}
		rng.Shuffle(len(pred), func(i, j int) {
			pred[i], pred[j] = pred[j], pred[i]
			labels[i], labels[j] = labels[j], labels[i]
			sens[i], sens[j] = sens[j], sens[i]
		})
		dp, err := DemographicParity(pred, sens)
		require.NoError(t, err)
		odds, err := EqualizedOdds(pred, labels, sens)
		require.NoError(t, err)
		assert.Equal(t, 0.0, dp, "trial %d: group-blind predictions, ΔDP exactly 0", trial)
		assert.Equal(t, 0.0, odds, "trial %d: group-blind predictions, equalized odds exactly 0", trial)
	}
}

// naive computes ΔDP, ΔEO and the equalized odds with maps over the
// groups present, straight from the definitions.
func naive(pred, labels, sens []int) (dp, eo, odds float64) {
	sel, cnt, tp, pos, fp, neg := map[int]float64{}, map[int]float64{}, map[int]float64{}, map[int]float64{}, map[int]float64{}, map[int]float64{}
	for i := range pred {
		if labels[i] < 0 || sens[i] < 0 {
			continue
		}
		s := sens[i]
		cnt[s]++
		sel[s] += float64(pred[i])
		if labels[i] == 1 {
			pos[s]++
			tp[s] += float64(pred[i])
		} else {
			neg[s]++
			fp[s] += float64(pred[i])
		}
	}
	spread := func(num, den map[int]float64) float64 {
		lo, hi := math.Inf(1), math.Inf(-1)
		for s := range cnt {
			v := num[s] / den[s]
			lo, hi = math.Min(lo, v), math.Max(hi, v)
		}
		return hi - lo
	}
	dp, eo = spread(sel, cnt), spread(tp, pos)
	return dp, eo, math.Max(eo, spread(fp, neg))
}

func TestAgainstNaive(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	for trial := range 30 {
		n, groups := 20+rng.Intn(300), 2+rng.Intn(4)
		p, labels, sens := randomCase(rng, n, groups)
		pred := make([]int, n)
		for i, v := range p {
			if v > 0.5 {
				pred[i] = 1
			}
		}
		wdp, weo, wodds := naive(pred, labels, sens)
		dp, err := DemographicParity(pred, sens)
		require.NoError(t, err)
		eo, err := EqualOpportunity(pred, labels, sens)
		require.NoError(t, err)
		odds, err := EqualizedOdds(pred, labels, sens)
		require.NoError(t, err)
		// DemographicParity alone also counts nodes with unknown labels:
		// compare with the naive ΔDP over all-known (zero) labels.
		wdpAll, _, _ := naive(pred, make([]int, n), sens)
		near(t, "ΔDP", dp, wdpAll)
		near(t, "ΔEO", eo, weo)
		near(t, "equalized odds", odds, wodds)
		r, err := EvaluateBinary(p, labels, sens, nil, DefaultOptions())
		require.NoError(t, err)
		near(t, "report ΔDP", r.DemographicParity, wdp)
		near(t, "report ΔEO", r.EqualOpportunity, weo)
		near(t, "report odds", r.EqualizedOdds, wodds)
		for _, v := range []float64{r.Accuracy, r.F1, r.AUC, r.DemographicParity, r.EqualOpportunity, r.EqualizedOdds} {
			assert.True(t, v >= 0 && v <= 1, "trial %d: metric %v outside [0, 1]", trial, v)
		}
		assert.GreaterOrEqual(t, r.EqualizedOdds, r.EqualOpportunity, "trial %d: equalized odds >= ΔEO", trial)
	}
}

// trapezoidAUC integrates the ROC curve whose points are the distinct
// thresholds, from (0,0) to (1,1).
func trapezoidAUC(scores []float64, labels []int) float64 {
	var P, N float64
	for _, y := range labels {
		if y == 1 {
			P++
		} else if y == 0 {
			N++
		}
	}
	thr := map[float64]bool{}
	for i, s := range scores {
		if labels[i] >= 0 {
			thr[s] = true
		}
	}
	var ts []float64
	for s := range thr {
		ts = append(ts, s)
	}
	// Descending thresholds: predict positive when score ≥ t.
	for i := range ts {
		for j := i + 1; j < len(ts); j++ {
			if ts[j] > ts[i] {
				ts[i], ts[j] = ts[j], ts[i]
			}
		}
	}
	area, x0, y0 := 0.0, 0.0, 0.0
	for _, th := range ts {
		var tp, fp float64
		for i, s := range scores {
			if s >= th && labels[i] == 1 {
				tp++
			} else if s >= th && labels[i] == 0 {
				fp++
			}
		}
		x, y := fp/N, tp/P
		area += (x - x0) * (y + y0) / 2
		x0, y0 = x, y
	}
	return area
}

func TestAUCAgainstTrapezoidAndPairs(t *testing.T) {
	rng := rand.New(rand.NewSource(4))
	for range 30 {
		n := 10 + rng.Intn(150)
		p, labels, _ := randomCase(rng, n, 2)
		got, err := AUC(p, labels)
		require.NoError(t, err)
		near(t, "AUC vs trapezoid", got, trapezoidAUC(p, labels))
		var wins, pairs float64
		for i := range p {
			for j := range p {
				if labels[i] == 1 && labels[j] == 0 {
					pairs++
					switch {
					case p[i] > p[j]:
						wins++
					case p[i] == p[j]:
						wins += 0.5
					}
				}
			}
		}
		near(t, "AUC vs pairs", got, wins/pairs)
	}
}
