package fairtrain

import (
	"context"
	"fmt"

	"github.com/fairmp/fairmp/graph"
	"github.com/fairmp/fairmp/layers"
	"github.com/fairmp/fairmp/layers/fairness"
	"github.com/fairmp/fairmp/layers/train"
)

// RawlsGCNConfig configures RawlsGCN-Graph (Kang, Zhu, Xia, Luo & Tong,
// "RawlsGCN: Towards Rawlsian Difference Principle on Graph
// Convolutional Network", WWW 2022) on any backbone that propagates
// (gcn, sgc, appnp, jknet, and a kind of your own whose configuration
// holds its layers.Propagation under the key "propagation").
//
// The paper's fairness is about degree, not about a sensitive
// attribute: GCN serves low-degree nodes worse (a higher loss, a lower
// accuracy), and the Rawlsian difference principle asks to raise the
// worst-off degree groups. Its analysis traces the gap to the
// propagation matrix: the gradient of a GCN layer's weights is Hᵀ Ãᵀ
// ∂L/∂Z, in which a node weighs as much as its column of Ã =
// D̂^-½(A + I)D̂^-½ sums to, about √(d/d̄) for a node of degree d among
// neighbours of degree d̄. RawlsGCN-Graph replaces Ã by its doubly
// stochastic scaling P = DÃD (every row and column sums to 1;
// layers.Propagation.DoublyStochastic, graph.DoublyStochastic), in
// training and in prediction; nothing else changes: no parameter, no
// loss term, no use of the sensitive attribute. The trained model's file
// records the matrix option (its backbone configuration's propagation),
// so a loaded model propagates over the same P.
//
// As in the reference code (jiank2/RawlsGCN, data_loader.py
// preprocess "doubly_stochastic_laplacian"), the iteration starts from
// D̂^-½(A + I)D̂^-½ (the scaling is unique: where it starts only changes
// the number of steps). The difference, by design: the reference code
// stops at a tolerance of 1e-2 and, at 1000 iterations without it,
// logs and goes on with the matrix it has; here the tolerance is
// Sinkhorn.Tol (1e-6 by default, reached in about 30 steps on Bail and
// Credit) and a matrix that does not converge is an error.
//
// The paper's second variant, RawlsGCN-Grad, keeps Ã in the forward pass
// and replaces, in each graph convolution Z = Ã H W, the weight gradient
// Hᵀ Ãᵀ ∂L/∂Z by Hᵀ P ∂L/∂Z, while the gradient passed on to the earlier
// layers still goes through Ã. It is not provided: it is surgery inside
// every convolution of a GCN (a convolution's weight gradient and input
// gradient would have to go through two different matrices), defined
// for GCN's layer form only (SGC has one weight after K propagations,
// APPNP propagates after its MLP), and train.Fit has no hook between the
// backward pass and the optimiser's step where it could be done for any
// backbone.
//
// RawlsGCN-Graph has no fairness weight: it changes the matrix, not the
// loss. Its Weight is Strength, 1 (the method) or 0 (the backbone's own
// matrix: plain training, bit for bit); Validate refuses any other value
// rather than pretend to interpolate. Measure what it is for with
// metrics.DegreeGroups and metrics.DegreeBias (accuracy and loss by
// degree group).
type RawlsGCNConfig struct {
	// Sinkhorn is the tolerance and the cap of the doubly stochastic
	// scaling. Default graph.DefaultSinkhornOptions().
	Sinkhorn graph.SinkhornOptions
	// Strength is 1 to train the backbone on the doubly stochastic
	// matrix (RawlsGCN-Graph) or 0 to train it on its own (plain
	// training); no other value. Default 1.
	Strength float64
}

var _ fairness.Method = RawlsGCNConfig{}

// DefaultRawlsGCNConfig returns Strength 1 and the default Sinkhorn
// options (every row and column within 1e-6 of 1, at most 1000 steps).
func DefaultRawlsGCNConfig() RawlsGCNConfig {
	return RawlsGCNConfig{Sinkhorn: graph.DefaultSinkhornOptions(), Strength: 1}
}

// Name returns "rawlsgcn".
func (c RawlsGCNConfig) Name() string { return "rawlsgcn" }

// Weight returns Strength: 1 (the method) or 0 (off).
func (c RawlsGCNConfig) Weight() float64 { return c.Strength }

