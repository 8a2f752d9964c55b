package metrics

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/rand"
	"slices"
)

// BootstrapConfig configures Bootstrap. The zero value is not valid; start
// from DefaultBootstrapConfig.
type BootstrapConfig struct {
	// Resamples is the number of bootstrap resamples, in [100, 1e6].
	// 1000 gives percentile end points accurate enough for a 95%
	// interval; the cost is linear in Resamples × nodes.
	Resamples int `json:"resamples"`
	// Level is the confidence level of the interval, in (0, 1): 0.95
	// gives the 2.5% and 97.5% quantiles of the resampled metric.
	Level float64 `json:"level"`
	// Seed seeds the resampling (math/rand, rand.NewSource(Seed)): the
	// same inputs and Seed give the same Intervals.
	Seed int64 `json:"seed"`
}

// DefaultBootstrapConfig returns Resamples 1000, Level 0.95 and Seed 1.
func DefaultBootstrapConfig() BootstrapConfig {
	return BootstrapConfig{Resamples: 1000, Level: 0.95, Seed: 1}
}

// Bounds of BootstrapConfig.Resamples.
const (
	minResamples = 100
	maxResamples = 1_000_000
)

// Validate reports (wrapping ErrValue) a Resamples outside [100, 1e6] or
// a Level outside (0, 1) or NaN. Every Seed is valid.
func (c BootstrapConfig) Validate() error {
	if c.Resamples < minResamples || c.Resamples > maxResamples {
		return fmt.Errorf("%w: BootstrapConfig.Resamples = %d, want a number in [%d, %d]", ErrValue, c.Resamples, minResamples, maxResamples)
	}
	if !(c.Level > 0 && c.Level < 1) {
		return fmt.Errorf("%w: BootstrapConfig.Level = %v, want a confidence level in (0, 1), e.g. 0.95", ErrValue, c.Level)
	}
	return nil
}

// Interval is a bootstrap interval [Lo, Hi] at the Level of its
// Intervals around Point, the metric on the original nodes (as Evaluate
// reports it). All three are fractions in [0, 1].
//
// Lo ≤ Point ≤ Hi always for the intervals this package computes
// (Bootstrap, BootstrapMean, BootstrapFrame, BootstrapDegreeBias,
// ChangeRate, the drift intervals): they are symmetric bootstrap
// intervals ([SymmetricInterval]), Point ± the Level quantile of the
// resamples' distance from Point, clipped to the metric's range. A
// percentile interval ([Percentile]) of ΔDP or ΔEO, differences
// max − min that resampling noise can only push away from 0, could lie
// wholly above its point ("0.00 [0.16, 12.16]", issue 53); the symmetric
// interval then reaches down to 0: the difference is within noise of
// parity.
type Interval struct {
	Point float64 `json:"point"`
	Lo    float64 `json:"lo"`
	Hi    float64 `json:"hi"`
	// Used is the number of resamples the interval is computed from:
	// those on which the metric is defined (see Intervals).
	Used int `json:"used"`
}

// String formats i in percent with two decimals as "point [lo, hi]", or
// "n/a" when it is undefined (NaN).
func (i Interval) String() string {
	if i.Undefined() {
		return "n/a"
	}
	return fmt.Sprintf("%.2f [%.2f, %.2f]", Percent(i.Point), Percent(i.Lo), Percent(i.Hi))
}

// Undefined reports whether the interval is undefined (its Point is NaN):
// with Options.AllowUndefined, Bootstrap's DemographicParity or
// EqualOpportunity where the criterion is undefined on the evaluated
// nodes or on every resample.
func (i Interval) Undefined() bool { return math.IsNaN(i.Point) }

// undefinedInterval is the interval of an undefined metric.
func undefinedInterval() Interval {
	return Interval{Point: math.NaN(), Lo: math.NaN(), Hi: math.NaN()}
}

// intervalJSON is Interval's JSON form.
type intervalJSON struct {
	Point float64 `json:"point"`
	Lo    float64 `json:"lo"`
	Hi    float64 `json:"hi"`
	Used  int     `json:"used"`
}

