package postprocess

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/fairmp/fairmp/metrics"
	"github.com/fairmp/fairmp/metrics/diagnose"
	"github.com/fairmp/fairmp/metrics/selection"
)

// ParityNotReached is the code of a [ClassOffsets] diagnostic: the fitted
// offsets leave a gap in the rule's criterion on the validation nodes,
// and the message says why when the data say it (a class no offset can
// select in a group, group sizes that admit no common rate, the accuracy
// bound).
const ParityNotReached diagnose.Code = "parity-not-reached"

// ClassOffsetsConfig configures FitClassOffsets.
type ClassOffsetsConfig struct {
	// Rule chooses the offsets, its criterion judged for c classes (the
	// worst class's one-vs-rest value, metrics.ClassBreakdown.Criterion):
	// Fairest finds the fairest criterion whose validation accuracy is
	// within Rule.MaxAccuracyLoss (a fraction: 0.01 is one point) of the
	// model's own argmax decisions; MostAccurate the most accurate
	// offsets whose criterion meets Rule.Bound. Default
	// selection.FairestWithin(metrics.DPDifference, 0.01): the c-class ΔDP
	// within one accuracy point.
	Rule selection.Rule
	// Candidates bounds the offsets tried in one move of one coordinate
	// (≥ 3): every value that changes a validation decision when there
	// are at most that many, evenly spaced ones among them otherwise.
	// Default 64.
	Candidates int
	// Sweeps bounds the passes over every group's every class (≥ 1); the
	// search stops earlier when a pass improves nothing. Default 25.
	Sweeps int
}

// DefaultClassOffsetsConfig returns the c-class ΔDP within one accuracy
// point, 64 candidates a move and at most 25 sweeps.
func DefaultClassOffsetsConfig() ClassOffsetsConfig {
	return ClassOffsetsConfig{Rule: selection.FairestWithin(metrics.DPDifference, 0.01), Candidates: 64, Sweeps: 25}
}

// Validate checks the fields.
func (c ClassOffsetsConfig) Validate() error {
	if err := c.Rule.Validate(); err != nil {
		return fmt.Errorf("postprocess: ClassOffsetsConfig.Rule: %w", err)
	}
	if c.Candidates < 3 {
		return fmt.Errorf("postprocess: ClassOffsetsConfig.Candidates = %d, want ≥ 3 (below, between and above the decisions' breaks)", c.Candidates)
	}
	if c.Sweeps < 1 {
		return fmt.Errorf("postprocess: ClassOffsetsConfig.Sweeps = %d, want ≥ 1", c.Sweeps)
	}
	return nil
}

// ClassOffsets is a post-processing of any c-class classifier's
// probabilities: an additive offset per sensitive group and class on the
// log-probabilities, chosen on validation nodes by FitClassOffsets. Node
// i of group g is given the class
//
//	ŷ_i = argmax_k ( log p_ik + Offsets[g][k] )   (the lowest class on ties)
//
// so zero offsets give the model's own argmax decisions. Offsets[g][0] is
// 0: adding one number to a group's offsets changes nothing.
type ClassOffsets struct {
	// Classes is c.
	Classes int `json:"classes"`
	// Offsets[g] holds group g's c offsets. Nodes of unknown group (−1)
	// keep the argmax.
	Offsets [][]float64 `json:"offsets"`
	// Rule is the rule the offsets were fitted for.
	Rule selection.Rule `json:"rule"`
	// Val is the fitted offsets' validation accuracy and c-class
	// criterion value; Reference the same for zero offsets (the argmax).
	Val, Reference selection.Candidate `json:"-"`
	// Sweeps is the number of passes made; Converged whether the last
	// improved nothing (false: Sweeps stopped the search).
	Sweeps    int  `json:"sweeps"`
	Converged bool `json:"converged"`
	diags     []diagnose.Diagnostic
}

// Diagnostics returns what a reader of the fit should know: a
// ParityNotReached diagnostic when the rule's criterion is not at parity
// on the validation nodes (a difference above 0, a ratio below 1), with
// the reasons the data show; nil otherwise.
func (o *ClassOffsets) Diagnostics() []diagnose.Diagnostic { return o.diags }

