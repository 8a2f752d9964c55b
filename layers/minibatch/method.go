package minibatch

import (
	"errors"
	"fmt"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/fairmp/fairmp/layers/fairness"
	"github.com/fairmp/fairmp/layers/train"
)

// BatchMethod is a method whose loss term is built batch by batch: the
// in-training strategies of package layers/fairtrain (the regulariser,
// the adversary, mixup, REDRESS) implement it.
type BatchMethod interface {
	fairness.Method
	// MiniBatch returns a copy of tc with what the method needs of the
	// trainer (a warm-up in SelectAfter, for example) and the method's
	// per-batch term for one Fit on task, or an error. A method that
	// cannot run in mini-batches returns an error wrapping
	// ErrNotBatched with the reason.
	MiniBatch(tc train.Config, task *Task) (train.Config, Term, error)
}

// ErrNotBatched is wrapped by the error of a method that cannot run in
// mini-batches: Fit returns it, with the method's name and the reason.
// Its text reads after the method's name: "fairgnn cannot run in
// mini-batches: <reason>".
var ErrNotBatched = errors.New("cannot run in mini-batches")

// Batch is what a [Term] sees of a training batch.
type Batch struct {
	// Epoch is the 1-based epoch, Index the 0-based batch in it, Count
	// the number of batches in the epoch.
	Epoch, Index, Count int
	// Targets are the batch's output nodes: row k of Logits is node
	// Targets[k]. Their labels and groups are the task's.
	Targets []int
	// Logits is the batch's t × c logits node, of the training forward
	// pass (dropout on), in the batch's own gorgonia graph.
	Logits *G.Node
}

// Term is a fairness method's loss term in mini-batch training, for one
// Fit run: it holds the method's state across batches (an adversary, a
// sampler). Fit calls Loss while it builds each batch's graph and
// AfterStep after the batch's parameter update, in batch order.
type Term interface {
	// Loss returns the scalar term added to the batch's mean
	// cross-entropy, a node of b.Logits' graph in its dtype, or nil for
	// none on this batch (a warm-up epoch, a batch that misses a group).
	Loss(b *Batch) (*G.Node, error)
	// AfterStep runs after the batch's parameter update with the batch
	// and the values of its logits (those of the training forward pass,
	// before the update). A method that trains something of its own
	// between the model's steps (the adversary) does it here.
	AfterStep(b *Batch, logits *tensor.Dense) error
}

// batchTerm resolves cfg.Method into its per-batch term and the trainer
// configuration it asks for. It returns cfg.Train and nil without a
// method.
func batchTerm(cfg Config, task *Task) (train.Config, Term, error) {
	m := cfg.Method
	if m == nil {
		return cfg.Train, nil, nil
	}
	if _, ok := m.(fairness.Pre); ok {
		return cfg.Train, nil, fmt.Errorf("%s %w: it is a pre-processing method: it rewrites the whole graph and the features before any training (no loss term to take per batch); run its Debias on the whole graph, then give Fit the graph and features it returns", m.Name(), ErrNotBatched)
	}
	bm, ok := m.(BatchMethod)
	if !ok {
		return cfg.Train, nil, fmt.Errorf("%s (%T) %w: it has no per-batch form (no MiniBatch method)", m.Name(), m, ErrNotBatched)
	}
	tc, t, err := bm.MiniBatch(cfg.Train, task)
	if err != nil {
		return cfg.Train, nil, err
	}
	if t == nil {
		return cfg.Train, nil, fmt.Errorf("%s: MiniBatch returned a nil term", m.Name())
	}
	if err := tc.Validate(); err != nil {
		return cfg.Train, nil, fmt.Errorf("Train (as %s set it): %w", m.Name(), err)
	}
	return tc, t, nil
}
