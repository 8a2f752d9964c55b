package minibatch

import (
	"fmt"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/fairmp/fairmp/graph"
	"github.com/fairmp/fairmp/layers"
)

// tiny is a one-node graph: the layers' constructors build their
// full-graph propagation matrix from a graph, which mini-batch training
// never uses (every batch brings its own blocks).
var tiny = func() *graph.Graph {
	g, err := graph.FromEdges(1, nil)
	if err != nil {
		panic(err) // a constant input: cannot fail
	}
	return g
}()

// spec is a validated model configuration.
type spec struct {
	cfg     any
	dtype   tensor.Dtype
	in      int
	classes int
	prop    layers.Propagation
	hops    int
}

// newSpec validates a model configuration: one of layers.MLPConfig,
// GCNConfig, SGCConfig or APPNPConfig (a value, not a pointer).
func newSpec(cfg any) (spec, error) {
	var s spec
	var err error
	switch c := cfg.(type) {
	case layers.MLPConfig:
		err = c.Validate()
		s = spec{cfg: c, dtype: c.Dtype, in: c.In, classes: c.Classes}
	case layers.GCNConfig:
		err = c.Validate()
		s = spec{cfg: c, dtype: c.Dtype, in: c.In, classes: c.Classes, prop: c.Propagation, hops: c.Layers}
	case layers.SGCConfig:
		err = c.Validate()
		s = spec{cfg: c, dtype: c.Dtype, in: c.In, classes: c.Classes, prop: c.Propagation, hops: c.K}
	case layers.APPNPConfig:
		err = c.Validate()
		s = spec{cfg: c, dtype: c.Dtype, in: c.In, classes: c.Classes, prop: c.Propagation, hops: c.K}
	case nil:
		return s, fmt.Errorf("Model is nil, want a layers.MLPConfig, GCNConfig, SGCConfig or APPNPConfig")
	default:
		return s, fmt.Errorf("Model is a %T, want a layers.MLPConfig, GCNConfig, SGCConfig or APPNPConfig (GAT and JKNet cannot be trained in mini-batches yet)", cfg)
	}
	if err != nil {
		return s, fmt.Errorf("Model (%T): %w", cfg, err)
	}
	return s, nil
}

// build builds the model in g with the given seed (which seeds the
// initialisation and the dropout masks) and phase.
func (s spec) build(g *G.ExprGraph, seed int64, phase *layers.Phase) (layers.BlockModel, error) {
	switch c := s.cfg.(type) {
	case layers.MLPConfig:
		c.Seed = seed
		return layers.NewMLP(g, c, phase)
	case layers.GCNConfig:
		c.Seed = seed
		return layers.NewGCN(g, c, tiny, phase)
	case layers.SGCConfig:
		c.Seed = seed
		return layers.NewSGC(g, c, tiny)
	case layers.APPNPConfig:
		c.Seed = seed
		return layers.NewAPPNP(g, c, tiny, phase)
	}
	return nil, fmt.Errorf("minibatch: unknown model %T", s.cfg)
}

// seed returns the configuration's own seed.
func (s spec) seed() int64 {
	switch c := s.cfg.(type) {
	case layers.MLPConfig:
		return c.Seed
	case layers.GCNConfig:
		return c.Seed
	case layers.SGCConfig:
		return c.Seed
	case layers.APPNPConfig:
		return c.Seed
	}
	return 0
}

// Hops returns the number of propagation steps of a model configuration
// (the number of fan-outs its sampler needs): Layers for GCN, K for SGC
// and APPNP, 0 for an MLP. It returns an error for an invalid
// configuration or an unsupported model.
func Hops(model any) (int, error) {
	s, err := newSpec(model)
	if err != nil {
		return 0, fmt.Errorf("minibatch: %w", err)
	}
	return s.hops, nil
}

// Matrix returns the whole graph's propagation matrix of a model
// configuration (its Propagation applied to gr; nil for an MLP): the
// matrix a Task samples from and Logits propagates with, the same matrix
// the full-batch model builds.
func Matrix(model any, gr *graph.Graph) (*graph.Matrix, error) {
	s, err := newSpec(model)
	if err != nil {
		return nil, fmt.Errorf("minibatch: %w", err)
	}
	if s.hops == 0 {
		if _, ok := s.cfg.(layers.MLPConfig); ok {
			return nil, nil
		}
	}
	a, err := s.prop.Matrix(gr)
	if err != nil {
		return nil, fmt.Errorf("minibatch: %w", err)
	}
	return a, nil
}

// NewModel builds the full-batch model of a configuration on the graph gr
// and puts params (Result.Params) in it: the mini-batch-trained model,
// ready for the full-batch tools (train.Predict, fmp.On, modelio.Save).
// For an MLP gr may be nil.
func NewModel(g *G.ExprGraph, model any, gr *graph.Graph, phase *layers.Phase, params []*tensor.Dense) (layers.BlockModel, error) {
	s, err := newSpec(model)
	if err != nil {
		return nil, fmt.Errorf("minibatch: NewModel: %w", err)
	}
	if gr == nil {
		if _, ok := s.cfg.(layers.MLPConfig); !ok {
			return nil, fmt.Errorf("minibatch: NewModel: nil graph for a %T", s.cfg)
		}
	}
	var m layers.BlockModel
	switch c := s.cfg.(type) {
	case layers.MLPConfig:
		m, err = layers.NewMLP(g, c, phase)
	case layers.GCNConfig:
		m, err = layers.NewGCN(g, c, gr, phase)
	case layers.SGCConfig:
		m, err = layers.NewSGC(g, c, gr)
	case layers.APPNPConfig:
		m, err = layers.NewAPPNP(g, c, gr, phase)
	}
	if err != nil {
		return nil, fmt.Errorf("minibatch: NewModel: %w", err)
	}
	if err := setParams(m, params); err != nil {
		return nil, fmt.Errorf("minibatch: NewModel: %w", err)
	}
	return m, nil
}
