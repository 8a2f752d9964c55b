package layers

import (
	"encoding/binary"
	"fmt"
	"hash/fnv"

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
	p := &ceParams{labels: append([]int(nil), labels...), idx: append([]int(nil), idx...), key: h.Sum64(), n: n, c: c, unique: unique}
	return opkit.Apply(ceSpec, p, logits)
}

type ceParams struct {
	labels []int
	idx    []int
	key    uint64 // hash of (idx, labels[idx])
	n, c   int
	unique bool // no row twice in idx: the gradient's rows can be written in parallel
}

// logits is the shape rule's check of the logits, n × c.
func (p *ceParams) logits(s tensor.Shape) error {
	if s[0] != p.n || s[1] != p.c {
		return fmt.Errorf("logits shape %v, want %d × %d", s, p.n, p.c)
	}
	return nil
}

// ceSpec is CrossEntropy.
var ceSpec = &opkit.Spec[*ceParams]{
	ID:   "fairmp.CrossEntropy",
	Name: func(p *ceParams) string { return fmt.Sprintf("CrossEntropy(%d rows)", len(p.idx)) },
	Sig:  func(*ceParams) opkit.Sig { return opkit.Sig{In: []int{2}, Out: 0} },
	Shape: func(p *ceParams, in []tensor.Shape) (tensor.Shape, error) {
		return tensor.ScalarShape(), p.logits(in[0])
	},
	Hash: func(p *ceParams, h opkit.Hasher) { h.U64(p.key) },
	F32:  ceFwd[float32],
	F64:  ceFwd[float64],
	Grad: func(op *opkit.Op[*ceParams], inputs G.Nodes, _, grad *G.Node) (G.Nodes, error) {
		d, err := opkit.Apply(ceGradSpec, op.P, inputs[0], grad)
		if err != nil {
			return nil, err
		}
		return G.Nodes{d}, nil
	},
}

func ceFwd[T float32 | float64](p *ceParams, a opkit.Args[T]) error {
	a.Out[0] = T(opkit.MeanCE(a.In[0], p.labels, p.idx, p.c))
	return nil
}

// ceGradSpec computes grad · ∂CE/∂z from (z, grad). It is not itself
// differentiable (second-order gradients of the loss are not supported).
var ceGradSpec = &opkit.Spec[*ceParams]{
	ID:   "fairmp.CrossEntropyGrad",
	Name: func(p *ceParams) string { return fmt.Sprintf("CrossEntropyGrad(%d rows)", len(p.idx)) },
	Sig:  func(*ceParams) opkit.Sig { return opkit.Sig{In: []int{2, 0}, Out: 2} },
	Shape: func(p *ceParams, in []tensor.Shape) (tensor.Shape, error) {
		return tensor.Shape{p.n, p.c}, p.logits(in[0])
	},
	Hash: func(p *ceParams, h opkit.Hasher) { h.U64(p.key) },
	F32:  ceGradFwd[float32],
	F64:  ceGradFwd[float64],
	Keep: true,
}

func ceGradFwd[T float32 | float64](p *ceParams, a opkit.Args[T]) error {
	scale := float64(a.In[1][0]) / float64(len(p.idx))
	ceGrad(a.Out, a.In[0], p.labels, p.idx, p.c, scale, p.unique)
	return nil
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