// Decide returns every node's class under the offsets, from probs (n × c
// row-major, P(y = k) of node i at i·c + k) and sens (n groups; −1
// unknown: the argmax). It returns an error, naming the node, for probs
// whose length is not len(sens)·c, a probability that is NaN or negative,
// or a group below −1 or past the fitted ones.
func (o *ClassOffsets) Decide(probs []float64, sens []int) ([]int, error) {
	c := o.Classes
	if c < 2 || len(o.Offsets) == 0 {
		return nil, fmt.Errorf("postprocess: ClassOffsets has %d classes and %d groups: fit it with FitClassOffsets", c, len(o.Offsets))
	}
	if len(probs) != len(sens)*c {
		return nil, fmt.Errorf("postprocess: ClassOffsets.Decide: len(probs) = %d, want len(sens) × classes = %d × %d = %d", len(probs), len(sens), c, len(sens)*c)
	}
	out := make([]int, len(sens))
	for i, g := range sens {
		if g < -1 || g >= len(o.Offsets) {
			return nil, fmt.Errorf("postprocess: ClassOffsets.Decide: node %d is in group %d, but the offsets were fitted for groups 0..%d (and −1, unknown)", i, g, len(o.Offsets)-1)
		}
		row := probs[i*c : (i+1)*c]
		for k, p := range row {
			if !(p >= 0) {
				return nil, fmt.Errorf("postprocess: ClassOffsets.Decide: probs[%d] = %v (node %d, class %d), want a probability ≥ 0", i*c+k, p, i, k)
			}
		}
		var off []float64
		if g >= 0 {
			off = o.Offsets[g]
		}
		out[i] = argmaxOffset(row, off, -1)
	}
	return out, nil
}

// OneHot returns the decisions of Decide as n × c one-hot rows, the form
// metrics.EvaluateClasses and metrics.BootstrapClasses take (their argmax
// is the decision). Errors are Decide's.
func (o *ClassOffsets) OneHot(probs []float64, sens []int) ([]float64, error) {
	d, err := o.Decide(probs, sens)
	if err != nil {
		return nil, err
	}
	out := make([]float64, len(d)*o.Classes)
	for i, k := range d {
		out[i*o.Classes+k] = 1
	}
	return out, nil
}

// argmaxOffset returns argmax_k log row[k] + off[k] (off nil: zeros) over
// the classes other than skip, the lowest on ties. A zero probability is
// never chosen over a positive one.
func argmaxOffset(row, off []float64, skip int) int {
	best, bv := -1, math.Inf(-1)
	for k, p := range row {
		if k == skip {
			continue
		}
		v := math.Log(p)
		if off != nil {
			v += off[k]
		}
		if best < 0 || v > bv {
			best, bv = k, v
		}
	}
	return best
}

