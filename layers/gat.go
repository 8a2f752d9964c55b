package layers

import (
	"fmt"
	"math/rand"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/fairmp/fairmp/graph"
	"github.com/fairmp/fairmp/internal/opkit"
	"github.com/fairmp/fairmp/internal/spkern"
)

// GATConfig configures a graph attention layer (Veličković et al., 2018)
// with the parameters and defaults of PyG's GATConv. Start from
// DefaultGATConfig; zero values are taken literally.
type GATConfig struct {
	// Name prefixes the parameter node names (Name+".W", ".att_src",
	// ".att_dst", ".b"); it must be unique among the layers in one
	// gorgonia graph. Default "gat".
	Name string `json:"name"`
	// In is the number of input features (> 0).
	In int `json:"in"`
	// Out is the number of output features per head (> 0).
	Out int `json:"out"`
	// Heads is the number of attention heads (> 0). Default 1.
	Heads int `json:"heads"`
	// Concat concatenates the heads' outputs (n × Heads·Out) when true and
	// averages them (n × Out) when false. Default true.
	Concat bool `json:"concat"`
	// NegativeSlope is the slope of the LeakyReLU applied to the attention
	// scores for negative inputs (finite, >= 0). Default 0.2.
	NegativeSlope float64 `json:"negative_slope"`
	// Dropout is the probability of dropping an attention coefficient in
	// training (kept ones are scaled by 1/(1−p)), as GATConv's dropout;
	// 0 <= Dropout < 1. Default 0.
	Dropout float64 `json:"dropout"`
	// AddSelfLoops adds one self-loop per node, so that every node attends
	// to itself. Without it an isolated node's output is the bias alone.
	// Default true.
	AddSelfLoops bool `json:"add_self_loops"`
	// Bias adds a learnable bias (zeros at start). Default true.
	Bias bool `json:"bias"`
	// Dtype is Float32 or Float64. Default Float64.
	Dtype tensor.Dtype `json:"-"`
	// Seed seeds the initialisation (W Glorot-uniform; the attention
	// vectors Glorot-uniform over (Heads, Out), as PyG) and then the
	// attention dropout masks. Default 1.
	Seed int64 `json:"seed"`
}

// DefaultGATConfig returns the defaults of PyG's GATConv for a layer from
// in to out features: one head, concatenation, negative slope 0.2, no
// attention dropout, self-loops, bias, float64, seed 1, named "gat".
func DefaultGATConfig(in, out int) GATConfig {
	return GATConfig{Name: "gat", In: in, Out: out, Heads: 1, Concat: true, NegativeSlope: 0.2,
		AddSelfLoops: true, Bias: true, Dtype: tensor.Float64, Seed: 1}
}

// Validate checks every field.
func (c GATConfig) Validate() error {
	if c.Name == "" {
		return fmt.Errorf("Name is empty, want a unique prefix for the parameter names")
	}
	for _, f := range []struct {
		n string
		v int
	}{{"In", c.In}, {"Out", c.Out}, {"Heads", c.Heads}} {
		if err := positive(f.n, f.v); err != nil {
			return err
		}
	}
	if err := gatCheckSlope(c.NegativeSlope); err != nil {
		return err
	}
	if err := checkProb("Dropout", c.Dropout); err != nil {
		return err
	}
	return checkDtype(c.Dtype)
}

func gatCheckSlope(v float64) error {
	if err := checkFinite("NegativeSlope", v); err != nil {
		return err
	}
	if v < 0 {
		return fmt.Errorf("NegativeSlope = %v, want >= 0", v)
	}
	return nil
}

// outWidth returns the number of output columns.
func (c GATConfig) outWidth() int {
	if c.Concat {
		return c.Heads * c.Out
	}
	return c.Out
}

