package fairtrain

import (
	"fmt"
	"hash/fnv"
	"math"

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

// asF64 returns x as float64 values: x itself in float64, a converted
// copy in float32 (f64s for a forward's input).
func asF64[T float32 | float64](x []T) []float64 {
	if s, ok := any(x).([]float64); ok {
		return s
	}
	out := make([]float64, len(x))
	for i, v := range x {
		out[i] = float64(v)
	}
	return out
}

// putF64 writes vals into out, converted to out's element type.
func putF64[T float32 | float64](out []T, vals []float64) {
	for i, v := range vals {
		out[i] = T(v)
	}
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
	return opkit.Apply(bceSpec, op, a)
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
	return opkit.Apply(covSpec, op, z)
}

// covOp holds Covariance's parameters.
type covOp struct {
	n, c, pos int
	sc        []float64 // centred scores
	key       uint64
}

func (op *covOp) hash(h opkit.Hasher) {
	h.Int(op.n, op.c, op.pos)
	h.U64(op.key)
}

var covSpec = &opkit.Spec[*covOp]{
	ID:   "fairmp.fair.Covariance",
	Name: func(op *covOp) string { return fmt.Sprintf("Covariance(%d×%d)", op.n, op.c) },
	Sig:  scalarSig[*covOp],
	Shape: func(op *covOp, in []tensor.Shape) (tensor.Shape, error) {
		return tensor.ScalarShape(), logitsShape(in[0], op.n, op.c)
	},
	Hash: (*covOp).hash,
	F32:  covFwd[float32],
	F64:  covFwd[float64],
	Grad: func(o *opkit.Op[*covOp], inputs G.Nodes, _, grad *G.Node) (G.Nodes, error) {
		d, err := opkit.Apply(covGradSpec, o.P, inputs[0], grad)
		if err != nil {
			return nil, err
		}
		return G.Nodes{d}, nil
	},
}

func covFwd[T float32 | float64](op *covOp, a opkit.Args[T]) error {
	p, _ := op.probs(asF64(a.In[0]))
	a.Out[0] = T(math.Abs(op.cov(p)))
	return nil
}

var covGradSpec = &opkit.Spec[*covOp]{
	ID:   "fairmp.fair.CovarianceGrad",
	Name: func(*covOp) string { return "CovarianceGrad" },
	Sig:  lossGradSig[*covOp],
	Shape: func(op *covOp, in []tensor.Shape) (tensor.Shape, error) {
		return tensor.Shape{op.n, op.c}, logitsShape(in[0], op.n, op.c)
	},
	Hash: (*covOp).hash,
	F32:  covGradFwd[float32],
	F64:  covGradFwd[float64],
}

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

func covGradFwd[T float32 | float64](f *covOp, a opkit.Args[T]) error {
	g := float64(a.In[1][0])
	p, sm := f.probs(asF64(a.In[0]))
	cv := f.cov(p)
	sign := 0.0
	switch {
	case cv > 0:
		sign = 1
	case cv < 0:
		sign = -1
	}
	out := a.Out
	for i := 0; i < f.n; i++ {
		dp := g * sign * f.sc[i] / float64(f.n)
		row := sm[i*f.c : (i+1)*f.c]
		for j := range row {
			e := 0.0
			if j == f.pos {
				e = 1
			}
			out[i*f.c+j] = T(dp * p[i] * (e - row[j]))
		}
	}
	return nil
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
	return opkit.Apply(cosSpec, cosOp{m: sa[0], k: sa[1]}, a, b)
}

const cosEps = 1e-8

// cosOp holds NegCosine's parameters.
type cosOp struct{ m, k int }

// shape is the shape rule of NegCosine and its gradients: two m × k
// inputs (and a scalar).
func (op cosOp) shape(in []tensor.Shape) error { return twoShapes(in, op.m, op.k) }

// twoShapes checks that the first two input shapes are r × c.
func twoShapes(in []tensor.Shape, r, c int) error {
	if err := logitsShape(in[0], r, c); err != nil {
		return err
	}
	return logitsShape(in[1], r, c)
}

var cosSpec = &opkit.Spec[cosOp]{
	ID:   "fairmp.fair.NegCosine",
	Name: func(op cosOp) string { return fmt.Sprintf("NegCosine(%d×%d)", op.m, op.k) },
	Sig:  func(cosOp) opkit.Sig { return opkit.Sig{In: []int{2, 2}, Out: 0} },
	Shape: func(op cosOp, in []tensor.Shape) (tensor.Shape, error) {
		return tensor.ScalarShape(), op.shape(in)
	},
	Hash: func(op cosOp, h opkit.Hasher) { h.Int(op.m, op.k) },
	F32:  cosFwd[float32],
	F64:  cosFwd[float64],
	Grad: func(o *opkit.Op[cosOp], inputs G.Nodes, _, grad *G.Node) (G.Nodes, error) {
		da, err := opkit.Apply(cosGradSpec, cosGradOp{f: o.P, wrt: 0}, inputs[0], inputs[1], grad)
		if err != nil {
			return nil, err
		}
		db, err := opkit.Apply(cosGradSpec, cosGradOp{f: o.P, wrt: 1}, inputs[0], inputs[1], grad)
		if err != nil {
			return nil, err
		}
		return G.Nodes{da, db}, nil
	},
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

func cosFwd[T float32 | float64](op cosOp, x opkit.Args[T]) error {
	a, b := asF64(x.In[0]), asF64(x.In[1])
	s := 0.0
	for i := 0; i < op.m; i++ {
		dot, na, nb := rowStats(a[i*op.k:(i+1)*op.k], b[i*op.k:(i+1)*op.k])
		s += dot / (na * nb)
	}
	x.Out[0] = T(-s / float64(op.m))
	return nil
}

// cosGradOp is the gradient of negCosine with respect to input wrt:
// ∂cos/∂a = b/(‖a‖‖b‖) − cos·a/‖a‖² (with the clamped norms; the second
// term vanishes where the norm is clamped).
type cosGradOp struct {
	f   cosOp
	wrt int
}

var cosGradSpec = &opkit.Spec[cosGradOp]{
	ID:   "fairmp.fair.NegCosineGrad",
	Name: func(op cosGradOp) string { return fmt.Sprintf("NegCosineGrad(%d)", op.wrt) },
	Sig:  func(cosGradOp) opkit.Sig { return opkit.Sig{In: []int{2, 2, 0}, Out: 2} },
	Shape: func(op cosGradOp, in []tensor.Shape) (tensor.Shape, error) {
		return tensor.Shape{op.f.m, op.f.k}, op.f.shape(in)
	},
	Hash: func(op cosGradOp, h opkit.Hasher) { h.Int(op.wrt, op.f.m, op.f.k) },
	F32:  cosGradFwd[float32],
	F64:  cosGradFwd[float64],
}

func cosGradFwd[T float32 | float64](op cosGradOp, x opkit.Args[T]) error {
	a, b := asF64(x.In[0]), asF64(x.In[1])
	g := float64(x.In[2][0])
	m, k := op.f.m, op.f.k
	if op.wrt == 1 {
		a, b = b, a // cos is symmetric: differentiate with respect to the first argument
	}
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
			x.Out[i*k+j] = T(scale * d)
		}
	}
	return nil
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
	return opkit.Apply(stopSpec, stopOp{r: s[0], c: s[1], id: opIDs.Add(1)}, x)
}

