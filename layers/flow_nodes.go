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

// Dense is denseAct: the product, the bias and a ReLU in one op, another
// activation after it.
func (f *nodeFlow) Dense(h Value, w, b *G.Node, act Activation) (Value, error) {
	if err := checkParam("Dense", h, w, b); err != nil {
		return Value{}, err
	}
	x, err := f.node(h)
	if err != nil {
		return Value{}, err
	}
	if err := checkInput(x, w, "Dense "+w.Name()); err != nil {
		return Value{}, err
	}
	relu := act == ReLU()
	y, err := denseAct(x, w, b, relu)
	if err != nil {
		return Value{}, fmt.Errorf("layers: %s: %w", w.Name(), err)
	}
	if !relu && act != (Activation{}) {
		if y, err = Activate(y, act); err != nil {
			return Value{}, err
		}
	}
	return f.val(y, w.Shape()[1], h.level), nil
}

// Propagate is SpMM (EdgeDropoutSpMM with edge dropout), with the bias
// and a ReLU fused into the product (spmmBiasAct).
func (f *nodeFlow) Propagate(h Value, p Hop) (Value, error) {
	if err := checkHop(h, p); err != nil {
		return Value{}, err
	}
	a, err := f.matrix(h.level)
	if err != nil {
		return Value{}, err
	}
	if nv := h.v.(nodeVal); nv.konst != nil && p.EdgeDropout == 0 && p.Bias == nil && p.Act == (Activation{}) {
		d, err := sgcPropagate(a, 1, nv.konst)
		if err != nil {
			return Value{}, fmt.Errorf("layers: Propagate: %w", err)
		}
		return Value{v: nodeVal{konst: d}, cols: h.cols, level: h.level + 1}, nil
	}
	x, err := f.node(h)
	if err != nil {
		return Value{}, err
	}
	var y *G.Node
	if p.EdgeDropout > 0 {
		y, err = EdgeDropoutSpMM(a, x, p.EdgeDropout, p.Seed, f.phase)
	} else {
		relu := p.Act == ReLU()
		y, err = spmmBiasAct(a, x, p.Bias, relu)
		if err == nil && !relu && p.Act != (Activation{}) {
			y, err = Activate(y, p.Act)
		}
	}
	if err != nil {
		return Value{}, err
	}
	return f.val(y, h.cols, h.level+1), nil
}

func (f *nodeFlow) Activate(h Value, act Activation) (Value, error) {
	if act == (Activation{}) {
		return h, nil
	}
	x, err := f.node(h)
	if err != nil {
		return Value{}, err
	}
	y, err := Activate(x, act)
	if err != nil {
		return Value{}, err
	}
	return f.val(y, h.cols, h.level), nil
}

func (f *nodeFlow) Dropout(h Value, rate float64, seed int64) (Value, error) {
	if rate == 0 {
		return h, nil
	}
	x, err := f.node(h)
	if err != nil {
		return Value{}, err
	}
	y, err := Dropout(x, rate, seed, f.phase)
	if err != nil {
		return Value{}, err
	}
	return f.val(y, h.cols, h.level), nil
}

// aligned returns the nodes of vs with the rows of the deepest: the first
// rows of the others (on blocks; on the whole graph they are all n).
func (f *nodeFlow) aligned(vs []Value) (G.Nodes, error) {
	ns := make(G.Nodes, len(vs))
	rows := -1
	for i, v := range vs {
		n, err := f.node(v)
		if err != nil {
			return nil, err
		}
		ns[i] = n
		if r := n.Shape()[0]; rows < 0 || r < rows {
			rows = r
		}
	}
	for i, n := range ns {
		if n.Shape()[0] == rows {
			continue
		}
		s, err := G.Slice(n, G.S(0, rows))
		if err == nil && s.Dims() == 1 {
			s, err = G.Reshape(s, tensor.Shape{rows, n.Shape()[1]}) // Slice drops a dimension of one row
		}
		if err != nil {
			return nil, fmt.Errorf("layers: the first %d rows of %s: %w", rows, opkit.DescribeNode(n), err)
		}
		ns[i] = s
	}
	return ns, nil
}

// Combine is linComb.
func (f *nodeFlow) Combine(coef []float64, vs ...Value) (Value, error) {
	lv, err := checkCombine(coef, vs)
	if err != nil {
		return Value{}, err
	}
	ns, err := f.aligned(vs)
	if err != nil {
		return Value{}, err
	}
	y, err := linComb(coef, ns...)
	if err != nil {
		return Value{}, err
	}
	return f.val(y, vs[0].cols, lv), nil
}

// Jump is concatCols or a chain of MaxBetween.
func (f *nodeFlow) Jump(mode JKMode, vs ...Value) (Value, error) {
	cols, lv, err := checkJump(mode, vs)
	if err != nil {
		return Value{}, err
	}
	ns, err := f.aligned(vs)
	if err != nil {
		return Value{}, err
	}
	y := ns[0]
	if len(ns) > 1 {
		switch mode {
		case JKConcat:
			y, err = concatCols(ns...)
		case JKMax:
			for _, o := range ns[1:] {
				if y, err = G.MaxBetween(y, o); err != nil {
					break
				}
			}
		}
		if err != nil {
			return Value{}, fmt.Errorf("layers: Jump %s: %w", mode, err)
		}
	}
	return f.val(y, cols, lv), nil
}

// Attend is the layer's gatOp pair over the hop's edges: the whole
// matrix's pattern, or the block's sampled in-edges.
func (f *nodeFlow) Attend(h Value, l *GATConv) (Value, error) {
	if err := checkAttend(h, l); err != nil {
		return Value{}, err
	}
	a, err := f.matrix(h.level)
	if err != nil {
		return Value{}, err
	}
	x, err := f.node(h)
	if err != nil {
		return Value{}, err
	}
	where := fmt.Sprintf("GAT %q", l.cfg.Name)
	if err := checkInput(x, l.w, where); err != nil {
		return Value{}, err
	}
	if f.blocks != nil {
		where = fmt.Sprintf("GAT %q: block %d", l.cfg.Name, h.level)
	}
	y, err := l.forwardWith(f.gatCSR(a), x, where)
	if err != nil {
		return Value{}, err
	}
	return f.val(y, l.cfg.outWidth(), h.level+1), nil
}

// gatCSR returns the attention structure of a matrix's pattern, built
// once per matrix and flow: on the whole graph the one with reverse edges
// (NewGATCSR's), on a block the transposed one.
func (f *nodeFlow) gatCSR(a *graph.Matrix) *spkern.GATCSR {
	if c, ok := f.gat[a]; ok {
		return c
	}
	if f.gat == nil {
		f.gat = map[*graph.Matrix]*spkern.GATCSR{}
	}
	r, c := a.Dims()
	g, ok := (*spkern.GATCSR)(nil), false
	if f.blocks == nil && r == c {
		// The whole graph's matrix: the structure with reverse edges,
		// whose gradient kernels need no transpose.
		g, ok = spkern.NewGATWhole(r, a.Indptr(), a.Indices())
	}
	if !ok {
		g = spkern.NewGATBlock(r, c, a.Indptr(), a.Indices())
	}
	f.gat[a] = g
	return g
}