// GAT is a graph attention layer on a fixed graph, as PyG's GATConv:
//
//	H = X W                                  (n × Heads·Out)
//	e_ij = LeakyReLU(a_src·h_j + a_dst·h_i)  per head, for each edge j→i
//	α_ij = softmax of e_ij over the in-edges of i
//	out_i = Σ_j α_ij h_j                     per head; heads concatenated
//	                                          or averaged; + bias
//
// The graph is undirected, so the in-edges of i are its neighbours, plus i
// itself when AddSelfLoops is set (one self-loop per node; graph.Graph
// holds none, so none is counted twice). Attention is computed per edge:
// memory is O(edges × heads), never n × n. The softmax subtracts each
// destination's maximum score before exponentiating.
//
// The computation is two custom ops with explicit gradient ops: the
// per-edge attention with its edge softmax, and the weighted aggregation.
// Rows are processed in parallel and every sum runs in a fixed order, so
// results are deterministic.
type GAT struct {
	cfg     GATConfig
	phase   *Phase
	gr      *graph.Graph
	csr     *spkern.GATCSR
	w       *G.Node
	attSrc  *G.Node
	attDst  *G.Node
	bias    *G.Node
	dropout int64 // seed of the attention dropout
	attn    *G.Node
}

var _ Model = (*GAT)(nil)

// NewGAT adds a GAT layer's parameters to g for graph gr. phase switches
// its attention dropout (nil: always evaluation). It returns an error for
// an invalid configuration, a nil graph or a name already used in g.
func NewGAT(g *G.ExprGraph, cfg GATConfig, gr *graph.Graph, phase *Phase) (*GAT, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("layers: NewGAT %q: %w", cfg.Name, err)
	}
	if g == nil || gr == nil {
		return nil, fmt.Errorf("layers: NewGAT %q: nil expression graph or graph", cfg.Name)
	}
	l, err := newGAT(g, cfg, newGATCSR(gr, cfg.AddSelfLoops), phase, rand.New(rand.NewSource(cfg.Seed)))
	if err != nil {
		return nil, err
	}
	l.gr = gr
	return l, nil
}

// newGAT draws the layer's parameters, then its dropout seed, from rng.
func newGAT(g *G.ExprGraph, cfg GATConfig, csr *spkern.GATCSR, phase *Phase, rng *rand.Rand) (*GAT, error) {
	l := &GAT{cfg: cfg, phase: phase, csr: csr}
	hf := cfg.Heads * cfg.Out
	var err error
	if l.w, err = newWeight(g, cfg.Dtype, cfg.In, hf, cfg.Name+".W", rng); err != nil {
		return nil, err
	}
	// PyG initialises att_src and att_dst, (1, heads, out), with glorot
	// over their last two dimensions: U(±sqrt(6/(heads+out))).
	for _, p := range []struct {
		dst  **G.Node
		name string
	}{{&l.attSrc, ".att_src"}, {&l.attDst, ".att_dst"}} {
		name := cfg.Name + p.name
		if err := opkit.UniqueName(g, name); err != nil {
			return nil, fmt.Errorf("layers: %w", err)
		}
		v := GlorotUniform(rng, cfg.Dtype, cfg.Heads, cfg.Out)
		if err := v.Reshape(1, hf); err != nil {
			return nil, fmt.Errorf("layers: GAT %q: %w", cfg.Name, err)
		}
		*p.dst = G.NewMatrix(g, cfg.Dtype, G.WithShape(1, hf), G.WithName(name), G.WithValue(v))
	}
	if cfg.Bias {
		if l.bias, err = newBias(g, cfg.Dtype, cfg.outWidth(), cfg.Name+".b"); err != nil {
			return nil, err
		}
	}
	l.dropout = rng.Int63()
	return l, nil
}

// Config returns the layer's configuration.
func (l *GAT) Config() GATConfig { return l.cfg }

// Learnables returns W (In × Heads·Out), the source and destination
// attention vectors (each 1 × Heads·Out, head k in columns k·Out to
// (k+1)·Out−1) and, when Bias is set, the bias (1 × output width), in
// that order.
func (l *GAT) Learnables() G.Nodes {
	ns := G.Nodes{l.w, l.attSrc, l.attDst}
	if l.bias != nil {
		ns = append(ns, l.bias)
	}
	return ns
}

