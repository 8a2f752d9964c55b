package fmp

import (
	"context"
	"errors"
	"fmt"

	"github.com/fairmp/fairmp/graph"
	"github.com/fairmp/fairmp/graph/features"
	"github.com/fairmp/fairmp/layers"
	"github.com/fairmp/fairmp/layers/train"
	G "gorgonia.org/gorgonia"
)

// ModelConfig configures an FMP node classifier: an MLP (the feature
// transformation, producing X_trans = logits) followed by an FMP layer on
// the graph's propagation matrix.
type ModelConfig struct {
	// MLP is the backbone; its Out is c, the number of classes FMP works on, and
	// its Name prefixes the parameter names.
	MLP layers.MLPConfig `json:"mlp"`
	// OnConfig is what On puts on the MLP: the propagation and the FMP
	// layer (fields Propagation and FMP).
	OnConfig
}

// OnConfig is what On puts on a backbone, and what a model file records
// of a Model besides its backbone.
type OnConfig struct {
	// Propagation says how Ã, the matrix FMP smooths on, is built from the
	// graph. Default: self-loops and symmetric normalisation,
	// Ã = D̂^-1/2 (A+I) D̂^-1/2 (the paper's).
	Propagation layers.Propagation `json:"propagation"`
	// FMP configures the FMP layer.
	FMP Config `json:"fmp"`
}

// DefaultOnConfig returns the paper's propagation and DefaultConfig.
func DefaultOnConfig() OnConfig {
	return OnConfig{Propagation: layers.DefaultPropagation(), FMP: DefaultConfig()}
}

// Validate checks the propagation and the FMP configuration.
func (c OnConfig) Validate() error {
	if err := c.Propagation.Validate(); err != nil {
		return fmt.Errorf("fmp: OnConfig.%w", err)
	}
	if err := notDoublyStochastic(c.Propagation); err != nil {
		return fmt.Errorf("fmp: OnConfig.%w", err)
	}
	return c.FMP.Validate()
}

// notDoublyStochastic returns an error for a doubly stochastic
// propagation, which FMP cannot smooth over.
func notDoublyStochastic(p layers.Propagation) error {
	if p.DoublyStochastic {
		return fmt.Errorf("Propagation.DoublyStochastic is on, want it off: FMP smooths over D̂^-½(A + wI)D̂^-½, from which it derives its step sizes (the backbone may propagate over a doubly stochastic matrix: its own configuration's Propagation)")
	}
	return nil
}

// DefaultModelConfig returns a 2-layer MLP in → 64 → classes (the layers
// package defaults: ReLU, dropout 0.5, float64, seed 1, name "mlp"), the
// default propagation matrix, and FMP with DefaultConfig.
func DefaultModelConfig(in, classes int) ModelConfig {
	return ModelConfig{MLP: layers.DefaultMLPConfig(in, classes), OnConfig: DefaultOnConfig()}
}

// Validate checks every part.
func (c ModelConfig) Validate() error {
	if err := c.MLP.Validate(); err != nil {
		return fmt.Errorf("fmp: ModelConfig.MLP: %w", err)
	}
	if c.MLP.Out < 2 {
		return fmt.Errorf("fmp: ModelConfig.MLP.Out = %d classes, want ≥ 2 (FMP works on class logits)", c.MLP.Out)
	}
	return c.OnConfig.Validate()
}

// Model is a backbone followed by an FMP layer: FMP(backbone(X)) on the
// graph's propagation matrix. The backbone is any layers.Model producing
// n × c class logits (MLP, GCN, SGC, APPNP, GAT, JKNet, or the user's
// own), so that the paper's MLP → FMP is one case of it. Model is a
// layers.Model itself: train.Fit trains it, train.Predict evaluates it,
// modelio.Save and modelio.Load handle it (its kind, "fmp", is a
// wrapper: the backbone must be of a declared kind too). The backbone's dropout and the FMP layer share one
// *layers.Phase, which the trainer switches.
type Model struct {
	backbone layers.Model
	layer    *Layer
	adj      *graph.Matrix
	gr       *graph.Graph
	prop     layers.Propagation
	phase    *layers.Phase
	recorded *Recorded // nil until Record
}

