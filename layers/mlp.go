package layers

import (
	"fmt"
	"math/rand"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// MLPConfig configures a multi-layer perceptron node classifier.
type MLPConfig struct {
	// Name prefixes the parameter names (Name+".0.W", ...); unique per graph.
	Name string `json:"name"`
	// In is the number of input features, Classes the number of outputs.
	In      int `json:"in"`
	Classes int `json:"classes"`
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
	// Dtype is Float32 or Float64. Default Float64.
	Dtype tensor.Dtype `json:"-"`
	// Seed seeds the initialisation and the dropout masks.
	Seed int64 `json:"seed"`
}

// DefaultMLPConfig returns a 2-layer MLP in → 64 → classes with ReLU,
// dropout 0.5 between the layers, no input dropout, biases, float64,
// seed 1, named "mlp".
func DefaultMLPConfig(in, classes int) MLPConfig {
	return MLPConfig{Name: "mlp", In: in, Classes: classes, Hidden: 64, Layers: 2,
		Activation: ReLU(), Dropout: 0.5, Bias: true, Dtype: tensor.Float64, Seed: 1}
}

// Validate checks every field.
func (c MLPConfig) Validate() error {
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
	return checkDtype(c.Dtype)
}

// MLP is a stack of Linear layers with activations and dropout between
// them. It ignores the graph: it is the structure-free baseline.
type MLP struct {
	cfg    MLPConfig
	phase  *Phase
	layers []*Linear
	seeds  []int64 // dropout seeds: input, then after each hidden layer
}

var _ Model = (*MLP)(nil)

// NewMLP adds an MLP's parameters to g. phase switches its dropout
// between training and evaluation (nil: always evaluation). It returns an
// error for an invalid configuration or a name already used in g.
func NewMLP(g *G.ExprGraph, cfg MLPConfig, phase *Phase) (*MLP, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("layers: NewMLP %q: %w", cfg.Name, err)
	}
	rng := rand.New(rand.NewSource(cfg.Seed))
	m := &MLP{cfg: cfg, phase: phase}
	var err error
	if m.layers, err = linearStack(g, cfg.Name, cfg.In, cfg.Hidden, cfg.Classes, cfg.Layers, cfg.Bias, cfg.Dtype, rng); err != nil {
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
		lc := LinearConfig{Name: fmt.Sprintf("%s.%d", name, l), In: i, Out: o, Bias: bias, Dtype: dt}
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

// Forward returns the n × Classes logits for the n × In features x.
func (m *MLP) Forward(x *G.Node) (*G.Node, error) {
	return mlpForward(x, m.layers, m.cfg.Activation, m.cfg.InputDropout, m.cfg.Dropout, m.seeds, m.phase)
}

func mlpForward(x *G.Node, layers []*Linear, act Activation, inDrop, drop float64, seeds []int64, phase *Phase) (*G.Node, error) {
	if err := checkInput(x, layers[0].W, layers[0].W.Name()); err != nil {
		return nil, err
	}
	h, err := Dropout(x, inDrop, seeds[0], phase)
	if err != nil {
		return nil, err
	}
	for l, lin := range layers {
		if h, err = lin.Forward(h); err != nil {
			return nil, err
		}
		if l == len(layers)-1 {
			break
		}
		if h, err = Activate(h, act); err != nil {
			return nil, err
		}
		// seeds[0] is the input dropout's; seeds[l+1] follows layer l.
		if h, err = Dropout(h, drop, seeds[l+1], phase); err != nil {
			return nil, err
		}
	}
	return h, nil
}
