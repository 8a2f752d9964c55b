package layers

import (
	"fmt"
	"math/rand"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/fairmp/fairmp/graph"
)

// Propagation says how the propagation matrix Ã is built from a graph, as
// PyG's gcn_norm: self-loops of weight 1 (2 when Improved) are added when
// AddSelfLoops, and Ã = D̂^-1/2 Â D̂^-1/2 when Normalize. The matrix is
// built once, when a layer or model is constructed.
type Propagation struct {
	// Improved uses self-loops of weight 2 (PyG's improved GCN). Default false.
	Improved bool `json:"improved"`
	// AddSelfLoops adds the self-loops. Default true.
	AddSelfLoops bool `json:"add_self_loops"`
	// Normalize applies the symmetric normalisation. Default true.
	Normalize bool `json:"normalize"`
}

// DefaultPropagation returns PyG's GCNConv defaults: self-loops of weight
// 1 and symmetric normalisation.
func DefaultPropagation() Propagation {
	return Propagation{AddSelfLoops: true, Normalize: true}
}

// Validate returns an error for Improved without AddSelfLoops (the
// improved weight applies to the self-loops).
func (p Propagation) Validate() error {
	if p.Improved && !p.AddSelfLoops {
		return fmt.Errorf("Propagation: Improved without AddSelfLoops, want AddSelfLoops when Improved")
	}
	return nil
}

// Matrix returns the propagation matrix of gr (see graph.GCNNorm). It
// returns an error for a nil graph or an invalid Propagation.
func (p Propagation) Matrix(gr *graph.Graph) (*graph.Matrix, error) {
	if gr == nil {
		return nil, fmt.Errorf("layers: Propagation.Matrix: nil graph")
	}
	if err := p.Validate(); err != nil {
		return nil, fmt.Errorf("layers: %w", err)
	}
	w := 1.0
	if p.Improved {
		w = 2
	}
	return graph.GCNNorm(gr, graph.NormOptions{AddSelfLoops: p.AddSelfLoops, SelfLoopWeight: w, Normalize: p.Normalize})
}

// GCNConvConfig configures one graph convolution Ã·(x·W) + b (PyG's
// GCNConv).
type GCNConvConfig struct {
	// Name prefixes the parameter names; unique per graph.
	Name string `json:"name"`
	// In and Out are the input and output widths (> 0).
	In  int `json:"in"`
	Out int `json:"out"`
	// Propagation builds Ã from the graph (NewGCNConv only).
	Propagation Propagation `json:"propagation"`
	// Bias adds a learnable bias after the propagation. Default true.
	Bias bool `json:"bias"`
	// Dtype is Float32 or Float64. Default Float64.
	Dtype tensor.Dtype `json:"-"`
	// Seed seeds the Glorot-uniform initialisation of W.
	Seed int64 `json:"seed"`
}

// DefaultGCNConvConfig returns an in → out convolution with PyG's
// defaults (self-loops, normalisation, bias), float64, seed 1, named "gcnconv".
func DefaultGCNConvConfig(in, out int) GCNConvConfig {
	return GCNConvConfig{Name: "gcnconv", In: in, Out: out, Propagation: DefaultPropagation(), Bias: true, Dtype: tensor.Float64, Seed: 1}
}

// Validate checks every field.
func (c GCNConvConfig) Validate() error {
	if c.Name == "" {
		return fmt.Errorf("Name is empty, want a unique prefix for the parameter names")
	}
	if err := positive("In", c.In); err != nil {
		return err
	}
	if err := positive("Out", c.Out); err != nil {
		return err
	}
	if err := c.Propagation.Validate(); err != nil {
		return err
	}
	return checkDtype(c.Dtype)
}

// GCNConv is a graph convolution: linear transform without bias, sparse
// propagation with Ã, then the bias (PyG's order).
type GCNConv struct {
	cfg GCNConvConfig
	a   *graph.Matrix
	gr  *graph.Graph // nil when built from a matrix
	lin *Linear      // bias-free
	B   *G.Node
}

// NewGCNConv builds Ã from gr with cfg.Propagation and adds the layer's
// parameters to g. It returns an error for an invalid configuration, a
// nil graph or a name already used in g.
func NewGCNConv(g *G.ExprGraph, cfg GCNConvConfig, gr *graph.Graph) (*GCNConv, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("layers: NewGCNConv %q: %w", cfg.Name, err)
	}
	a, err := cfg.Propagation.Matrix(gr)
	if err != nil {
		return nil, fmt.Errorf("layers: NewGCNConv %q: %w", cfg.Name, err)
	}
	l, err := newGCNConv(g, cfg, a, rand.New(rand.NewSource(cfg.Seed)))
	if err != nil {
		return nil, err
	}
	l.gr = gr
	return l, nil
}

