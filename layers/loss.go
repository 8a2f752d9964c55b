package layers

import (
	"encoding/binary"
	"fmt"
	"hash"
	"hash/fnv"

	"github.com/chewxy/hm"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/fairmp/fairmp/internal/opkit"
	"github.com/fairmp/fairmp/internal/par"
)

// CrossEntropy returns the scalar node
//
//	(1/|idx|) Σ_{i ∈ idx} ( log Σ_j exp(z_ij) − z_{i,labels[i]} ),
//
// the mean softmax cross-entropy of the n × c logits z over the nodes in
// idx (PyTorch's F.cross_entropy(z[idx], y[idx])). The log-sum-exp is
// computed with max-subtraction and accumulated in float64 for both
// dtypes, so large logits neither overflow nor lose the loss. The gradient
// with respect to z is (softmax(z_i) − onehot(labels[i]))/|idx| on rows in
// idx (counted once per occurrence) and zero elsewhere.
//
// labels holds one class per row of z (entries outside idx are ignored and
// may be −1 for unknown); idx lists the rows in the loss. Both are copied.
// CrossEntropy returns an error if z is not a float matrix, if
// len(labels) differs from its row count, if idx is empty or holds an
// out-of-range row, or if a label in idx is not in [0, c).
func CrossEntropy(logits *G.Node, labels []int, idx []int) (*G.Node, error) {
	if logits == nil {
		return nil, fmt.Errorf("layers: CrossEntropy: nil logits node")
	}
	if err := opkit.CheckFloat(logits.Dtype()); err != nil {
		return nil, fmt.Errorf("layers: CrossEntropy: logits %q (node %d): %w", logits.Name(), logits.ID(), err)
	}
	s := logits.Shape()
	if len(s) != 2 {
		return nil, fmt.Errorf("layers: CrossEntropy: logits %q (node %d) have shape %v, want n × classes", logits.Name(), logits.ID(), s)
	}
	n, c := s[0], s[1]
	if len(labels) != n {
		return nil, fmt.Errorf("layers: CrossEntropy: %d labels for %d rows of logits %q (node %d), want one per row", len(labels), n, logits.Name(), logits.ID())
	}
	if len(idx) == 0 {
		return nil, fmt.Errorf("layers: CrossEntropy: empty index set, want at least one row")
	}
	h := fnv.New64a()
	var b [8]byte
	for k, i := range idx {
		if i < 0 || i >= n {
			return nil, fmt.Errorf("layers: CrossEntropy: idx[%d] = %d, want a row in [0, %d)", k, i, n)
		}
		if labels[i] < 0 || labels[i] >= c {
			return nil, fmt.Errorf("layers: CrossEntropy: label of row %d (idx[%d]) is %d, want a class in [0, %d)", i, k, labels[i], c)
		}
		binary.LittleEndian.PutUint64(b[:], uint64(i))
		h.Write(b[:])
		binary.LittleEndian.PutUint64(b[:], uint64(labels[i]))
		h.Write(b[:])
	}
	seen := make([]bool, n)
	unique := true
	for _, i := range idx {
		if seen[i] {
			unique = false
			break
		}
		seen[i] = true
	}
	op := &ceOp{labels: append([]int(nil), labels...), idx: append([]int(nil), idx...), key: h.Sum64(), n: n, c: c, unique: unique}
	return G.ApplyOp(op, logits)
}

type ceOp struct {
	opkit.Pure
	labels []int
	idx    []int
	key    uint64 // hash of (idx, labels[idx])
	n, c   int
	unique bool // no row twice in idx: the gradient's rows can be written in parallel
}

var _ G.SDOp = (*ceOp)(nil)

func (op *ceOp) Arity() int { return 1 }
func (op *ceOp) Type() hm.Type {
	return hm.NewFnType(opkit.MatrixType(), hm.TypeVariable('a'))
}
func (op *ceOp) DiffWRT(inputs int) []bool { return []bool{true} }
func (op *ceOp) String() string            { return fmt.Sprintf("CrossEntropy(%d rows)", len(op.idx)) }
func (op *ceOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	return tensor.ScalarShape(), nil
}
func (op *ceOp) WriteHash(h hash.Hash) {
	fmt.Fprintf(h, "fairmp.CrossEntropy")
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], op.key)
	h.Write(b[:])
}
func (op *ceOp) Hashcode() uint32 { return opkit.Hash32(op.WriteHash) }

