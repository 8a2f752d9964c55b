// Package metrics computes the accuracy and group-fairness metrics every
// result of fairmp is judged by: accuracy, F1, AUC; the fairness criteria
// of fairlearn, as differences and ratios between any number of groups
// ([Criterion]: demographic parity, equal opportunity, equalized odds,
// false-positive-rate parity); any metric broken down by group with its
// differences and ratios, between groups and to the overall value
// ([Frame], fairlearn's MetricFrame); an [Evaluate] helper that computes
// the usual ones from predicted probabilities on a node subset; bootstrap
// intervals for all of them ([Bootstrap], [BootstrapFrame]); and
// [ChangeRate], the share of decisions two predictions disagree on, behind
// NIFTY's counterfactual unfairness and instability (package
// layers/perturb makes the predictions).
//
// # Concepts
//
// Nodes carry a label y (a class 0..C−1), a prediction ŷ and a sensitive
// group s (an id 0..G−1). The value −1 means unknown for labels and groups,
// as in graph/datasets; such nodes are excluded from the metrics that need
// the unknown value, and [Breakdown] and [Report] say how many were excluded.
// Group ids must run 0..G−1 without gaps (remap sparse ids first). G is
// 1 + the largest id anywhere in the sens given: every entry, also those of
// nodes left out for an unknown label and, for [Evaluate] and [Bootstrap],
// those outside the node subset (so pass the whole graph's sens, as
// graph/datasets holds it). Every group 0..G−1 must have an evaluated
// node: a group without one is an error (ErrEmptyGroup) naming it,
// whether its id is in the middle or the highest. fairlearn only sees the
// groups that occur in the rows it is given, so it silently compares the
// others; here a difference with a group left out is refused, not
// reported as the difference between all groups. To compare a subset of
// the groups on purpose, remap their ids to 0..G'−1 first.
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
// FPR_g = P(ŷ = 1 | y = 0, s = g), each estimated by counting, a criterion
// compares one rate between groups as a difference (0 is parity) or a
// ratio (1 is parity):
//
//	criterion (name)           fairlearn function              value
//	ΔDP (dp)                   demographic_parity_difference   max_g SR_g − min_g SR_g
//	DP ratio (dp-ratio)        demographic_parity_ratio        min_g SR_g / max_g SR_g
//	ΔEO (eo)                   equal_opportunity_difference    max_g TPR_g − min_g TPR_g
//	EO ratio (eo-ratio)        equal_opportunity_ratio         min_g TPR_g / max_g TPR_g
//	ΔFPR (fpr)                 false_positive_rate_difference  max_g FPR_g − min_g FPR_g
//	FPR ratio (fpr-ratio)      false_positive_rate_ratio       min_g FPR_g / max_g FPR_g
//	ΔEOdds (eodds)             equalized_odds_difference       max(ΔEO, ΔFPR)
//	EOdds ratio (eodds-ratio)  equalized_odds_ratio            min(EO ratio, FPR ratio)
//
// These are fairlearn's functions with their defaults, method
// "between_groups" and (equalized odds) agg "worst_case"; [Criterion]
// declares them, once, and [Criterion.Measure] computes one from
// predictions. For two groups ΔDP = |P(ŷ=1 | s=0) − P(ŷ=1 | s=1)| and ΔEO
// is the same among the nodes with y = 1, as in "Chasing Fairness in
// Graphs" (Jiang et al., AAAI 2024) and its reference code. The DP ratio
// is the disparate impact of the four-fifths rule. Groups are weighted
// equally whatever their size.
//
// [Frame] is fairlearn's MetricFrame for one metric: its Overall value,
// its value ByGroup, GroupMin and GroupMax, and Difference and Ratio with
// [BetweenGroups] (max − min, min / max) or [ToOverall] (the largest
// |group − overall|; the smallest group / overall, inverted when above
// 1). [NewFrame] builds one for any metric of predictions and labels
// ([Accuracy], [F1], or a function of the user's own), [Breakdown.Frame]
// for a [Rate].
//
// Where fairlearn returns NaN, or counts an undefined rate as 0, these
// functions return an error (see Errors): an empty group, a group without
// positives for a true-positive rate or without negatives for a
// false-positive rate (fairlearn: the rate is 0, from sklearn's
// confusion_matrix), and a ratio whose denominator is 0, that is every
// group's rate is 0 between groups, or the overall value is 0 to the
// overall value (fairlearn: NaN). A zero rate in some groups only is a
// value: a difference counts it and a ratio is then 0, as in fairlearn.
//
// Accuracy is the fraction of nodes with ŷ = y (all classes). F1 is
// 2·TP / (2·TP + FP + FN) for the positive class. In a group with neither
// a positive label nor a positive prediction F1 is 0/0: [F1] refuses it
// (ErrNoPositives, the group named), where sklearn's f1_score, and so
// fairlearn's MetricFrame, return 0 with an UndefinedMetricWarning. The
// refusal is the package's rule for every rate whose denominator is 0
// (a TPR without positives is refused too, where fairlearn gives 0), and
// a silent 0 would make that group the worst and set the F1 difference
// by a convention, not a measurement. The package has no warning channel
// on results (package metrics/diagnose computes diagnostics apart), so a
// warned 0 could not be kept either. To get sklearn's value, choose it:
// NewFrame("f1", F1ZeroDivision(0), ...) is MetricFrame(f1_score) with
// zero_division=0 (or 1), and the group's Count says why. AUC is the area under
// the ROC curve of a score, the probability that a random positive outscores
// a random negative with ties counting one half: the trapezoidal area over
// the distinct thresholds, as sklearn's roc_auc_score.
//
// Evaluate predicts ŷ = 1 when P(y = 1) > Options.Threshold (0.5 by
// default, strict as in the paper's code) for binary tasks, and the argmax
// of the probabilities otherwise. Its [Report] holds ΔDP, ΔEO and ΔEOdds
// and the per-group counts; any other criterion of it is c.Of(report).
//
// # Choosing
//
// Package metrics/selection chooses one of several candidates (FMP
// settings, per-group thresholds) by a criterion of this package: the
// fairest value within an accuracy loss of a reference (for example the
// lowest ΔEO within one point), or the highest accuracy whose criterion
// meets a bound (for example DP ratio ≥ 0.8).
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
//     range or repeated, an invalid option, a user's metric given to
//     [NewFrame] returning NaN or ±Inf (overall or for any group: the error
//     names the metric and the group).
//   - [ErrEmptyGroup]: a group 0..G−1 with no evaluated node (G = 1 + the
//     largest id in sens, see Concepts), or fewer than two groups (a
//     difference between groups is then meaningless, not 0).
//   - [ErrNoPositives], [ErrNoNegatives]: a group without positive nodes for
//     a true-positive rate (or without negatives for a false-positive
//     rate), AUC with one class only, F1 with no positive label or
//     prediction.
//   - [ErrZeroRate]: a ratio whose denominator is 0.
//
// Evaluate returns a Report only when every metric is defined; ByGroup
// still answers for groups without positives or negatives, reporting their
// TPR or FPR as 0 next to the zero count that explains it.
//
// # Individual fairness
//
// [InFoRMBias] is InFoRM's individual bias Tr(Yᵀ L_S Y) (Kang et al., KDD
// 2020): how differently the model treats nodes a similarity graph S
// calls alike, whatever their group. [CosineTopK] builds S from the
// features (cosine, k nearest per node, [DefaultSimilarityK]), on every
// node or a subset such as the test nodes. It is not a [Criterion] and has
// no bootstrap interval (see InFoRMBias for why).
//
// # Uncertainty
//
// [Bootstrap] puts a bootstrap interval (95% by default; symmetric
// about the point, so it always holds it: [SymmetricInterval]) around
// the accuracy and every criterion of an evaluation (Intervals.Criteria),
// by resampling the evaluated test nodes with replacement within each
// sensitive group; [BootstrapFrame] does the same for every value of a
// Frame of any metric. They measure how much a metric depends on which
// nodes happen to be in the test split. [Summarize]'s ± over seeds
// measures something else, the variation from initialisation and dropout
// on one fixed split, and on a small split it can be far smaller. On
// NBA's 63 test nodes (19 in group 1) the interval, not the ± over seeds,
// is the number to read: a ΔDP difference between two models that lies
// well inside both intervals is not evidence of anything.
//
// # Degree fairness
//
// RawlsGCN (Kang et al., WWW 2022) judges a model by how it serves nodes
// of each degree rather than each sensitive group. [GroupByDegree] makes
// the groups (one per distinct degree, the paper's protocol, or a given
// number of degree quantiles); its Group slice is a sens like any other,
// so every criterion, Frame and bootstrap above works by degree group.
// [DegreeBias] adds what the paper reports: the accuracy and mean loss of
// each group, their gaps, the worst group's accuracy and the variance of
// the groups' losses (the paper's "bias"); [BootstrapDegreeBias] puts
// intervals around them.
package metrics