// FitClassOffsets chooses an offset per sensitive group and class on the
// validation nodes val so that the groups' decisions meet cfg.Rule for c
// classes (by default: the smallest c-class ΔDP, the largest gap over
// classes between the groups' selection rates P(ŷ = k | s = g), within
// one accuracy point of the argmax). probs is n × classes row-major,
// labels 0..classes−1 (−1 unknown: left out), sens 0..G−1 (−1 unknown:
// kept at the argmax, counted in the accuracy, not in the criterion).
//
// The search is a coordinate search, deterministic (no random choice):
// sweep after sweep, for every group g and class k in order, it tries
// the offsets of (g, k) at which some validation decision of group g
// changes (the midpoints between consecutive breaks, one below and one
// above them all; cfg.Candidates of them evenly spaced when there are
// more), keeps the best by the rule, and stops after a sweep that
// improves nothing or after cfg.Sweeps. "Best" is: admitted by the rule
// ([selection.Rule.Admits]) first; then, for Fairest, the fairer
// criterion, and on a tie the fairer sum over classes of the one-vs-rest
// criteria (so that a move that closes one class's gap without changing
// the worst class still counts), then the higher accuracy; for
// MostAccurate the higher accuracy, then the fairer criterion and sum.
// Among offsets not admitted the fairer is better, so a MostAccurate
// search first moves towards its bound. A coordinate search can stop at a
// local optimum: Diagnostics says when parity was not reached.
//
// It returns an error for an invalid cfg, classes < 2, slices of
// different lengths (len(probs) must be len(labels) × classes), a node of
// val out of range, a probability outside [0, 1], a label outside
// −1..classes−1, a group below −1, a group 0..G−1 without validation
// nodes of known label or fewer than two groups (wrapping
// metrics.ErrEmptyGroup), a criterion undefined whatever the offsets (a
// group without validation nodes of some class, for a true-positive rate:
// metrics.ErrNoPositives; with only nodes of it, for a false-positive
// rate: metrics.ErrNoNegatives; the error names the class and the
// group), or, for MostAccurate, no offsets meeting the bound
// (selection.ErrNoCandidate, with the reasons of Diagnostics).
func FitClassOffsets(probs []float64, classes int, labels, sens, val []int, cfg ClassOffsetsConfig) (*ClassOffsets, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	s, err := newOffsetSearch(probs, classes, labels, sens, val, cfg)
	if err != nil {
		return nil, fmt.Errorf("postprocess: FitClassOffsets: %w", err)
	}
	ref, err := s.evaluate(s.pred)
	if err != nil {
		return nil, fmt.Errorf("postprocess: FitClassOffsets: %w", err)
	}
	s.ref = ref.cand
	o := &ClassOffsets{Classes: classes, Rule: cfg.Rule, Reference: ref.cand}
	var cur state
	if cfg.Rule.Goal == selection.MostAccurate {
		cur = s.mostAccurate(ref, o)
	} else {
		s.rule = cfg.Rule
		cur = s.search(ref, o)
	}
	// A group's offsets are defined up to one added number: class 0's is 0.
	o.Offsets = make([][]float64, len(s.off))
	for g, off := range s.off {
		o.Offsets[g] = make([]float64, classes)
		for k := range off {
			o.Offsets[g][k] = off[k] - off[0]
		}
	}
	o.Val = cur.cand
	o.diags = s.diagnose(o, cur)
	if !cfg.Rule.Admits(cur.cand, s.ref) {
		why := ""
		if len(o.diags) > 0 {
			why = ": " + o.diags[0].Message
		}
		return nil, fmt.Errorf("postprocess: FitClassOffsets: %w: %s: the best offsets found over %d groups and %d classes reach %s %s at %.2f%% validation accuracy%s",
			selection.ErrNoCandidate, cfg.Rule, len(s.groups), classes, cfg.Rule.Criterion.Title(), fmtCand(cfg.Rule, cur.cand), 100*cur.cand.Accuracy, why)
	}
	return o, nil
}

// lossLadder are the accuracy losses the MostAccurate goal tries, in
// turn, to reach its bound before it maximises the accuracy under it.
var lossLadder = []float64{0.0025, 0.005, 0.01, 0.02, 0.03, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.49}

// mostAccurate reaches the bound of the MostAccurate rule by the Fairest
// search with a growing accuracy loss (the smallest loss of lossLadder
// whose fairest offsets meet the bound), then raises the accuracy under
// the bound by the MostAccurate search from there. Without a loss that
// meets the bound, it keeps the fairest offsets of the largest loss.
func (s *offsetSearch) mostAccurate(ref state, o *ClassOffsets) state {
	r := s.cfg.Rule
	var cur state
	for _, loss := range lossLadder {
		s.reset()
		o.Sweeps = 0
		s.rule = selection.FairestWithin(r.Criterion, loss)
		cur = s.search(ref, o)
		if r.Admits(cur.cand, s.ref) {
			break
		}
	}
	s.rule = r
	if r.Admits(cur.cand, s.ref) {
		cur = s.search(cur, o)
	}
	return cur
}

// reset puts every offset back to 0 and the decisions to the argmax.
func (s *offsetSearch) reset() {
	c := s.classes
	for _, off := range s.off {
		clear(off)
	}
	for v := range s.pred {
		s.pred[v] = argmaxOffset(s.prob[v*c:(v+1)*c], nil, -1)
	}
}

// search runs the coordinate search with s.rule from the decisions cur
// (those of s.off), counting its sweeps in o.
func (s *offsetSearch) search(cur state, o *ClassOffsets) state {
	o.Converged = false
	for range s.cfg.Sweeps {
		o.Sweeps++
		improved := false
		for g := range s.groups {
			for k := range s.classes {
				if next, ok := s.move(g, k, cur); ok {
					cur, improved = next, true
				}
			}
		}
		if !improved {
			o.Converged = true
			break
		}
	}
	return cur
}

