package layers

import (
	"fmt"
	"math/rand"

	G "gorgonia.org/gorgonia"

	"github.com/fairmp/fairmp/graph"
)

// GINConfig configures a graph isomorphism network (Xu et al.) as PyG's
// GINConv with train_eps=True stacked: each layer computes
//
//	h_i' = MLP((1+ε)·h_i + Σ_{j ∈ N(i)} h_j)
//
// with a learnable ε per layer (0 at start) and MLP = Linear(i → Hidden),
// the activation, Linear(Hidden → o), with the activation and dropout
// after every layer but the last. The sum is the product with the
// propagation matrix: with the default Propagation{} (no self-loops, no
// normalisation) the sum over the in-neighbours, as in PyG. On sampled
// blocks the sampler scales the sampled neighbours by deg/k, so the sum
// is an unbiased estimate of the whole one (PyG sums the sampled ones
// unscaled; see graph/sample).
type GINConfig struct {
	// StackConfig gives the widths (Hidden is also the width inside each
	// layer's MLP), depth, activation (between and inside the layers) and
	// dropouts, and Propagation the matrix of the sum. Default
	// Propagation{}: the adjacency, without self-loops.
	StackConfig
	// Bias adds biases to the MLPs' layers. Default true.
	Bias bool `json:"bias"`
}

// DefaultGINConfig returns the 2-layer GIN in → 64 → classes (MLPs of
// width 64), sum over the in-neighbours, ReLU, dropout 0.5, biases,
// float64, seed 1, named "gin".
func DefaultGINConfig(in, classes int) GINConfig {
	s := defaultStack("gin", in, classes)
	s.Propagation = Propagation{}
	return GINConfig{StackConfig: s, Bias: true}
}

// Validate checks every field.
func (c GINConfig) Validate() error { return c.StackConfig.Validate() }

// kindGIN declares GIN to the registry of kinds (see Declare).
var kindGIN = MustDeclare(KindSpec[GINConfig, *GIN]{
	Name:    "gin",
	Title:   "GIN",
	Summary: "graph isomorphism network (Xu et al.): PyG's GINConv with a learnable ε stacked",
	Default: DefaultGINConfig,
	New:     NewGIN,
	Config:  (*GIN).Config,
	Params: func(c GINConfig) []Param {
		var ps []Param
		for l := 0; l < c.Layers; l++ {
			i, o := stackWidths(l, c.In, c.Hidden, c.Out, c.Layers)
			name := fmt.Sprintf("%s.%d", c.Name, l)
			ps = append(ps, linearParams(name+".0", i, c.Hidden, c.Bias)...)
			ps = append(ps, linearParams(name+".1", c.Hidden, o, c.Bias)...)
			ps = append(ps, Param{Name: name + ".eps", Shape: []int{1, 1}})
		}
		return ps
	},
	Hidden:      func(c *GINConfig, w int) error { c.Hidden = w; return nil },
	Propagation: func(c GINConfig) Propagation { return c.Propagation },
})

// GIN is a stack of GIN layers (see GINConfig).
type GIN struct {
	cfg   GINConfig
	phase *Phase
	a     *graph.Matrix
	gr    *graph.Graph
	mlps  [][2]*Linear // each layer's MLP
	eps   []*G.Node    // each layer's 1 × 1 ε
	seeds []int64
}

var (
	_ BlockModel = (*GIN)(nil)
	_ GraphModel = (*GIN)(nil)
	_ Phased     = (*GIN)(nil)
)

// NewGIN builds the propagation matrix from gr once and adds the model's
// parameters to g. phase switches its dropout (nil: always evaluation).
// It returns an error for an invalid configuration, a nil graph or a
// name already used in g.
func NewGIN(g *G.ExprGraph, gr *graph.Graph, cfg GINConfig, phase *Phase) (*GIN, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("layers: NewGIN %q: %w", cfg.Name, err)
	}
	a, err := cfg.Propagation.Matrix(gr)
	if err != nil {
		return nil, fmt.Errorf("layers: NewGIN %q: %w", cfg.Name, err)
	}
	rng := rand.New(rand.NewSource(cfg.Seed))
	m := &GIN{cfg: cfg, phase: phase, a: a, gr: gr}
	for l := 0; l < cfg.Layers; l++ {
		i, o := stackWidths(l, cfg.In, cfg.Hidden, cfg.Out, cfg.Layers)
		name := fmt.Sprintf("%s.%d", cfg.Name, l)
		var mlp [2]*Linear
		if mlp[0], err = newLinear(g, name+".0", i, cfg.Hidden, cfg.Bias, cfg.Dtype, rng, LinearConfig{}); err != nil {
			return nil, err
		}
		if mlp[1], err = newLinear(g, name+".1", cfg.Hidden, o, cfg.Bias, cfg.Dtype, rng, LinearConfig{}); err != nil {
			return nil, err
		}
		eps, err := newBias(g, cfg.Dtype, 1, name+".eps") // a 1 × 1 zero
		if err != nil {
			return nil, err
		}
		m.mlps, m.eps = append(m.mlps, mlp), append(m.eps, eps)
	}
	m.seeds = dropoutSeeds(rng, cfg.Layers)
	return m, nil
}

// Config returns the model's configuration.
func (m *GIN) Config() GINConfig { return m.cfg }

// Matrix returns the propagation matrix of the neighbours' sum.
func (m *GIN) Matrix() *graph.Matrix { return m.a }

// Learnables returns each layer's MLP's W and b of both layers, then its
// ε, in order.
func (m *GIN) Learnables() G.Nodes {
	var ns G.Nodes
	for l, mlp := range m.mlps {
		ns = append(ns, mlp[0].Learnables()...)
		ns = append(ns, mlp[1].Learnables()...)
		ns = append(ns, m.eps[l])
	}
	return ns
}

// Forward returns the n × Out logits for the n × In features x.
func (m *GIN) Forward(x *G.Node) (*G.Node, error) { return Forward(m, x) }

// Compute declares GIN (see BlockModel): input dropout, then each layer
// MLP(h + ε·h + Σ_j h_j) (the learnable coefficient 1+ε as a Scale and a
// Combine), with the activation and dropout after every layer but the
// last.
func (m *GIN) Compute(f Flow, x Value) (Value, error) {
	h, err := f.Dropout(x, m.cfg.InputDropout, m.seeds[0])
	if err != nil {
		return Value{}, err
	}
	for l, mlp := range m.mlps {
		sum, err := f.Propagate(h, Hop{})
		if err != nil {
			return Value{}, err
		}
		eh, err := f.Scale(h, m.eps[l])
		if err != nil {
			return Value{}, err
		}
		if h, err = f.Combine([]float64{1, 1, 1}, sum, h, eh); err != nil {
			return Value{}, err
		}
		if h, err = f.Dense(h, mlp[0].W, mlp[0].B, m.cfg.Activation); err != nil {
			return Value{}, err
		}
		if h, err = f.Dense(h, mlp[1].W, mlp[1].B, Activation{}); err != nil {
			return Value{}, err
		}
		if l == len(m.mlps)-1 {
			break
		}
		if h, err = f.Activate(h, m.cfg.Activation); err != nil {
			return Value{}, err
		}
		if h, err = f.Dropout(h, m.cfg.Dropout, m.seeds[l+1]); err != nil {
			return Value{}, err
		}
	}
	return h, nil
}

// Graph returns the graph the model was built on.
func (m *GIN) Graph() *graph.Graph { return m.gr }

// Phase returns the phase the model was built with.
func (m *GIN) Phase() *Phase { return m.phase }
