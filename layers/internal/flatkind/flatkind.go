// Package flatkind declares, for tests, a model kind that does not run on
// sampled blocks or on other propagation matrices: an MLP behind a type
// that is not a layers.BlockModel. Import it for its declaration; the
// kind's name is Name.
package flatkind

import (
	G "gorgonia.org/gorgonia"

	"github.com/fairmp/fairmp/graph"
	"github.com/fairmp/fairmp/layers"
)

// Name is the kind's name.
const Name = "flat-test"

// Config configures the kind: an MLP's base configuration.
type Config struct{ layers.Base }

// Validate checks the base configuration.
func (c Config) Validate() error { return c.Base.Validate() }

// Model is the kind's model.
type Model struct {
	layers.Model
	cfg Config
}

// mlpConfig is the MLP the kind builds.
func mlpConfig(c Config) layers.MLPConfig {
	mc := layers.DefaultMLPConfig(c.In, c.Out)
	mc.Base = c.Base
	return mc
}

var _ = layers.MustDeclare(layers.KindSpec[Config, *Model]{
	Name:    Name,
	Default: func(in, classes int) Config { return Config{layers.DefaultBase("flat", in, classes)} },
	New: func(g *G.ExprGraph, _ *graph.Graph, cfg Config, phase *layers.Phase) (*Model, error) {
		m, err := layers.NewMLP(g, nil, mlpConfig(cfg), phase)
		return &Model{Model: m, cfg: cfg}, err
	},
	Config: func(m *Model) Config { return m.cfg },
	Params: func(c Config) []layers.Param {
		k, err := layers.LookupKind("mlp")
		if err != nil {
			panic(err) // the library declares mlp
		}
		ps, err := k.Params(mlpConfig(c))
		if err != nil {
			panic(err) // Validate passed before Params is called
		}
		return ps
	},
})
