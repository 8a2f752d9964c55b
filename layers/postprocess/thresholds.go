package postprocess

import (
	"fmt"
	"math"
	"slices"
	"sort"

	"github.com/fairmp/fairmp/metrics"
	"github.com/fairmp/fairmp/metrics/selection"
)

// Objective is what FitThresholds maximises on the fitting nodes.
type Objective int

const (
	// Accuracy is the fraction of correct decisions (fairlearn's
	// "accuracy_score").
	Accuracy Objective = iota
	// BalancedAccuracy is ½ TPR + ½ TNR over all fitted nodes
	// (fairlearn's "balanced_accuracy_score"; see the package doc for how
	// it is weighted across groups).
	BalancedAccuracy
)

// String names the objective ("accuracy", "balanced-accuracy").
func (o Objective) String() string {
	switch o {
	case Accuracy:
		return "accuracy"
	case BalancedAccuracy:
		return "balanced-accuracy"
	}
	return fmt.Sprintf("Objective(%d)", int(o))
}

// ParseObjective returns the objective named s (String).
func ParseObjective(s string) (Objective, error) {
	for _, o := range []Objective{Accuracy, BalancedAccuracy} {
		if s == o.String() {
			return o, nil
		}
	}
	return 0, fmt.Errorf("postprocess: objective %q, want accuracy or balanced-accuracy", s)
}

// ThresholdsConfig configures FitThresholds.
type ThresholdsConfig struct {
	// Rule chooses the thresholds: its Criterion is the constraint (ΔDP
	// or the DP ratio: demographic parity; ΔEO or the EO ratio:
	// true-positive-rate parity; ΔFPR or the FPR ratio: false-positive-rate
	// parity; equalized odds, difference or ratio), and its Goal says
	// what to optimise: MostAccurate maximises Objective under the bound
	// Rule.Bound (fairlearn's tol, for a difference), Fairest finds the
	// fairest criterion whose Objective is within Rule.MaxAccuracyLoss of
	// the reference (every group at the threshold 0.5). Default
	// selection.DefaultRule().
	Rule selection.Rule
	// Objective is what is maximised, and what Rule.MaxAccuracyLoss is
	// measured in. Default Accuracy.
	Objective Objective
	// Randomized allows each group to mix two thresholds, and for
	// equalized odds a constant random decision (fairlearn's
	// ThresholdOptimizer), so that the constraint can be met exactly
	// where no pair of thresholds meets it; decisions are then drawn,
	// seeded, by Thresholds.Decide. Default false: one threshold per
	// group.
	Randomized bool
	// Candidates bounds the thresholds tried per group (≥ 2): every
	// distinct cut of the group's validation probabilities when there are
	// at most that many, evenly spaced quantiles of them otherwise, plus
	// the cut at 0.5 and the two extremes (everyone, no one). The fit is
	// exact over the cuts tried. Default 200.
	Candidates int
}

// DefaultThresholdsConfig returns selection.DefaultRule(), the Accuracy
// objective, deterministic thresholds and 200 candidates per group.
func DefaultThresholdsConfig() ThresholdsConfig {
	return ThresholdsConfig{Rule: selection.DefaultRule(), Objective: Accuracy, Candidates: 200}
}

// Validate checks the fields.
func (c ThresholdsConfig) Validate() error {
	if err := c.Rule.Validate(); err != nil {
		return fmt.Errorf("postprocess: ThresholdsConfig.Rule: %w", err)
	}
	if c.Objective != Accuracy && c.Objective != BalancedAccuracy {
		return fmt.Errorf("postprocess: ThresholdsConfig.Objective = %v, want Accuracy or BalancedAccuracy", c.Objective)
	}
	if c.Candidates < 2 {
		return fmt.Errorf("postprocess: ThresholdsConfig.Candidates = %d, want ≥ 2", c.Candidates)
	}
	return nil
}

// GroupThreshold is the decision rule of one group. A node with
// probability p of class 1 is selected (ŷ = 1) with probability
//
//	(1 − PConstant)·[(1 − P2)·1(p > T) + P2·1(p > T2)] + PConstant·Constant
//
// A deterministic rule has P2 = PConstant = 0: ŷ = 1 when p > T. A
// threshold of −1 selects every node, 1 none. PConstant and Constant are
// fairlearn's p_ignore and prediction_constant (equalized odds only).
type GroupThreshold struct {
	T         float64 `json:"t"`
	T2        float64 `json:"t2,omitempty"`
	P2        float64 `json:"p2,omitempty"`
	PConstant float64 `json:"p_constant,omitempty"`
	Constant  float64 `json:"constant,omitempty"`
}

// Randomized reports whether the rule draws decisions.
func (g GroupThreshold) Randomized() bool { return g.P2 != 0 || g.PConstant != 0 }

// prob returns P(ŷ = 1) for probability p.
func (g GroupThreshold) prob(p float64) float64 {
	q := 0.0
	if p > g.T {
		q = 1 - g.P2
	}
	if g.P2 != 0 && p > g.T2 {
		q += g.P2
	}
	return (1-g.PConstant)*q + g.PConstant*g.Constant
}

