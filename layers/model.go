package layers

import (
	"fmt"
	"sync/atomic"

	G "gorgonia.org/gorgonia"

	"github.com/fairmp/fairmp/graph"
)

// Model is a node classifier built in a gorgonia graph. Every model in
// fairmp (the layers of this package, their stacks, and fmp's models)
// implements it, and the one trainer trains any Model.
type Model interface {
	// Forward builds the model's output for input features x (n × d) and
	// returns the n × classes logits node.
	Forward(x *G.Node) (*G.Node, error)
	// Learnables returns the trainable parameters, in a fixed order.
	Learnables() G.Nodes
}

// Phase switches stochastic and training-only computations (dropout, edge
// dropout, attention dropout, FMP's training modes) between training and
// evaluation. A model's layers share one Phase; the trainer sets it. The
// zero value is in evaluation mode.
type Phase struct {
	training atomic.Bool
}

// NewPhase returns a Phase in evaluation mode.
func NewPhase() *Phase { return &Phase{} }

// SetTraining switches the phase to training (true) or evaluation
// (false). On a nil Phase it does nothing.
func (p *Phase) SetTraining(on bool) {
	if p != nil {
		p.training.Store(on)
	}
}

// Training reports whether the phase is in training mode. A nil Phase is
// always in evaluation mode.
func (p *Phase) Training() bool { return p != nil && p.training.Load() }

// GraphModel is a Model built on a graph. Graph returns that graph (nil
// for a layer built from a prebuilt matrix).
// fmp/modelio records a fingerprint of it in a model file and refuses
// to load the file onto another graph.
type GraphModel interface {
	Model
	Graph() *graph.Graph
}

// Phased is a Model built with a *Phase. Phase returns it; layers/train
// refuses to train or evaluate it with a Task holding another Phase.
type Phased interface {
	Model
	Phase() *Phase
}

// checkBlocks validates the chain of blocks against x's row count.
func checkBlocks(x *G.Node, blocks []*graph.Matrix, hops int, where string) error {
	if len(blocks) != hops {
		return fmt.Errorf("layers: %s: %d blocks, want %d (one per hop: the sampler's Fanouts must have %d entries)", where, len(blocks), hops, hops)
	}
	if x == nil {
		return fmt.Errorf("layers: %s: nil input node", where)
	}
	rows := x.Shape()[0]
	for l, b := range blocks {
		if b == nil {
			return fmt.Errorf("layers: %s: block %d is nil", where, l)
		}
		r, c := b.Dims()
		if c != rows {
			return fmt.Errorf("layers: %s: block %d is %d × %d, want %d columns (the rows of its input)", where, l, r, c, rows)
		}
		if r > c {
			return fmt.Errorf("layers: %s: block %d is %d × %d, want no more rows than columns (its rows are the first nodes of its input)", where, l, r, c)
		}
		rows = r
	}
	return nil
}
