package fmp

import (
	"fmt"
	"hash"
	"math"

	"github.com/chewxy/hm"
	"github.com/fairmp/fairmp/internal/opkit"
	"github.com/fairmp/fairmp/layers"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// FairGrad returns the node ∇(F, u) = U ⊙ S − rowsum(U ⊙ S) ⊙ S, with
// S = SF(F) the row softmax of f (n × c) and U = Δsᵀu for u (R × c, R =
// ds.Rows()): the gradient of ⟨Δs·SF(F), u⟩ with respect to F (Theorem 1
// of the paper), computed in O(n c). Its gradients with respect to F and u
// are custom ops of the same softmax-Jacobian form (see the package doc),
// so it can sit inside a trained graph.
//
// FairGrad returns an error if f or u is not a float32/float64 matrix, if
// their dtypes differ, or if their shapes do not match ds.
func FairGrad(f, u *G.Node, ds *DeltaS) (*G.Node, error) {
	if err := checkFU(f, u, ds, "FairGrad"); err != nil {
		return nil, err
	}
	return G.ApplyOp(&gradOp{ds: ds, scale: 1, temp: 1}, f, u)
}

// GroupGap returns the node Δs·SF(F) (R × c): for the binary Δs, the
// difference of the groups' mean predicted probability of each class
// (group 1 minus group 0); for the per-group Δs, each group's mean minus
// the mean over known nodes. Its gradient with respect to F is
// FairGrad(F, dGap).
//
// GroupGap returns an error if f is not an n × c float32/float64 matrix
// with n = ds.N().
func GroupGap(f *G.Node, ds *DeltaS) (*G.Node, error) {
	if err := checkF(f, ds, "GroupGap"); err != nil {
		return nil, err
	}
	return G.ApplyOp(&gapOp{ds: ds, scale: 1, temp: 1}, f)
}

// ProjectLinf returns sign(x) ⊙ min(|x|, r), the projection of x onto the
// l∞ ball of radius r (entry-wise clipping to [−r, r]). Its gradient passes
// the upstream gradient where |x| < r and is zero where |x| ≥ r: at the
// boundary |x| = r the entry is treated as clipped (the one-sided
// derivative from outside the ball), which makes r = 0 give an exactly
// zero gradient, as the constant output 0 requires.
//
// ProjectLinf returns an error if x is not a float32/float64 matrix or if r
// is negative, NaN or infinite.
func ProjectLinf(x *G.Node, r float64) (*G.Node, error) {
	if err := checkNode(x, "ProjectLinf", "input"); err != nil {
		return nil, err
	}
	if !(r >= 0) || math.IsInf(r, 0) {
		return nil, fmt.Errorf("fmp: ProjectLinf: radius %v, want a finite r ≥ 0", r)
	}
	return G.ApplyOp(&projOp{r: r}, x)
}

func checkNode(x *G.Node, fn, what string) error {
	if x == nil {
		return fmt.Errorf("fmp: %s: nil %s node", fn, what)
	}
	if err := opkit.CheckFloat(x.Dtype()); err != nil {
		return fmt.Errorf("fmp: %s: %s %q (node %d): %w", fn, what, x.Name(), x.ID(), err)
	}
	if len(x.Shape()) != 2 {
		return fmt.Errorf("fmp: %s: %s %q (node %d) has shape %v, want a matrix", fn, what, x.Name(), x.ID(), x.Shape())
	}
	return nil
}

func checkF(f *G.Node, ds *DeltaS, fn string) error {
	if ds == nil {
		return fmt.Errorf("fmp: %s: nil DeltaS", fn)
	}
	if err := checkNode(f, fn, "F"); err != nil {
		return err
	}
	if f.Shape()[0] != ds.N() {
		return fmt.Errorf("fmp: %s: F %q (node %d) has %d rows, want %d (the nodes of Δs)", fn, f.Name(), f.ID(), f.Shape()[0], ds.N())
	}
	return nil
}

func checkFU(f, u *G.Node, ds *DeltaS, fn string) error {
	if err := checkF(f, ds, fn); err != nil {
		return err
	}
	if err := checkNode(u, fn, "u"); err != nil {
		return err
	}
	if u.Dtype() != f.Dtype() {
		return fmt.Errorf("fmp: %s: u %q (node %d) is %v, F is %v, want the same dtype", fn, u.Name(), u.ID(), u.Dtype(), f.Dtype())
	}
	if u.Shape()[0] != ds.Rows() || u.Shape()[1] != f.Shape()[1] {
		return fmt.Errorf("fmp: %s: u %q (node %d) has shape %v, want (%d, %d) (Δs rows × F columns)", fn, u.Name(), u.ID(), u.Shape(), ds.Rows(), f.Shape()[1])
	}
	return nil
}

// ---------------------------------------------------------------------------
// gradOp: scale · ∇_τ(F, u), the gradient of ⟨Δs SF(F/τ), u⟩ with
// respect to F: (1/τ)(U ⊙ S − rowsum(U ⊙ S) ⊙ S), S = SF(F/τ).

type gradOp struct {
	// sm keeps the softmax of the first input, shared with the ops
	// SymDiff builds on the same input (nil: computed per call).
	sm        *softmaxCache
	opkit.Buf // the output, kept between runs
	opkit.Pure
	ds        *DeltaS
	scale     float64
	temp      float64 // τ > 0
	constDual bool    // u is treated as a constant by the backward pass
	noCache   bool    // SymDiff shares no softmax cache (Layer.noSoftmaxCache)
}

var (
	_ G.SDOp            = (*gradOp)(nil)
	_ G.UsePreallocDoer = (*gradOp)(nil)
)

func (op *gradOp) Arity() int    { return 2 }
func (op *gradOp) Type() hm.Type { return opkit.FnType(2) }
func (op *gradOp) String() string {
	return fmt.Sprintf("FairGrad(Δs#%d, %g, τ=%g, constDual=%v)", op.ds.ID(), op.scale, op.temp, op.constDual)
}
func (op *gradOp) DiffWRT(int) []bool { return []bool{true, !op.constDual} }
func (op *gradOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	s, err := opkit.InputShapes(in, 2, "FairGrad")
	if err != nil {
		return nil, err
	}
	return s[0].Clone(), nil
}
func (op *gradOp) WriteHash(h hash.Hash) {
	fmt.Fprint(h, "fairmp.fmp.FairGrad")
	opkit.WriteU64(h, op.ds.ID())
	opkit.WriteF64(h, op.scale)
	opkit.WriteF64(h, op.temp)
	opkit.WriteBool(h, op.constDual)
}
func (op *gradOp) Hashcode() uint32 { return opkit.Hash32(op.WriteHash) }
func (op *gradOp) Do(inputs ...G.Value) (G.Value, error) {
	return op.UsePreallocDo(nil, inputs...)
}
func (op *gradOp) UsePreallocDo(prealloc G.Value, inputs ...G.Value) (G.Value, error) {
	in, sh, err := opkit.DenseInputs(op, 2, inputs)
	if err != nil {
		return nil, err
	}
	n, c := sh[0][0], sh[0][1]
	if n != op.ds.N() || sh[1] != [2]int{op.ds.Rows(), c} {
		return nil, fmt.Errorf("%v: shapes %v and %v, want (%d, c) and (%d, c)", op, sh[0], sh[1], op.ds.N(), op.ds.Rows())
	}
	out := op.Get(prealloc, in[0].Dtype(), n, c)
	if zeroDual(in[1]) {
		// ∇(F, 0) = 0 exactly: the InferenceOnly mode's training passes
		// and the first step skip the softmax.
		out.Zero()
		return out, nil
	}
	switch f := in[0].Data().(type) {
	case []float64:
		gradKernel(op.ds.d64, op.ds.rows, n, f, in[1].Data().([]float64), out.Data().([]float64), c, op.scale/op.temp, 1/op.temp, get(op.sm, f, c, 1/op.temp))
	case []float32:
		gradKernel(op.ds.d64, op.ds.rows, n, f, in[1].Data().([]float32), out.Data().([]float32), c, op.scale/op.temp, 1/op.temp, get(op.sm, f, c, 1/op.temp))
	}
	return out, nil
}
func (op *gradOp) SymDiff(inputs G.Nodes, output, grad *G.Node) (G.Nodes, error) {
	if len(inputs) != 2 {
		return nil, fmt.Errorf("%v: SymDiff with %d inputs, want 2", op, len(inputs))
	}
	if op.sm == nil && !op.noCache {
		op.sm = &softmaxCache{}
	}
	df, err := G.ApplyOp(&gradBackOp{ds: op.ds, scale: op.scale, temp: op.temp, sm: op.sm}, inputs[0], inputs[1], grad)
	if err != nil {
		return nil, err
	}
	if op.constDual {
		return G.Nodes{df, nil}, nil
	}
	du, err := G.ApplyOp(&gapOp{ds: op.ds, scale: op.scale, temp: op.temp, jvp: true, sm: op.sm}, inputs[0], grad)
	if err != nil {
		return nil, err
	}
	return G.Nodes{df, du}, nil
}

// ---------------------------------------------------------------------------
// gradBackOp: the gradient of ⟨W, scale·∇(F, u)⟩ with respect to F.

type gradBackOp struct {
	opkit.NoDiff // never differentiated
	// sm keeps the softmax of the first input, shared with the ops
	// SymDiff builds on the same input (nil: computed per call).
	sm        *softmaxCache
	opkit.Buf // the output, kept between runs
	opkit.Pure
	ds    *DeltaS
	scale float64
	temp  float64
}

var _ G.UsePreallocDoer = (*gradBackOp)(nil)

func (op *gradBackOp) Arity() int    { return 3 }
func (op *gradBackOp) Type() hm.Type { return opkit.FnType(3) }
func (op *gradBackOp) String() string {
	return fmt.Sprintf("FairGradBackF(Δs#%d, %g, τ=%g)", op.ds.ID(), op.scale, op.temp)
}
func (op *gradBackOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	s, err := opkit.InputShapes(in, 3, "FairGradBackF")
	if err != nil {
		return nil, err
	}
	return s[0].Clone(), nil
}
func (op *gradBackOp) WriteHash(h hash.Hash) {
	fmt.Fprint(h, "fairmp.fmp.FairGradBackF")
	opkit.WriteU64(h, op.ds.ID())
	opkit.WriteF64(h, op.scale)
	opkit.WriteF64(h, op.temp)
}
func (op *gradBackOp) Hashcode() uint32 { return opkit.Hash32(op.WriteHash) }
func (op *gradBackOp) Do(inputs ...G.Value) (G.Value, error) {
	return op.UsePreallocDo(nil, inputs...)
}
func (op *gradBackOp) UsePreallocDo(prealloc G.Value, inputs ...G.Value) (G.Value, error) {
	in, sh, err := opkit.DenseInputs(op, 3, inputs)
	if err != nil {
		return nil, err
	}
	n, c := sh[0][0], sh[0][1]
	if n != op.ds.N() || sh[1] != [2]int{op.ds.Rows(), c} || sh[2] != sh[0] {
		return nil, fmt.Errorf("%v: shapes %v, %v, %v, want (%d, c), (%d, c), (%d, c)", op, sh[0], sh[1], sh[2], op.ds.N(), op.ds.Rows(), op.ds.N())
	}
	out := op.Get(prealloc, in[0].Dtype(), n, c)
	if zeroDual(in[1]) {
		// Linear in u: zero for u = 0.
		out.Zero()
		return out, nil
	}
	switch f := in[0].Data().(type) {
	case []float64:
		gradBackKernel(op.ds.d64, op.ds.rows, n, f, in[1].Data().([]float64), in[2].Data().([]float64), out.Data().([]float64), c, op.scale/(op.temp*op.temp), 1/op.temp, get(op.sm, f, c, 1/op.temp))
	case []float32:
		gradBackKernel(op.ds.d64, op.ds.rows, n, f, in[1].Data().([]float32), in[2].Data().([]float32), out.Data().([]float32), c, op.scale/(op.temp*op.temp), 1/op.temp, get(op.sm, f, c, 1/op.temp))
	}
	return out, nil
}

// ---------------------------------------------------------------------------
// gapOp: scale · Δs·SF(F/τ) (jvp = false, input F) or
// (scale/τ) · Δs·(J(S) W) (jvp = true, inputs F and W; the gradient of
// FairGrad with respect to u).

type gapOp struct {
	// sm keeps the softmax of the first input, shared with the ops
	// SymDiff builds on the same input (nil: computed per call).
	sm        *softmaxCache
	opkit.Buf // the output, kept between runs
	opkit.Pure
	ds    *DeltaS
	scale float64
	temp  float64
	jvp   bool
	// noCache: SymDiff shares no softmax cache (Layer.noSoftmaxCache).
	noCache bool
	// phase, set in the InferenceOnly mode only, makes the output zero
	// while the phase is training: the projection that follows discards
	// it then (u ≡ 0), so the softmax need not be computed.
	phase *layers.Phase
}

var (
	_ G.SDOp            = (*gapOp)(nil)
	_ G.UsePreallocDoer = (*gapOp)(nil)
)

func (op *gapOp) Arity() int {
	if op.jvp {
		return 2
	}
	return 1
}
func (op *gapOp) Type() hm.Type { return opkit.FnType(op.Arity()) }
func (op *gapOp) String() string {
	if op.jvp {
		return fmt.Sprintf("GroupGapJVP(Δs#%d, %g, τ=%g)", op.ds.ID(), op.scale, op.temp)
	}
	if op.phase != nil {
		return fmt.Sprintf("GroupGap(Δs#%d, %g, τ=%g, off while training %p)", op.ds.ID(), op.scale, op.temp, op.phase)
	}
	return fmt.Sprintf("GroupGap(Δs#%d, %g, τ=%g)", op.ds.ID(), op.scale, op.temp)
}
func (op *gapOp) DiffWRT(int) []bool {
	if op.jvp {
		return []bool{false, false}
	}
	return []bool{true}
}
func (op *gapOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	s, err := opkit.InputShapes(in, op.Arity(), op.String())
	if err != nil {
		return nil, err
	}
	return tensor.Shape{op.ds.Rows(), s[0][1]}, nil
}
func (op *gapOp) WriteHash(h hash.Hash) {
	fmt.Fprint(h, "fairmp.fmp.GroupGap")
	opkit.WriteU64(h, op.ds.ID())
	opkit.WriteF64(h, op.scale)
	opkit.WriteF64(h, op.temp)
	opkit.WriteBool(h, op.jvp)
	fmt.Fprintf(h, "%p", op.phase)
}
func (op *gapOp) Hashcode() uint32 { return opkit.Hash32(op.WriteHash) }
func (op *gapOp) Do(inputs ...G.Value) (G.Value, error) {
	return op.UsePreallocDo(nil, inputs...)
}
func (op *gapOp) UsePreallocDo(prealloc G.Value, inputs ...G.Value) (G.Value, error) {
	in, sh, err := opkit.DenseInputs(op, op.Arity(), inputs)
	if err != nil {
		return nil, err
	}
	n, c := sh[0][0], sh[0][1]
	if n != op.ds.N() || (op.jvp && sh[1] != sh[0]) {
		return nil, fmt.Errorf("%v: input shapes %v, want (%d, c)", op, sh, op.ds.N())
	}
	out := op.Get(prealloc, in[0].Dtype(), op.ds.Rows(), c)
	if op.phase.Training() {
		out.Zero()
		return out, nil
	}
	scale := op.scale
	if op.jvp {
		scale /= op.temp
	}
	switch f := in[0].Data().(type) {
	case []float64:
		var w []float64
		if op.jvp {
			w = in[1].Data().([]float64)
		}
		gapKernel(op.ds.d64, op.ds.rows, n, f, w, out.Data().([]float64), c, scale, 1/op.temp, get(op.sm, f, c, 1/op.temp))
	case []float32:
		var w []float32
		if op.jvp {
			w = in[1].Data().([]float32)
		}
		gapKernel(op.ds.d64, op.ds.rows, n, f, w, out.Data().([]float32), c, scale, 1/op.temp, get(op.sm, f, c, 1/op.temp))
	}
	return out, nil
}
func (op *gapOp) SymDiff(inputs G.Nodes, output, grad *G.Node) (G.Nodes, error) {
	if op.jvp {
		return nil, fmt.Errorf("%v: second-order gradients are not implemented", op)
	}
	if len(inputs) != 1 {
		return nil, fmt.Errorf("%v: SymDiff with %d inputs, want 1", op, len(inputs))
	}
	// d/dF ⟨dY, scale·Δs SF(F/τ)⟩ = scale · ∇_τ(F, dY).
	if op.sm == nil && !op.noCache {
		op.sm = &softmaxCache{}
	}
	df, err := G.ApplyOp(&gradOp{ds: op.ds, scale: op.scale, temp: op.temp, sm: op.sm}, inputs[0], grad)
	if err != nil {
		return nil, err
	}
	return G.Nodes{df}, nil
}

// ---------------------------------------------------------------------------
// projOp: sign(x) ⊙ min(|x|, r); with a phase, the output is zero while
// the phase is training (the InferenceOnly training mode).

type projOp struct {
	opkit.Buf // the output, kept between runs
	opkit.Pure
	r     float64
	phase *layers.Phase // non-nil: zero output (and gradient) while training
	mask  bool          // the backward mask op: inputs x and dY
}

var (
	_ G.SDOp            = (*projOp)(nil)
	_ G.UsePreallocDoer = (*projOp)(nil)
)

func (op *projOp) Arity() int {
	if op.mask {
		return 2
	}
	return 1
}
func (op *projOp) Type() hm.Type { return opkit.FnType(op.Arity()) }
func (op *projOp) String() string {
	name := "ProjectLinf"
	if op.mask {
		name = "ProjectLinfMask"
	}
	if op.phase != nil {
		return fmt.Sprintf("%s(r=%g, off while training %p)", name, op.r, op.phase)
	}
	return fmt.Sprintf("%s(r=%g)", name, op.r)
}
func (op *projOp) DiffWRT(int) []bool {
	if op.mask {
		return []bool{false, false}
	}
	return []bool{true}
}
func (op *projOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	s, err := opkit.InputShapes(in, op.Arity(), op.String())
	if err != nil {
		return nil, err
	}
	return s[0].Clone(), nil
}
func (op *projOp) WriteHash(h hash.Hash) {
	fmt.Fprint(h, op.String())
	opkit.WriteF64(h, op.r)
	opkit.WriteBool(h, op.mask)
	opkit.WriteBool(h, op.phase != nil)
}
func (op *projOp) Hashcode() uint32 { return opkit.Hash32(op.WriteHash) }
func (op *projOp) Do(inputs ...G.Value) (G.Value, error) {
	return op.UsePreallocDo(nil, inputs...)
}
func (op *projOp) UsePreallocDo(prealloc G.Value, inputs ...G.Value) (G.Value, error) {
	in, sh, err := opkit.DenseInputs(op, op.Arity(), inputs)
	if err != nil {
		return nil, err
	}
	if op.mask && sh[1] != sh[0] {
		return nil, fmt.Errorf("%v: shapes %v and %v differ", op, sh[0], sh[1])
	}
	out := op.Get(prealloc, in[0].Dtype(), sh[0][0], sh[0][1])
	if op.phase.Training() {
		// Only set for the InferenceOnly mode: u ≡ 0 while training.
		out.Zero()
		return out, nil
	}
	switch x := in[0].Data().(type) {
	case []float64:
		if op.mask {
			projMaskKernel(x, in[1].Data().([]float64), out.Data().([]float64), op.r)
		} else {
			projKernel(x, out.Data().([]float64), op.r)
		}
	case []float32:
		if op.mask {
			projMaskKernel(x, in[1].Data().([]float32), out.Data().([]float32), op.r)
		} else {
			projKernel(x, out.Data().([]float32), op.r)
		}
	}
	return out, nil
}
func (op *projOp) SymDiff(inputs G.Nodes, output, grad *G.Node) (G.Nodes, error) {
	if op.mask {
		return nil, fmt.Errorf("%v: second-order gradients are not implemented", op)
	}
	if len(inputs) != 1 {
		return nil, fmt.Errorf("%v: SymDiff with %d inputs, want 1", op, len(inputs))
	}
	dx, err := G.ApplyOp(&projOp{r: op.r, phase: op.phase, mask: true}, inputs[0], grad)
	if err != nil {
		return nil, err
	}
	return G.Nodes{dx}, nil
}

// zeroDual reports whether the dual u (a small rows × c matrix) is all
// zeros.
func zeroDual(u *tensor.Dense) bool {
	switch d := u.Data().(type) {
	case []float64:
		return allZero(d)
	case []float32:
		return allZero(d)
	}
	return false
}

// ReleaseBuffers drops the kept output and softmax (opkit.Releaser).
func (op *gradOp) ReleaseBuffers() { op.Buf.ReleaseBuffers(); op.sm.release() }

// ReleaseBuffers drops the kept output and softmax (opkit.Releaser).
func (op *gradBackOp) ReleaseBuffers() { op.Buf.ReleaseBuffers(); op.sm.release() }

// ReleaseBuffers drops the kept output and softmax (opkit.Releaser).
func (op *gapOp) ReleaseBuffers() { op.Buf.ReleaseBuffers(); op.sm.release() }
