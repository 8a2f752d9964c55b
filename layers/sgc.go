package layers

import (
	"fmt"
	"math/rand"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/fairmp/fairmp/graph"
	"github.com/fairmp/fairmp/graph/features"
	"github.com/fairmp/fairmp/internal/opkit"
)

// SGCConfig configures Simplified Graph Convolution (Wu et al., PyG's
// SGConv): logits = (Ã^K X)·W + b, with Ã^K X computed once.
type SGCConfig struct {
	Base
	// K is the number of propagation steps (0 to MaxSteps; 0 is logistic
	// regression). Default 1 (PyG's default).
	K int `json:"k"`
	// Propagation builds Ã. Default PyG's.
	Propagation Propagation `json:"propagation"`
	// Bias adds a learnable bias. Default true.
	Bias bool `json:"bias"`
}

// DefaultSGCConfig returns SGC with K = 1, PyG's propagation, bias,
// float64, seed 1, named "sgc".
func DefaultSGCConfig(in, classes int) SGCConfig {
	return SGCConfig{Base: DefaultBase("sgc", in, classes), K: 1, Propagation: DefaultPropagation(), Bias: true}
}

// Validate checks every field.
func (c SGCConfig) Validate() error {
	if err := c.Base.Validate(); err != nil {
		return err
	}
	if c.K < 0 || c.K > MaxSteps {
		return fmt.Errorf("K = %d, want 0 ≤ K ≤ %d (MaxSteps)", c.K, MaxSteps)
	}
	return c.Propagation.Validate()
}

// kindSGC declares SGC to the registry of kinds (see Declare).
var kindSGC = MustDeclare(KindSpec[SGCConfig, *SGC]{
	Name:    "sgc",
	Title:   "SGC",
	Summary: "simplified graph convolution (Wu et al.): a linear model on Ã^K X",
	Default: DefaultSGCConfig,
	New: func(g *G.ExprGraph, gr *graph.Graph, cfg SGCConfig, _ *Phase) (*SGC, error) {
		return NewSGC(g, gr, cfg)
	},
	Config: (*SGC).Config,
	Params: func(c SGCConfig) []Param { return linearParams(c.Name, c.In, c.Classes, c.Bias) },
})

// SGC is a linear classifier on the propagated features Ã^K X.
type SGC struct {
	cfg        SGCConfig
	a          *graph.Matrix
	gr         *graph.Graph
	lin        *Linear
	x          *G.Node       // the input node Forward was called with
	propagated *tensor.Dense // Ã^K X
	pnode      *G.Node
}

var (
	_ BlockModel = (*SGC)(nil)
	_ GraphModel = (*SGC)(nil)
)

// NewSGC builds Ã from gr and adds the parameters to g. It returns an
// error for an invalid configuration, a nil graph or a name already used.
func NewSGC(g *G.ExprGraph, gr *graph.Graph, cfg SGCConfig) (*SGC, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("layers: NewSGC %q: %w", cfg.Name, err)
	}
	a, err := cfg.Propagation.Matrix(gr)
	if err != nil {
		return nil, fmt.Errorf("layers: NewSGC %q: %w", cfg.Name, err)
	}
	lin, err := newLinear(g, cfg.Name, cfg.In, cfg.Classes, cfg.Bias, cfg.Dtype, rand.New(rand.NewSource(cfg.Seed)), LinearConfig{})
	if err != nil {
		return nil, err
	}
	return &SGC{cfg: cfg, a: a, gr: gr, lin: lin}, nil
}

// Config returns the model's configuration.
func (m *SGC) Config() SGCConfig { return m.cfg }

// Graph returns the graph the model was built on.
func (m *SGC) Graph() *graph.Graph { return m.gr }

// Matrix returns the propagation matrix Ã.
func (m *SGC) Matrix() *graph.Matrix { return m.a }

// Learnables returns W and, with bias, b.
func (m *SGC) Learnables() G.Nodes { return m.lin.Learnables() }

// Propagated returns Ã^K X as computed by the first Forward (nil before).
// It is the model's input as the linear layer sees it; do not modify it.
func (m *SGC) Propagated() *tensor.Dense { return m.propagated }