// MarshalJSON writes null for an undefined interval.
func (i Interval) MarshalJSON() ([]byte, error) {
	if i.Undefined() {
		return []byte("null"), nil
	}
	return json.Marshal(intervalJSON(i))
}

// UnmarshalJSON reads what MarshalJSON writes (null as undefined).
func (i *Interval) UnmarshalJSON(b []byte) error {
	if string(bytes.TrimSpace(b)) == "null" {
		*i = undefinedInterval()
		return nil
	}
	// Strict, as the model files that hold intervals are read: an
	// unknown field is an error.
	var j intervalJSON
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	if err := d.Decode(&j); err != nil {
		return fmt.Errorf("interval: %w", err)
	}
	*i = Interval(j)
	return nil
}

// Intervals holds the bootstrap intervals of the accuracy and of every
// fairness criterion (fractions), as returned by Bootstrap.
//
// Accuracy, ΔDP and the DP ratio's are computed on every resample where
// they are defined (the resampling keeps every group's size, so ΔDP always
// is). A criterion is undefined on a resample where some group drew no
// positive node (the true-positive rate's criteria) or no negative node
// (the false-positive rate's), or, for a ratio, where every group's rate
// is 0; such resamples are skipped for that criterion alone, and its
// Interval's Used says how many remain. A Used well below Resamples means
// a group has very few positives (or negatives), and the interval is
// conditional on every group drawing some: read it with care.
type Intervals struct {
	Accuracy Interval `json:"accuracy"`
	// DemographicParity and EqualOpportunity are Criteria[DPDifference]
	// and Criteria[EODifference], the two the FMP paper reports.
	DemographicParity Interval `json:"demographic_parity"`
	EqualOpportunity  Interval `json:"equal_opportunity"`
	// Criteria holds the interval of every criterion defined on the
	// evaluated nodes and on at least one resample, keyed by criterion
	// (JSON: by its name). A criterion undefined on the evaluated nodes
	// themselves (a ratio of zero rates, a group without negatives for
	// the false-positive rate) has no entry.
	Criteria map[Criterion]Interval `json:"criteria,omitempty"`
	// Level and Resamples are those of the BootstrapConfig used.
	Level     float64 `json:"level"`
	Resamples int     `json:"resamples"`
	// Evaluated is the number of nodes resampled: the nodes asked for
	// minus those with an unknown label or sensitive group (Report's
	// Evaluated).
	Evaluated int `json:"evaluated"`
}

// Of returns the interval of criterion c, and whether it has one.
func (iv Intervals) Of(c Criterion) (Interval, bool) {
	i, ok := iv.Criteria[c]
	return i, ok
}

