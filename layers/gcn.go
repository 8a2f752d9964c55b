package layers

import (
	"fmt"
	"math/rand"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/fairmp/fairmp/graph"
)

// GCNConfig configures a GCN node classifier (Kipf & Welling): Layers
// graph convolutions with activation and dropout between them.
type GCNConfig struct {
	StackConfig
	// Bias adds biases to every convolution. Default true.
	Bias bool `json:"bias"`
}

// DefaultGCNConfig returns the 2-layer GCN in → 64 → classes with ReLU,
// dropout 0.5, PyG's propagation, biases, float64, seed 1, named "gcn".
func DefaultGCNConfig(in, classes int) GCNConfig {
	return GCNConfig{StackConfig: defaultStack("gcn", in, classes), Bias: true}
}

// Validate checks every field.
func (c GCNConfig) Validate() error { return c.StackConfig.Validate() }

// kindGCN declares the GCN to the registry of kinds (see Declare).
var kindGCN = MustDeclare(KindSpec[GCNConfig, *GCN]{
	Name:    "gcn",
	Title:   "GCN",
	Summary: "graph convolutional network (Kipf & Welling): PyG's GCNConv stacked",
	Default: DefaultGCNConfig,
	New:     NewGCN,
	Config:  (*GCN).Config,
	Params: func(c GCNConfig) []Param {
		return stackParams(c.Name, c.In, c.Hidden, c.Out, c.Layers, c.Bias)
	},
	Hidden:      func(c *GCNConfig, w int) error { c.Hidden = w; return nil },
	Propagation: func(c GCNConfig) Propagation { return c.Propagation },
})

// GCN is a stack of graph convolutions (PyG's GCNConv) sharing one propagation matrix.
type GCN struct {
	cfg   GCNConfig
	phase *Phase
	gr    *graph.Graph
	convs []*gcnConv
	seeds []int64
}

var (
	_ BlockModel = (*GCN)(nil)
	_ GraphModel = (*GCN)(nil)
	_ Phased     = (*GCN)(nil)
)

// NewGCN builds Ã from gr once and adds the model's parameters to g.
// phase switches its dropout (nil: always evaluation). It returns an error
// for an invalid configuration, a nil graph or a name already used in g.
func NewGCN(g *G.ExprGraph, gr *graph.Graph, cfg GCNConfig, phase *Phase) (*GCN, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("layers: NewGCN %q: %w", cfg.Name, err)
	}
	a, err := cfg.Propagation.Matrix(gr)
	if err != nil {
		return nil, fmt.Errorf("layers: NewGCN %q: %w", cfg.Name, err)
	}
	rng := rand.New(rand.NewSource(cfg.Seed))
	convs, err := gcnStack(g, cfg.Name, cfg.In, cfg.Hidden, cfg.Out, cfg.Layers, cfg.Bias, cfg.Dtype, a, rng)
	if err != nil {
		return nil, err
	}
	return &GCN{cfg: cfg, phase: phase, gr: gr, convs: convs, seeds: dropoutSeeds(rng, cfg.Layers)}, nil
}

// gcnStack builds depth convolutions in → hidden → … → out.
func gcnStack(g *G.ExprGraph, name string, in, hidden, out, depth int, bias bool, dt tensor.Dtype, a *graph.Matrix, rng *rand.Rand) ([]*gcnConv, error) {
	convs := make([]*gcnConv, depth)
	for l := range convs {
		i, o := hidden, hidden
		if l == 0 {
			i = in
		}
		if l == depth-1 {
			o = out
		}
		cc := gcnConvConfig{Base: Base{Name: fmt.Sprintf("%s.%d", name, l), In: i, Out: o, Dtype: dt}, Bias: bias}
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

// Forward returns the n × Out logits for the n × In features x.
func (m *GCN) Forward(x *G.Node) (*G.Node, error) { return Forward(m, x) }

// Compute declares the GCN (see BlockModel): input dropout, then each
// convolution Ã·(h·W) + b, with the activation and dropout after every
// convolution but the last.
func (m *GCN) Compute(f Flow, x Value) (Value, error) {
	h, err := f.Dropout(x, m.cfg.InputDropout, m.seeds[0])
	if err != nil {
		return Value{}, err
	}
	for l, c := range m.convs {
		last := l == len(m.convs)-1
		act := m.cfg.Activation
		if last {
			act = Activation{}
		}
		if h, err = c.compute(f, h, act); err != nil {
			return Value{}, err
		}
		if last {
			break
		}
		if h, err = f.Dropout(h, m.cfg.Dropout, m.seeds[l+1]); err != nil {
			return Value{}, err
		}
	}
	return h, nil
}

// Graph returns the graph the model was built on.
func (m *GCN) Graph() *graph.Graph { return m.gr }

// Phase returns the phase the model was built with.
func (m *GCN) Phase() *Phase { return m.phase }
