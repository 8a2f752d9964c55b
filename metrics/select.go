package metrics

import (
	"errors"
	"fmt"
	"math"
)

// ErrNoCandidate is returned by Choose when no candidate meets the rule.
var ErrNoCandidate = errors.New("metrics: no candidate meets the rule")

// Rule says how to choose one of several candidates (FMP settings,
// per-group thresholds) from their validation accuracy and ΔDP. Set
// exactly one of its fields.
type Rule struct {
	// MaxAccuracyLoss, if > 0 (a fraction: 0.01 is one point), chooses
	// the candidate with the lowest ΔDP among those whose accuracy is at
	// least the reference's minus MaxAccuracyLoss (ties: the higher
	// accuracy, then the first).
	MaxAccuracyLoss float64
	// MaxDP, if > 0 (a fraction), chooses the candidate with the highest
	// accuracy among those whose ΔDP is at most MaxDP (ties: the lower
	// ΔDP, then the first).
	MaxDP float64
}

// DefaultRule returns the rule the examples use: the lowest validation
// ΔDP within one point of accuracy of the reference (the model without
// debiasing).
func DefaultRule() Rule { return Rule{MaxAccuracyLoss: 0.01} }

// Validate reports (wrapping ErrValue) a rule with neither or both fields
// set, or a field outside (0, 1].
func (r Rule) Validate() error {
	set := 0
	for name, v := range map[string]float64{"MaxAccuracyLoss": r.MaxAccuracyLoss, "MaxDP": r.MaxDP} {
		if v == 0 {
			continue
		}
		set++
		if !(v > 0 && v <= 1) {
			return fmt.Errorf("%w: Rule.%s = %v, want a fraction in (0, 1]", ErrValue, name, v)
		}
	}
	if set != 1 {
		return fmt.Errorf("%w: Rule %+v: set exactly one of MaxAccuracyLoss and MaxDP", ErrValue, r)
	}
	return nil
}

// String describes the rule in words.
func (r Rule) String() string {
	if r.MaxDP > 0 {
		return fmt.Sprintf("highest validation accuracy with ΔDP ≤ %.4g%%", 100*r.MaxDP)
	}
	return fmt.Sprintf("lowest validation ΔDP within %.4g accuracy points of the reference", 100*r.MaxAccuracyLoss)
}

// Candidate is what Choose compares: a candidate's validation accuracy
// and ΔDP (fractions).
type Candidate struct {
	Accuracy, DemographicParity float64
}

// Choose returns the index of the candidate the rule selects; ref is the
// reference for MaxAccuracyLoss (the model without debiasing). It returns
// an error wrapping ErrValue for an invalid rule or a non-finite value,
// ErrEmpty for no candidate, and ErrNoCandidate when none meets the rule.
func Choose(cands []Candidate, ref Candidate, r Rule) (int, error) {
	if err := r.Validate(); err != nil {
		return -1, err
	}
	if len(cands) == 0 {
		return -1, fmt.Errorf("%w: no candidates", ErrEmpty)
	}
	for i, c := range append([]Candidate{ref}, cands...) {
		if math.IsNaN(c.Accuracy) || math.IsNaN(c.DemographicParity) || math.IsInf(c.Accuracy, 0) || math.IsInf(c.DemographicParity, 0) {
			return -1, fmt.Errorf("%w: candidate %d has accuracy %v, ΔDP %v", ErrValue, i-1, c.Accuracy, c.DemographicParity)
		}
	}
	best := -1
	for i, c := range cands {
		if r.MaxDP > 0 {
			if c.DemographicParity > r.MaxDP {
				continue
			}
			if best < 0 || c.Accuracy > cands[best].Accuracy || (c.Accuracy == cands[best].Accuracy && c.DemographicParity < cands[best].DemographicParity) {
				best = i
			}
			continue
		}
		if c.Accuracy < ref.Accuracy-r.MaxAccuracyLoss-1e-12 {
			continue
		}
		if best < 0 || c.DemographicParity < cands[best].DemographicParity || (c.DemographicParity == cands[best].DemographicParity && c.Accuracy > cands[best].Accuracy) {
			best = i
		}
	}
	if best < 0 {
		return -1, fmt.Errorf("%w: %s: none of %d candidates", ErrNoCandidate, r, len(cands))
	}
	return best, nil
}