// Bootstrap returns bootstrap intervals for the accuracy, ΔDP
// and ΔEO that Evaluate computes from the same arguments.
//
// The inputs mean what they mean for Evaluate: the nodes evaluated are
// those of nodes (nil: all) whose label and sensitive group are known,
// predictions are made from probs as Evaluate makes them, and opt chooses
// the threshold and the positive class. Each Point is Evaluate's value
// exactly.
//
// Each resample draws, within every sensitive group g separately, n_g
// nodes with replacement from the n_g evaluated nodes of g (a stratified
// bootstrap). Keeping the group sizes fixed guarantees every resample has
// every group: ΔDP is undefined for a resample that misses a group, and
// an unstratified bootstrap would have to drop those resamples, which
// biases the interval for small groups. The group sizes are then treated
// as given, as they are by the metrics themselves. The metric of each
// resample is computed from counts (per group: nodes, selected, positives,
// true positives, correct predictions), exactly as Evaluate computes it.
//
// Lo and Hi are those of the symmetric bootstrap interval
// ([SymmetricInterval], Hall 1988): Point ± h, with h the Level quantile
// of |θ* − Point| over the resampled values θ*, clipped to [0, 1]. The
// quantile q of B sorted values x₁ ≤ … ≤ x_B is the order statistic x_k,
// k = ⌈q·B⌉ clamped to [1, B] (the inverse of the empirical
// distribution function, R's quantile type 1; q·B is rounded to 9
// decimals first, so 0.95 × 1000 is 950, not 951 through floating-point
// error). Why not the percentile interval [x_⌈B(1−L)/2⌉, x_⌈B(1+L)/2⌉]:
// ΔDP, ΔEO and the other differences are max − min of the groups' rates,
// biased upward (E θ̂ ≥ θ, most where θ is near 0), and their resamples
// again, so the percentile interval, centred near θ̂ + bias, misses θ̂
// itself near parity (it covered ΔDP = 0 in 0 of 200 samples,
// TestBootstrapCoverageAtParity). The basic (reverse-percentile) and the
// bias-corrected percentile intervals miss θ̂ exactly when the
// percentile interval does (when θ̂ is below every quantile used). The
// symmetric interval holds θ̂ by construction, its width is that of the
// resamples' spread on both sides, and clipped at 0 it says "within
// noise of parity" where that is what the data say; where the statistic
// is far from its bounds it is the percentile interval's width. At
// exact parity it covers 0 below its level (165 of 200 samples at 90%,
// TestBootstrapCoverageAtParity: |θ* − θ̂| of a folded difference is
// narrower than the signed difference's spread); away from 0 its
// coverage is the percentile interval's (177 of 200 at 90% where ΔDP is
// 0.2, TestBootstrapCoverage; the percentile interval: 179).
//
// The resampling is seeded with rand.New(rand.NewSource(cfg.Seed)) and
// draws groups in order 0..G−1, so the result is deterministic. The cost
// is O(Resamples × nodes) time and O(Resamples) memory; 1000 resamples
// of Bail's 4,719 test nodes take about 15 ms (BenchmarkBootstrap).
//
// Bootstrap returns the errors of Evaluate on the same arguments (it calls
// Evaluate once, for validation and Point), an error wrapping ErrValue for
// an invalid cfg, and one wrapping ErrNoPositives when ΔEO is undefined on
// every resample.
func Bootstrap(probs []float64, classes int, labels, sens, nodes []int, opt Options, cfg BootstrapConfig) (Intervals, error) {
	return BootstrapMean([][]float64{probs}, classes, labels, sens, nodes, opt, cfg)
}

// A node's code packs what the metrics need to know about it.
const (
	codeSelected = 1 << iota // prediction is the positive class
	codePositive             // label is the positive class
	codeCorrect              // prediction equals the label
	numCodes     = 1 << iota
)

// codeCounts counts the nodes of one group by code.
type codeCounts [numCodes]int

// bootstrapper holds the evaluated nodes' codes, one slice per group.
type bootstrapper struct {
	members [][]uint8
}

// newBootstrapper codes the evaluated nodes. The arguments must have
// passed Evaluate, which found groups groups.
func newBootstrapper(probs []float64, classes int, labels, sens, nodes []int, opt Options, groups int) *bootstrapper {
	b := &bootstrapper{members: make([][]uint8, groups)}
	code := func(i int) {
		y, s := labels[i], sens[i]
		if y == -1 || s == -1 {
			return
		}
		row := probs[i*classes : (i+1)*classes]
		pred := 0
		if classes == 2 {
			if row[1] > opt.Threshold {
				pred = 1
			}
		} else {
			for j, v := range row {
				if v > row[pred] {
					pred = j
				}
			}
		}
		var c uint8
		if pred == opt.Positive {
			c |= codeSelected
		}
		if y == opt.Positive {
			c |= codePositive
		}
		if pred == y {
			c |= codeCorrect
		}
		b.members[s] = append(b.members[s], c)
	}
	if nodes == nil {
		for i := range labels {
			code(i)
		}
	} else {
		for _, i := range nodes {
			code(i)
		}
	}
	return b
}

// resample draws one stratified resample and counts it into cnt, one
// entry per group.
func (b *bootstrapper) resample(rng *rand.Rand, cnt []codeCounts) {
	for g, m := range b.members {
		cnt[g] = codeCounts{}
		drawCounts(rng, m, &cnt[g])
	}
}

