package layers

import (
	"errors"
	"fmt"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/fairmp/fairmp/graph"
	"github.com/fairmp/fairmp/graph/features"
)

// A model is declared once, as a composition of primitives: its Compute
// method writes the path from the input features to the logits in the
// primitives of a Flow, and every way of running the model is a Flow that
// executes them (see [Flow]):
//
//   - in a gorgonia graph on the whole graph, for training and evaluation
//     ([Forward], which a model's Forward method returns);
//   - in a gorgonia graph on the sampled blocks of a mini-batch
//     ([ForwardBlocks], for layers/minibatch and the fairness trainers);
//   - in plain Go over the whole graph, layer by layer, in bounded memory
//     ([LayerwiseLogits], for inference on graphs too big for a gorgonia
//     graph);
//   - as the transforms of an Apache Beam pipeline (package
//     fmp/fmpbeam, a module of its own so that this one does not depend
//     on Beam).
//
// The number of hops ([Hops]) is read from the same declaration, by
// running it on a flow that only counts. This is the split GoMLX and PyG
// make between a layer's maths and its execution; here the maths is
// written once against an interface and each execution path implements
// the interface, so that gorgonia's static graphs (and FMP's custom ops)
// stay the training path while the other paths need no code per model.

// Value is an intermediate result of a model's computation as a Flow
// holds it: a matrix with a row per node (per node of the current hop on
// sampled blocks) and Cols columns. A model passes Values from one
// primitive to the next and never looks inside.
type Value struct {
	v     any // the flow's payload
	cols  int
	level int // the hops applied: the block whose rows it has
}

// NewValue returns a Value holding a flow's payload with cols columns
// after level hops: for a Flow implemented outside this package (package
// fmp/fmpbeam's).
func NewValue(payload any, cols, level int) Value { return Value{v: payload, cols: cols, level: level} }

// Payload returns what the flow that made v stored in it.
func (v Value) Payload() any { return v.v }

// Cols returns the width of v.
func (v Value) Cols() int { return v.cols }

// Level returns the number of hops applied to reach v: on sampled blocks,
// v has the rows of block Level−1's targets (the batch's nodes at 0).
func (v Value) Level() int { return v.level }

// Hop configures one propagation step, act(agg(h) + Bias): agg is Aggr
// over the flow's propagation matrix Ã for the step (the whole graph's,
// or a sampled block).
type Hop struct {
	// Aggr is how row i of Ã aggregates the rows of h, as PyG's aggr
	// names it:
	//
	//   - "" (the default) or "sum": the product Ã·h, the sum over row
	//     i's entries weighted by their values (GCN's normalised sum;
	//     GIN's sum when Ã is the adjacency, Propagation{} without
	//     self-loops or normalisation);
	//   - "mean": the mean of h_j over the entries j of row i, their
	//     values ignored (PyG's aggr="mean": with Propagation{}, the mean
	//     over the in-neighbours, without a self-loop); on a sampled
	//     block, the mean over the sampled neighbours, as with PyG's
	//     NeighborLoader;
	//   - "max": the element-wise maximum of h_j over the entries j of
	//     row i, their values ignored (PyG's aggr="max"); its gradient
	//     goes to the first entry j (in column order) that attains it.
	//
	// A row without entries (an isolated node) gives 0 for the three.
	// The aggregation is a field of the hop, not a primitive of its own:
	// it is the one thing that varies between hops, and the matrix, the
	// bias, the activation, the checks and the count of hops stay
	// Propagate's.
	Aggr string
	// Bias, if not nil, is a 1 × cols parameter added after the product.
	Bias *G.Node
	// Act is applied after the bias; the zero Activation applies none.
	Act Activation
	// EdgeDropout drops each stored entry of Ã with this probability in
	// training (APPNP's edge dropout, see EdgeDropoutSpMM), with the
	// masks seeded by Seed. It must be 0 with Bias, Act or an Aggr
	// other than the sum.
	EdgeDropout float64
	Seed        int64
}

