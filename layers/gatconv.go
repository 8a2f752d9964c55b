package layers

import (
	"fmt"
	"math/rand"

	G "gorgonia.org/gorgonia"

	"github.com/fairmp/fairmp/graph"
	"github.com/fairmp/fairmp/internal/opkit"
	"github.com/fairmp/fairmp/internal/spkern"
)

// GATConvConfig configures a graph attention layer (Veličković et al., 2018)
// with the parameters and defaults of PyG's GATConv. Start from
// DefaultGATConvConfig; zero values are taken literally.
type GATConvConfig struct {
	// Base names the parameters (Name+".W", ".att_src", ".att_dst",
	// ".b"; default "gatconv"), gives the number of input features In
	// and of output features per head Out, the Dtype, and the Seed of
	// the initialisation (W Glorot-uniform; the attention vectors
	// Glorot-uniform over (Heads, Out), as PyG) and then of the
	// attention dropout masks.
	Base
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
}

// DefaultGATConvConfig returns the defaults of PyG's GATConv for a layer from
// in to out features: one head, concatenation, negative slope 0.2, no
// attention dropout, self-loops, bias, float64, seed 1, named "gatconv".
func DefaultGATConvConfig(in, out int) GATConvConfig {
	return GATConvConfig{Base: DefaultBase("gatconv", in, out), Heads: 1, Concat: true, NegativeSlope: 0.2,
		AddSelfLoops: true, Bias: true}
}

