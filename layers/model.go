package layers

import (
	"sync/atomic"

	G "gorgonia.org/gorgonia"
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
