package layers

import (
	"fmt"
	"math/rand"
	"sync/atomic"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/fairmp/fairmp/internal/opkit"
)

// opIDs numbers op instances whose state (a mask) must not be shared
// with another instance.
var opIDs atomic.Uint64

// Dropout returns inverted dropout of x: in training (phase.Training()),
// each element is zeroed with probability p and the kept elements are
// scaled by 1/(1−p), so the expected value is unchanged; in evaluation
// (phase nil or not training) the output equals x.
//
// The mask is drawn from math/rand seeded with seed: the sequence of masks
// over successive training runs of the graph is a function of seed only.
// The gradient multiplies by the same mask as the forward pass of the same
// run. The op's hash includes p and seed, so two dropouts of one node with
// different p or seed stay two nodes (gorgonia's built-in Dropout merges
// them, scales by 1/p in its gradient and seeds from the clock).
//
// x may have any number of dimensions. p = 0 returns x itself. Dropout
// returns an error for p outside [0, 1), a nil node or a non-float dtype.
func Dropout(x *G.Node, p float64, seed int64, phase *Phase) (*G.Node, error) {
	if x == nil {
		return nil, fmt.Errorf("layers: Dropout: nil input node")
	}
	if !(p >= 0 && p < 1) {
		return nil, fmt.Errorf("layers: Dropout: p = %v for input %q (node %d), want 0 <= p < 1", p, x.Name(), x.ID())
	}
	if err := opkit.CheckFloat(x.Dtype()); err != nil {
		return nil, fmt.Errorf("layers: Dropout: input %q (node %d): %w", x.Name(), x.ID(), err)
	}
	if p == 0 {
		return x, nil
	}
	dims := x.Shape().Dims()
	if dims == 0 {
		return nil, fmt.Errorf("layers: Dropout: input %q (node %d) is a scalar, want a tensor", x.Name(), x.ID())
	}
	d := &dropState{p: p, seed: seed, phase: phase, dims: dims, rng: rand.New(rand.NewSource(seed)), id: opIDs.Add(1)}
	return opkit.Apply(dropoutSpec, d, x)
}

// dropState is a dropout op's parameters, its RNG and the mask of its
// latest training run. The mask holds 0 or 1/(1−p) per element, in the
// input's dtype.
type dropState struct {
	p     float64
	seed  int64
	phase *Phase
	dims  int
	id    uint64

	rng    *rand.Rand
	masked bool // the latest forward run applied a mask
	mask64 []float64
	mask32 []float32
}

// mask returns the mask of element type T.
func dropMask[T float32 | float64](d *dropState) *[]T {
	if m, ok := any(&d.mask32).(*[]T); ok {
		return m
	}
	return any(&d.mask64).(*[]T)
}

// sameShape is the shape rule of the element-wise ops of one input.
func sameShape[P any](_ P, in []tensor.Shape) (tensor.Shape, error) { return in[0], nil }

// dropoutSpec is Dropout: its gradient multiplies by the same run's mask.
var dropoutSpec = &opkit.Spec[*dropState]{
	ID:    "fairmp.Dropout",
	Name:  func(d *dropState) string { return fmt.Sprintf("Dropout(p=%g,seed=%d)", d.p, d.seed) },
	Sig:   func(d *dropState) opkit.Sig { return opkit.Same(d.dims, 1) },
	Shape: sameShape[*dropState],
	Hash: func(d *dropState, h opkit.Hasher) {
		h.F64(d.p)
		h.Int(int(d.seed))
		h.Str(fmt.Sprintf("%p", d.phase))
	},
	F32: dropoutFwd[float32],
	F64: dropoutFwd[float64],
	Grad: func(op *opkit.Op[*dropState], _ G.Nodes, _, grad *G.Node) (G.Nodes, error) {
		d, err := opkit.Apply(maskMulSpec, op.P, grad)
		if err != nil {
			return nil, err
		}
		return G.Nodes{d}, nil
	},
	Keep: true,
}

func dropoutFwd[T float32 | float64](d *dropState, a opkit.Args[T]) error {
	train := d.phase.Training()
	d.masked = train
	xs := a.In[0]
	if !train {
		copy(a.Out, xs)
		return nil
	}
	m := dropMask[T](d)
	if len(*m) != len(xs) {
		*m = make([]T, len(xs))
	}
	opkit.Dropout(d.rng, d.p, *m, xs, a.Out)
	return nil
}

// maskMulSpec multiplies its input by the mask of a dropout op's latest
// training run (the identity when that run was in evaluation mode). It is
// the gradient of Dropout, and its own gradient.
var maskMulSpec = &opkit.Spec[*dropState]{
	ID:    "fairmp.DropoutMask",
	Name:  func(d *dropState) string { return fmt.Sprintf("DropoutMask#%d", d.id) },
	Sig:   func(d *dropState) opkit.Sig { return opkit.Same(d.dims, 1) },
	Shape: sameShape[*dropState],
	Hash:  func(d *dropState, h opkit.Hasher) { h.U64(d.id) },
	F32:   maskMulFwd[float32],
	F64:   maskMulFwd[float64],
	Grad: func(op *opkit.Op[*dropState], _ G.Nodes, _, grad *G.Node) (G.Nodes, error) {
		d, err := op.Apply(op.P, grad)
		if err != nil {
			return nil, err
		}
		return G.Nodes{d}, nil
	},
	Keep: true,
}

func maskMulFwd[T float32 | float64](d *dropState, a opkit.Args[T]) error {
	xs := a.In[0]
	if !d.masked {
		copy(a.Out, xs)
		return nil
	}
	m := *dropMask[T](d)
	if len(m) != len(xs) {
		return fmt.Errorf("%d elements, the forward mask has %d", len(xs), len(m))
	}
	for i, v := range xs {
		a.Out[i] = v * m[i]
	}
	return nil
}