// Forward computes Ã^K X once from the value of x, which must be an input
// node holding its value (the features, as FeatureNode makes), adds it to
// the graph as a non-learnable node named Name+".propagated", and returns
// its linear transform. Later calls with the same x return the same node;
// a call with another node is an error, as is an x without a value. No
// gradient flows to x.
func (m *SGC) Forward(x *G.Node) (*G.Node, error) {
	if err := checkInput(x, m.lin.W, "SGC "+m.cfg.Name); err != nil {
		return nil, err
	}
	if m.x != nil {
		if x != m.x {
			return nil, fmt.Errorf("layers: SGC %q: Forward called with %s after %s: the propagated features are computed once, for one input", m.cfg.Name, opkit.DescribeNode(x), opkit.DescribeNode(m.x))
		}
		return m.lin.Forward(m.pnode)
	}
	if x.Op() != nil || x.Value() == nil {
		return nil, fmt.Errorf("layers: SGC %q: input %s must be an input node holding the features", m.cfg.Name, opkit.DescribeNode(x))
	}
	p, err := SGCPropagate(m.a, m.cfg.K, x.Value())
	if err != nil {
		return nil, fmt.Errorf("layers: SGC %q: %w", m.cfg.Name, err)
	}
	name := m.cfg.Name + ".propagated"
	if err := opkit.UniqueName(x.Graph(), name); err != nil {
		return nil, fmt.Errorf("layers: %w", err)
	}
	m.x, m.propagated = x, p
	m.pnode = G.NewMatrix(x.Graph(), p.Dtype(), G.WithShape(p.Shape()...), G.WithName(name), G.WithValue(p))
	return m.lin.Forward(m.pnode)
}

// SGCPropagate returns Ã^K X for an n × d float32 or float64 value x
// (a copy of x when k = 0), with K sparse products.
func SGCPropagate(a *graph.Matrix, k int, x G.Value) (*tensor.Dense, error) {
	if a == nil {
		return nil, fmt.Errorf("nil propagation matrix")
	}
	if k < 0 {
		return nil, fmt.Errorf("K = %d, want >= 0", k)
	}
	d, err := opkit.Dense(x)
	if err != nil {
		return nil, err
	}
	n, c, err := opkit.Shape2(d)
	if rows, cols := a.Dims(); err != nil || n != cols || rows != cols {
		return nil, fmt.Errorf("features of shape %v for a %d × %d propagation matrix", d.Shape(), rows, cols)
	}
	cur := d.Clone().(*tensor.Dense)
	if k == 0 {
		return cur, nil
	}
	next := opkit.Alloc(d.Dtype(), n, c)
	for s := 0; s < k; s++ {
		switch cd := cur.Data().(type) {
		case []float64:
			a.MulDense64(next.Data().([]float64), cd, c)
		case []float32:
			a.MulDense32(next.Data().([]float32), cd, c)
		default:
			return nil, fmt.Errorf("dtype %v, want float32 or float64", d.Dtype())
		}
		cur, next = next, cur
	}
	return cur, nil
}

// Hops returns K.
func (m *SGC) Hops() int { return m.cfg.K }

// ForwardBlocks propagates x through the blocks (no gradient flows to x)
// and applies the linear layer. Unlike Forward it caches nothing: every
// batch has its own blocks.
func (m *SGC) ForwardBlocks(x *G.Node, blocks []*graph.Matrix) (*G.Node, error) {
	where := "SGC " + m.cfg.Name
	if err := checkInput(x, m.lin.W, where); err != nil {
		return nil, err
	}
	if err := checkBlocks(x, blocks, m.Hops(), where); err != nil {
		return nil, err
	}
	h := x
	var err error
	for l, b := range blocks {
		if h, err = SpMM(b, h); err != nil {
			return nil, fmt.Errorf("layers: %s: block %d: %w", where, l, err)
		}
	}
	return m.lin.Forward(h)
}

// LayerwiseLogits returns every node's logits with the current
// parameters (see BlockModel): Ã^K X by K sparse products over the whole
// graph, then the linear layer. Memory besides adj and x: two n × In
// buffers and the n × Classes result.
func (m *SGC) LayerwiseLogits(adj *graph.Matrix, x features.Source) (*tensor.Dense, error) {
	return layerwise("SGC "+m.cfg.Name, m.cfg.Base, m.Hops(), m.Learnables(), adj, x,
		func(n int) ([]float32, error) { return sgcLayerwise[float32](m, adj, x, n) },
		func(n int) ([]float64, error) { return sgcLayerwise[float64](m, adj, x, n) })
}

func sgcLayerwise[T float32 | float64](m *SGC, adj *graph.Matrix, x features.Source, n int) ([]T, error) {
	d := x.Cols()
	p := make([]T, n*d)
	rows := make([]int, 0, chunkRows)
	for lo := 0; lo < n; lo += chunkRows {
		hi := min(lo+chunkRows, n)
		if err := readRows(x, lo, hi, p[lo*d:hi*d], rows); err != nil {
			return nil, fmt.Errorf("features: %w", err)
		}
	}
	q := make([]T, n*d)
	for k := 0; k < m.cfg.K; k++ {
		mul(adj, q, p, d)
		p, q = q, p
	}
	lin := denseOf[T]([]*Linear{m.lin})[0]
	out := make([]T, n*m.cfg.Classes)
	lin.apply(p, out, n, true)
	return out, nil
}