// Thresholds is a post-processing of any binary classifier's
// probabilities: a decision rule per sensitive group, chosen on
// validation nodes by FitThresholds.
type Thresholds struct {
	// Groups holds group g's rule at index g. Nodes of unknown group
	// (−1) are decided with the threshold 0.5.
	Groups []GroupThreshold `json:"groups"`
	// Rule and Objective are those the thresholds were fitted for.
	Rule      selection.Rule `json:"rule"`
	Objective Objective      `json:"objective"`
	// Val is the fitted rule's objective (as Accuracy) and criterion
	// value on the validation nodes, in expectation for randomised
	// thresholds; Reference the same for the threshold 0.5 in every
	// group (its Undefined is set when its criterion has no value).
	Val, Reference selection.Candidate `json:"-"`
	// Tried is the number of candidate thresholds per group, summed.
	Tried int `json:"tried"`
}

// T returns the groups' (first) thresholds, for printing.
func (t *Thresholds) T() []float64 {
	out := make([]float64, len(t.Groups))
	for g, r := range t.Groups {
		out[g] = r.T
	}
	return out
}

// Randomized reports whether any group's rule draws decisions.
func (t *Thresholds) Randomized() bool {
	for _, g := range t.Groups {
		if g.Randomized() {
			return true
		}
	}
	return false
}

// ProbPositive returns P(ŷ = 1) for every node under the rules: 0 or 1
// for deterministic rules. It returns an error for slices of different
// lengths or a group the thresholds were not fitted for (below −1, or
// past the last fitted group).
func (t *Thresholds) ProbPositive(p1 []float64, sens []int) ([]float64, error) {
	if len(p1) != len(sens) {
		return nil, fmt.Errorf("postprocess: %d probabilities for %d groups, want one each per node", len(p1), len(sens))
	}
	out := make([]float64, len(p1))
	for i, p := range p1 {
		s := sens[i]
		switch {
		case s == -1:
			if p > 0.5 {
				out[i] = 1
			}
		case s < -1 || s >= len(t.Groups):
			return nil, fmt.Errorf("postprocess: node %d is in group %d, but the thresholds were fitted for groups 0..%d (and −1, unknown)", i, s, len(t.Groups)-1)
		default:
			out[i] = t.Groups[s].prob(p)
		}
	}
	return out, nil
}

// Decide returns the decisions ŷ (0 or 1) for every node. Deterministic
// rules ignore seed. Randomised rules draw node i's decision from a
// uniform number that depends on seed and i (its index in p1) alone, a
// hash rather than a stream: the same seed gives the same decisions, and
// a node's decision does not change when another node's probability does.
// Pass the whole graph's probabilities so that i is the node's id. Errors
// are those of ProbPositive.
func (t *Thresholds) Decide(p1 []float64, sens []int, seed int64) ([]int, error) {
	q, err := t.ProbPositive(p1, sens)
	if err != nil {
		return nil, err
	}
	out := make([]int, len(q))
	for i, v := range q {
		if v >= 1 || (v > 0 && uniform(seed, i) < v) {
			out[i] = 1
		}
	}
	return out, nil
}

// OneHot returns the decisions of Decide as n × 2 one-hot rows
// (1 − ŷ, ŷ), the form metrics.Evaluate takes: evaluating them with its
// 0.5 threshold evaluates the decisions (AUC then measures the decisions,
// not a ranking).
func (t *Thresholds) OneHot(p1 []float64, sens []int, seed int64) ([]float64, error) {
	d, err := t.Decide(p1, sens, seed)
	if err != nil {
		return nil, err
	}
	out := make([]float64, 2*len(d))
	for i, y := range d {
		out[2*i+y] = 1
	}
	return out, nil
}

// uniform returns a number in [0, 1) from seed and i (splitmix64).
func uniform(seed int64, i int) float64 {
	z := uint64(seed)*0x9e3779b97f4a7c15 + uint64(i)*0xbf58476d1ce4e5b9 + 0x94d049bb133111eb
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	z ^= z >> 31
	return float64(z>>11) / (1 << 53)
}

// FitThresholds chooses a decision rule per sensitive group on the
// validation nodes val from p1 (P(y=1) per node), the labels (0/1; −1
// unknown, left out) and the sensitive groups (0..G−1; −1 unknown: decided
// with 0.5, counted in the objective, not in the constraint), as cfg
// says. See the package doc for the method.
//
// It returns an error for an invalid cfg, slices of different lengths, a
// node of val out of range, a probability outside [0, 1], a label above 1,
// a group below −1, a group 0..G−1 without validation nodes of known
// label, G being 1 + the largest id anywhere in sens (a middle id or the
// highest alike), or fewer than two groups (wrapping
// metrics.ErrEmptyGroup), a group without the
// positives or negatives the constraint's rate needs (metrics.ErrNoPositives,
// metrics.ErrNoNegatives), a balanced accuracy without positives or
// negatives, or no rule meeting cfg.Rule (selection.ErrNoCandidate).
func FitThresholds(p1 []float64, labels, sens, val []int, cfg ThresholdsConfig) (*Thresholds, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	pr, err := newProblem(p1, labels, sens, val, cfg)
	if err != nil {
		return nil, fmt.Errorf("postprocess: FitThresholds: %w", err)
	}
	rule := cfg.Rule
	ref := pr.reference()
	var sol *solution
	switch rule.Goal {
	case selection.MostAccurate:
		sol = pr.best(rule.Bound)
	default:
		sol, err = pr.fairest(ref.Accuracy - rule.MaxAccuracyLoss)
		if err != nil {
			return nil, fmt.Errorf("postprocess: FitThresholds: %w", err)
		}
	}
	if sol == nil {
		return nil, fmt.Errorf("postprocess: FitThresholds: %w: %s: no %s thresholds over %d groups meet it on the validation nodes",
			selection.ErrNoCandidate, rule, kind(cfg.Randomized), len(pr.groups))
	}
	th := &Thresholds{Groups: sol.rules, Rule: rule, Objective: cfg.Objective, Reference: ref, Tried: pr.tried}
	th.Val = pr.candidate(sol.rates, sol.obj)
	return th, nil
}

