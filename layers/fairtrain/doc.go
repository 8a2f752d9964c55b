// Package fairtrain adds fairness to the training of any fairmp model:
// three strategies from the FMP paper's baselines that change the loss
// (and, for the adversary, the schedule) of [train.Fit], whatever the
// backbone (MLP, GCN, SGC, APPNP, GAT, JKNet, FMP's models). They are the
// in-training methods FMP is compared with; post-processing of a trained
// model (per-group thresholds) is package layers/postprocess, and FMP
// itself package fmp.
//
// # Strategies
//
// Each strategy is a plain configuration struct with a DefaultXxxConfig
// constructor and a Validate method, and implements [Strategy]: Apply
// takes a [train.Config] and returns it with the strategy added, for one
// train.Fit call:
//
//	tc := train.DefaultConfig()
//	tc, err := fairtrain.DefaultRegularizerConfig().Apply(tc, task, ds.Sens)
//	...
//	res, err := train.Fit(model, task, tc)
//
// The strategies:
//
//   - [RegularizerConfig]: CE + α·ΔDP in probability space over the training
//     nodes (DPGap: max − min over groups of the mean P(y = 1); |m₀ − m₁|
//     for two groups).
//   - [AdversaryConfig]: CE − α·BCE of an adversary MLP that predicts the
//     group from the softmax output; classifier pre-training, adversary
//     pre-training, then alternating steps (see AdversaryConfig for the
//     schedule). The adversary has its own graph and Adam optimiser and
//     runs in [train.Config].AfterStep.
//   - [MixupConfig]: manifold fair mixup on the logits: CE + α·|g'(λ)|, the
//     slope of the mean prediction along the path between logits of the
//     two groups, computed in closed form (see MixupConfig for why a
//     straightforward autograd port penalises a constant).
//
// The sensitive attribute is one group id per node (0..G−1, −1 unknown,
// as graph/datasets); the fairness terms use the training nodes whose
// group is known. The regulariser accepts any number of groups; the
// adversary and mixup need a binary attribute.
//
// # Determinism and α = 0
//
// Every random choice (the adversary's initialisation, mixup's node pairs
// and λ) has its own seeded source, separate from the model's, so with
// α = 0 each strategy leaves the model's parameters bit-identical to plain
// training (the tests check this on every backbone), and runs with the
// same seeds are bit-identical.
//
// # Ops
//
// [DPGap] and [BCEWithLogits] are custom gorgonia ops (float32 and float64,
// computed in float64 with max-subtraction or the stable softplus form),
// checked against plain-Go implementations and by finite differences.
//
// # Errors
//
// Validate names the first bad field. Apply returns an error for an
// invalid configuration, a task that does not validate, a sensitive
// attribute of the wrong length, too few groups among the training nodes
// (or a non-binary attribute for the adversary and mixup), and for the
// adversary a training run too short to reach the adversarial phase.
// Errors of the loss construction (for example a Positive class the model
// does not have) are returned by train.Fit. Nothing panics on user
// input.
package fairtrain
