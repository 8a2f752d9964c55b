package layers

import (
	"fmt"
	"math"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/fairmp/fairmp/internal/opkit"
	"github.com/fairmp/fairmp/internal/par"
	"github.com/fairmp/fairmp/internal/spkern"
)

// ActKind names an element-wise activation function.
type ActKind string

// The activation functions of MLP, GCN, JKNet and APPNP's MLP.
const (
	// ActReLU is max(x, 0).
	ActReLU ActKind = "relu"
	// ActELU is x for x > 0, else α(eˣ − 1) (α = Activation.Alpha).
	ActELU ActKind = "elu"
	// ActLeakyReLU is x for x > 0, else α·x (α = Activation.Alpha, the
	// negative slope).
	ActLeakyReLU ActKind = "leaky_relu"
)

// Activation is an element-wise activation function and its parameter.
// Build one with ReLU, ELU or LeakyReLU.
type Activation struct {
	Kind ActKind `json:"kind"`
	// Alpha is ELU's α or LeakyReLU's negative slope; it must be 0 for ReLU.
	Alpha float64 `json:"alpha"`
}

// ReLU returns the rectifier max(x, 0).
func ReLU() Activation { return Activation{Kind: ActReLU} }

// ELU returns the exponential linear unit with parameter alpha (PyTorch's
// default is 1).
func ELU(alpha float64) Activation { return Activation{Kind: ActELU, Alpha: alpha} }

// LeakyReLU returns the leaky rectifier with the given negative slope
// (PyTorch's default is 0.01).
func LeakyReLU(slope float64) Activation { return Activation{Kind: ActLeakyReLU, Alpha: slope} }

// Validate returns an error for an unknown kind, a non-finite or negative
// Alpha, or a non-zero Alpha for ReLU.
func (a Activation) Validate() error {
	switch a.Kind {
	case ActReLU:
		if a.Alpha != 0 {
			return fmt.Errorf("activation relu: Alpha = %v, want 0", a.Alpha)
		}
	case ActELU, ActLeakyReLU:
		if !(a.Alpha >= 0) || math.IsInf(a.Alpha, 0) {
			return fmt.Errorf("activation %s: Alpha = %v, want a finite value >= 0", a.Kind, a.Alpha)
		}
	default:
		return fmt.Errorf("activation kind %q, want %q, %q or %q", a.Kind, ActReLU, ActELU, ActLeakyReLU)
	}
	return nil
}

// String returns the kind, with Alpha when it has one: "elu(1)".
func (a Activation) String() string {
	if a.Kind == ActReLU {
		return string(a.Kind)
	}
	return fmt.Sprintf("%s(%g)", a.Kind, a.Alpha)
}

// Apply returns the activation of v: what Activate computes for one
// element, for code that runs a trained model outside gorgonia.
func (a Activation) Apply(v float64) float64 {
	y, _ := a.f(v)
	return y
}

// f returns the activation of v and its derivative.
func (a Activation) f(v float64) (y, dy float64) {
	if v > 0 {
		return v, 1
	}
	switch a.Kind {
	case ActELU:
		e := math.Exp(v)
		return a.Alpha * (e - 1), a.Alpha * e
	case ActLeakyReLU:
		return a.Alpha * v, a.Alpha
	}
	return 0, 0
}

// Activate applies act element-wise to x (any shape, float32 or float64).
// The derivative at 0 is taken from the left (0 for ReLU, as PyTorch). It
// returns an error for an invalid activation or a non-float node.
func Activate(x *G.Node, act Activation) (*G.Node, error) {
	if x == nil {
		return nil, fmt.Errorf("layers: Activate: nil input node")
	}
	if err := act.Validate(); err != nil {
		return nil, fmt.Errorf("layers: Activate: input %q (node %d): %w", x.Name(), x.ID(), err)
	}
	if err := opkit.CheckFloat(x.Dtype()); err != nil {
		return nil, fmt.Errorf("layers: Activate: input %q (node %d): %w", x.Name(), x.ID(), err)
	}
	dims := x.Shape().Dims()
	if dims == 0 {
		return nil, fmt.Errorf("layers: Activate: input %q (node %d) is a scalar, want a tensor", x.Name(), x.ID())
	}
	return opkit.Apply(actSpec, actParams{act: act, dims: dims}, x)
}

