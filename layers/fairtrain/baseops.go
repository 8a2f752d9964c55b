package fairtrain

import (
	"fmt"
	"hash"
	"hash/fnv"
	"math"

	"github.com/chewxy/hm"
	"github.com/fairmp/fairmp/internal/opkit"
	"github.com/fairmp/fairmp/layers"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// The ops of FairGNN and NIFTY: a binary cross-entropy against soft
// targets, the absolute covariance between a score and the predicted
// probability, the negative cosine similarity, a gradient stop and a
// switch between a training and an evaluation value. Each computes in
// float64 for both dtypes and has a gradient op of its own (checked by
// finite differences in the tests).

// f64s returns a dense value's data as float64 (a copy for float32).
func f64s(d *tensor.Dense) []float64 {
	switch s := d.Data().(type) {
	case []float64:
		return s
	case []float32:
		out := make([]float64, len(s))
		for i, v := range s {
			out[i] = float64(v)
		}
		return out
	}
	return nil
}

// denseOf returns a new r × c dense of dtype dt holding vals.
func denseOf(dt tensor.Dtype, vals []float64, r, c int) *tensor.Dense {
	out := opkit.Alloc(dt, r, c)
	switch o := out.Data().(type) {
	case []float64:
		copy(o, vals)
	case []float32:
		for i, v := range vals {
			o[i] = float32(v)
		}
	}
	return out
}

// ---------------------------------------------------------------------
// bceWithLogitsSoft

// bceWithLogitsSoft is bceWithLogits against soft targets y_k ∈ [0, 1]
// (PyTorch's binary_cross_entropy_with_logits with float targets, as
// FairGNN's adversary is trained against the estimated group
// probabilities): (1/m) Σ_k [softplus(a_k) − y_k a_k], gradient
// (σ(a_k) − y_k)/m. It returns an error if a is not a float m × 1 matrix
// with m = len(targets) > 0, or a target is outside [0, 1] or NaN.
func bceWithLogitsSoft(a *G.Node, targets []float64) (*G.Node, error) {
	if a == nil {
		return nil, fmt.Errorf("fairtrain: BCEWithLogitsSoft: nil node")
	}
	s := a.Shape()
	if len(s) != 2 || s[1] != 1 || s[0] != len(targets) || len(targets) == 0 || opkit.CheckFloat(a.Dtype()) != nil {
		return nil, fmt.Errorf("fairtrain: BCEWithLogitsSoft: logits %q (node %d) are %v of shape %v, want a float %d × 1 matrix (one per target)", a.Name(), a.ID(), a.Dtype(), s, len(targets))
	}
	op := &bceOp{y: append([]float64(nil), targets...)}
	h := fnv.New64a()
	for k, t := range targets {
		if !(t >= 0 && t <= 1) {
			return nil, fmt.Errorf("fairtrain: BCEWithLogitsSoft: target %d is %v, want a probability in [0, 1]", k, t)
		}
		opkit.WriteF64(h, t)
	}
	op.key = h.Sum64()
	return G.ApplyOp(op, a)
}

// ---------------------------------------------------------------------
// covariance

// covariance returns the scalar node |Cov(s, p)| = |(1/n) Σ_i (s_i − s̄)(p_i − p̄)|
// over the n rows of the logits z, where p_i = softmax(z_i)[positive] is
// the predicted probability of the positive class and s a fixed score per
// row (FairGNN's covariance constraint, with s the sensitive attribute
// where it is known and the estimator's probability elsewhere). Since
// Σ_i (s_i − s̄) = 0 the gradient with respect to p_i is
// sign(Cov)·(s_i − s̄)/n, pushed through the softmax: on row i,
// sign(Cov)·(s_i − s̄)/n · p_i (e_positive − softmax(z_i)); 0 where Cov is
// exactly 0. It returns an error if z is not a float n × c matrix (c ≥ 2),
// len(s) ≠ n, positive is not a class, or a score is not finite.
func covariance(z *G.Node, s []float64, positive int) (*G.Node, error) {
	if z == nil {
		return nil, fmt.Errorf("fairtrain: Covariance: nil logits node")
	}
	sh := z.Shape()
	if len(sh) != 2 || sh[1] < 2 || opkit.CheckFloat(z.Dtype()) != nil {
		return nil, fmt.Errorf("fairtrain: Covariance: logits %s, want a float32 or float64 n × classes matrix (classes ≥ 2)", opkit.DescribeNode(z))
	}
	if len(s) != sh[0] {
		return nil, fmt.Errorf("fairtrain: Covariance: %d scores for %d rows of logits, want one per row", len(s), sh[0])
	}
	if positive < 0 || positive >= sh[1] {
		return nil, fmt.Errorf("fairtrain: Covariance: positive class %d, want a class in [0, %d)", positive, sh[1])
	}
	op := &covOp{n: sh[0], c: sh[1], pos: positive, sc: make([]float64, len(s))}
	mean := 0.0
	h := fnv.New64a()
	for i, v := range s {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("fairtrain: Covariance: score %d is %v, want a finite value", i, v)
		}
		mean += v
		opkit.WriteF64(h, v)
	}
	mean /= float64(len(s))
	for i, v := range s {
		op.sc[i] = v - mean
	}
	op.key = h.Sum64()
	return G.ApplyOp(op, z)
}