// drawCounts draws len(m) members of m uniformly with replacement and
// counts their codes into c. Each index is drawn by Lemire's
// multiply-and-reject method on a 32-bit word (unbiased, no division),
// two words from each rng.Uint64: this loop is all of Bootstrap's time.
func drawCounts(rng *rand.Rand, m []uint8, c *codeCounts) {
	n := uint32(len(m))
	if n == 0 {
		return
	}
	thresh := -n % n // (2³² − n) mod n: reject low words below it
	n64 := uint64(n)
	for left := n; left > 0; {
		w := rng.Uint64()
		prod := (w >> 32) * n64
		if uint32(prod) >= thresh {
			c[m[prod>>32]]++
			left--
			if left == 0 {
				return
			}
		}
		prod = (w & 0xffffffff) * n64
		if uint32(prod) >= thresh {
			c[m[prod>>32]]++
			left--
		}
	}
}

// resampleStats holds the metrics of one resample: the accuracy and
// every criterion, with whether it is defined.
type resampleStats struct {
	acc  float64
	vals [numCriteria]float64
	ok   [numCriteria]bool
}

// statsOf computes the metrics from per-group counts through the same
// Breakdown, rates and criteria as Evaluate, so that the counts of the
// original nodes give Evaluate's values bit for bit. Every group must have
// a member.
func statsOf(cnt []codeCounts) resampleStats {
	b := &Breakdown{Groups: make([]GroupStats, len(cnt)), Overall: GroupStats{Group: -1}}
	for g := range cnt {
		st := &b.Groups[g]
		st.Group = g
		for code, k := range cnt[g] {
			pos, sel, cor := code&codePositive != 0, code&codeSelected != 0, code&codeCorrect != 0
			st.add(pos, sel, cor, k)
			b.Overall.add(pos, sel, cor, k)
		}
		st.rates()
	}
	b.Overall.rates()
	st := resampleStats{acc: b.Overall.Accuracy}
	fc := &frameCache{b: b}
	for _, c := range Criteria() {
		v, err := c.Of(fc)
		st.vals[c], st.ok[c] = v, err == nil
	}
	return st
}

// frameCache computes each rate's Frame of b once for all criteria.
type frameCache struct {
	b    *Breakdown
	f    [numRates]*Frame
	err  [numRates]error
	done [numRates]bool
}

func (fc *frameCache) Frame(r Rate) (*Frame, error) {
	if r < 0 || r >= numRates {
		return fc.b.Frame(r)
	}
	if !fc.done[r] {
		fc.f[r], fc.err[r] = fc.b.Frame(r)
		fc.done[r] = true
	}
	return fc.f[r], fc.err[r]
}

// Percentile returns the percentile interval at level (in (0, 1)) of the
// resampled values xs around point, with Bootstrap's quantile definition
// (the order statistic ⌈q·B⌉), Used = len(xs): for bootstraps of one's
// own smooth statistics, such as a paired difference of two methods. It
// sorts xs in place, and returns the zero Interval for no values. It may
// miss point for a biased statistic (a max − min near 0): use
// [SymmetricInterval] for those.
func Percentile(xs []float64, point, level float64) Interval {
	if len(xs) == 0 {
		return Interval{}
	}
	slices.Sort(xs)
	a := (1 - level) / 2
	return Interval{Point: point, Lo: quantile(xs, a), Hi: quantile(xs, 1-a), Used: len(xs)}
}

// SymmetricInterval returns the symmetric bootstrap interval at level (in
// (0, 1)) of the resampled values xs around point (Hall 1988): point ± h,
// h the level quantile (Bootstrap's definition) of |x − point| over xs,
// clipped to [lo, hi], the statistic's range (0 and 1 for a rate, a
// difference of rates or a ratio; ±Inf for none). Lo ≤ point ≤ Hi
// always when point is in [lo, hi]; Used = len(xs). It does not modify
// xs, and returns the zero Interval for no values. Bootstrap's
// documentation says why this is the package's interval.
func SymmetricInterval(xs []float64, point, level, lo, hi float64) Interval {
	if len(xs) == 0 {
		return Interval{}
	}
	dev := make([]float64, len(xs))
	for k, x := range xs {
		dev[k] = math.Abs(x - point)
	}
	slices.Sort(dev)
	h := quantile(dev, level)
	return Interval{Point: point, Lo: max(lo, min(point, point-h)), Hi: min(hi, max(point, point+h)), Used: len(xs)}
}

