package layers

import (
	"bytes"
	"encoding/json"
	"io"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

func bytesReader(b []byte) io.Reader { return bytes.NewReader(b) }

// Kind names of the models of this package.
const (
	KindLinear  = "linear"
	KindMLP     = "mlp"
	KindGCNConv = "gcnconv"
	KindGCN     = "gcn"
	KindSGC     = "sgc"
	KindAPPNP   = "appnp"
	KindJKNet   = "jknet"
)

func init() {
	must := func(err error) {
		if err != nil {
			panic(err)
		}
	}
	must(RegisterKind(KindLinear, func(g *G.ExprGraph, raw json.RawMessage, dt tensor.Dtype, env BuildEnv) (Model, error) {
		var c LinearConfig
		if err := decodeConfig(raw, &c); err != nil {
			return nil, err
		}
		c.Dtype = dt
		return NewLinear(g, c)
	}))
	must(RegisterKind(KindMLP, func(g *G.ExprGraph, raw json.RawMessage, dt tensor.Dtype, env BuildEnv) (Model, error) {
		var c MLPConfig
		if err := decodeConfig(raw, &c); err != nil {
			return nil, err
		}
		c.Dtype = dt
		return NewMLP(g, c, env.Phase)
	}))
	must(RegisterKind(KindGCNConv, func(g *G.ExprGraph, raw json.RawMessage, dt tensor.Dtype, env BuildEnv) (Model, error) {
		var c GCNConvConfig
		if err := decodeConfig(raw, &c); err != nil {
			return nil, err
		}
		c.Dtype = dt
		return NewGCNConv(g, c, env.Graph)
	}))
	must(RegisterKind(KindGCN, func(g *G.ExprGraph, raw json.RawMessage, dt tensor.Dtype, env BuildEnv) (Model, error) {
		var c GCNConfig
		if err := decodeConfig(raw, &c); err != nil {
			return nil, err
		}
		c.Dtype = dt
		return NewGCN(g, c, env.Graph, env.Phase)
	}))
	must(RegisterKind(KindSGC, func(g *G.ExprGraph, raw json.RawMessage, dt tensor.Dtype, env BuildEnv) (Model, error) {
		var c SGCConfig
		if err := decodeConfig(raw, &c); err != nil {
			return nil, err
		}
		c.Dtype = dt
		return NewSGC(g, c, env.Graph)
	}))
	must(RegisterKind(KindAPPNP, func(g *G.ExprGraph, raw json.RawMessage, dt tensor.Dtype, env BuildEnv) (Model, error) {
		var c APPNPConfig
		if err := decodeConfig(raw, &c); err != nil {
			return nil, err
		}
		c.Dtype = dt
		return NewAPPNP(g, c, env.Graph, env.Phase)
	}))
	must(RegisterKind(KindJKNet, func(g *G.ExprGraph, raw json.RawMessage, dt tensor.Dtype, env BuildEnv) (Model, error) {
		var c JKNetConfig
		if err := decodeConfig(raw, &c); err != nil {
			return nil, err
		}
		c.Dtype = dt
		return NewJKNet(g, c, env.Graph, env.Phase)
	}))
}

// Kind and SaveConfig make each model of this package Savable.

// Kind returns KindLinear.
func (l *Linear) Kind() string { return KindLinear }

// SaveConfig returns the layer's configuration.
func (l *Linear) SaveConfig() any { return l.cfg }

// Kind returns KindMLP.
func (m *MLP) Kind() string { return KindMLP }

// SaveConfig returns the model's configuration.
func (m *MLP) SaveConfig() any { return m.cfg }

// Kind returns KindGCNConv.
func (l *GCNConv) Kind() string { return KindGCNConv }

// SaveConfig returns the layer's configuration.
func (l *GCNConv) SaveConfig() any { return l.cfg }

// Kind returns KindGCN.
func (m *GCN) Kind() string { return KindGCN }

// SaveConfig returns the model's configuration.
func (m *GCN) SaveConfig() any { return m.cfg }

// Kind returns KindSGC.
func (m *SGC) Kind() string { return KindSGC }

// SaveConfig returns the model's configuration.
func (m *SGC) SaveConfig() any { return m.cfg }

// Kind returns KindAPPNP.
func (m *APPNP) Kind() string { return KindAPPNP }

// SaveConfig returns the model's configuration.
func (m *APPNP) SaveConfig() any { return m.cfg }

// Kind returns KindJKNet.
func (m *JKNet) Kind() string { return KindJKNet }

// SaveConfig returns the model's configuration.
func (m *JKNet) SaveConfig() any { return m.cfg }

var (
	_ Savable = (*Linear)(nil)
	_ Savable = (*MLP)(nil)
	_ Savable = (*GCNConv)(nil)
	_ Savable = (*GCN)(nil)
	_ Savable = (*SGC)(nil)
	_ Savable = (*APPNP)(nil)
	_ Savable = (*JKNet)(nil)
)