// Forward returns the layer's output for x (n × In): n × Heads·Out when
// Concat is set, n × Out otherwise. It returns an error if x is not an
// n × In matrix of the layer's dtype in the layer's gorgonia graph.
func (l *GAT) Forward(x *G.Node) (*G.Node, error) {
	where := fmt.Sprintf("GAT %q", l.cfg.Name)
	if err := checkInput(x, l.w, where); err != nil {
		return nil, err
	}
	if n := x.Shape()[0]; n != l.csr.N {
		return nil, fmt.Errorf("layers: %s: input %q (node %d) has %d rows, want %d (the graph's nodes)", where, x.Name(), x.ID(), n, l.csr.N)
	}
	h, err := G.Mul(x, l.w)
	if err != nil {
		return nil, fmt.Errorf("layers: %s: X·W: %w", where, err)
	}
	op := &gatOp{kind: gatKAttn, c: l.csr, heads: l.cfg.Heads, f: l.cfg.Out, mean: !l.cfg.Concat, slope: l.cfg.NegativeSlope}
	alpha, err := G.ApplyOp(op, h, l.attSrc, l.attDst)
	if err != nil {
		return nil, fmt.Errorf("layers: %s: attention: %w", where, err)
	}
	l.attn = alpha
	if alpha, err = Dropout(alpha, l.cfg.Dropout, l.dropout, l.phase); err != nil {
		return nil, fmt.Errorf("layers: %s: attention dropout: %w", where, err)
	}
	out, err := G.ApplyOp(op.with(gatKAgg), alpha, h)
	if err != nil {
		return nil, fmt.Errorf("layers: %s: aggregation: %w", where, err)
	}
	if l.bias != nil {
		if out, err = G.BroadcastAdd(out, l.bias, nil, []byte{0}); err != nil {
			return nil, fmt.Errorf("layers: %s: bias: %w", where, err)
		}
	}
	return out, nil
}

// Attention returns the attention coefficients node built by the last
// Forward (nil before the first): an E × Heads matrix whose row p is the
// edge AttentionEdges()[p], before attention dropout. Read its value with
// gorgonia.Read: the TapeMachine reuses registers.
func (l *GAT) Attention() *G.Node { return l.attn }

// AttentionEdges returns the edges of the attention matrix, one per row,
// as (source, destination) pairs: grouped by destination in ascending
// order, sources ascending within a destination, self-loops included when
// AddSelfLoops is set.
func (l *GAT) AttentionEdges() [][2]int {
	c := l.csr
	out := make([][2]int, 0, c.Edges())
	for i := 0; i < c.N; i++ {
		for p := c.Indptr[i]; p < c.Indptr[i+1]; p++ {
			out = append(out, [2]int{int(c.Src[p]), i})
		}
	}
	return out
}

// GATModelConfig configures GATModel, the two-layer GAT of Veličković et
// al. and PyG's examples: dropout, a GAT layer with Heads heads of Hidden
// features (concatenated), ELU, dropout, then a GAT layer with one head
// producing Classes logits. Start from DefaultGATModelConfig.
type GATModelConfig struct {
	// Name prefixes the parameter names: the layers are Name+".0" and
	// Name+".1". Default "gatmodel".
	Name string `json:"name"`
	// In is the number of input features, Classes the number of outputs.
	In      int `json:"in"`
	Classes int `json:"classes"`
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
	// Dtype is Float32 or Float64. Default Float64.
	Dtype tensor.Dtype `json:"-"`
	// Seed seeds the initialisation and every dropout mask.
	Seed int64 `json:"seed"`
}

// DefaultGATModelConfig returns the model in → 4 heads × 16 → classes with
// ELU, dropout 0.5 after the hidden layer, no input or attention dropout,
// negative slope 0.2, self-loops, float64, seed 1, named "gatmodel".
func DefaultGATModelConfig(in, classes int) GATModelConfig {
	return GATModelConfig{Name: "gatmodel", In: in, Classes: classes, Hidden: 16, Heads: 4, Dropout: 0.5,
		NegativeSlope: 0.2, AddSelfLoops: true, Dtype: tensor.Float64, Seed: 1}
}

// Validate checks every field.
func (c GATModelConfig) Validate() error {
	if c.Name == "" {
		return fmt.Errorf("Name is empty, want a unique prefix for the parameter names")
	}
	for _, f := range []struct {
		n string
		v int
	}{{"In", c.In}, {"Classes", c.Classes}, {"Hidden", c.Hidden}, {"Heads", c.Heads}} {
		if err := positive(f.n, f.v); err != nil {
			return err
		}
	}
	for _, f := range []struct {
		n string
		v float64
	}{{"Dropout", c.Dropout}, {"InputDropout", c.InputDropout}, {"AttentionDropout", c.AttentionDropout}} {
		if err := checkProb(f.n, f.v); err != nil {
			return err
		}
	}
	if err := gatCheckSlope(c.NegativeSlope); err != nil {
		return err
	}
	return checkDtype(c.Dtype)
}

