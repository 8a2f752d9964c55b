package layers

import (
	"fmt"
	"math/rand"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/fairmp/fairmp/graph"
)

// LinearConfig configures a Linear layer y = x·W + b.
type LinearConfig struct {
	// Base names the parameters (Name+".W", Name+".b"), gives the input
	// and output widths In and Out, the Dtype, and the Seed of W's
	// Glorot-uniform initialisation.
	Base
	// Bias adds a learnable bias (zeros at start). Default true.
	Bias bool `json:"bias"`
}

// DefaultLinearConfig returns the configuration of an in → out layer with
// bias, named "linear", float64, seed 1.
func DefaultLinearConfig(in, out int) LinearConfig {
	return LinearConfig{Base: DefaultBase("linear", in, out), Bias: true}
}

// Validate checks every field.
func (c LinearConfig) Validate() error { return c.Base.Validate() }

// Linear is a fully connected layer y = x·W + b, W of shape In × Out
// (Glorot uniform), b of shape 1 × Out (zeros).
type Linear struct {
	cfg  LinearConfig
	W, B *G.Node // B is nil without bias
}

// NewLinear adds a Linear layer's parameters to g. A Linear layer ignores
// the graph and has no dropout: gr and phase are not used (they may be
// nil; they are there so that every model and layer is built the same
// way, NewX(g, gr, cfg, phase)). It returns an error for an invalid
// configuration or a parameter name already used in g.
func NewLinear(g *G.ExprGraph, _ *graph.Graph, cfg LinearConfig, _ *Phase) (*Linear, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("layers: NewLinear %q: %w", cfg.Name, err)
	}
	return newLinear(g, cfg.Name, cfg.In, cfg.Out, cfg.Bias, cfg.Dtype, rand.New(rand.NewSource(cfg.Seed)), cfg)
}

func newLinear(g *G.ExprGraph, name string, in, out int, bias bool, dt tensor.Dtype, rng *rand.Rand, cfg LinearConfig) (*Linear, error) {
	l := &Linear{cfg: cfg}
	var err error
	if l.W, err = newWeight(g, dt, in, out, name+".W", rng); err != nil {
		return nil, err
	}
	if bias {
		if l.B, err = newBias(g, dt, out, name+".b"); err != nil {
			return nil, err
		}
	}
	return l, nil
}

// Config returns the layer's configuration.
func (l *Linear) Config() LinearConfig { return l.cfg }

// Learnables returns W and, with bias, b.
func (l *Linear) Learnables() G.Nodes {
	if l.B == nil {
		return G.Nodes{l.W}
	}
	return G.Nodes{l.W, l.B}
}

// Forward returns x·W + b for an n × In node x of the layer's dtype.
func (l *Linear) Forward(x *G.Node) (*G.Node, error) {
	if err := checkInput(x, l.W, "Linear "+l.W.Name()); err != nil {
		return nil, err
	}
	y, err := denseAct(x, l.W, l.B, false)
	if err != nil {
		return nil, fmt.Errorf("layers: %s: %w", l.W.Name(), err)
	}
	return y, nil
}

// checkInput checks that x is a matrix of w's dtype with w's row count of
// columns.
func checkInput(x, w *G.Node, where string) error {
	if x == nil {
		return fmt.Errorf("layers: %s: nil input node", where)
	}
	s := x.Shape()
	if len(s) != 2 {
		return fmt.Errorf("layers: %s: input %q (node %d) has shape %v, want n × %d", where, x.Name(), x.ID(), s, w.Shape()[0])
	}
	if s[1] != w.Shape()[0] {
		return fmt.Errorf("layers: %s: input %q (node %d) has %d columns, want %d", where, x.Name(), x.ID(), s[1], w.Shape()[0])
	}
	if x.Dtype() != w.Dtype() {
		return fmt.Errorf("layers: %s: input %q (node %d) is %v, want %v", where, x.Name(), x.ID(), x.Dtype(), w.Dtype())
	}
	if x.Graph() != w.Graph() {
		return fmt.Errorf("layers: %s: input %q (node %d) is in another gorgonia graph", where, x.Name(), x.ID())
	}
	return nil
}