func kind(randomized bool) string {
	if randomized {
		return "randomised"
	}
	return "deterministic"
}

// solution is a rule per group with its expected rates and objective.
type solution struct {
	rules []GroupThreshold
	rates [][numRates]float64 // per group: selection, TPR, FPR
	obj   float64
}

// The rates a group's point carries, in metrics.Rate order.
const numRates = 3

// problem holds the validation data, grouped, and the constraint.
type problem struct {
	cfg    ThresholdsConfig
	crit   metrics.Criterion
	groups []*group
	// constObj is the objective contribution of the nodes of unknown
	// group (decided with 0.5); nTot, pos, neg count every fitted node.
	constObj       float64
	nTot, pos, neg int
	tried          int
	// a point's objective contribution from its counts
	objOf func(g *group, tp, fp int) float64
}

// group holds one group's candidate points, in order of growing
// selection (point 0 selects no one, the last everyone).
type group struct {
	n, pos, neg int
	th          []float64           // threshold of each point (ŷ = 1 when p > th)
	tp, fp, sel []int               // counts at each point
	rate        [][numRates]float64 // selection rate, TPR, FPR at each point
	obj         []float64           // objective contribution at each point
	half        int                 // the point of the threshold 0.5
}

func newProblem(p1 []float64, labels, sens, val []int, cfg ThresholdsConfig) (*problem, error) {
	if len(labels) != len(p1) || len(sens) != len(p1) {
		return nil, fmt.Errorf("%d probabilities, %d labels, %d groups, want one each per node", len(p1), len(labels), len(sens))
	}
	pr := &problem{cfg: cfg, crit: cfg.Rule.Criterion}
	// The groups are 0..G−1 with G = 1 + the largest id in the whole sens,
	// as in package metrics: a group without validation nodes is then an
	// error whatever its id, not dropped when it is the highest.
	for k, i := range val {
		if i < 0 || i >= len(p1) {
			return nil, fmt.Errorf("val[%d] = %d, want a node in [0, %d)", k, i, len(p1))
		}
	}
	top := -1
	for _, g := range sens {
		top = max(top, g)
	}
	if top >= len(val) {
		return nil, fmt.Errorf("%w: sens holds the group id %d, so the groups are 0..%d, but there are %d validation nodes: some group has none (group ids must run 0..G−1; remap sparse ids first)", metrics.ErrEmptyGroup, top, top, len(val))
	}
	ps, ys := make([][]float64, top+1), make([][]int, top+1)
	var other [][2]int // unknown group: (label, decision at 0.5)
	for _, i := range val {
		if p := p1[i]; !(p >= 0 && p <= 1) {
			return nil, fmt.Errorf("P(y=1) of node %d is %v, want a probability", i, p)
		}
		y, g := labels[i], sens[i]
		if y < 0 {
			continue
		}
		if y > 1 || g < -1 {
			return nil, fmt.Errorf("node %d has label %d and group %d, want a binary label (or −1) and a group ≥ 0 (or −1)", i, y, g)
		}
		pr.nTot++
		if y == 1 {
			pr.pos++
		} else {
			pr.neg++
		}
		if g < 0 {
			d := 0
			if p1[i] > 0.5 {
				d = 1
			}
			other = append(other, [2]int{y, d})
			continue
		}
		ps[g], ys[g] = append(ps[g], p1[i]), append(ys[g], y)
	}
	for g := range ps {
		if len(ps[g]) == 0 {
			return nil, fmt.Errorf("%w: group %d of 0..%d has no validation node with a known label (the groups are 0..G−1 with G = 1 + the largest id in sens)", metrics.ErrEmptyGroup, g, len(ps)-1)
		}
	}
	if len(ps) < 2 {
		return nil, fmt.Errorf("%w: %d group(s) among the validation nodes, want at least two", metrics.ErrEmptyGroup, len(ps))
	}
	switch cfg.Objective {
	case Accuracy:
		n := float64(pr.nTot)
		pr.objOf = func(g *group, tp, fp int) float64 { return float64(tp+g.neg-fp) / n }
	case BalancedAccuracy:
		if pr.pos == 0 || pr.neg == 0 {
			return nil, fmt.Errorf("%w: the balanced accuracy needs positive and negative validation nodes, there are %d and %d", metrics.ErrNoPositives, pr.pos, pr.neg)
		}
		p, q := float64(pr.pos), float64(pr.neg)
		pr.objOf = func(g *group, tp, fp int) float64 { return 0.5*float64(tp)/p + 0.5*float64(g.neg-fp)/q }
	}
	// Nodes of unknown group count in the objective as a group of their
	// own at the threshold 0.5.
	if len(other) > 0 {
		u := &group{}
		tp, fp := 0, 0
		for _, o := range other {
			if o[0] == 1 {
				u.pos++
				tp += o[1]
			} else {
				u.neg++
				fp += o[1]
			}
		}
		pr.constObj = pr.objOf(u, tp, fp)
	}
	for g := range ps {
		gr, err := pr.newGroup(g, ps[g], ys[g])
		if err != nil {
			return nil, err
		}
		pr.groups = append(pr.groups, gr)
		pr.tried += len(gr.th)
	}
	return pr, nil
}

