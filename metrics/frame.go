package metrics

import (
	"fmt"
	"math"
)

// Method says what [Frame.Difference] and [Frame.Ratio] compare: the
// groups with each other, or each group with the overall value. They are
// the two values of the method argument of fairlearn's
// MetricFrame.difference and MetricFrame.ratio.
type Method int

const (
	// BetweenGroups compares the largest and the smallest group value
	// (fairlearn's "between_groups", its default).
	BetweenGroups Method = iota
	// ToOverall compares each group's value with the overall value and
	// keeps the worst group (fairlearn's "to_overall").
	ToOverall
)

// String returns fairlearn's name of the method.
func (m Method) String() string {
	switch m {
	case BetweenGroups:
		return "between_groups"
	case ToOverall:
		return "to_overall"
	}
	return fmt.Sprintf("Method(%d)", int(m))
}

// Frame is one metric computed over all evaluated nodes and over each
// sensitive group: fairlearn's MetricFrame for a single metric
// (.overall, .by_group, .group_min(), .group_max(), .difference(),
// .ratio()). Build one with [NewFrame] for any metric of predictions and
// labels, or with [Breakdown.Frame] for the rates the fairness criteria
// compare.
type Frame struct {
	// Name names the metric (as given to NewFrame, or the rate's name).
	Name string `json:"name"`
	// Overall is the metric over every evaluated node.
	Overall float64 `json:"overall"`
	// ByGroup holds the metric of each group: ByGroup[g] for group g.
	ByGroup []float64 `json:"by_group"`
	// Counts holds the number of evaluated nodes of each group.
	Counts []int `json:"counts"`
}

// GroupMin returns the smallest group value and its group (the first on
// ties); NaN and −1 for a frame without groups.
func (f *Frame) GroupMin() (float64, int) {
	if len(f.ByGroup) == 0 {
		return math.NaN(), -1
	}
	k := 0
	for g, v := range f.ByGroup {
		if v < f.ByGroup[k] {
			k = g
		}
	}
	return f.ByGroup[k], k
}

// GroupMax returns the largest group value and its group (the first on
// ties); NaN and −1 for a frame without groups.
func (f *Frame) GroupMax() (float64, int) {
	if len(f.ByGroup) == 0 {
		return math.NaN(), -1
	}
	k := 0
	for g, v := range f.ByGroup {
		if v > f.ByGroup[k] {
			k = g
		}
	}
	return f.ByGroup[k], k
}

// Difference returns fairlearn's MetricFrame.difference(method): with
// BetweenGroups the largest minus the smallest group value; with
// ToOverall the largest |group value − overall value|. It is 0 when every
// group has the same value, and never negative.
func (f *Frame) Difference(m Method) float64 {
	if m == ToOverall {
		d := 0.0
		for _, v := range f.ByGroup {
			d = max(d, math.Abs(v-f.Overall))
		}
		return d
	}
	hi, _ := f.GroupMax()
	lo, _ := f.GroupMin()
	return hi - lo
}

// Ratio returns fairlearn's MetricFrame.ratio(method): with BetweenGroups
// the smallest group value over the largest; with ToOverall, for each
// group its value over the overall value, inverted when above 1, and the
// smallest of these. It is 1 when every group has the same value and lies
// in [0, 1].
//
// A zero denominator is an error wrapping [ErrZeroRate] where fairlearn
// returns NaN: BetweenGroups when every group's value is 0 (0/0),
// ToOverall when the overall value is 0. A group value of 0 under a
// positive denominator gives the ratio 0, as in fairlearn. Ratios are
// defined for metrics that are never negative (rates, accuracy, F1): a
// negative value is an error wrapping [ErrValue].
func (f *Frame) Ratio(m Method) (float64, error) {
	for g, v := range f.ByGroup {
		if v < 0 || math.IsNaN(v) {
			return 0, fmt.Errorf("%w: %s of group %d is %v; a ratio needs values ≥ 0", ErrValue, f.Name, g, v)
		}
	}
	if m == ToOverall {
		if f.Overall == 0 {
			return 0, fmt.Errorf("%w: the overall %s is 0, so every ratio to it is undefined", ErrZeroRate, f.Name)
		}
		r := 1.0
		for _, v := range f.ByGroup {
			q := v / f.Overall
			if q > 1 {
				q = 1 / q
			}
			r = min(r, q)
		}
		return r, nil
	}
	hi, _ := f.GroupMax()
	if hi == 0 {
		return 0, fmt.Errorf("%w: the %s of every group is 0, so their ratio is 0/0", ErrZeroRate, f.Name)
	}
	lo, _ := f.GroupMin()
	return lo / hi, nil
}

