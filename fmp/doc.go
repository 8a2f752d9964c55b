// Package fmp implements Fair Message Passing (FMP; Jiang et al., "Chasing
// Fairness in Graphs: A GNN Architecture Perspective", AAAI 2024) as
// gorgonia graph nodes: a layer that propagates a backbone's logits over a
// graph while pushing the groups of a sensitive attribute towards equal
// mean predicted probabilities; FMP on any backbone; the fairness
// frontier, which chooses FMP's settings on validation data; and an audit
// that shows, from one forward pass, what the sensitive attribute
// changed. The maths behind the knobs is in DESIGN.md beside this
// package; the measurements behind the defaults are in the lab
// (examples/paper, its study and lambdaf experiments).
//
// The other fairness methods FMP is compared with live apart: training
// strategies (regulariser, adversary, fair mixup) in layers/fairtrain,
// post-processing (per-group thresholds) in layers/postprocess, and the
// criteria (ΔDP, the DP ratio, ΔEO, equalized odds, ...: [metrics.Criterion])
// in metrics.
//
// # Which entry point
//
//	you have                                   use
//	features and a graph, no model yet         NewModel (the paper's MLP → FMP) or On(backbone, ...),
//	                                           trained with Model.FitTwoStage, then NewFrontier to choose λf
//	a trained model (any layers.Model)         On(trained, ...), then NewFrontier: no retraining
//	logits from anywhere (another framework,   NewLogitsFrontier to choose λf on validation nodes,
//	a mini-batch model, a file)                then New(...).Apply(logits): plain arrays, any size
//	a gorgonia graph of your own               New(...).Forward(node)
//	a graph held apart (a distributed engine)  NewSteps: the per-node steps and the sum per step
//	a question: what did the attribute change? Explain(the backbone's logits, ...)
//	new nodes arriving after training          Model.Record before saving, then package fmp/score:
//	                                           the recorded duals on the new nodes' neighbourhood
//
// # New nodes
//
// FMP's steps couple every node to every other through the groups' mean
// probabilities, so "FMP's score of a node that arrived after training"
// has two meanings: FMP run again over the grown graph (every score may
// move), or the duals chosen on the training graph applied to the new
// nodes ([Recorded]: a node's score then depends only on its K-hop
// neighbourhood, and an old node keeps its score where its neighbourhood
// did not change). [Model.Record] records the duals; model files keep them
// (saving a Model whose duals are not recorded is refused:
// [ErrNotRecorded]); package fmp/score applies either meaning to any nodes
// of any graph, on their receptive field.
//
// # FMP on a model
//
// [On](backbone, graph, sens, cfg, phase) puts an FMP layer (cfg: an
// [OnConfig], the propagation and the layer's settings) on any
// [layers.Model] that produces n × c class logits (MLP, GCN, SGC, APPNP,
// GAT, JKNet, or a model of the user's own): the output is
// FMP(backbone(X)). [NewModel] builds the paper's MLP → FMP. A [Model]
// trains with [train.Fit], evaluates with [train.Predict], and saves and
// loads with fmp/modelio (the file records the backbone's kind and
// configuration; Model's kind, "fmp", is a wrapper, see
// [layers.DeclareWrapper]).
//
// The recommended workflow has two stages: [Model.FitTwoStage] trains the
// backbone with λf = 0 (so that best-validation selection judges
// propagation-only accuracy), then [NewFrontier] evaluates a grid of
// settings (λf, and optionally λs, K, τ) on the trained backbone's
// logits, from one forward pass of the backbone, and chooses one by a
// [selection.Rule] stated by the user on any criterion: the fairest
// validation value within a given accuracy loss (the lowest ΔDP within one
// point, say), or the highest validation accuracy whose criterion meets a
// bound (a DP ratio of at least 0.8, say). FMP's term equalises the
// groups' mean probabilities whatever the criterion; the rule only
// chooses how much of it to apply. [Frontier.Model] returns the chosen
// model, sharing the trained backbone; [Frontier.WriteSVG] draws every
// setting's validation and test accuracy against the rule's criterion, the
// choice and the rule. [Model.WithFMP] debiases (or re-debiases) a trained model
// with a given setting. No single λf fits every graph: choose it on your
// validation data.
//
// # The layer
//
// [New](adj, sens, cfg) builds the layer on a normalised propagation
// matrix (Ã = D̂^-½(A + I)D̂^-½ from [graph.NormalizedAdjacency], or
// [graph.GCNNorm] with normalisation; anything else is refused with
// [ErrNotPropagation]) for the sensitive attribute sens (group ids
// 0..G−1, −1 unknown). Its [Layer.Forward] runs K unrolled steps of the
// paper's primal-dual iteration: propagation with a skip connection, then
// a closed-form gradient step that pulls the groups' mean predicted
// probabilities together, with a dual variable projected onto an l∞
// ball. The K steps are one op with a hand-written backward, so training
// gradients flow through all of them (as Config.TrainMode says).
//
// The knobs ([Config]; [DefaultConfig] holds the defaults):
//
//   - LambdaS (λs ≥ 0, default 1): smoothing. γ = 1/(1+λs) weighs the
//     backbone's logits against their propagation; λs = 0 debiases
//     without propagating.
//   - LambdaF (λf ≥ 0, default 2): the fairness budget. With Normalized
//     scaling it bounds how far the fairness steps move a node's logits:
//     at most λf/2 per logit without propagation, λf/4 root-mean-square
//     with it, whatever the graph's size. λf = 0 is propagation only, bit
//     for bit. It is a bound, not a target: past a value that depends on
//     the data, ρ and K the dual never reaches it within the K steps and a
//     larger λf changes nothing; and the thresholded ΔDP need not fall
//     monotonically in λf (the steps equalise the groups' mean
//     softmax(F/τ), and decision rates can cross parity first). Choose
//     λf with NewFrontier, which evaluates every value on validation
//     data.
//   - K (default 10): unrolled steps.
//   - Temperature (τ, default 0.5): the fairness term acts on softmax(F/τ);
//     smaller τ tracks thresholded decisions more closely but slows the
//     dual.
//   - Rho (ρ ∈ (0, 4], default 4): the dual step, as a fraction of the
//     largest step the iteration's convergence condition allows.
//   - Scaling and TrainMode: see the next two sections.
//   - PerGroupRows: one Δs row and dual row per group also for a binary
//     attribute (three or more groups always use them).
//
// # Scaling
//
// [Normalized] (the default) measures the dual in units of ‖Δs‖², which
// gives λf the meaning above: a budget on how far the fairness steps move
// a node's logits, independent of the graph's size. [Paper] is the
// published step sizes, β = 1/(2γ) and radius λf, under which a step
// moves a node by about γβ/n_group: on graphs of thousands of nodes λf
// has no visible effect. Paper is kept, exactly as published, for
// comparison.
//
// # Training modes
//
// [InferenceOnly] (the default) applies the fairness steps in evaluation
// only: the backbone is trained through propagation, and FMP debiases at
// validation, test and deployment. An InferenceOnly layer reads the
// model's [*layers.Phase]: call [Layer.SetPhase] (On and NewModel do), or
// Forward returns [ErrNoPhase]. [ConstantDual] trains through the primal
// steps with the dual held constant in the backward pass; [EndToEnd] (the
// paper) back-propagates through every step, the dual included. Forward
// values in evaluation are the same in every mode.
//
// # Graphs larger than memory
//
// [Layer.Apply] runs the same K steps on plain n × c logits, without an
// expression graph: four n × c buffers whatever K is, bit-identical to
// Forward's evaluation pass. With a backbone trained in mini-batches
// (package layers/minibatch, whose Logits computes the whole graph's
// logits layer by layer) it debiases a graph of any size that its sparse
// matrix fits: on a generated graph of 10 million nodes and 100 million
// edges, New and K = 10 steps take about 80 s on two shared cores and
// 0.5 GB besides the matrix (examples/paper/scale). [NewLogitsFrontier]
// chooses the setting on such logits. This is the InferenceOnly mode;
// EndToEnd and ConstantDual need every node's logits at every training
// step and stay full-batch.
//
// Past one machine, [Steps] splits the K steps into work on each node
// and one sum over the nodes per step (the groups' summed
// probabilities, G × c numbers), for an engine that holds the nodes
// apart and computes the sparse products itself: package fmp/fmpbeam (a
// module of its own) runs them on Apache Beam.
//
// # Auditing
//
// The sensitive attribute enters only in the fairness steps. [Explain]
// runs FMP once on a backbone's logits (a trained model's:
// Model.Backbone's output; no retraining) and returns an [AuditReport]:
// the output and the output of the same K steps without the fairness
// steps, the per-node influence (their difference), the final dual and
// the per-group mean probability shifts.
//
// # Errors
//
// Constructors (New, NewSoft, On, NewModel, Forward, Explain,
// NewFrontier) validate their inputs (config fields, shapes, dtypes,
// group ids, the propagation matrix, the phase, the graph of a backbone)
// and return errors naming the node or field and what was expected;
// sentinels [ErrNotPropagation], [ErrNoPhase] and [ErrNotRecorded] (from
// saving a Model), and [train.ErrPhaseMismatch] from NewFrontier, can be
// tested with errors.Is. The ops never panic inside a VM. Nothing in this
// package panics on user input.
package fmp
