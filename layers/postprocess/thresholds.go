package postprocess

import (
	"fmt"
	"math"
	"sort"

	"github.com/fairmp/fairmp/metrics"
)

// ThresholdsConfig configures FitThresholds.
type ThresholdsConfig struct {
	// Rule chooses the pair of thresholds from the validation accuracy
	// and ΔDP. Default metrics.DefaultRule().
	Rule metrics.Rule
	// Candidates bounds the thresholds tried per group (> 1): the
	// group's distinct validation probabilities when there are at most
	// that many, evenly spaced quantiles of them otherwise, plus the
	// plain 0.5 and the two extremes (everyone, no one). Default 200.
	Candidates int
}

// DefaultThresholdsConfig returns metrics.DefaultRule() and 200
// candidates per group.
func DefaultThresholdsConfig() ThresholdsConfig {
	return ThresholdsConfig{Rule: metrics.DefaultRule(), Candidates: 200}
}

// Validate checks the fields.
func (c ThresholdsConfig) Validate() error {
	if err := c.Rule.Validate(); err != nil {
		return fmt.Errorf("postprocess: ThresholdsConfig.Rule: %w", err)
	}
	if c.Candidates < 2 {
		return fmt.Errorf("postprocess: ThresholdsConfig.Candidates = %d, want ≥ 2", c.Candidates)
	}
	return nil
}

// Thresholds is a post-processing of any binary classifier's
// probabilities: one decision threshold per sensitive group, ŷ = 1 when
// P(y=1) > T[group] (strictly, as metrics.Evaluate's 0.5). It is the
// deterministic form of fairlearn's ThresholdOptimizer under demographic
// parity (which also randomises between two thresholds to hit a
// constraint exactly), chosen on validation data by the same rules as
// FMP's frontier, and the baseline FMP should be compared against.
type Thresholds struct {
	// T holds the thresholds of groups 0 and 1. Nodes with an unknown
	// group (−1) are decided with 0.5.
	T [2]float64
	// Val is the chosen pair's validation accuracy and ΔDP; Reference
	// the plain 0.5 thresholds'.
	Val, Reference metrics.Candidate
	// Tried is the number of pairs evaluated.
	Tried int
}

// FitThresholds chooses per-group thresholds on the validation nodes val
// from p1 (P(y=1) per node), the labels (0/1; −1 unknown) and the
// sensitive groups (0/1; −1 unknown). The reference is the plain
// threshold 0.5 for both groups. It returns an error for an invalid cfg,
// slices of different lengths, a probability outside [0, 1], a node of
// val out of range, a group id above 1, a group without validation nodes
// with a known label, or no pair meeting the rule.
func FitThresholds(p1 []float64, labels, sens, val []int, cfg ThresholdsConfig) (*Thresholds, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if len(labels) != len(p1) || len(sens) != len(p1) {
		return nil, fmt.Errorf("postprocess: FitThresholds: %d probabilities, %d labels, %d groups, want one each per node", len(p1), len(labels), len(sens))
	}
	// Per group, the validation nodes' probabilities, sorted, with the
	// labels in the same order.
	var ps [2][]float64
	var ys [2][]int
	other := 0 // correct decisions of nodes without a group (threshold 0.5)
	otherN := 0
	for k, i := range val {
		if i < 0 || i >= len(p1) {
			return nil, fmt.Errorf("postprocess: FitThresholds: val[%d] = %d, want a node in [0, %d)", k, i, len(p1))
		}
		if p := p1[i]; !(p >= 0 && p <= 1) {
			return nil, fmt.Errorf("postprocess: FitThresholds: P(y=1) of node %d is %v, want a probability", i, p)
		}
		y, g := labels[i], sens[i]
		if y < 0 {
			continue
		}
		if y > 1 || g > 1 || g < -1 {
			return nil, fmt.Errorf("postprocess: FitThresholds: node %d has label %d and group %d, want a binary label and groups 0, 1 (or −1)", i, y, g)
		}
		if g < 0 {
			otherN++
			if (p1[i] > 0.5) == (y == 1) {
				other++
			}
			continue
		}
		ps[g] = append(ps[g], p1[i])
		ys[g] = append(ys[g], y)
	}
	var gs [2]*groupCounts
	for g := range gs {
		if len(ps[g]) == 0 {
			return nil, fmt.Errorf("postprocess: FitThresholds: group %d has no validation node with a known label", g)
		}
		gs[g] = newGroupCounts(ps[g], ys[g])
	}
	total := float64(len(ps[0]) + len(ps[1]) + otherN)
	at := func(t0, t1 float64) metrics.Candidate {
		s0, c0 := gs[0].at(t0)
		s1, c1 := gs[1].at(t1)
		return metrics.Candidate{
			Accuracy:          float64(c0+c1+other) / total,
			DemographicParity: math.Abs(float64(s0)/float64(len(ps[0])) - float64(s1)/float64(len(ps[1]))),
		}
	}
	c0, c1 := gs[0].candidates(cfg.Candidates), gs[1].candidates(cfg.Candidates)
	cands := make([]metrics.Candidate, 0, len(c0)*len(c1))
	for _, t0 := range c0 {
		for _, t1 := range c1 {
			cands = append(cands, at(t0, t1))
		}
	}
	ref := at(0.5, 0.5)
	k, err := metrics.Choose(cands, ref, cfg.Rule)
	if err != nil {
		return nil, fmt.Errorf("postprocess: FitThresholds: %w", err)
	}
	return &Thresholds{T: [2]float64{c0[k/len(c1)], c1[k%len(c1)]}, Val: cands[k], Reference: ref, Tried: len(cands)}, nil
}

