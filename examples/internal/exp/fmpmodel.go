package exp

import (
	"fmt"

	"github.com/fairmp/fairmp/fmp"
	"github.com/fairmp/fairmp/graph/datasets"
	"github.com/fairmp/fairmp/layers"
	G "gorgonia.org/gorgonia"
)

// FMPModel is MLP → FMP: the MLP's logits are X_trans, the FMP layer
// propagates them over the data set's graph (Ã = D̂^-1/2 (A+I) D̂^-1/2)
// with the sensitive attribute's fairness steps. It satisfies
// layers.Model, so layers.Train trains it; FMP adds no learnable
// parameter. The MLP and the FMP layer share one Phase.
//
// It is a stand-in for the fmp package's own model type, with the same
// shape (Forward, ForwardAudit, Layer, Backbone).
type FMPModel struct {
	mlp   *layers.MLP
	layer *fmp.Layer
}

var _ layers.Model = (*FMPModel)(nil)

// NewFMP builds the MLP of mlpCfg in g and an FMP layer of cfg on ds's graph
// and sensitive attribute.
func NewFMP(g *G.ExprGraph, mlpCfg layers.MLPConfig, cfg fmp.Config, ds *datasets.Dataset, phase *layers.Phase) (*FMPModel, error) {
	adj, err := layers.DefaultPropagation().Matrix(ds.Graph)
	if err != nil {
		return nil, err
	}
	l, err := fmp.New(adj, ds.Sens, cfg)
	if err != nil {
		return nil, fmt.Errorf("FMP layer: %v", err)
	}
	l.SetPhase(phase)
	mlp, err := layers.NewMLP(g, mlpCfg, phase)
	if err != nil {
		return nil, err
	}
	return &FMPModel{mlp: mlp, layer: l}, nil
}

// Forward returns F^K for the features x.
func (m *FMPModel) Forward(x *G.Node) (*G.Node, error) {
	h, err := m.mlp.Forward(x)
	if err != nil {
		return nil, err
	}
	return m.layer.Forward(h)
}

// ForwardAudit is Forward returning fmp's auditing nodes.
func (m *FMPModel) ForwardAudit(x *G.Node) (*fmp.Audit, error) {
	h, err := m.mlp.Forward(x)
	if err != nil {
		return nil, err
	}
	return m.layer.ForwardAudit(h)
}

// Learnables returns the MLP's parameters.
func (m *FMPModel) Learnables() G.Nodes { return m.mlp.Learnables() }

// Layer returns the FMP layer.
func (m *FMPModel) Layer() *fmp.Layer { return m.layer }

// Backbone returns the MLP.
func (m *FMPModel) Backbone() *layers.MLP { return m.mlp }
