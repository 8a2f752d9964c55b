package layers

import (
	"fmt"
	"math/rand"

	G "gorgonia.org/gorgonia"

	"github.com/fairmp/fairmp/graph"
)

// JKMode is a jumping-knowledge aggregation.
type JKMode string

const (
	// JKConcat concatenates the layers' outputs (width Layers·Hidden).
	JKConcat JKMode = "cat"
	// JKMax takes the element-wise maximum over the layers' outputs.
	JKMax JKMode = "max"
)

// JKNetConfig configures a Jumping Knowledge Network (Xu et al. 2018):
// Layers graph convolutions of width Hidden, each followed by the
// activation; their outputs are aggregated (concatenation or max) and a
// linear layer gives the logits.
type JKNetConfig struct {
	// StackConfig: Hidden is the width of every convolution, Layers their
	// number; Dropout is applied to each convolution's activated output
	// before the next convolution and to the aggregate before the final
	// linear layer (training only); Propagation is shared by all
	// convolutions.
	StackConfig
	// Mode is the aggregation. Default JKConcat.
	Mode JKMode `json:"mode"`
	// Bias adds biases to the convolutions and the final layer. Default true.
	Bias bool `json:"bias"`
}

// DefaultJKNetConfig returns a JKNet with 2 convolutions of width 64,
// concatenation, ReLU, dropout 0.5, PyG's propagation, biases, float64,
// seed 1, named "jknet".
func DefaultJKNetConfig(in, classes int) JKNetConfig {
	return JKNetConfig{StackConfig: defaultStack("jknet", in, classes), Mode: JKConcat, Bias: true}
}

// Validate checks every field.
func (c JKNetConfig) Validate() error {
	if err := c.StackConfig.Validate(); err != nil {
		return err
	}
	if c.Mode != JKConcat && c.Mode != JKMax {
		return fmt.Errorf("Mode = %q, want %q or %q", c.Mode, JKConcat, JKMax)
	}
	return nil
}

// kindJKNET declares JKNet to the registry of kinds (see Declare).
var kindJKNET = MustDeclare(KindSpec[JKNetConfig, *JKNet]{
	Name:    "jknet",
	Title:   "JKNet",
	Summary: "jumping-knowledge network (Xu et al.): GCN layers aggregated by concatenation or max",
	Default: DefaultJKNetConfig,
	New:     NewJKNet,
	Config:  (*JKNet).Config,
	Params: func(c JKNetConfig) []Param {
		width := c.Hidden
		if c.Mode == JKConcat {
			width *= c.Layers
		}
		ps := stackParams(c.Name, c.In, c.Hidden, c.Hidden, c.Layers, c.Bias)
		return append(ps, linearParams(c.Name+".out", width, c.Out, c.Bias)...)
	},
	Hidden:      func(c *JKNetConfig, w int) error { c.Hidden = w; return nil },
	Propagation: func(c JKNetConfig) Propagation { return c.Propagation },
})

// JKNet is a stack of graph convolutions (PyG's GCNConv) with jumping-knowledge aggregation.
type JKNet struct {
	cfg   JKNetConfig
	phase *Phase
	gr    *graph.Graph
	convs []*gcnConv
	out   *Linear
	seeds []int64
}

var (
	_ BlockModel = (*JKNet)(nil)
	_ GraphModel = (*JKNet)(nil)
	_ Phased     = (*JKNet)(nil)
)

// NewJKNet builds Ã from gr once and adds the parameters to g. phase
// switches its dropout (nil: always evaluation). It returns an error for
// an invalid configuration, a nil graph or a name already used in g.
func NewJKNet(g *G.ExprGraph, gr *graph.Graph, cfg JKNetConfig, phase *Phase) (*JKNet, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("layers: NewJKNet %q: %w", cfg.Name, err)
	}
	a, err := cfg.Propagation.Matrix(gr)
	if err != nil {
		return nil, fmt.Errorf("layers: NewJKNet %q: %w", cfg.Name, err)
	}
	rng := rand.New(rand.NewSource(cfg.Seed))
	m := &JKNet{cfg: cfg, phase: phase, gr: gr}
	if m.convs, err = gcnStack(g, cfg.Name, cfg.In, cfg.Hidden, cfg.Hidden, cfg.Layers, cfg.Bias, cfg.Dtype, a, rng); err != nil {
		return nil, err
	}
	width := cfg.Hidden
	if cfg.Mode == JKConcat {
		width *= cfg.Layers
	}
	if m.out, err = newLinear(g, cfg.Name+".out", width, cfg.Out, cfg.Bias, cfg.Dtype, rng, LinearConfig{}); err != nil {
		return nil, err
	}
	m.seeds = dropoutSeeds(rng, cfg.Layers+1)
	return m, nil
}

// Config returns the model's configuration.
func (m *JKNet) Config() JKNetConfig { return m.cfg }

// Matrix returns the propagation matrix Ã.
func (m *JKNet) Matrix() *graph.Matrix { return m.convs[0].a }

// Graph returns the graph the model was built on.
func (m *JKNet) Graph() *graph.Graph { return m.gr }

// Phase returns the phase the model was built with.
func (m *JKNet) Phase() *Phase { return m.phase }

// Learnables returns each convolution's W and b, then the output layer's.
func (m *JKNet) Learnables() G.Nodes {
	var ns G.Nodes
	for _, c := range m.convs {
		ns = append(ns, c.Learnables()...)
	}
	return append(ns, m.out.Learnables()...)
}

// Forward returns the n × Out logits for the n × In features x.
func (m *JKNet) Forward(x *G.Node) (*G.Node, error) { return Forward(m, x) }

// Compute declares the JKNet (see BlockModel): Layers convolutions, each
// followed by the activation (and dropout but after the last), their
// outputs aggregated (Jump) and dropped out, then the output layer.
func (m *JKNet) Compute(f Flow, x Value) (Value, error) {
	h, err := f.Dropout(x, m.cfg.InputDropout, m.seeds[0])
	if err != nil {
		return Value{}, err
	}
	hs := make([]Value, len(m.convs))
	for l, c := range m.convs {
		if h, err = c.compute(f, h, m.cfg.Activation); err != nil {
			return Value{}, err
		}
		hs[l] = h
		if l < len(m.convs)-1 {
			if h, err = f.Dropout(h, m.cfg.Dropout, m.seeds[l+1]); err != nil {
				return Value{}, err
			}
		}
	}
	jk, err := f.Jump(m.cfg.Mode, hs...)
	if err != nil {
		return Value{}, err
	}
	if jk, err = f.Dropout(jk, m.cfg.Dropout, m.seeds[len(m.convs)]); err != nil {
		return Value{}, err
	}
	return f.Dense(jk, m.out.W, m.out.B, Activation{})
}