func fmtCand(r selection.Rule, c selection.Candidate) string {
	if c.Undefined != nil {
		return "undefined (" + c.Undefined.Error() + ")"
	}
	return r.FormatValue(c.Fairness)
}

// offsetSearch holds the validation nodes and the current offsets.
type offsetSearch struct {
	cfg     ClassOffsetsConfig
	classes int
	// Per validation node (known label): its log-probabilities (row k at
	// k·classes), label and group; groups[g] lists group g's nodes.
	logp   []float64
	prob   []float64
	lab    []int
	sub    []int
	groups [][]int
	off    [][]float64
	pred   []int
	ref    selection.Candidate
	// rule is the rule the search judges by: cfg.Rule, or a Fairest step
	// towards a MostAccurate bound.
	rule selection.Rule
}

// state is one set of decisions judged.
type state struct {
	cand selection.Candidate
	sum  float64 // the sum over classes of the one-vs-rest criterion
}

func newOffsetSearch(probs []float64, classes int, labels, sens, val []int, cfg ClassOffsetsConfig) (*offsetSearch, error) {
	if classes < 2 {
		return nil, fmt.Errorf("%w: classes = %d, want ≥ 2", metrics.ErrValue, classes)
	}
	n := len(labels)
	if len(probs) != n*classes {
		return nil, fmt.Errorf("%w: len(probs) = %d, want len(labels) × classes = %d × %d = %d", metrics.ErrLength, len(probs), n, classes, n*classes)
	}
	if len(sens) != n {
		return nil, fmt.Errorf("%w: %d labels and %d groups, want one each per node", metrics.ErrLength, n, len(sens))
	}
	if len(val) == 0 {
		return nil, fmt.Errorf("%w: no validation nodes to fit on", metrics.ErrEmpty)
	}
	groups := 0
	for i, g := range sens {
		if g < -1 {
			return nil, fmt.Errorf("%w: sens[%d] = %d, want a group id ≥ 0 or −1 (unknown)", metrics.ErrValue, i, g)
		}
		groups = max(groups, g+1)
	}
	if groups < 2 {
		return nil, fmt.Errorf("%w: %d sensitive group(s), want ≥ 2", metrics.ErrEmptyGroup, groups)
	}
	s := &offsetSearch{cfg: cfg, classes: classes, groups: make([][]int, groups), off: make([][]float64, groups)}
	for g := range s.off {
		s.off[g] = make([]float64, classes)
	}
	for k, i := range val {
		if i < 0 || i >= n {
			return nil, fmt.Errorf("%w: val[%d] = %d, want a node in 0..%d", metrics.ErrValue, k, i, n-1)
		}
		row := probs[i*classes : (i+1)*classes]
		for j, p := range row {
			if !(p >= 0 && p <= 1) {
				return nil, fmt.Errorf("%w: probs[%d] = %v (node %d, class %d), want a probability in [0, 1]", metrics.ErrValue, i*classes+j, p, i, j)
			}
		}
		y := labels[i]
		if y < -1 || y >= classes {
			return nil, fmt.Errorf("%w: labels[%d] = %d, want a class in 0..%d or −1 (unknown)", metrics.ErrValue, i, y, classes-1)
		}
		if y == -1 {
			continue
		}
		v := len(s.lab)
		for _, p := range row {
			s.logp = append(s.logp, math.Log(p))
		}
		s.prob = append(s.prob, row...)
		s.lab = append(s.lab, y)
		s.sub = append(s.sub, sens[i])
		s.pred = append(s.pred, argmaxOffset(row, nil, -1))
		if g := sens[i]; g >= 0 {
			s.groups[g] = append(s.groups[g], v)
		}
	}
	for g, nodes := range s.groups {
		if len(nodes) == 0 {
			return nil, fmt.Errorf("%w: group %d has no validation node of known label (the groups are 0..%d, from the largest id in sens)", metrics.ErrEmptyGroup, g, groups-1)
		}
	}
	// A true-positive rate needs, in every group, a node of every class;
	// a false-positive rate a node of another class: whatever the offsets.
	c := cfg.Rule.Criterion
	for _, r := range c.Rates() {
		if r != metrics.TruePositiveRate && r != metrics.FalsePositiveRate {
			continue
		}
		for g, nodes := range s.groups {
			count := make([]int, classes)
			for _, v := range nodes {
				count[s.lab[v]]++
			}
			for k, m := range count {
				if r == metrics.TruePositiveRate && m == 0 {
					return nil, fmt.Errorf("%w: group %d has no validation node of class %d, so its true-positive rate of class %d (and %s) is undefined whatever the offsets; choose a criterion of selection rates (ΔDP) or add such nodes to the validation split", metrics.ErrNoPositives, g, k, k, c.Title())
				}
				if r == metrics.FalsePositiveRate && m == len(nodes) {
					return nil, fmt.Errorf("%w: every validation node of group %d is of class %d, so its false-positive rate of class %d (and %s) is undefined whatever the offsets", metrics.ErrNoNegatives, g, k, k, c.Title())
				}
			}
		}
	}
	return s, nil
}

