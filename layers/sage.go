package layers

import (
	"fmt"
	"math/rand"

	G "gorgonia.org/gorgonia"

	"github.com/fairmp/fairmp/graph"
)

// SAGEConfig configures GraphSAGE (Hamilton et al.) as PyG's SAGEConv
// stacked: each layer computes
//
//	h_i' = W_l·agg_{j ∈ N(i)} h_j + W_r·h_i + b
//
// (PyG's lin_l, with the bias, and lin_r, without), with the activation
// and dropout after every layer but the last. N(i) is row i of the
// propagation matrix's entries: with the default Propagation{} (no
// self-loops, no normalisation) the in-neighbours of i, as in PyG; on
// sampled blocks the sampled ones (PyG's NeighborLoader).
type SAGEConfig struct {
	// StackConfig gives the widths, depth, activation and dropouts, and
	// Propagation the matrix whose entries are the neighbours. Default
	// Propagation{}: the adjacency, without self-loops.
	StackConfig
	// Aggr is "mean" (PyG's default) or "max" (see Hop.Aggr). Default
	// "mean".
	Aggr string `json:"aggr"`
	// Bias adds lin_l's bias to every layer. Default true.
	Bias bool `json:"bias"`
}

// DefaultSAGEConfig returns the 2-layer GraphSAGE in → 64 → classes with
// mean aggregation over the in-neighbours, ReLU, dropout 0.5, biases,
// float64, seed 1, named "sage".
func DefaultSAGEConfig(in, classes int) SAGEConfig {
	s := defaultStack("sage", in, classes)
	s.Propagation = Propagation{}
	return SAGEConfig{StackConfig: s, Aggr: aggrMean, Bias: true}
}

// Validate checks every field.
func (c SAGEConfig) Validate() error {
	if err := c.StackConfig.Validate(); err != nil {
		return err
	}
	if c.Aggr != aggrMean && c.Aggr != aggrMax {
		return fmt.Errorf("Aggr = %q, want %q or %q", c.Aggr, aggrMean, aggrMax)
	}
	return nil
}

// kindSAGE declares GraphSAGE to the registry of kinds (see Declare).
var kindSAGE = MustDeclare(KindSpec[SAGEConfig, *SAGE]{
	Name:    "sage",
	Title:   "GraphSAGE",
	Summary: "GraphSAGE (Hamilton et al.): PyG's SAGEConv stacked, mean or max over the neighbours",
	Default: DefaultSAGEConfig,
	New:     NewSAGE,
	Config:  (*SAGE).Config,
	Params: func(c SAGEConfig) []Param {
		var ps []Param
		for l := 0; l < c.Layers; l++ {
			i, o := stackWidths(l, c.In, c.Hidden, c.Out, c.Layers)
			name := fmt.Sprintf("%s.%d", c.Name, l)
			ps = append(ps, linearParams(name+".lin_l", i, o, c.Bias)...)
			ps = append(ps, linearParams(name+".lin_r", i, o, false)...)
		}
		return ps
	},
	Hidden:      func(c *SAGEConfig, w int) error { c.Hidden = w; return nil },
	Propagation: func(c SAGEConfig) Propagation { return c.Propagation },
})

// stackWidths returns the input and output widths of layer l of a stack
// in → hidden → … → out of depth layers.
func stackWidths(l, in, hidden, out, depth int) (int, int) {
	i, o := hidden, hidden
	if l == 0 {
		i = in
	}
	if l == depth-1 {
		o = out
	}
	return i, o
}

// SAGE is a stack of GraphSAGE layers (see SAGEConfig).
type SAGE struct {
	cfg         SAGEConfig
	phase       *Phase
	a           *graph.Matrix
	gr          *graph.Graph
	lins, roots []*Linear // lin_l (with the bias) and lin_r of each layer
	seeds       []int64
}

var (
	_ BlockModel = (*SAGE)(nil)
	_ GraphModel = (*SAGE)(nil)
	_ Phased     = (*SAGE)(nil)
)

