package metrics

import (
	"fmt"
	"strings"
)

// Criterion is a group-fairness criterion of binary decisions: a
// disparity between the sensitive groups of one or two rates, as a
// difference (0 is parity, lower is fairer) or a ratio (1 is parity,
// higher is fairer). Each is defined as fairlearn's function of the same
// name (see [Criterion.Fairlearn]) with its default method
// "between_groups".
//
// Every criterion is declared once, in this file's table: its name on
// command lines and in files ([Criterion.Name]), its title in tables
// ([Criterion.Title]), the rates it compares ([Criterion.Rates]) and
// whether it is a ratio. Everything that lists, parses, computes, prints
// or compares criteria goes through that declaration: [Criteria],
// [ParseCriterion], [Criterion.Of], [Criterion.Better], [Criterion.Meets],
// the selection rules (package metrics/selection), the bootstrap intervals ([Intervals]),
// FMP's frontier and the per-group thresholds.
//
// The zero value is [DPDifference].
type Criterion int

// The criteria. With r_g the rate of group g:
//
//	difference = max_g r_g − min_g r_g        (0: parity)
//	ratio      = min_g r_g / max_g r_g        (1: parity)
//
// and for equalized odds the worse of the true- and false-positive rates'
// (the larger difference, the smaller ratio: fairlearn's agg
// "worst_case").
const (
	// DPDifference is ΔDP, the selection rates' difference:
	// demographic_parity_difference.
	DPDifference Criterion = iota
	// DPRatio is the selection rates' ratio, the disparate impact of the
	// four-fifths rule: demographic_parity_ratio.
	DPRatio
	// EODifference is ΔEO, the true-positive rates' difference:
	// equal_opportunity_difference.
	EODifference
	// EORatio is the true-positive rates' ratio: equal_opportunity_ratio.
	EORatio
	// EOddsDifference is the larger of the true- and false-positive
	// rates' differences: equalized_odds_difference.
	EOddsDifference
	// EOddsRatio is the smaller of the true- and false-positive rates'
	// ratios: equalized_odds_ratio.
	EOddsRatio
	// FPRDifference is the false-positive rates' difference (false-positive
	// rate parity): false_positive_rate_difference.
	FPRDifference
	// FPRRatio is the false-positive rates' ratio:
	// false_positive_rate_ratio.
	FPRRatio
	numCriteria
)

// criterionDecl declares one criterion.
type criterionDecl struct {
	name, title, fairlearn string
	rates                  []Rate
	ratio                  bool
}

// criteria is the one declaration of every criterion.
var criteria = [numCriteria]criterionDecl{
	DPDifference:    {"dp", "ΔDP", "demographic_parity_difference", []Rate{SelectionRate}, false},
	DPRatio:         {"dp-ratio", "DP ratio", "demographic_parity_ratio", []Rate{SelectionRate}, true},
	EODifference:    {"eo", "ΔEO", "equal_opportunity_difference", []Rate{TruePositiveRate}, false},
	EORatio:         {"eo-ratio", "EO ratio", "equal_opportunity_ratio", []Rate{TruePositiveRate}, true},
	EOddsDifference: {"eodds", "ΔEOdds", "equalized_odds_difference", []Rate{TruePositiveRate, FalsePositiveRate}, false},
	EOddsRatio:      {"eodds-ratio", "EOdds ratio", "equalized_odds_ratio", []Rate{TruePositiveRate, FalsePositiveRate}, true},
	FPRDifference:   {"fpr", "ΔFPR", "false_positive_rate_difference", []Rate{FalsePositiveRate}, false},
	FPRRatio:        {"fpr-ratio", "FPR ratio", "false_positive_rate_ratio", []Rate{FalsePositiveRate}, true},
}

// Criteria returns every criterion, in declaration order.
func Criteria() []Criterion {
	out := make([]Criterion, numCriteria)
	for i := range out {
		out[i] = Criterion(i)
	}
	return out
}

// CriterionNames returns the criteria's names, in declaration order, for
// a command's usage line.
func CriterionNames() []string {
	out := make([]string, numCriteria)
	for i := range out {
		out[i] = criteria[i].name
	}
	return out
}

// ParseCriterion returns the criterion named name ([Criterion.Name],
// case-insensitive; fairlearn's function name is accepted too). It
// returns an error wrapping ErrValue listing the names for any other.
func ParseCriterion(name string) (Criterion, error) {
	n := strings.ToLower(strings.TrimSpace(name))
	for i, d := range criteria {
		if n == d.name || n == d.fairlearn {
			return Criterion(i), nil
		}
	}
	return 0, fmt.Errorf("%w: criterion %q, want one of %s", ErrValue, name, strings.Join(CriterionNames(), ", "))
}

func (c Criterion) valid() bool { return c >= 0 && c < numCriteria }

func (c Criterion) decl() criterionDecl {
	if !c.valid() {
		return criterionDecl{name: fmt.Sprintf("Criterion(%d)", int(c)), title: fmt.Sprintf("Criterion(%d)", int(c))}
	}
	return criteria[c]
}