// evaluate judges the decisions pred of the validation nodes.
func (s *offsetSearch) evaluate(pred []int) (state, error) {
	b, err := metrics.ByGroupClasses(pred, s.lab, s.sub, s.classes)
	if err != nil {
		return state{}, err
	}
	correct := 0
	for v, p := range pred {
		if p == s.lab[v] {
			correct++
		}
	}
	st := state{cand: selection.Candidate{Accuracy: float64(correct) / float64(len(pred))}}
	crit := s.cfg.Rule.Criterion
	st.cand.Fairness, _, st.cand.Undefined = b.Criterion(crit)
	if st.cand.Undefined == nil {
		per, err := b.PerClass(crit)
		if err != nil {
			return state{}, err
		}
		for _, v := range per {
			st.sum += v
		}
	}
	return st, nil
}

// tie is the tolerance under which two accuracies or criterion values
// are equal: real differences are at least 1/n².
const tie = 1e-12

// better reports whether a is strictly better than b (see FitClassOffsets).
func (s *offsetSearch) better(a, b state) bool {
	r := s.rule
	aa, ba := r.Admits(a.cand, s.ref), r.Admits(b.cand, s.ref)
	if aa != ba {
		return aa
	}
	ad, bd := a.cand.Undefined == nil, b.cand.Undefined == nil
	if ad != bd {
		return ad
	}
	if !ad {
		return a.cand.Accuracy > b.cand.Accuracy+tie
	}
	crit := r.Criterion
	fairer := func() (bool, bool) { // a fairer, equally fair
		if math.Abs(a.cand.Fairness-b.cand.Fairness) > tie {
			return crit.Better(a.cand.Fairness, b.cand.Fairness), false
		}
		if math.Abs(a.sum-b.sum) > tie {
			return crit.Better(a.sum, b.sum), false
		}
		return false, true
	}
	if r.Goal == selection.MostAccurate && aa {
		if math.Abs(a.cand.Accuracy-b.cand.Accuracy) > tie {
			return a.cand.Accuracy > b.cand.Accuracy
		}
		f, _ := fairer()
		return f
	}
	if f, eq := fairer(); !eq {
		return f
	}
	return a.cand.Accuracy > b.cand.Accuracy+tie
}

// move tries the offsets of group g's class k and applies the best if it
// is better than cur.
func (s *offsetSearch) move(g, k int, cur state) (state, bool) {
	c := s.classes
	nodes := s.groups[g]
	off := s.off[g]
	// Node v takes class k when off[k] > t_v, else its best other class.
	type brk struct {
		t   float64
		v   int
		alt int
	}
	brks := make([]brk, 0, len(nodes))
	var breaks []float64
	for _, v := range nodes {
		row := s.prob[v*c : (v+1)*c]
		alt := argmaxOffset(row, off, k)
		t := s.logp[v*c+alt] + off[alt] - s.logp[v*c+k]
		brks = append(brks, brk{t, v, alt})
		if !math.IsInf(t, 0) && !math.IsNaN(t) {
			breaks = append(breaks, t)
		}
	}
	if len(breaks) == 0 {
		return cur, false
	}
	slices.Sort(breaks)
	breaks = slices.Compact(breaks)
	cands := make([]float64, 0, len(breaks)+1)
	cands = append(cands, breaks[0]-1)
	for j := 1; j < len(breaks); j++ {
		cands = append(cands, breaks[j-1]+(breaks[j]-breaks[j-1])/2)
	}
	cands = append(cands, breaks[len(breaks)-1]+1)
	if m := s.cfg.Candidates; len(cands) > m {
		thin := make([]float64, m)
		for j := range m {
			thin[j] = cands[j*(len(cands)-1)/(m-1)]
		}
		cands = thin
	}
	sort.Slice(brks, func(a, b int) bool { return brks[a].t < brks[b].t })
	pred := slices.Clone(s.pred)
	for _, b := range brks {
		pred[b.v] = b.alt
	}
	best, bestOff, found := cur, 0.0, false
	next := 0
	for _, x := range cands {
		for next < len(brks) && brks[next].t < x {
			pred[brks[next].v] = k
			next++
		}
		st, err := s.evaluate(pred)
		if err != nil {
			continue
		}
		if s.better(st, best) {
			best, bestOff, found = st, x, true
		}
	}
	if !found {
		return cur, false
	}
	// Apply, and judge the decisions Decide gives (they can differ from
	// the sweep's at a break within rounding): keep them only if better.
	old := off[k]
	off[k] = bestOff
	pred = slices.Clone(s.pred)
	for _, v := range nodes {
		pred[v] = argmaxOffset(s.prob[v*c:(v+1)*c], off, -1)
	}
	st, err := s.evaluate(pred)
	if err != nil || !s.better(st, cur) {
		off[k] = old
		return cur, false
	}
	s.pred = pred
	return st, true
}

