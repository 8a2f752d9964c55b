package layers

import (
	"fmt"
	"math/rand"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/fairmp/fairmp/graph"
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
	Name:        "sgc",
	Title:       "SGC",
	Summary:     "simplified graph convolution (Wu et al.): a linear model on Ã^K X",
	Default:     DefaultSGCConfig,
	New:         NewSGC,
	Config:      (*SGC).Config,
	Params:      func(c SGCConfig) []Param { return linearParams(c.Name, c.In, c.Out, c.Bias) },
	Propagation: func(c SGCConfig) Propagation { return c.Propagation },
})

// SGC is a linear classifier on the propagated features Ã^K X.
type SGC struct {
	cfg SGCConfig
	a   *graph.Matrix
	gr  *graph.Graph
	lin *Linear
}

var (
	_ BlockModel = (*SGC)(nil)
	_ GraphModel = (*SGC)(nil)
)

// NewSGC builds Ã from gr and adds the parameters to g. SGC has no
// dropout: phase is not used (it may be nil). It returns an error for an
// invalid configuration, a nil graph or a name already used.
func NewSGC(g *G.ExprGraph, gr *graph.Graph, cfg SGCConfig, _ *Phase) (*SGC, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("layers: NewSGC %q: %w", cfg.Name, err)
	}
	a, err := cfg.Propagation.Matrix(gr)
	if err != nil {
		return nil, fmt.Errorf("layers: NewSGC %q: %w", cfg.Name, err)
	}
	lin, err := newLinear(g, cfg.Name, cfg.In, cfg.Out, cfg.Bias, cfg.Dtype, rand.New(rand.NewSource(cfg.Seed)), LinearConfig{})
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

// Forward returns the logits (Ã^K X)·W + b. When x is an input node
// holding its value (the features, as FeatureNode makes), Ã^K X is
// computed once, when the graph is built, and held as a constant (see
// Forward): no gradient flows to x then, and the model is a logistic
// regression on precomputed features, as SGC is meant to be.
func (m *SGC) Forward(x *G.Node) (*G.Node, error) { return Forward(m, x) }

// Compute declares SGC (see BlockModel): K propagations, then the linear
// layer.
func (m *SGC) Compute(f Flow, x Value) (Value, error) {
	h := x
	for k := 0; k < m.cfg.K; k++ {
		var err error
		if h, err = f.Propagate(h, Hop{}); err != nil {
			return Value{}, err
		}
	}
	return f.Dense(h, m.lin.W, m.lin.B, Activation{})
}

// propagateConst returns Ã·x (maxRows of x for aggrMax) for an n × d
// float32 or float64 value x
// (Forward's folding of a propagation of the constant input).
func propagateConst(a *graph.Matrix, x G.Value, aggr string) (*tensor.Dense, error) {
	d, err := opkit.Dense(x)
	if err != nil {
		return nil, err
	}
	n, c, err := opkit.Shape2(d)
	if rows, cols := a.Dims(); err != nil || n != cols || rows != cols {
		return nil, fmt.Errorf("features of shape %v for a %d × %d propagation matrix", d.Shape(), rows, cols)
	}
	out := opkit.Alloc(d.Dtype(), n, c)
	switch xd := d.Data().(type) {
	case []float64:
		if aggr == aggrMax {
			maxRows(a, out.Data().([]float64), xd, c)
		} else {
			a.MulDense64(out.Data().([]float64), xd, c)
		}
	case []float32:
		if aggr == aggrMax {
			maxRows(a, out.Data().([]float32), xd, c)
		} else {
			a.MulDense32(out.Data().([]float32), xd, c)
		}
	default:
		return nil, fmt.Errorf("dtype %v, want float32 or float64", d.Dtype())
	}
	return out, nil
}