// newGroup builds group g's candidate points from its probabilities and
// labels.
func (pr *problem) newGroup(g int, p []float64, y []int) (*group, error) {
	gr := &group{n: len(p)}
	for _, v := range y {
		if v == 1 {
			gr.pos++
		} else {
			gr.neg++
		}
	}
	for _, r := range pr.crit.Rates() {
		switch {
		case r == metrics.TruePositiveRate && gr.pos == 0:
			return nil, fmt.Errorf("%w: group %d has %d validation nodes, none positive; %s needs its true-positive rate", metrics.ErrNoPositives, g, gr.n, pr.crit.Title())
		case r == metrics.FalsePositiveRate && gr.neg == 0:
			return nil, fmt.Errorf("%w: group %d has %d validation nodes, all positive; %s needs its false-positive rate", metrics.ErrNoNegatives, g, gr.n, pr.crit.Title())
		}
	}
	// The distinct probabilities, descending, with the positives and
	// negatives at each.
	idx := sortedDesc(p)
	var lv []float64
	var lp, ln []int
	for _, i := range idx {
		if len(lv) == 0 || p[i] != lv[len(lv)-1] {
			lv, lp, ln = append(lv, p[i]), append(lp, 0), append(ln, 0)
		}
		if y[i] == 1 {
			lp[len(lp)-1]++
		} else {
			ln[len(ln)-1]++
		}
	}
	// Cut k selects the k highest levels: threshold 1 (no one) for k = 0,
	// the midpoint between levels k−1 and k, −1 (everyone) for k = L.
	L := len(lv)
	cuts := map[int]bool{0: true, L: true}
	half := 0
	for half < L && lv[half] > 0.5 {
		half++
	}
	cuts[half] = true
	m := pr.cfg.Candidates
	if L+1 <= m {
		for k := 0; k <= L; k++ {
			cuts[k] = true
		}
	} else {
		for q := 0; q < m; q++ {
			cuts[q*L/(m-1)] = true
		}
	}
	tp, fp := 0, 0
	for k := 0; k <= L; k++ {
		if k > 0 {
			tp, fp = tp+lp[k-1], fp+ln[k-1]
		}
		if !cuts[k] {
			continue
		}
		t := -1.0
		switch {
		case k == 0:
			t = 1
		case k < L:
			t = (lv[k-1] + lv[k]) / 2
		}
		if k == half {
			gr.half = len(gr.th)
			if k > 0 && k < L {
				t = 0.5 // the same cut as the midpoint: keep the plain threshold
			}
		}
		gr.th = append(gr.th, t)
		gr.tp, gr.fp, gr.sel = append(gr.tp, tp), append(gr.fp, fp), append(gr.sel, tp+fp)
		gr.rate = append(gr.rate, [numRates]float64{ratio(tp+fp, gr.n), ratio(tp, gr.pos), ratio(fp, gr.neg)})
		gr.obj = append(gr.obj, pr.objOf(gr, tp, fp))
	}
	return gr, nil
}

