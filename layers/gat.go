package layers

import (
	"fmt"
	"math"
	"math/rand"
	"sync/atomic"

	"github.com/fairmp/fairmp/graph"
	"github.com/fairmp/fairmp/internal/opkit"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// GATConfig configures a graph attention layer (Veličković et al., 2018),
// with the parameters and defaults of PyG's GATConv. Start from
// DefaultGATConfig; zero values are taken literally.
type GATConfig struct {
	// In is the number of input features. Must be > 0.
	In int
	// Out is the number of output features per head. Must be > 0.
	Out int
	// Heads is the number of attention heads. Must be > 0. Default 1.
	Heads int
	// Concat concatenates the heads' outputs (n × Heads·Out) when true and
	// averages them (n × Out) when false. Default true.
	Concat bool
	// NegativeSlope is the slope of the LeakyReLU applied to the attention
	// scores for negative inputs. Must be finite and >= 0. Default 0.2.
	NegativeSlope float64
	// Dropout is the probability of dropping an attention coefficient in
	// training (kept ones are scaled by 1/(1−p)), as GATConv's dropout.
	// Must be in [0, 1). A value > 0 needs Phase. Default 0.
	Dropout float64
	// AddSelfLoops adds one self-loop per node, so that every node attends
	// to itself. Without it an isolated node's output is the bias alone.
	// Default true.
	AddSelfLoops bool
	// Bias adds a learnable bias (initialised to zeros) to the output.
	// Default true.
	Bias bool
	// Dtype is the element type of the parameters and of the input, Float32
	// or Float64. Default Float64.
	Dtype tensor.Dtype
	// Seed seeds the initialisation (W Glorot-uniform, the attention
	// vectors Glorot-uniform over (Heads, Out), as PyG) and, through a
	// value derived from it, the attention dropout. Default 1.
	Seed int64
	// Phase switches attention dropout between training and evaluation
	// (identity). It may be nil when Dropout is 0. Default nil.
	Phase *Phase
}

// DefaultGATConfig returns the defaults of PyG's GATConv for a layer from
// in to out features: one head, concatenation, negative slope 0.2, no
// attention dropout, self-loops, bias, float64, seed 1.
func DefaultGATConfig(in, out int) GATConfig {
	return GATConfig{In: in, Out: out, Heads: 1, Concat: true, NegativeSlope: 0.2,
		AddSelfLoops: true, Bias: true, Dtype: tensor.Float64, Seed: 1}
}

// Validate returns an error naming the first invalid field.
func (c GATConfig) Validate() error {
	switch {
	case c.In <= 0:
		return fmt.Errorf("layers: GATConfig.In = %d, want > 0", c.In)
	case c.Out <= 0:
		return fmt.Errorf("layers: GATConfig.Out = %d, want > 0", c.Out)
	case c.Heads <= 0:
		return fmt.Errorf("layers: GATConfig.Heads = %d, want > 0", c.Heads)
	case math.IsNaN(c.NegativeSlope) || math.IsInf(c.NegativeSlope, 0) || c.NegativeSlope < 0:
		return fmt.Errorf("layers: GATConfig.NegativeSlope = %v, want a finite value >= 0", c.NegativeSlope)
	case !(c.Dropout >= 0 && c.Dropout < 1):
		return fmt.Errorf("layers: GATConfig.Dropout = %v, want a value in [0, 1)", c.Dropout)
	case c.Dropout > 0 && c.Phase == nil:
		return fmt.Errorf("layers: GATConfig.Dropout = %v needs a Phase to switch between training and evaluation, got nil", c.Dropout)
	}
	if err := opkit.CheckFloat(c.Dtype); err != nil {
		return fmt.Errorf("layers: GATConfig.Dtype: %v", err)
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

var gatLayerIDs atomic.Uint64

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
	cfg    GATConfig
	csr    *gatCSR
	w      *G.Node
	attSrc *G.Node
	attDst *G.Node
	bias   *G.Node
	name   string
	attn   *G.Node
}

// NewGAT adds a GAT layer's parameters to g for graph gr. Parameter node
// names are unique in the process ("gat<k>.W", "gat<k>.att_src",
// "gat<k>.att_dst", "gat<k>.bias"), so that two layers of the same shape
// are never merged by gorgonia (which deduplicates input nodes by name,
// type and shape). It returns an error if g or gr is nil or cfg is invalid.
func NewGAT(g *G.ExprGraph, gr *graph.Graph, cfg GATConfig) (*GAT, error) {
	if g == nil {
		return nil, fmt.Errorf("layers: NewGAT: nil expression graph")
	}
	if gr == nil {
		return nil, fmt.Errorf("layers: NewGAT: nil graph")
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return newGAT(g, newGATCSR(gr, cfg.AddSelfLoops), cfg)
}

func newGAT(g *G.ExprGraph, csr *gatCSR, cfg GATConfig) (*GAT, error) {
	l := &GAT{cfg: cfg, csr: csr, name: fmt.Sprintf("gat%d", gatLayerIDs.Add(1))}
	rng := rand.New(rand.NewSource(cfg.Seed))
	hf := cfg.Heads * cfg.Out
	var err error
	if l.w, err = newWeight(g, cfg.Dtype, cfg.In, hf, l.name+".W", rng); err != nil {
		return nil, err
	}
	// PyG initialises att_src and att_dst (1, heads, out) with glorot over
	// their last two dimensions: U(±sqrt(6/(heads+out))).
	for _, p := range []struct {
		dst  **G.Node
		name string
	}{{&l.attSrc, ".att_src"}, {&l.attDst, ".att_dst"}} {
		v := GlorotUniform(rng, cfg.Dtype, cfg.Heads, cfg.Out)
		if err := v.Reshape(1, hf); err != nil {
			return nil, fmt.Errorf("layers: NewGAT: %v", err)
		}
		*p.dst = G.NewMatrix(g, cfg.Dtype, G.WithShape(1, hf), G.WithName(l.name+p.name), G.WithValue(v))
	}
	if cfg.Bias {
		if l.bias, err = newBias(g, cfg.Dtype, cfg.outWidth(), l.name+".bias"); err != nil {
			return nil, err
		}
	}
	return l, nil
}

// Config returns the layer's configuration.
func (l *GAT) Config() GATConfig { return l.cfg }

// Learnables returns W (In × Heads·Out), the source and destination
// attention vectors (each 1 × Heads·Out, head k in columns k·Out..(k+1)·Out)
// and, when Bias is set, the bias (1 × output width), in that order.
func (l *GAT) Learnables() G.Nodes {
	ns := G.Nodes{l.w, l.attSrc, l.attDst}
	if l.bias != nil {
		ns = append(ns, l.bias)
	}
	return ns
}

// Forward returns the layer's output for x (n × In): n × Heads·Out when
// Concat is set, n × Out otherwise. It returns an error if x is not an
// n × In matrix of the layer's dtype.
func (l *GAT) Forward(x *G.Node) (*G.Node, error) {
	if x == nil {
		return nil, fmt.Errorf("layers: GAT %s: nil input node", l.name)
	}
	if x.Dtype() != l.cfg.Dtype {
		return nil, fmt.Errorf("layers: GAT %s: input %q (node %d) has dtype %v, want %v", l.name, x.Name(), x.ID(), x.Dtype(), l.cfg.Dtype)
	}
	if s := x.Shape(); len(s) != 2 || s[0] != l.csr.n || s[1] != l.cfg.In {
		return nil, fmt.Errorf("layers: GAT %s: input %q (node %d) has shape %v, want (%d, %d) (nodes × In)", l.name, x.Name(), x.ID(), s, l.csr.n, l.cfg.In)
	}
	h, err := G.Mul(x, l.w)
	if err != nil {
		return nil, fmt.Errorf("layers: GAT %s: X·W: %v", l.name, err)
	}
	op := &gatOp{kind: gatKAttn, c: l.csr, heads: l.cfg.Heads, f: l.cfg.Out, mean: !l.cfg.Concat, slope: l.cfg.NegativeSlope}
	alpha, err := G.ApplyOp(op, h, l.attSrc, l.attDst)
	if err != nil {
		return nil, fmt.Errorf("layers: GAT %s: attention: %v", l.name, err)
	}
	l.attn = alpha
	if l.cfg.Dropout > 0 {
		if alpha, err = Dropout(alpha, l.cfg.Dropout, gatSubSeed(l.cfg.Seed, 1), l.cfg.Phase); err != nil {
			return nil, fmt.Errorf("layers: GAT %s: attention dropout: %v", l.name, err)
		}
	}
	out, err := G.ApplyOp(op.with(gatKAgg), alpha, h)
	if err != nil {
		return nil, fmt.Errorf("layers: GAT %s: aggregation: %v", l.name, err)
	}
	if l.bias != nil {
		if out, err = G.BroadcastAdd(out, l.bias, nil, []byte{0}); err != nil {
			return nil, fmt.Errorf("layers: GAT %s: bias: %v", l.name, err)
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
	out := make([][2]int, 0, c.edges())
	for i := 0; i < c.n; i++ {
		for p := c.indptr[i]; p < c.indptr[i+1]; p++ {
			out = append(out, [2]int{int(c.src[p]), i})
		}
	}
	return out
}

// gatSubSeed derives a distinct seed for the k-th random stream of a layer
// from its seed (a splitmix64 step), so that initialisation and dropout
// never share a sequence.
func gatSubSeed(seed int64, k uint64) int64 {
	z := uint64(seed) + k*0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return int64(z ^ (z >> 31))
}

// GATModelConfig configures GATModel, the two-layer GAT of Veličković et
// al. and PyG's examples: a GAT layer with Heads heads of Hidden features
// (concatenated), ELU, then a GAT layer with one head producing Classes
// logits. Start from DefaultGATModelConfig.
type GATModelConfig struct {
	// In is the number of input features. Must be > 0.
	In int
	// Hidden is the number of hidden features per head. Must be > 0.
	// Default 16.
	Hidden int
	// Heads is the number of heads of the hidden layer. Must be > 0.
	// Default 4.
	Heads int
	// Classes is the number of output logits. Must be > 0.
	Classes int
	// Dropout is the feature dropout applied to the input and to the
	// hidden representation in training. Must be in [0, 1). Default 0.
	Dropout float64
	// AttentionDropout is both layers' attention dropout. Must be in
	// [0, 1). Default 0.
	AttentionDropout float64
	// NegativeSlope is both layers' LeakyReLU slope. Default 0.2.
	NegativeSlope float64
	// AddSelfLoops is both layers' self-loop setting. Default true.
	AddSelfLoops bool
	// Dtype is Float32 or Float64. Default Float64.
	Dtype tensor.Dtype
	// Seed seeds everything random in the model; the layers and dropouts
	// use distinct streams derived from it. Default 1.
	Seed int64
	// Phase switches the dropouts between training and evaluation. It
	// may be nil when both dropouts are 0; the trainer sets it.
	Phase *Phase
}

// DefaultGATModelConfig returns a model from in features to classes
// logits with 4 heads of 16 hidden features, negative slope 0.2,
// self-loops, no dropout, float64, seed 1.
func DefaultGATModelConfig(in, classes int) GATModelConfig {
	return GATModelConfig{In: in, Hidden: 16, Heads: 4, Classes: classes, NegativeSlope: 0.2,
		AddSelfLoops: true, Dtype: tensor.Float64, Seed: 1}
}

// layerConfigs returns the two layers' configurations.
func (c GATModelConfig) layerConfigs() (GATConfig, GATConfig) {
	l1 := GATConfig{In: c.In, Out: c.Hidden, Heads: c.Heads, Concat: true, NegativeSlope: c.NegativeSlope,
		Dropout: c.AttentionDropout, AddSelfLoops: c.AddSelfLoops, Bias: true, Dtype: c.Dtype,
		Seed: gatSubSeed(c.Seed, 11), Phase: c.Phase}
	l2 := l1
	l2.In, l2.Out, l2.Heads, l2.Concat = c.Heads*c.Hidden, c.Classes, 1, false
	l2.Seed = gatSubSeed(c.Seed, 12)
	return l1, l2
}

// Validate returns an error naming the first invalid field.
func (c GATModelConfig) Validate() error {
	switch {
	case c.In <= 0:
		return fmt.Errorf("layers: GATModelConfig.In = %d, want > 0", c.In)
	case c.Hidden <= 0:
		return fmt.Errorf("layers: GATModelConfig.Hidden = %d, want > 0", c.Hidden)
	case c.Heads <= 0:
		return fmt.Errorf("layers: GATModelConfig.Heads = %d, want > 0", c.Heads)
	case c.Classes <= 0:
		return fmt.Errorf("layers: GATModelConfig.Classes = %d, want > 0", c.Classes)
	case !(c.Dropout >= 0 && c.Dropout < 1):
		return fmt.Errorf("layers: GATModelConfig.Dropout = %v, want a value in [0, 1)", c.Dropout)
	case c.Dropout > 0 && c.Phase == nil:
		return fmt.Errorf("layers: GATModelConfig.Dropout = %v needs a Phase to switch between training and evaluation, got nil", c.Dropout)
	case !(c.AttentionDropout >= 0 && c.AttentionDropout < 1):
		return fmt.Errorf("layers: GATModelConfig.AttentionDropout = %v, want a value in [0, 1)", c.AttentionDropout)
	case c.AttentionDropout > 0 && c.Phase == nil:
		return fmt.Errorf("layers: GATModelConfig.AttentionDropout = %v needs a Phase to switch between training and evaluation, got nil", c.AttentionDropout)
	case math.IsNaN(c.NegativeSlope) || math.IsInf(c.NegativeSlope, 0) || c.NegativeSlope < 0:
		return fmt.Errorf("layers: GATModelConfig.NegativeSlope = %v, want a finite value >= 0", c.NegativeSlope)
	}
	if err := opkit.CheckFloat(c.Dtype); err != nil {
		return fmt.Errorf("layers: GATModelConfig.Dtype: %v", err)
	}
	return nil
}

// GATModel is the two-layer GAT node classifier described by
// GATModelConfig. It implements Model.
type GATModel struct {
	cfg    GATModelConfig
	l1, l2 *GAT
}

var _ Model = (*GATModel)(nil)

// NewGATModel adds a two-layer GAT's parameters to g for graph gr. The
// edge structure (with self-loops) is built once and shared by both
// layers. It returns an error if g or gr is nil or cfg is invalid.
func NewGATModel(g *G.ExprGraph, gr *graph.Graph, cfg GATModelConfig) (*GATModel, error) {
	if g == nil {
		return nil, fmt.Errorf("layers: NewGATModel: nil expression graph")
	}
	if gr == nil {
		return nil, fmt.Errorf("layers: NewGATModel: nil graph")
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	csr := newGATCSR(gr, cfg.AddSelfLoops)
	c1, c2 := cfg.layerConfigs()
	l1, err := newGAT(g, csr, c1)
	if err != nil {
		return nil, err
	}
	l2, err := newGAT(g, csr, c2)
	if err != nil {
		return nil, err
	}
	return &GATModel{cfg: cfg, l1: l1, l2: l2}, nil
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
// GAT₂(dropout(ELU(GAT₁(dropout(x))))). It returns an error if x is not
// an n × In matrix of the model's dtype.
func (m *GATModel) Forward(x *G.Node) (*G.Node, error) {
	var err error
	if m.cfg.Dropout > 0 {
		if x, err = Dropout(x, m.cfg.Dropout, gatSubSeed(m.cfg.Seed, 13), m.cfg.Phase); err != nil {
			return nil, err
		}
	}
	h, err := m.l1.Forward(x)
	if err != nil {
		return nil, err
	}
	if h, err = gatELUNode(h); err != nil {
		return nil, fmt.Errorf("layers: GATModel: ELU: %v", err)
	}
	if m.cfg.Dropout > 0 {
		if h, err = Dropout(h, m.cfg.Dropout, gatSubSeed(m.cfg.Seed, 14), m.cfg.Phase); err != nil {
			return nil, err
		}
	}
	return m.l2.Forward(h)
}
