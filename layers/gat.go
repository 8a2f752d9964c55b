package layers

import (
	"fmt"
	"math/rand"
	"sync"

	G "gorgonia.org/gorgonia"

	"github.com/fairmp/fairmp/graph"
)

// GATConfig configures GAT, the two-layer graph attention network of
// Veličković et al. and PyG's examples: dropout, a GATConv layer with
// Heads heads of Hidden features (concatenated), ELU, dropout, then a
// GATConv layer with one head producing Out logits. Start from
// DefaultGATConfig.
type GATConfig struct {
	// Base: the layers are named Name+".0" and Name+".1".
	Base
	// Hidden is the number of hidden features per head. Default 16.
	Hidden int `json:"hidden"`
	// Heads is the number of heads of the hidden layer. Default 4.
	Heads int `json:"heads"`
	// Dropout after the hidden ELU. Default 0.5.
	Dropout float64 `json:"dropout"`
	// InputDropout on the input features. Default 0.
	InputDropout float64 `json:"input_dropout"`
	// AttentionDropout is both layers' attention dropout. Default 0.
	AttentionDropout float64 `json:"attention_dropout"`
	// NegativeSlope is both layers' LeakyReLU slope. Default 0.2.
	NegativeSlope float64 `json:"negative_slope"`
	// AddSelfLoops is both layers' self-loop setting. Default true.
	AddSelfLoops bool `json:"add_self_loops"`
}

// DefaultGATConfig returns the model in → 4 heads × 16 → classes with
// ELU, dropout 0.5 after the hidden layer, no input or attention dropout,
// negative slope 0.2, self-loops, float64, seed 1, named "gat".
func DefaultGATConfig(in, classes int) GATConfig {
	return GATConfig{Base: DefaultBase("gat", in, classes), Hidden: 16, Heads: 4, Dropout: 0.5,
		NegativeSlope: 0.2, AddSelfLoops: true}
}

// Validate checks every field.
func (c GATConfig) Validate() error {
	if err := c.Base.Validate(); err != nil {
		return err
	}
	if err := positive("Hidden", c.Hidden); err != nil {
		return err
	}
	if err := positive("Heads", c.Heads); err != nil {
		return err
	}
	for _, f := range []struct {
		n string
		v float64
	}{{"Dropout", c.Dropout}, {"InputDropout", c.InputDropout}, {"AttentionDropout", c.AttentionDropout}} {
		if err := checkProb(f.n, f.v); err != nil {
			return err
		}
	}
	return gatCheckSlope(c.NegativeSlope)
}

// kindGAT declares GAT to the registry of kinds (see Declare). Its hidden
// width is heads × per-head width: Options.Hidden 64 is 4 heads of 16.
var kindGAT = MustDeclare(KindSpec[GATConfig, *GAT]{
	Name:    "gat",
	Title:   "GAT",
	Summary: "graph attention network (Veličković et al.): two GATConv layers, 4 heads × 16 hidden",
	Default: DefaultGATConfig,
	New:     NewGAT,
	Config:  (*GAT).Config,
	Params: func(c GATConfig) []Param {
		l1, l2 := c.layerConfigs()
		return append(l1.params(), l2.params()...)
	},
	Hidden: func(c *GATConfig, w int) error {
		if w%c.Heads != 0 {
			return fmt.Errorf("a GAT's hidden width is heads × per-head width: %d is not a multiple of its %d heads", w, c.Heads)
		}
		c.Hidden = w / c.Heads
		return nil
	},
	Propagation: GATConfig.propagation,
})

// layerConfigs returns the two layers' configurations.
func (c GATConfig) layerConfigs() (GATConvConfig, GATConvConfig) {
	l1 := GATConvConfig{Base: Base{Name: c.Name + ".0", In: c.In, Out: c.Hidden, Dtype: c.Dtype, Seed: c.Seed},
		Heads: c.Heads, Concat: true, NegativeSlope: c.NegativeSlope, Dropout: c.AttentionDropout,
		AddSelfLoops: c.AddSelfLoops, Bias: true}
	l2 := l1
	l2.Name, l2.In, l2.Out, l2.Heads, l2.Concat = c.Name+".1", c.Heads*c.Hidden, c.Out, 1, false
	return l1, l2
}

// propagation is the matrix GAT attends over: its pattern (the edges
// and, with AddSelfLoops, the self-loops) is what counts.
func (c GATConfig) propagation() Propagation {
	return Propagation{AddSelfLoops: c.AddSelfLoops, Normalize: true}
}

