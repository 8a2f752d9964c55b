package layers

import (
	"fmt"
	"sync/atomic"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/fairmp/fairmp/graph"
	"github.com/fairmp/fairmp/graph/features"
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
// for a layer built from a prebuilt matrix, such as NewGCNConvMatrix).
// layers/modelio records a fingerprint of it in a model file and refuses
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

// BlockModel is a Model that can also run on the sampled blocks of a
// mini-batch (package graph/sample): one propagation matrix per hop, each
// mapping the rows of a larger node set to those of the smaller one it
// starts with. Every model of the library implements it (MLP, GCN, SGC,
// APPNP, GAT, JKNet). A kind whose model implements it runs in
// mini-batches (Kind.Blocks).
//
// With blocks whose rows are the rows of the model's full propagation
// matrix (a fan-out that covers every neighbour), ForwardBlocks gives the
// targets' rows of Forward, up to floating-point summation order.
type BlockModel interface {
	Model
	// Hops is the number of propagation steps, and so of blocks
	// ForwardBlocks takes: Layers for GCN and JKNet, K for SGC and
	// APPNP, 2 for GAT, 0 for an MLP (which then takes the targets'
	// features alone).
	Hops() int
	// Matrix returns the whole graph's propagation matrix the model was
	// built with (nil when Hops is 0): the matrix blocks are sampled
	// from.
	Matrix() *graph.Matrix
	// ForwardBlocks returns the logits of the first rows(blocks[Hops−1])
	// nodes of the batch (its targets). x holds the features of every node
	// of the batch (cols(blocks[0]) rows, in the batch's order); block l
	// is the propagation of step l+1 and must have as many columns as
	// block l−1 has rows. Dropout follows the model's phase as in Forward.
	ForwardBlocks(x *G.Node, blocks []*graph.Matrix) (*G.Node, error)
	// LayerwiseLogits returns the whole graph's n × classes logits with
	// the current parameter values, in evaluation mode, computed layer by
	// layer in plain Go without an expression graph: the features are
	// read a chunk of rows at a time from x (any features.Source: in
	// memory, or a memory-mapped file), and adj is the whole graph's
	// propagation matrix (Matrix of a model built on that graph; unused
	// when Hops is 0). The result equals Forward's evaluation output up
	// to floating-point summation order, in bounded memory: each model
	// documents its buffers.
	LayerwiseLogits(adj *graph.Matrix, x features.Source) (*tensor.Dense, error)
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