type covOp struct {
	opkit.Pure
	n, c, pos int
	sc        []float64 // centred scores
	key       uint64
}

func (op *covOp) Arity() int                { return 1 }
func (op *covOp) Type() hm.Type             { return hm.NewFnType(opkit.MatrixType(), hm.TypeVariable('a')) }
func (op *covOp) DiffWRT(inputs int) []bool { return []bool{true} }
func (op *covOp) String() string            { return fmt.Sprintf("Covariance(%d×%d)", op.n, op.c) }
func (op *covOp) InferShape(...G.DimSizer) (tensor.Shape, error) {
	return tensor.ScalarShape(), nil
}
func (op *covOp) WriteHash(h hash.Hash) {
	fmt.Fprint(h, "fairmp.fair.Covariance")
	opkit.WriteU64(h, uint64(op.n))
	opkit.WriteU64(h, uint64(op.c))
	opkit.WriteU64(h, uint64(op.pos))
	opkit.WriteU64(h, op.key)
}
func (op *covOp) Hashcode() uint32 { return opkit.Hash32(op.WriteHash) }

// probs returns p_i = softmax(z_i)[pos] and the rows' softmax.
func (op *covOp) probs(z []float64) (p, sm []float64) {
	p = make([]float64, op.n)
	sm = make([]float64, op.n*op.c)
	for i := 0; i < op.n; i++ {
		opkit.SoftmaxRow(z[i*op.c:(i+1)*op.c], sm[i*op.c:(i+1)*op.c], 1)
		p[i] = sm[i*op.c+op.pos]
	}
	return p, sm
}

// cov returns the signed covariance.
func (op *covOp) cov(p []float64) float64 {
	s := 0.0
	for i, v := range p {
		s += op.sc[i] * v
	}
	return s / float64(op.n)
}

func (op *covOp) Do(inputs ...G.Value) (G.Value, error) {
	if len(inputs) != 1 {
		return nil, fmt.Errorf("%v: %d inputs, want 1", op, len(inputs))
	}
	z, err := opkit.CheckMatrix(op, inputs[0], op.n, op.c)
	if err != nil {
		return nil, err
	}
	p, _ := op.probs(f64s(z))
	return scalarValue(z.Dtype(), math.Abs(op.cov(p))), nil
}

func (op *covOp) SymDiff(inputs G.Nodes, output, grad *G.Node) (G.Nodes, error) {
	d, err := G.ApplyOp(&covGradOp{f: op}, inputs[0], grad)
	if err != nil {
		return nil, err
	}
	return G.Nodes{d}, nil
}