// valueInterval is SymmetricInterval of a caller's metric: clipped to
// [0, 1] when point and every value of xs lie there, not clipped
// otherwise.
func valueInterval(xs []float64, point, level float64) Interval {
	lo, hi := 0.0, 1.0
	for _, x := range append([]float64{point}, xs...) {
		if !(x >= 0 && x <= 1) {
			lo, hi = math.Inf(-1), math.Inf(1)
			break
		}
	}
	return SymmetricInterval(xs, point, level, lo, hi)
}

// unitInterval is SymmetricInterval clipped to [0, 1].
func unitInterval(xs []float64, point, level float64) Interval {
	return SymmetricInterval(xs, point, level, 0, 1)
}

// quantile returns the order statistic x_k, k = ⌈q·B⌉ clamped to [1, B],
// of the sorted xs, with q·B rounded to 9 decimals before the ceiling.
func quantile(sorted []float64, q float64) float64 {
	b := len(sorted)
	qb := math.Round(q*float64(b)*1e9) / 1e9
	k := int(math.Ceil(qb))
	k = max(1, min(k, b))
	return sorted[k-1]
}

// BootstrapMean is Bootstrap for the mean over several predictions of the
// same nodes, such as the runs of several seeds: probs[s] holds run s's
// n × classes probabilities. Each Point is the mean over runs of
// Evaluate's value (of the criterion's value, for Criteria); each
// resample draws one stratified multiset of nodes (as Bootstrap does),
// evaluates every run on it and averages, so the interval covers the
// sampling of the evaluated nodes for the seed-averaged metric (the ± over
// seeds covers the runs' variation on fixed nodes, not this). A criterion
// enters Criteria only if it is defined for every run on the evaluated
// nodes, and a resample counts for it only if it is defined for every run
// there. Bootstrap is BootstrapMean with one run.
//
// It returns Bootstrap's errors for any run, an error wrapping ErrValue
// for no runs, and one wrapping ErrNoPositives when ΔEO is undefined on
// every resample.
func BootstrapMean(probs [][]float64, classes int, labels, sens, nodes []int, opt Options, cfg BootstrapConfig) (Intervals, error) {
	if err := cfg.Validate(); err != nil {
		return Intervals{}, err
	}
	if len(probs) == 0 {
		return Intervals{}, fmt.Errorf("%w: BootstrapMean: no runs, want at least one probability matrix", ErrValue)
	}
	var pAcc float64
	var pVal [numCriteria]float64
	var defined [numCriteria]bool
	for c := range defined {
		defined[c] = true
	}
	var bs []*bootstrapper
	evaluated := 0
	for s, p := range probs {
		r, err := Evaluate(p, classes, labels, sens, nodes, opt)
		if err != nil {
			if len(probs) > 1 {
				err = fmt.Errorf("run %d: %w", s, err)
			}
			return Intervals{}, err
		}
		pAcc += r.Accuracy
		for _, c := range Criteria() {
			v, err := c.Of(r)
			pVal[c] += v
			defined[c] = defined[c] && err == nil
		}
		bs = append(bs, newBootstrapper(p, classes, labels, sens, nodes, opt, len(r.Groups)))
		evaluated = r.Evaluated
	}
	runs := float64(len(probs))
	groups := len(bs[0].members)
	acc := make([]float64, 0, cfg.Resamples)
	var vals [numCriteria][]float64
	cnt := make([]codeCounts, groups)
	idx := make([][]int32, groups)
	for g := range idx {
		idx[g] = make([]int32, len(bs[0].members[g]))
	}
	rng := rand.New(rand.NewSource(cfg.Seed))
	for range cfg.Resamples {
		var a float64
		var sum [numCriteria]float64
		ok := defined
		if len(bs) == 1 {
			bs[0].resample(rng, cnt)
			st := statsOf(cnt)
			a, sum, ok = st.acc, st.vals, andOK(ok, st.ok)
		} else {
			for g := range idx {
				drawIndices(rng, idx[g])
			}
			for _, b := range bs {
				for g, m := range b.members {
					c := &cnt[g]
					*c = codeCounts{}
					for _, i := range idx[g] {
						c[m[i]]++
					}
				}
				st := statsOf(cnt)
				a += st.acc
				for c := range sum {
					sum[c] += st.vals[c]
				}
				ok = andOK(ok, st.ok)
			}
		}
		acc = append(acc, a/runs)
		for c := range vals {
			if ok[c] {
				vals[c] = append(vals[c], sum[c]/runs)
			}
		}
	}
	if len(vals[EODifference]) == 0 && !opt.AllowUndefined {
		// Evaluate saw a positive in every group, so this needs every
		// resample to miss one: a tiny group rate of positives and bad
		// luck. Without it percentile would index an empty slice.
		return Intervals{}, fmt.Errorf("%w: ΔEO is undefined on all %d resamples (some group drew no positive node every time; a group has too few positives for a bootstrap)", ErrNoPositives, cfg.Resamples)
	}
	iv := Intervals{
		Accuracy:  unitInterval(acc, pAcc/runs, cfg.Level),
		Criteria:  map[Criterion]Interval{},
		Level:     cfg.Level,
		Resamples: cfg.Resamples,
		Evaluated: evaluated,
	}
	for _, c := range Criteria() {
		if defined[c] && len(vals[c]) > 0 {
			iv.Criteria[c] = unitInterval(vals[c], pVal[c]/runs, cfg.Level)
		}
	}
	iv.DemographicParity, iv.EqualOpportunity = iv.Criteria[DPDifference], iv.Criteria[EODifference]
	if opt.AllowUndefined {
		// The two named fields of a criterion without an interval are
		// undefined, not a zero interval.
		for c, dst := range map[Criterion]*Interval{DPDifference: &iv.DemographicParity, EODifference: &iv.EqualOpportunity} {
			if _, ok := iv.Criteria[c]; !ok {
				*dst = undefinedInterval()
			}
		}
	}
	return iv, nil
}