// NewGCNConvMatrix is NewGCNConv with a prebuilt n × n propagation matrix
// a (for example shared by several layers); cfg.Propagation is not used.
func NewGCNConvMatrix(g *G.ExprGraph, cfg GCNConvConfig, a *graph.Matrix) (*GCNConv, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("layers: NewGCNConvMatrix %q: %w", cfg.Name, err)
	}
	return newGCNConv(g, cfg, a, rand.New(rand.NewSource(cfg.Seed)))
}

func newGCNConv(g *G.ExprGraph, cfg GCNConvConfig, a *graph.Matrix, rng *rand.Rand) (*GCNConv, error) {
	if a == nil {
		return nil, fmt.Errorf("layers: GCNConv %q: nil propagation matrix", cfg.Name)
	}
	if r, c := a.Dims(); r != c {
		return nil, fmt.Errorf("layers: GCNConv %q: propagation matrix is %d × %d, want square", cfg.Name, r, c)
	}
	l := &GCNConv{cfg: cfg, a: a}
	var err error
	if l.lin, err = newLinear(g, cfg.Name, cfg.In, cfg.Out, false, cfg.Dtype, rng, LinearConfig{}); err != nil {
		return nil, err
	}
	if cfg.Bias {
		if l.B, err = newBias(g, cfg.Dtype, cfg.Out, cfg.Name+".b"); err != nil {
			return nil, err
		}
	}
	return l, nil
}

// Config returns the layer's configuration.
func (l *GCNConv) Config() GCNConvConfig { return l.cfg }

// Matrix returns the propagation matrix Ã.
func (l *GCNConv) Matrix() *graph.Matrix { return l.a }

// Learnables returns W and, with bias, b.
func (l *GCNConv) Learnables() G.Nodes {
	if l.B == nil {
		return G.Nodes{l.lin.W}
	}
	return G.Nodes{l.lin.W, l.B}
}

// Forward returns Ã·(x·W) + b for an n × In node x.
func (l *GCNConv) Forward(x *G.Node) (*G.Node, error) { return l.forwardWith(l.a, x) }

// forwardWith is Forward with the propagation matrix a (a sampled block,
// for ForwardBlocks).
func (l *GCNConv) forwardWith(a *graph.Matrix, x *G.Node) (*G.Node, error) {
	h, err := l.lin.Forward(x)
	if err != nil {
		return nil, err
	}
	if h, err = SpMM(a, h); err != nil {
		return nil, fmt.Errorf("layers: GCNConv %q: %w", l.cfg.Name, err)
	}
	return addBias(h, l.B)
}

// StackConfig is what the configurations of the stacked graph models
// (GCNConfig, APPNPConfig, JKNetConfig) share: names, widths, depth,
// activation, dropout, propagation and dtype. It is embedded, so its
// fields read as the model configuration's own (cfg.Hidden) and encode to
// the same JSON keys.
type StackConfig struct {
	// Name prefixes the parameter names; unique per graph.
	Name string `json:"name"`
	// In is the number of input features, Classes the number of outputs.
	In      int `json:"in"`
	Classes int `json:"classes"`
	// Hidden is the width of the hidden layers. Default 64.
	Hidden int `json:"hidden"`
	// Layers is the number of layers (>= 1). Default 2.
	Layers int `json:"layers"`
	// Activation follows every hidden layer. Default ReLU.
	Activation Activation `json:"activation"`
	// Dropout after each hidden activation. Default 0.5.
	Dropout float64 `json:"dropout"`
	// InputDropout on the input features. Default 0.
	InputDropout float64 `json:"input_dropout"`
	// Propagation builds Ã. Default PyG's.
	Propagation Propagation `json:"propagation"`
	// Dtype is Float32 or Float64. Default Float64.
	Dtype tensor.Dtype `json:"-"`
}

// defaultStack returns the shared defaults: 2 layers of width 64, ReLU,
// dropout 0.5, PyG's propagation, float64.
func defaultStack(name string, in, classes int) StackConfig {
	return StackConfig{Name: name, In: in, Classes: classes, Hidden: 64, Layers: 2, Activation: ReLU(),
		Dropout: 0.5, Propagation: DefaultPropagation(), Dtype: tensor.Float64}
}

// GCNConfig configures a GCN node classifier (Kipf & Welling): Layers
// graph convolutions with activation and dropout between them.
type GCNConfig struct {
	StackConfig
	// Bias adds biases to every convolution. Default true.
	Bias bool `json:"bias"`
	// Seed seeds the initialisation and the dropout masks.
	Seed int64 `json:"seed"`
}

// DefaultGCNConfig returns the 2-layer GCN in → 64 → classes with ReLU,
// dropout 0.5, PyG's propagation, biases, float64, seed 1, named "gcn".
func DefaultGCNConfig(in, classes int) GCNConfig {
	return GCNConfig{StackConfig: defaultStack("gcn", in, classes), Bias: true, Seed: 1}
}

