package fairtrain

import (
	"fmt"
	"math"

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
	return opkit.Apply(colMaskSpec, colMaskOp{n: sx[0], d: sx[1]}, x, m)
}

// colMaskOp holds maskColumns' parameters.
type colMaskOp struct{ n, d int }

// shape checks (x, m[, g]): n × d features, a 1 × d mask and an n × d
// gradient.
func (op colMaskOp) shape(in []tensor.Shape) error {
	want := []tensor.Shape{{op.n, op.d}, {1, op.d}, {op.n, op.d}}
	for k, s := range in {
		if !s.Eq(want[k]) {
			return fmt.Errorf("input %d shape %v, want %v", k, s, want[k])
		}
	}
	return nil
}

var colMaskSpec = &opkit.Spec[colMaskOp]{
	ID:   "fairmp.fair.MaskColumns",
	Name: func(op colMaskOp) string { return fmt.Sprintf("MaskColumns(%d×%d)", op.n, op.d) },
	Sig:  func(colMaskOp) opkit.Sig { return opkit.Mats(2) },
	Shape: func(op colMaskOp, in []tensor.Shape) (tensor.Shape, error) {
		return tensor.Shape{op.n, op.d}, op.shape(in)
	},
	Hash: func(op colMaskOp, h opkit.Hasher) { h.Int(op.n, op.d) },
	F32: func(_ colMaskOp, a opkit.Args[float32]) error {
		scaleColumns(a.Out, a.In[0], a.In[1])
		return nil
	},
	F64: func(_ colMaskOp, a opkit.Args[float64]) error {
		scaleColumns(a.Out, a.In[0], a.In[1])
		return nil
	},
	Grad: func(o *opkit.Op[colMaskOp], inputs G.Nodes, _, grad *G.Node) (G.Nodes, error) {
		dx, err := opkit.Apply(colMaskGradSpec, colMaskGradOp{f: o.P, wrt: 0}, inputs[0], inputs[1], grad)
		if err != nil {
			return nil, err
		}
		dm, err := opkit.Apply(colMaskGradSpec, colMaskGradOp{f: o.P, wrt: 1}, inputs[0], inputs[1], grad)
		if err != nil {
			return nil, err
		}
		return G.Nodes{dx, dm}, nil
	},
	Keep: true,
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

// colMaskGradOp is maskColumns' gradient with respect to input wrt (0:
// the features, 1: the mask), from the inputs (x, m, g).
type colMaskGradOp struct {
	f   colMaskOp
	wrt int
}

var colMaskGradSpec = &opkit.Spec[colMaskGradOp]{
	ID:   "fairmp.fair.MaskColumnsGrad",
	Name: func(op colMaskGradOp) string { return fmt.Sprintf("MaskColumnsGrad(%d)", op.wrt) },
	Sig:  func(colMaskGradOp) opkit.Sig { return opkit.Mats(3) },
	Shape: func(op colMaskGradOp, in []tensor.Shape) (tensor.Shape, error) {
		if op.wrt == 0 {
			return tensor.Shape{op.f.n, op.f.d}, op.f.shape(in)
		}
		return tensor.Shape{1, op.f.d}, op.f.shape(in)
	},
	Hash: func(op colMaskGradOp, h opkit.Hasher) { h.Int(op.wrt, op.f.n, op.f.d) },
	F32:  colMaskGradFwd[float32],
	F64:  colMaskGradFwd[float64],
}

func colMaskGradFwd[T float32 | float64](op colMaskGradOp, a opkit.Args[T]) error {
	x, m, g := a.In[0], a.In[1], a.In[2]
	if op.wrt == 0 {
		scaleColumns(a.Out, g, m)
		return nil
	}
	sums := make([]float64, op.f.d)
	columnDots(sums, x, g)
	putF64(a.Out, sums)
	return nil
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
	op := keepOp{d: s[0], invT: 1 / tau}
	if noise == nil {
		op.invT = 1
		return opkit.Apply(keepSpec, op, theta)
	}
	if sn := noise.Shape(); len(sn) != 2 || sn[0] != 1 || sn[1] != s[0] || noise.Dtype() != theta.Dtype() {
		return nil, fmt.Errorf("fairtrain: keepProbs: noise %s, want a 1 × %d matrix of the generator's dtype", opkit.DescribeNode(noise), s[0])
	}
	op.noisy = true
	return opkit.Apply(keepSpec, op, theta, noise)
}

// keepOp holds keepProbs' parameters.
type keepOp struct {
	d     int
	invT  float64
	noisy bool
}

func (op keepOp) arity() int {
	if op.noisy {
		return 2
	}
	return 1
}

// shape checks (θ[, noise][, g]): d × 2 logits, then 1 × d matrices.
func (op keepOp) shape(in []tensor.Shape) error {
	for k, s := range in {
		want := tensor.Shape{1, op.d}
		if k == 0 {
			want = tensor.Shape{op.d, 2}
		}
		if !s.Eq(want) {
			return fmt.Errorf("input %d shape %v, want %v", k, s, want)
		}
	}
	return nil
}

func (op keepOp) hash(h opkit.Hasher) {
	h.Int(op.d)
	h.F64(op.invT)
	h.Bool(op.noisy)
}

// probs returns the keep probabilities of the inputs (θ[, noise]).
func keepProbsOf[T float32 | float64](op keepOp, in [][]T) []float64 {
	t := asF64(in[0])
	var l []float64
	if op.noisy {
		l = asF64(in[1])
	}
	p := make([]float64, op.d)
	for j := range p {
		noise := 0.0
		if l != nil {
			noise = l[j]
		}
		p[j] = keepProb(t[2*j], t[2*j+1], noise, op.invT)
	}
	return p
}

var keepSpec = &opkit.Spec[keepOp]{
	ID:   "fairmp.fair.KeepProbs",
	Name: func(op keepOp) string { return fmt.Sprintf("KeepProbs(%d, 1/τ=%g)", op.d, op.invT) },
	Sig:  func(op keepOp) opkit.Sig { return opkit.Mats(op.arity()) },
	Shape: func(op keepOp, in []tensor.Shape) (tensor.Shape, error) {
		return tensor.Shape{1, op.d}, op.shape(in)
	},
	Hash: keepOp.hash,
	F32: func(op keepOp, a opkit.Args[float32]) error {
		putF64(a.Out, keepProbsOf(op, a.In))
		return nil
	},
	F64: func(op keepOp, a opkit.Args[float64]) error {
		putF64(a.Out, keepProbsOf(op, a.In))
		return nil
	},
	DiffWRT: func(op keepOp, _ int) []bool {
		if op.noisy {
			return []bool{true, false}
		}
		return []bool{true}
	},
	Grad: func(o *opkit.Op[keepOp], inputs G.Nodes, _, grad *G.Node) (G.Nodes, error) {
		dt, err := opkit.Apply(keepGradSpec, o.P, append(append(G.Nodes(nil), inputs...), grad)...)
		if err != nil {
			return nil, err
		}
		if o.P.noisy {
			return G.Nodes{dt, nil}, nil
		}
		return G.Nodes{dt}, nil
	},
}

// keepGradSpec is keepProbs' gradient with respect to θ, from the
// inputs (θ[, noise], g).
var keepGradSpec = &opkit.Spec[keepOp]{
	ID:   "fairmp.fair.KeepProbsGrad",
	Name: func(keepOp) string { return "KeepProbsGrad" },
	Sig:  func(op keepOp) opkit.Sig { return opkit.Mats(op.arity() + 1) },
	Shape: func(op keepOp, in []tensor.Shape) (tensor.Shape, error) {
		return tensor.Shape{op.d, 2}, op.shape(in)
	},
	Hash: keepOp.hash,
	F32:  keepGradFwd[float32],
	F64:  keepGradFwd[float64],
}

func keepGradFwd[T float32 | float64](op keepOp, a opkit.Args[T]) error {
	k := op.arity()
	p := keepProbsOf(op, a.In[:k])
	g := asF64(a.In[k])
	out := make([]float64, 2*op.d)
	for j, pj := range p {
		v := g[j] * pj * (1 - pj) * op.invT
		out[2*j], out[2*j+1] = v, -v
	}
	putF64(a.Out, out)
	return nil
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
	return opkit.Apply(halfMSESpec, halfMSEOp{m: s[0]}, a)
}

// halfMSEOp holds halfMSE's parameters; with grad set it is its
// gradient (inputs a, g).
type halfMSEOp struct {
	m    int
	grad bool
}

var halfMSESpec = &opkit.Spec[halfMSEOp]{
	ID: "fairmp.fair.HalfMSE",
	Name: func(op halfMSEOp) string {
		if op.grad {
			return fmt.Sprintf("HalfMSEGrad(%d)", op.m)
		}
		return fmt.Sprintf("HalfMSE(%d)", op.m)
	},
	Sig: func(op halfMSEOp) opkit.Sig {
		if op.grad {
			return lossGradSig(op)
		}
		return scalarSig(op)
	},
	Shape: func(op halfMSEOp, in []tensor.Shape) (tensor.Shape, error) {
		if op.grad {
			return tensor.Shape{op.m, 1}, logitsShape(in[0], op.m, 1)
		}
		return tensor.ScalarShape(), logitsShape(in[0], op.m, 1)
	},
	Hash:    func(op halfMSEOp, h opkit.Hasher) { h.Int(op.m); h.Bool(op.grad) },
	F32:     halfMSEFwd[float32],
	F64:     halfMSEFwd[float64],
	DiffWRT: func(halfMSEOp, int) []bool { return []bool{true} },
	Grad: func(o *opkit.Op[halfMSEOp], inputs G.Nodes, _, grad *G.Node) (G.Nodes, error) {
		d, err := o.Apply(halfMSEOp{m: o.P.m, grad: true}, inputs[0], grad)
		if err != nil {
			return nil, err
		}
		return G.Nodes{d}, nil
	},
}

func halfMSEFwd[T float32 | float64](op halfMSEOp, x opkit.Args[T]) error {
	a := asF64(x.In[0])
	if !op.grad {
		s := 0.0
		for _, v := range a {
			e := sigmoid(v) - 0.5
			s += e * e
		}
		x.Out[0] = T(s / float64(op.m))
		return nil
	}
	g := float64(x.In[1][0])
	for k, v := range a {
		p := sigmoid(v)
		x.Out[k] = T(g * 2 * (p - 0.5) * p * (1 - p) / float64(op.m))
	}
	return nil
}