// Flow is the set of primitives a model's computation is written in
// (BlockModel.Compute). Each method returns a new Value and leaves its
// inputs as they are. Errors name the primitive and the parameter.
//
// Where a primitive takes several values (Combine, Jump) that are at
// different hops, as on sampled blocks, the flow keeps the rows of the
// deepest (the first rows of the others, which are its nodes).
type Flow interface {
	// Dense returns act(h·W + b): W is an in × out parameter (in =
	// h.Cols()), b a 1 × out parameter or nil, act the zero Activation
	// for none.
	Dense(h Value, w, b *G.Node, act Activation) (Value, error)
	// Propagate returns one hop, act(agg(h) + bias) (see Hop).
	Propagate(h Value, p Hop) (Value, error)
	// Activate applies act element-wise.
	Activate(h Value, act Activation) (Value, error)
	// Dropout applies inverted dropout with probability rate in
	// training, its masks seeded by seed; it is the identity in
	// evaluation and outside gorgonia.
	Dropout(h Value, rate float64, seed int64) (Value, error)
	// Combine returns Σ coef[i]·vs[i] (equal widths): APPNP's mix of the
	// propagated and the teleport terms, or a sum of terms. A learnable
	// coefficient is a Scale of the term before Combine: GIN's
	// (1+ε)·h + Σ_j h_j is Combine([1, 1, 1], h, Scale(h, ε), Σ_j h_j).
	Combine(coef []float64, vs ...Value) (Value, error)
	// Scale returns s·h for a 1 × 1 parameter s: a learnable
	// coefficient (GIN's ε).
	Scale(h Value, s *G.Node) (Value, error)
	// Jump aggregates the values of several layers as jumping-knowledge
	// networks do: side by side (JKConcat) or their element-wise
	// maximum (JKMax, equal widths).
	Jump(mode JKMode, vs ...Value) (Value, error)
	// Attend is a graph-attention layer (GAT) over the flow's edges for
	// the step: see GATConv.
	Attend(h Value, l *GATConv) (Value, error)
}

// BlockModel is a model declared as a composition of the primitives of a
// Flow. Every library kind is one (MLP, GCN, SGC, APPNP, GAT, JKNet), and
// so is a user's kind that implements it: it then trains in full batch
// and in mini-batches (layers/minibatch), runs layer by layer
// (LayerwiseLogits) and runs on Beam (fmp/fmpbeam) with no other code.
// Its Forward method is Forward(m, x).
type BlockModel interface {
	Model
	// Matrix returns the propagation matrix of the graph the model was
	// built on (nil for a model that does not propagate): the matrix of
	// Forward, and the one mini-batches are sampled from.
	Matrix() *graph.Matrix
	// Compute writes the model's computation from the input features x
	// (a Value of In columns) to the logits (Out columns) in f's
	// primitives. It must not depend on anything but the model's
	// configuration and parameters.
	Compute(f Flow, x Value) (Value, error)
}

// ErrFlow is wrapped by the errors of a Flow's primitives for values they
// cannot take (a width, a level or a dtype that does not fit).
var ErrFlow = errors.New("layers: flow")

// Hops returns the number of propagation steps of m's computation, and so
// the number of blocks ForwardBlocks takes: read from Compute on a flow
// that only counts. It returns Compute's error, and an error for a
// computation whose output is not at its deepest hop.
func Hops(m BlockModel) (int, error) {
	if m == nil {
		return 0, fmt.Errorf("layers: Hops: nil model")
	}
	in, err := inputWidth(m)
	if err != nil {
		return 0, err
	}
	f := &countFlow{}
	out, err := m.Compute(f, Value{cols: in})
	if err != nil {
		return 0, fmt.Errorf("layers: %T: %w", m, err)
	}
	if out.level != f.max {
		return 0, fmt.Errorf("layers: %T: the output is at hop %d, a value at hop %d: %w", m, out.level, f.max, ErrFlow)
	}
	return out.level, nil
}

// inputWidth returns the rows of the first learnable: the input width of
// the models of this package and of any model whose first learnable is
// its first layer's weight. Compute checks the width anyway.
func inputWidth(m BlockModel) (int, error) {
	ps := m.Learnables()
	if len(ps) == 0 || ps[0].Dims() != 2 {
		return 0, fmt.Errorf("layers: %T: no learnable matrix to read the input width from", m)
	}
	return ps[0].Shape()[0], nil
}

