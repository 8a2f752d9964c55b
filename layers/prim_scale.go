package layers

// Scale, s·h for a learnable 1 × 1 s (a learnable coefficient of
// Combine, GIN's ε): its implementations together, one per flow:
// countFlow (Hops), nodeFlow (gorgonia: Forward and ForwardBlocks) and
// rowFlow (plain Go: LayerwiseLogits). The Beam one is beamFlow's, in
// package fmp/fmpbeam (a module of its own, so that this one does not
// depend on Beam).

import (
	"fmt"

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
	return opkit.Apply(scaleSpec, struct{}{}, x, s)
}

// scaleSpec is s·x (inputs x, then s).
var scaleSpec = &opkit.Spec[struct{}]{
	ID:   "fairmp.Scale",
	Name: func(struct{}) string { return "Scale" },
	Sig:  func(struct{}) opkit.Sig { return opkit.Mats(2) },
	Shape: func(_ struct{}, in []tensor.Shape) (tensor.Shape, error) {
		if in[1][0] != 1 || in[1][1] != 1 {
			return nil, fmt.Errorf("coefficient %v for a %v input, want 1 × 1", in[1], in[0])
		}
		return in[0], nil
	},
	F32: scaleFwd[float32],
	F64: scaleFwd[float64],
	Grad: func(op *opkit.Op[struct{}], inputs G.Nodes, output, grad *G.Node) (G.Nodes, error) {
		dx, err := op.Apply(struct{}{}, grad, inputs[1])
		if err != nil {
			return nil, err
		}
		ds, err := opkit.Apply(dotAllSpec, struct{}{}, inputs[0], grad)
		if err != nil {
			return nil, err
		}
		return G.Nodes{dx, ds}, nil
	},
	Keep: true,
}

func scaleFwd[T float32 | float64](_ struct{}, a opkit.Args[T]) error {
	s := a.In[1][0]
	for k, v := range a.In[0] {
		a.Out[k] = s * v
	}
	return nil
}

// dotAllSpec is the 1 × 1 Σ a ⊙ b of two matrices of one shape:
// scaleSpec's gradient with respect to its coefficient.
var dotAllSpec = &opkit.Spec[struct{}]{
	ID:   "fairmp.DotAll",
	Name: func(struct{}) string { return "DotAll" },
	Sig:  func(struct{}) opkit.Sig { return opkit.Mats(2) },
	Shape: func(_ struct{}, in []tensor.Shape) (tensor.Shape, error) {
		if !in[0].Eq(in[1]) {
			return nil, fmt.Errorf("inputs %v and %v, want one shape", in[0], in[1])
		}
		return tensor.Shape{1, 1}, nil
	},
	F32:  dotAllFwd[float32],
	F64:  dotAllFwd[float64],
	Keep: true,
}

func dotAllFwd[T float32 | float64](_ struct{}, a opkit.Args[T]) error {
	a.Out[0] = dotAll(a.In[0], a.In[1])
	return nil
}

// dotAll returns Σ a ⊙ b, summed in float64.
func dotAll[T float32 | float64](a, b []T) T {
	var s float64
	for k, v := range a {
		s += float64(v) * float64(b[k])
	}
	return T(s)
}
