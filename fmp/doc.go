// Package fmp implements Fair Message Passing (FMP; Jiang et al., "Chasing
// Fairness in Graphs: A GNN Architecture Perspective", AAAI 2024) as
// gorgonia graph nodes: a layer that propagates a backbone's logits over a
// graph while pushing the groups of a sensitive attribute towards equal
// mean predicted probabilities, the custom ops it is built from, and an
// auditing API that shows, from one forward pass, what the sensitive
// attribute changed.
//
// # Concepts
//
// FMP works on X_trans (n × c), the output of a feature transformation
// (typically an MLP's logits, c = number of classes). It approximately
// solves
//
//	min_F (λs/2) tr(Fᵀ L̃ F) + ½‖F − X_trans‖²_F + λf ‖Δs SF(F)‖₁
//
// where L̃ = I − Ã is the normalised Laplacian (Ã = D̂^-1/2 (A+I) D̂^-1/2,
// graph.NormalizedAdjacency), SF the row softmax, and Δs a group-contrast
// matrix (DeltaS): Δs·SF(F) holds the differences of the groups' mean
// predicted probability of each class, i.e. demographic parity in
// probability space. The solver is a primal-dual method unrolled K times
// (the paper's Steps 1–5), with γ = 1/(1+λs), F⁰ = X_trans, u⁰ = 0:
//
//	(1) X_agg = γ X_trans + (1−γ) Ã Fᵏ          (propagation with skip connection)
//	(2) F̄    = X_agg − γ ∇(Fᵏ, uᵏ)
//	(3) ū    = uᵏ + β Δs SF(F̄)                  (dual ascent)
//	(4) uᵏ⁺¹ = sign(ū) ⊙ min(|ū|, r)             (projection onto the l∞ ball)
//	(5) Fᵏ⁺¹ = X_agg − γ ∇(Fᵏ, uᵏ⁺¹)
//
// ∇(F, u) = U ⊙ S − rowsum(U ⊙ S) ⊙ S, with S = SF(F) and U = Δsᵀu, is the
// gradient of ⟨Δs SF(F), u⟩ with respect to F (the paper's Theorem 1):
// row i is J_i U_i with J_i = diag(s_i) − s_i s_iᵀ the softmax Jacobian of
// row i. It costs O(n c) per step, against O(m c) for the sparse product.
// Every step is a gorgonia node, so training gradients flow through all K
// steps (see Training modes).
//
// # Ops
//
// FairGrad(F, u) computes ∇(F, u); GroupGap(F) computes Δs·SF(F);
// ProjectLinf(x, r) the l∞ projection. All are custom ops for float32 and
// float64 (arithmetic in float64 per row, softmax with max subtraction:
// logits of ±1e4 give finite results). Their derivatives are again
// softmax-Jacobian expressions, implemented as ops:
//
//	d⟨W, ∇(F,u)⟩/du = Δs · (J(S) W)                       (row i: J_i W_i)
//	d⟨W, ∇(F,u)⟩/dF = J(S) H,  H = W⊙U − rowsum(W⊙S)⊙U − rowsum(U⊙S)⊙W
//	d⟨W, Δs SF(F)⟩/dF = ∇(F, W)
//
// The projection's gradient passes where |x| < r and is zero where
// |x| ≥ r: an entry exactly on the boundary counts as clipped, so r = 0
// (λf = 0) gives an exactly zero gradient. Second-order derivatives are not
// implemented. The ops implement gorgonia's SDOp (symbolic
// differentiation, used by Grad and the TapeMachine), not ADOp: the
// LispMachine is not supported.
//
// # Groups
//
// The sensitive attribute is a []int of group ids 0..G−1, −1 meaning
// unknown (masked out of Δs). For a binary attribute Δs is the paper's
// single row: +1/n₁ on group 1, −1/n₀ on group 0 (n_g counted among known
// nodes). For G ≥ 3 groups (the paper's future work) Δs has one row per
// group, 1/n_g on the group's members minus 1/n_known on every known node,
// and the dual u has one row per group; the projection is entry-wise.
// For G = 2 the per-group rows are p₀Δ and −p₁Δ (p_g = n_g/n_known), so
// λf Σ_g ‖row_g SF(F)‖₁ = λf ‖Δ SF(F)‖₁: the same objective as the paper,
// but a different (2 × c) dual iteration; Config.PerGroupRows selects it,
// the default keeps the paper's exact form.
//
// # Scaling: what λf means
//
// Paper scaling (β = 1/(2γ), radius r = λf) is the algorithm as published.
// Its effect vanishes on large graphs: step 5 moves node i by
// γ J_i Δs_i u with |Δs_i| = 1/n_group and |u| ≤ min(r, Kβ·|gap|), so a
// node moves by at most about γ·K/(2γ)/n_group; on Bail (18,876 nodes) λf
// from 10 to 1000 left every metric unchanged.
//
// Normalized scaling (the default) measures the dual in units of ‖Δs‖²
// (the squared spectral norm, NormSq; 1/n₀ + 1/n₁ for a binary Δs):
//
//	β = ρ / (γ ‖Δs‖²),   r = λf / ‖Δs‖².
//
// Step size. Steps 1–5 are a linearised primal-dual iteration (Chambolle
// and Pock) for min_F f(F) + λf ‖h(F)‖₁ with h(F) = Δs SF(F): the primal
// step is γ (a gradient step of size γ on the smooth part is exactly
// X_agg), the dual step β, and the method's step condition is
// γ β ‖K‖² ≤ 1 for the linearised operator K = ∂h/∂F. Row i of K·V is
// Δs_i J_i V_i, so ‖K‖ ≤ ‖Δs‖ · max_i ‖J_i‖₂, and ‖J_i‖₂ ≤ 1/2: for a unit
// vector v, vᵀJ_i v = Σ_j s_j v_j² − (Σ_j s_j v_j)² is the variance of v
// under the distribution s_i, at most (max v − min v)²/4 ≤ 1/2
// (Popoviciu). Hence γβ‖Δs‖²/4 ≤ 1, i.e. β ≤ 4/(γ‖Δs‖²): ρ ≤ 4. The
// paper's β = 1/(2γ) corresponds to ρ = ‖Δs‖²/2 ≈ 2/n, which is why its
// dual barely moves on large graphs.
//
// Radius. With r = λf/‖Δs‖², node i's perturbation in step 5 is
// γ J_i (Δs_i u) with |Δs_i|·r = λf·|Δs_i|/‖Δs‖²; for a binary Δs this is
// λf·n_other/n_known ≤ λf (n_other: the size of the other group). Each row
// of J_i has absolute sum 2 s_j (1 − s_j) ≤ 1/2, so one step moves each
// logit of node i by at most γ λf/2 (times n_other/n_known ≤ 1),
// whatever n. With λs = 0 (γ = 1, no propagation) this bounds the total
// change of every logit: |F^K − X_trans| ≤ λf/2 entry-wise (binary Δs).
// With propagation, the change D = F^K − (propagation-only output) obeys
// Dᵏ⁺¹ = (1−γ) Ã Dᵏ − γ∇ₖ with ‖Ã‖₂ ≤ 1, so ‖D‖_F ≤ max_k ‖∇ₖ‖_F ≤
// √c·λf/(2‖Δs‖), and since n‖Δs‖² ≥ 4 the root-mean-square change over
// all n·c logits is at most λf/4, for a binary Δs. λf is thus a budget on how far the fairness steps may move a
// node's logits, the same on 400 nodes and on 67,000.
//
// # Temperature
//
// The paper's term equalises the groups' mean predicted probability, but
// demographic parity is measured on thresholded predictions; a model can
// reach equal mean probabilities while its decisions stay unequal (on
// Bail, FMP with τ = 1 stalls at that point: more λf changes nothing).
// Config.Temperature τ replaces SF(F) by SF(F/τ) in the fairness term
// (the propagation and the output are unchanged): as τ → 0 the group
// means of SF(F/τ) tend to the groups' positive rates. Its gradient is
// ∇_τ(F, u) = (1/τ)(U ⊙ S − rowsum(U ⊙ S) ⊙ S) with S = SF(F/τ), whose
// Jacobian norm is at most 1/(2τ). Normalized scaling therefore uses
//
//	β = ρ τ² / (γ ‖Δs‖²),   r = λf τ / ‖Δs‖²,
//
// which keeps ρ ≤ 4 as the step condition and keeps λf's meaning (a step
// moves a logit by at most γ·(1/τ)·(1/2)·|Δs_i|·r = γλf·p/2). Equivalently,
// FMP with temperature τ on X equals τ times FMP with τ = 1 on X/τ with
// λf/τ (tested). Smaller τ sharpens the surrogate but also slows the dual
// (β ∝ τ²), so with K unrolled steps an intermediate τ works best
// (τ = 0.5 in the study). With Paper scaling, τ = 1 is the published
// algorithm.
//
// # Training modes
//
// Config.TrainMode selects how the fairness steps take part in training;
// forward values in evaluation are identical across modes:
//
//   - EndToEnd: gradients flow through every step, the dual included (the
//     paper).
//   - ConstantDual: the dual u is a constant in the backward pass; the
//     backbone is trained through the primal steps with the debiasing
//     perturbation present but not differentiated through.
//   - InferenceOnly: while the layer's Phase (layers.Phase, shared with the
//     model and set by the trainer) is training, u ≡ 0, so the backbone is
//     trained with propagation only; in evaluation (validation, test,
//     deployment) the fairness steps apply.
//
// Training through the fairness steps lets the backbone undo them: its
// logits grow until the bounded shift no longer flips decisions. The same
// happens, more mildly, with InferenceOnly when the trainer keeps the
// epoch of best validation accuracy, because that accuracy is measured
// with debiasing on and favours the epochs where debiasing changed least.
// The workflow that debiases most for a given accuracy cost is two-stage:
// train the model with λf = 0 (the epoch is then chosen on
// propagation-only accuracy) and debias at inference with Model.WithFMP,
// which shares the trained backbone; λf can then be chosen on validation
// data by forward passes alone.
//
// Measured (fmp/study_test.go, FAIRMP_STUDY=1; 5 seeds, test split,
// λs = 1, K = 10, τ = 0.5, λf = 2, two-stage): on Bail ΔDP fell from 7.5%
// to 2.9% for 0.5 points of accuracy; on the generated biased graph
// (datasets.DefaultSyntheticConfig, whose labels differ by 40 points
// between the groups) from 29.6% to 13.7% for 2.6 points, where the best
// group-specific thresholds chosen on the test split itself need 1.8
// points for the same halving. With τ = 1 FMP stalls on Bail at 4.5%
// whatever λf; with Paper scaling nothing changes on either graph. On NBA
// (63 test nodes) no setting changed ΔDP beyond its split noise.
//
// # Model
//
// Model (NewModel, ModelConfig) is an MLP followed by an FMP layer on the
// graph's propagation matrix. It implements layers.Model, so the one
// trainer of the library (train.Fit) trains it; the MLP's dropout and
// the FMP layer share the layers.Phase given to NewModel. modelio.Save and
// modelio.Load handle it (KindModel); the saved configuration
// includes the sensitive attribute, and Load needs the graph
// (modelio.Env.Graph).
//
// # Auditing
//
// The sensitive attribute enters only in steps 2–5. Layer.ForwardAudit
// builds, in the same graph, the output and the output of the same K steps
// with u ≡ 0; after one run Audit.Report gives both, the per-node
// influence (their difference), the final dual and the per-group mean
// probability shifts. Explain does all of it for fixed logits.
//
// # Errors
//
// Constructors (NewDeltaS, New, FairGrad, GroupGap, ProjectLinf, Forward,
// ForwardAudit, Explain) validate their inputs (config fields, shapes,
// dtypes, group ids, radius) and return errors naming the node and what was
// expected. The ops never panic inside a VM: a shape or dtype mismatch at
// run time is returned as an error. Nothing in this package panics on user
// input.
package fmp