var (
	_ layers.GraphModel = (*Model)(nil)
	_ layers.Phased     = (*Model)(nil)
	_ layers.Wrapper    = (*Model)(nil)
)

// On puts an FMP layer on backbone: the model's output is FMP(backbone(X))
// on the graph gr (Ã built from gr here as cfg.Propagation says; the
// default is the paper's D̂^-½(A+I)D̂^-½), with the FMP layer configured
// by cfg.FMP, for the sensitive attribute sens (groups 0..G−1, −1
// unknown).
// phase is the training switch the trainer drives; a backbone that
// reports its phase (layers.Phased) must have been built with the same
// one. The backbone may already be trained: then On debiases it without
// retraining (choose cfg with Frontier).
//
// On returns an error for an invalid cfg or sens (see New), a nil
// backbone or graph, or a backbone built with another phase or on
// another graph.
func On(backbone layers.Model, gr *graph.Graph, sens []int, cfg OnConfig, phase *layers.Phase) (*Model, error) {
	if backbone == nil || gr == nil {
		return nil, fmt.Errorf("fmp: On: nil backbone or graph")
	}
	if ph, ok := backbone.(layers.Phased); ok && ph.Phase() != phase {
		return nil, fmt.Errorf("fmp: On: %T was built with another *layers.Phase than the one given: the trainer would switch only one of them (give On the backbone's phase; after modelio.Load, that is the Env.Phase it was loaded with)", backbone)
	}
	if gm, ok := backbone.(layers.GraphModel); ok && gm.Graph() != nil && gm.Graph() != gr && gm.Graph().Fingerprint() != gr.Fingerprint() {
		b := gm.Graph()
		if b.N() == gr.N() && b.NumEdges() == gr.NumEdges() {
			return nil, fmt.Errorf("fmp: On: %T was built on another graph than the one given: the same %d nodes and %d edges, but other edges (structure fingerprints %016x and %016x)", backbone, gr.N(), gr.NumEdges(), b.Fingerprint(), gr.Fingerprint())
		}
		return nil, fmt.Errorf("fmp: On: %T was built on another graph (%d nodes, %d edges) than the one given (%d nodes, %d edges)", backbone, b.N(), b.NumEdges(), gr.N(), gr.NumEdges())
	}
	if err := cfg.Propagation.Validate(); err != nil {
		return nil, fmt.Errorf("fmp: On: %w", err)
	}
	if err := notDoublyStochastic(cfg.Propagation); err != nil {
		return nil, fmt.Errorf("fmp: On: %w", err)
	}
	adj, err := cfg.Propagation.Matrix(gr)
	if err != nil {
		return nil, fmt.Errorf("fmp: On: %w", err)
	}
	l, err := New(adj, sens, cfg.FMP)
	if err != nil {
		return nil, err
	}
	l.SetPhase(phase)
	return &Model{backbone: backbone, layer: l, adj: adj, gr: gr, prop: cfg.Propagation, phase: phase}, nil
}

// NewModel builds the paper's model, MLP → FMP: an MLP configured by
// cfg.MLP in g, then On with cfg.OnConfig. It returns an
// error for an invalid configuration or inputs (see ModelConfig.Validate,
// layers.NewMLP and On).
func NewModel(g *G.ExprGraph, gr *graph.Graph, sens []int, cfg ModelConfig, phase *layers.Phase) (*Model, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	mlp, err := layers.NewMLP(g, nil, cfg.MLP, phase)
	if err != nil {
		return nil, err
	}
	return On(mlp, gr, sens, cfg.OnConfig, phase)
}

// Config returns the FMP layer's configuration.
func (m *Model) Config() Config { return m.layer.cfg }

