package fairtrain

import (
	"fmt"
	"math/rand"
	"sync/atomic"

	"github.com/fairmp/fairmp/graph"
	"github.com/fairmp/fairmp/internal/opkit"
	"github.com/fairmp/fairmp/layers"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// FairVGNN's views with one dropout mask per step.
//
// The Masks views of a step run the body Masks times in one graph; its
// dropout ops, seeded alike, draw the same masks (see FairVGNNConfig),
// so layers.Forward's flow would draw each mask Masks times. viewFlow
// runs a body written in Dense, Propagate, Activate and Dropout (GCN,
// MLP, SGC) with the ops layers.Forward builds for the first three (it
// calls layers.Forward on one-primitive models) and, for Dropout, ops
// that share one mask per dropout of the body among the views of a phase:
// the first view to run in a step draws it, from a generator seeded as
// layers.Dropout seeds its own, with the same draws, so the masks and
// the results are bit for bit those of layers.Dropout. With a body whose
// first layer folds (fairvgnn_fold.go) it folds it too.

// viewFlowable reports whether body is a layers.BlockModel whose
// computation uses only Dense, Propagate, Activate and Dropout.
func viewFlowable(body layers.Model, d int) bool {
	bm, ok := body.(layers.BlockModel)
	if !ok {
		return false
	}
	p := &foldProbe{}
	_, err := bm.Compute(p, layers.NewValue(probeInput, d, 0))
	return err == nil && !p.wide
}

// sharedDrop is the mask of one dropout of a phase's body, shared by the
// phase's views: drawn is the number of masks drawn so far.
//
// The mask is drawn once a step and applied 2·Masks times (each view's
// forward and backward pass), so it is kept as one byte an element (keep
// is 1 where opkit.Dropout's mask is nonzero) and the element's factor
// is read from a table of the two values the mask holds (0 and its
// scale): the same products, bit for bit, with an eighth of the mask's
// memory traffic.
type sharedDrop struct {
	rate   float64
	seed   int64
	rng    *rand.Rand
	drawn  int
	mask64 []float64 // the drawn mask (opkit.Dropout's)
	mask32 []float32
	keep   []uint8 // 1 where the mask is nonzero
	tab64  [2]float64
	tab32  [2]float32
}

// draw draws the next mask of size elements with layers.Dropout's rule
// (opkit.Dropout: the same draws from the same generator) and packs it.
func (s *sharedDrop) draw(dt tensor.Dtype, size int) {
	if len(s.keep) != size {
		s.keep = make([]uint8, size)
	}
	if dt == tensor.Float32 {
		if len(s.mask32) != size {
			s.mask32 = make([]float32, size)
		}
		opkit.Dropout(s.rng, s.rate, s.mask32, nil, nil)
		s.tab32 = [2]float32{0, float32(1 / (1 - s.rate))}
		packMask(s.keep, s.mask32, s.tab32[1])
	} else {
		if len(s.mask64) != size {
			s.mask64 = make([]float64, size)
		}
		opkit.Dropout(s.rng, s.rate, s.mask64, nil, nil)
		s.tab64 = [2]float64{0, 1 / (1 - s.rate)}
		packMask(s.keep, s.mask64, s.tab64[1])
	}
	s.drawn++
}

// packMask writes 1 into keep[i] where mask[i] is the scale, 0 where it
// is 0 (opkit.Dropout writes nothing else).
func packMask[T float32 | float64](keep []uint8, mask []T, scale T) {
	for i, v := range mask {
		keep[i] = 0
		if v == scale {
			keep[i] = 1
		}
	}
}

// viewFlow is a layers.Flow of gorgonia nodes for one view of a phase.
type viewFlow struct {
	r     *vgnnRun
	p     *vgnnPhase
	in    *G.Node // the view's input: the features (folded) or x ⊙ m
	wm    *G.Node // the folded first weight, m ⊙ W; nil without the fold
	drops int     // the dropouts run so far in this view
}

// viewVal is a viewFlow's payload: a node, or the held-back product of
// the features by the first weight (pending).
type viewVal struct {
	n       *G.Node
	pending bool
}

func (f *viewFlow) node(h layers.Value) (*G.Node, error) {
	v, ok := h.Payload().(viewVal)
	if !ok || v.pending || v.n == nil {
		return nil, fmt.Errorf("fairtrain: fairvgnn: a value the view's flow cannot read (%T)", h.Payload())
	}
	return v.n, nil
}

func (f *viewFlow) val(n *G.Node, cols, level int) layers.Value {
	return layers.NewValue(viewVal{n: n}, cols, level)
}

// run returns the body's output on the view.
func (f *viewFlow) run() (*G.Node, error) {
	out, err := f.p.body.(layers.BlockModel).Compute(f, f.val(f.in, f.in.Shape()[1], 0))
	if err != nil {
		return nil, err
	}
	return f.node(out)
}

func (f *viewFlow) Dense(h layers.Value, w, b *G.Node, act layers.Activation) (layers.Value, error) {
	if v, _ := h.Payload().(viewVal); f.wm != nil && h.Level() == 0 && v.n == f.in && b == nil && act == (layers.Activation{}) {
		return layers.NewValue(viewVal{pending: true}, w.Shape()[1], 0), nil
	}
	x, err := f.node(h)
	if err != nil {
		return layers.Value{}, err
	}
	y, err := layers.Forward(&denseStep{w: w, b: b, act: act}, x)
	if err != nil {
		return layers.Value{}, err
	}
	return f.val(y, w.Shape()[1], h.Level()), nil
}

func (f *viewFlow) Propagate(h layers.Value, hop layers.Hop) (layers.Value, error) {
	if hop.Aggr != "" && hop.Aggr != "sum" {
		return layers.Value{}, fmt.Errorf("fairtrain: fairvgnn: the view's flow has no %s aggregation", hop.Aggr)
	}
	if v, _ := h.Payload().(viewVal); v.pending {
		ax, err := f.p.propagatedX(f.r)
		if err != nil {
			return layers.Value{}, err
		}
		y, err := layers.Forward(&denseStep{w: f.wm, b: hop.Bias, act: hop.Act}, ax)
		if err != nil {
			return layers.Value{}, err
		}
		return f.val(y, h.Cols(), h.Level()+1), nil
	}
	x, err := f.node(h)
	if err != nil {
		return layers.Value{}, err
	}
	y, err := f.p.propagate(x, hop)
	if err != nil {
		return layers.Value{}, err
	}
	return f.val(y, h.Cols(), h.Level()+1), nil
}

func (f *viewFlow) Activate(h layers.Value, act layers.Activation) (layers.Value, error) {
	if act == (layers.Activation{}) {
		return h, nil
	}
	x, err := f.node(h)
	if err != nil {
		return layers.Value{}, err
	}
	y, err := layers.Activate(x, act)
	if err != nil {
		return layers.Value{}, err
	}
	return f.val(y, h.Cols(), h.Level()), nil
}

func (f *viewFlow) Dropout(h layers.Value, rate float64, seed int64) (layers.Value, error) {
	if rate == 0 {
		return h, nil
	}
	x, err := f.node(h)
	if err != nil {
		return layers.Value{}, err
	}
	if !(rate > 0 && rate < 1) {
		return layers.Value{}, fmt.Errorf("fairtrain: fairvgnn: dropout rate %v, want 0 <= rate < 1", rate)
	}
	k := f.drops
	f.drops++
	if k == len(f.p.drops) {
		f.p.drops = append(f.p.drops, &sharedDrop{rate: rate, seed: seed, rng: rand.New(rand.NewSource(seed))})
	}
	s := f.p.drops[k]
	if s.rate != rate || s.seed != seed {
		return layers.Value{}, fmt.Errorf("fairtrain: fairvgnn: dropout %d of the body has rate %v and seed %d in one view, %v and %d in another", k, rate, seed, s.rate, s.seed)
	}
	y, err := opkit.Apply(viewDropSpec, &viewDropOp{s: s, phase: f.r.task.Phase, shape: x.Shape().Clone(), id: viewDropIDs.Add(1)}, x)
	if err != nil {
		return layers.Value{}, fmt.Errorf("fairtrain: fairvgnn: %w", err)
	}
	return f.val(y, h.Cols(), h.Level()), nil
}

func (f *viewFlow) Combine(coef []float64, vs ...layers.Value) (layers.Value, error) {
	return layers.Value{}, fmt.Errorf("fairtrain: fairvgnn: the view's flow has no Combine")
}
func (f *viewFlow) Scale(h layers.Value, s *G.Node) (layers.Value, error) {
	return layers.Value{}, fmt.Errorf("fairtrain: fairvgnn: the view's flow has no Scale")
}
func (f *viewFlow) Jump(mode layers.JKMode, vs ...layers.Value) (layers.Value, error) {
	return layers.Value{}, fmt.Errorf("fairtrain: fairvgnn: the view's flow has no Jump")
}
func (f *viewFlow) Attend(h layers.Value, l *layers.GATConv) (layers.Value, error) {
	return layers.Value{}, fmt.Errorf("fairtrain: fairvgnn: the view's flow has no Attend")
}

// propagatedX returns the phase's node of Ã·X, computed once per run
// (layers.Forward folds the propagation of constant features).
func (p *vgnnPhase) propagatedX(r *vgnnRun) (*G.Node, error) {
	if p.ax != nil {
		return p.ax, nil
	}
	if r.axT == nil {
		ax, err := p.propagate(p.x, layers.Hop{})
		if err != nil {
			return nil, err
		}
		t, ok := ax.Value().(*tensor.Dense)
		if ax.Op() != nil || !ok {
			return nil, fmt.Errorf("fairtrain: fairvgnn: Ã·X was not folded to a constant")
		}
		r.axT, p.ax = t, ax
		return ax, nil
	}
	p.ax = G.NewMatrix(p.g, r.axT.Dtype(), G.WithShape(r.axT.Shape()...), G.WithName("fairvgnn.propagated"), G.WithValue(r.axT))
	return p.ax, nil
}

// propagate returns one hop of x in the phase's graph, as layers.Forward
// builds it.
func (p *vgnnPhase) propagate(x *G.Node, hop layers.Hop) (*G.Node, error) {
	cols := x.Shape()[1]
	dummy, ok := p.dummies[cols]
	if !ok {
		dummy = G.NewMatrix(p.g, x.Dtype(), G.WithShape(cols, 1), G.WithName(fmt.Sprintf("fairvgnn.hop%d", cols)), G.WithInit(G.Zeroes()))
		if p.dummies == nil {
			p.dummies = map[int]*G.Node{}
		}
		p.dummies[cols] = dummy
	}
	bm := p.body.(layers.BlockModel)
	return layers.Forward(&hopStep{a: bm.Matrix(), hop: hop, in: dummy, phase: phaseOfModel(p.body)}, x)
}

func phaseOfModel(m layers.Model) *layers.Phase {
	if p, ok := m.(layers.Phased); ok {
		return p.Phase()
	}
	return nil
}

// denseStep is the one-primitive model act(x·W + b).
type denseStep struct {
	w, b *G.Node
	act  layers.Activation
}

func (m *denseStep) Forward(x *G.Node) (*G.Node, error) { return layers.Forward(m, x) }
func (m *denseStep) Learnables() G.Nodes                { return G.Nodes{m.w} }
func (m *denseStep) Matrix() *graph.Matrix              { return nil }
func (m *denseStep) Compute(f layers.Flow, x layers.Value) (layers.Value, error) {
	return f.Dense(x, m.w, m.b, m.act)
}

// hopStep is the one-primitive model of a propagation; in, a cols × 1
// matrix of the graph, only gives layers.Forward the input's width.
type hopStep struct {
	a     *graph.Matrix
	hop   layers.Hop
	in    *G.Node
	phase *layers.Phase
}

func (m *hopStep) Forward(x *G.Node) (*G.Node, error) { return layers.Forward(m, x) }
func (m *hopStep) Learnables() G.Nodes                { return G.Nodes{m.in} }
func (m *hopStep) Matrix() *graph.Matrix              { return m.a }
func (m *hopStep) Phase() *layers.Phase               { return m.phase }
func (m *hopStep) Compute(f layers.Flow, x layers.Value) (layers.Value, error) {
	return f.Propagate(x, m.hop)
}

// ---------------------------------------------------------------------
// viewDropOp

var viewDropIDs atomic.Uint64

// viewDropOp holds the state of an inverted dropout with the shared
// mask s in training (the identity in evaluation): each run of the op
// (viewDropSpec) takes the mask of its run, drawing it when it is the
// first of the views to run.
type viewDropOp struct {
	s      *sharedDrop
	phase  *layers.Phase
	shape  tensor.Shape
	id     uint64
	runs   int  // the training runs of this op
	masked bool // the latest run applied the mask
}

// viewDropShape is the shape rule of the shared dropout and its
// gradient: the input's shape, the one the op was built for.
func viewDropShape(op *viewDropOp, in []tensor.Shape) (tensor.Shape, error) {
	if !in[0].Eq(op.shape) {
		return nil, fmt.Errorf("input shape %v, want %v", in[0], op.shape)
	}
	return in[0], nil
}

var viewDropSpec = &opkit.Spec[*viewDropOp]{
	ID: "fairmp.fair.SharedDropout",
	Name: func(op *viewDropOp) string {
		return fmt.Sprintf("SharedDropout(p=%g,seed=%d)#%d", op.s.rate, op.s.seed, op.id)
	},
	Sig:   func(*viewDropOp) opkit.Sig { return opkit.Mats(1) },
	Shape: viewDropShape,
	Hash:  func(op *viewDropOp, h opkit.Hasher) { h.U64(op.id) },
	F32:   viewDropFwd[float32],
	F64:   viewDropFwd[float64],
	Grad: func(o *opkit.Op[*viewDropOp], _ G.Nodes, _, grad *G.Node) (G.Nodes, error) {
		d, err := opkit.Apply(viewDropGradSpec, o.P, grad)
		if err != nil {
			return nil, err
		}
		return G.Nodes{d}, nil
	},
	Keep: true,
}

func viewDropFwd[T float32 | float64](op *viewDropOp, a opkit.Args[T]) error {
	x := a.Dense[0]
	op.masked = op.phase.Training()
	if op.masked {
		op.runs++
		if op.runs == op.s.drawn+1 {
			op.s.draw(x.Dtype(), x.Shape().TotalSize())
		}
		if op.runs != op.s.drawn {
			return fmt.Errorf("run %d of the op, mask %d drawn: the views ran out of step", op.runs, op.s.drawn)
		}
	}
	return op.apply(a.OutDense, x)
}

// apply writes x times the mask (x itself when the latest run was not
// masked) into out.
func (op *viewDropOp) apply(out, x *tensor.Dense) error {
	if op.masked && len(op.s.keep) != x.Shape().TotalSize() {
		return fmt.Errorf("%d elements, the mask has %d", x.Shape().TotalSize(), len(op.s.keep))
	}
	switch xs := x.Data().(type) {
	case []float64:
		o := out.Data().([]float64)
		if !op.masked {
			copy(o, xs)
			return nil
		}
		applyMask(o, xs, op.s.keep, &op.s.tab64)
	case []float32:
		o := out.Data().([]float32)
		if !op.masked {
			copy(o, xs)
			return nil
		}
		applyMask(o, xs, op.s.keep, &op.s.tab32)
	default:
		return fmt.Errorf("dtype %v, want float32 or float64", x.Dtype())
	}
	return nil
}

// applyMask writes x[i]·tab[keep[i]] into out[i]: x times the drawn
// mask, whose elements are tab[0] (0) and tab[1] (the scale).
func applyMask[T float32 | float64](out, x []T, keep []uint8, tab *[2]T) {
	out, keep = out[:len(x)], keep[:len(x)]
	for i, v := range x {
		out[i] = v * tab[keep[i]&1]
	}
}

// viewDropGradSpec is the shared dropout's gradient: the gradient times
// the mask of the op's latest run.
var viewDropGradSpec = &opkit.Spec[*viewDropOp]{
	ID:    "fairmp.fair.SharedDropoutGrad",
	Name:  func(op *viewDropOp) string { return fmt.Sprintf("SharedDropoutGrad#%d", op.id) },
	Sig:   func(*viewDropOp) opkit.Sig { return opkit.Mats(1) },
	Shape: viewDropShape,
	Hash:  func(op *viewDropOp, h opkit.Hasher) { h.U64(op.id) },
	F32: func(op *viewDropOp, a opkit.Args[float32]) error {
		return op.apply(a.OutDense, a.Dense[0])
	},
	F64: func(op *viewDropOp, a opkit.Args[float64]) error {
		return op.apply(a.OutDense, a.Dense[0])
	},
	Keep: true,
}
