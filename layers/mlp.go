package layers

import (
	"fmt"
	"math/rand"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/fairmp/fairmp/graph"
)

// MLPConfig configures a multi-layer perceptron node classifier.
type MLPConfig struct {
	Base
	// Hidden is the width of the hidden layers (ignored when Layers = 1).
	Hidden int `json:"hidden"`
	// Layers is the number of linear layers (>= 1; 1 is logistic
	// regression). Default 2.
	Layers int `json:"layers"`
	// Activation follows every hidden layer. Default ReLU.
	Activation Activation `json:"activation"`
	// Dropout is applied after each hidden activation (training only).
	// Default 0.5.
	Dropout float64 `json:"dropout"`
	// InputDropout is applied to the input features. Default 0.
	InputDropout float64 `json:"input_dropout"`
	// Bias adds biases to every layer. Default true.
	Bias bool `json:"bias"`
}

// DefaultMLPConfig returns a 2-layer MLP in → 64 → classes with ReLU,
// dropout 0.5 between the layers, no input dropout, biases, float64,
// seed 1, named "mlp".
func DefaultMLPConfig(in, classes int) MLPConfig {
	return MLPConfig{Base: DefaultBase("mlp", in, classes), Hidden: 64, Layers: 2,
		Activation: ReLU(), Dropout: 0.5, Bias: true}
}

// Validate checks every field.
func (c MLPConfig) Validate() error {
	if err := c.Base.Validate(); err != nil {
		return err
	}
	return validateStack(c.Hidden, c.Layers, c.Activation, c.Dropout, c.InputDropout)
}

// kindMLP declares the MLP to the registry of kinds (see Declare).
var kindMLP = MustDeclare(KindSpec[MLPConfig, *MLP]{
	Name:    "mlp",
	Title:   "MLP",
	Summary: "multi-layer perceptron: ignores the graph (the structure-free baseline)",
	Default: DefaultMLPConfig,
	New:     NewMLP,
	Config:  (*MLP).Config,
	Params: func(c MLPConfig) []Param {
		return stackParams(c.Name, c.In, c.Hidden, c.Out, c.Layers, c.Bias)
	},
	Hidden: func(c *MLPConfig, w int) error { c.Hidden = w; return nil },
})

// MLP is a stack of Linear layers with activations and dropout between
// them. It ignores the graph: it is the structure-free baseline.
type MLP struct {
	cfg    MLPConfig
	phase  *Phase
	layers []*Linear
	seeds  []int64 // dropout seeds: input, then after each hidden layer
}

var (
	_ BlockModel = (*MLP)(nil)
	_ Phased     = (*MLP)(nil)
)

// NewMLP adds an MLP's parameters to g. An MLP ignores the graph (gr may
// be nil: the argument is there so that every model and layer is built
// the same way, NewX(g, gr, cfg, phase)). phase switches its dropout
// between training and evaluation (nil: always evaluation). It returns an
// error for an invalid configuration or a name already used in g.
func NewMLP(g *G.ExprGraph, _ *graph.Graph, cfg MLPConfig, phase *Phase) (*MLP, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("layers: NewMLP %q: %w", cfg.Name, err)
	}
	rng := rand.New(rand.NewSource(cfg.Seed))
	m := &MLP{cfg: cfg, phase: phase}
	var err error
	if m.layers, err = linearStack(g, cfg.Name, cfg.In, cfg.Hidden, cfg.Out, cfg.Layers, cfg.Bias, cfg.Dtype, rng); err != nil {
		return nil, err
	}
	m.seeds = dropoutSeeds(rng, cfg.Layers)
	return m, nil
}

// linearStack builds layers in → hidden → … → out.
func linearStack(g *G.ExprGraph, name string, in, hidden, out, depth int, bias bool, dt tensor.Dtype, rng *rand.Rand) ([]*Linear, error) {
	ls := make([]*Linear, depth)
	for l := range ls {
		i, o := hidden, hidden
		if l == 0 {
			i = in
		}
		if l == depth-1 {
			o = out
		}
		lc := LinearConfig{Base: Base{Name: fmt.Sprintf("%s.%d", name, l), In: i, Out: o, Dtype: dt}, Bias: bias}
		var err error
		if ls[l], err = newLinear(g, lc.Name, i, o, bias, dt, rng, lc); err != nil {
			return nil, err
		}
	}
	return ls, nil
}

// dropoutSeeds draws k seeds for a model's dropout ops from its RNG, after
// the weights, so the initialisation does not depend on the dropout
// settings.
func dropoutSeeds(rng *rand.Rand, k int) []int64 {
	s := make([]int64, k)
	for i := range s {
		s[i] = rng.Int63()
	}
	return s
}

// Config returns the model's configuration.
func (m *MLP) Config() MLPConfig { return m.cfg }

// Learnables returns W and b of each layer, in order.
func (m *MLP) Learnables() G.Nodes {
	var ns G.Nodes
	for _, l := range m.layers {
		ns = append(ns, l.Learnables()...)
	}
	return ns
}

// Forward returns the n × Out logits for the n × In features x.
func (m *MLP) Forward(x *G.Node) (*G.Node, error) { return Forward(m, x) }

// Compute declares the MLP (see BlockModel): input dropout, then each
// linear layer with the activation and dropout after every layer but the
// last.
func (m *MLP) Compute(f Flow, x Value) (Value, error) {
	return mlpCompute(f, x, m.layers, m.cfg.Activation, m.cfg.InputDropout, m.cfg.Dropout, m.seeds)
}

// mlpCompute is the MLP's computation (APPNP's too).
func mlpCompute(f Flow, x Value, layers []*Linear, act Activation, inDrop, drop float64, seeds []int64) (Value, error) {
	h, err := f.Dropout(x, inDrop, seeds[0])
	if err != nil {
		return Value{}, err
	}
	for l, lin := range layers {
		if l == len(layers)-1 {
			return f.Dense(h, lin.W, lin.B, Activation{})
		}
		if h, err = f.Dense(h, lin.W, lin.B, act); err != nil {
			return Value{}, err
		}
		// seeds[0] is the input dropout's; seeds[l+1] follows layer l.
		if h, err = f.Dropout(h, drop, seeds[l+1]); err != nil {
			return Value{}, err
		}
	}
	return h, nil
}

// Phase returns the phase the model was built with.
func (m *MLP) Phase() *Phase { return m.phase }

// Matrix returns nil: an MLP has no propagation matrix.
func (m *MLP) Matrix() *graph.Matrix { return nil }