// WithWeight returns c with Strength = w; Validate refuses a w other
// than 0 or 1.
func (c RawlsGCNConfig) WithWeight(w float64) fairness.Method { c.Strength = w; return c }

// Validate returns an error for a Strength other than 0 or 1 and for
// invalid Sinkhorn options.
func (c RawlsGCNConfig) Validate() error {
	if c.Strength != 0 && c.Strength != 1 {
		return fmt.Errorf("Strength (the weight) = %v, want 1 (the doubly stochastic matrix) or 0 (the backbone's own): RawlsGCN-Graph changes the propagation matrix and has no continuous weight", c.Strength)
	}
	if err := c.Sinkhorn.Validate(); err != nil {
		return fmt.Errorf("RawlsGCNConfig.%w", err)
	}
	return nil
}

// Backbone returns the backbone configuration RawlsGCN-Graph trains:
// backbone with its propagation made doubly stochastic with c.Sinkhorn
// (backbone itself when Strength is 0). Use it to train RawlsGCN-Graph
// outside Fit (in mini-batches, say). It returns an error for an invalid
// c, a backbone that does not propagate (an MLP), and one whose
// propagation cannot be set by its "propagation" key (GAT, whose
// attention weighs the edges itself) or whose aggregation ignores the
// matrix's weights (SAGE's mean or max).
func (c RawlsGCNConfig) Backbone(backbone layers.Config) (layers.Config, error) {
	if err := c.Validate(); err != nil {
		return nil, fmt.Errorf("fairtrain: rawlsgcn: %w", err)
	}
	if backbone == nil {
		return nil, fmt.Errorf("fairtrain: rawlsgcn: nil backbone configuration")
	}
	if c.Strength == 0 {
		return backbone, nil
	}
	k, err := layers.KindOfConfig(backbone)
	if err != nil {
		return nil, fmt.Errorf("fairtrain: rawlsgcn: %w", err)
	}
	p, ok, err := k.Propagation(backbone)
	if err != nil {
		return nil, fmt.Errorf("fairtrain: rawlsgcn: %w", err)
	}
	if !ok {
		return nil, fmt.Errorf("fairtrain: rawlsgcn: the %s backbone does not propagate, want a backbone with a propagation matrix to rescale (gcn, sgc, appnp, jknet)", k.Name())
	}
	if sc, ok := backbone.(layers.SAGEConfig); ok {
		return nil, fmt.Errorf("fairtrain: rawlsgcn: the sage backbone's %s aggregation reads which neighbours its matrix holds, not their weights: a doubly stochastic matrix would change nothing; want gcn, sgc, appnp, jknet or gin", sc.Aggr)
	}
	p.DoublyStochastic, p.Sinkhorn = true, c.Sinkhorn
	out, err := k.Override(backbone, map[string]any{"propagation": p})
	if err != nil {
		return nil, fmt.Errorf("fairtrain: rawlsgcn: the %s backbone's propagation cannot be made doubly stochastic (its configuration has no \"propagation\" to set; GAT's attention weighs the edges itself), want gcn, sgc, appnp or jknet: %w", k.Name(), err)
	}
	if q, _, err := k.Propagation(out); err != nil || !q.DoublyStochastic {
		return nil, fmt.Errorf("fairtrain: rawlsgcn: the %s backbone's \"propagation\" key is not the propagation its kind declares (KindSpec.Propagation): cannot make it doubly stochastic", k.Name())
	}
	return out, nil
}

// fit trains the backbone Backbone returns, as plain training does.
func (c RawlsGCNConfig) Fit(ctx context.Context, backbone layers.Config, s fairness.Setup, tc train.Config) (*fairness.Fitted, error) {
	if err := checkFit(c, backbone, s); err != nil {
		return nil, err
	}
	cfg, err := c.Backbone(backbone)
	if err != nil {
		return nil, err
	}
	model, err := layers.Build(s.Task.Graph, s.Graph, cfg, s.Task.Phase)
	if err != nil {
		return nil, fmt.Errorf("fairtrain: rawlsgcn: %w", err)
	}
	res, err := train.Fit(ctx, model, s.Task, tc)
	if err != nil {
		return nil, err
	}
	return &fairness.Fitted{Model: model, Result: res}, nil
}