// layerConfigs returns the two layers' configurations.
func (c GATModelConfig) layerConfigs() (GATConfig, GATConfig) {
	l1 := GATConfig{Name: c.Name + ".0", In: c.In, Out: c.Hidden, Heads: c.Heads, Concat: true,
		NegativeSlope: c.NegativeSlope, Dropout: c.AttentionDropout, AddSelfLoops: c.AddSelfLoops,
		Bias: true, Dtype: c.Dtype, Seed: c.Seed}
	l2 := l1
	l2.Name, l2.In, l2.Out, l2.Heads, l2.Concat = c.Name+".1", c.Heads*c.Hidden, c.Classes, 1, false
	return l1, l2
}

// GATModel is the two-layer GAT node classifier described by
// GATModelConfig.
type GATModel struct {
	cfg    GATModelConfig
	phase  *Phase
	gr     *graph.Graph
	l1, l2 *GAT
	seeds  []int64
}

var _ Model = (*GATModel)(nil)

// NewGATModel adds a two-layer GAT's parameters to g for graph gr; the
// edge structure (with self-loops) is built once and shared by both
// layers. phase switches the dropouts (nil: always evaluation). It returns
// an error for an invalid configuration, a nil graph or a name already
// used in g.
func NewGATModel(g *G.ExprGraph, cfg GATModelConfig, gr *graph.Graph, phase *Phase) (*GATModel, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("layers: NewGATModel %q: %w", cfg.Name, err)
	}
	if g == nil || gr == nil {
		return nil, fmt.Errorf("layers: NewGATModel %q: nil expression graph or graph", cfg.Name)
	}
	csr := newGATCSR(gr, cfg.AddSelfLoops)
	rng := rand.New(rand.NewSource(cfg.Seed))
	c1, c2 := cfg.layerConfigs()
	l1, err := newGAT(g, c1, csr, phase, rng)
	if err != nil {
		return nil, err
	}
	l2, err := newGAT(g, c2, csr, phase, rng)
	if err != nil {
		return nil, err
	}
	return &GATModel{cfg: cfg, phase: phase, gr: gr, l1: l1, l2: l2, seeds: dropoutSeeds(rng, 2)}, nil
}

// Config returns the model's configuration.
func (m *GATModel) Config() GATModelConfig { return m.cfg }

// Layers returns the hidden and the output GAT layers.
func (m *GATModel) Layers() (hidden, output *GAT) { return m.l1, m.l2 }

// Learnables returns the hidden layer's learnables followed by the output
// layer's (see GAT.Learnables).
func (m *GATModel) Learnables() G.Nodes {
	return append(m.l1.Learnables(), m.l2.Learnables()...)
}

// Forward returns the n × Classes logits for x (n × In):
// GAT₁(dropout(ELU(GAT₀(dropout(x))))). It returns an error if x is not
// an n × In matrix of the model's dtype.
func (m *GATModel) Forward(x *G.Node) (*G.Node, error) {
	if err := checkInput(x, m.l1.w, fmt.Sprintf("GATModel %q", m.cfg.Name)); err != nil {
		return nil, err
	}
	h, err := Dropout(x, m.cfg.InputDropout, m.seeds[0], m.phase)
	if err != nil {
		return nil, err
	}
	if h, err = m.l1.Forward(h); err != nil {
		return nil, err
	}
	if h, err = Activate(h, ELU(1)); err != nil {
		return nil, err
	}
	if h, err = Dropout(h, m.cfg.Dropout, m.seeds[1], m.phase); err != nil {
		return nil, err
	}
	return m.l2.Forward(h)
}

// Kind names of the GAT layer and model for Save and Load.
const (
	KindGAT      = "gat"
	KindGATModel = "gatmodel"
)

// Kind returns KindGAT.
func (l *GAT) Kind() string { return KindGAT }

// SaveConfig returns the layer's configuration.
func (l *GAT) SaveConfig() any { return l.cfg }

// Kind returns KindGATModel.
func (m *GATModel) Kind() string { return KindGATModel }

// SaveConfig returns the model's configuration.
func (m *GATModel) SaveConfig() any { return m.cfg }
