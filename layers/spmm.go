package layers

import (
	"fmt"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/fairmp/fairmp/graph"
	"github.com/fairmp/fairmp/internal/opkit"
	"github.com/fairmp/fairmp/internal/spkern"
)

// SpMM returns the node A·x, where A is a sparse matrix held by the op and x
// is a dense 2-d node (float32 or float64) with as many rows as A has
// columns. Its gradient with respect to x is Aᵀ·dY, computed by another
// SpMM holding Aᵀ (A itself when A is symmetric, as a normalised adjacency
// is). A dense n × n matrix is never formed.
//
// Rows are computed in parallel in fixed blocks and each output row is
// summed in a fixed order, so results are deterministic.
//
// SpMM returns an error if x is not a float32 or float64 matrix or if its
// row count does not match A.
func SpMM(a *graph.Matrix, x *G.Node) (*G.Node, error) {
	if err := checkSpMM(a, x); err != nil {
		return nil, err
	}
	return opkit.Apply(spmmSpec, spmmParams{a: a}, x)
}

func checkSpMM(a *graph.Matrix, x *G.Node) error {
	if a == nil {
		return fmt.Errorf("layers: SpMM: nil matrix")
	}
	if x == nil {
		return fmt.Errorf("layers: SpMM: nil input node")
	}
	if err := opkit.CheckFloat(x.Dtype()); err != nil {
		return fmt.Errorf("layers: SpMM: input %q (node %d): %w", x.Name(), x.ID(), err)
	}
	s := x.Shape()
	if len(s) != 2 {
		return fmt.Errorf("layers: SpMM: input %q (node %d) has shape %v, want a matrix", x.Name(), x.ID(), s)
	}
	_, cols := a.Dims()
	if s[0] != cols {
		return fmt.Errorf("layers: SpMM: input %q (node %d) has %d rows, want %d (the matrix's column count)", x.Name(), x.ID(), s[0], cols)
	}
	return nil
}

// spmmParams are SpMM's, or with bias or relu, spmmBiasAct's.
type spmmParams struct {
	a          *graph.Matrix
	relu, bias bool
}

// spmmSpec is SpMM and spmmBiasAct.
var spmmSpec = &opkit.Spec[spmmParams]{
	ID: "fairmp.SpMM",
	Name: func(p spmmParams) string {
		if !p.bias && !p.relu {
			return fmt.Sprintf("SpMM(A#%d)", p.a.ID())
		}
		return fmt.Sprintf("SpMM(A#%d)+b=%v+relu=%v", p.a.ID(), p.bias, p.relu)
	},
	Sig: func(p spmmParams) opkit.Sig {
		if p.bias {
			return opkit.Mats(2)
		}
		return opkit.Mats(1)
	},
	Shape: func(p spmmParams, in []tensor.Shape) (tensor.Shape, error) {
		rows, cols := p.a.Dims()
		c := in[0][1]
		if in[0][0] != cols || (p.bias && (in[1][0] != 1 || in[1][1] != c)) {
			return nil, fmt.Errorf("input shapes %v, want %d rows and a 1 × %d bias", in, cols, c)
		}
		return tensor.Shape{rows, c}, nil
	},
	Hash: func(p spmmParams, h opkit.Hasher) {
		h.U64(p.a.ID())
		h.Bool(p.bias, p.relu)
	},
	F32: spmmFwd[float32],
	F64: spmmFwd[float64],
	Grad: func(op *opkit.Op[spmmParams], inputs G.Nodes, output, grad *G.Node) (G.Nodes, error) {
		dz := grad
		if op.P.relu {
			var err error
			if dz, err = opkit.Apply(actSpec, actParams{act: ReLU(), dims: 2, grad: true}, output, grad); err != nil {
				return nil, err
			}
		}
		dx, err := op.Apply(spmmParams{a: op.P.a.Transpose()}, dz)
		if err != nil {
			return nil, err
		}
		if !op.P.bias {
			return G.Nodes{dx}, nil
		}
		db, err := opkit.Apply(colSumSpec, struct{}{}, dz)
		if err != nil {
			return nil, err
		}
		return G.Nodes{dx, db}, nil
	},
	Keep: true,
}

// spmmFwd computes A·x, then (with bias or relu) the bias and the
// activation on each block of rows as soon as the product finishes it.
func spmmFwd[T float32 | float64](p spmmParams, a opkit.Args[T]) error {
	c := a.Shape[0][1]
	var b []T
	if p.bias {
		b = a.In[1]
	}
	o := a.Out
	then := func(lo, hi int) { rowsBiasAct(o[lo*c:hi*c], b, c, p.relu) }
	plain := !p.bias && !p.relu
	switch x := any(a.In[0]).(type) {
	case []float64:
		o := any(o).([]float64)
		if plain {
			p.a.MulDense64(o, x, c)
		} else {
			p.a.MulDenseThen64(o, x, c, then)
		}
	case []float32:
		o := any(o).([]float32)
		if plain {
			p.a.MulDense32(o, x, c)
		} else {
			p.a.MulDenseThen32(o, x, c, then)
		}
	}
	return nil
}

// spmmBiasAct returns act(A·x + b) as one op (b may be nil; relu false:
// no activation): the bias and the ReLU are applied to each block of rows
// right after the product computes it, while it is in cache, instead of
// in two more passes over the output. Values and gradients equal SpMM,
// AddRow and Activate's bit for bit (tested).
func spmmBiasAct(a *graph.Matrix, x, b *G.Node, relu bool) (*G.Node, error) {
	if b == nil && !relu {
		return SpMM(a, x)
	}
	if err := checkSpMM(a, x); err != nil {
		return nil, err
	}
	p := spmmParams{a: a, relu: relu, bias: b != nil}
	if b == nil {
		return opkit.Apply(spmmSpec, p, x)
	}
	if sb, sx := b.Shape(), x.Shape(); len(sb) != 2 || sb[0] != 1 || sb[1] != sx[1] || b.Dtype() != x.Dtype() {
		return nil, fmt.Errorf("layers: adding bias %s to A·%s: want a 1 × c bias of the input's dtype", opkit.DescribeNode(b), opkit.DescribeNode(x))
	}
	return opkit.Apply(spmmSpec, p, x, b)
}

// rowsBiasAct is biasAct on rows already split off (no parallelism).
func rowsBiasAct[T float32 | float64](z, b []T, m int, relu bool) {
	if z32, ok := any(z).([]float32); ok && relu {
		// The AVX2 kernel, bit for bit the loop below.
		b32 := any(b).([]float32)
		for i := 0; i+m <= len(z32); i += m {
			spkern.BiasReLU32(z32[i:i+m:i+m], b32)
		}
		return
	}
	for i := 0; i+m <= len(z); i += m {
		zr := z[i : i+m : i+m]
		switch {
		case b == nil:
			for k, v := range zr {
				zr[k] = max(v, 0)
			}
		case relu:
			br := b[:len(zr)]
			for k, v := range zr {
				zr[k] = max(v+br[k], 0)
			}
		default:
			br := b[:len(zr)]
			for k, v := range zr {
				zr[k] = v + br[k]
			}
		}
	}
}
