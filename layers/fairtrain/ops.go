package fairtrain

import (
	"fmt"
	"hash"
	"hash/fnv"
	"math"
	"sync/atomic"

	"github.com/chewxy/hm"
	"github.com/fairmp/fairmp/internal/opkit"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// opIDs numbers op instances that hold state (a sample, a buffer), so
// that gorgonia never merges two of them into one node.
var opIDs atomic.Uint64

func scalarValue(dt tensor.Dtype, v float64) G.Value {
	if dt == tensor.Float32 {
		return G.NewF32(float32(v))
	}
	return G.NewF64(v)
}

// ---------------------------------------------------------------------
// dpGap

// dpGap returns the scalar node
//
//	max_g m_g − min_g m_g,   m_g = (1/|I_g|) Σ_{i ∈ I_g} softmax(z_i)[positive],
//
// the demographic-parity gap in probability space of the n × c logits z
// over the nodes idx, where I_g holds the nodes of idx in group g
// (sens[i] = g; nodes with sens −1 are left out). For two groups it is
// |m₀ − m₁|. The gradient with respect to z is, on a row i of the group
// with the largest mean (the first on ties), (1/|I_g|)·p_pos(e_pos − p_i)
// and on a row of the group with the smallest mean the same with the
// opposite sign (p_i = softmax(z_i)); the value and the gradient are
// computed in float64 for both dtypes, with max-subtraction.
//
// sens holds one group id (0..G−1, or −1 for unknown) per row of z; idx
// lists the rows taken into account (a node listed twice counts twice).
// dpGap returns an error if z is not a float matrix, len(sens) differs
// from its row count, positive is not a class, an index is out of range,
// a group id is below −1, or fewer than two groups have a member in idx
// (groups must be numbered 0..G−1 without gaps).
func dpGap(logits *G.Node, sens []int, idx []int, positive int) (*G.Node, error) {
	if logits == nil {
		return nil, fmt.Errorf("fairtrain: DPGap: nil logits node")
	}
	s := logits.Shape()
	if len(s) != 2 || opkit.CheckFloat(logits.Dtype()) != nil {
		return nil, fmt.Errorf("fairtrain: DPGap: logits %q (node %d) are %v of shape %v, want a float32 or float64 n × classes matrix", logits.Name(), logits.ID(), logits.Dtype(), s)
	}
	n, c := s[0], s[1]
	if positive < 0 || positive >= c {
		return nil, fmt.Errorf("fairtrain: DPGap: positive class %d, want a class in [0, %d)", positive, c)
	}
	grp, counts, err := groupsOf(sens, idx, n)
	if err != nil {
		return nil, fmt.Errorf("fairtrain: DPGap: %w", err)
	}
	op := &dpGapOp{n: n, c: c, pos: positive, counts: counts}
	h := fnv.New64a()
	opkit.WriteU64(h, uint64(positive))
	for k, i := range idx {
		if grp[k] < 0 {
			continue
		}
		op.rows = append(op.rows, i)
		op.grp = append(op.grp, grp[k])
		opkit.WriteU64(h, uint64(i))
		opkit.WriteU64(h, uint64(grp[k]))
	}
	op.key = h.Sum64()
	return G.ApplyOp(op, logits)
}

// groupsOf returns the group of each idx entry (−1 for unknown) and the
// size of each group 0..G−1, checking that G >= 2 and no group is empty.
func groupsOf(sens, idx []int, n int) ([]int, []int, error) {
	if len(sens) != n {
		return nil, nil, fmt.Errorf("%d sensitive values for %d nodes, want one per node", len(sens), n)
	}
	grp := make([]int, len(idx))
	var counts []int
	for k, i := range idx {
		if i < 0 || i >= n {
			return nil, nil, fmt.Errorf("index %d (entry %d) out of range [0, %d)", i, k, n)
		}
		g := sens[i]
		if g < -1 {
			return nil, nil, fmt.Errorf("sensitive value %d of node %d, want a group id >= 0 or −1 (unknown)", g, i)
		}
		grp[k] = g
		if g < 0 {
			continue
		}
		for len(counts) <= g {
			counts = append(counts, 0)
		}
		counts[g]++
	}
	if len(counts) < 2 {
		return nil, nil, fmt.Errorf("%d sensitive group(s) among the %d nodes, want at least 2", len(counts), len(idx))
	}
	for g, c := range counts {
		if c == 0 {
			return nil, nil, fmt.Errorf("sensitive group %d has no member among the %d nodes (groups 0..%d must all be present)", g, len(idx), len(counts)-1)
		}
	}
	return grp, counts, nil
}

type dpGapOp struct {
	opkit.Pure
	n, c, pos int
	rows, grp []int // rows of z in the gap and their groups
	counts    []int
	key       uint64
}

func (op *dpGapOp) Arity() int                { return 1 }
func (op *dpGapOp) Type() hm.Type             { return hm.NewFnType(opkit.MatrixType(), hm.TypeVariable('a')) }
func (op *dpGapOp) DiffWRT(inputs int) []bool { return []bool{true} }
func (op *dpGapOp) String() string {
	return fmt.Sprintf("DPGap(%d rows, %d groups)", len(op.rows), len(op.counts))
}
func (op *dpGapOp) InferShape(...G.DimSizer) (tensor.Shape, error) { return tensor.ScalarShape(), nil }
func (op *dpGapOp) WriteHash(h hash.Hash) {
	fmt.Fprint(h, "fairmp.fair.DPGap")
	opkit.WriteU64(h, op.key)
}
func (op *dpGapOp) Hashcode() uint32 { return opkit.Hash32(op.WriteHash) }

func (op *dpGapOp) Do(inputs ...G.Value) (G.Value, error) {
	if len(inputs) != 1 {
		return nil, fmt.Errorf("%v: %d inputs, want 1", op, len(inputs))
	}
	z, err := opkit.CheckMatrix(op, inputs[0], op.n, op.c)
	if err != nil {
		return nil, err
	}
	var means []float64
	switch zs := z.Data().(type) {
	case []float64:
		means = groupMeans(op, zs)
	case []float32:
		means = groupMeans(op, zs)
	}
	hi, lo := argMaxMin(means)
	return scalarValue(z.Dtype(), means[hi]-means[lo]), nil
}

func groupMeans[T float32 | float64](op *dpGapOp, z []T) []float64 {
	means := make([]float64, len(op.counts))
	p := make([]float64, op.c)
	for k, i := range op.rows {
		opkit.SoftmaxRow(z[i*op.c:(i+1)*op.c], p, 1)
		means[op.grp[k]] += p[op.pos]
	}
	for g := range means {
		means[g] /= float64(op.counts[g])
	}
	return means
}

// argMaxMin returns the indices of the largest and smallest values (the
// first on ties).
func argMaxMin(v []float64) (hi, lo int) {
	for g, x := range v {
		if x > v[hi] {
			hi = g
		}
		if x < v[lo] {
			lo = g
		}
	}
	return hi, lo
}

func (op *dpGapOp) SymDiff(inputs G.Nodes, output, grad *G.Node) (G.Nodes, error) {
	d, err := G.ApplyOp(&dpGapGradOp{f: op}, inputs[0], grad)
	if err != nil {
		return nil, err
	}
	return G.Nodes{d}, nil
}

// dpGapGradOp computes grad · ∂dpGap/∂z from (z, grad).
type dpGapGradOp struct {
	opkit.NoDiff // never differentiated
	opkit.Pure
	f *dpGapOp
}

func (op *dpGapGradOp) Arity() int { return 2 }
func (op *dpGapGradOp) Type() hm.Type {
	return hm.NewFnType(opkit.MatrixType(), hm.TypeVariable('a'), opkit.MatrixType())
}
func (op *dpGapGradOp) String() string { return "DPGapGrad" }
func (op *dpGapGradOp) InferShape(...G.DimSizer) (tensor.Shape, error) {
	return tensor.Shape{op.f.n, op.f.c}, nil
}
func (op *dpGapGradOp) WriteHash(h hash.Hash) {
	fmt.Fprint(h, "fairmp.fair.DPGapGrad")
	op.f.WriteHash(h)
}
func (op *dpGapGradOp) Hashcode() uint32 { return opkit.Hash32(op.WriteHash) }

func (op *dpGapGradOp) Do(inputs ...G.Value) (G.Value, error) {
	if len(inputs) != 2 {
		return nil, fmt.Errorf("%v: %d inputs, want 2", op, len(inputs))
	}
	z, err := opkit.CheckMatrix(op, inputs[0], op.f.n, op.f.c)
	if err != nil {
		return nil, err
	}
	g, err := opkit.Scalar(inputs[1])
	if err != nil {
		return nil, fmt.Errorf("%v: gradient: %w", op, err)
	}
	out := opkit.Alloc(z.Dtype(), op.f.n, op.f.c)
	switch zs := z.Data().(type) {
	case []float64:
		dpGapGrad(op.f, out.Data().([]float64), zs, g)
	case []float32:
		dpGapGrad(op.f, out.Data().([]float32), zs, g)
	}
	return out, nil
}

func dpGapGrad[T float32 | float64](f *dpGapOp, out, z []T, g float64) {
	hi, lo := argMaxMin(groupMeans(f, z))
	if hi == lo {
		return // every group mean is equal: the zero subgradient
	}
	c := f.c
	p := make([]float64, c)
	for k, i := range f.rows {
		var w float64
		switch f.grp[k] {
		case hi:
			w = g / float64(f.counts[hi])
		case lo:
			w = -g / float64(f.counts[lo])
		default:
			continue
		}
		opkit.SoftmaxRow(z[i*c:(i+1)*c], p, 1)
		pp := p[f.pos]
		o := out[i*c : (i+1)*c]
		for j := range o {
			d := -pp * p[j]
			if j == f.pos {
				d += pp
			}
			o[j] += T(w * d)
		}
	}
}

// ---------------------------------------------------------------------
// bceWithLogits

// bceWithLogits returns the scalar node (1/m) Σ_k [softplus(a_k) − y_k a_k],
// the mean binary cross-entropy of σ(a) against the targets y ∈ {0, 1}
// (PyTorch's binary_cross_entropy_with_logits), for an m × 1 node a of
// logits. It is computed in the stable form max(a, 0) − y·a +
// log(1 + e^−|a|), in float64 for both dtypes, so no logit overflows;
// the gradient is (σ(a_k) − y_k)/m. It returns an error if a is not a
// float m × 1 matrix with m = len(targets) > 0, or a target is not 0 or 1.
func bceWithLogits(a *G.Node, targets []int) (*G.Node, error) {
	if a == nil {
		return nil, fmt.Errorf("fairtrain: BCEWithLogits: nil node")
	}
	s := a.Shape()
	if len(s) != 2 || s[1] != 1 || s[0] != len(targets) || len(targets) == 0 || opkit.CheckFloat(a.Dtype()) != nil {
		return nil, fmt.Errorf("fairtrain: BCEWithLogits: logits %q (node %d) are %v of shape %v, want a float %d × 1 matrix (one per target)", a.Name(), a.ID(), a.Dtype(), s, len(targets))
	}
	op := &bceOp{y: make([]float64, len(targets))}
	h := fnv.New64a()
	for k, t := range targets {
		if t != 0 && t != 1 {
			return nil, fmt.Errorf("fairtrain: BCEWithLogits: target %d is %d, want 0 or 1", k, t)
		}
		op.y[k] = float64(t)
		opkit.WriteU64(h, uint64(t))
	}
	op.key = h.Sum64()
	return G.ApplyOp(op, a)
}

type bceOp struct {
	opkit.Pure
	y   []float64
	key uint64
}

func (op *bceOp) Arity() int                { return 1 }
func (op *bceOp) Type() hm.Type             { return hm.NewFnType(opkit.MatrixType(), hm.TypeVariable('a')) }
func (op *bceOp) DiffWRT(inputs int) []bool { return []bool{true} }
func (op *bceOp) String() string            { return fmt.Sprintf("BCEWithLogits(%d)", len(op.y)) }
func (op *bceOp) InferShape(...G.DimSizer) (tensor.Shape, error) {
	return tensor.ScalarShape(), nil
}
func (op *bceOp) WriteHash(h hash.Hash) {
	fmt.Fprint(h, "fairmp.fair.BCEWithLogits")
	opkit.WriteU64(h, uint64(len(op.y)))
	opkit.WriteU64(h, op.key)
}
func (op *bceOp) Hashcode() uint32 { return opkit.Hash32(op.WriteHash) }

func (op *bceOp) Do(inputs ...G.Value) (G.Value, error) {
	if len(inputs) != 1 {
		return nil, fmt.Errorf("%v: %d inputs, want 1", op, len(inputs))
	}
	a, err := opkit.CheckMatrix(op, inputs[0], len(op.y), 1)
	if err != nil {
		return nil, err
	}
	var l float64
	switch as := a.Data().(type) {
	case []float64:
		l = bceLoss(as, op.y)
	case []float32:
		l = bceLoss(as, op.y)
	}
	return scalarValue(a.Dtype(), l), nil
}

func bceLoss[T float32 | float64](a []T, y []float64) float64 {
	s := 0.0
	for k, v := range a {
		x := float64(v)
		s += math.Max(x, 0) - y[k]*x + math.Log1p(math.Exp(-math.Abs(x)))
	}
	return s / float64(len(a))
}

// sigmoid is σ(x) without overflow.
func sigmoid(x float64) float64 {
	if x >= 0 {
		return 1 / (1 + math.Exp(-x))
	}
	e := math.Exp(x)
	return e / (1 + e)
}

func (op *bceOp) SymDiff(inputs G.Nodes, output, grad *G.Node) (G.Nodes, error) {
	d, err := G.ApplyOp(&bceGradOp{f: op}, inputs[0], grad)
	if err != nil {
		return nil, err
	}
	return G.Nodes{d}, nil
}

type bceGradOp struct {
	opkit.NoDiff // never differentiated
	opkit.Pure
	f *bceOp
}

func (op *bceGradOp) Arity() int { return 2 }
func (op *bceGradOp) Type() hm.Type {
	return hm.NewFnType(opkit.MatrixType(), hm.TypeVariable('a'), opkit.MatrixType())
}
func (op *bceGradOp) String() string { return "BCEWithLogitsGrad" }
func (op *bceGradOp) InferShape(...G.DimSizer) (tensor.Shape, error) {
	return tensor.Shape{len(op.f.y), 1}, nil
}
func (op *bceGradOp) WriteHash(h hash.Hash) {
	fmt.Fprint(h, "fairmp.fair.BCEWithLogitsGrad")
	op.f.WriteHash(h)
}
func (op *bceGradOp) Hashcode() uint32 { return opkit.Hash32(op.WriteHash) }
func (op *bceGradOp) Do(inputs ...G.Value) (G.Value, error) {
	if len(inputs) != 2 {
		return nil, fmt.Errorf("%v: %d inputs, want 2", op, len(inputs))
	}
	m := len(op.f.y)
	a, err := opkit.CheckMatrix(op, inputs[0], m, 1)
	if err != nil {
		return nil, err
	}
	g, err := opkit.Scalar(inputs[1])
	if err != nil {
		return nil, fmt.Errorf("%v: gradient: %w", op, err)
	}
	out := opkit.Alloc(a.Dtype(), m, 1)
	scale := g / float64(m)
	switch as := a.Data().(type) {
	case []float64:
		o := out.Data().([]float64)
		for k, v := range as {
			o[k] = scale * (sigmoid(v) - op.f.y[k])
		}
	case []float32:
		o := out.Data().([]float32)
		for k, v := range as {
			o[k] = float32(scale * (sigmoid(float64(v)) - op.f.y[k]))
		}
	}
	return out, nil
}

// ---------------------------------------------------------------------
// capture: identity that keeps a float64 copy of its input's last value.

type captureOp struct {
	opkit.Pure
	r, c int
	id   uint64
	buf  []float64
}

func capture(x *G.Node) (*G.Node, *captureOp, error) {
	s := x.Shape()
	op := &captureOp{r: s[0], c: s[1], id: opIDs.Add(1), buf: make([]float64, s[0]*s[1])}
	out, err := G.ApplyOp(op, x)
	return out, op, err
}

// copyTo writes the captured value into the value of pin, a matrix of
// the captured shape (the side graph's input), in pin's dtype.
func (op *captureOp) copyTo(pin *G.Node) {
	switch d := pin.Value().(*tensor.Dense).Data().(type) {
	case []float64:
		copy(d, op.buf)
	case []float32:
		for i, v := range op.buf {
			d[i] = float32(v)
		}
	}
}

func (op *captureOp) Arity() int                { return 1 }
func (op *captureOp) Type() hm.Type             { return opkit.FnType(1) }
func (op *captureOp) DiffWRT(inputs int) []bool { return []bool{true} }
func (op *captureOp) String() string            { return fmt.Sprintf("Capture#%d", op.id) }
func (op *captureOp) InferShape(...G.DimSizer) (tensor.Shape, error) {
	return tensor.Shape{op.r, op.c}, nil
}
func (op *captureOp) WriteHash(h hash.Hash) {
	fmt.Fprint(h, "fairmp.fair.Capture")
	opkit.WriteU64(h, op.id)
}
func (op *captureOp) Hashcode() uint32 { return opkit.Hash32(op.WriteHash) }
func (op *captureOp) Do(inputs ...G.Value) (G.Value, error) {
	if len(inputs) != 1 {
		return nil, fmt.Errorf("%v: %d inputs, want 1", op, len(inputs))
	}
	x, err := opkit.CheckMatrix(op, inputs[0], op.r, op.c)
	if err != nil {
		return nil, err
	}
	switch xs := x.Data().(type) {
	case []float64:
		copy(op.buf, xs)
	case []float32:
		for i, v := range xs {
			op.buf[i] = float64(v)
		}
	}
	return x.Clone().(*tensor.Dense), nil
}
func (op *captureOp) SymDiff(inputs G.Nodes, output, grad *G.Node) (G.Nodes, error) {
	return G.Nodes{grad}, nil
}