// Metric is a metric of binary or multi-class predictions and their
// labels, such as [Accuracy] or [F1]: the shape of the metric functions
// fairlearn's MetricFrame takes (y_true, y_pred).
type Metric func(pred, labels []int) (float64, error)

// NewFrame computes metric over every evaluated node and over each
// sensitive group, as fairlearn's MetricFrame(metrics=metric, y_true=labels,
// y_pred=pred, sensitive_features=sens). name names the metric in errors
// and in Frame.Name.
//
// A node is evaluated when its label and its group are known (not −1);
// metric receives the evaluated nodes' predictions and labels, all of them
// for Overall and one group's for ByGroup. sens holds group ids 0..G−1
// (−1: unknown). NewFrame returns an error wrapping ErrLength, ErrValue
// (a group or label below −1, or metric returning NaN or ±Inf, overall
// or for any group), ErrEmpty, ErrEmptyGroup (a group 0..G−1 without an
// evaluated node, or fewer than two groups), or metric's own error; an
// error from or about metric's value is prefixed with the metric's name
// and the group it failed on ("all evaluated nodes" for Overall).
func NewFrame(name string, metric Metric, pred, labels, sens []int) (*Frame, error) {
	if err := sameLength("pred", len(pred), "labels", len(labels)); err != nil {
		return nil, err
	}
	if err := sameLength("pred", len(pred), "sens", len(sens)); err != nil {
		return nil, err
	}
	if metric == nil {
		return nil, fmt.Errorf("%w: NewFrame %q: nil metric", ErrValue, name)
	}
	groups, err := groupCount(sens, len(pred))
	if err != nil {
		return nil, err
	}
	var allP, allY []int
	gp, gy := make([][]int, groups), make([][]int, groups)
	for i, s := range sens {
		y := labels[i]
		if s < -1 {
			return nil, fmt.Errorf("%w: sens[%d] = %d, want a group id ≥ 0 or −1 (unknown)", ErrValue, i, s)
		}
		if y < -1 {
			return nil, fmt.Errorf("%w: labels[%d] = %d, want a class ≥ 0 or −1 (unknown)", ErrValue, i, y)
		}
		if s == -1 || y == -1 {
			continue
		}
		gp[s], gy[s] = append(gp[s], pred[i]), append(gy[s], y)
		allP, allY = append(allP, pred[i]), append(allY, y)
	}
	if len(allP) == 0 {
		return nil, emptyErr(len(pred), "label or sensitive group")
	}
	if err := needGroups(len(gp), func(g int) int { return len(gp[g]) }, len(allP)); err != nil {
		return nil, err
	}
	f := &Frame{Name: name, ByGroup: make([]float64, len(gp)), Counts: make([]int, len(gp))}
	if f.Overall, err = finite(metric(allP, allY)); err != nil {
		return nil, fmt.Errorf("%s over all evaluated nodes (%d): %w", name, len(allP), err)
	}
	for g := range gp {
		f.Counts[g] = len(gp[g])
		if f.ByGroup[g], err = finite(metric(gp[g], gy[g])); err != nil {
			return nil, fmt.Errorf("%s of group %d (%d evaluated nodes): %w", name, g, len(gp[g]), err)
		}
	}
	return f, nil
}

// finite passes a metric's value on, refusing NaN and ±Inf (wrapping
// ErrValue): a Frame never holds them, so that its differences and ratios
// are never NaN and no group's value is silently skipped.
func finite(v float64, err error) (float64, error) {
	if err != nil {
		return 0, err
	}
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("%w: the metric returned %v, which is not finite; a metric must return a finite number (return an error where it is undefined)", ErrValue, v)
	}
	return v, nil
}

// groupCount returns G, 1 + the largest group id in sens: every entry,
// also those of nodes left out for an unknown label (or, for Evaluate,
// outside the subset), so that a group whose nodes are all left out is
// reported, not dropped, whatever its id. Negative ids are skipped (the
// callers validate them). An id of limit or more, limit being the most
// nodes that could be evaluated, leaves some group without a member: an
// error, before anything of size G is allocated.
func groupCount(sens []int, limit int) (int, error) {
	top := -1
	for _, s := range sens {
		top = max(top, s)
	}
	if top >= limit {
		return 0, fmt.Errorf("%w: sens holds the group id %d, so the groups are 0..%d, but at most %d nodes are evaluated: some group has no evaluated node (group ids must run 0..G−1, each with a member; remap sparse ids first)", ErrEmptyGroup, top, top, limit)
	}
	return top + 1, nil
}

