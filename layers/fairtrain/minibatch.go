package fairtrain

import (
	"fmt"

	"github.com/fairmp/fairmp/layers/minibatch"
	"github.com/fairmp/fairmp/layers/train"
)

// Mini-batch training (minibatch.Fit with Config.Method): the methods
// whose loss is a term on the model's logits give a per-batch form (their
// MiniBatch methods, next to their Apply); the others refuse, here, with
// the reason.
var (
	_ minibatch.BatchMethod = RegularizerConfig{}
	_ minibatch.BatchMethod = AdversaryConfig{}
	_ minibatch.BatchMethod = MixupConfig{}
	_ minibatch.BatchMethod = REDRESSConfig{}
	_ minibatch.BatchMethod = FairGNNConfig{}
	_ minibatch.BatchMethod = NIFTYConfig{}
	_ minibatch.BatchMethod = FairVGNNConfig{}
	_ minibatch.BatchMethod = RawlsGCNConfig{}
)

// batchSens returns task.Sens, or an error naming the method when the
// task has none.
func batchSens(name string, task *minibatch.Task) ([]int, error) {
	if task == nil {
		return nil, fmt.Errorf("fairtrain: %s: nil task", name)
	}
	if task.Sens == nil {
		return nil, fmt.Errorf("fairtrain: %s: Task.Sens is nil, want each node's sensitive group (−1 unknown)", name)
	}
	if len(task.Sens) != len(task.Labels) {
		return nil, fmt.Errorf("fairtrain: %s: %d sensitive values for %d nodes, want one per node", name, len(task.Sens), len(task.Labels))
	}
	return task.Sens, nil
}

// MiniBatch refuses: FairGNN does not run in mini-batches (an error
// wrapping minibatch.ErrNotBatched).
func (c FairGNNConfig) MiniBatch(tc train.Config, _ *minibatch.Task) (train.Config, minibatch.Term, error) {
	return tc, nil, fmt.Errorf("fairtrain: fairgnn %w: it trains an Encoder (the backbone as a body, a classifier head) whose adversary and covariance read the hidden representation, not the logits a batch's term sees, and its sensitive-attribute estimator is a whole-graph GCN trained first on every node; mini-batch FairGNN needs the estimator trained in mini-batches and the encoder on blocks (not provided)", minibatch.ErrNotBatched)
}

// MiniBatch refuses: NIFTY does not run in mini-batches (an error
// wrapping minibatch.ErrNotBatched).
func (c NIFTYConfig) MiniBatch(tc train.Config, _ *minibatch.Task) (train.Config, minibatch.Term, error) {
	return tc, nil, fmt.Errorf("fairtrain: nifty %w: it trains an Encoder on two augmented views of the whole graph (edge-dropped propagation matrices drawn over every edge, a flipped sensitive column) with a Siamese loss on projected representations, and normalises every weight after each step; a batch's blocks come from one matrix and its term sees only the logits (not provided)", minibatch.ErrNotBatched)
}

// MiniBatch refuses: FairVGNN does not run in mini-batches (an error
// wrapping minibatch.ErrNotBatched).
func (c FairVGNNConfig) MiniBatch(tc train.Config, _ *minibatch.Task) (train.Config, minibatch.Term, error) {
	return tc, nil, fmt.Errorf("fairtrain: fairvgnn %w: its epoch is five phases with optimisers of their own (a generator of feature masks, a discriminator on the hidden representation, the encoder) and clamps the first layer's weights with the epoch's masks: not a loss term on a batch's logits (not provided)", minibatch.ErrNotBatched)
}

// MiniBatch refuses: RawlsGCN-Graph adds no loss term; it trains the
// backbone on another propagation matrix, which mini-batches sample like
// any other: train c.Backbone(model) with minibatch.Fit, Task.Adj its
// minibatch.Matrix.
func (c RawlsGCNConfig) MiniBatch(tc train.Config, _ *minibatch.Task) (train.Config, minibatch.Term, error) {
	return tc, nil, fmt.Errorf("fairtrain: rawlsgcn %w: it changes the propagation matrix, not the loss: train RawlsGCNConfig.Backbone(model) with no Method, Task.Adj = minibatch.Matrix(that configuration, graph) (the doubly stochastic matrix is computed once over the whole graph, then sampled like any other)", minibatch.ErrNotBatched)
}
