package fmp

import (
	"errors"
	"fmt"
	"math"

	"github.com/fairmp/fairmp/graph"
	"github.com/fairmp/fairmp/internal/opkit"
	"github.com/fairmp/fairmp/internal/pprop"
	"github.com/fairmp/fairmp/layers"
	G "gorgonia.org/gorgonia"
)

// Scaling selects the dual step size β and the l∞ radius of the dual (see
// the package doc, "Scaling").
type Scaling int

const (
	// Normalized scales the dual step and radius by ‖Δs‖²:
	// β = ρ/(γ‖Δs‖²), radius λf/‖Δs‖². λf then bounds the logit shift
	// of a node independently of the graph's size. The default.
	Normalized Scaling = iota + 1
	// Paper is the algorithm exactly as published: β = 1/(2γ), radius
	// λf. Its effect shrinks like 1/n_group with the graph's size (Rho is
	// not used).
	Paper
)

// String returns the scaling's name.
func (s Scaling) String() string {
	switch s {
	case Normalized:
		return "Normalized"
	case Paper:
		return "Paper"
	}
	return fmt.Sprintf("Scaling(%d)", int(s))
}

// TrainMode selects how the fairness steps take part in training (see the
// package doc, "Training modes"). Forward values in evaluation are the
// same in every mode.
type TrainMode int

const (
	// EndToEnd back-propagates through every step, the dual included (the
	// paper's setting).
	EndToEnd TrainMode = iota + 1
	// ConstantDual back-propagates through the primal steps but treats
	// the dual u as a constant (no gradient through steps 3–4).
	ConstantDual
	// InferenceOnly switches the fairness steps off while the layer's
	// Phase is training (u ≡ 0: the backbone is trained with
	// propagation only) and applies them in evaluation (validation,
	// test, deployment).
	InferenceOnly
)

// String returns the mode's name.
func (m TrainMode) String() string {
	switch m {
	case EndToEnd:
		return "EndToEnd"
	case ConstantDual:
		return "ConstantDual"
	case InferenceOnly:
		return "InferenceOnly"
	}
	return fmt.Sprintf("TrainMode(%d)", int(m))
}

// Config holds FMP's settings. Zero values are taken literally; start
// from DefaultConfig.
type Config struct {
	// LambdaS (λs ≥ 0) weighs smoothness over the graph; γ = 1/(1+λs).
	// 0 disables propagation (γ = 1).
	LambdaS float64 `json:"lambda_s"`
	// LambdaF (λf ≥ 0) weighs the fairness term. 0 gives exactly the
	// propagation-only output. With Normalized scaling it bounds the
	// shift of each node's logits (see the package doc).
	LambdaF float64 `json:"lambda_f"`
	// K (1 ≤ K ≤ layers.MaxSteps) is the number of unrolled steps.
	K int `json:"k"`
	// Scaling selects the dual step size and radius.
	Scaling Scaling `json:"scaling"`
	// Rho (0 < ρ ≤ 4) is the dual step factor of Normalized scaling,
	// β = ρ/(γ‖Δs‖²); ρ ≤ 4 is the primal-dual step condition. Paper
	// scaling does not use it.
	Rho float64 `json:"rho"`
	// TrainMode selects how the fairness steps take part in training.
	TrainMode TrainMode `json:"train_mode"`
	// Temperature (τ > 0) sharpens the fairness term: FMP equalises the
	// groups' mean of SF(F/τ) instead of SF(F). τ = 1 is the paper's
	// objective (mean predicted probability); τ < 1 brings the surrogate
	// closer to the groups' rate of positive predictions (demographic
	// parity of thresholded predictions). Normalized scaling adapts β
	// and the radius so that ρ ≤ 4 and the meaning of λf do not change;
	// Paper scaling does not (τ = 1 is the published algorithm).
	Temperature float64 `json:"temperature"`
	// PerGroupRows makes a binary attribute use one Δs row per group
	// instead of the paper's single row (attributes with three or more
	// groups always use one row per group).
	PerGroupRows bool `json:"per_group_rows"`
}