// GAT is the two-layer GAT node classifier described by
// GATConfig.
type GAT struct {
	cfg    GATConfig
	phase  *Phase
	gr     *graph.Graph
	l1, l2 *GATConv
	seeds  []int64

	matOnce sync.Once
	mat     *graph.Matrix // Matrix, built on first use
}

var (
	_ BlockModel = (*GAT)(nil)
	_ GraphModel = (*GAT)(nil)
	_ Phased     = (*GAT)(nil)
)

// NewGAT adds a two-layer GAT's parameters to g for graph gr; the
// edge structure (with self-loops) is built once and shared by both
// layers. phase switches the dropouts (nil: always evaluation). It returns
// an error for an invalid configuration, a nil graph or a name already
// used in g.
func NewGAT(g *G.ExprGraph, gr *graph.Graph, cfg GATConfig, phase *Phase) (*GAT, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("layers: NewGAT %q: %w", cfg.Name, err)
	}
	if g == nil || gr == nil {
		return nil, fmt.Errorf("layers: NewGAT %q: nil expression graph or graph", cfg.Name)
	}
	csr := newGATCSR(gr, cfg.AddSelfLoops)
	rng := rand.New(rand.NewSource(cfg.Seed))
	c1, c2 := cfg.layerConfigs()
	l1, err := newGATConv(g, c1, csr, phase, rng)
	if err != nil {
		return nil, err
	}
	l2, err := newGATConv(g, c2, csr, phase, rng)
	if err != nil {
		return nil, err
	}
	return &GAT{cfg: cfg, phase: phase, gr: gr, l1: l1, l2: l2, seeds: dropoutSeeds(rng, 2)}, nil
}

// Config returns the model's configuration.
func (m *GAT) Config() GATConfig { return m.cfg }

// Layers returns the hidden and the output GATConv layers.
func (m *GAT) Layers() (hidden, output *GATConv) { return m.l1, m.l2 }

// Learnables returns the hidden layer's learnables followed by the output
// layer's (see GATConv.Learnables).
func (m *GAT) Learnables() G.Nodes {
	return append(m.l1.Learnables(), m.l2.Learnables()...)
}

// Forward returns the n × Out logits for x (n × In):
// GATConv₁(dropout(ELU(GATConv₀(dropout(x))))). It returns an error if x is not
// an n × In matrix of the model's dtype.
func (m *GAT) Forward(x *G.Node) (*G.Node, error) { return Forward(m, x) }

// Compute declares the GAT (see BlockModel): input dropout, the hidden
// attention layer, ELU and dropout, then the output attention layer.
// Each layer attends over the edges of its hop: the whole graph's
// (Matrix's pattern), or a block's sampled in-edges.
func (m *GAT) Compute(f Flow, x Value) (Value, error) {
	h, err := f.Dropout(x, m.cfg.InputDropout, m.seeds[0])
	if err != nil {
		return Value{}, err
	}
	if h, err = f.Attend(h, m.l1); err != nil {
		return Value{}, err
	}
	if h, err = f.Activate(h, ELU(1)); err != nil {
		return Value{}, err
	}
	if h, err = f.Dropout(h, m.cfg.Dropout, m.seeds[1]); err != nil {
		return Value{}, err
	}
	return f.Attend(h, m.l2)
}

// Matrix returns the graph's edge structure as GAT attends over it, as a
// propagation matrix (built on first use): an entry for every edge, in
// both directions, and, with AddSelfLoops, one for every node's
// self-loop. Its values (GCN's normalisation) are not used; only its
// pattern is: mini-batch training samples blocks from it (a block's
// attention then runs over the sampled in-edges, as PyG's GATConv on a
// NeighborLoader batch), and LayerwiseLogits attends over its rows.
func (m *GAT) Matrix() *graph.Matrix {
	m.matOnce.Do(func() {
		// Matrix fails only for a nil graph or an invalid Propagation;
		// NewGAT refused a nil graph, and propagation is valid.
		m.mat, _ = m.cfg.propagation().Matrix(m.gr)
	})
	return m.mat
}

// Graph returns the graph the model was built on.
func (m *GAT) Graph() *graph.Graph { return m.gr }

// Phase returns the phase the model was built with.
func (m *GAT) Phase() *Phase { return m.phase }
