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

// spec is a validated model configuration of a kind that runs on blocks.
type spec struct {
	cfg  layers.Config
	kind *layers.Kind
	base layers.Base
	hops int
}

// newSpec validates a model configuration: one of a kind declared in
// package layers whose models run on sampled blocks (layers.Kind.Blocks:
// every model of the library, and any such kind of the user's own).
func newSpec(cfg layers.Config) (spec, error) {
	if cfg == nil {
		return spec{}, fmt.Errorf("Model is nil, want the configuration of a model that runs on blocks (%s)", blockKinds())
	}
	k, err := layers.KindOfConfig(cfg)
	if err != nil {
		return spec{}, fmt.Errorf("Model: %w", err)
	}
	if !k.Blocks() {
		return spec{}, fmt.Errorf("Model is a %s configuration: %s models do not run on sampled blocks yet (those that do: %s)", k.Name(), k.Title(), blockKinds())
	}
	if err := cfg.Validate(); err != nil {
		return spec{}, fmt.Errorf("Model (%s): %w", k.Name(), err)
	}
	s := spec{cfg: cfg, kind: k, base: layers.BaseOf(cfg)}
	m, err := s.build(G.NewGraph(), s.base.Seed, nil)
	if err != nil {
		return spec{}, fmt.Errorf("Model (%s): %w", k.Name(), err)
	}
	if s.hops, err = layers.Hops(m); err != nil {
		return spec{}, fmt.Errorf("Model (%s): %w", k.Name(), err)
	}
	return s, nil
}

// blockKinds lists the kinds that run on blocks.
func blockKinds() string {
	var s string
	for _, k := range layers.Kinds() {
		if k.Blocks() {
			if s != "" {
				s += ", "
			}
			s += k.Name()
		}
	}
	return s
}

// build builds the model in g with the given seed (which seeds the
// initialisation and the dropout masks) and phase.
func (s spec) build(g *G.ExprGraph, seed int64, phase *layers.Phase) (layers.BlockModel, error) {
	b := s.base
	b.Seed = seed
	m, err := s.kind.Build(g, tiny, layers.WithBase(s.cfg, b), phase)
	if err != nil {
		return nil, err
	}
	return m.(layers.BlockModel), nil
}

// hops returns the number of propagation steps of a model configuration
// (the number of fan-outs its sampler needs): Layers for GCN and JKNet,
// K for SGC and APPNP, 2 for GAT, 0 for an MLP. It returns an error for an invalid
// configuration or a kind that does not run on blocks.
func hops(model layers.Config) (int, error) {
	s, err := newSpec(model)
	if err != nil {
		return 0, fmt.Errorf("minibatch: %w", err)
	}
	return s.hops, nil
}

// Matrix returns the whole graph's propagation matrix of a model
// configuration (nil for a model without hops, such as the MLP), as its
// kind declares it (KindSpec.Propagation): the matrix a Task samples from
// and Logits propagates with, the same matrix the full-batch model builds
// on gr.
func Matrix(model layers.Config, gr *graph.Graph) (*graph.Matrix, error) {
	s, err := newSpec(model)
	if err != nil {
		return nil, fmt.Errorf("minibatch: %w", err)
	}
	if s.hops == 0 {
		return nil, nil
	}
	p, ok, err := s.kind.Propagation(s.cfg)
	if err != nil {
		return nil, fmt.Errorf("minibatch: %w", err)
	}
	if !ok {
		return nil, fmt.Errorf("minibatch: the %s kind propagates (%d hops) but declares no Propagation: set KindSpec.Propagation", s.kind.Name(), s.hops)
	}
	a, err := p.Matrix(gr)
	if err != nil {
		return nil, fmt.Errorf("minibatch: %w", err)
	}
	return a, nil
}

// NewModel builds the full-batch model of a configuration in g on the
// graph gr with phase and puts params (Result.Params) in it: the
// mini-batch-trained model, ready for the full-batch tools
// (train.Predict, fmp.On, modelio.Save). For a model without hops gr may
// be nil.
func NewModel(g *G.ExprGraph, gr *graph.Graph, model layers.Config, phase *layers.Phase, params []*tensor.Dense) (layers.BlockModel, error) {
	s, err := newSpec(model)
	if err != nil {
		return nil, fmt.Errorf("minibatch: NewModel: %w", err)
	}
	if gr == nil {
		if s.hops > 0 {
			return nil, fmt.Errorf("minibatch: NewModel: nil graph for a %s model", s.kind.Name())
		}
		gr = tiny
	}
	m, err := s.kind.Build(g, gr, s.cfg, phase)
	if err != nil {
		return nil, fmt.Errorf("minibatch: NewModel: %w", err)
	}
	if err := setParams(m, params); err != nil {
		return nil, fmt.Errorf("minibatch: NewModel: %w", err)
	}
	return m.(layers.BlockModel), nil
}
