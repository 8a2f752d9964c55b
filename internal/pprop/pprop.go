// Package pprop is K steps of personalised propagation as one gorgonia op:
//
//	F₀ = X,  F_k = γ·X + (1−γ)·Ã·F_{k−1},  k = 1..K,
//
// the recurrence of FMP's propagation (γ = 1/(1+λs)) and of APPNP's
// (γ = α). Built from separate nodes it is 3K ops forward (a sparse
// product, a scaling, an addition) and more backward, each allocating
// its output every run; as one op it is K sparse products and K fused
// passes each way, into buffers kept between runs.
//
// The op computes exactly what the separate nodes compute, bit for bit:
// forward, each step is the rounded γ·X plus the rounded (1−γ)·(ÃF)
// (Ã·F summed as graph.Matrix sums it); backward, the gradient with
// respect to X is what gorgonia's reverse mode builds from those nodes:
// with G_K = dY and G_{k−1} = Ãᵀ·((1−γ)·G_k), the sum
// ((G_K + G_{K−1}) + …) + G₁ (gorgonia's ReduceAdd order) scaled by γ,
// plus Ãᵀ·((1−γ)·G₁). So replacing the nodes by the op changes no
// result; the tests check it against the unfused graph bit for bit.
//
// Step (and its row form AggregateRow) is the propagation step itself:
// the op runs it, and so do package fmp's one loop of FMP's K steps (step
// 1) and its per-node Steps, so the step has one definition.
package pprop

import (
	"fmt"
	"math"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/fairmp/fairmp/graph"
	"github.com/fairmp/fairmp/internal/opkit"
	"github.com/fairmp/fairmp/internal/par"
)

// Apply returns the node F_K for x (n × c, float32 or float64) and the
// n × n matrix a. It returns an error for a nil matrix or node, a
// non-float or non-matrix x, x's row count not a's, γ outside [0, 1] or
// k < 1.
func Apply(a *graph.Matrix, x *G.Node, gamma float64, k int) (*G.Node, error) {
	if a == nil || x == nil {
		return nil, fmt.Errorf("pprop: nil matrix or input")
	}
	if err := opkit.CheckFloat(x.Dtype()); err != nil {
		return nil, fmt.Errorf("pprop: input %s: %w", opkit.DescribeNode(x), err)
	}
	r, c := a.Dims()
	if s := x.Shape(); len(s) != 2 || s[0] != c || r != c {
		return nil, fmt.Errorf("pprop: input %s for a %d × %d matrix, want %d rows", opkit.DescribeNode(x), r, c, c)
	}
	if !(gamma >= 0 && gamma <= 1) {
		return nil, fmt.Errorf("pprop: γ = %v, want in [0, 1]", gamma)
	}
	if k < 1 {
		return nil, fmt.Errorf("pprop: K = %d, want ≥ 1", k)
	}
	return opkit.Apply(propSpec, &op{a: a, gamma: gamma, k: k}, x)
}

// op is the parameters of the forward recurrence (propSpec, back false:
// input X) or of its adjoint (propBackSpec, back true: input dY, output
// dX), and the buffers its runs keep.
type op struct {
	a     *graph.Matrix
	gamma float64
	k     int
	back  bool
	tmp   [3]opkit.Buf
	// memo holds the last forward run's input and output (forward op
	// only): a run whose input equals it bit for bit copies the output
	// instead of propagating again. A trainer's evaluation pass and the
	// next training step propagate the same logits when the backbone has
	// no dropout: this saves one of the three propagations of FitTwoStage's
	// epoch.
	memoIn, memoOut opkit.Buf
	memoOK          bool
}

