package layers

import (
	"fmt"
	"math"
	"math/rand"

	G "gorgonia.org/gorgonia"

	"github.com/fairmp/fairmp/graph"
)

// APPNPConfig configures APPNP (Gasteiger et al.): an MLP H = f(X) followed
// by K steps of personalised-PageRank propagation Z ← (1−α)ÃZ + αH,
// starting from Z = H.
type APPNPConfig struct {
	// StackConfig shapes the MLP (Hidden, Layers, Activation, Dropout,
	// InputDropout) and builds Ã (Propagation).
	StackConfig
	// K is the number of propagation steps (0 to MaxSteps). Default 10.
	K int `json:"k"`
	// Alpha is the teleport probability, in [0, 1]. Default 0.1.
	Alpha float64 `json:"alpha"`
	// EdgeDropout drops entries of Ã in each propagation step during
	// training (PyG's APPNP dropout), in [0, 1). Default 0.
	EdgeDropout float64 `json:"edge_dropout"`
	// Bias adds biases to the MLP's layers. Default true.
	Bias bool `json:"bias"`
}

// DefaultAPPNPConfig returns APPNP with a 2-layer MLP (64 hidden, ReLU,
// dropout 0.5), K = 10, α = 0.1, no edge dropout, PyG's propagation,
// biases, float64, seed 1, named "appnp".
func DefaultAPPNPConfig(in, classes int) APPNPConfig {
	return APPNPConfig{StackConfig: defaultStack("appnp", in, classes), K: 10, Alpha: 0.1, Bias: true}
}

// Validate checks every field.
func (c APPNPConfig) Validate() error {
	if err := c.StackConfig.Validate(); err != nil {
		return err
	}
	if c.K < 0 || c.K > MaxSteps {
		return fmt.Errorf("K = %d, want 0 ≤ K ≤ %d (MaxSteps)", c.K, MaxSteps)
	}
	if !(c.Alpha >= 0 && c.Alpha <= 1) || math.IsNaN(c.Alpha) {
		return fmt.Errorf("Alpha = %v, want 0 <= Alpha <= 1", c.Alpha)
	}
	return checkProb("EdgeDropout", c.EdgeDropout)
}

// kindAPPNP declares APPNP to the registry of kinds (see Declare).
var kindAPPNP = MustDeclare(KindSpec[APPNPConfig, *APPNP]{
	Name:    "appnp",
	Title:   "APPNP",
	Summary: "an MLP, then K steps of personalised-PageRank propagation (Gasteiger et al.)",
	Default: DefaultAPPNPConfig,
	New:     NewAPPNP,
	Config:  (*APPNP).Config,
	Params: func(c APPNPConfig) []Param {
		return stackParams(c.Name, c.In, c.Hidden, c.Out, c.Layers, c.Bias)
	},
	Hidden:      func(c *APPNPConfig, w int) error { c.Hidden = w; return nil },
	Propagation: func(c APPNPConfig) Propagation { return c.Propagation },
})

// APPNP is an MLP followed by approximate personalised-PageRank
// propagation.
type APPNP struct {
	cfg       APPNPConfig
	phase     *Phase
	a         *graph.Matrix
	gr        *graph.Graph
	layers    []*Linear
	seeds     []int64
	edgeSeeds []int64
}

var (
	_ BlockModel = (*APPNP)(nil)
	_ GraphModel = (*APPNP)(nil)
	_ Phased     = (*APPNP)(nil)
)

// NewAPPNP builds Ã from gr once and adds the MLP's parameters to g.
// phase switches dropout and edge dropout (nil: always evaluation). It
// returns an error for an invalid configuration, a nil graph or a name
// already used in g.
func NewAPPNP(g *G.ExprGraph, gr *graph.Graph, cfg APPNPConfig, phase *Phase) (*APPNP, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("layers: NewAPPNP %q: %w", cfg.Name, err)
	}
	a, err := cfg.Propagation.Matrix(gr)
	if err != nil {
		return nil, fmt.Errorf("layers: NewAPPNP %q: %w", cfg.Name, err)
	}
	rng := rand.New(rand.NewSource(cfg.Seed))
	m := &APPNP{cfg: cfg, phase: phase, a: a, gr: gr}
	if m.layers, err = linearStack(g, cfg.Name, cfg.In, cfg.Hidden, cfg.Out, cfg.Layers, cfg.Bias, cfg.Dtype, rng); err != nil {
		return nil, err
	}
	m.seeds = dropoutSeeds(rng, cfg.Layers)
	m.edgeSeeds = dropoutSeeds(rng, cfg.K)
	return m, nil
}

// Config returns the model's configuration.
func (m *APPNP) Config() APPNPConfig { return m.cfg }

// Matrix returns the propagation matrix Ã.
func (m *APPNP) Matrix() *graph.Matrix { return m.a }

// Learnables returns the MLP's W and b of each layer, in order.
func (m *APPNP) Learnables() G.Nodes {
	var ns G.Nodes
	for _, l := range m.layers {
		ns = append(ns, l.Learnables()...)
	}
	return ns
}

// Forward returns the n × Out logits for the n × In features x.
func (m *APPNP) Forward(x *G.Node) (*G.Node, error) { return Forward(m, x) }

// Compute declares APPNP (see BlockModel): the MLP h, then K
// personalised-PageRank steps z ← (1−α)·Ã·z + α·h, each propagation with
// edge dropout.
func (m *APPNP) Compute(f Flow, x Value) (Value, error) {
	h, err := mlpCompute(f, x, m.layers, m.cfg.Activation, m.cfg.InputDropout, m.cfg.Dropout, m.seeds)
	if err != nil {
		return Value{}, err
	}
	z := h
	coef := []float64{1 - m.cfg.Alpha, m.cfg.Alpha}
	for k := 0; k < m.cfg.K; k++ {
		az, err := f.Propagate(z, Hop{EdgeDropout: m.cfg.EdgeDropout, Seed: m.edgeSeeds[k]})
		if err != nil {
			return Value{}, fmt.Errorf("step %d: %w", k, err)
		}
		if z, err = f.Combine(coef, az, h); err != nil {
			return Value{}, fmt.Errorf("step %d: %w", k, err)
		}
	}
	return z, nil
}

// Graph returns the graph the model was built on.
func (m *APPNP) Graph() *graph.Graph { return m.gr }

// Phase returns the phase the model was built with.
func (m *APPNP) Phase() *Phase { return m.phase }