// DefaultConfig returns the defaults, chosen on validation data (a
// generated biased graph and Bail; see DESIGN.md): λs = 1, λf = 2,
// K = 10, Normalized scaling with ρ = 4, temperature τ = 0.5,
// InferenceOnly training, the paper's single Δs row for a binary
// attribute. τ = 0.5 is the largest temperature that halved the
// validation ΔDP on Bail (τ = 1 stalls at equal mean probabilities), and
// λf = 2 the smallest λf that halved it on both data sets.
func DefaultConfig() Config {
	return Config{LambdaS: 1, LambdaF: 2, K: 10, Scaling: Normalized, Rho: 4, Temperature: 0.5, TrainMode: InferenceOnly}
}

// Validate returns an error naming the first invalid field.
func (c Config) Validate() error {
	finite := func(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
	switch {
	case !finite(c.LambdaS) || c.LambdaS < 0:
		return fmt.Errorf("fmp: Config.LambdaS = %v, want a finite value ≥ 0", c.LambdaS)
	case !finite(c.LambdaF) || c.LambdaF < 0:
		return fmt.Errorf("fmp: Config.LambdaF = %v, want a finite value ≥ 0", c.LambdaF)
	case c.K < 1 || c.K > layers.MaxSteps:
		return fmt.Errorf("fmp: Config.K = %d, want 1 ≤ K ≤ %d (layers.MaxSteps)", c.K, layers.MaxSteps)
	case c.Scaling != Normalized && c.Scaling != Paper:
		return fmt.Errorf("fmp: Config.Scaling = %v, want Normalized or Paper", c.Scaling)
	case c.Scaling == Normalized && !(c.Rho > 0 && c.Rho <= 4):
		return fmt.Errorf("fmp: Config.Rho = %v, want 0 < ρ ≤ 4 with Normalized scaling", c.Rho)
	case !finite(c.Temperature) || !(c.Temperature > 0):
		return fmt.Errorf("fmp: Config.Temperature = %v, want a finite τ > 0", c.Temperature)
	case c.TrainMode < EndToEnd || c.TrainMode > InferenceOnly:
		return fmt.Errorf("fmp: Config.TrainMode = %v, want EndToEnd, ConstantDual or InferenceOnly", c.TrainMode)
	}
	return nil
}

// Gamma returns γ = 1/(1+λs).
func (c Config) Gamma() float64 { return 1 / (1 + c.LambdaS) }

// String names the setting in a reader's words, for messages: "λs 1,
// λf 2 (K 10, τ 0.5)", with the scaling and ρ when they are not the
// defaults' and the training mode when it is not InferenceOnly.
func (c Config) String() string {
	s := fmt.Sprintf("λs %g, λf %g (K %d, τ %g", c.LambdaS, c.LambdaF, c.K, c.Temperature)
	if c.Scaling != Normalized {
		s += ", " + c.Scaling.String() + " scaling"
	} else if c.Rho != 4 {
		s += fmt.Sprintf(", ρ %g", c.Rho)
	}
	if c.TrainMode != InferenceOnly {
		s += ", " + c.TrainMode.String()
	}
	if c.PerGroupRows {
		s += ", a row per group"
	}
	return s + ")"
}

// Layer is an FMP layer bound to a graph and a sensitive attribute. It
// maps X_trans (n × c, typically an MLP's logits) to F^K, the output of K
// unrolled steps of the paper's Steps 1–5. A Layer is immutable after
// New except for its Phase.
type Layer struct {
	cfg   Config
	adj   *graph.Matrix
	ds    *deltaS
	sens  []int
	phase *layers.Phase
	// phaseSet records a SetPhase call: an InferenceOnly layer whose
	// phase was never set would apply the fairness steps in training too.
	phaseSet bool
	beta     float64
	rad      float64
}

// New returns an FMP layer for the normalised adjacency adj (n × n,
// Ã = D̂^-1/2 (A+I) D̂^-1/2, see graph.NormalizedAdjacency), the sensitive
// attribute sens (length n, groups 0..G−1, −1 = unknown) and cfg.
//
// New returns an error if cfg is invalid, adj is nil or not n × n, adj is
// not a normalised propagation matrix of a graph (ErrNotPropagation: it
// must be D̂^-½(A + wI)D̂^-½ of an unweighted graph, as
// graph.NormalizedAdjacency and graph.GCNNorm with Normalize build it), or
// sens is not a valid attribute: group ids 0..G−1 (G ≥ 2) without an empty
// group, −1 for unknown.
func New(adj *graph.Matrix, sens []int, cfg Config) (*Layer, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if adj == nil {
		return nil, fmt.Errorf("fmp: New: nil adjacency")
	}
	r, c := adj.Dims()
	if r != c || r != len(sens) {
		return nil, fmt.Errorf("fmp: New: adjacency is %d × %d and sens has %d entries, want n × n with n = len(sens)", r, c, len(sens))
	}
	if err := checkPropagation(adj); err != nil {
		return nil, fmt.Errorf("fmp: New: adjacency: %w", err)
	}
	ds, err := newDeltaS(sens, cfg.PerGroupRows)
	if err != nil {
		return nil, err
	}
	return newChecked(adj, append([]int(nil), sens...), ds, cfg), nil
}

// newChecked builds a layer from a checked adjacency, a sensitive
// attribute (not copied) and its group contrast, and a valid cfg.
func newChecked(adj *graph.Matrix, sens []int, ds *deltaS, cfg Config) *Layer {
	l := &Layer{cfg: cfg, adj: adj, ds: ds, sens: sens}
	l.beta, l.rad = dualStep(cfg, ds.NormSq())
	return l
}

// dualStep returns the dual step size β and the l∞ radius of the dual
// that cfg's scaling gives for a group contrast of squared norm normSq.
func dualStep(cfg Config, normSq float64) (beta, radius float64) {
	gamma := cfg.Gamma()
	if cfg.Scaling == Paper {
		return 1 / (2 * gamma), cfg.LambdaF
	}
	tau := cfg.Temperature
	return cfg.Rho * tau * tau / (gamma * normSq), cfg.LambdaF * tau / normSq
}

// SetPhase sets the training/evaluation switch the layer reads (shared
// with the rest of the model; nil means evaluation only). Only
// InferenceOnly uses it, and Forward refuses an InferenceOnly layer whose
// SetPhase was never called: call SetPhase(nil) for a layer that is never
// trained through. Call it before Forward.
func (l *Layer) SetPhase(p *layers.Phase) { l.phase, l.phaseSet = p, true }

// Config returns the layer's settings.
func (l *Layer) Config() Config { return l.cfg }

// groupContrast returns the layer's group-contrast matrix.
func (l *Layer) groupContrast() *deltaS { return l.ds }

// DualStep returns the dual step size β and the l∞ radius of the dual
// that the layer's scaling gives.
func (l *Layer) DualStep() (beta, radius float64) { return l.beta, l.rad }

// Forward returns F^K for x (n × c, float32 or float64, c ≥ 2). The K
// steps are one op with a hand-written backward, gradients flowing as
// Config.TrainMode says (DESIGN.md, "The K steps as one op"). It
// returns an error if x does not have n rows and at least 2 columns.
func (l *Layer) Forward(x *G.Node) (*G.Node, error) {
	out, _, err := l.forward(x)
	return out, err
}

// ErrNoPhase is returned by Layer.Forward for an InferenceOnly layer whose
// SetPhase was never called.
var ErrNoPhase = errors.New("InferenceOnly training needs the model's *layers.Phase: call SetPhase with it (SetPhase(nil) for a layer used in evaluation only)")

func (l *Layer) checkInput(x *G.Node) error {
	if x == nil {
		return fmt.Errorf("fmp: Layer.Forward: nil X_trans node")
	}
	if err := opkit.CheckFloat(x.Dtype()); err != nil {
		return fmt.Errorf("fmp: Layer.Forward: X_trans %q (node %d): %w", x.Name(), x.ID(), err)
	}
	s := x.Shape()
	if len(s) != 2 || s[0] != l.ds.N() || s[1] < 2 {
		return fmt.Errorf("fmp: Layer.Forward: X_trans %q (node %d) has shape %v, want (%d, c) with c ≥ 2", x.Name(), x.ID(), s, l.ds.N())
	}
	return nil
}

// forward builds the K steps on x: at λf > 0 the fused op (returned too,
// for the audit's dual), at λf = 0 the propagation op, whose values and
// gradients are those of the K steps with u ≡ 0 (every fairness step adds
// exactly zero), or x itself when there is no propagation either.
func (l *Layer) forward(x *G.Node) (out *G.Node, op *stepsOp, err error) {
	if err := l.checkInput(x); err != nil {
		return nil, nil, err
	}
	if l.cfg.TrainMode == InferenceOnly && !l.phaseSet {
		return nil, nil, fmt.Errorf("fmp: Layer.Forward: %w", ErrNoPhase)
	}
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("fmp: Layer.Forward: building the graph: %v", r)
		}
	}()
	if l.rad == 0 {
		out, err = l.propagation(x)
		return out, nil, err
	}
	// In the InferenceOnly mode the dual is zero while training: no
	// gradient flows through it, as in ConstantDual.
	constDual := l.cfg.TrainMode == ConstantDual || l.cfg.TrainMode == InferenceOnly
	var phase *layers.Phase
	if l.cfg.TrainMode == InferenceOnly {
		phase = l.phase
		if phase == nil {
			phase = &layers.Phase{} // evaluation; keeps the op's hash distinct
		}
	}
	op = newStepsOp(l, constDual, phase)
	if out, err = G.ApplyOp(op, x); err != nil {
		return nil, nil, err
	}
	return out, op, nil
}

