package metrics

import (
	"errors"
	"fmt"
)

// Accuracy returns the fraction of nodes whose prediction equals their
// label. Predictions and labels are class ids ≥ 0 (any number of classes);
// nodes with label −1 (unknown) are excluded.
//
// Accuracy returns an error wrapping ErrLength if the lengths differ,
// ErrValue for a prediction < 0 or a label < −1, and ErrEmpty if no node
// has a known label.
func Accuracy(pred, labels []int) (float64, error) {
	if err := sameLength("pred", len(pred), "labels", len(labels)); err != nil {
		return 0, err
	}
	n, correct := 0, 0
	for i, p := range pred {
		y := labels[i]
		if p < 0 {
			return 0, fmt.Errorf("%w: pred[%d] = %d, want a class ≥ 0", ErrValue, i, p)
		}
		if y < -1 {
			return 0, fmt.Errorf("%w: labels[%d] = %d, want a class ≥ 0 or −1 (unknown)", ErrValue, i, y)
		}
		if y == -1 {
			continue
		}
		n++
		if p == y {
			correct++
		}
	}
	if n == 0 {
		return 0, emptyErr(len(pred), "label")
	}
	return ratio(correct, n), nil
}

// F1 returns the F1 score of binary predictions with positive class 1:
// 2·TP / (2·TP + FP + FN), the harmonic mean of precision and recall.
// pred must hold 0 or 1 and labels 0, 1 or −1; nodes with label −1 are
// excluded.
//
// F1 returns an error wrapping ErrLength, ErrValue, ErrEmpty, or
// ErrNoPositives when there is neither a positive label nor a positive
// prediction (F1 is then 0/0). sklearn's f1_score returns 0 there with an
// UndefinedMetricWarning (zero_division="warn"), and so does fairlearn's
// MetricFrame for such a group; for that value ask for it explicitly with
// [F1ZeroDivision].
func F1(pred, labels []int) (float64, error) {
	if err := sameLength("pred", len(pred), "labels", len(labels)); err != nil {
		return 0, err
	}
	tp, fp, fn, n := 0, 0, 0, 0
	for i, p := range pred {
		y := labels[i]
		if p != 0 && p != 1 {
			return 0, fmt.Errorf("%w: pred[%d] = %d, want 0 or 1", ErrValue, i, p)
		}
		if y < -1 || y > 1 {
			return 0, fmt.Errorf("%w: labels[%d] = %d, want 0 or 1 (or −1, unknown)", ErrValue, i, y)
		}
		if y == -1 {
			continue
		}
		n++
		switch {
		case p == 1 && y == 1:
			tp++
		case p == 1:
			fp++
		case y == 1:
			fn++
		}
	}
	if n == 0 {
		return 0, emptyErr(len(pred), "label")
	}
	return f1(tp, fp, fn, n)
}

// F1ZeroDivision returns F1 with sklearn's zero_division = v (0 or 1):
// the Metric that is F1 where F1 is defined and v where there is neither
// a positive label nor a positive prediction (2·TP + FP + FN = 0), instead
// of an error. With v = 0 a [NewFrame] of it gives fairlearn's
// MetricFrame(metrics=f1_score) values, without the warning: choosing v
// is the acknowledgement. Read such a group's v beside its Count, since v
// is a convention and not a measurement: 0 makes the group count as the
// worst in the differences and ratios, 1 as the best. Any other error of
// F1 stays an error; a v other than 0 or 1 is an error wrapping ErrValue.
func F1ZeroDivision(v float64) Metric {
	return func(pred, labels []int) (float64, error) {
		if v != 0 && v != 1 {
			return 0, fmt.Errorf("%w: F1ZeroDivision(%v): want 0 or 1 (sklearn's zero_division)", ErrValue, v)
		}
		f, err := F1(pred, labels)
		if errors.Is(err, ErrNoPositives) {
			return v, nil
		}
		return f, err
	}
}

func f1(tp, fp, fn, n int) (float64, error) {
	if 2*tp+fp+fn == 0 {
		return 0, fmt.Errorf("%w: none of the %d evaluated nodes is positive or predicted positive; F1 is undefined (sklearn sets it to 0 with a warning; as a metric of NewFrame, F1ZeroDivision(0) chooses that value)", ErrNoPositives, n)
	}
	return ratio(2*tp, 2*tp+fp+fn), nil
}

// DemographicParity returns the demographic parity difference of binary
// predictions: the largest minus the smallest selection rate P(ŷ = 1 | s = g)
// over the sensitive groups g = 0..G−1. For two groups this is
// |P(ŷ=1 | s=0) − P(ŷ=1 | s=1)|. It matches fairlearn's
// demographic_parity_difference with method "between_groups".
//
// pred must hold 0 or 1 and sens a group id 0..G−1 or −1 (unknown); nodes
// with sens −1 are excluded. DemographicParity returns an error wrapping
// ErrLength, ErrValue, ErrEmpty, or ErrEmptyGroup if a group 0..G−1 has no
// node or fewer than two groups are present.
func DemographicParity(pred, sens []int) (float64, error) {
	if err := sameLength("pred", len(pred), "sens", len(sens)); err != nil {
		return 0, err
	}
	b, err := tally(pred, nil, sens, 2, 1, -1)
	if err != nil {
		return 0, err
	}
	return b.DemographicParity(), nil
}

// EqualOpportunity returns the equal opportunity difference of binary
// predictions: the largest minus the smallest true-positive rate
// P(ŷ = 1 | y = 1, s = g) over the sensitive groups, that is ΔDP among the
// nodes with y = 1. It matches fairlearn's equal_opportunity_difference
// with method "between_groups".
//
// pred must hold 0 or 1, labels 0, 1 or −1, sens 0..G−1 or −1; nodes with
// an unknown label or group are excluded. EqualOpportunity returns an
// error wrapping ErrLength, ErrValue, ErrEmpty, ErrEmptyGroup (a group with
// no evaluated node), or ErrNoPositives (a group with no node of label 1).
func EqualOpportunity(pred, labels, sens []int) (float64, error) {
	b, err := ByGroup(pred, labels, sens)
	if err != nil {
		return 0, err
	}
	return b.EqualOpportunity()
}

// EqualizedOdds returns the equalized odds difference of binary
// predictions: the larger of the between-groups differences (largest minus
// smallest) of the true-positive rate and of the false-positive rate, as
// fairlearn's equalized_odds_difference.
//
// Inputs and exclusions are those of EqualOpportunity. It returns an error
// wrapping ErrLength, ErrValue, ErrEmpty, ErrEmptyGroup, ErrNoPositives or
// ErrNoNegatives (a group with no node of label 0).
func EqualizedOdds(pred, labels, sens []int) (float64, error) {
	b, err := ByGroup(pred, labels, sens)
	if err != nil {
		return 0, err
	}
	return b.EqualizedOdds()
}

func emptyErr(n int, what string) error {
	if n == 0 {
		return fmt.Errorf("%w: no nodes", ErrEmpty)
	}
	return fmt.Errorf("%w: all %d nodes have an unknown (−1) %s", ErrEmpty, n, what)
}
