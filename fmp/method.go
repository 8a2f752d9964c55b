package fmp

import (
	"context"
	"fmt"

	"github.com/fairmp/fairmp/graph/features"
	"github.com/fairmp/fairmp/layers"
	"github.com/fairmp/fairmp/layers/fairness"
	"github.com/fairmp/fairmp/layers/train"
)

// FMP is registered with package layers/fairness as an architecture: its
// configuration is OnConfig, the propagation and the layer put on any
// backbone.
var _ = fairness.MustRegister(DefaultOnConfig())

var (
	_ fairness.Architecture = OnConfig{}
	_ fairness.Weighted     = OnConfig{}
)

// Name returns "fmp".
func (c OnConfig) Name() string { return "fmp" }

// Weight returns the fairness weight λf.
func (c OnConfig) Weight() float64 { return c.FMP.LambdaF }

// WithWeight returns c with the fairness weight λf = w.
func (c OnConfig) WithWeight(w float64) fairness.Method { c.FMP.LambdaF = w; return c }

// Fit builds the backbone (any declared kind) in s.Task's graph, puts FMP
// on it with c (On, on s.Graph with the groups s.Sens), trains it the
// recommended way (FitTwoStage: the backbone with λf = 0, then c's λf on
// top) and records the duals on s.Task's features (Model.Record), so that
// the model can be saved and score new nodes. To choose λf on validation
// data instead of keeping c's, build the model with On and use Frontier.
func (c OnConfig) Fit(ctx context.Context, backbone layers.Config, s fairness.Setup, tc train.Config) (*fairness.Fitted, error) {
	if s.Task == nil || backbone == nil {
		return nil, fmt.Errorf("fmp: Fit: nil Setup.Task or backbone configuration")
	}
	if err := c.Validate(); err != nil {
		return nil, err
	}
	if s.Graph == nil {
		return nil, fmt.Errorf("fmp: Fit: nil Setup.Graph: FMP smooths over the data graph")
	}
	bb, err := layers.Build(s.Task.Graph, s.Graph, backbone, s.Task.Phase)
	if err != nil {
		return nil, fmt.Errorf("fmp: Fit: %w", err)
	}
	m, err := On(bb, s.Graph, s.Sens, c, s.Task.Phase)
	if err != nil {
		return nil, err
	}
	res, err := m.FitTwoStage(ctx, s.Task, tc)
	if err != nil {
		return nil, err
	}
	x, err := toF64(s.Task.X.Value())
	if err != nil {
		return nil, fmt.Errorf("fmp: Fit: the features: %w", err)
	}
	src, err := features.NewDense(x, s.Graph.N(), len(x)/max(s.Graph.N(), 1))
	if err != nil {
		return nil, fmt.Errorf("fmp: Fit: %w", err)
	}
	if err := m.Record(src); err != nil {
		return nil, err
	}
	return &fairness.Fitted{Model: m, Result: res}, nil
}
