package layers

// Scale, s·h for a learnable 1 × 1 s (a learnable coefficient of
// Combine, GIN's ε): its implementations together, one per flow:
// countFlow (Hops), nodeFlow (gorgonia: Forward and ForwardBlocks) and
// rowFlow (plain Go: LayerwiseLogits). The Beam one is beamFlow's, in
// package fmp/fmpbeam (a module of its own, so that this one does not
// depend on Beam).

import (
	"fmt"
	"hash"

	"github.com/chewxy/hm"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/fairmp/fairmp/internal/opkit"
)

func (f *countFlow) Scale(h Value, s *G.Node) (Value, error) {
	if err := checkScale(s); err != nil {
		return Value{}, err
	}
	return f.at(h, h.cols, h.level), nil
}

func checkScale(s *G.Node) error {
	if s == nil || s.Dims() != 2 || s.Shape()[0] != 1 || s.Shape()[1] != 1 {
		return fmt.Errorf("%w: Scale: the coefficient is %s, want a 1 × 1 parameter", ErrFlow, describe(s))
	}
	return nil
}

// Scale is scaleOp.
func (f *nodeFlow) Scale(h Value, s *G.Node) (Value, error) {
	if err := checkScale(s); err != nil {
		return Value{}, err
	}
	x, err := f.node(h)
	if err != nil {
		return Value{}, err
	}
	y, err := scale(x, s)
	if err != nil {
		return Value{}, err
	}
	return f.val(y, h.cols, h.level), nil
}

func (f *rowFlow[T]) Scale(h Value, s *G.Node) (Value, error) {
	if err := checkScale(s); err != nil {
		return Value{}, err
	}
	in, err := f.rowsOf(h)
	if err != nil {
		return Value{}, err
	}
	sv, ok := s.Value().Data().([]T)
	if !ok {
		return Value{}, fmt.Errorf("%w: Scale: coefficient %q is %v, the flow runs in another dtype", ErrFlow, s.Name(), s.Dtype())
	}
	c := sv[0]
	return valueOf(&rows[T]{chunk: func(lo, hi int) ([]T, error) {
		x, err := in.chunkOf(lo, hi, h.cols)
		if err != nil {
			return nil, err
		}
		y := make([]T, len(x))
		for k, v := range x {
			y[k] = c * v
		}
		return y, nil
	}}, h.cols), nil
}

// scale returns the node s·x for a matrix x and a 1 × 1 s of its dtype.
// Its gradients are s·dY with respect to x and Σ x ⊙ dY (1 × 1) with
// respect to s.
func scale(x, s *G.Node) (*G.Node, error) {
	if x.Dims() != 2 || s.Dtype() != x.Dtype() {
		return nil, fmt.Errorf("layers: Scale: %s by %s, want a matrix and a 1 × 1 coefficient of its dtype", opkit.DescribeNode(x), opkit.DescribeNode(s))
	}
	return G.ApplyOp(scaleOp{}, x, s)
}

// scaleOp is s·x (inputs x, then s).
type scaleOp struct{ opkit.Pure }

var _ G.SDOp = scaleOp{}

func (scaleOp) Arity() int                { return 2 }
func (scaleOp) Type() hm.Type             { return opkit.FnType(2) }
func (scaleOp) DiffWRT(inputs int) []bool { return []bool{true, true} }
func (scaleOp) String() string            { return "Scale" }
func (scaleOp) WriteHash(h hash.Hash)     { fmt.Fprint(h, "fairmp.Scale") }
func (op scaleOp) Hashcode() uint32       { return opkit.Hash32(op.WriteHash) }
func (op scaleOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	s, err := opkit.InputShapes(in, 2, op.String())
	if err != nil {
		return nil, err
	}
	return s[0].Clone(), nil
}

func (op scaleOp) Do(inputs ...G.Value) (G.Value, error) {
	in, sh, err := opkit.DenseInputs(op, 2, inputs)
	if err != nil {
		return nil, err
	}
	if sh[1] != [2]int{1, 1} || in[0].Dtype() != in[1].Dtype() {
		return nil, fmt.Errorf("%v: coefficient %v %v for a %v input, want 1 × 1 of its dtype", op, sh[1], in[1].Dtype(), in[0].Dtype())
	}
	out := opkit.Alloc(in[0].Dtype(), sh[0][0], sh[0][1])
	switch x := in[0].Data().(type) {
	case []float64:
		scaleInto(out.Data().([]float64), x, in[1].Data().([]float64)[0])
	case []float32:
		scaleInto(out.Data().([]float32), x, in[1].Data().([]float32)[0])
	default:
		return nil, fmt.Errorf("%v: dtype %v, want float32 or float64", op, in[0].Dtype())
	}
	return out, nil
}

func scaleInto[T float32 | float64](out, x []T, s T) {
	for k, v := range x {
		out[k] = s * v
	}
}

func (scaleOp) SymDiff(inputs G.Nodes, output, grad *G.Node) (G.Nodes, error) {
	dx, err := G.ApplyOp(scaleOp{}, grad, inputs[1])
	if err != nil {
		return nil, err
	}
	ds, err := G.ApplyOp(dotAllOp{}, inputs[0], grad)
	if err != nil {
		return nil, err
	}
	return G.Nodes{dx, ds}, nil
}

// dotAllOp is the 1 × 1 Σ a ⊙ b of two matrices of one shape: scaleOp's
// gradient with respect to its coefficient.
type dotAllOp struct{ opkit.Pure }

func (dotAllOp) Arity() int            { return 2 }
func (dotAllOp) Type() hm.Type         { return opkit.FnType(2) }
func (dotAllOp) String() string        { return "DotAll" }
func (dotAllOp) WriteHash(h hash.Hash) { fmt.Fprint(h, "fairmp.DotAll") }
func (op dotAllOp) Hashcode() uint32   { return opkit.Hash32(op.WriteHash) }
func (op dotAllOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	if _, err := opkit.InputShapes(in, 2, op.String()); err != nil {
		return nil, err
	}
	return tensor.Shape{1, 1}, nil
}

func (op dotAllOp) Do(inputs ...G.Value) (G.Value, error) {
	in, sh, err := opkit.DenseInputs(op, 2, inputs)
	if err != nil {
		return nil, err
	}
	if sh[0] != sh[1] || in[0].Dtype() != in[1].Dtype() {
		return nil, fmt.Errorf("%v: inputs %v %v and %v %v, want one shape and dtype", op, sh[0], in[0].Dtype(), sh[1], in[1].Dtype())
	}
	out := opkit.Alloc(in[0].Dtype(), 1, 1)
	switch a := in[0].Data().(type) {
	case []float64:
		out.Data().([]float64)[0] = dotAll(a, in[1].Data().([]float64))
	case []float32:
		out.Data().([]float32)[0] = dotAll(a, in[1].Data().([]float32))
	default:
		return nil, fmt.Errorf("%v: dtype %v, want float32 or float64", op, in[0].Dtype())
	}
	return out, nil
}

// dotAll returns Σ a ⊙ b, summed in float64.
func dotAll[T float32 | float64](a, b []T) T {
	var s float64
	for k, v := range a {
		s += float64(v) * float64(b[k])
	}
	return T(s)
}