// Validate checks every field.
func (c GATConvConfig) Validate() error {
	if err := c.Base.Validate(); err != nil {
		return err
	}
	if err := positive("Heads", c.Heads); err != nil {
		return err
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

// params returns the layer's parameters (Learnables' names and shapes).
func (c GATConvConfig) params() []Param {
	hf := c.Heads * c.Out
	ps := []Param{{Name: c.Name + ".W", Shape: []int{c.In, hf}}, {Name: c.Name + ".att_src", Shape: []int{1, hf}}, {Name: c.Name + ".att_dst", Shape: []int{1, hf}}}
	if c.Bias {
		ps = append(ps, Param{Name: c.Name + ".b", Shape: []int{1, c.outWidth()}})
	}
	return ps
}

// outWidth returns the number of output columns.
func (c GATConvConfig) outWidth() int {
	if c.Concat {
		return c.Heads * c.Out
	}
	return c.Out
}

// GATConv is a graph attention layer on a fixed graph, as PyG's GATConv:
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
type GATConv struct {
	cfg     GATConvConfig
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

var (
	_ GraphModel = (*GATConv)(nil)
	_ Phased     = (*GATConv)(nil)
)

// NewGATConv adds a GAT layer's parameters to g for graph gr. phase switches
// its attention dropout (nil: always evaluation). It returns an error for
// an invalid configuration, a nil graph or a name already used in g.
func NewGATConv(g *G.ExprGraph, gr *graph.Graph, cfg GATConvConfig, phase *Phase) (*GATConv, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("layers: NewGATConv %q: %w", cfg.Name, err)
	}
	if g == nil || gr == nil {
		return nil, fmt.Errorf("layers: NewGATConv %q: nil expression graph or graph", cfg.Name)
	}
	l, err := newGATConv(g, cfg, newGATCSR(gr, cfg.AddSelfLoops), phase, rand.New(rand.NewSource(cfg.Seed)))
	if err != nil {
		return nil, err
	}
	l.gr = gr
	return l, nil
}

// newGATConv draws the layer's parameters, then its dropout seed, from rng.
func newGATConv(g *G.ExprGraph, cfg GATConvConfig, csr *spkern.GATCSR, phase *Phase, rng *rand.Rand) (*GATConv, error) {
	l := &GATConv{cfg: cfg, phase: phase, csr: csr}
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
func (l *GATConv) Config() GATConvConfig { return l.cfg }

// Learnables returns W (In × Heads·Out), the source and destination
// attention vectors (each 1 × Heads·Out, head k in columns k·Out to
// (k+1)·Out−1) and, when Bias is set, the bias (1 × output width), in
// that order.
func (l *GATConv) Learnables() G.Nodes {
	ns := G.Nodes{l.w, l.attSrc, l.attDst}
	if l.bias != nil {
		ns = append(ns, l.bias)
	}
	return ns
}

// Forward returns the layer's output for x (n × In): n × Heads·Out when
// Concat is set, n × Out otherwise. It returns an error if x is not an
// n × In matrix of the layer's dtype in the layer's gorgonia graph.
func (l *GATConv) Forward(x *G.Node) (*G.Node, error) {
	where := fmt.Sprintf("GAT %q", l.cfg.Name)
	if err := checkInput(x, l.w, where); err != nil {
		return nil, err
	}
	if n := x.Shape()[0]; n != l.csr.N {
		return nil, fmt.Errorf("layers: %s: input %q (node %d) has %d rows, want %d (the graph's nodes)", where, x.Name(), x.ID(), n, l.csr.N)
	}
	return l.forwardWith(l.csr, x, where)
}

// forwardWith runs the layer on the edge structure c: the whole graph's,
// or a sampled block's (x then has a row per source of the block, the
// output a row per destination). x is checked.
func (l *GATConv) forwardWith(c *spkern.GATCSR, x *G.Node, where string) (*G.Node, error) {
	h, err := G.Mul(x, l.w)
	if err != nil {
		return nil, fmt.Errorf("layers: %s: X·W: %w", where, err)
	}
	p := gatParams{kind: gatKAttn, c: c, heads: l.cfg.Heads, f: l.cfg.Out, mean: !l.cfg.Concat, slope: l.cfg.NegativeSlope}
	alpha, err := opkit.Apply(gatSpec, p, h, l.attSrc, l.attDst)
	if err != nil {
		return nil, fmt.Errorf("layers: %s: attention: %w", where, err)
	}
	l.attn = alpha
	if alpha, err = Dropout(alpha, l.cfg.Dropout, l.dropout, l.phase); err != nil {
		return nil, fmt.Errorf("layers: %s: attention dropout: %w", where, err)
	}
	out, err := opkit.Apply(gatSpec, p.with(gatKAgg), alpha, h)
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
func (l *GATConv) Attention() *G.Node { return l.attn }

// AttentionEdges returns the edges of the attention matrix, one per row,
// as (source, destination) pairs: grouped by destination in ascending
// order, sources ascending within a destination, self-loops included when
// AddSelfLoops is set.
func (l *GATConv) AttentionEdges() [][2]int {
	c := l.csr
	out := make([][2]int, 0, c.Edges())
	for i := 0; i < c.N; i++ {
		for p := c.Indptr[i]; p < c.Indptr[i+1]; p++ {
			out = append(out, [2]int{int(c.Src[p]), i})
		}
	}
	return out
}

// Graph returns the graph the layer was built on.
func (l *GATConv) Graph() *graph.Graph { return l.gr }

// Phase returns the phase the layer was built with.
func (l *GATConv) Phase() *Phase { return l.phase }

// gatLayerRows returns the layer's output in evaluation mode on the edge
// structure c from h = X·W (c.Cols × Heads·Out): the attention of every
// edge, the aggregation and the bias, in plain Go (LayerwiseLogits).
func gatLayerRows[T float32 | float64](c *spkern.GATCSR, l *GATConv, h []T) []T {
	heads, f := l.cfg.Heads, l.cfg.Out
	alpha := make([]T, c.Edges()*heads)
	spkern.GATAttnForward(c, h, l.attSrc.Value().Data().([]T), l.attDst.Value().Data().([]T), heads, f, T(l.cfg.NegativeSlope), alpha)
	ow := l.cfg.outWidth()
	out := make([]T, c.N*ow)
	spkern.GATAggregate(c, alpha, h, heads, f, !l.cfg.Concat, out)
	if l.bias != nil {
		addRows(out, l.bias.Value().Data().([]T), ow)
	}
	return out
}
