// Package metrics computes the accuracy and group-fairness metrics every
// result of fairmp is judged by: accuracy, F1, AUC, demographic parity,
// equal opportunity and equalized odds, a per-group breakdown, and an
// [Evaluate] helper that computes all of them from predicted probabilities
// on a node subset; bootstrap intervals ([Bootstrap]); and the selection
// rules ([Rule], [Choose]) by which FMP's frontier and the per-group
// thresholds choose a setting on validation data; and [ChangeRate], the
// share of decisions two predictions disagree on, behind NIFTY's
// counterfactual unfairness and instability (package layers/perturb
// makes the predictions).
//
// # Concepts
//
// Nodes carry a label y (a class 0..C−1), a prediction ŷ and a sensitive
// group s (an id 0..G−1). The value −1 means unknown for labels and groups,
// as in graph/datasets; such nodes are excluded from the metrics that need
// the unknown value, and [Breakdown] and [Report] say how many were excluded.
// Group ids must run 0..G−1 without gaps: G is 1 + the largest id present
// and every group must have a member (remap sparse ids first).
//
// The fairness metrics are for binary predictions: a node is positive when
// y = 1 and selected when ŷ = 1. Evaluate binarises other tasks one-vs-rest
// for Options.Positive.
//
// Every function returns fractions in [0, 1]. fairmp prints fairness and
// accuracy numbers in percent, with two decimals, as the FMP paper does:
// [Report.String] and [Percent] do the conversion, so tables and examples
// print numbers that went through this package.
//
// # Definitions
//
// With the selection rate SR_g = P(ŷ = 1 | s = g), the true-positive rate
// TPR_g = P(ŷ = 1 | y = 1, s = g) and the false-positive rate
// FPR_g = P(ŷ = 1 | y = 0, s = g), each estimated by counting:
//
//	ΔDP             = max_g SR_g  − min_g SR_g
//	ΔEO             = max_g TPR_g − min_g TPR_g
//	equalized odds  = max(ΔEO, max_g FPR_g − min_g FPR_g)
//
// For two groups ΔDP = |P(ŷ=1 | s=0) − P(ŷ=1 | s=1)| and ΔEO is the same
// among the nodes with y = 1, as in "Chasing Fairness in Graphs" (Jiang
// et al., AAAI 2024) and its reference code. These are fairlearn's
// demographic_parity_difference and equal_opportunity_difference with
// method="between_groups", and equalized_odds_difference (agg "worst_case");
// [Breakdown] plays the role of fairlearn's MetricFrame (.overall, .by_group,
// .difference()). Groups are weighted equally whatever their size.
//
// Accuracy is the fraction of nodes with ŷ = y (all classes). F1 is
// 2·TP / (2·TP + FP + FN) for the positive class. AUC is the area under the
// ROC curve of a score, the probability that a random positive outscores a
// random negative with ties counting one half: the trapezoidal area over
// the distinct thresholds, as sklearn's roc_auc_score.
//
// Evaluate predicts ŷ = 1 when P(y = 1) > Options.Threshold (0.5 by
// default, strict as in the paper's code) for binary tasks, and the argmax
// of the probabilities otherwise.
//
// # Errors
//
// Functions never return NaN and never panic on data: every condition
// that would make a metric undefined is an error, which wraps one of the
// sentinels (test with errors.Is) and says which argument, index and value
// were at fault:
//
//   - [ErrLength]: slices whose lengths must agree do not.
//   - [ErrEmpty]: no node left, because the input or subset is empty or every
//     node has an unknown label or group.
//   - [ErrValue]: a prediction, label or group outside its set, a probability
//     or score that is NaN, infinite or outside [0, 1], a node index out of
//     range or repeated, an invalid option.
//   - [ErrEmptyGroup]: a group 0..G−1 with no evaluated node, or fewer than
//     two groups (a difference between groups is then meaningless, not 0).
//   - [ErrNoPositives], [ErrNoNegatives]: a group without positive nodes for
//     ΔEO (or without negatives for equalized odds), AUC with one class
//     only, F1 with no positive label or prediction.
//
// Evaluate returns a Report only when every metric is defined; ByGroup
// still answers for groups without positives or negatives, reporting their
// TPR or FPR as 0 next to the zero count that explains it.
//
// # Uncertainty
//
// [Bootstrap] puts a percentile bootstrap interval (95% by default) around
// the accuracy, ΔDP and ΔEO that Evaluate reports, by resampling the
// evaluated test nodes with replacement within each sensitive group:
// it measures how much the metric depends on which nodes happen to be in
// the test split. [Summarize]'s ± over seeds measures something else, the
// variation from initialisation and dropout on one fixed split, and on a
// small split it can be far smaller. On NBA's 63 test nodes
// (19 in group 1) the interval, not the ± over seeds, is the number to
// read: a ΔDP difference between two models that lies well inside both
// intervals is not evidence of anything.
package metrics