// Validate reports (wrapping ErrValue) a value that is not a declared
// criterion.
func (c Criterion) Validate() error {
	if !c.valid() {
		return fmt.Errorf("%w: Criterion(%d), want one of %s", ErrValue, int(c), strings.Join(CriterionNames(), ", "))
	}
	return nil
}

// Name returns the criterion's name on command lines and in files ("dp",
// "dp-ratio", "eo", "eo-ratio", "eodds", "eodds-ratio", "fpr",
// "fpr-ratio").
func (c Criterion) Name() string { return c.decl().name }

// String returns Name.
func (c Criterion) String() string { return c.Name() }

// Title returns the criterion's name in tables and figures ("ΔDP", "DP
// ratio").
func (c Criterion) Title() string { return c.decl().title }

// Fairlearn returns the name of the fairlearn function the criterion
// matches ("demographic_parity_ratio").
func (c Criterion) Fairlearn() string { return c.decl().fairlearn }

// Rates returns the rates the criterion compares between groups. Do not
// modify.
func (c Criterion) Rates() []Rate { return c.decl().rates }

// IsRatio reports whether the criterion is a ratio (1 is parity, higher
// is fairer) rather than a difference (0 is parity, lower is fairer).
func (c Criterion) IsRatio() bool { return c.decl().ratio }

// Better reports whether the value a is strictly fairer than b: a < b for
// a difference, a > b for a ratio.
func (c Criterion) Better(a, b float64) bool {
	if c.IsRatio() {
		return a > b
	}
	return a < b
}

// boundSlack absorbs the rounding of rates computed from counts, so that
// a ratio of exactly 4/5 meets the bound 0.8.
const boundSlack = 1e-12

// Meets reports whether the value v meets the bound: v ≤ bound for a
// difference, v ≥ bound for a ratio (up to 1e-12, the rounding of rates
// computed from counts).
func (c Criterion) Meets(v, bound float64) bool {
	if c.IsRatio() {
		return v >= bound-boundSlack
	}
	return v <= bound+boundSlack
}

// RateFrames is what a criterion is computed from: the between-groups
// Frame of each rate. [*Breakdown] and [Report] are RateFrames; a
// post-processing of expected (randomised) decisions can be one too.
type RateFrames interface {
	Frame(r Rate) (*Frame, error)
}

// Of computes the criterion from the groups' rates: for each of its rates
// the Frame's Difference or Ratio (BetweenGroups), and for two rates the
// larger difference or the smaller ratio. It returns the error of the
// rate frames (ErrNoPositives, ErrNoNegatives: a group without the rate's
// denominator) or of Ratio (ErrZeroRate: every group's rate is 0).
func (c Criterion) Of(src RateFrames) (float64, error) {
	if err := c.Validate(); err != nil {
		return 0, err
	}
	d := criteria[c]
	var v float64
	for k, r := range d.rates {
		f, err := src.Frame(r)
		if err != nil {
			return 0, err
		}
		x := f.Difference(BetweenGroups)
		if d.ratio {
			if x, err = f.Ratio(BetweenGroups); err != nil {
				return 0, err
			}
		}
		if k == 0 || c.Better(v, x) {
			v = x
		}
	}
	return v, nil
}

// Measure computes the criterion from binary predictions, labels and
// sensitive groups, as fairlearn's function of the criterion's name
// (Fairlearn) with method "between_groups": for example
// DPRatio.Measure(pred, labels, sens) is
// demographic_parity_ratio(labels, pred, sensitive_features=sens).
//
// pred must hold 0 or 1, labels 0, 1 or −1, sens 0..G−1 or −1; nodes with
// an unknown label or group are excluded (for DPDifference and DPRatio
// too: pass labels of 0 to count every node with a known group). Where
// fairlearn returns NaN or counts an undefined rate as 0, Measure returns
// an error:
//
//   - an empty group 0..G−1, or fewer than two groups: ErrEmptyGroup
//     (fairlearn only sees the groups present);
//   - a group without positives for a true-positive rate, or without
//     negatives for a false-positive rate: ErrNoPositives or
//     ErrNoNegatives (fairlearn counts the rate as 0);
//   - a ratio whose rates are all 0: ErrZeroRate (fairlearn: NaN; for
//     equalized_odds_ratio, fairlearn's min over the two ratios then keeps
//     the other one).
//
// A zero rate in some but not all groups is not an error: a difference
// counts it, a ratio is then 0, as in fairlearn.
func (c Criterion) Measure(pred, labels, sens []int) (float64, error) {
	b, err := ByGroup(pred, labels, sens)
	if err != nil {
		return 0, err
	}
	return c.Of(b)
}

// MarshalText encodes the criterion as its Name (JSON values and map
// keys).
func (c Criterion) MarshalText() ([]byte, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	return []byte(c.Name()), nil
}

// UnmarshalText decodes a Name.
func (c *Criterion) UnmarshalText(b []byte) error {
	v, err := ParseCriterion(string(b))
	if err != nil {
		return err
	}
	*c = v
	return nil
}
