package metrics

import "errors"

// Sentinel errors. Every error returned by this package wraps exactly one of
// them (test with errors.Is) and adds what was wrong and where: the argument,
// the index and the offending value.
var (
	// ErrLength reports slices whose lengths should agree but do not.
	ErrLength = errors.New("metrics: length mismatch")
	// ErrEmpty reports that no node is left to evaluate: empty input, an
	// empty node subset, or every node excluded for an unknown (−1) label
	// or sensitive attribute.
	ErrEmpty = errors.New("metrics: nothing to evaluate")
	// ErrValue reports a value outside the expected set: a prediction or
	// label that is not a valid class, a sensitive group below −1, a
	// probability outside [0, 1] or not finite, a node index out of range
	// or repeated, an invalid option, a metric returning NaN or ±Inf.
	ErrValue = errors.New("metrics: value outside the expected set")
	// ErrEmptyGroup reports a sensitive group with no evaluated member.
	// Groups are the ids 0..G−1, G = 1 + the largest id anywhere in sens
	// (also on nodes left out for an unknown label or outside the
	// evaluated subset), each needs an evaluated node, and a fairness
	// difference needs at least two of them.
	ErrEmptyGroup = errors.New("metrics: sensitive group with no members")
	// ErrNoPositives reports a rate whose denominator, the number of
	// positive nodes (label = the positive class), is zero: ΔEO or
	// equalized odds for a group without positives, AUC without positives,
	// F1 with neither positive labels nor positive predictions.
	ErrNoPositives = errors.New("metrics: no positive nodes")
	// ErrNoNegatives reports a rate whose denominator, the number of
	// negative nodes, is zero: the false-positive rate of equalized odds
	// for a group without negatives, or AUC without negatives.
	ErrNoNegatives = errors.New("metrics: no negative nodes")
	// ErrNoFeatures reports a drift baseline without feature references
	// (Baseline.RecordFeatures was not called before it was saved):
	// feature drift cannot be measured against it.
	ErrNoFeatures = errors.New("metrics: the baseline records no features")
)

// ErrZeroRate reports a ratio whose denominator is zero: a ratio between
// groups whose rates are all 0, or a ratio to an overall rate of 0
// (fairlearn returns NaN for both).
var ErrZeroRate = errors.New("metrics: ratio of zero rates")