// propagation builds the K steps with u ≡ 0: the propagation op
// (internal/pprop), or x itself when λs = 0.
func (l *Layer) propagation(x *G.Node) (*G.Node, error) {
	if l.cfg.Gamma() == 1 {
		return x, nil
	}
	return pprop.Apply(l.adj, x, l.cfg.Gamma(), l.cfg.K)
}

// NewSoft is New for soft group memberships: p[i] is the probability that
// node i is in group 1 (NaN: left out), for example the estimates of a
// sensitive-attribute estimator where the group is unknown and 0 or 1
// where it is known. Each node counts in group 1 with weight p_i and in
// group 0 with weight 1 − p_i: with W₁ = Σ p_i and W₀ = Σ (1 − p_i),
// Δs_i = p_i/W₁ − (1 − p_i)/W₀, which is New's binary Δs for p in {0, 1}.
// The layer's SensitiveAttribute for audits is the rounding of p (−1
// where NaN). It returns New's errors, and an error for a value of p
// outside [0, 1] that is not NaN or a group of total weight below 1/2.
func NewSoft(adj *graph.Matrix, p []float64, cfg Config) (*Layer, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if adj == nil {
		return nil, fmt.Errorf("fmp: NewSoft: nil adjacency")
	}
	r, c := adj.Dims()
	if r != c || r != len(p) {
		return nil, fmt.Errorf("fmp: NewSoft: adjacency is %d × %d and p has %d entries, want n × n with n = len(p)", r, c, len(p))
	}
	if cfg.PerGroupRows {
		return nil, fmt.Errorf("fmp: NewSoft: PerGroupRows is set, want the binary single row for soft memberships")
	}
	if err := checkPropagation(adj); err != nil {
		return nil, fmt.Errorf("fmp: NewSoft: adjacency: %w", err)
	}
	ds, err := newSoftDeltaS(p)
	if err != nil {
		return nil, err
	}
	sens := make([]int, len(p))
	for i, v := range p {
		switch {
		case math.IsNaN(v):
			sens[i] = -1
		case v > 0.5:
			sens[i] = 1
		}
	}
	return newChecked(adj, sens, ds, cfg), nil
}
