// Package postprocess debiases a trained model after the fact, from its
// predicted probabilities alone: no retraining, no access to the model.
// It is where fairlearn's users look for ThresholdOptimizer.
//
// [FitThresholds] chooses a decision rule per sensitive group (any number
// of groups) on validation nodes, by the same [selection.Rule] that chooses
// FMP's setting on its frontier (fmp.NewFrontier):
//
//   - the constraint is the rule's [metrics.Criterion]: demographic parity
//     (ΔDP, or the DP ratio of the four-fifths rule), true-positive-rate
//     parity (ΔEO, the EO ratio), false-positive-rate parity (ΔFPR, the
//     FPR ratio) or equalized odds (both rates: ΔEOdds, the EOdds ratio);
//   - the goal is the highest [Objective] (accuracy or balanced accuracy)
//     whose criterion meets the rule's Bound, the tolerance (for example
//     ΔEO ≤ 0.02, or DP ratio ≥ 0.8), or the fairest criterion whose
//     objective is within the rule's MaxAccuracyLoss of the plain 0.5
//     threshold's;
//   - the rules are deterministic (one threshold per group) or, with
//     ThresholdsConfig.Randomized, randomised (fairlearn's: a group mixes
//     two thresholds, and for equalized odds a constant random decision),
//     which meets a constraint exactly where no pair of thresholds can.
//
// [Thresholds.Decide] applies the rules to any probabilities, of any
// model; randomised decisions are drawn from a seed, so the same seed
// gives the same decisions:
//
//	pred, err := train.Predict(model, task, nil)
//	...
//	cfg := postprocess.DefaultThresholdsConfig()
//	cfg.Rule = selection.MostAccurateWithin(metrics.EOddsDifference, 0.02)
//	cfg.Randomized = true
//	th, err := postprocess.FitThresholds(pred.Column(1), ds.Labels, ds.Sens, ds.Split.Val, cfg)
//	...
//	decisions, err := th.Decide(pred.Column(1), ds.Sens, seed)
//
// # More than two classes
//
// Per-group thresholds do not extend to c classes: a decision is an
// argmax, not a cut. [FitClassOffsets] adds an offset per group and class
// to the log-probabilities, ŷ = argmax_k (log p_k + b_gk), chosen on
// validation nodes by a selection.Rule judged with the c-class criteria
// (metrics.ClassBreakdown.Criterion: by default the c-class ΔDP, the
// largest gap over classes between the groups' selection rates, within
// one accuracy point of the argmax). Offsets of zero are the argmax. The
// search is a deterministic coordinate search over the (group, class)
// offsets, exact along each coordinate up to ClassOffsetsConfig.Candidates
// breaks. It cannot reach parity where the data forbid it, and
// [ClassOffsets.Diagnostics] says which: a class whose probability is 0
// for every node of a group (no finite offset selects it there), groups
// whose sizes admit no common rate but 0 and 1 (a rate of group g is a
// multiple of 1/n_g), the accuracy bound, or a local optimum of the
// search. A criterion undefined whatever the offsets (ΔEO where a group
// has no validation node of a class) is an error.
//
// Training-time methods are package layers/fairtrain; FMP, which debiases
// inside the architecture, is package fmp.
//
// # Method
//
// The method is that of fairlearn's ThresholdOptimizer (Hardt, Price and
// Srebro, "Equality of opportunity in supervised learning", 2016). For
// each group the candidate rules are the cuts of its validation
// probabilities (ŷ = 1 when p > t, t midway between two consecutive
// distinct probabilities, plus "everyone" and "no one"); each cut has the
// group's rates (selection, true- and false-positive) and its share of the
// objective. The objective is a sum over groups, so a constraint on the
// spread of one rate becomes: with the smallest rate a fixed, every group
// takes its best cut whose rate lies in [a, a + Bound] (a difference) or
// [a, a / Bound] (a ratio).
//
//   - Deterministic rules try every anchor a (every cut's rate; for
//     equalized odds every pair of a true- and a false-positive rate) and
//     take each group's best cut in the window by a range-maximum query:
//     the optimum over the cuts, exact. Tests check it against an
//     exhaustive search over every combination of per-group thresholds.
//   - Randomised rules mix two cuts: a group's best objective at rate x
//     is then the upper concave hull of its cuts in the plane (rate,
//     objective), and the total is piecewise linear in a, maximised
//     exactly at its breaks. Ties in the objective go to the fairer
//     criterion, as for deterministic rules: a group whose hull has a
//     flat top takes the rate on it closest to the other groups', and of
//     breaks with the same objective the fairest wins (a tie: a
//     difference below 1e-12; real ones are at least 1/n). For equalized
//     odds a group's reachable (FPR, TPR) are the points between its ROC
//     curve's upper hull and the diagonal (a hull point mixed with the constant decision "ŷ = 1
//     with probability FPR"); the objective is jointly concave in the
//     smallest TPR and FPR, maximised by nested golden-section searches.
//     With Bound 0 every group gets the same TPR and the same FPR exactly.
//   - The Fairest goal bisects on the bound: the tightest at which the
//     best objective still reaches the reference's minus MaxAccuracyLoss.
//
// # Where it differs from fairlearn
//
//   - The rules are fitted on validation nodes and, with the Fairest goal,
//     judged against the model's own decisions (every group at 0.5);
//     ThresholdOptimizer fits on the data it is given and has only the
//     "highest objective under the constraint" goal.
//   - Deterministic rules: ThresholdOptimizer always randomises.
//   - No grid: ThresholdOptimizer interpolates the curves on a grid of
//     grid_size + 1 rates (1000 by default); FitThresholds finds the
//     optimum over the cuts exactly (up to float64 for equalized odds).
//     Candidates (200 per group by default) thins the cuts of groups with
//     more distinct probabilities to evenly spaced quantiles.
//   - Tolerances for equalized odds (fairlearn's tol does not apply to
//     it) and bounds on ratios (the DP ratio ≥ 0.8 of the four-fifths
//     rule); fairlearn's tol bounds differences only.
//   - The balanced accuracy is that of all fitted nodes, ½ TPR + ½ TNR;
//     for the single-rate constraints ThresholdOptimizer maximises the
//     groups' balanced accuracies weighted by group size instead (for
//     equalized odds it uses all nodes' counts, as here).
//   - A group needs positives only for a true-positive-rate constraint
//     and negatives only for a false-positive-rate one;
//     ThresholdOptimizer refuses any group without both ("degenerate
//     labels"). Nodes of unknown group (−1) are decided with 0.5 and
//     counted in the objective; ThresholdOptimizer needs every node's
//     group.
//   - Randomised decisions hash the seed with the node's index (one
//     uniform number per node), where ThresholdOptimizer.predict draws
//     from a random_state stream; both select a node with the rule's
//     probability.
//   - No flip option (fairlearn's default, flip=False, is what is done)
//     and no other objectives (fairlearn also offers selection_rate,
//     true_positive_rate and true_negative_rate for single-rate
//     constraints).
//
// # Errors
//
// FitThresholds returns an error, naming the node or group, for inputs of
// different lengths, a validation index out of range, a probability
// outside [0, 1], a non-binary label, a group 0..G−1 without validation
// nodes of known label (G = 1 + the largest id anywhere in sens, as in
// package metrics: the highest group missing is refused as a middle one), a
// group without the positives or negatives its constraint's rate needs,
// or no rule meeting the rule ([selection.ErrNoCandidate]). Nothing panics
// on user input.
package postprocess
