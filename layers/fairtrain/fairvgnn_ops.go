package fairtrain

import (
	"fmt"
	"hash"
	"math"

	"github.com/chewxy/hm"
	"github.com/fairmp/fairmp/internal/opkit"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// The ops of FairVGNN: the features seen through a channel mask, the
// generator's keep probabilities (a relaxed Bernoulli sample per channel)
// and the squared distance of the discriminator's probabilities from ½.
// Each has a gradient op of its own, checked by finite differences in
// float32 and float64.

// ---------------------------------------------------------------------
// maskColumns

// maskColumns returns the n × d node x ⊙ m: column j of x scaled by
// m_j, m a 1 × d node (FairVGNN's view of the features). The gradient
// with respect to x is g ⊙ m (each row scaled as in the forward pass),
// with respect to m the column sums Σ_i g_ij x_ij.
func maskColumns(x, m *G.Node) (*G.Node, error) {
	if x == nil || m == nil {
		return nil, fmt.Errorf("fairtrain: maskColumns: nil node")
	}
	sx, sm := x.Shape(), m.Shape()
	if len(sx) != 2 || len(sm) != 2 || sm[0] != 1 || sm[1] != sx[1] || x.Dtype() != m.Dtype() || opkit.CheckFloat(x.Dtype()) != nil {
		return nil, fmt.Errorf("fairtrain: maskColumns: features %s and mask %s, want a float n × d matrix and a 1 × d mask of its dtype", opkit.DescribeNode(x), opkit.DescribeNode(m))
	}
	return G.ApplyOp(&colMaskOp{n: sx[0], d: sx[1]}, x, m)
}

type colMaskOp struct {
	opkit.Buf // the output, kept between runs
	opkit.Pure
	n, d int
}

func (op *colMaskOp) Arity() int                { return 2 }
func (op *colMaskOp) Type() hm.Type             { return opkit.FnType(2) }
func (op *colMaskOp) DiffWRT(inputs int) []bool { return []bool{true, true} }
func (op *colMaskOp) String() string            { return fmt.Sprintf("MaskColumns(%d×%d)", op.n, op.d) }
func (op *colMaskOp) InferShape(...G.DimSizer) (tensor.Shape, error) {
	return tensor.Shape{op.n, op.d}, nil
}
func (op *colMaskOp) WriteHash(h hash.Hash) {
	fmt.Fprint(h, "fairmp.fair.MaskColumns")
	opkit.WriteU64(h, uint64(op.n))
	opkit.WriteU64(h, uint64(op.d))
}
func (op *colMaskOp) Hashcode() uint32 { return opkit.Hash32(op.WriteHash) }

func (op *colMaskOp) Do(inputs ...G.Value) (G.Value, error) {
	if len(inputs) != 2 {
		return nil, fmt.Errorf("%v: %d inputs, want 2", op, len(inputs))
	}
	x, err := opkit.CheckMatrix(op, inputs[0], op.n, op.d)
	if err != nil {
		return nil, err
	}
	m, err := opkit.CheckMatrix(op, inputs[1], 1, op.d)
	if err != nil {
		return nil, err
	}
	if x.Dtype() != m.Dtype() {
		return nil, fmt.Errorf("%v: features %v, mask %v: want one dtype", op, x.Dtype(), m.Dtype())
	}
	out := op.Get(nil, x.Dtype(), op.n, op.d)
	switch o := out.Data().(type) {
	case []float64:
		scaleColumns(o, x.Data().([]float64), m.Data().([]float64))
	case []float32:
		scaleColumns(o, x.Data().([]float32), m.Data().([]float32))
	}
	return out, nil
}

// scaleColumns writes x with column j scaled by m[j] into out (rows of
// len(m)).
func scaleColumns[T float32 | float64](out, x, m []T) {
	d := len(m)
	for i := 0; i < len(x); i += d {
		xr, or := x[i:i+d], out[i:i+d]
		for j, v := range m {
			or[j] = xr[j] * v
		}
	}
}

func (op *colMaskOp) SymDiff(inputs G.Nodes, output, grad *G.Node) (G.Nodes, error) {
	dx, err := G.ApplyOp(&colMaskGradOp{f: op, wrt: 0}, inputs[0], inputs[1], grad)
	if err != nil {
		return nil, err
	}
	dm, err := G.ApplyOp(&colMaskGradOp{f: op, wrt: 1}, inputs[0], inputs[1], grad)
	if err != nil {
		return nil, err
	}
	return G.Nodes{dx, dm}, nil
}

// colMaskGradOp is maskColumns' gradient with respect to input wrt (0:
// the features, 1: the mask), from the inputs (x, m, g).
type colMaskGradOp struct {
	opkit.NoDiff // never differentiated
	opkit.Pure
	f   *colMaskOp
	wrt int
}

func (op *colMaskGradOp) Arity() int     { return 3 }
func (op *colMaskGradOp) Type() hm.Type  { return opkit.FnType(3) }
func (op *colMaskGradOp) String() string { return fmt.Sprintf("MaskColumnsGrad(%d)", op.wrt) }
func (op *colMaskGradOp) InferShape(...G.DimSizer) (tensor.Shape, error) {
	if op.wrt == 0 {
		return tensor.Shape{op.f.n, op.f.d}, nil
	}
	return tensor.Shape{1, op.f.d}, nil
}
func (op *colMaskGradOp) WriteHash(h hash.Hash) {
	fmt.Fprint(h, "fairmp.fair.MaskColumnsGrad")
	opkit.WriteU64(h, uint64(op.wrt))
	op.f.WriteHash(h)
}
func (op *colMaskGradOp) Hashcode() uint32 { return opkit.Hash32(op.WriteHash) }
func (op *colMaskGradOp) Do(inputs ...G.Value) (G.Value, error) {
	if len(inputs) != 3 {
		return nil, fmt.Errorf("%v: %d inputs, want 3", op, len(inputs))
	}
	n, d := op.f.n, op.f.d
	x, err := opkit.CheckMatrix(op, inputs[0], n, d)
	if err != nil {
		return nil, err
	}
	m, err := opkit.CheckMatrix(op, inputs[1], 1, d)
	if err != nil {
		return nil, err
	}
	g, err := opkit.CheckMatrix(op, inputs[2], n, d)
	if err != nil {
		return nil, err
	}
	if x.Dtype() != m.Dtype() || x.Dtype() != g.Dtype() {
		return nil, fmt.Errorf("%v: inputs of dtypes %v, %v, %v: want one dtype", op, x.Dtype(), m.Dtype(), g.Dtype())
	}
	if op.wrt == 0 {
		out := opkit.Alloc(x.Dtype(), n, d)
		switch o := out.Data().(type) {
		case []float64:
			scaleColumns(o, g.Data().([]float64), m.Data().([]float64))
		case []float32:
			scaleColumns(o, g.Data().([]float32), m.Data().([]float32))
		}
		return out, nil
	}
	sums := make([]float64, d)
	switch xs := x.Data().(type) {
	case []float64:
		columnDots(sums, xs, g.Data().([]float64))
	case []float32:
		columnDots(sums, xs, g.Data().([]float32))
	}
	return denseOf(x.Dtype(), sums, 1, d), nil
}

// columnDots adds Σ_i a_ij b_ij to sums[j] (rows of len(sums)), in
// float64.
func columnDots[T float32 | float64](sums []float64, a, b []T) {
	d := len(sums)
	for i := 0; i < len(a); i += d {
		for j := range sums {
			sums[j] += float64(a[i+j]) * float64(b[i+j])
		}
	}
}

// ---------------------------------------------------------------------
// keepProbs

// keepProb returns σ((θ0 − θ1 + l)·invT), the probability of keeping a
// channel whose generator logits are θ0 (keep) and θ1 (drop) under
// logistic noise l at temperature 1/invT: the first component of
// softmax((θ + g)/τ) for two Gumbel draws g, whose difference l is a
// logistic draw (Gumbel-softmax with two categories).
func keepProb(t0, t1, l, invT float64) float64 { return sigmoid((t0 - t1 + l) * invT) }

// keepProbs returns the 1 × d node of keep probabilities of the d × 2
// generator logits theta: σ((θ_j0 − θ_j1 + l_j)/τ) with the logistic noise
// l (a 1 × d node) when noise is given, σ(θ_j0 − θ_j1) without (the
// expected value of the hard mask, whatever τ). The gradient with respect
// to θ_j0 is g_j·p_j(1 − p_j)/τ and with respect to θ_j1 its opposite;
// the noise gets none.
func keepProbs(theta, noise *G.Node, tau float64) (*G.Node, error) {
	if theta == nil {
		return nil, fmt.Errorf("fairtrain: keepProbs: nil generator node")
	}
	s := theta.Shape()
	if len(s) != 2 || s[1] != 2 || opkit.CheckFloat(theta.Dtype()) != nil {
		return nil, fmt.Errorf("fairtrain: keepProbs: generator logits %s, want a float d × 2 matrix", opkit.DescribeNode(theta))
	}
	if !(tau > 0) || math.IsInf(tau, 0) {
		return nil, fmt.Errorf("fairtrain: keepProbs: temperature %v, want a finite τ > 0", tau)
	}
	op := &keepOp{d: s[0], invT: 1 / tau}
	if noise == nil {
		op.invT = 1
		return G.ApplyOp(op, theta)
	}
	if sn := noise.Shape(); len(sn) != 2 || sn[0] != 1 || sn[1] != s[0] || noise.Dtype() != theta.Dtype() {
		return nil, fmt.Errorf("fairtrain: keepProbs: noise %s, want a 1 × %d matrix of the generator's dtype", opkit.DescribeNode(noise), s[0])
	}
	op.noisy = true
	return G.ApplyOp(op, theta, noise)
}

type keepOp struct {
	opkit.Pure
	d     int
	invT  float64
	noisy bool
}

func (op *keepOp) arity() int {
	if op.noisy {
		return 2
	}
	return 1
}
func (op *keepOp) Arity() int    { return op.arity() }
func (op *keepOp) Type() hm.Type { return opkit.FnType(op.arity()) }
func (op *keepOp) DiffWRT(inputs int) []bool {
	if op.noisy {
		return []bool{true, false}
	}
	return []bool{true}
}
func (op *keepOp) String() string { return fmt.Sprintf("KeepProbs(%d, 1/τ=%g)", op.d, op.invT) }
func (op *keepOp) InferShape(...G.DimSizer) (tensor.Shape, error) {
	return tensor.Shape{1, op.d}, nil
}
func (op *keepOp) WriteHash(h hash.Hash) {
	fmt.Fprint(h, "fairmp.fair.KeepProbs")
	opkit.WriteU64(h, uint64(op.d))
	opkit.WriteF64(h, op.invT)
	opkit.WriteBool(h, op.noisy)
}
func (op *keepOp) Hashcode() uint32 { return opkit.Hash32(op.WriteHash) }

// probs returns the keep probabilities of the inputs (θ[, noise]) and
// their dtype.
func (op *keepOp) probs(inputs []G.Value) ([]float64, tensor.Dtype, error) {
	th, err := opkit.CheckMatrix(op, inputs[0], op.d, 2)
	if err != nil {
		return nil, tensor.Dtype{}, err
	}
	t := f64s(th)
	var l []float64
	if op.noisy {
		nd, err := opkit.CheckMatrix(op, inputs[1], 1, op.d)
		if err != nil {
			return nil, tensor.Dtype{}, err
		}
		l = f64s(nd)
	}
	p := make([]float64, op.d)
	for j := range p {
		noise := 0.0
		if l != nil {
			noise = l[j]
		}
		p[j] = keepProb(t[2*j], t[2*j+1], noise, op.invT)
	}
	return p, th.Dtype(), nil
}

func (op *keepOp) Do(inputs ...G.Value) (G.Value, error) {
	if len(inputs) != op.arity() {
		return nil, fmt.Errorf("%v: %d inputs, want %d", op, len(inputs), op.arity())
	}
	p, dt, err := op.probs(inputs)
	if err != nil {
		return nil, err
	}
	return denseOf(dt, p, 1, op.d), nil
}

func (op *keepOp) SymDiff(inputs G.Nodes, output, grad *G.Node) (G.Nodes, error) {
	dt, err := G.ApplyOp(&keepGradOp{f: op}, append(append(G.Nodes(nil), inputs...), grad)...)
	if err != nil {
		return nil, err
	}
	if op.noisy {
		return G.Nodes{dt, nil}, nil
	}
	return G.Nodes{dt}, nil
}

// keepGradOp is keepProbs' gradient with respect to θ, from the inputs
// (θ[, noise], g).
type keepGradOp struct {
	opkit.NoDiff // never differentiated
	opkit.Pure
	f *keepOp
}

func (op *keepGradOp) Arity() int     { return op.f.arity() + 1 }
func (op *keepGradOp) Type() hm.Type  { return opkit.FnType(op.f.arity() + 1) }
func (op *keepGradOp) String() string { return "KeepProbsGrad" }
func (op *keepGradOp) InferShape(...G.DimSizer) (tensor.Shape, error) {
	return tensor.Shape{op.f.d, 2}, nil
}
func (op *keepGradOp) WriteHash(h hash.Hash) {
	fmt.Fprint(h, "fairmp.fair.KeepProbsGrad")
	op.f.WriteHash(h)
}
func (op *keepGradOp) Hashcode() uint32 { return opkit.Hash32(op.WriteHash) }
func (op *keepGradOp) Do(inputs ...G.Value) (G.Value, error) {
	k := op.f.arity()
	if len(inputs) != k+1 {
		return nil, fmt.Errorf("%v: %d inputs, want %d", op, len(inputs), k+1)
	}
	p, dt, err := op.f.probs(inputs[:k])
	if err != nil {
		return nil, err
	}
	gd, err := opkit.CheckMatrix(op, inputs[k], 1, op.f.d)
	if err != nil {
		return nil, err
	}
	g := f64s(gd)
	out := make([]float64, 2*op.f.d)
	for j, pj := range p {
		v := g[j] * pj * (1 - pj) * op.f.invT
		out[2*j], out[2*j+1] = v, -v
	}
	return denseOf(dt, out, op.f.d, 2), nil
}

// ---------------------------------------------------------------------
// halfMSE

// halfMSE returns the scalar node (1/m) Σ_k (σ(a_k) − ½)² of the m × 1
// logits a: the mean squared distance of the probabilities σ(a_k) from
// ½, FairVGNN's generator loss against its discriminator
// (F.mse_loss(sigmoid(a), 0.5)). Its gradient is
// (2/m)(σ(a_k) − ½)σ(a_k)(1 − σ(a_k)).
func halfMSE(a *G.Node) (*G.Node, error) {
	if a == nil {
		return nil, fmt.Errorf("fairtrain: halfMSE: nil node")
	}
	s := a.Shape()
	if len(s) != 2 || s[1] != 1 || s[0] < 1 || opkit.CheckFloat(a.Dtype()) != nil {
		return nil, fmt.Errorf("fairtrain: halfMSE: logits %s, want a float m × 1 matrix", opkit.DescribeNode(a))
	}
	return G.ApplyOp(&halfMSEOp{m: s[0]}, a)
}

type halfMSEOp struct {
	opkit.Pure
	m    int
	grad bool // the gradient op: inputs (a, g)
}

func (op *halfMSEOp) Arity() int {
	if op.grad {
		return 2
	}
	return 1
}
func (op *halfMSEOp) Type() hm.Type {
	if op.grad {
		return hm.NewFnType(opkit.MatrixType(), hm.TypeVariable('a'), opkit.MatrixType())
	}
	return hm.NewFnType(opkit.MatrixType(), hm.TypeVariable('a'))
}
func (op *halfMSEOp) DiffWRT(inputs int) []bool { return []bool{true} }
func (op *halfMSEOp) String() string {
	if op.grad {
		return fmt.Sprintf("HalfMSEGrad(%d)", op.m)
	}
	return fmt.Sprintf("HalfMSE(%d)", op.m)
}
func (op *halfMSEOp) InferShape(...G.DimSizer) (tensor.Shape, error) {
	if op.grad {
		return tensor.Shape{op.m, 1}, nil
	}
	return tensor.ScalarShape(), nil
}
func (op *halfMSEOp) WriteHash(h hash.Hash) {
	fmt.Fprint(h, "fairmp.fair.HalfMSE")
	opkit.WriteU64(h, uint64(op.m))
	opkit.WriteBool(h, op.grad)
}
func (op *halfMSEOp) Hashcode() uint32 { return opkit.Hash32(op.WriteHash) }
func (op *halfMSEOp) Do(inputs ...G.Value) (G.Value, error) {
	if len(inputs) != op.Arity() {
		return nil, fmt.Errorf("%v: %d inputs, want %d", op, len(inputs), op.Arity())
	}
	ad, err := opkit.CheckMatrix(op, inputs[0], op.m, 1)
	if err != nil {
		return nil, err
	}
	a := f64s(ad)
	if !op.grad {
		s := 0.0
		for _, v := range a {
			e := sigmoid(v) - 0.5
			s += e * e
		}
		return scalarValue(ad.Dtype(), s/float64(op.m)), nil
	}
	g, err := opkit.Scalar(inputs[1])
	if err != nil {
		return nil, fmt.Errorf("%v: gradient: %w", op, err)
	}
	out := make([]float64, op.m)
	for k, v := range a {
		p := sigmoid(v)
		out[k] = g * 2 * (p - 0.5) * p * (1 - p) / float64(op.m)
	}
	return denseOf(ad.Dtype(), out, op.m, 1), nil
}
func (op *halfMSEOp) SymDiff(inputs G.Nodes, output, grad *G.Node) (G.Nodes, error) {
	d, err := G.ApplyOp(&halfMSEOp{m: op.m, grad: true}, inputs[0], grad)
	if err != nil {
		return nil, err
	}
	return G.Nodes{d}, nil
}