// stopOp holds StopGradient's parameters; with zero set it is its
// gradient, which outputs zeros.
type stopOp struct {
	r, c int
	id   uint64
	zero bool
}

var stopSpec = &opkit.Spec[stopOp]{
	ID: "fairmp.fair.StopGradient",
	Name: func(op stopOp) string {
		if op.zero {
			return fmt.Sprintf("ZeroGrad#%d", op.id)
		}
		return fmt.Sprintf("StopGradient#%d", op.id)
	},
	Sig: func(stopOp) opkit.Sig { return opkit.Mats(1) },
	Shape: func(op stopOp, in []tensor.Shape) (tensor.Shape, error) {
		return tensor.Shape{op.r, op.c}, logitsShape(in[0], op.r, op.c)
	},
	Hash: func(op stopOp, h opkit.Hasher) { h.Bool(op.zero); h.U64(op.id) },
	F32:  stopFwd[float32],
	F64:  stopFwd[float64],
	Grad: func(o *opkit.Op[stopOp], _ G.Nodes, _, grad *G.Node) (G.Nodes, error) {
		p := o.P
		p.zero = true
		z, err := o.Apply(p, grad)
		if err != nil {
			return nil, err
		}
		return G.Nodes{z}, nil
	},
}

// stopFwd copies its input (zero: leaves the fresh output zero).
func stopFwd[T float32 | float64](op stopOp, a opkit.Args[T]) error {
	if !op.zero {
		copy(a.Out, a.In[0])
	}
	return nil
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
	return opkit.Apply(selectSpec, &selectOp{phase: phase, r: se[0], c: se[1], id: opIDs.Add(1)}, eval, train)
}

