// Package selection chooses one of several candidates (FMP's settings on
// a frontier, per-group thresholds, class offsets) by their validation
// accuracy and a fairness criterion of package metrics: a [Rule] says how,
// [Choose] applies it. (Choosing a training epoch is layers/train's
// Config.Select, a different thing.)
//
// Every function returns an error wrapping metrics.ErrValue for an
// invalid rule or value, metrics.ErrEmpty for no candidate, and
// [ErrNoCandidate] when none meets the rule; none panics.
package selection

import (
	"errors"
	"fmt"
	"math"

	"github.com/fairmp/fairmp/metrics"
)

// ErrNoCandidate is returned by Choose when no candidate meets the rule.
var ErrNoCandidate = errors.New("selection: no candidate meets the rule")

// boundSlack absorbs the rounding of accuracies computed from counts, as
// metrics' bounds do (metrics.Criterion.Meets).
const boundSlack = 1e-12

// Goal says what a [Rule] optimises.
type Goal int

const (
	// Fairest chooses the fairest value of the rule's criterion among the
	// candidates whose accuracy is at least the reference's minus
	// Rule.MaxAccuracyLoss (ties: the higher accuracy, then the first).
	Fairest Goal = iota
	// MostAccurate chooses the highest accuracy among the candidates
	// whose criterion meets Rule.Bound (ties: the fairer value, then the
	// first).
	MostAccurate
)

// String names the goal ("fairest", "most-accurate").
func (g Goal) String() string {
	switch g {
	case Fairest:
		return "fairest"
	case MostAccurate:
		return "most-accurate"
	}
	return fmt.Sprintf("Goal(%d)", int(g))
}

// Rule says how to choose one of several candidates (FMP settings on a
// frontier, per-group thresholds) from their validation accuracy and a
// fairness [metrics.Criterion]:
//
//   - Goal Fairest: the fairest criterion value within MaxAccuracyLoss of
//     the reference's accuracy (the model without debiasing), for example
//     the lowest ΔEO within one accuracy point;
//   - Goal MostAccurate: the highest accuracy whose criterion meets Bound,
//     for example DP ratio ≥ 0.8 (the four-fifths rule) or ΔDP ≤ 0.05.
//
// The zero value is not valid; start from [DefaultRule], [FairestWithin]
// or [MostAccurateWithin]. "Accuracy" is whatever the chooser maximises:
// the accuracy for FMP's frontier, the objective (accuracy or balanced
// accuracy) for the per-group thresholds.
type Rule struct {
	// Goal is Fairest (the zero value) or MostAccurate.
	Goal Goal `json:"goal"`
	// Criterion is the fairness criterion judged (the zero value is ΔDP,
	// DPDifference).
	Criterion metrics.Criterion `json:"criterion"`
	// MaxAccuracyLoss, for Goal Fairest, is the accuracy the choice may
	// lose against the reference, a fraction in (0, 0.5): 0.01 is one
	// accuracy point, as every rate of this package is a fraction (the
	// commands' -max-acc-loss is in points and divides by 100). A value of
	// 0.5 or more is refused, not read as fifty points or more: it is
	// what a loss in points looks like (FairestWithin(c, 1) meaning one
	// point), and a loss of half the accuracy admits every candidate.
	// Must be 0 for MostAccurate.
	MaxAccuracyLoss float64 `json:"max_accuracy_loss,omitempty"`
	// Bound, for Goal MostAccurate, is the limit the criterion must meet:
	// the largest allowed difference, in [0, 1] (0: exact parity), or the
	// smallest allowed ratio, in (0, 1] (1: exact parity). For the
	// per-group thresholds it is the tolerance of fairlearn's
	// ThresholdOptimizer (tol). Must be 0 for Fairest.
	Bound float64 `json:"bound,omitempty"`
}

// maxAccuracyLoss bounds Rule.MaxAccuracyLoss above (excluded).
const maxAccuracyLoss = 0.5

// DefaultRule returns the rule the examples use: the lowest validation
// ΔDP within one point of accuracy of the reference (the model without
// debiasing).
func DefaultRule() Rule { return FairestWithin(metrics.DPDifference, 0.01) }

// FairestWithin returns the rule choosing the fairest value of c within
// maxAccuracyLoss of the reference's accuracy: a fraction, 0.01 for one
// accuracy point. Validate refuses 0.5 and more, with the fraction meant
// if the value was in points (FairestWithin(c, 1): "did you mean 0.01
// (1 point)?").
func FairestWithin(c metrics.Criterion, maxAccuracyLoss float64) Rule {
	return Rule{Goal: Fairest, Criterion: c, MaxAccuracyLoss: maxAccuracyLoss}
}

