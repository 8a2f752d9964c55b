package fmp

import (
	"encoding/json"
	"fmt"

	"github.com/fairmp/fairmp/graph"
	"github.com/fairmp/fairmp/layers"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// KindModel is the kind name of Model in layers/modelio's table of kinds.
const KindModel = "fmp"

// ModelConfig configures an FMP node classifier: an MLP (the feature
// transformation, producing X_trans = logits) followed by an FMP layer on
// the graph's propagation matrix.
type ModelConfig struct {
	// MLP is the backbone; its Classes is c, the width FMP works on, and
	// its Name prefixes the parameter names.
	MLP layers.MLPConfig `json:"mlp"`
	// Propagation says how Ã is built from the graph. Default: self-loops
	// and symmetric normalisation, Ã = D̂^-1/2 (A+I) D̂^-1/2 (the paper's).
	Propagation layers.Propagation `json:"propagation"`
	// FMP configures the FMP layer.
	FMP Config `json:"fmp"`
}

// DefaultModelConfig returns a 2-layer MLP in → 64 → classes (the layers
// package defaults: ReLU, dropout 0.5, float64, seed 1, name "mlp"), the
// default propagation matrix, and FMP with DefaultConfig.
func DefaultModelConfig(in, classes int) ModelConfig {
	return ModelConfig{MLP: layers.DefaultMLPConfig(in, classes), Propagation: layers.DefaultPropagation(), FMP: DefaultConfig()}
}

// Validate checks every part.
func (c ModelConfig) Validate() error {
	if err := c.MLP.Validate(); err != nil {
		return fmt.Errorf("fmp: ModelConfig.MLP: %w", err)
	}
	if c.MLP.Classes < 2 {
		return fmt.Errorf("fmp: ModelConfig.MLP.Classes = %d, want ≥ 2 (FMP works on class logits)", c.MLP.Classes)
	}
	if err := c.Propagation.Validate(); err != nil {
		return fmt.Errorf("fmp: ModelConfig.%w", err)
	}
	return c.FMP.Validate()
}

// Model is MLP → FMP, a layers.Model trained by train.Fit. The MLP and
// the FMP layer share the phase given to NewModel, so the trainer's
// training/evaluation switch drives both dropout and the InferenceOnly
// training mode. modelio.Save and modelio.Load handle it (KindModel).
type Model struct {
	cfg   ModelConfig
	mlp   *layers.MLP
	layer *Layer
	adj   *graph.Matrix
	gr    *graph.Graph
}

var (
	_ layers.GraphModel = (*Model)(nil)
	_ layers.Phased     = (*Model)(nil)
)

// NewModel adds the model's parameters to g. gr is the graph, sens the
// sensitive attribute (groups 0..G−1, −1 unknown), phase the training
// switch shared with the trainer (nil: always evaluation). It returns an
// error for an invalid configuration or inputs (see New and
// layers.NewMLP).
func NewModel(g *G.ExprGraph, gr *graph.Graph, sens []int, cfg ModelConfig, phase *layers.Phase) (*Model, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	adj, err := cfg.Propagation.Matrix(gr)
	if err != nil {
		return nil, fmt.Errorf("fmp: NewModel: %w", err)
	}
	l, err := New(adj, sens, cfg.FMP)
	if err != nil {
		return nil, err
	}
	l.SetPhase(phase)
	mlp, err := layers.NewMLP(g, cfg.MLP, phase)
	if err != nil {
		return nil, err
	}
	return &Model{cfg: cfg, mlp: mlp, layer: l, adj: adj, gr: gr}, nil
}

// Config returns the model's configuration.
func (m *Model) Config() ModelConfig { return m.cfg }

// Layer returns the FMP layer.
func (m *Model) Layer() *Layer { return m.layer }

// Backbone returns the MLP.
func (m *Model) Backbone() *layers.MLP { return m.mlp }

// Graph returns the graph the model was built on.
func (m *Model) Graph() *graph.Graph { return m.gr }

// Phase returns the phase shared by the backbone and the FMP layer.
func (m *Model) Phase() *layers.Phase { return m.layer.phase }

// SensitiveAttribute returns the sensitive attribute the FMP layer
// debiases for (one group id per node, −1 unknown). Do not modify it.
func (m *Model) SensitiveAttribute() []int { return m.layer.sens }

// Matrix returns the propagation matrix Ã.
func (m *Model) Matrix() *graph.Matrix { return m.adj }

// Learnables returns the MLP's parameters (FMP has none).
func (m *Model) Learnables() G.Nodes { return m.mlp.Learnables() }

// Forward returns the n × classes logits F^K for the n × in features x.
func (m *Model) Forward(x *G.Node) (*G.Node, error) {
	h, err := m.mlp.Forward(x)
	if err != nil {
		return nil, err
	}
	return m.layer.Forward(h)
}

// ForwardAudit is Forward returning the auditing nodes (see
// Layer.ForwardAudit); its Output is the model's logits.
func (m *Model) ForwardAudit(x *G.Node) (*Audit, error) {
	h, err := m.mlp.Forward(x)
	if err != nil {
		return nil, err
	}
	return m.layer.ForwardAudit(h)
}

// WithFMP returns a model that shares m's backbone (the same parameter
// nodes: no copy, no retraining) and applies an FMP layer configured by
// cfg on the same graph and sensitive attribute. It is the two-stage
// workflow: train m with λf = 0 (the trainer then selects the epoch by the
// propagation-only validation accuracy), then debias at inference with
// m.WithFMP(cfg), choosing λf on validation data in seconds. The new
// model's layer shares m's phase. It returns an error if cfg is invalid.
func (m *Model) WithFMP(cfg Config) (*Model, error) {
	l, err := New(m.adj, m.layer.sens, cfg)
	if err != nil {
		return nil, err
	}
	l.SetPhase(m.layer.phase)
	mc := m.cfg
	mc.FMP = cfg
	return &Model{cfg: mc, mlp: m.mlp, layer: l, adj: m.adj, gr: m.gr}, nil
}

// Kind returns KindModel.
func (m *Model) Kind() string { return KindModel }

// savedModel is the configuration modelio.Save writes for a Model: the
// model's configuration, its name at the top level (so that
// modelio.Env.Name can rename it) and the sensitive attribute, which
// the model needs and modelio.Env does not carry.
type savedModel struct {
	Name string      `json:"name"`
	Cfg  ModelConfig `json:"model"`
	Sens []int       `json:"sens"`
}

// SaveConfig returns the configuration modelio.Save writes: the
// ModelConfig and the sensitive attribute.
func (m *Model) SaveConfig() any {
	return savedModel{Name: m.cfg.MLP.Name, Cfg: m.cfg, Sens: m.layer.sens}
}

// BuildSaved rebuilds a Model from the configuration its SaveConfig
// returned (as JSON), with parameters of dtype dt, on the graph gr the
// model was trained on, with the given phase. layers/modelio calls it to
// load a saved model of KindModel; programs use modelio.Load.
func BuildSaved(g *G.ExprGraph, raw json.RawMessage, dt tensor.Dtype, gr *graph.Graph, phase *layers.Phase) (layers.Model, error) {
	var s savedModel
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, fmt.Errorf("fmp: loading a model: configuration: %w", err)
	}
	if gr == nil {
		return nil, fmt.Errorf("fmp: loading a model: no graph given, want the graph the model was trained on")
	}
	s.Cfg.MLP.Name = s.Name
	s.Cfg.MLP.Dtype = dt
	return NewModel(g, gr, s.Sens, s.Cfg, phase)
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
