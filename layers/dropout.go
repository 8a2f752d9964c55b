package layers

import (
	"encoding/binary"
	"fmt"
	"hash"
	"math"
	"math/rand"
	"sync/atomic"

	"github.com/chewxy/hm"
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
	op := &dropoutOp{p: p, seed: seed, phase: phase, dims: dims, rng: rand.New(rand.NewSource(seed)), id: opIDs.Add(1)}
	return G.ApplyOp(op, x)
}

// dropoutOp holds its RNG and the mask of its latest training run. The
// mask holds 0 or 1/(1−p) per element, in the input's dtype.
type dropoutOp struct {
	opkit.Buf // the output, kept between runs
	opkit.Pure
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

var (
	_ G.SDOp            = (*dropoutOp)(nil)
	_ G.UsePreallocDoer = (*dropoutOp)(nil)
)

func tensorType(dims int) hm.Type {
	if dims == 2 {
		return opkit.MatrixType()
	}
	return &G.TensorType{Dims: dims, Of: hm.TypeVariable('a')}
}

func (op *dropoutOp) Arity() int                { return 1 }
func (op *dropoutOp) Type() hm.Type             { return hm.NewFnType(tensorType(op.dims), tensorType(op.dims)) }
func (op *dropoutOp) DiffWRT(inputs int) []bool { return []bool{true} }
func (op *dropoutOp) String() string            { return fmt.Sprintf("Dropout(p=%g,seed=%d)", op.p, op.seed) }
func (op *dropoutOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	if len(in) != 1 {
		return nil, fmt.Errorf("Dropout: %d inputs, want 1", len(in))
	}
	s, ok := in[0].(tensor.Shape)
	if !ok {
		return nil, fmt.Errorf("Dropout: input shape %v, want a tensor shape", in[0])
	}
	return s.Clone(), nil
}

func (op *dropoutOp) WriteHash(h hash.Hash) {
	fmt.Fprintf(h, "fairmp.Dropout")
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], math.Float64bits(op.p))
	h.Write(b[:])
	binary.LittleEndian.PutUint64(b[:], uint64(op.seed))
	h.Write(b[:])
	fmt.Fprintf(h, "%p", op.phase)
}

func (op *dropoutOp) Hashcode() uint32 { return opkit.Hash32(op.WriteHash) }

func (op *dropoutOp) Do(inputs ...G.Value) (G.Value, error) {
	return op.UsePreallocDo(nil, inputs...)
}

func (op *dropoutOp) UsePreallocDo(prealloc G.Value, inputs ...G.Value) (G.Value, error) {
	if len(inputs) != 1 {
		return nil, fmt.Errorf("%v: %d inputs, want 1", op, len(inputs))
	}
	x, err := opkit.Dense(inputs[0])
	if err != nil {
		return nil, fmt.Errorf("%v: %w", op, err)
	}
	out := op.Get(prealloc, x.Dtype(), x.Shape()...)
	train := op.phase.Training()
	op.masked = train
	switch xs := x.Data().(type) {
	case []float64:
		o := out.Data().([]float64)
		if !train {
			copy(o, xs)
			return out, nil
		}
		if len(op.mask64) != len(xs) {
			op.mask64 = make([]float64, len(xs))
		}
		opkit.Dropout(op.rng, op.p, op.mask64, xs, o)
	case []float32:
		o := out.Data().([]float32)
		if !train {
			copy(o, xs)
			return out, nil
		}
		if len(op.mask32) != len(xs) {
			op.mask32 = make([]float32, len(xs))
		}
		opkit.Dropout(op.rng, op.p, op.mask32, xs, o)
	default:
		return nil, fmt.Errorf("%v: dtype %v, want float32 or float64", op, x.Dtype())
	}
	return out, nil
}

func (op *dropoutOp) SymDiff(inputs G.Nodes, output, grad *G.Node) (G.Nodes, error) {
	d, err := G.ApplyOp(&maskMulOp{d: op}, grad)
	if err != nil {
		return nil, err
	}
	return G.Nodes{d}, nil
}

// maskMulOp multiplies its input by the mask of a dropout op's latest
// training run (the identity when that run was in evaluation mode). It is
// the gradient of Dropout, and its own gradient.
type maskMulOp struct {
	opkit.Buf // the output, kept between runs
	opkit.Pure
	d *dropoutOp
}

var (
	_ G.SDOp            = (*maskMulOp)(nil)
	_ G.UsePreallocDoer = (*maskMulOp)(nil)
)

func (op *maskMulOp) Arity() int { return 1 }
func (op *maskMulOp) Type() hm.Type {
	return hm.NewFnType(tensorType(op.d.dims), tensorType(op.d.dims))
}
func (op *maskMulOp) DiffWRT(inputs int) []bool { return []bool{true} }
func (op *maskMulOp) String() string            { return fmt.Sprintf("DropoutMask#%d", op.d.id) }
func (op *maskMulOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	return op.d.InferShape(in...)
}
func (op *maskMulOp) WriteHash(h hash.Hash) {
	fmt.Fprintf(h, "fairmp.DropoutMask")
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], op.d.id)
	h.Write(b[:])
}
func (op *maskMulOp) Hashcode() uint32 { return opkit.Hash32(op.WriteHash) }
func (op *maskMulOp) Do(inputs ...G.Value) (G.Value, error) {
	return op.UsePreallocDo(nil, inputs...)
}
func (op *maskMulOp) UsePreallocDo(prealloc G.Value, inputs ...G.Value) (G.Value, error) {
	if len(inputs) != 1 {
		return nil, fmt.Errorf("%v: %d inputs, want 1", op, len(inputs))
	}
	x, err := opkit.Dense(inputs[0])
	if err != nil {
		return nil, fmt.Errorf("%v: %w", op, err)
	}
	out := op.Get(prealloc, x.Dtype(), x.Shape()...)
	switch xs := x.Data().(type) {
	case []float64:
		o := out.Data().([]float64)
		if !op.d.masked {
			copy(o, xs)
			break
		}
		if len(op.d.mask64) != len(xs) {
			return nil, fmt.Errorf("%v: %d elements, the forward mask has %d", op, len(xs), len(op.d.mask64))
		}
		for i, v := range xs {
			o[i] = v * op.d.mask64[i]
		}
	case []float32:
		o := out.Data().([]float32)
		if !op.d.masked {
			copy(o, xs)
			break
		}
		if len(op.d.mask32) != len(xs) {
			return nil, fmt.Errorf("%v: %d elements, the forward mask has %d", op, len(xs), len(op.d.mask32))
		}
		for i, v := range xs {
			o[i] = v * op.d.mask32[i]
		}
	default:
		return nil, fmt.Errorf("%v: dtype %v, want float32 or float64", op, x.Dtype())
	}
	return out, nil
}
func (op *maskMulOp) SymDiff(inputs G.Nodes, output, grad *G.Node) (G.Nodes, error) {
	d, err := G.ApplyOp(&maskMulOp{d: op.d}, grad)
	if err != nil {
		return nil, err
	}
	return G.Nodes{d}, nil
}
