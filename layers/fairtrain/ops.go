package fairtrain

import (
	"fmt"
	"hash/fnv"
	"math"
	"sync/atomic"

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
	return opkit.Apply(dpGapSpec, op, logits)
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

// dpGapOp holds DPGap's parameters (dpGapSpec).
type dpGapOp struct {
	n, c, pos int
	rows, grp []int // rows of z in the gap and their groups
	counts    []int
	key       uint64
}

// logitsShape is the shape rule's check of the n × c logits.
func logitsShape(s tensor.Shape, n, c int) error {
	if s[0] != n || s[1] != c {
		return fmt.Errorf("input shape %v, want %d × %d", s, n, c)
	}
	return nil
}

// scalarSig is the signature of a loss: a matrix to a scalar.
func scalarSig[P any](P) opkit.Sig { return opkit.Sig{In: []int{2}, Out: 0} }

// lossGradSig is the signature of a loss's gradient: (input, scalar
// gradient) to a matrix.
func lossGradSig[P any](P) opkit.Sig { return opkit.Sig{In: []int{2, 0}, Out: 2} }

var dpGapSpec = &opkit.Spec[*dpGapOp]{
	ID: "fairmp.fair.DPGap",
	Name: func(op *dpGapOp) string {
		return fmt.Sprintf("DPGap(%d rows, %d groups)", len(op.rows), len(op.counts))
	},
	Sig: scalarSig[*dpGapOp],
	Shape: func(op *dpGapOp, in []tensor.Shape) (tensor.Shape, error) {
		return tensor.ScalarShape(), logitsShape(in[0], op.n, op.c)
	},
	Hash: func(op *dpGapOp, h opkit.Hasher) { h.U64(op.key) },
	F32:  dpGapFwd[float32],
	F64:  dpGapFwd[float64],
	Grad: func(o *opkit.Op[*dpGapOp], inputs G.Nodes, _, grad *G.Node) (G.Nodes, error) {
		d, err := opkit.Apply(dpGapGradSpec, o.P, inputs[0], grad)
		if err != nil {
			return nil, err
		}
		return G.Nodes{d}, nil
	},
}

func dpGapFwd[T float32 | float64](op *dpGapOp, a opkit.Args[T]) error {
	means := groupMeans(op, a.In[0])
	hi, lo := argMaxMin(means)
	a.Out[0] = T(means[hi] - means[lo])
	return nil
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

// dpGapGradSpec computes grad · ∂DPGap/∂z from (z, grad).
var dpGapGradSpec = &opkit.Spec[*dpGapOp]{
	ID:   "fairmp.fair.DPGapGrad",
	Name: func(*dpGapOp) string { return "DPGapGrad" },
	Sig:  lossGradSig[*dpGapOp],
	Shape: func(op *dpGapOp, in []tensor.Shape) (tensor.Shape, error) {
		return tensor.Shape{op.n, op.c}, logitsShape(in[0], op.n, op.c)
	},
	Hash: func(op *dpGapOp, h opkit.Hasher) { h.U64(op.key) },
	F32: func(op *dpGapOp, a opkit.Args[float32]) error {
		dpGapGrad(op, a.Out, a.In[0], float64(a.In[1][0]))
		return nil
	},
	F64: func(op *dpGapOp, a opkit.Args[float64]) error {
		dpGapGrad(op, a.Out, a.In[0], a.In[1][0])
		return nil
	},
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
	return opkit.Apply(bceSpec, op, a)
}

// bceOp holds BCEWithLogits's (and BCEWithLogitsSoft's) parameters.
type bceOp struct {
	y   []float64
	key uint64
}

var bceSpec = &opkit.Spec[*bceOp]{
	ID:   "fairmp.fair.BCEWithLogits",
	Name: func(op *bceOp) string { return fmt.Sprintf("BCEWithLogits(%d)", len(op.y)) },
	Sig:  scalarSig[*bceOp],
	Shape: func(op *bceOp, in []tensor.Shape) (tensor.Shape, error) {
		return tensor.ScalarShape(), logitsShape(in[0], len(op.y), 1)
	},
	Hash: func(op *bceOp, h opkit.Hasher) { h.Int(len(op.y)); h.U64(op.key) },
	F32:  bceFwd[float32],
	F64:  bceFwd[float64],
	Grad: func(o *opkit.Op[*bceOp], inputs G.Nodes, _, grad *G.Node) (G.Nodes, error) {
		d, err := opkit.Apply(bceGradSpec, o.P, inputs[0], grad)
		if err != nil {
			return nil, err
		}
		return G.Nodes{d}, nil
	},
}

func bceFwd[T float32 | float64](op *bceOp, a opkit.Args[T]) error {
	a.Out[0] = T(bceLoss(a.In[0], op.y))
	return nil
}

var bceGradSpec = &opkit.Spec[*bceOp]{
	ID:   "fairmp.fair.BCEWithLogitsGrad",
	Name: func(*bceOp) string { return "BCEWithLogitsGrad" },
	Sig:  lossGradSig[*bceOp],
	Shape: func(op *bceOp, in []tensor.Shape) (tensor.Shape, error) {
		return tensor.Shape{len(op.y), 1}, logitsShape(in[0], len(op.y), 1)
	},
	Hash: func(op *bceOp, h opkit.Hasher) { h.Int(len(op.y)); h.U64(op.key) },
	F32:  bceGradFwd[float32],
	F64:  bceGradFwd[float64],
}

func bceGradFwd[T float32 | float64](op *bceOp, a opkit.Args[T]) error {
	scale := float64(a.In[1][0]) / float64(len(op.y))
	for k, v := range a.In[0] {
		a.Out[k] = T(scale * (sigmoid(float64(v)) - op.y[k]))
	}
	return nil
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

// ---------------------------------------------------------------------
// capture: identity that keeps a float64 copy of its input's last value.

type captureOp struct {
	r, c int
	id   uint64
	buf  []float64
}

func capture(x *G.Node) (*G.Node, *captureOp, error) {
	s := x.Shape()
	op := &captureOp{r: s[0], c: s[1], id: opIDs.Add(1), buf: make([]float64, s[0]*s[1])}
	out, err := opkit.Apply(captureSpec, op, x)
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

var captureSpec = &opkit.Spec[*captureOp]{
	ID:   "fairmp.fair.Capture",
	Name: func(op *captureOp) string { return fmt.Sprintf("Capture#%d", op.id) },
	Sig:  func(*captureOp) opkit.Sig { return opkit.Mats(1) },
	Shape: func(op *captureOp, in []tensor.Shape) (tensor.Shape, error) {
		return tensor.Shape{op.r, op.c}, logitsShape(in[0], op.r, op.c)
	},
	Hash: func(op *captureOp, h opkit.Hasher) { h.U64(op.id) },
	F32:  captureFwd[float32],
	F64:  captureFwd[float64],
	Grad: func(_ *opkit.Op[*captureOp], _ G.Nodes, _, grad *G.Node) (G.Nodes, error) {
		return G.Nodes{grad}, nil
	},
}

func captureFwd[T float32 | float64](op *captureOp, a opkit.Args[T]) error {
	for i, v := range a.In[0] {
		op.buf[i] = float64(v)
	}
	copy(a.Out, a.In[0])
	return nil
}
