// Package fairtrain adds fairness to the training of any fairmp model:
// the in-training methods FMP is compared with. Three strategies from the
// FMP paper's baselines change the loss (and, for the adversary, the
// schedule) of [train.Fit], whatever the backbone (MLP, GCN, SGC, APPNP,
// GAT, JKNet, FMP's models); two published fair GNNs, FairGNN and NIFTY,
// train the backbone inside an architecture of their own ([Encoder]).
// RawlsGCN-Graph ([RawlsGCNConfig]) is about degree, not a sensitive
// attribute: it trains the backbone on the doubly stochastic scaling of
// its propagation matrix. Post-processing of a trained model (per-group thresholds) is package
// layers/postprocess, FMP itself package fmp, and the counterfactual
// unfairness and instability NIFTY is judged by package layers/perturb.
//
// # Methods by name
//
// Every method is a plain configuration struct with a DefaultXxxConfig
// constructor, Validate and a fairness weight (Weight, WithWeight; a
// method that draws at random also has WithSeed), registered once with
// package layers/fairness, the one registry of methods of every stage:
// fairness.Lookup gives one by name and fairness.Names lists them
// ("regularizer", "adversary", "mixup", "redress" in training; "fairgnn",
// "nifty", "fairvgnn", "rawlsgcn" as architectures), so that a method
// declared here is offered by every command. fairness.Fit trains a model
// with any of them, from a backbone configuration of any declared kind:
//
//	m, err := fairness.Lookup("fairgnn")              // or fairtrain.DefaultFairGNNConfig()
//	m = fairness.WithSeed(m.(fairness.Weighted).WithWeight(1), seed)
//	cfg, err := layers.LookupKind("gcn")...Configure(d, 2, opts)
//	fit, err := fairness.Fit(ctx, m, cfg, fairness.NewSetup(ds.Graph, task, ds.Sens), train.DefaultConfig())
//	pred, err := train.Predict(fit.Model, task, nil)
//
// # FairGNN and NIFTY
//
//   - [FairGNNConfig] (Dai & Wang, WSDM 2021): a sensitive-attribute
//     estimator trained on the nodes whose group is known (sens −1
//     elsewhere: the method is built for an attribute known for a few
//     nodes only; [EstimateSens] is the estimator alone), an adversary
//     that predicts the estimated group from the representation, and the
//     covariance between estimated group and prediction.
//   - [NIFTYConfig] (Agarwal, Lakkaraju & Zitnik, UAI 2021): two augmented
//     views per epoch (feature noise and dropped edges; the second also
//     flips the sensitive feature), a Siamese similarity loss between
//     their representations, and layer-wise Lipschitz normalisation.
//   - [FairVGNNConfig] (Wang et al., KDD 2022): soft feature-channel masks
//     from a generator trained against a discriminator of the group, and
//     adaptive clamping of the encoder's first-layer weights on the
//     channels the masks drop; its model is a [MaskedEncoder].
//
// All three build an [Encoder] on the backbone: the backbone, with its
// output width set to the method's representation width, as the body,
// and a linear head. Their configurations document the reference code's
// defaults and every difference from it.
//
// # Saving their models
//
// The Encoder is a declared kind, "encoder" ([EncoderConfig]: the body's
// kind and configuration and the number of classes), so fmp/modelio
// saves and loads it, fmp/score scores new nodes with it and FMP goes on
// top of it. A model file holds what scores, nothing that serves only
// training: FairGNN's estimator and adversary are never part of the
// Encoder, NIFTY's projector and predictor leave it when training ends,
// and FairVGNN's model, which reads the features through its mask, is
// saved as the Encoder [MaskedEncoder.Folded] returns, the mask's keep
// probabilities folded into its input weights (the generator and the
// discriminator stay out).
//
// # Individual fairness: REDRESS
//
// [REDRESSConfig] (Dong, Kang, Tong & Li, KDD 2021) is an in-training method for
// individual fairness, which needs no sensitive attribute: each training
// node's ranking of the others by output similarity should follow their
// ranking by feature similarity (a LambdaRank-style loss
// weighted by NDCG@k; [RankingNDCG] is the paper's measure). Judge it by
// metrics.InFoRMBias (similar nodes, similar predictions), not by ΔDP.
//
// # In-training methods
//
// Each in-training method implements fairness.Loss: Apply takes a
// [train.Config] and returns it with the method added, for one
// train.Fit call:
//
//	tc := train.DefaultConfig()
//	tc, err := fairtrain.DefaultRegularizerConfig().Apply(tc, task, ds.Sens)
//	...
//	res, err := train.Fit(ctx, model, task, tc)
//
// The in-training methods of the FMP paper's baselines:
//
//   - [RegularizerConfig]: CE + α·ΔDP in probability space over the training
//     nodes (dpGap: max − min over groups of the mean P(y = 1); |m₀ − m₁|
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
// The methods' terms (the ΔDP gap, binary cross-entropy on logits against
// hard and soft targets, FairGNN's covariance, NIFTY's negative cosine and
// its stop-gradient, REDRESS's ranking loss) are unexported custom gorgonia
// ops (float32 and
// float64, computed in float64 with max-subtraction or the stable softplus
// form), checked against plain-Go implementations and by finite
// differences.
//
// # Errors
//
// Validate names the first bad field. Apply returns an error for an
// invalid configuration, a task that does not validate, a sensitive
// attribute of the wrong length, too few groups among the training nodes
// (or a non-binary attribute for the adversary and mixup), and for the
// adversary a training run too short to reach the adversarial phase.
// Errors of the loss construction (for example a Positive class the model
// does not have) are returned by train.Fit. Fit also refuses FairGNN on an
// attribute that is not binary or lacks a known member of either group,
// and NIFTY with dropped edges on a backbone that cannot propagate over
// another matrix (a kind of your own that is not a layers.BlockModel: set
// EdgeDrop to 0), naming the fix. Nothing
// panics on user input.
package fairtrain