type covGradOp struct {
	opkit.NoDiff // never differentiated
	opkit.Pure
	f *covOp
}

func (op *covGradOp) Arity() int { return 2 }
func (op *covGradOp) Type() hm.Type {
	return hm.NewFnType(opkit.MatrixType(), hm.TypeVariable('a'), opkit.MatrixType())
}
func (op *covGradOp) String() string { return "CovarianceGrad" }
func (op *covGradOp) InferShape(...G.DimSizer) (tensor.Shape, error) {
	return tensor.Shape{op.f.n, op.f.c}, nil
}
func (op *covGradOp) WriteHash(h hash.Hash) {
	fmt.Fprint(h, "fairmp.fair.CovarianceGrad")
	op.f.WriteHash(h)
}
func (op *covGradOp) Hashcode() uint32 { return opkit.Hash32(op.WriteHash) }
func (op *covGradOp) Do(inputs ...G.Value) (G.Value, error) {
	if len(inputs) != 2 {
		return nil, fmt.Errorf("%v: %d inputs, want 2", op, len(inputs))
	}
	f := op.f
	z, err := opkit.CheckMatrix(op, inputs[0], f.n, f.c)
	if err != nil {
		return nil, err
	}
	g, err := opkit.Scalar(inputs[1])
	if err != nil {
		return nil, fmt.Errorf("%v: gradient: %w", op, err)
	}
	p, sm := f.probs(f64s(z))
	cv := f.cov(p)
	sign := 0.0
	switch {
	case cv > 0:
		sign = 1
	case cv < 0:
		sign = -1
	}
	out := make([]float64, f.n*f.c)
	for i := 0; i < f.n; i++ {
		dp := g * sign * f.sc[i] / float64(f.n)
		row := sm[i*f.c : (i+1)*f.c]
		for j := range row {
			e := 0.0
			if j == f.pos {
				e = 1
			}
			out[i*f.c+j] = dp * p[i] * (e - row[j])
		}
	}
	return denseOf(z.Dtype(), out, f.n, f.c), nil
}

// ---------------------------------------------------------------------
// negCosine

// negCosine returns the scalar node −(1/m) Σ_i cos(a_i, b_i), the mean
// negative cosine similarity between the rows of two m × k matrices
// (NIFTY's similarity loss D; wrap b in stopGradient for NIFTY's
// detached target). A row of norm below 1e-8 counts with norm 1e-8, as
// PyTorch's cosine_similarity clamps it (eps 1e-8). It returns an error
// for inputs that are not float matrices of one shape and dtype.
func negCosine(a, b *G.Node) (*G.Node, error) {
	if a == nil || b == nil {
		return nil, fmt.Errorf("fairtrain: NegCosine: nil node")
	}
	sa, sb := a.Shape(), b.Shape()
	if len(sa) != 2 || !sa.Eq(sb) || a.Dtype() != b.Dtype() || opkit.CheckFloat(a.Dtype()) != nil {
		return nil, fmt.Errorf("fairtrain: NegCosine: inputs %s and %s, want float matrices of one shape and dtype", opkit.DescribeNode(a), opkit.DescribeNode(b))
	}
	return G.ApplyOp(&cosOp{m: sa[0], k: sa[1]}, a, b)
}

const cosEps = 1e-8

type cosOp struct {
	opkit.Pure
	m, k int
}

func (op *cosOp) Arity() int { return 2 }
func (op *cosOp) Type() hm.Type {
	return hm.NewFnType(opkit.MatrixType(), opkit.MatrixType(), hm.TypeVariable('a'))
}
func (op *cosOp) DiffWRT(inputs int) []bool { return []bool{true, true} }
func (op *cosOp) String() string            { return fmt.Sprintf("NegCosine(%d×%d)", op.m, op.k) }
func (op *cosOp) InferShape(...G.DimSizer) (tensor.Shape, error) {
	return tensor.ScalarShape(), nil
}
func (op *cosOp) WriteHash(h hash.Hash) {
	fmt.Fprint(h, "fairmp.fair.NegCosine")
	opkit.WriteU64(h, uint64(op.m))
	opkit.WriteU64(h, uint64(op.k))
}
func (op *cosOp) Hashcode() uint32 { return opkit.Hash32(op.WriteHash) }

