package fairtrain

import (
	"fmt"
	"reflect"

	"github.com/fairmp/fairmp/graph"
	"github.com/fairmp/fairmp/internal/opkit"
	"github.com/fairmp/fairmp/layers"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// FairVGNN's masked views with the first propagation folded.
//
// A body whose first operation on the features is a product by a weight
// matrix W followed by a propagation (a GCN's first convolution, Ã·(X·W)
// + b; JKNet's) reads the view x ⊙ m as Ã·((X ⊙ m)·W) = (Ã·X)·(m ⊙ W), m
// scaling W's rows: Ã·X does not depend on the mask, so it is computed
// once per run (as layers.Forward folds the propagation of constant
// features) and each view is a dense product by the masked weights. The
// sparse products of the first layer, forward and backward, leave the
// Masks × (DiscriminatorSteps + ClassifierSteps + GeneratorSteps) passes
// of an epoch. The identity is exact in exact arithmetic; in floating
// point the sums run in another order, so the losses and the trained
// parameters agree with the unfolded computation to rounding
// (TestFairVGNNFoldMatchesUnfolded), not bit for bit. The evaluation
// (MaskedEncoder.Forward) is not folded.

// foldWeight returns the weight matrix of body's first layer when body
// folds (see above): a layers.BlockModel whose computation applies to
// the features (after dropout at rate 0 at most) exactly one Dense
// without bias or activation, with a d-row weight, whose output only a
// propagation without edge dropout reads. Else it returns nil: the
// views are then the masked features themselves.
func foldWeight(body layers.Model, d int) *G.Node {
	bm, ok := body.(layers.BlockModel)
	if !ok {
		return nil
	}
	p := &foldProbe{}
	if _, err := bm.Compute(p, layers.NewValue(probeInput, d, 0)); err != nil || p.bad || p.folds != 1 || p.w == nil || p.w.Shape()[0] != d {
		return nil
	}
	return p.w
}

// probeTag is a foldProbe's payload: what a value is to the fold.
type probeTag int

const (
	probeOther   probeTag = iota
	probeInput            // the features
	probePending          // the features times the first weight
)

// foldProbe is a layers.Flow that runs nothing and checks the pattern
// foldWeight folds.
type foldProbe struct {
	w     *G.Node
	folds int
	bad   bool
	wide  bool // the computation combines values or attends (see viewFlowable)
}

func tagOf(v layers.Value) probeTag { t, _ := v.Payload().(probeTag); return t }

// other returns a value the fold leaves alone, marking the run bad when
// any of vs is the features or their pending product.
func (p *foldProbe) other(cols, level int, vs ...layers.Value) layers.Value {
	for _, v := range vs {
		if tagOf(v) != probeOther {
			p.bad = true
		}
	}
	return layers.NewValue(probeOther, cols, level)
}

func (p *foldProbe) Dense(h layers.Value, w, b *G.Node, act layers.Activation) (layers.Value, error) {
	if w == nil || w.Dims() != 2 {
		return layers.Value{}, fmt.Errorf("fairtrain: Dense without a weight matrix")
	}
	if tagOf(h) == probeInput && p.w == nil && b == nil && act == (layers.Activation{}) {
		p.w = w
		return layers.NewValue(probePending, w.Shape()[1], h.Level()), nil
	}
	return p.other(w.Shape()[1], h.Level(), h), nil
}
func (p *foldProbe) Propagate(h layers.Value, hop layers.Hop) (layers.Value, error) {
	if hop.Aggr != "" && hop.Aggr != "sum" {
		p.wide = true // the view's flow and the fold take the weighted sum only
	}
	if tagOf(h) == probePending && hop.EdgeDropout == 0 && (hop.Aggr == "" || hop.Aggr == "sum") {
		p.folds++
		return layers.NewValue(probeOther, h.Cols(), h.Level()+1), nil
	}
	return p.other(h.Cols(), h.Level()+1, h), nil
}
func (p *foldProbe) Scale(h layers.Value, s *G.Node) (layers.Value, error) {
	p.wide = true
	return p.other(h.Cols(), h.Level(), h), nil
}
func (p *foldProbe) Activate(h layers.Value, act layers.Activation) (layers.Value, error) {
	return p.other(h.Cols(), h.Level(), h), nil
}
func (p *foldProbe) Dropout(h layers.Value, rate float64, seed int64) (layers.Value, error) {
	if rate == 0 && tagOf(h) == probeInput {
		return h, nil
	}
	return p.other(h.Cols(), h.Level(), h), nil
}
func (p *foldProbe) Combine(coef []float64, vs ...layers.Value) (layers.Value, error) {
	p.wide = true
	if len(vs) == 0 {
		return layers.Value{}, fmt.Errorf("fairtrain: Combine of no value")
	}
	return p.other(vs[0].Cols(), maxLevel(vs), vs...), nil
}
func (p *foldProbe) Jump(mode layers.JKMode, vs ...layers.Value) (layers.Value, error) {
	p.wide = true
	if len(vs) == 0 {
		return layers.Value{}, fmt.Errorf("fairtrain: Jump of no value")
	}
	cols := vs[0].Cols()
	if mode != layers.JKMax {
		cols = 0
		for _, v := range vs {
			cols += v.Cols()
		}
	}
	return p.other(cols, maxLevel(vs), vs...), nil
}
func (p *foldProbe) Attend(h layers.Value, l *layers.GATConv) (layers.Value, error) {
	p.wide = true
	if l == nil {
		return layers.Value{}, fmt.Errorf("fairtrain: Attend without a layer")
	}
	c := l.Config()
	cols := c.Out
	if c.Concat {
		cols *= c.Heads
	}
	return p.other(cols, h.Level()+1, h), nil
}

func maxLevel(vs []layers.Value) int {
	l := 0
	for _, v := range vs {
		l = max(l, v.Level())
	}
	return l
}

// foldedBody is a body whose first Dense and propagation read Ã·X (held
// in *ax once computed) times wm, the first weight with its rows masked:
// a layers.BlockModel that layers.Forward runs on the features.
type foldedBody struct {
	inner layers.BlockModel
	wm    *G.Node
	ax    *layers.Value // Ã·X, shared by the views of a run
}

var _ layers.BlockModel = (*foldedBody)(nil)

func (b *foldedBody) Forward(x *G.Node) (*G.Node, error) { return layers.Forward(b, x) }
func (b *foldedBody) Learnables() G.Nodes                { return b.inner.Learnables() }
func (b *foldedBody) Matrix() *graph.Matrix              { return b.inner.Matrix() }
func (b *foldedBody) Phase() *layers.Phase {
	if p, ok := b.inner.(layers.Phased); ok {
		return p.Phase()
	}
	return nil
}
func (b *foldedBody) Compute(f layers.Flow, x layers.Value) (layers.Value, error) {
	return b.inner.Compute(&foldFlow{Flow: f, in: x, body: b}, x)
}

// foldFlow runs a foldedBody's computation in the flow of layers.Forward:
// the first Dense on the features is held back, and the propagation of
// its output is Dense(Ã·X, wm) with the propagation's bias and
// activation. Every other primitive is the flow's own.
type foldFlow struct {
	layers.Flow
	in   layers.Value
	body *foldedBody
}

// samePayload reports whether a and b hold one payload (false for
// payloads that cannot be compared).
func samePayload(a, b layers.Value) bool {
	pa, pb := a.Payload(), b.Payload()
	if pa == nil || reflect.TypeOf(pa) != reflect.TypeOf(pb) || !reflect.TypeOf(pa).Comparable() {
		return false
	}
	return pa == pb
}

// pendingFold is the payload of the held-back product.
type pendingFold struct{}

func (f *foldFlow) Dense(h layers.Value, w, b *G.Node, act layers.Activation) (layers.Value, error) {
	if h.Level() == 0 && samePayload(h, f.in) && b == nil && act == (layers.Activation{}) {
		return layers.NewValue(pendingFold{}, w.Shape()[1], 0), nil
	}
	return f.Flow.Dense(h, w, b, act)
}

func (f *foldFlow) Propagate(h layers.Value, p layers.Hop) (layers.Value, error) {
	if _, ok := h.Payload().(pendingFold); !ok {
		return f.Flow.Propagate(h, p)
	}
	if f.body.ax == nil {
		return layers.Value{}, fmt.Errorf("fairtrain: fairvgnn: folded body without a cache for Ã·X")
	}
	if f.body.ax.Payload() == nil {
		ax, err := f.Flow.Propagate(f.in, layers.Hop{})
		if err != nil {
			return layers.Value{}, err
		}
		*f.body.ax = ax
	}
	return f.Flow.Dense(*f.body.ax, f.body.wm, p.Bias, p.Act)
}

// ---------------------------------------------------------------------
// maskRows

// maskRows returns the d × k node m ⊙ w: row j of w scaled by m_j, m a
// 1 × d node (the first weight of a folded view). The gradient with
// respect to w is g with row j scaled by m_j, with respect to m the row
// sums Σ_c g_jc w_jc.
func maskRows(w, m *G.Node) (*G.Node, error) {
	if w == nil || m == nil {
		return nil, fmt.Errorf("fairtrain: maskRows: nil node")
	}
	sw, sm := w.Shape(), m.Shape()
	if len(sw) != 2 || len(sm) != 2 || sm[0] != 1 || sm[1] != sw[0] || w.Dtype() != m.Dtype() || opkit.CheckFloat(w.Dtype()) != nil {
		return nil, fmt.Errorf("fairtrain: maskRows: weight %s and mask %s, want a float d × k matrix and a 1 × d mask of its dtype", opkit.DescribeNode(w), opkit.DescribeNode(m))
	}
	return opkit.Apply(rowMaskSpec, rowMaskOp{d: sw[0], k: sw[1], grad: -1}, w, m)
}

// rowMaskOp holds the parameters of maskRows (grad < 0) or of its
// gradient with respect to input grad (0: the weight, 1: the mask), from
// the inputs (w, m, g).
type rowMaskOp struct {
	d, k int
	grad int
}

var rowMaskSpec = &opkit.Spec[rowMaskOp]{
	ID: "fairmp.fair.MaskRows",
	Name: func(op rowMaskOp) string {
		if op.grad >= 0 {
			return fmt.Sprintf("MaskRowsGrad(%d)", op.grad)
		}
		return fmt.Sprintf("MaskRows(%d×%d)", op.d, op.k)
	},
	Sig: func(op rowMaskOp) opkit.Sig {
		if op.grad < 0 {
			return opkit.Mats(2)
		}
		return opkit.Mats(3)
	},
	Shape: func(op rowMaskOp, in []tensor.Shape) (tensor.Shape, error) {
		want := []tensor.Shape{{op.d, op.k}, {1, op.d}, {op.d, op.k}}
		for k, s := range in {
			if !s.Eq(want[k]) {
				return nil, fmt.Errorf("input %d shape %v, want %v", k, s, want[k])
			}
		}
		if op.grad == 1 {
			return tensor.Shape{1, op.d}, nil
		}
		return tensor.Shape{op.d, op.k}, nil
	},
	Hash: func(op rowMaskOp, h opkit.Hasher) { h.Int(op.d, op.k, op.grad+1) },
	F32:  rowMaskFwd[float32],
	F64:  rowMaskFwd[float64],
	DiffWRT: func(op rowMaskOp, n int) []bool {
		if op.grad >= 0 {
			return make([]bool, n)
		}
		return []bool{true, true}
	},
	Grad: func(o *opkit.Op[rowMaskOp], inputs G.Nodes, _, grad *G.Node) (G.Nodes, error) {
		op := o.P
		if op.grad >= 0 {
			return nil, fmt.Errorf("%v: not differentiable (second-order gradients are not implemented)", o)
		}
		dw, err := o.Apply(rowMaskOp{d: op.d, k: op.k, grad: 0}, inputs[0], inputs[1], grad)
		if err != nil {
			return nil, err
		}
		dm, err := o.Apply(rowMaskOp{d: op.d, k: op.k, grad: 1}, inputs[0], inputs[1], grad)
		if err != nil {
			return nil, err
		}
		return G.Nodes{dw, dm}, nil
	},
}

func rowMaskFwd[T float32 | float64](op rowMaskOp, a opkit.Args[T]) error {
	w, m := a.In[0], a.In[1]
	src := w // the forward pass scales w's rows, the weight's gradient g's
	if op.grad >= 0 {
		src = a.In[2]
	}
	if op.grad == 1 {
		sums := make([]float64, op.d)
		rowDots(sums, w, src)
		putF64(a.Out, sums)
		return nil
	}
	scaleRows(a.Out, src, m)
	return nil
}

// scaleRows writes x with row j scaled by m[j] into out (len(m) rows).
func scaleRows[T float32 | float64](out, x, m []T) {
	k := len(x) / len(m)
	for j, v := range m {
		xr, or := x[j*k:(j+1)*k], out[j*k:(j+1)*k]
		for c := range xr {
			or[c] = xr[c] * v
		}
	}
}

// rowDots writes Σ_c a_jc b_jc into sums[j] (len(sums) rows), in
// float64.
func rowDots[T float32 | float64](sums []float64, a, b []T) {
	k := len(a) / len(sums)
	for j := range sums {
		s := 0.0
		for c := j * k; c < (j+1)*k; c++ {
			s += float64(a[c]) * float64(b[c])
		}
		sums[j] = s
	}
}
