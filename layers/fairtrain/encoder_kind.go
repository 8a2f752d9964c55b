package fairtrain

import (
	"encoding/json"
	"fmt"

	"github.com/fairmp/fairmp/graph"
	"github.com/fairmp/fairmp/layers"
	G "gorgonia.org/gorgonia"
)

// The model file of an Encoder.
//
// An Encoder is the declared kind "encoder" (layers.Declare), so
// fmp/modelio saves and loads it, package fmp/score scores new nodes
// with it and FMP goes on top of it like on any kind. Its configuration,
// [EncoderConfig], records the body's kind and configuration and the
// number of classes; its parameters are the body's, then the head's
// (name.head.W, width × classes, and name.head.b, 1 × classes), which
// model files check against the configuration before building anything.
//
// What a file holds is what scores: the parts that serve only training
// are not in it. FairGNN's sensitive-attribute estimator and adversary
// are never part of the Encoder; NIFTY's projector and predictor are
// dropped from it when training ends; FairVGNN's mask is moved into the
// input weights of a copy of its encoder by [MaskedEncoder.Folded], and
// FairVGNN's generator and discriminator stay out.

// encoderKindName is the Encoder's kind in model files.
const encoderKindName = "encoder"

// kindEncoder declares the Encoder to the registry of kinds.
var kindEncoder = layers.MustDeclare(layers.KindSpec[EncoderConfig, *Encoder]{
	Name:    encoderKindName,
	Title:   "Encoder",
	Summary: "a body of any kind and a linear head: the model FairGNN, NIFTY and FairVGNN train",
	Default: DefaultEncoderConfig,
	New: func(g *G.ExprGraph, gr *graph.Graph, c EncoderConfig, phase *layers.Phase) (*Encoder, error) {
		body, err := c.BodyConfig()
		if err != nil {
			return nil, fmt.Errorf("fairtrain: encoder: %w", err)
		}
		return NewEncoder(g, gr, body, c.Out, phase)
	},
	Config: (*Encoder).Config,
	Params: func(c EncoderConfig) []layers.Param {
		ps, err := c.params()
		if err != nil {
			return nil // Validate reports it; an empty list mismatches any file's
		}
		return ps
	},
	Propagation: func(c EncoderConfig) layers.Propagation {
		body, err := c.BodyConfig()
		if err != nil {
			return layers.DefaultPropagation()
		}
		k, _ := layers.KindOfConfig(body)
		if p, ok, err := k.Propagation(body); err == nil && ok {
			return p
		}
		// A body that does not propagate (an MLP): the encoder has no
		// hops, and no caller builds this matrix.
		return layers.DefaultPropagation()
	},
	Composite: true,
})

// EncoderConfig is an [Encoder]'s configuration as model files record
// it (the "encoder" kind). Its Base is the encoder's and gives the body
// its own: Name and Seed are the body's (the head is named Name + ".head"
// and seeded Seed + 1), In is the body's input width and Out the number
// of classes, the head's output. Width is the representation width, the
// body's output. Body is the body's kind and configuration without the
// keys of its Base ("name", "in", "classes", "seed"), which the encoder's
// set: a setting written once cannot disagree with itself, and a change
// of the encoder's Base (a name given at loading, a seed) is the body's.
type EncoderConfig struct {
	layers.Base
	Width int      `json:"width"`
	Body  BodySpec `json:"body"`
}

// BodySpec is the body of an [EncoderConfig]: its kind's name and its
// configuration as that kind encodes it (layers.Kind.EncodeConfig),
// without the keys of its Base.
type BodySpec struct {
	Kind   string          `json:"kind"`
	Config json.RawMessage `json:"config"`
}

// baseKeys are the JSON keys of layers.Base, which the encoder's own
// base sets for the body.
var baseKeys = []string{"name", "in", "classes", "seed"}

// DefaultEncoderConfig returns an encoder on the default GCN body of
// width 16 (FairGNN's and NIFTY's default representation) for in
// features and classes classes.
func DefaultEncoderConfig(in, classes int) EncoderConfig {
	c, err := NewEncoderConfig(layers.DefaultGCNConfig(in, 16), classes)
	if err != nil {
		panic(err) // the library's own GCN configuration always encodes
	}
	return c
}

// NewEncoderConfig returns the configuration of an encoder on the body
// configuration body (of any declared kind but a wrapper or the encoder
// itself; its Out is the representation width) with classes classes. It
// returns an error for a configuration of no declared kind, of a kind
// that cannot be a body, or that does not encode as a JSON object.
func NewEncoderConfig(body layers.Config, classes int) (EncoderConfig, error) {
	if body == nil {
		return EncoderConfig{}, fmt.Errorf("fairtrain: encoder: nil body configuration")
	}
	k, err := layers.KindOfConfig(body)
	if err != nil {
		return EncoderConfig{}, fmt.Errorf("fairtrain: encoder: body: %w", err)
	}
	if err := bodyKind(k); err != nil {
		return EncoderConfig{}, err
	}
	raw, err := json.Marshal(body)
	var obj map[string]json.RawMessage
	if err == nil {
		err = json.Unmarshal(raw, &obj)
	}
	if err == nil {
		for _, key := range baseKeys {
			delete(obj, key)
		}
		raw, err = json.Marshal(obj)
	}
	if err != nil {
		return EncoderConfig{}, fmt.Errorf("fairtrain: encoder: the %s body's configuration: %w", k.Name(), err)
	}
	b := layers.BaseOf(body)
	width := b.Out
	b.Out = classes
	return EncoderConfig{Base: b, Width: width, Body: BodySpec{Kind: k.Name(), Config: raw}}, nil
}

