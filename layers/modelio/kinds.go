package modelio

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"sync"

	"github.com/fairmp/fairmp/fmp"
	"github.com/fairmp/fairmp/layers"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Builder builds a model of one kind in g from its JSON configuration and
// dtype, with fresh parameters that Load then overwrites.
type Builder func(g *G.ExprGraph, config json.RawMessage, dt tensor.Dtype, env Env) (layers.Model, error)

// kindOf makes a Builder from a model constructor: it decodes the
// configuration strictly into C, sets its dtype and calls build.
func kindOf[C any](setDtype func(*C, tensor.Dtype), build func(*G.ExprGraph, C, Env) (layers.Model, error)) Builder {
	return func(g *G.ExprGraph, raw json.RawMessage, dt tensor.Dtype, env Env) (layers.Model, error) {
		var c C
		if err := decodeConfig(raw, &c); err != nil {
			return nil, err
		}
		setDtype(&c, dt)
		return build(g, c, env)
	}
}

// builtin is the table of the library's own kinds: every model of layers
// and fmp. Loading a file of one of these kinds never depends on which
// packages a program imports.
var builtin = map[string]Builder{
	layers.KindLinear: kindOf(func(c *layers.LinearConfig, dt tensor.Dtype) { c.Dtype = dt },
		func(g *G.ExprGraph, c layers.LinearConfig, _ Env) (layers.Model, error) {
			return layers.NewLinear(g, c)
		}),
	layers.KindMLP: kindOf(func(c *layers.MLPConfig, dt tensor.Dtype) { c.Dtype = dt },
		func(g *G.ExprGraph, c layers.MLPConfig, env Env) (layers.Model, error) {
			return layers.NewMLP(g, c, env.Phase)
		}),
	layers.KindGCNConv: kindOf(func(c *layers.GCNConvConfig, dt tensor.Dtype) { c.Dtype = dt },
		func(g *G.ExprGraph, c layers.GCNConvConfig, env Env) (layers.Model, error) {
			return layers.NewGCNConv(g, c, env.Graph)
		}),
	layers.KindGCN: kindOf(func(c *layers.GCNConfig, dt tensor.Dtype) { c.Dtype = dt },
		func(g *G.ExprGraph, c layers.GCNConfig, env Env) (layers.Model, error) {
			return layers.NewGCN(g, c, env.Graph, env.Phase)
		}),
	layers.KindSGC: kindOf(func(c *layers.SGCConfig, dt tensor.Dtype) { c.Dtype = dt },
		func(g *G.ExprGraph, c layers.SGCConfig, env Env) (layers.Model, error) {
			return layers.NewSGC(g, c, env.Graph)
		}),
	layers.KindAPPNP: kindOf(func(c *layers.APPNPConfig, dt tensor.Dtype) { c.Dtype = dt },
		func(g *G.ExprGraph, c layers.APPNPConfig, env Env) (layers.Model, error) {
			return layers.NewAPPNP(g, c, env.Graph, env.Phase)
		}),
	layers.KindJKNet: kindOf(func(c *layers.JKNetConfig, dt tensor.Dtype) { c.Dtype = dt },
		func(g *G.ExprGraph, c layers.JKNetConfig, env Env) (layers.Model, error) {
			return layers.NewJKNet(g, c, env.Graph, env.Phase)
		}),
	layers.KindGAT: kindOf(func(c *layers.GATConfig, dt tensor.Dtype) { c.Dtype = dt },
		func(g *G.ExprGraph, c layers.GATConfig, env Env) (layers.Model, error) {
			return layers.NewGAT(g, c, env.Graph, env.Phase)
		}),
	layers.KindGATModel: kindOf(func(c *layers.GATModelConfig, dt tensor.Dtype) { c.Dtype = dt },
		func(g *G.ExprGraph, c layers.GATModelConfig, env Env) (layers.Model, error) {
			return layers.NewGATModel(g, c, env.Graph, env.Phase)
		}),
}

// The fmp kind builds its backbone through the table itself, so it is
// added after the table is initialised.
func init() { builtin[fmp.KindModel] = buildFMP }

// buildFMP rebuilds an fmp.Model: its backbone through the table of kinds
// (renamed with the model when Env.Name is set), then the FMP layer.
func buildFMP(g *G.ExprGraph, raw json.RawMessage, dt tensor.Dtype, env Env) (layers.Model, error) {
	var s fmp.SavedConfig
	if err := decodeConfig(raw, &s); err != nil {
		return nil, err
	}
	if s.Backbone == fmp.KindModel {
		return nil, fmt.Errorf("configuration: an fmp model's backbone is itself an fmp model")
	}
	build, ok := builder(s.Backbone)
	if !ok {
		return nil, fmt.Errorf("%w %q of the backbone", ErrUnknownKind, s.Backbone)
	}
	cfg, _, err := rename(s.BackboneConfig, s.Name)
	if err != nil {
		return nil, fmt.Errorf("backbone configuration: %w", err)
	}
	backbone, err := build(g, cfg, dt, env)
	if err != nil {
		return nil, fmt.Errorf("backbone (%s): %w", s.Backbone, err)
	}
	return fmp.BuildSaved(s, backbone, env.Graph, env.Phase)
}

var (
	userMu sync.RWMutex
	user   = map[string]Builder{}
)

// Register makes a kind of the user's own loadable: a model type that
// implements Savable with Kind() returning kind, and a builder that
// rebuilds it from the configuration its SaveConfig returns. Register
// returns an error for an empty kind, a nil builder, one of the library's
// own kinds, or a kind already registered. It is safe for concurrent use;
// call it before Save or Load of that kind (an init function of the
// package that defines the model is a good place).
func Register(kind string, build Builder) error {
	if kind == "" || build == nil {
		return fmt.Errorf("modelio: Register: empty kind or nil builder")
	}
	if _, ok := builtin[kind]; ok {
		return fmt.Errorf("modelio: Register: %q is one of the library's own kinds", kind)
	}
	userMu.Lock()
	defer userMu.Unlock()
	if _, ok := user[kind]; ok {
		return fmt.Errorf("modelio: Register: kind %q is already registered", kind)
	}
	user[kind] = build
	return nil
}

// builder returns the builder of kind: the library's own, or one given
// to Register.
func builder(kind string) (Builder, bool) {
	if b, ok := builtin[kind]; ok {
		return b, true
	}
	userMu.RLock()
	defer userMu.RUnlock()
	b, ok := user[kind]
	return b, ok
}

// Kinds returns every loadable kind, the library's own and the
// registered ones, sorted.
func Kinds() []string {
	userMu.RLock()
	defer userMu.RUnlock()
	ks := make([]string, 0, len(builtin)+len(user))
	for k := range builtin {
		ks = append(ks, k)
	}
	for k := range user {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// decodeConfig unmarshals a configuration strictly (unknown fields are
// errors) into cfg.
func decodeConfig(raw json.RawMessage, cfg any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(cfg); err != nil {
		return fmt.Errorf("configuration: %w", err)
	}
	return nil
}
