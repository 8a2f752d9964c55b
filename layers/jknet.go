package layers

import (
	"fmt"
	"math/rand"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/fairmp/fairmp/graph"
	"github.com/fairmp/fairmp/graph/features"
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
		return append(ps, linearParams(c.Name+".out", width, c.Classes, c.Bias)...)
	},
	Hidden: func(c *JKNetConfig, w int) error { c.Hidden = w; return nil },
})

// JKNet is a stack of GCNConv layers with jumping-knowledge aggregation.
type JKNet struct {
	cfg   JKNetConfig
	phase *Phase
	gr    *graph.Graph
	convs []*GCNConv
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

// Forward returns the n × Classes logits for the n × In features x.
func (m *JKNet) Forward(x *G.Node) (*G.Node, error) {
	if err := checkInput(x, m.convs[0].lin.W, "JKNet "+m.cfg.Name); err != nil {
		return nil, err
	}
	return m.forward(x, nil)
}

// forward runs the model, convolution l propagating with blocks[l] when
// blocks is not nil (ForwardBlocks) and with the whole graph's Ã
// otherwise. On blocks, every layer's output is cut to the targets (the
// first rows of the last block) before the aggregation.
func (m *JKNet) forward(x *G.Node, blocks []*graph.Matrix) (*G.Node, error) {
	h, err := Dropout(x, m.cfg.InputDropout, m.seeds[0], m.phase)
	if err != nil {
		return nil, err
	}
	hs := make(G.Nodes, len(m.convs))
	for l, c := range m.convs {
		a := c.a
		if blocks != nil {
			a = blocks[l]
		}
		if h, err = c.forwardWith(a, h); err != nil {
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
	if blocks != nil {
		targets, _ := blocks[len(blocks)-1].Dims()
		for l, o := range hs[:len(hs)-1] {
			s, err := G.Slice(o, G.S(0, targets))
			if err == nil && s.Dims() == 1 {
				s, err = G.Reshape(s, tensor.Shape{targets, m.cfg.Hidden}) // Slice drops a dimension of one row
			}
			if err != nil {
				return nil, fmt.Errorf("layers: JKNet %q: layer %d's targets: %w", m.cfg.Name, l, err)
			}
			hs[l] = s
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

// Hops returns the number of convolutions.
func (m *JKNet) Hops() int { return m.cfg.Layers }

// ForwardBlocks is Forward with convolution l propagating with
// blocks[l]; the aggregation takes every layer's output on the targets.
func (m *JKNet) ForwardBlocks(x *G.Node, blocks []*graph.Matrix) (*G.Node, error) {
	where := "JKNet " + m.cfg.Name
	if err := checkInput(x, m.convs[0].lin.W, where); err != nil {
		return nil, err
	}
	if err := checkBlocks(x, blocks, m.Hops(), where); err != nil {
		return nil, err
	}
	return m.forward(x, blocks)
}

// LayerwiseLogits returns every node's logits with the current
// parameters in evaluation mode (see BlockModel): the convolutions over
// the whole graph layer by layer, their aggregation, the output layer.
// Memory besides adj and x: every layer's n × Hidden output, and for
// concatenation their n × Layers·Hidden concatenation.
func (m *JKNet) LayerwiseLogits(adj *graph.Matrix, x features.Source) (*tensor.Dense, error) {
	return layerwise("JKNet "+m.cfg.Name, m.cfg.Base, m.Hops(), m.Learnables(), adj, x,
		func(n int) ([]float32, error) { return jknetLayerwise[float32](m, adj, x, n) },
		func(n int) ([]float64, error) { return jknetLayerwise[float64](m, adj, x, n) })
}

func jknetLayerwise[T float32 | float64](m *JKNet, adj *graph.Matrix, x features.Source, n int) ([]T, error) {
	hs := make([][]T, len(m.convs))
	if _, err := gcnRows(m.convs, m.cfg.Activation, true, adj, x, n, func(l int, h []T) { hs[l] = h }); err != nil {
		return nil, err
	}
	w := m.cfg.Hidden
	jk := hs[0]
	if len(hs) > 1 {
		switch m.cfg.Mode {
		case JKConcat:
			jk = make([]T, n*w*len(hs))
			for i := 0; i < n; i++ {
				for l, h := range hs {
					copy(jk[(i*len(hs)+l)*w:], h[i*w:(i+1)*w])
				}
			}
		case JKMax:
			jk = append([]T(nil), hs[0]...)
			for _, h := range hs[1:] {
				for k, v := range h {
					jk[k] = max(jk[k], v)
				}
			}
		}
	}
	out := denseOf[T]([]*Linear{m.out})[0]
	res := make([]T, n*m.cfg.Classes)
	out.apply(jk, res, n, true)
	return res, nil
}