// NewSAGE builds the propagation matrix from gr once and adds the
// model's parameters to g. phase switches its dropout (nil: always
// evaluation). It returns an error for an invalid configuration, a nil
// graph or a name already used in g.
func NewSAGE(g *G.ExprGraph, gr *graph.Graph, cfg SAGEConfig, phase *Phase) (*SAGE, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("layers: NewSAGE %q: %w", cfg.Name, err)
	}
	a, err := cfg.Propagation.Matrix(gr)
	if err != nil {
		return nil, fmt.Errorf("layers: NewSAGE %q: %w", cfg.Name, err)
	}
	rng := rand.New(rand.NewSource(cfg.Seed))
	m := &SAGE{cfg: cfg, phase: phase, a: a, gr: gr}
	for l := 0; l < cfg.Layers; l++ {
		i, o := stackWidths(l, cfg.In, cfg.Hidden, cfg.Out, cfg.Layers)
		name := fmt.Sprintf("%s.%d", cfg.Name, l)
		lin, err := newLinear(g, name+".lin_l", i, o, cfg.Bias, cfg.Dtype, rng, LinearConfig{})
		if err != nil {
			return nil, err
		}
		root, err := newLinear(g, name+".lin_r", i, o, false, cfg.Dtype, rng, LinearConfig{})
		if err != nil {
			return nil, err
		}
		m.lins, m.roots = append(m.lins, lin), append(m.roots, root)
	}
	m.seeds = dropoutSeeds(rng, cfg.Layers)
	return m, nil
}

// Config returns the model's configuration.
func (m *SAGE) Config() SAGEConfig { return m.cfg }

// Matrix returns the propagation matrix whose entries are the
// neighbours.
func (m *SAGE) Matrix() *graph.Matrix { return m.a }

// Learnables returns lin_l's W and b, then lin_r's W, of each layer in
// order.
func (m *SAGE) Learnables() G.Nodes {
	var ns G.Nodes
	for l := range m.lins {
		ns = append(ns, m.lins[l].Learnables()...)
		ns = append(ns, m.roots[l].Learnables()...)
	}
	return ns
}

// Forward returns the n × Out logits for the n × In features x.
func (m *SAGE) Forward(x *G.Node) (*G.Node, error) { return Forward(m, x) }

// Compute declares GraphSAGE (see BlockModel): input dropout, then each
// layer W_l·agg(h) + b + W_r·h, with the activation and dropout after
// every layer but the last. The mean is linear, so it is taken on the
// narrower side of W_l (on the input features it is then computed once,
// see Forward); the maximum is taken on h, as PyG does.
func (m *SAGE) Compute(f Flow, x Value) (Value, error) {
	h, err := f.Dropout(x, m.cfg.InputDropout, m.seeds[0])
	if err != nil {
		return Value{}, err
	}
	for l := range m.lins {
		lin, root := m.lins[l], m.roots[l]
		var agg Value
		if in, out := lin.W.Shape()[0], lin.W.Shape()[1]; m.cfg.Aggr == aggrMax || in <= out {
			if agg, err = f.Propagate(h, Hop{Aggr: m.cfg.Aggr}); err == nil {
				agg, err = f.Dense(agg, lin.W, lin.B, Activation{})
			}
		} else if agg, err = f.Dense(h, lin.W, nil, Activation{}); err == nil {
			agg, err = f.Propagate(agg, Hop{Aggr: m.cfg.Aggr, Bias: lin.B})
		}
		if err != nil {
			return Value{}, err
		}
		self, err := f.Dense(h, root.W, nil, Activation{})
		if err != nil {
			return Value{}, err
		}
		if h, err = f.Combine([]float64{1, 1}, agg, self); err != nil {
			return Value{}, err
		}
		if l == len(m.lins)-1 {
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
func (m *SAGE) Graph() *graph.Graph { return m.gr }

// Phase returns the phase the model was built with.
func (m *SAGE) Phase() *Phase { return m.phase }