// MostAccurateWithin returns the rule choosing the highest accuracy whose
// value of c meets bound (at most bound for a difference, at least bound
// for a ratio).
func MostAccurateWithin(c metrics.Criterion, bound float64) Rule {
	return Rule{Goal: MostAccurate, Criterion: c, Bound: bound}
}

// Validate reports (wrapping ErrValue) an unknown goal or criterion, a
// MaxAccuracyLoss outside (0, 0.5) for Fairest (one of 0.5 or more with
// the fraction it would be as points: "did you mean 0.01 (1 point)?"), a Bound outside [0, 1]
// (difference) or (0, 1] (ratio) for MostAccurate, or the other goal's
// field set.
func (r Rule) Validate() error {
	if err := r.Criterion.Validate(); err != nil {
		return fmt.Errorf("Rule.Criterion: %w", err)
	}
	switch r.Goal {
	case Fairest:
		if l := r.MaxAccuracyLoss; l >= maxAccuracyLoss && l <= 100 {
			unit := "points"
			if l == 1 {
				unit = "point"
			}
			return fmt.Errorf("%w: Rule.MaxAccuracyLoss = %v is a fraction of accuracy (%.4g accuracy points): did you mean %.4g (%v %s)? want a fraction in (0, %v)", metrics.ErrValue, l, 100*l, l/100, l, unit, maxAccuracyLoss)
		}
		if !(r.MaxAccuracyLoss > 0 && r.MaxAccuracyLoss < maxAccuracyLoss) {
			return fmt.Errorf("%w: Rule.MaxAccuracyLoss = %v, want a fraction in (0, %v) for the goal %s (0.01 is one accuracy point)", metrics.ErrValue, r.MaxAccuracyLoss, maxAccuracyLoss, r.Goal)
		}
		if r.Bound != 0 {
			return fmt.Errorf("%w: Rule.Bound = %v is for the goal %s; the goal is %s", metrics.ErrValue, r.Bound, MostAccurate, r.Goal)
		}
	case MostAccurate:
		if r.Criterion.IsRatio() && !(r.Bound > 0 && r.Bound <= 1) {
			return fmt.Errorf("%w: Rule.Bound = %v, want the smallest allowed %s in (0, 1]", metrics.ErrValue, r.Bound, r.Criterion.Title())
		}
		if !r.Criterion.IsRatio() && !(r.Bound >= 0 && r.Bound <= 1) {
			return fmt.Errorf("%w: Rule.Bound = %v, want the largest allowed %s, a fraction in [0, 1]", metrics.ErrValue, r.Bound, r.Criterion.Title())
		}
		if r.MaxAccuracyLoss != 0 {
			return fmt.Errorf("%w: Rule.MaxAccuracyLoss = %v is for the goal %s; the goal is %s", metrics.ErrValue, r.MaxAccuracyLoss, Fairest, r.Goal)
		}
	default:
		return fmt.Errorf("%w: Rule.Goal = %v, want %s or %s", metrics.ErrValue, r.Goal, Fairest, MostAccurate)
	}
	return nil
}

// FormatValue formats a value of the rule's criterion: a difference in
// percent ("5%"), a ratio as a number ("0.8").
func (r Rule) FormatValue(v float64) string {
	if r.Criterion.IsRatio() {
		return fmt.Sprintf("%.4g", v)
	}
	return fmt.Sprintf("%.4g%%", 100*v)
}

// String describes the rule in words.
func (r Rule) String() string {
	t := r.Criterion.Title()
	if r.Goal == MostAccurate {
		op := "≤"
		if r.Criterion.IsRatio() {
			op = "≥"
		}
		return fmt.Sprintf("highest validation accuracy with %s %s %s", t, op, r.FormatValue(r.Bound))
	}
	best := "lowest"
	if r.Criterion.IsRatio() {
		best = "highest"
	}
	pts := 100 * r.MaxAccuracyLoss
	unit := "accuracy points"
	if pts == 1 {
		unit = "accuracy point"
	}
	return fmt.Sprintf("%s validation %s within %.4g %s of the reference", best, t, pts, unit)
}

// Candidate is what Choose compares: a candidate's validation accuracy
// and its value of the rule's criterion. Build it from a Report with
// [Rule.Candidate].
type Candidate struct {
	// Accuracy is the candidate's accuracy (or the objective the chooser
	// maximises), a fraction.
	Accuracy float64 `json:"accuracy"`
	// Fairness is the value of the rule's criterion; meaningless when
	// Undefined is set.
	Fairness float64 `json:"fairness"`
	// Undefined, if not nil, says why the criterion has no value for this
	// candidate (a ratio of zero rates, a group without positives): such
	// a candidate is never chosen.
	Undefined error `json:"-"`
}

