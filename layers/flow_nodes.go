package layers

import (
	"fmt"
	"sync/atomic"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/fairmp/fairmp/graph"
	"github.com/fairmp/fairmp/internal/opkit"
	"github.com/fairmp/fairmp/internal/spkern"
)

// nodeFlow executes a computation in a gorgonia graph (Forward,
// ForwardBlocks): each primitive is the op (or the few ops) the models
// of this package were built from, so that training is unchanged.
type nodeFlow struct {
	whole  *graph.Matrix   // the whole graph's Ã (Forward)
	blocks []*graph.Matrix // or the mini-batch's, one per hop
	phase  *Phase
	fold   bool // propagations of the constant input are computed once
	where  string
	g      *G.ExprGraph
	gat    map[*graph.Matrix]*spkern.GATCSR
	means  map[*graph.Matrix]*graph.Matrix // meanMatrix of each hop's matrix
}

// nodeVal is a nodeFlow's payload: a node, or (with fold) a constant
// value not yet in the graph.
type nodeVal struct {
	n     *G.Node
	konst *tensor.Dense
}

var foldIDs atomic.Uint64

func (f *nodeFlow) run(m BlockModel, x *G.Node) (*G.Node, error) {
	ps := m.Learnables()
	if len(ps) == 0 {
		return nil, fmt.Errorf("layers: %s: no learnables", f.where)
	}
	if err := checkInput(x, ps[0], f.where); err != nil {
		return nil, err
	}
	f.g = x.Graph()
	in := nodeVal{n: x}
	if f.fold && x.Op() == nil && x.Value() != nil {
		if d, ok := x.Value().(*tensor.Dense); ok {
			in.konst = d
		}
	}
	out, err := m.Compute(f, Value{v: in, cols: x.Shape()[1]})
	if err != nil {
		return nil, fmt.Errorf("layers: %s: %w", f.where, err)
	}
	if f.blocks != nil && out.level != len(f.blocks) {
		return nil, fmt.Errorf("layers: %s: the output is at hop %d of %d: %w", f.where, out.level, len(f.blocks), ErrFlow)
	}
	return f.node(out)
}

// node returns v's node, adding a constant to the graph the first time.
func (f *nodeFlow) node(v Value) (*G.Node, error) {
	nv, ok := v.v.(nodeVal)
	if !ok {
		return nil, fmt.Errorf("%w: a value of another flow (%T)", ErrFlow, v.v)
	}
	if nv.n != nil && (nv.konst == nil || nv.n.Value() == nv.konst) {
		return nv.n, nil
	}
	name := fmt.Sprintf("propagated.%d", foldIDs.Add(1))
	if err := opkit.UniqueName(f.g, name); err != nil {
		return nil, fmt.Errorf("layers: %w", err)
	}
	return G.NewMatrix(f.g, nv.konst.Dtype(), G.WithShape(nv.konst.Shape()...), G.WithName(name), G.WithValue(nv.konst)), nil
}

func (f *nodeFlow) val(n *G.Node, cols, level int) Value {
	return Value{v: nodeVal{n: n}, cols: cols, level: level}
}

// matrix returns the propagation matrix of the hop leaving level.
func (f *nodeFlow) matrix(level int) (*graph.Matrix, error) {
	if f.blocks != nil {
		if level >= len(f.blocks) {
			return nil, fmt.Errorf("%w: hop %d with %d blocks", ErrFlow, level+1, len(f.blocks))
		}
		return f.blocks[level], nil
	}
	if f.whole == nil {
		return nil, fmt.Errorf("%w: the model propagates but has no propagation matrix (Matrix is nil)", ErrFlow)
	}
	return f.whole, nil
}