// Record records the FMP layer's duals on the model's graph (see Recorded):
// it computes the backbone's logits on every node from the features x
// (layer by layer, layers.LayerwiseLogits, with the parameters' current
// values) and runs the layer on them. Call it on the trained model, with
// the setting chosen: model files then record the duals, and package
// fmp/score applies them to nodes that arrive later. It returns an error
// for a backbone that is not declared in a Flow's primitives
// (layers.BlockModel) or features that do not match the graph.
func (m *Model) Record(x features.Source) error {
	bm, ok := m.backbone.(layers.BlockModel)
	if !ok {
		return fmt.Errorf("fmp: Model.Record: the %T backbone has no Compute (layers.BlockModel): its logits cannot be computed outside its gorgonia graph", m.backbone)
	}
	if x == nil || x.Rows() != m.gr.N() {
		return fmt.Errorf("fmp: Model.Record: features for %d nodes, the model's graph has %d", rowsOf(x), m.gr.N())
	}
	z, err := layers.LayerwiseLogits(bm, bm.Matrix(), x)
	if err != nil {
		return fmt.Errorf("fmp: Model.Record: %w", err)
	}
	_, f, err := m.layer.Record(z)
	if err != nil {
		return fmt.Errorf("fmp: Model.Record: %w", err)
	}
	m.recorded = f
	return nil
}

func rowsOf(x features.Source) int {
	if x == nil {
		return 0
	}
	return x.Rows()
}

// Recorded returns the duals Record recorded (or a model file held), nil
// before.
func (m *Model) Recorded() *Recorded { return m.recorded }

// OnConfig returns what On was given: the propagation and the FMP
// layer's configuration. On(m.Backbone(), gr, sens, m.OnConfig(), phase)
// puts the same FMP on another graph or sensitive attribute.
func (m *Model) OnConfig() OnConfig { return OnConfig{Propagation: m.prop, FMP: m.layer.cfg} }

// Layer returns the FMP layer.
func (m *Model) Layer() *Layer { return m.layer }

// Backbone returns the backbone.
func (m *Model) Backbone() layers.Model { return m.backbone }

// Graph returns the graph the model was built on.
func (m *Model) Graph() *graph.Graph { return m.gr }

// Phase returns the phase shared by the backbone and the FMP layer.
func (m *Model) Phase() *layers.Phase { return m.phase }

// SensitiveAttribute returns the sensitive attribute the FMP layer
// debiases for (one group id per node, −1 unknown). Do not modify it.
func (m *Model) SensitiveAttribute() []int { return m.layer.sens }

// Matrix returns the propagation matrix Ã.
func (m *Model) Matrix() *graph.Matrix { return m.adj }

// Learnables returns the backbone's parameters (FMP has none).
func (m *Model) Learnables() G.Nodes { return m.backbone.Learnables() }

// Forward returns the n × classes logits F^K for the features x.
func (m *Model) Forward(x *G.Node) (*G.Node, error) {
	h, err := m.backbone.Forward(x)
	if err != nil {
		return nil, err
	}
	return m.layer.Forward(h)
}

// WithFMP returns a model that shares m's backbone (the same parameter
// nodes: no copy, no retraining) and applies an FMP layer configured by
// cfg on the same graph, propagation and sensitive attribute, with the
// same phase. It debiases a trained model (or un-debiases it, with
// LambdaF = 0). It returns an error if cfg is invalid.
func (m *Model) WithFMP(cfg Config) (*Model, error) {
	l, err := New(m.adj, m.layer.sens, cfg)
	if err != nil {
		return nil, err
	}
	l.SetPhase(m.phase)
	c := *m
	c.layer, c.recorded = l, nil // the duals were recorded for m's setting
	return &c, nil
}

// FitTwoStage is the recommended way to train a Model: it trains the
// backbone with λf = 0 (propagation only, so that best-validation
// selection picks the epoch on propagation-only accuracy) with train.Fit,
// and returns the result; m itself, which shares the trained backbone,
// is then the debiased model. To choose λf on validation data instead of
// keeping m's, follow with NewFrontier.
func (m *Model) FitTwoStage(ctx context.Context, task *train.Task, tc train.Config) (*train.Result, error) {
	base := m.Config()
	base.LambdaF = 0
	bm, err := m.WithFMP(base)
	if err != nil {
		return nil, err
	}
	res, err := train.Fit(ctx, bm, task, tc)
	if err != nil {
		return nil, fmt.Errorf("fmp: Model.FitTwoStage: %w", err)
	}
	return res, nil
}