func (op *cosOp) inputs(vs []G.Value) ([]float64, []float64, tensor.Dtype, error) {
	a, err := opkit.CheckMatrix(op, vs[0], op.m, op.k)
	if err != nil {
		return nil, nil, tensor.Dtype{}, err
	}
	b, err := opkit.CheckMatrix(op, vs[1], op.m, op.k)
	if err != nil {
		return nil, nil, tensor.Dtype{}, err
	}
	return f64s(a), f64s(b), a.Dtype(), nil
}

// rowStats returns a_i·b_i, max(‖a_i‖, eps) and max(‖b_i‖, eps).
func rowStats(a, b []float64) (dot, na, nb float64) {
	for j := range a {
		dot += a[j] * b[j]
		na += a[j] * a[j]
		nb += b[j] * b[j]
	}
	return dot, math.Max(math.Sqrt(na), cosEps), math.Max(math.Sqrt(nb), cosEps)
}

func (op *cosOp) Do(inputs ...G.Value) (G.Value, error) {
	if len(inputs) != 2 {
		return nil, fmt.Errorf("%v: %d inputs, want 2", op, len(inputs))
	}
	a, b, dt, err := op.inputs(inputs)
	if err != nil {
		return nil, err
	}
	s := 0.0
	for i := 0; i < op.m; i++ {
		dot, na, nb := rowStats(a[i*op.k:(i+1)*op.k], b[i*op.k:(i+1)*op.k])
		s += dot / (na * nb)
	}
	return scalarValue(dt, -s/float64(op.m)), nil
}

func (op *cosOp) SymDiff(inputs G.Nodes, output, grad *G.Node) (G.Nodes, error) {
	da, err := G.ApplyOp(&cosGradOp{f: op, wrt: 0}, inputs[0], inputs[1], grad)
	if err != nil {
		return nil, err
	}
	db, err := G.ApplyOp(&cosGradOp{f: op, wrt: 1}, inputs[0], inputs[1], grad)
	if err != nil {
		return nil, err
	}
	return G.Nodes{da, db}, nil
}

// cosGradOp is the gradient of negCosine with respect to input wrt:
// ∂cos/∂a = b/(‖a‖‖b‖) − cos·a/‖a‖² (with the clamped norms; the second
// term vanishes where the norm is clamped).
type cosGradOp struct {
	opkit.NoDiff // never differentiated
	opkit.Pure
	f   *cosOp
	wrt int
}

func (op *cosGradOp) Arity() int { return 3 }
func (op *cosGradOp) Type() hm.Type {
	return hm.NewFnType(opkit.MatrixType(), opkit.MatrixType(), hm.TypeVariable('a'), opkit.MatrixType())
}
func (op *cosGradOp) String() string { return fmt.Sprintf("NegCosineGrad(%d)", op.wrt) }
func (op *cosGradOp) InferShape(...G.DimSizer) (tensor.Shape, error) {
	return tensor.Shape{op.f.m, op.f.k}, nil
}
func (op *cosGradOp) WriteHash(h hash.Hash) {
	fmt.Fprint(h, "fairmp.fair.NegCosineGrad")
	opkit.WriteU64(h, uint64(op.wrt))
	op.f.WriteHash(h)
}
func (op *cosGradOp) Hashcode() uint32 { return opkit.Hash32(op.WriteHash) }
func (op *cosGradOp) Do(inputs ...G.Value) (G.Value, error) {
	if len(inputs) != 3 {
		return nil, fmt.Errorf("%v: %d inputs, want 3", op, len(inputs))
	}
	a, b, dt, err := op.f.inputs(inputs[:2])
	if err != nil {
		return nil, err
	}
	g, err := opkit.Scalar(inputs[2])
	if err != nil {
		return nil, fmt.Errorf("%v: gradient: %w", op, err)
	}
	m, k := op.f.m, op.f.k
	if op.wrt == 1 {
		a, b = b, a // cos is symmetric: differentiate with respect to the first argument
	}
	out := make([]float64, m*k)
	scale := -g / float64(m)
	for i := 0; i < m; i++ {
		ai, bi := a[i*k:(i+1)*k], b[i*k:(i+1)*k]
		dot, na, nb := rowStats(ai, bi)
		c := dot / (na * nb)
		clamped := na == cosEps
		for j := range ai {
			d := bi[j] / (na * nb)
			if !clamped {
				d -= c * ai[j] / (na * na)
			}
			out[i*k+j] = scale * d
		}
	}
	return denseOf(dt, out, m, k), nil
}