// propSpec is the forward recurrence; its gradient is propBackSpec's op.
var propSpec = &opkit.Spec[*op]{
	ID:    "fairmp.pprop",
	Name:  (*op).String,
	Sig:   func(*op) opkit.Sig { return opkit.Mats(1) },
	Shape: (*op).shape,
	Hash:  (*op).hash,
	F32:   fwd[float32],
	F64:   fwd[float64],
	Grad: func(o *opkit.Op[*op], inputs G.Nodes, output, grad *G.Node) (G.Nodes, error) {
		dx, err := opkit.Apply(propBackSpec, &op{a: o.P.a.Transpose(), gamma: o.P.gamma, k: o.P.k, back: true}, grad)
		if err != nil {
			return nil, err
		}
		return G.Nodes{dx}, nil
	},
	Keep:    true,
	Release: (*op).release,
}

// propBackSpec is the adjoint recurrence, never differentiated (no
// second-order gradient).
var propBackSpec = &opkit.Spec[*op]{
	ID:      "fairmp.pprop.Back",
	Name:    (*op).String,
	Sig:     func(*op) opkit.Sig { return opkit.Mats(1) },
	Shape:   (*op).shape,
	Hash:    (*op).hash,
	F32:     fwd[float32],
	F64:     fwd[float64],
	Keep:    true,
	Release: (*op).release,
}

func (o *op) String() string {
	name := "Propagate"
	if o.back {
		name = "PropagateBack"
	}
	return fmt.Sprintf("%s(A#%d, γ=%g, K=%d)", name, o.a.ID(), o.gamma, o.k)
}

func (o *op) shape(in []tensor.Shape) (tensor.Shape, error) {
	if _, cols := o.a.Dims(); in[0][0] != cols {
		return nil, fmt.Errorf("input shape %v, want %d rows", in[0], cols)
	}
	return in[0], nil
}

func (o *op) hash(h opkit.Hasher) {
	h.U64(o.a.ID())
	h.F64(o.gamma)
	h.Int(o.k)
	h.Bool(o.back)
}

// release drops the kept scratch buffers and the memo.
func (o *op) release() {
	for _, b := range []*opkit.Buf{&o.tmp[0], &o.tmp[1], &o.tmp[2], &o.memoIn, &o.memoOut} {
		b.ReleaseBuffers()
	}
	o.memoOK = false
}

// fwd runs the recurrence (or its adjoint) on a.In[0] into a.Out, or
// copies the memo's output when the input is the memo's. The scratch
// and the memo are kept only when the op keeps buffers.
func fwd[T float32 | float64](o *op, a opkit.Args[T]) error {
	n, c := a.Shape[0][0], a.Shape[0][1]
	x, out := a.In[0], a.Out
	dt := a.OutDense.Dtype()
	keep := a.KeepBuffers
	if !o.back && o.memoOK && keep {
		mi, mo := o.memoIn.Get(nil, dt, n, c), o.memoOut.Get(nil, dt, n, c)
		if sameBits(x, mi.Data().([]T)) {
			copy(out, mo.Data().([]T))
			return nil
		}
	}
	scratch := func(b *opkit.Buf) []T {
		if keep {
			return b.Get(nil, dt, n, c).Data().([]T)
		}
		return make([]T, n*c)
	}
	run(o, x, out, scratch(&o.tmp[0]), scratch(&o.tmp[1]), scratch(&o.tmp[2]), c)
	if !o.back && keep {
		copy(o.memoIn.Get(nil, dt, n, c).Data().([]T), x)
		copy(o.memoOut.Get(nil, dt, n, c).Data().([]T), out)
		o.memoOK = true
	}
	return nil
}

// sameBits reports whether two slices hold the same bits (NaN equal to
// itself, −0 not +0).
func sameBits[T float32 | float64](a, b []T) bool {
	if len(a) != len(b) {
		return false
	}
	switch x := any(a).(type) {
	case []float32:
		y := any(b).([]float32)
		for i, v := range x {
			if math.Float32bits(v) != math.Float32bits(y[i]) {
				return false
			}
		}
	case []float64:
		y := any(b).([]float64)
		for i, v := range x {
			if math.Float64bits(v) != math.Float64bits(y[i]) {
				return false
			}
		}
	}
	return true
}

