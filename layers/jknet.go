package layers

import (
	"fmt"
	"math/rand"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

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
	// Name prefixes the parameter names; unique per graph.
	Name string `json:"name"`
	// In is the number of input features, Classes the number of outputs.
	In      int `json:"in"`
	Classes int `json:"classes"`
	// Hidden is the width of every convolution. Default 64.
	Hidden int `json:"hidden"`
	// Layers is the number of convolutions (>= 1). Default 2.
	Layers int `json:"layers"`
	// Mode is the aggregation. Default JKConcat.
	Mode JKMode `json:"mode"`
	// Activation follows every convolution. Default ReLU.
	Activation Activation `json:"activation"`
	// Dropout is applied to each convolution's activated output before
	// the next convolution and to the aggregate before the final linear
	// layer (training only). Default 0.5.
	Dropout float64 `json:"dropout"`
	// InputDropout on the input features. Default 0.
	InputDropout float64 `json:"input_dropout"`
	// Propagation builds Ã (shared by all convolutions). Default PyG's.
	Propagation Propagation `json:"propagation"`
	// Bias adds biases to the convolutions and the final layer. Default true.
	Bias bool `json:"bias"`
	// Dtype is Float32 or Float64. Default Float64.
	Dtype tensor.Dtype `json:"-"`
	// Seed seeds the initialisation and the dropout masks.
	Seed int64 `json:"seed"`
}

// DefaultJKNetConfig returns a JKNet with 2 convolutions of width 64,
// concatenation, ReLU, dropout 0.5, PyG's propagation, biases, float64,
// seed 1, named "jknet".
func DefaultJKNetConfig(in, classes int) JKNetConfig {
	return JKNetConfig{Name: "jknet", In: in, Classes: classes, Hidden: 64, Layers: 2, Mode: JKConcat,
		Activation: ReLU(), Dropout: 0.5, Propagation: DefaultPropagation(), Bias: true, Dtype: tensor.Float64, Seed: 1}
}

// Validate checks every field.
func (c JKNetConfig) Validate() error {
	if err := validateStack(c.Name, c.In, c.Classes, c.Hidden, c.Layers, c.Activation, c.Dropout, c.InputDropout, c.Propagation, c.Dtype); err != nil {
		return err
	}
	if c.Mode != JKConcat && c.Mode != JKMax {
		return fmt.Errorf("Mode = %q, want %q or %q", c.Mode, JKConcat, JKMax)
	}
	return nil
}

// JKNet is a stack of GCNConv layers with jumping-knowledge aggregation.
type JKNet struct {
	cfg   JKNetConfig
	phase *Phase
	gr    *graph.Graph
	convs []*GCNConv
	out   *Linear
	seeds []int64
}

var _ Model = (*JKNet)(nil)

// NewJKNet builds Ã from gr once and adds the parameters to g. phase
// switches its dropout (nil: always evaluation). It returns an error for
// an invalid configuration, a nil graph or a name already used in g.
func NewJKNet(g *G.ExprGraph, cfg JKNetConfig, gr *graph.Graph, phase *Phase) (*JKNet, error) {
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
	if m.out, err = newLinear(g, cfg.Name+".out", width, cfg.Classes, cfg.Bias, cfg.Dtype, rng, LinearConfig{}); err != nil {
		return nil, err
	}
	m.seeds = dropoutSeeds(rng, cfg.Layers+1)
	return m, nil
}

// Config returns the model's configuration.
func (m *JKNet) Config() JKNetConfig { return m.cfg }

// Matrix returns the propagation matrix Ã.
func (m *JKNet) Matrix() *graph.Matrix { return m.convs[0].a }

// Learnables returns each convolution's W and b, then the output layer's.
func (m *JKNet) Learnables() G.Nodes {
	var ns G.Nodes
	for _, c := range m.convs {
		ns = append(ns, c.Learnables()...)
	}
	return append(ns, m.out.Learnables()...)
}

// Forward returns the n × Classes logits for the n × In features x.
func (m *JKNet) Forward(x *G.Node) (*G.Node, error) {
	if err := checkInput(x, m.convs[0].lin.W, "JKNet "+m.cfg.Name); err != nil {
		return nil, err
	}
	h, err := Dropout(x, m.cfg.InputDropout, m.seeds[0], m.phase)
	if err != nil {
		return nil, err
	}
	hs := make(G.Nodes, len(m.convs))
	for l, c := range m.convs {
		if h, err = c.Forward(h); err != nil {
			return nil, err
		}
		if h, err = Activate(h, m.cfg.Activation); err != nil {
			return nil, err
		}
		hs[l] = h
		if l < len(m.convs)-1 {
			if h, err = Dropout(h, m.cfg.Dropout, m.seeds[l+1], m.phase); err != nil {
				return nil, err
			}
		}
	}
	jk := hs[0]
	if len(hs) > 1 {
		switch m.cfg.Mode {
		case JKConcat:
			jk, err = concatCols(hs...)
		case JKMax:
			for _, o := range hs[1:] {
				if jk, err = G.MaxBetween(jk, o); err != nil {
					break
				}
			}
		}
		if err != nil {
			return nil, fmt.Errorf("layers: JKNet %q: aggregation: %w", m.cfg.Name, err)
		}
	}
	if jk, err = Dropout(jk, m.cfg.Dropout, m.seeds[len(m.convs)], m.phase); err != nil {
		return nil, err
	}
	return m.out.Forward(jk)
}