// groupCounts answers, for a threshold t, how many of a group's nodes
// are selected (p > t) and how many are decided correctly, in O(log n).
type groupCounts struct {
	p       []float64 // sorted ascending
	posFrom []int     // posFrom[k] = positives among p[k:]
}

func newGroupCounts(p []float64, y []int) *groupCounts {
	idx := make([]int, len(p))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return p[idx[a]] < p[idx[b]] })
	g := &groupCounts{p: make([]float64, len(p)), posFrom: make([]int, len(p)+1)}
	for k, i := range idx {
		g.p[k] = p[i]
	}
	for k := len(idx) - 1; k >= 0; k-- {
		g.posFrom[k] = g.posFrom[k+1] + y[idx[k]]
	}
	return g
}

// at returns the selected and correctly decided counts at threshold t.
func (g *groupCounts) at(t float64) (selected, correct int) {
	k := sort.Search(len(g.p), func(i int) bool { return g.p[i] > t }) // first selected
	selected = len(g.p) - k
	tp := g.posFrom[k]
	negBelow := k - (g.posFrom[0] - tp)
	return selected, tp + negBelow
}

// candidates returns the thresholds to try: −1 (everyone), 0.5, 1 (no
// one), and the group's distinct probabilities, or m evenly spaced
// quantiles of them.
func (g *groupCounts) candidates(m int) []float64 {
	set := map[float64]bool{-1: true, 0.5: true, 1: true}
	if len(g.p) <= m {
		for _, v := range g.p {
			set[v] = true
		}
	} else {
		for q := 0; q < m; q++ {
			set[g.p[q*(len(g.p)-1)/(m-1)]] = true
		}
	}
	out := make([]float64, 0, len(set))
	for v := range set {
		out = append(out, v)
	}
	sort.Float64s(out)
	return out
}

// Decide returns the decisions ŷ (0 or 1) for every node: p1[i] >
// T[sens[i]], or p1[i] > 0.5 for a node of unknown group.
func (t *Thresholds) Decide(p1 []float64, sens []int) []int {
	out := make([]int, len(p1))
	for i, p := range p1 {
		th := 0.5
		if g := sens[i]; g == 0 || g == 1 {
			th = t.T[g]
		}
		if p > th {
			out[i] = 1
		}
	}
	return out
}

// Probs returns the decisions as n × 2 one-hot rows (1 − ŷ, ŷ), the form
// metrics.Evaluate takes: evaluating them with its 0.5 threshold
// evaluates the thresholded decisions (AUC then measures the decisions,
// not a ranking).
func (t *Thresholds) Probs(p1 []float64, sens []int) []float64 {
	d := t.Decide(p1, sens)
	out := make([]float64, 2*len(d))
	for i, y := range d {
		out[2*i+y] = 1
	}
	return out
}