func (op *ceOp) checkInput(v G.Value) (*tensor.Dense, error) {
	z, err := opkit.Dense(v)
	if err != nil {
		return nil, fmt.Errorf("%v: %w", op, err)
	}
	r, c, err := opkit.Shape2(z)
	if err != nil || r != op.n || c != op.c {
		return nil, fmt.Errorf("%v: logits shape %v, want %d × %d", op, z.Shape(), op.n, op.c)
	}
	return z, nil
}

func (op *ceOp) Do(inputs ...G.Value) (G.Value, error) {
	if len(inputs) != 1 {
		return nil, fmt.Errorf("%v: %d inputs, want 1", op, len(inputs))
	}
	z, err := op.checkInput(inputs[0])
	if err != nil {
		return nil, err
	}
	switch zs := z.Data().(type) {
	case []float64:
		return G.NewF64(opkit.MeanCE(zs, op.labels, op.idx, op.c)), nil
	case []float32:
		return G.NewF32(float32(opkit.MeanCE(zs, op.labels, op.idx, op.c))), nil
	}
	return nil, fmt.Errorf("%v: dtype %v, want float32 or float64", op, z.Dtype())
}

func (op *ceOp) SymDiff(inputs G.Nodes, output, grad *G.Node) (G.Nodes, error) {
	d, err := G.ApplyOp(&ceGradOp{ce: op}, inputs[0], grad)
	if err != nil {
		return nil, err
	}
	return G.Nodes{d}, nil
}

// ceGradOp computes grad · ∂CE/∂z from (z, grad). It is not itself
// differentiable (second-order gradients of the loss are not supported).
type ceGradOp struct {
	opkit.NoDiff // never differentiated
	opkit.Buf    // the output, kept between runs
	opkit.Pure
	ce *ceOp
}

var _ G.UsePreallocDoer = (*ceGradOp)(nil)

func (op *ceGradOp) Arity() int { return 2 }
func (op *ceGradOp) Type() hm.Type {
	return hm.NewFnType(opkit.MatrixType(), hm.TypeVariable('a'), opkit.MatrixType())
}
func (op *ceGradOp) String() string { return fmt.Sprintf("CrossEntropyGrad(%d rows)", len(op.ce.idx)) }
func (op *ceGradOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	return tensor.Shape{op.ce.n, op.ce.c}, nil
}
func (op *ceGradOp) WriteHash(h hash.Hash) {
	fmt.Fprintf(h, "fairmp.CrossEntropyGrad")
	op.ce.WriteHash(h)
}
func (op *ceGradOp) Hashcode() uint32 { return opkit.Hash32(op.WriteHash) }
func (op *ceGradOp) Do(inputs ...G.Value) (G.Value, error) {
	return op.UsePreallocDo(nil, inputs...)
}

func (op *ceGradOp) UsePreallocDo(prealloc G.Value, inputs ...G.Value) (G.Value, error) {
	if len(inputs) != 2 {
		return nil, fmt.Errorf("%v: %d inputs, want 2", op, len(inputs))
	}
	z, err := op.ce.checkInput(inputs[0])
	if err != nil {
		return nil, err
	}
	g, err := opkit.Scalar(inputs[1])
	if err != nil {
		return nil, fmt.Errorf("%v: gradient: %w", op, err)
	}
	out := op.Get(prealloc, z.Dtype(), op.ce.n, op.ce.c)
	scale := g / float64(len(op.ce.idx))
	switch zs := z.Data().(type) {
	case []float64:
		ceGrad(out.Data().([]float64), zs, op.ce.labels, op.ce.idx, op.ce.c, scale, op.ce.unique)
	case []float32:
		ceGrad(out.Data().([]float32), zs, op.ce.labels, op.ce.idx, op.ce.c, scale, op.ce.unique)
	default:
		return nil, fmt.Errorf("%v: dtype %v, want float32 or float64", op, z.Dtype())
	}
	return out, nil
}

func ceGrad[T float32 | float64](out, z []T, labels, idx []int, c int, scale float64, unique bool) {
	clear(out)
	rows := func(idx []int) {
		p := make([]float64, c)
		for _, i := range idx {
			o := out[i*c : (i+1)*c]
			opkit.SoftmaxRow(z[i*c:(i+1)*c], p, 1)
			for j := range p {
				pj := p[j]
				if j == labels[i] {
					pj--
				}
				o[j] += T(scale * pj)
			}
		}
	}
	if !unique || len(idx) < 2*ceGradGrain {
		rows(idx)
		return
	}
	// Each row is written by one chunk alone: the same values as the
	// loop above.
	par.Chunks(len(idx), ceGradGrain, func(lo, hi int) { rows(idx[lo:hi]) })
}

// ceGradGrain is the number of nodes per parallel chunk of ceGrad.
const ceGradGrain = 4096
