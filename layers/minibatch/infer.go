package minibatch

import (
	"fmt"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/fairmp/fairmp/graph"
	"github.com/fairmp/fairmp/graph/features"
	"github.com/fairmp/fairmp/layers"
)

// Logits returns the whole graph's n × classes logits of the model
// configuration model with parameters params (Result.Params), computed
// layer by layer without sampling (layers.LayerwiseLogits):
// exactly the full-batch model's evaluation output, up to floating-point
// summation order, without its expression graph.
//
// adj is the whole graph's propagation matrix (Matrix; nil for a model
// without hops) and x the features, read in chunks of rows. Memory,
// besides adj and x, is a few n × width buffers (see
// layers.LayerwiseLogits, which drops each buffer once the next layer
// has it): for GCN one n × Hidden buffer for the first layer when the
// features are one slice of the model's dtype (a memory-mapped file for
// float32, a features.Dense for float64), else two, and two for each
// later layer; for SGC two n × d; for APPNP three n × classes; for the
// MLP a chunk of rows per layer and the n × classes result. This is the inference of mini-batch training (its
// evaluation pass samples with every neighbour instead, which is exact
// too but reads each node's neighbourhood once per target) and the input
// of whole-graph FMP (fmp.Layer.Apply).
func Logits(model layers.Config, params []*tensor.Dense, adj *graph.Matrix, x features.Source) (*tensor.Dense, error) {
	s, err := newSpec(model)
	if err != nil {
		return nil, fmt.Errorf("minibatch: Logits: %w", err)
	}
	m, err := s.build(G.NewGraph(), s.base.Seed, nil)
	if err != nil {
		return nil, fmt.Errorf("minibatch: Logits: %w", err)
	}
	if err := setParams(m, params); err != nil {
		return nil, fmt.Errorf("minibatch: Logits: %w", err)
	}
	z, err := layers.LayerwiseLogits(m, adj, x)
	if err != nil {
		return nil, fmt.Errorf("minibatch: Logits: %w", err)
	}
	return z, nil
}