// Step computes step 1 of FMP and one step of the recurrence,
// xagg = γ·x + (1−γ)·(a·f) (x, f and xagg n × c, row-major), and calls
// then(lo, hi), when not nil, on each block of rows of xagg right after
// computing it, while its rows are in cache (graph.Matrix.MulDenseThen32/64:
// blocks are disjoint, cover every row once and run concurrently). It is
// the one definition of the propagation step: this package's op and
// package fmp's loop both call it. xagg must be distinct from f and x.
func Step[T float32 | float64](a *graph.Matrix, xagg, f, x []T, c int, gamma float64, then func(lo, hi int)) {
	block := func(lo, hi int) {
		for i := lo; i < hi; i++ {
			AggregateRow(xagg[i*c:(i+1)*c:(i+1)*c], x[i*c:(i+1)*c:(i+1)*c], xagg[i*c:(i+1)*c:(i+1)*c], gamma)
		}
		if then != nil {
			then(lo, hi)
		}
	}
	switch o := any(xagg).(type) {
	case []float64:
		a.MulDenseThen64(o, any(f).([]float64), c, block)
	case []float32:
		a.MulDenseThen32(o, any(f).([]float32), c, block)
	}
}

// AggregateRow writes one node's step, out = γ·x + (1−γ)·af (af: its row
// of a·f), into out, which may be x or af. Each product is rounded to the
// element type before the sum (explicit conversions keep the compiler
// from fusing a multiply and an add).
func AggregateRow[T float32 | float64](out, x, af []T, gamma float64) {
	g, cm := T(gamma), T(1-gamma)
	for j, v := range af {
		out[j] = T(x[j]*g) + T(v*cm)
	}
}

// mulThen computes out = a·x and calls then on each block of rows of out
// right after the product computes it (graph.Matrix.MulDenseThen32/64).
func mulThen[T float32 | float64](a *graph.Matrix, out, x []T, c int, then func(lo, hi int)) {
	switch o := any(out).(type) {
	case []float64:
		a.MulDenseThen64(o, any(x).([]float64), c, then)
	case []float32:
		a.MulDenseThen32(o, any(x).([]float32), c, then)
	}
}

// run computes the forward recurrence or its adjoint into out, with t0,
// t1 and t2 as scratch (out and the t's distinct from x and from each
// other). The element-wise steps run on each block of rows right after
// the product computes it.
func run[T float32 | float64](o *op, x, out, t0, t1, t2 []T, c int) {
	g, cm := T(o.gamma), T(1-o.gamma)
	if !o.back {
		// F_k = γX + (1−γ)(ÃF_{k−1}), the last step written into out.
		prev := x
		for s := 1; s <= o.k; s++ {
			dst := t0
			if s == o.k {
				dst = out
			} else if s%2 == 0 {
				dst = t1
			}
			Step(o.a, dst, prev, x, c, o.gamma, nil)
			prev = dst
		}
		return
	}
	// dY = x. G_K = dY; for s = K..1: t0 = (1−γ)G_s, t1 = Ãᵀt0, which
	// is G_{s−1} for s > 1 (added to acc = out, which starts at G_K, and
	// scaled into t2, the next step's t0) and the product's share of dX
	// for s = 1: dX = γ·acc + t1.
	copy(out, x)
	par.Split(len(x), func(lo, hi int) {
		src, d := x[lo:hi], t0[lo:hi]
		for i, v := range src {
			d[i] = T(v * cm)
		}
	})
	for s := o.k; s >= 1; s-- {
		last := s == 1
		mulThen(o.a, t1, t0, c, func(lo, hi int) {
			acc, src, next := out[lo*c:hi*c], t1[lo*c:hi*c], t2[lo*c:hi*c]
			src, next = src[:len(acc)], next[:len(acc)]
			if last {
				for i, v := range src {
					acc[i] = T(acc[i]*g) + v
				}
				return
			}
			for i, v := range src {
				acc[i] += v
				next[i] = T(v * cm)
			}
		})
		t0, t2 = t2, t0
	}
}