// diagnose says why the fitted offsets are not at parity, when they are
// not.
func (s *offsetSearch) diagnose(o *ClassOffsets, cur state) []diagnose.Diagnostic {
	crit := s.cfg.Rule.Criterion
	parity := 0.0
	if crit.IsRatio() {
		parity = 1
	}
	if cur.cand.Undefined == nil && math.Abs(cur.cand.Fairness-parity) <= tie {
		return nil
	}
	var why []string
	c := s.classes
	usesSel := slices.Contains(crit.Rates(), metrics.SelectionRate)
	// A class whose probability is 0 for every node of a group: no
	// finite offset selects it there.
	for g, nodes := range s.groups {
		for k := range c {
			never := true
			for _, v := range nodes {
				if s.prob[v*c+k] > 0 {
					never = false
					break
				}
			}
			if never {
				why = append(why, fmt.Sprintf("class %d has probability 0 for every validation node of group %d, so no offset selects it there (its rate in group %d stays 0)", k, g, g))
			}
		}
	}
	// Group sizes: a selection rate of group g is a multiple of 1/n_g, so
	// a common rate of every group is a multiple of 1/gcd of the sizes.
	if usesSel {
		d := 0
		for _, nodes := range s.groups {
			d = gcd(d, len(nodes))
		}
		if d < c {
			sizes := make([]string, len(s.groups))
			for g, nodes := range s.groups {
				sizes[g] = fmt.Sprint(len(nodes))
			}
			why = append(why, fmt.Sprintf("the groups have %s validation nodes: a rate common to every group is a multiple of 1/%d, so exact parity over %d classes leaves some class unselected", strings.Join(sizes, ", "), d, c))
		}
	}
	if r := s.cfg.Rule; r.Goal == selection.Fairest && cur.cand.Accuracy < s.ref.Accuracy-r.MaxAccuracyLoss+1/float64(len(s.lab)) {
		why = append(why, fmt.Sprintf("the accuracy bound binds: %.2f%% against the argmax's %.2f%% and a loss of at most %.4g points", 100*cur.cand.Accuracy, 100*s.ref.Accuracy, 100*r.MaxAccuracyLoss))
	}
	if !o.Converged {
		why = append(why, fmt.Sprintf("the search stopped after %d sweeps (ClassOffsetsConfig.Sweeps) while still improving", o.Sweeps))
	}
	if len(why) == 0 {
		why = append(why, "the coordinate search found no single group-and-class move that improves it (a local optimum, or the discreteness of the validation nodes)")
	}
	return []diagnose.Diagnostic{{
		Code:    ParityNotReached,
		Subject: "class-offsets",
		Message: fmt.Sprintf("%s is %s on the validation nodes, not parity: %s", crit.Title(), fmtCand(s.cfg.Rule, cur.cand), strings.Join(why, "; ")),
		Advice:  "loosen the rule's accuracy loss, add validation nodes, or compare with FMP (fmp.NewFrontier), which moves the probabilities rather than the decisions",
	}}
}

func gcd(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}
