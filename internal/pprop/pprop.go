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
	"hash"
	"math"

	"github.com/chewxy/hm"
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
	return G.ApplyOp(&op{a: a, gamma: gamma, k: k}, x)
}

// op is the forward recurrence (back false: input X) or its adjoint
// (back true: input dY, output dX).
type op struct {
	opkit.Pure
	a     *graph.Matrix
	gamma float64
	k     int
	back  bool
	out   opkit.Buf
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

var (
	_ G.SDOp            = (*op)(nil)
	_ G.UsePreallocDoer = (*op)(nil)
)

func (o *op) Arity() int    { return 1 }
func (o *op) Type() hm.Type { return opkit.FnType(1) }
func (o *op) String() string {
	name := "Propagate"
	if o.back {
		name = "PropagateBack"
	}
	return fmt.Sprintf("%s(A#%d, γ=%g, K=%d)", name, o.a.ID(), o.gamma, o.k)
}
func (o *op) DiffWRT(int) []bool { return []bool{!o.back} }
func (o *op) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	if len(in) != 1 {
		return nil, fmt.Errorf("%v: %d inputs, want 1", o, len(in))
	}
	s, ok := in[0].(tensor.Shape)
	if !ok || len(s) != 2 {
		return nil, fmt.Errorf("%v: input shape %v, want a matrix", o, in[0])
	}
	return s.Clone(), nil
}
func (o *op) WriteHash(h hash.Hash) {
	fmt.Fprint(h, "fairmp.pprop")
	opkit.WriteU64(h, o.a.ID())
	opkit.WriteF64(h, o.gamma)
	opkit.WriteU64(h, uint64(o.k))
	opkit.WriteBool(h, o.back)
}
func (o *op) Hashcode() uint32 { return opkit.Hash32(o.WriteHash) }

// ReleaseBuffers drops the kept buffers and the memo (opkit.Releaser).
func (o *op) ReleaseBuffers() {
	for _, b := range []*opkit.Buf{&o.out, &o.tmp[0], &o.tmp[1], &o.tmp[2], &o.memoIn, &o.memoOut} {
		b.ReleaseBuffers()
	}
	o.memoOK = false
}
func (o *op) Do(inputs ...G.Value) (G.Value, error) {
	return o.UsePreallocDo(nil, inputs...)
}

func (o *op) UsePreallocDo(prealloc G.Value, inputs ...G.Value) (G.Value, error) {
	in, sh, err := opkit.DenseInputs(o, 1, inputs)
	if err != nil {
		return nil, err
	}
	n, c := sh[0][0], sh[0][1]
	if _, cols := o.a.Dims(); n != cols {
		return nil, fmt.Errorf("%v: input shape %v, want %d rows", o, sh[0], cols)
	}
	dt := in[0].Dtype()
	out := o.out.Get(prealloc, dt, n, c)
	if !o.back && o.memoOK && opkit.KeepingBuffers() {
		mi, mo := o.memoIn.Get(nil, dt, n, c), o.memoOut.Get(nil, dt, n, c)
		if sameBits(in[0].Data(), mi.Data()) {
			copyData(out.Data(), mo.Data())
			return out, nil
		}
	}
	t0, t1, t2 := o.tmp[0].Get(nil, dt, n, c), o.tmp[1].Get(nil, dt, n, c), o.tmp[2].Get(nil, dt, n, c)
	switch x := in[0].Data().(type) {
	case []float64:
		run(o, x, out.Data().([]float64), t0.Data().([]float64), t1.Data().([]float64), t2.Data().([]float64), c)
	case []float32:
		run(o, x, out.Data().([]float32), t0.Data().([]float32), t1.Data().([]float32), t2.Data().([]float32), c)
	}
	if !o.back && opkit.KeepingBuffers() {
		copyData(o.memoIn.Get(nil, dt, n, c).Data(), in[0].Data())
		copyData(o.memoOut.Get(nil, dt, n, c).Data(), out.Data())
		o.memoOK = true
	}
	return out, nil
}

// sameBits reports whether two float32 or float64 slices of one type and
// length hold the same bits (NaN equal to itself, −0 not +0).
func sameBits(a, b any) bool {
	switch x := a.(type) {
	case []float32:
		y := b.([]float32)
		if len(x) != len(y) {
			return false
		}
		for i, v := range x {
			if math.Float32bits(v) != math.Float32bits(y[i]) {
				return false
			}
		}
		return true
	case []float64:
		y := b.([]float64)
		if len(x) != len(y) {
			return false
		}
		for i, v := range x {
			if math.Float64bits(v) != math.Float64bits(y[i]) {
				return false
			}
		}
		return true
	}
	return false
}

func copyData(dst, src any) {
	switch d := dst.(type) {
	case []float32:
		copy(d, src.([]float32))
	case []float64:
		copy(d, src.([]float64))
	}
}

func (o *op) SymDiff(inputs G.Nodes, output, grad *G.Node) (G.Nodes, error) {
	if o.back {
		return nil, fmt.Errorf("%v: no second-order gradient", o)
	}
	dx, err := G.ApplyOp(&op{a: o.a.Transpose(), gamma: o.gamma, k: o.k, back: true}, grad)
	if err != nil {
		return nil, err
	}
	return G.Nodes{dx}, nil
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