// ---------------------------------------------------------------------
// stopGradient

// stopGradient returns x unchanged in the forward pass and passes no
// gradient back (PyTorch's detach): a target that the loss reads but
// must not move.
func stopGradient(x *G.Node) (*G.Node, error) {
	if x == nil || len(x.Shape()) != 2 || opkit.CheckFloat(x.Dtype()) != nil {
		return nil, fmt.Errorf("fairtrain: StopGradient: input %s, want a float matrix", opkit.DescribeNode(x))
	}
	s := x.Shape()
	return G.ApplyOp(&stopOp{r: s[0], c: s[1], id: opIDs.Add(1)}, x)
}

type stopOp struct {
	opkit.Pure
	r, c int
	id   uint64
	zero bool // the gradient op: outputs zeros
}

func (op *stopOp) Arity() int                { return 1 }
func (op *stopOp) Type() hm.Type             { return opkit.FnType(1) }
func (op *stopOp) DiffWRT(inputs int) []bool { return []bool{true} }
func (op *stopOp) String() string {
	if op.zero {
		return fmt.Sprintf("ZeroGrad#%d", op.id)
	}
	return fmt.Sprintf("StopGradient#%d", op.id)
}
func (op *stopOp) InferShape(...G.DimSizer) (tensor.Shape, error) {
	return tensor.Shape{op.r, op.c}, nil
}
func (op *stopOp) WriteHash(h hash.Hash) {
	fmt.Fprint(h, "fairmp.fair.StopGradient")
	opkit.WriteBool(h, op.zero)
	opkit.WriteU64(h, op.id)
}
func (op *stopOp) Hashcode() uint32 { return opkit.Hash32(op.WriteHash) }
func (op *stopOp) Do(inputs ...G.Value) (G.Value, error) {
	if len(inputs) != 1 {
		return nil, fmt.Errorf("%v: %d inputs, want 1", op, len(inputs))
	}
	x, err := opkit.CheckMatrix(op, inputs[0], op.r, op.c)
	if err != nil {
		return nil, err
	}
	if op.zero {
		return opkit.Alloc(x.Dtype(), op.r, op.c), nil
	}
	return x.Clone().(*tensor.Dense), nil
}
func (op *stopOp) SymDiff(inputs G.Nodes, output, grad *G.Node) (G.Nodes, error) {
	z, err := G.ApplyOp(&stopOp{r: op.r, c: op.c, id: op.id, zero: true}, grad)
	if err != nil {
		return nil, err
	}
	return G.Nodes{z}, nil
}

// ---------------------------------------------------------------------
// phaseSelect

