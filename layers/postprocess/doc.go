// Package postprocess debiases a trained model after the fact, from its
// predicted probabilities alone: no retraining, no access to the model.
// It is where fairlearn's users look for ThresholdOptimizer.
//
// [FitThresholds] chooses one decision threshold per sensitive group on
// validation nodes, by the same [metrics.Rule] that chooses FMP's setting
// on its frontier (fmp.NewFrontier): the lowest validation ΔDP within a
// given accuracy loss, or the highest validation accuracy under a given
// ΔDP. [Thresholds.Decide] and [Thresholds.Probs] apply the thresholds to
// any probabilities, of any model:
//
//	pred, err := train.Predict(model, task, nil)
//	...
//	th, err := postprocess.FitThresholds(pred.Column(1), ds.Labels, ds.Sens, ds.Split.Val,
//		postprocess.DefaultThresholdsConfig())
//	...
//	decisions := th.Decide(pred.Column(1), ds.Sens)
//
// The thresholds are deterministic and target demographic parity between
// two groups; fairlearn's ThresholdOptimizer also randomises between two
// thresholds to meet a constraint exactly, and offers other criteria.
//
// Training-time methods are package layers/fairtrain; FMP, which debiases
// inside the architecture, is package fmp.
//
// # Errors
//
// FitThresholds returns an error, naming the node or group, for inputs of
// different lengths, a validation index out of range, a probability
// outside [0, 1], a non-binary label or group among the validation nodes,
// a group without validation nodes, or no candidate meeting the rule
// ([metrics.ErrNoCandidate]). Nothing panics on user input.
package postprocess