// Candidate returns rep's accuracy and its value of the rule's criterion
// (Undefined set when it has none).
func (r Rule) Candidate(rep metrics.Report) Candidate {
	v, err := r.Criterion.Of(rep)
	return Candidate{Accuracy: rep.Accuracy, Fairness: v, Undefined: err}
}

// ClassCandidate returns rep's accuracy and its value of the rule's
// criterion for c classes ([metrics.ClassReport.Of]: the worst class's
// one-vs-rest value), Undefined set when it has none. It is how a
// chooser over c-class candidates (fmp's frontier, the class offsets of
// layers/postprocess) judges them with the rule.
func (r Rule) ClassCandidate(rep metrics.ClassReport) Candidate {
	v, err := rep.Of(r.Criterion)
	return Candidate{Accuracy: rep.Accuracy, Fairness: v, Undefined: err}
}

// Admits reports whether c is eligible under the rule: its criterion is
// defined, and for MostAccurate it meets Bound; for Fairest its accuracy
// is at least ref's minus MaxAccuracyLoss (up to 1e-12).
func (r Rule) Admits(c, ref Candidate) bool {
	if c.Undefined != nil {
		return false
	}
	if r.Goal == MostAccurate {
		return r.Criterion.Meets(c.Fairness, r.Bound)
	}
	return c.Accuracy >= ref.Accuracy-r.MaxAccuracyLoss-boundSlack
}

// Prefers reports whether a is strictly better than b under the rule
// among eligible candidates: for Fairest the fairer criterion, then the
// higher accuracy; for MostAccurate the higher accuracy, then the fairer
// criterion.
func (r Rule) Prefers(a, b Candidate) bool {
	c := r.Criterion
	if r.Goal == MostAccurate {
		return a.Accuracy > b.Accuracy || (a.Accuracy == b.Accuracy && c.Better(a.Fairness, b.Fairness))
	}
	return c.Better(a.Fairness, b.Fairness) || (a.Fairness == b.Fairness && a.Accuracy > b.Accuracy)
}

// Choose returns the index of the candidate the rule selects: among the
// candidates it admits ([Rule.Admits]), the first that no other is
// preferred to ([Rule.Prefers]). ref is the reference of a Fairest rule
// (the model without debiasing). It returns an error wrapping ErrValue
// for an invalid rule or a non-finite value, ErrEmpty for no candidate,
// and ErrNoCandidate when none meets the rule.
func Choose(cands []Candidate, ref Candidate, r Rule) (int, error) {
	if err := r.Validate(); err != nil {
		return -1, err
	}
	if len(cands) == 0 {
		return -1, fmt.Errorf("%w: no candidates", metrics.ErrEmpty)
	}
	finite := func(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
	if r.Goal == Fairest && !finite(ref.Accuracy) {
		return -1, fmt.Errorf("%w: the reference has accuracy %v", metrics.ErrValue, ref.Accuracy)
	}
	best, undefined := -1, 0
	for i, c := range cands {
		if !finite(c.Accuracy) || (c.Undefined == nil && !finite(c.Fairness)) {
			return -1, fmt.Errorf("%w: candidate %d has accuracy %v, %s %v", metrics.ErrValue, i, c.Accuracy, r.Criterion.Title(), c.Fairness)
		}
		if c.Undefined != nil {
			undefined++
		}
		if r.Admits(c, ref) && (best < 0 || r.Prefers(c, cands[best])) {
			best = i
		}
	}
	if best < 0 {
		note := ""
		if undefined > 0 {
			note = fmt.Sprintf(" (%s undefined for %d of them)", r.Criterion.Title(), undefined)
		}
		return -1, fmt.Errorf("%w: %s: none of %d candidates%s", ErrNoCandidate, r, len(cands), note)
	}
	return best, nil
}

// MarshalText encodes the goal as its String.
func (g Goal) MarshalText() ([]byte, error) {
	if g != Fairest && g != MostAccurate {
		return nil, fmt.Errorf("%w: Goal(%d)", metrics.ErrValue, int(g))
	}
	return []byte(g.String()), nil
}

// UnmarshalText decodes "fairest" or "most-accurate".
func (g *Goal) UnmarshalText(b []byte) error {
	for _, v := range []Goal{Fairest, MostAccurate} {
		if string(b) == v.String() {
			*g = v
			return nil
		}
	}
	return fmt.Errorf("%w: goal %q, want %s or %s", metrics.ErrValue, b, Fairest, MostAccurate)
}