// bodyKind refuses a kind that cannot be an encoder's body.
func bodyKind(k *layers.Kind) error {
	if k.Wraps() {
		return fmt.Errorf("fairtrain: encoder: the body is a %s model, a wrapper: want a kind built from a configuration (gcn, mlp, ...)", k.Name())
	}
	if k.Name() == encoderKindName {
		return fmt.Errorf("fairtrain: encoder: the body is itself an encoder: want the body's own kind (gcn, mlp, ...)")
	}
	return nil
}

// BodyConfig decodes the body's configuration strictly through its
// kind, with the encoder's name, input width, seed and dtype and Width
// as its output. It returns an error wrapping layers.ErrUnknownKind for
// a kind no package of the program declares, and an error for a kind
// that cannot be a body, a configuration that is not a JSON object or
// holds a key of the Base, and one the kind refuses.
func (c EncoderConfig) BodyConfig() (layers.Config, error) {
	k, err := layers.LookupKind(c.Body.Kind)
	if err != nil {
		return nil, fmt.Errorf("the body: %w", err)
	}
	if err := bodyKind(k); err != nil {
		return nil, err
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(c.Body.Config, &obj); err != nil || obj == nil {
		return nil, fmt.Errorf("the %s body's configuration is not a JSON object", k.Name())
	}
	for _, key := range baseKeys {
		if _, ok := obj[key]; ok {
			return nil, fmt.Errorf("the %s body's configuration has the key %q: leave it out, the encoder's sets it", k.Name(), key)
		}
	}
	for key, v := range map[string]any{"name": c.Name, "in": c.In, "classes": c.Width, "seed": c.Seed} {
		if obj[key], err = json.Marshal(v); err != nil {
			return nil, err
		}
	}
	raw, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	body, err := k.DecodeConfig(raw, c.Dtype)
	if err != nil {
		return nil, fmt.Errorf("the body: %w", err)
	}
	return body, nil
}

// params returns the body's parameters, then the head's.
func (c EncoderConfig) params() ([]layers.Param, error) {
	body, err := c.BodyConfig()
	if err != nil {
		return nil, err
	}
	k, err := layers.KindOfConfig(body)
	if err != nil {
		return nil, err
	}
	ps, err := k.Params(body)
	if err != nil {
		return nil, err
	}
	return append(ps,
		layers.Param{Name: c.Name + ".head.W", Shape: []int{c.Width, c.Out}},
		layers.Param{Name: c.Name + ".head.b", Shape: []int{1, c.Out}}), nil
}

// Validate checks the base (Out, the classes, at least 2), Width (at
// least 1) and the body (BodyConfig).
func (c EncoderConfig) Validate() error {
	if err := c.Base.Validate(); err != nil {
		return err
	}
	if c.Out < 2 {
		return fmt.Errorf("classes = %d, want >= 2", c.Out)
	}
	if c.Width < 1 {
		return fmt.Errorf("width = %d, want >= 1", c.Width)
	}
	_, err := c.BodyConfig()
	return err
}

// Config returns the configuration the encoder was built with, as model
// files record it.
func (e *Encoder) Config() EncoderConfig { return e.cfg }

// Matrix returns the body's propagation matrix (nil for a body that does
// not propagate or is not a layers.BlockModel).
func (e *Encoder) Matrix() *graph.Matrix {
	if bm, ok := e.body.(layers.BlockModel); ok {
		return bm.Matrix()
	}
	return nil
}

// Compute declares the encoder (see layers.BlockModel): the body's
// computation, then the head, a Dense without activation. It returns an
// error for a body that is not a layers.BlockModel: such an encoder
// trains and predicts in its gorgonia graph, and is saved, but does not
// run on sampled blocks or outside gorgonia (fmp/score).
func (e *Encoder) Compute(f layers.Flow, x layers.Value) (layers.Value, error) {
	bm, ok := e.body.(layers.BlockModel)
	if !ok {
		return layers.Value{}, fmt.Errorf("fairtrain: the encoder's %T body is not declared in a Flow's primitives (layers.BlockModel)", e.body)
	}
	h, err := bm.Compute(f, x)
	if err != nil {
		return layers.Value{}, err
	}
	return f.Dense(h, e.head.W, e.head.B, layers.Activation{})
}