// needGroups checks that each of the groups 0..groups−1 has a member
// (size(g) > 0) and that there are at least two.
func needGroups(groups int, size func(g int) int, evaluated int) error {
	for g := 0; g < groups; g++ {
		if size(g) == 0 {
			return fmt.Errorf("%w: group %d of 0..%d has no evaluated node (the groups are 0..G−1 with G = 1 + the largest id in sens, and each needs a node of known label; evaluate on nodes covering every group, or remap the ids)", ErrEmptyGroup, g, groups-1)
		}
	}
	if groups < 2 {
		return fmt.Errorf("%w: only group 0 is present (%d evaluated nodes); a difference between groups needs at least groups 0 and 1", ErrEmptyGroup, evaluated)
	}
	return nil
}

// Rate is a rate of binary decisions that the fairness criteria compare
// between groups, computed from a group's confusion counts
// ([GroupStats]).
type Rate int

const (
	// SelectionRate is P(ŷ = 1 | s = g): fairlearn's selection_rate.
	SelectionRate Rate = iota
	// TruePositiveRate is P(ŷ = 1 | y = 1, s = g): fairlearn's
	// true_positive_rate. Undefined for a group without positives.
	TruePositiveRate
	// FalsePositiveRate is P(ŷ = 1 | y = 0, s = g): fairlearn's
	// false_positive_rate. Undefined for a group without negatives.
	FalsePositiveRate
	// AccuracyRate is P(ŷ = y | s = g): sklearn's accuracy_score.
	AccuracyRate
	numRates
)

// rateNames are fairlearn's (and sklearn's) names of the rates.
var rateNames = [numRates]string{"selection_rate", "true_positive_rate", "false_positive_rate", "accuracy_score"}

// String returns fairlearn's name of the rate ("selection_rate").
func (r Rate) String() string {
	if r < 0 || r >= numRates {
		return fmt.Sprintf("Rate(%d)", int(r))
	}
	return rateNames[r]
}

// of returns the rate of s, or an error when its denominator is 0.
func (r Rate) of(s GroupStats) (float64, error) {
	who := fmt.Sprintf("group %d", s.Group)
	if s.Group < 0 {
		who = "the evaluated nodes"
	}
	switch r {
	case SelectionRate:
		return s.SelectionRate, nil
	case TruePositiveRate:
		if s.Positives == 0 {
			return 0, fmt.Errorf("%w: %s has %d evaluated nodes, none positive; its true-positive rate is undefined", ErrNoPositives, who, s.Count)
		}
		return s.TPR, nil
	case FalsePositiveRate:
		if s.Negatives == 0 {
			return 0, fmt.Errorf("%w: %s has %d evaluated nodes, all positive; its false-positive rate is undefined", ErrNoNegatives, who, s.Count)
		}
		return s.FPR, nil
	case AccuracyRate:
		return s.Accuracy, nil
	}
	return 0, fmt.Errorf("%w: %v is not a rate", ErrValue, r)
}

// Frame returns the rate r of every group and of all evaluated nodes as a
// Frame, whose Difference and Ratio are fairlearn's generated metrics
// (selection_rate_difference, true_positive_rate_ratio, ...). It returns
// an error wrapping ErrNoPositives (TruePositiveRate) or ErrNoNegatives
// (FalsePositiveRate) when a group lacks the rate's denominator; fairlearn
// reports such a group's rate as 0 instead (sklearn's confusion_matrix
// normalises an empty row to zeros).
func (b *Breakdown) Frame(r Rate) (*Frame, error) {
	if len(b.Groups) == 0 {
		return nil, fmt.Errorf("%w: the breakdown has no group; a rate's frame compares groups, want at least one", ErrEmptyGroup)
	}
	f := &Frame{Name: r.String(), ByGroup: make([]float64, len(b.Groups)), Counts: make([]int, len(b.Groups))}
	var err error
	for g, s := range b.Groups {
		f.Counts[g] = s.Count
		if f.ByGroup[g], err = r.of(s); err != nil {
			return nil, err
		}
	}
	if f.Overall, err = r.of(b.Overall); err != nil {
		return nil, err
	}
	return f, nil
}