// phaseSelect returns the node that is eval while phase is in evaluation
// mode and train while it is training; the gradient reaches the input
// chosen in that run alone. NIFTY's training model uses it so that the
// trainer's cross-entropy reads an augmented view in training and the
// clean input in evaluation (validation accuracy, prediction).
func phaseSelect(phase *layers.Phase, eval, train *G.Node) (*G.Node, error) {
	se, st := eval.Shape(), train.Shape()
	if len(se) != 2 || !se.Eq(st) || eval.Dtype() != train.Dtype() {
		return nil, fmt.Errorf("fairtrain: phase switch: %s and %s, want matrices of one shape and dtype", opkit.DescribeNode(eval), opkit.DescribeNode(train))
	}
	return G.ApplyOp(&selectOp{phase: phase, r: se[0], c: se[1], id: opIDs.Add(1)}, eval, train)
}

type selectOp struct {
	opkit.Pure
	phase *layers.Phase
	r, c  int
	id    uint64
}

func (op *selectOp) Arity() int                { return 2 }
func (op *selectOp) Type() hm.Type             { return opkit.FnType(2) }
func (op *selectOp) DiffWRT(inputs int) []bool { return []bool{true, true} }
func (op *selectOp) String() string            { return fmt.Sprintf("PhaseSelect#%d", op.id) }
func (op *selectOp) InferShape(...G.DimSizer) (tensor.Shape, error) {
	return tensor.Shape{op.r, op.c}, nil
}
func (op *selectOp) WriteHash(h hash.Hash) {
	fmt.Fprint(h, "fairmp.fair.PhaseSelect")
	opkit.WriteU64(h, op.id)
}
func (op *selectOp) Hashcode() uint32 { return opkit.Hash32(op.WriteHash) }
func (op *selectOp) Do(inputs ...G.Value) (G.Value, error) {
	if len(inputs) != 2 {
		return nil, fmt.Errorf("%v: %d inputs, want 2", op, len(inputs))
	}
	k := 0
	if op.phase.Training() {
		k = 1
	}
	x, err := opkit.CheckMatrix(op, inputs[k], op.r, op.c)
	if err != nil {
		return nil, err
	}
	return x.Clone().(*tensor.Dense), nil
}
func (op *selectOp) SymDiff(inputs G.Nodes, output, grad *G.Node) (G.Nodes, error) {
	out := make(G.Nodes, 2)
	for k := range out {
		d, err := G.ApplyOp(&maskOp{sel: op, k: k}, grad)
		if err != nil {
			return nil, err
		}
		out[k] = d
	}
	return out, nil
}

// maskOp passes the gradient to input k of its selectOp when k is the
// input that op's phase chose, and zeros otherwise.
type maskOp struct {
	opkit.NoDiff // never differentiated
	opkit.Pure
	sel *selectOp
	k   int
}

func (op *maskOp) Arity() int     { return 1 }
func (op *maskOp) Type() hm.Type  { return opkit.FnType(1) }
func (op *maskOp) String() string { return fmt.Sprintf("PhaseMask#%d(%d)", op.sel.id, op.k) }
func (op *maskOp) InferShape(...G.DimSizer) (tensor.Shape, error) {
	return tensor.Shape{op.sel.r, op.sel.c}, nil
}
func (op *maskOp) WriteHash(h hash.Hash) {
	fmt.Fprint(h, "fairmp.fair.PhaseMask")
	opkit.WriteU64(h, op.sel.id)
	opkit.WriteU64(h, uint64(op.k))
}
func (op *maskOp) Hashcode() uint32 { return opkit.Hash32(op.WriteHash) }
func (op *maskOp) Do(inputs ...G.Value) (G.Value, error) {
	if len(inputs) != 1 {
		return nil, fmt.Errorf("%v: %d inputs, want 1", op, len(inputs))
	}
	g, err := opkit.CheckMatrix(op, inputs[0], op.sel.r, op.sel.c)
	if err != nil {
		return nil, err
	}
	chosen := 0
	if op.sel.phase.Training() {
		chosen = 1
	}
	if chosen != op.k {
		return opkit.Alloc(g.Dtype(), op.sel.r, op.sel.c), nil
	}
	return g.Clone().(*tensor.Dense), nil
}