// actParams is an activation op's: with grad set it is the gradient op
// (inputs x and dY, output dY ⊙ f'(x)).
type actParams struct {
	act  Activation
	dims int
	grad bool
}

// actSpec applies an activation, or its gradient.
var actSpec = &opkit.Spec[actParams]{
	ID: "fairmp.Act",
	Name: func(p actParams) string {
		if p.grad {
			return "d" + p.act.String()
		}
		return p.act.String()
	},
	Sig: func(p actParams) opkit.Sig {
		if p.grad {
			return opkit.Same(p.dims, 2)
		}
		return opkit.Same(p.dims, 1)
	},
	Shape: func(p actParams, in []tensor.Shape) (tensor.Shape, error) {
		if p.grad && !in[1].Eq(in[0]) {
			return nil, fmt.Errorf("gradient %v, want %v", in[1], in[0])
		}
		return in[0], nil
	},
	Hash: func(p actParams, h opkit.Hasher) {
		h.Str(string(p.act.Kind))
		h.Bool(p.grad)
		h.F64(p.act.Alpha)
	},
	F32: actFwd[float32],
	F64: actFwd[float64],
	DiffWRT: func(p actParams, n int) []bool {
		d := make([]bool, n)
		if !p.grad && n == 1 {
			d[0] = true
		}
		return d
	},
	Grad: func(op *opkit.Op[actParams], inputs G.Nodes, _, grad *G.Node) (G.Nodes, error) {
		if op.P.grad {
			return nil, fmt.Errorf("%v: second derivatives are not implemented", op)
		}
		p := op.P
		p.grad = true
		d, err := op.Apply(p, inputs[0], grad)
		if err != nil {
			return nil, err
		}
		return G.Nodes{d}, nil
	},
	Keep: true,
}

func actFwd[T float32 | float64](p actParams, a opkit.Args[T]) error {
	var dy []T
	if p.grad {
		dy = a.In[1]
	}
	activateParallel(p.act, a.Out, a.In[0], dy)
	return nil
}

// activateParallel is activate over ranges of the elements in parallel
// (par.Split); each element is computed on its own, so the split does
// not change the result.
func activateParallel[T float32 | float64](a Activation, out, x, dy []T) {
	par.Split(len(x), func(lo, hi int) {
		var d []T
		if dy != nil {
			d = dy[lo:hi]
		}
		activate(a, out[lo:hi], x[lo:hi], d)
	})
}

// activate writes f(x) to out, or dy ⊙ f'(x) when dy is not nil.
func activate[T float32 | float64](a Activation, out, x, dy []T) {
	if a.Kind == ActReLU {
		if dy == nil {
			for i, v := range x {
				out[i] = max(v, 0)
			}
			return
		}
		switch o := any(out).(type) {
		case []float32:
			reluBack32(o, any(x).([]float32), any(dy).([]float32))
		case []float64:
			reluBack64(o, any(x).([]float64), any(dy).([]float64))
		}
		return
	}
	for i, v := range x {
		y, d := a.f(float64(v))
		if dy != nil {
			out[i] = T(float64(dy[i]) * d)
		} else {
			out[i] = T(y)
		}
	}
}

// reluBack32 writes dy where x > 0 and +0 elsewhere (x ≤ 0, and NaN with
// the sign bit set), without branches: a branch on the sign of random
// pre-activations is mispredicted half the time (7 ns an element on the
// Bail shape's hidden layer, against under 1 without).
func reluBack32(out, x, dy []float32) {
	if len(out) >= 8 {
		// The AVX2 kernel where the CPU has it: the same bits as the
		// loop below (spkern's tests).
		spkern.ReLUMask32(out[:len(x)], x, dy)
		return
	}
	dy = dy[:len(x)]
	out = out[:len(x)]
	for i, v := range x {
		b := int32(math.Float32bits(v))
		// All ones when b > 0 (sign clear, not +0), else zero.
		m := uint32((-b)>>31) & ^uint32(b>>31)
		out[i] = math.Float32frombits(math.Float32bits(dy[i]) & m)
	}
}

// reluBack64 is reluBack32 in float64.
func reluBack64(out, x, dy []float64) {
	dy = dy[:len(x)]
	out = out[:len(x)]
	for i, v := range x {
		b := int64(math.Float64bits(v))
		m := uint64((-b)>>63) & ^uint64(b>>63)
		out[i] = math.Float64frombits(math.Float64bits(dy[i]) & m)
	}
}