// andOK is the element-wise and of two definedness flags.
func andOK(a, b [numCriteria]bool) [numCriteria]bool {
	for c := range a {
		a[c] = a[c] && b[c]
	}
	return a
}

// drawIndices fills idx with indices drawn uniformly with replacement
// from [0, len(idx)), by drawCounts' method.
func drawIndices(rng *rand.Rand, idx []int32) {
	n := uint32(len(idx))
	if n == 0 {
		return
	}
	thresh := -n % n
	n64 := uint64(n)
	for k := 0; k < len(idx); {
		w := rng.Uint64()
		prod := (w >> 32) * n64
		if uint32(prod) >= thresh {
			idx[k] = int32(prod >> 32)
			k++
			if k == len(idx) {
				return
			}
		}
		prod = (w & 0xffffffff) * n64
		if uint32(prod) >= thresh {
			idx[k] = int32(prod >> 32)
			k++
		}
	}
}

// FrameIntervals holds bootstrap intervals of a [Frame]'s values, as
// returned by BootstrapFrame.
type FrameIntervals struct {
	Overall Interval   `json:"overall"`
	ByGroup []Interval `json:"by_group"`
	// Difference and DifferenceToOverall are those of Frame.Difference
	// with BetweenGroups and ToOverall.
	Difference          Interval `json:"difference"`
	DifferenceToOverall Interval `json:"difference_to_overall"`
	// Ratio and RatioToOverall are those of Frame.Ratio; nil when the
	// ratio is undefined on the evaluated nodes themselves (ErrZeroRate)
	// or on every resample.
	Ratio          *Interval `json:"ratio,omitempty"`
	RatioToOverall *Interval `json:"ratio_to_overall,omitempty"`
	Level          float64   `json:"level"`
	Resamples      int       `json:"resamples"`
	// Evaluated is the number of nodes resampled (known label and group).
	Evaluated int `json:"evaluated"`
}