func ratio(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// reference returns the objective and criterion of the threshold 0.5 in
// every group.
func (pr *problem) reference() selection.Candidate {
	rates := make([][numRates]float64, len(pr.groups))
	obj := pr.constObj
	for g, gr := range pr.groups {
		rates[g], obj = gr.rate[gr.half], obj+gr.obj[gr.half]
	}
	return pr.candidate(rates, obj)
}

// candidate returns the objective and the criterion of per-group rates.
func (pr *problem) candidate(rates [][numRates]float64, obj float64) selection.Candidate {
	v, err := pr.crit.Of(rateFrames(rates))
	return selection.Candidate{Accuracy: obj, Fairness: v, Undefined: err}
}

// rateFrames serves the groups' rates to metrics.Criterion.Of.
type rateFrames [][numRates]float64

func (r rateFrames) Frame(rate metrics.Rate) (*metrics.Frame, error) {
	if rate < 0 || int(rate) >= numRates {
		return nil, fmt.Errorf("postprocess: rate %v is not a threshold constraint", rate)
	}
	f := &metrics.Frame{Name: rate.String(), ByGroup: make([]float64, len(r))}
	for g := range r {
		f.ByGroup[g] = r[g][rate]
	}
	return f, nil
}

// window returns the largest rate allowed once the smallest is a: a +
// bound for a difference, a / bound for a ratio (+Inf for the ratio bound
// 0, which leaves the rates free).
func (pr *problem) window(a, bound float64) float64 {
	if pr.crit.IsRatio() {
		if bound == 0 {
			return math.Inf(1)
		}
		return a / bound
	}
	return a + bound
}

// best returns the rule maximising the objective with the criterion
// meeting bound, or nil if none does.
func (pr *problem) best(bound float64) *solution {
	two := len(pr.crit.Rates()) == 2
	switch {
	case pr.cfg.Randomized && two:
		return pr.bestRandomOdds(bound)
	case pr.cfg.Randomized:
		return pr.bestRandomRate(bound)
	default:
		return pr.bestDeterministic(bound)
	}
}

// fairest returns the rule with the fairest criterion among those whose
// objective reaches target: the tightest bound at which best still
// reaches it, by bisection (60 halvings, below any gap between two
// achievable values). For a ratio the search runs over rules whose rates
// are all above 0 (bound 1e-9 at the loosest); if none reaches target,
// the most accurate rule is returned when its ratio is defined (it is
// then 0, the fairest left).
func (pr *problem) fairest(target float64) (*solution, error) {
	reaches := func(s *solution) bool {
		return s != nil && s.obj >= target-1e-12 && pr.candidate(s.rates, s.obj).Undefined == nil
	}
	// The loosest bound: 1 for a difference (no constraint), a ratio just
	// above 0.
	loose, tight := 1.0, 0.0
	if pr.crit.IsRatio() {
		loose, tight = 1e-9, 1
	}
	s := pr.best(loose)
	if !reaches(s) {
		if s = pr.best(0); pr.crit.IsRatio() && reaches(s) {
			return s, nil
		}
		return nil, fmt.Errorf("%w: %s: no %s thresholds reach the reference's %s minus %.4g points with %s defined", selection.ErrNoCandidate,
			pr.cfg.Rule, kind(pr.cfg.Randomized), pr.cfg.Objective, 100*pr.cfg.Rule.MaxAccuracyLoss, pr.crit.Title())
	}
	if t := pr.best(tight); reaches(t) {
		return t, nil
	}
	lo, hi := tight, loose // hi reaches, lo does not
	for range 60 {
		mid := (lo + hi) / 2
		if t := pr.best(mid); reaches(t) {
			s, hi = t, mid
		} else {
			lo = mid
		}
	}
	return s, nil
}

// bestDeterministic enumerates the smallest rate(s) of the solution (the
// anchors: every point's rate), and for each picks in every group the
// point of highest objective whose rates lie in the windows: exact over
// the candidate points. Ties in the objective go to the fairer criterion.
func (pr *problem) bestDeterministic(bound float64) *solution {
	rates := pr.crit.Rates()
	r0 := rates[0]
	var r1 metrics.Rate = -1
	if len(rates) == 2 {
		r1 = rates[1]
	}
	anchors := func(r metrics.Rate) []float64 {
		if r < 0 {
			return []float64{0}
		}
		var out []float64
		for _, gr := range pr.groups {
			for _, pt := range gr.rate {
				if v := pt[r]; !pr.crit.IsRatio() || v > 0 || bound == 0 {
					out = append(out, v)
				}
			}
		}
		return uniqueSorted(out)
	}
	maxes := make([]*rangeMax, len(pr.groups))
	for g, gr := range pr.groups {
		maxes[g] = newRangeMax(gr.obj)
	}
	// spans[k][g] are group g's points whose rate lies in the window of
	// anchor k of the rate.
	spans := func(r metrics.Rate, as []float64) [][][2]int {
		out := make([][][2]int, len(as))
		for k, a := range as {
			out[k] = make([][2]int, len(pr.groups))
			for g, gr := range pr.groups {
				if r < 0 {
					out[k][g] = [2]int{0, len(gr.th) - 1}
					continue
				}
				lo, hi := gr.span(r, a, pr.window(a, bound))
				out[k][g] = [2]int{lo, hi}
			}
		}
		return out
	}
	s0, s1 := spans(r0, anchors(r0)), spans(r1, anchors(r1))
	var bestS *solution
	pick := make([]int, len(pr.groups))
	for _, sa := range s0 {
		for _, sb := range s1 {
			obj, ok := pr.constObj, true
			for g := range pr.groups {
				lo, hi := max(sa[g][0], sb[g][0]), min(sa[g][1], sb[g][1])
				if lo > hi {
					ok = false
					break
				}
				pick[g] = maxes[g].argmax(lo, hi)
				obj += pr.groups[g].obj[pick[g]]
			}
			if !ok {
				continue
			}
			if bestS != nil && obj < bestS.obj {
				continue
			}
			// The highest objective; on ties the fairer criterion.
			s := pr.deterministic(pick, obj)
			if bestS == nil || obj > bestS.obj || pr.crit.Better(pr.candidate(s.rates, obj).Fairness, pr.candidate(bestS.rates, obj).Fairness) {
				bestS = s
			}
		}
	}
	return bestS
}

// deterministic returns the solution of one point per group.
func (pr *problem) deterministic(pick []int, obj float64) *solution {
	s := &solution{obj: obj}
	for g, gr := range pr.groups {
		s.rules = append(s.rules, GroupThreshold{T: gr.th[pick[g]]})
		s.rates = append(s.rates, gr.rate[pick[g]])
	}
	return s
}

// span returns the points of gr whose rate r lies in [lo, hi]: an index
// range, since rates grow with the point (empty: lo > hi).
func (gr *group) span(r metrics.Rate, lo, hi float64) (int, int) {
	first := searchRate(gr.rate, r, func(v float64) bool { return v >= lo-1e-12 })
	last := searchRate(gr.rate, r, func(v float64) bool { return v > hi+1e-12 }) - 1
	return first, last
}

// searchRate returns the first point whose rate r satisfies f (f is
// monotone: false then true), or len(rates).
func searchRate(rates [][numRates]float64, r metrics.Rate, f func(float64) bool) int {
	lo, hi := 0, len(rates)
	for lo < hi {
		m := (lo + hi) / 2
		if f(rates[m][r]) {
			hi = m
		} else {
			lo = m + 1
		}
	}
	return lo
}

// uniqueSorted sorts xs and drops repeats.
func uniqueSorted(xs []float64) []float64 {
	sortFloats(xs)
	out := xs[:0]
	for i, v := range xs {
		if i == 0 || v != out[len(out)-1] {
			out = append(out, v)
		}
	}
	return out
}

// rangeMax answers argmax queries over index ranges of a fixed slice in
// O(1) (a sparse table; the first index on ties).
type rangeMax struct {
	v   []float64
	tab [][]int32
}

func newRangeMax(v []float64) *rangeMax {
	n := len(v)
	rm := &rangeMax{v: v, tab: [][]int32{make([]int32, n)}}
	for i := range n {
		rm.tab[0][i] = int32(i)
	}
	for w := 1; 2*w <= n; w *= 2 {
		prev := rm.tab[len(rm.tab)-1]
		cur := make([]int32, n-2*w+1)
		for i := range cur {
			cur[i] = rm.better(prev[i], prev[i+w])
		}
		rm.tab = append(rm.tab, cur)
	}
	return rm
}

func (rm *rangeMax) better(a, b int32) int32 {
	if rm.v[b] > rm.v[a] || (rm.v[b] == rm.v[a] && b < a) {
		return b
	}
	return a
}

// argmax returns the index of the largest value in v[lo..hi] (lo ≤ hi).
func (rm *rangeMax) argmax(lo, hi int) int {
	k := 0
	for 1<<(k+1) <= hi-lo+1 {
		k++
	}
	return int(rm.better(rm.tab[k][lo], rm.tab[k][hi-(1<<k)+1]))
}

// hull is the upper concave hull of a group's points in the plane (x, y),
// x from 0 to 1: vertices in increasing x, each a candidate point.
type hull struct {
	x, y []float64
	pt   []int
}

// upperHull returns the upper hull of the points (xs[k], ys[k]) (Andrew's
// monotone chain over the points sorted by x, then y).
func upperHull(xs, ys []float64) *hull {
	idx := make([]int, len(xs))
	for i := range idx {
		idx[i] = i
	}
	sortIndex(idx, func(a, b int) bool { return xs[a] < xs[b] || (xs[a] == xs[b] && ys[a] < ys[b]) })
	h := &hull{}
	for _, k := range idx {
		// Of points with the same x keep the highest (the last).
		if n := len(h.x); n > 0 && h.x[n-1] == xs[k] {
			h.x, h.y, h.pt = h.x[:n-1], h.y[:n-1], h.pt[:n-1]
		}
		for n := len(h.x); n >= 2; n = len(h.x) {
			// Drop the middle point when it lies on or below the chord.
			if (h.y[n-1]-h.y[n-2])*(xs[k]-h.x[n-2]) <= (ys[k]-h.y[n-2])*(h.x[n-1]-h.x[n-2]) {
				h.x, h.y, h.pt = h.x[:n-1], h.y[:n-1], h.pt[:n-1]
				continue
			}
			break
		}
		h.x, h.y, h.pt = append(h.x, xs[k]), append(h.y, ys[k]), append(h.pt, k)
	}
	return h
}

// seg returns the segment of h holding x (clamped to [x₀, x_last]): the
// index j of its left vertex and the weight λ of its right one, x =
// (1 − λ)·x_j + λ·x_{j+1} (λ = 0 on a vertex, j the last vertex at the
// right end).
func (h *hull) seg(x float64) (int, float64) {
	n := len(h.x)
	if n == 1 || x <= h.x[0] {
		return 0, 0
	}
	if x >= h.x[n-1] {
		return n - 1, 0
	}
	j := searchFloat(h.x, x) // first vertex with x_j ≥ x
	if h.x[j] == x {
		return j, 0
	}
	j--
	return j, (x - h.x[j]) / (h.x[j+1] - h.x[j])
}

// at returns the hull's value at x.
func (h *hull) at(x float64) float64 {
	j, l := h.seg(x)
	if l == 0 {
		return h.y[j]
	}
	return (1-l)*h.y[j] + l*h.y[j+1]
}

// firstAtLeast returns the smallest x at which the (non-decreasing) hull
// reaches v, or +Inf if it never does.
func (h *hull) firstAtLeast(v float64) float64 {
	n := len(h.y)
	if h.y[n-1] < v {
		return math.Inf(1)
	}
	if h.y[0] >= v {
		return h.x[0]
	}
	j := searchFloat(h.y, v) // first vertex with y_j ≥ v
	return h.x[j-1] + (v-h.y[j-1])*(h.x[j]-h.x[j-1])/(h.y[j]-h.y[j-1])
}

// top returns the interval of x where the hull reaches its largest y
// (within tieObj): from the first to the last vertex that does, the hull
// being concave.
func (h *hull) top() [2]float64 {
	m := math.Inf(-1)
	for _, y := range h.y {
		m = max(m, y)
	}
	out := [2]float64{math.Inf(1), math.Inf(-1)}
	for j, y := range h.y {
		if y >= m-tieObj {
			out[0], out[1] = min(out[0], h.x[j]), max(out[1], h.x[j])
		}
	}
	return out
}

// peak returns the x of the vertex maximising y + c·x (the first one).
func (h *hull) peak(c float64) float64 {
	best := 0
	for j := range h.x {
		if h.y[j]+c*h.x[j] > h.y[best]+c*h.x[best] {
			best = j
		}
	}
	return h.x[best]
}

// mix returns the rule realising the hull point at x: the two cuts of its
// segment, mixed.
func (h *hull) mix(gr *group, x float64) (GroupThreshold, [numRates]float64) {
	j, l := h.seg(x)
	a := h.pt[j]
	r := GroupThreshold{T: gr.th[a]}
	rates := gr.rate[a]
	if l > 0 {
		b := h.pt[j+1]
		r.T2, r.P2 = gr.th[b], l
		for k := range rates {
			rates[k] = (1-l)*gr.rate[a][k] + l*gr.rate[b][k]
		}
	}
	return r, rates
}

// bestRandomRate maximises the objective over mixtures of two cuts per
// group under a constraint on one rate: each group's best objective at
// rate x is its upper concave hull y*(x); with the smallest rate a, each
// group takes a point of its hull's top clamped into [a, window(a)], and
// the total is piecewise linear in a with breaks where a or window(a)
// crosses a vertex: evaluating every break is exact. Ties in the
// objective go to the fairer criterion, as in bestDeterministic: within
// an anchor, where a group's top is flat (several rates reach its best
// objective) it takes the rate closest to the others' (see spread), and
// between anchors of the same objective the fairer one wins.
func (pr *problem) bestRandomRate(bound float64) *solution {
	r := pr.crit.Rates()[0]
	hs := make([]*hull, len(pr.groups))
	tops := make([][2]float64, len(pr.groups))
	var anchors []float64
	for g, gr := range pr.groups {
		xs := make([]float64, len(gr.rate))
		for k := range xs {
			xs[k] = gr.rate[k][r]
		}
		hs[g] = upperHull(xs, gr.obj)
		tops[g] = hs[g].top()
		for _, v := range hs[g].x {
			// a at v, or window(a) at v.
			w := v - bound
			if pr.crit.IsRatio() {
				w = v * bound
			}
			anchors = append(anchors, v, w)
		}
	}
	anchors = append(anchors, 0, 1)
	if pr.crit.IsRatio() {
		anchors = append(anchors, bound)
	}
	var best *solution
	var bestFair selection.Candidate
	bestObj := math.Inf(-1)
	for _, a := range uniqueSorted(anchors) {
		if a < 0 || a > 1 || (pr.crit.IsRatio() && a <= 0 && bound > 0) {
			continue
		}
		s := pr.randomRateAt(hs, tops, a, min(pr.window(a, bound), 1))
		c := pr.candidate(s.rates, s.obj)
		switch {
		case s.obj > bestObj+tieObj:
		case s.obj >= bestObj-tieObj && fairer(pr.crit, c, bestFair):
		default:
			continue
		}
		best, bestFair, bestObj = s, c, max(bestObj, s.obj)
	}
	return best
}

// tieObj is the difference in objective below which two solutions tie:
// objectives are sums of counts over a node count, so a real difference
// is at least 1/n (balanced accuracy: 1/(2·max(pos, neg))), far above it.
const tieObj = 1e-12

// fairer reports whether candidate c has a fairer criterion than d (an
// undefined criterion is the least fair).
func fairer(crit metrics.Criterion, c, d selection.Candidate) bool {
	if c.Undefined != nil {
		return false
	}
	return d.Undefined != nil || crit.Better(c.Fairness, d.Fairness)
}

// randomRateAt returns the best mixtures once the rate window is [a, hi]:
// each group takes a rate of highest objective in the window, an interval
// [l_g, r_g] (a hull's flat top, clamped; usually one point), and among
// these the closest together: x_g = min(L, r_g) with L = max l_g. This is
// the smallest spread (max − min, and the largest min/max) of any choice:
// every group is then in [min(L, min r_g), L], and some group has r_g ≤ it
// and some l_g = L.
func (pr *problem) randomRateAt(hs []*hull, tops [][2]float64, a, hi float64) *solution {
	ls, rs := make([]float64, len(hs)), make([]float64, len(hs))
	L := math.Inf(-1)
	for g := range hs {
		lo, up := tops[g][0], tops[g][1]
		switch {
		case up < a: // the top lies left of the window: the best is at a
			ls[g], rs[g] = a, a
		case lo > hi: // right of it: at hi
			ls[g], rs[g] = hi, hi
		default:
			ls[g], rs[g] = max(lo, a), min(up, hi)
		}
		L = max(L, ls[g])
	}
	s := &solution{obj: pr.constObj}
	for g, h := range hs {
		x := min(L, rs[g])
		rule, rates := h.mix(pr.groups[g], x)
		s.rules, s.rates = append(s.rules, rule), append(s.rates, rates)
		s.obj += h.at(x)
	}
	return s
}

// bestRandomOdds maximises the objective under equalized odds (a bound on
// both the true- and the false-positive rates' disparity) over each
// group's ROC region between its upper hull and the diagonal (fairlearn's:
// mixtures of two cuts, then of a constant random decision). With the
// smallest TPR a and FPR b of the solution fixed, each group's best point
// is found in closed form; the objective is jointly concave in (a, b)
// (the problem is a linear program), and is maximised by nested
// golden-section searches.
func (pr *problem) bestRandomOdds(bound float64) *solution {
	rc := make([]*hull, len(pr.groups))
	for g, gr := range pr.groups {
		xs, ys := make([]float64, len(gr.rate)), make([]float64, len(gr.rate))
		for k := range xs {
			xs[k], ys[k] = gr.rate[k][metrics.FalsePositiveRate], gr.rate[k][metrics.TruePositiveRate]
		}
		rc[g] = upperHull(xs, ys)
	}
	// Objective of group g at (FPR x, TPR t): α t − β x + γ.
	alpha, beta, gamma := make([]float64, len(rc)), make([]float64, len(rc)), make([]float64, len(rc))
	for g, gr := range pr.groups {
		gamma[g] = pr.objOf(gr, 0, 0)
		alpha[g] = pr.objOf(gr, gr.pos, 0) - gamma[g]
		beta[g] = gamma[g] - pr.objOf(gr, 0, gr.neg)
	}
	ratio := pr.crit.IsRatio()
	eps := 0.0
	if ratio {
		eps = 1e-12 // a ratio needs rates above 0
	}
	// place returns group g's best (x, t) with t ∈ [a, ta], x ∈ [b, xb].
	place := func(g int, a, ta, b, xb float64) (x, t float64, ok bool) {
		h := rc[g]
		lo := max(b, h.firstAtLeast(a))
		hi := min(xb, ta, 1)
		if lo > hi+1e-15 {
			return 0, 0, false
		}
		x = min(h.peak(-beta[g]/alpha[g]), h.firstAtLeast(ta))
		x = min(max(x, lo), hi)
		return x, min(h.at(x), ta), true
	}
	value := func(a, b float64) float64 {
		ta, xb := pr.window(a, bound), pr.window(b, bound)
		v := pr.constObj
		for g := range rc {
			x, t, ok := place(g, a, ta, b, xb)
			if !ok {
				return math.Inf(-1)
			}
			v += alpha[g]*t - beta[g]*x + gamma[g]
		}
		return v
	}
	// The feasible b for a: b ≤ window(a) (a point above the diagonal has
	// x ≤ t), and window(b) ≥ the smallest FPR at which every group's hull
	// reaches a.
	bRange := func(a float64) (float64, float64) {
		need := 0.0
		for _, h := range rc {
			need = max(need, h.firstAtLeast(a))
		}
		lo := need - bound
		if ratio {
			lo = need * bound
		}
		return max(lo, eps), min(pr.window(a, bound), 1)
	}
	bestB := func(a float64) (float64, float64) {
		lo, hi := bRange(a)
		if lo > hi {
			return 0, math.Inf(-1)
		}
		b := goldenMax(func(b float64) float64 { return value(a, b) }, lo, hi)
		return b, value(a, b)
	}
	a := goldenMax(func(a float64) float64 { _, v := bestB(a); return v }, eps, 1)
	b, v := bestB(a)
	if math.IsInf(v, -1) {
		return nil
	}
	ta, xb := pr.window(a, bound), pr.window(b, bound)
	s := &solution{obj: pr.constObj}
	for g, h := range rc {
		x, t, _ := place(g, a, ta, b, xb)
		rule, rates := h.mix(pr.groups[g], x)
		if u := h.at(x); t < u && u > x {
			// Lower the TPR to t by deciding a share at random with the
			// rate x, which keeps the FPR at x.
			rule.PConstant, rule.Constant = (u-t)/(u-x), x
			rates[metrics.TruePositiveRate] = t
		}
		gr := pr.groups[g]
		rates[metrics.SelectionRate] = (t*float64(gr.pos) + x*float64(gr.neg)) / float64(gr.n)
		s.rules, s.rates = append(s.rules, rule), append(s.rates, rates)
		s.obj += alpha[g]*t - beta[g]*x + gamma[g]
	}
	return s
}

// goldenMax returns an argmax of the concave function f on [lo, hi] (−Inf
// outside its domain is allowed at the ends), by golden-section search to
// the resolution of float64, checking the ends too.
func goldenMax(f func(float64) float64, lo, hi float64) float64 {
	const phi = 0.6180339887498949
	a, b := lo, hi
	c, d := b-phi*(b-a), a+phi*(b-a)
	fc, fd := f(c), f(d)
	for range 120 {
		if b-a <= 1e-15 {
			break
		}
		if fc >= fd {
			b, d, fd = d, c, fc
			c = b - phi*(b-a)
			fc = f(c)
		} else {
			a, c, fc = c, d, fd
			d = a + phi*(b-a)
			fd = f(d)
		}
	}
	best, fb := (a+b)/2, f((a+b)/2)
	for _, x := range []float64{lo, hi, c, d} {
		if v := f(x); v > fb {
			best, fb = x, v
		}
	}
	return best
}

// sortedDesc returns the indices of p in decreasing order of p (stable).
func sortedDesc(p []float64) []int {
	idx := make([]int, len(p))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return p[idx[a]] > p[idx[b]] })
	return idx
}

func sortFloats(xs []float64) { slices.Sort(xs) }

// sortIndex sorts idx by less, stably.
func sortIndex(idx []int, less func(a, b int) bool) {
	sort.SliceStable(idx, func(i, j int) bool { return less(idx[i], idx[j]) })
}

// searchFloat returns the first index of the sorted xs with xs[i] ≥ v.
func searchFloat(xs []float64, v float64) int { return sort.SearchFloat64s(xs, v) }

// MarshalText encodes the objective as its String.
func (o Objective) MarshalText() ([]byte, error) { return []byte(o.String()), nil }