// selectOp holds phaseSelect's parameters.
type selectOp struct {
	phase *layers.Phase
	r, c  int
	id    uint64
}

// chosen returns the input the phase selects: 1 (train) in training.
func (op *selectOp) chosen() int {
	if op.phase.Training() {
		return 1
	}
	return 0
}

var selectSpec = &opkit.Spec[*selectOp]{
	ID:   "fairmp.fair.PhaseSelect",
	Name: func(op *selectOp) string { return fmt.Sprintf("PhaseSelect#%d", op.id) },
	Sig:  func(*selectOp) opkit.Sig { return opkit.Mats(2) },
	Shape: func(op *selectOp, in []tensor.Shape) (tensor.Shape, error) {
		return tensor.Shape{op.r, op.c}, twoShapes(in, op.r, op.c)
	},
	Hash: func(op *selectOp, h opkit.Hasher) { h.U64(op.id) },
	F32: func(op *selectOp, a opkit.Args[float32]) error {
		copy(a.Out, a.In[op.chosen()])
		return nil
	},
	F64: func(op *selectOp, a opkit.Args[float64]) error {
		copy(a.Out, a.In[op.chosen()])
		return nil
	},
	Grad: func(o *opkit.Op[*selectOp], _ G.Nodes, _, grad *G.Node) (G.Nodes, error) {
		out := make(G.Nodes, 2)
		for k := range out {
			d, err := opkit.Apply(maskSpec, maskOp{sel: o.P, k: k}, grad)
			if err != nil {
				return nil, err
			}
			out[k] = d
		}
		return out, nil
	},
}

// maskOp passes the gradient to input k of its selectOp when k is the
// input that op's phase chose, and zeros otherwise.
type maskOp struct {
	sel *selectOp
	k   int
}

var maskSpec = &opkit.Spec[maskOp]{
	ID:   "fairmp.fair.PhaseMask",
	Name: func(op maskOp) string { return fmt.Sprintf("PhaseMask#%d(%d)", op.sel.id, op.k) },
	Sig:  func(maskOp) opkit.Sig { return opkit.Mats(1) },
	Shape: func(op maskOp, in []tensor.Shape) (tensor.Shape, error) {
		return tensor.Shape{op.sel.r, op.sel.c}, logitsShape(in[0], op.sel.r, op.sel.c)
	},
	Hash: func(op maskOp, h opkit.Hasher) { h.U64(op.sel.id); h.Int(op.k) },
	F32: func(op maskOp, a opkit.Args[float32]) error {
		if op.sel.chosen() == op.k {
			copy(a.Out, a.In[0])
		}
		return nil
	},
	F64: func(op maskOp, a opkit.Args[float64]) error {
		if op.sel.chosen() == op.k {
			copy(a.Out, a.In[0])
		}
		return nil
	},
}