// BootstrapFrame returns bootstrap intervals of every value of
// NewFrame(name, metric, pred, labels, sens): the overall and per-group
// values, the differences and the ratios (between groups and to the
// overall value). Each Point is the Frame's value.
//
// Each resample draws, within every group separately, as many evaluated
// nodes as the group has, with replacement (Bootstrap's stratified
// scheme, seeded by cfg.Seed, groups in order), and computes the Frame of
// the multiset. A resample on which metric fails for the overall value or
// for some group (an F1 without positives, say) is skipped for every
// value; a resample on which a ratio is undefined is skipped for that
// ratio. Interval.Used counts the resamples each interval rests on. The
// intervals are Bootstrap's symmetric ones, clipped to [0, 1] for the
// ratios, at 0 below for the differences, and to [0, 1] for the overall
// and group values when the point and every resampled value lie there
// (the usual rates), not clipped otherwise (the metric is the caller's). The
// cost is Resamples × (G + 1) calls of metric.
//
// BootstrapFrame returns NewFrame's errors, an error wrapping ErrValue for
// an invalid cfg, and one wrapping ErrEmpty when metric fails on every
// resample.
func BootstrapFrame(name string, metric Metric, pred, labels, sens []int, cfg BootstrapConfig) (*FrameIntervals, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	f, err := NewFrame(name, metric, pred, labels, sens)
	if err != nil {
		return nil, err
	}
	groups := len(f.ByGroup)
	members := make([][]int, groups)
	for i, s := range sens {
		if s >= 0 && labels[i] != -1 {
			members[s] = append(members[s], i)
		}
	}
	var overall, diff, diffAll, ratio, ratioAll []float64
	byGroup := make([][]float64, groups)
	idx := make([][]int32, groups)
	for g := range idx {
		idx[g] = make([]int32, len(members[g]))
	}
	rp, ry, rs := make([]int, 0, len(pred)), make([]int, 0, len(pred)), make([]int, 0, len(pred))
	rng := rand.New(rand.NewSource(cfg.Seed))
	for range cfg.Resamples {
		rp, ry, rs = rp[:0], ry[:0], rs[:0]
		for g := range idx {
			drawIndices(rng, idx[g])
			for _, k := range idx[g] {
				i := members[g][k]
				rp, ry, rs = append(rp, pred[i]), append(ry, labels[i]), append(rs, g)
			}
		}
		r, err := NewFrame(name, metric, rp, ry, rs)
		if err != nil {
			continue
		}
		overall = append(overall, r.Overall)
		for g, v := range r.ByGroup {
			byGroup[g] = append(byGroup[g], v)
		}
		diff, diffAll = append(diff, r.Difference(BetweenGroups)), append(diffAll, r.Difference(ToOverall))
		if v, err := r.Ratio(BetweenGroups); err == nil {
			ratio = append(ratio, v)
		}
		if v, err := r.Ratio(ToOverall); err == nil {
			ratioAll = append(ratioAll, v)
		}
	}
	if len(overall) == 0 {
		return nil, fmt.Errorf("%w: BootstrapFrame: %s failed on all %d resamples", ErrEmpty, name, cfg.Resamples)
	}
	out := &FrameIntervals{
		Overall:             valueInterval(overall, f.Overall, cfg.Level),
		ByGroup:             make([]Interval, groups),
		Difference:          SymmetricInterval(diff, f.Difference(BetweenGroups), cfg.Level, 0, math.Inf(1)),
		DifferenceToOverall: SymmetricInterval(diffAll, f.Difference(ToOverall), cfg.Level, 0, math.Inf(1)),
		Level:               cfg.Level,
		Resamples:           cfg.Resamples,
	}
	for g := range byGroup {
		out.ByGroup[g] = valueInterval(byGroup[g], f.ByGroup[g], cfg.Level)
		out.Evaluated += len(members[g])
	}
	ratioIv := func(m Method, xs []float64) *Interval {
		p, err := f.Ratio(m)
		if err != nil || len(xs) == 0 {
			return nil
		}
		iv := unitInterval(xs, p, cfg.Level)
		return &iv
	}
	out.Ratio, out.RatioToOverall = ratioIv(BetweenGroups, ratio), ratioIv(ToOverall, ratioAll)
	return out, nil
}