// kindFMP declares Model to layers' registry of kinds as a wrapper: a
// model file of an fmp.Model records the backbone's kind, configuration
// and parameters, and its OnConfig. The sensitive attribute is not in
// it: the file holds its fingerprint, and the caller gives the attribute
// back (modelio.Env.Sens), so that what the model uses is what the
// fingerprint checked.
var kindFMP = layers.MustDeclareWrapper(layers.WrapperSpec[Saved, *Model]{
	Name:    "fmp",
	Title:   "FMP",
	Summary: "fair message passing on a backbone (Jiang et al., AAAI 2024)",
	Wrap: func(backbone layers.Model, gr *graph.Graph, sens []int, s Saved, phase *layers.Phase) (*Model, error) {
		if gr == nil {
			return nil, fmt.Errorf("fmp: no graph given, want the graph the model was trained on")
		}
		if sens == nil {
			return nil, fmt.Errorf("fmp: no sensitive attribute given, want the one the model was trained with")
		}
		m, err := On(backbone, gr, sens, s.OnConfig, phase)
		if err != nil {
			return nil, err
		}
		m.recorded = s.Recorded
		return m, nil
	},
	Config: func(m *Model) Saved { return Saved{OnConfig: m.OnConfig(), Recorded: m.recorded} },
})

// Saved is what a model file records of a Model besides its backbone
// (modelio.File's WrapperConfig, in JSON): its OnConfig and its duals
// (Model.Record). A program that runs a saved model itself decodes it
// (package fmp/score does). Files written before the duals were required
// may lack them: they load, and fmp/score scores them with Recompute.
type Saved struct {
	OnConfig
	Recorded *Recorded `json:"fitted,omitempty"`
}

// ErrNotRecorded is returned when saving a Model whose duals were not
// recorded (Model.Record), or were dropped by Model.WithFMP: the file
// would not let nodes that arrive later be scored with the training
// graph's duals.
var ErrNotRecorded = errors.New("the FMP model's duals are not recorded: call Model.Record with the features on the trained model, with the setting chosen, before saving it")

// SaveCheck returns an error wrapping ErrNotRecorded when the model's
// duals are not recorded: modelio.Save calls it and refuses the model,
// since saving is where the duals are needed. Copying the model's
// configuration (Config, a rebuild) needs no duals and is not refused.
func (m *Model) SaveCheck() error {
	if m.recorded == nil {
		return fmt.Errorf("fmp: saving: %w", ErrNotRecorded)
	}
	return nil
}

// Validate checks both parts, and that the duals were recorded with the
// FMP configuration recorded.
func (s Saved) Validate() error {
	if err := s.OnConfig.Validate(); err != nil {
		return err
	}
	if s.Recorded == nil {
		return nil
	}
	if err := s.Recorded.Validate(); err != nil {
		return err
	}
	if s.Recorded.Config != s.FMP {
		return fmt.Errorf("fmp: the recorded duals were computed with another FMP setting than the model's")
	}
	return nil
}

// MarshalText encodes the scaling by name.
func (s Scaling) MarshalText() ([]byte, error) {
	if s != Normalized && s != Paper {
		return nil, fmt.Errorf("fmp: cannot encode %v", s)
	}
	return []byte(s.String()), nil
}

// UnmarshalText decodes a scaling name ("Normalized" or "Paper").
func (s *Scaling) UnmarshalText(b []byte) error {
	for _, v := range []Scaling{Normalized, Paper} {
		if string(b) == v.String() {
			*s = v
			return nil
		}
	}
	return fmt.Errorf("fmp: unknown scaling %q, want Normalized or Paper", b)
}

// MarshalText encodes the training mode by name.
func (m TrainMode) MarshalText() ([]byte, error) {
	if m < EndToEnd || m > InferenceOnly {
		return nil, fmt.Errorf("fmp: cannot encode %v", m)
	}
	return []byte(m.String()), nil
}

// UnmarshalText decodes a training mode name.
func (m *TrainMode) UnmarshalText(b []byte) error {
	for _, v := range []TrainMode{EndToEnd, ConstantDual, InferenceOnly} {
		if string(b) == v.String() {
			*m = v
			return nil
		}
	}
	return fmt.Errorf("fmp: unknown training mode %q, want EndToEnd, ConstantDual or InferenceOnly", b)
}