// Validate checks every field.
func (c GCNConfig) Validate() error { return c.StackConfig.Validate() }

// Validate checks every field.
func (c StackConfig) Validate() error {
	if c.Name == "" {
		return fmt.Errorf("Name is empty, want a unique prefix for the parameter names")
	}
	for _, f := range []struct {
		n string
		v int
	}{{"In", c.In}, {"Classes", c.Classes}, {"Hidden", c.Hidden}, {"Layers", c.Layers}} {
		if err := positive(f.n, f.v); err != nil {
			return err
		}
	}
	if err := c.Activation.Validate(); err != nil {
		return fmt.Errorf("Activation: %w", err)
	}
	if err := checkProb("Dropout", c.Dropout); err != nil {
		return err
	}
	if err := checkProb("InputDropout", c.InputDropout); err != nil {
		return err
	}
	if err := c.Propagation.Validate(); err != nil {
		return err
	}
	return checkDtype(c.Dtype)
}

// GCN is a stack of GCNConv layers sharing one propagation matrix.
type GCN struct {
	cfg   GCNConfig
	phase *Phase
	gr    *graph.Graph
	convs []*GCNConv
	seeds []int64
}

var _ Model = (*GCN)(nil)

// NewGCN builds Ã from gr once and adds the model's parameters to g.
// phase switches its dropout (nil: always evaluation). It returns an error
// for an invalid configuration, a nil graph or a name already used in g.
func NewGCN(g *G.ExprGraph, cfg GCNConfig, gr *graph.Graph, phase *Phase) (*GCN, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("layers: NewGCN %q: %w", cfg.Name, err)
	}
	a, err := cfg.Propagation.Matrix(gr)
	if err != nil {
		return nil, fmt.Errorf("layers: NewGCN %q: %w", cfg.Name, err)
	}
	rng := rand.New(rand.NewSource(cfg.Seed))
	convs, err := gcnStack(g, cfg.Name, cfg.In, cfg.Hidden, cfg.Classes, cfg.Layers, cfg.Bias, cfg.Dtype, a, rng)
	if err != nil {
		return nil, err
	}
	return &GCN{cfg: cfg, phase: phase, gr: gr, convs: convs, seeds: dropoutSeeds(rng, cfg.Layers)}, nil
}

// gcnStack builds depth convolutions in → hidden → … → out.
func gcnStack(g *G.ExprGraph, name string, in, hidden, out, depth int, bias bool, dt tensor.Dtype, a *graph.Matrix, rng *rand.Rand) ([]*GCNConv, error) {
	convs := make([]*GCNConv, depth)
	for l := range convs {
		i, o := hidden, hidden
		if l == 0 {
			i = in
		}
		if l == depth-1 {
			o = out
		}
		cc := GCNConvConfig{Name: fmt.Sprintf("%s.%d", name, l), In: i, Out: o, Bias: bias, Dtype: dt}
		var err error
		if convs[l], err = newGCNConv(g, cc, a, rng); err != nil {
			return nil, err
		}
	}
	return convs, nil
}

// Config returns the model's configuration.
func (m *GCN) Config() GCNConfig { return m.cfg }

// Matrix returns the propagation matrix Ã.
func (m *GCN) Matrix() *graph.Matrix { return m.convs[0].a }

// Learnables returns W and b of each convolution, in order.
func (m *GCN) Learnables() G.Nodes {
	var ns G.Nodes
	for _, c := range m.convs {
		ns = append(ns, c.Learnables()...)
	}
	return ns
}

// Forward returns the n × Classes logits for the n × In features x.
func (m *GCN) Forward(x *G.Node) (*G.Node, error) { return m.forward(x, nil) }

// forward runs the layers, layer l propagating with blocks[l] when blocks
// is not nil (ForwardBlocks) and with the whole graph's Ã otherwise.
func (m *GCN) forward(x *G.Node, blocks []*graph.Matrix) (*G.Node, error) {
	if err := checkInput(x, m.convs[0].lin.W, "GCN "+m.cfg.Name); err != nil {
		return nil, err
	}
	h, err := Dropout(x, m.cfg.InputDropout, m.seeds[0], m.phase)
	if err != nil {
		return nil, err
	}
	for l, c := range m.convs {
		a := c.a
		if blocks != nil {
			a = blocks[l]
		}
		if h, err = c.forwardWith(a, h); err != nil {
			return nil, err
		}
		if l == len(m.convs)-1 {
			break
		}
		if h, err = Activate(h, m.cfg.Activation); err != nil {
			return nil, err
		}
		if h, err = Dropout(h, m.cfg.Dropout, m.seeds[l+1], m.phase); err != nil {
			return nil, err
		}
	}
	return h, nil
}