// Forward runs m's computation on its whole graph (m.Matrix()) in x's
// gorgonia graph, with its dropouts following its phase when it has one
// (Phased): what a BlockModel's Forward method returns. A propagation of
// the input features themselves (SGC's, before any learnable) is computed
// once, when the graph is built, and held as a constant: build the graph
// anew for other features.
func Forward(m BlockModel, x *G.Node) (*G.Node, error) {
	if m == nil || x == nil {
		return nil, fmt.Errorf("layers: Forward: nil model or input node")
	}
	f := &nodeFlow{whole: m.Matrix(), phase: phaseOf(m), fold: true, where: fmt.Sprintf("%T", m)}
	return f.run(m, x)
}

// ForwardBlocks runs m's computation on the sampled blocks of a
// mini-batch (package graph/sample): hop l propagates with blocks[l],
// which maps the rows of a larger node set to those of the smaller one it
// starts with. x holds the features of every node of the batch
// (cols(blocks[0]) rows, in the batch's order); the result has the rows
// of the targets, rows(blocks[Hops−1]) (x's rows for a model without
// hops). Dropout follows the model's phase as in Forward. With blocks
// that cover every neighbour, it equals Forward's targets' rows up to
// summation order.
func ForwardBlocks(m BlockModel, x *G.Node, blocks []*graph.Matrix) (*G.Node, error) {
	if m == nil {
		return nil, fmt.Errorf("layers: ForwardBlocks: nil model")
	}
	where := fmt.Sprintf("%T", m)
	hops, err := Hops(m)
	if err != nil {
		return nil, err
	}
	if err := checkBlocks(x, blocks, hops, where); err != nil {
		return nil, err
	}
	f := &nodeFlow{blocks: blocks, phase: phaseOf(m), where: where}
	return f.run(m, x)
}

func phaseOf(m Model) *Phase {
	if p, ok := m.(Phased); ok {
		return p.Phase()
	}
	return nil
}

// LayerwiseLogits returns m's logits on every node of a graph, n ×
// Out, with the parameters' current values, in evaluation mode,
// computed layer by layer in plain Go without an expression graph. x
// gives the n nodes' features a chunk of rows at a time (any
// features.Source: in memory, or a memory-mapped file); adj is the
// graph's n × n propagation matrix as the model's kind builds it
// (minibatch.Matrix; unused by a model without hops), for any graph with
// the model's feature schema.
//
// Memory besides adj and x: a chain of row-wise primitives (Dense,
// Activate, Dropout) runs a chunk of rows at a time; a value that a
// propagation, an attention, a combination or a jump needs whole is
// computed once into one n × width buffer, kept while the computation
// refers to it. The result equals Forward's in evaluation mode up to
// floating-point summation order.
func LayerwiseLogits(m BlockModel, adj *graph.Matrix, x features.Source) (*tensor.Dense, error) {
	if m == nil || x == nil {
		return nil, fmt.Errorf("layers: LayerwiseLogits: nil model or features")
	}
	where := fmt.Sprintf("%T", m)
	ps := m.Learnables()
	if len(ps) == 0 {
		return nil, fmt.Errorf("layers: %s: LayerwiseLogits: the model has no learnables", where)
	}
	dt := ps[0].Dtype()
	for _, p := range ps {
		v, ok := p.Value().(*tensor.Dense)
		if !ok || v.Dtype() != dt {
			return nil, fmt.Errorf("layers: %s: parameter %q has no dense %v value", where, p.Name(), dt)
		}
	}
	var (
		out    any
		n      = x.Rows()
		cols   int
		err    error
		where2 = "layers: " + where + ": LayerwiseLogits"
	)
	switch dt {
	case tensor.Float32:
		out, cols, err = runRows[float32](m, adj, x)
	case tensor.Float64:
		out, cols, err = runRows[float64](m, adj, x)
	default:
		return nil, fmt.Errorf("%s: dtype %v, want float32 or float64", where2, dt)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", where2, err)
	}
	return tensor.New(tensor.WithShape(n, cols), tensor.WithBacking(out)), nil
}

// countFlow runs a computation on widths and hops alone (Hops).
type countFlow struct{ max int }

func (f *countFlow) at(v Value, cols, level int) Value {
	f.max = max(f.max, level)
	return Value{cols: cols, level: level}
}
