package layers

import (
	"fmt"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/fairmp/fairmp/internal/opkit"
	"github.com/fairmp/fairmp/internal/par"
	"github.com/fairmp/fairmp/internal/spkern"
)

// addRowSpec computes y + b for y n × c and b 1 × c (b added to every
// row) in one parallel pass, where gorgonia's BroadcastAdd first
// materialises b repeated n times and then adds. Its gradient is (dY,
// column sums of dY).
var addRowSpec = &opkit.Spec[struct{}]{
	ID:  "fairmp.AddRow",
	Sig: func(struct{}) opkit.Sig { return opkit.Mats(2) },
	Shape: func(_ struct{}, in []tensor.Shape) (tensor.Shape, error) {
		if in[1][0] != 1 || in[1][1] != in[0][1] {
			return nil, fmt.Errorf("%v + %v, want n × c + 1 × c", in[0], in[1])
		}
		return in[0], nil
	},
	F32: addRowFwd[float32],
	F64: addRowFwd[float64],
	Grad: func(_ *opkit.Op[struct{}], inputs G.Nodes, output, grad *G.Node) (G.Nodes, error) {
		db, err := opkit.Apply(colSumSpec, struct{}{}, grad)
		if err != nil {
			return nil, err
		}
		return G.Nodes{grad, db}, nil
	},
	Keep: true,
}

// colSumSpec computes the 1 × c column sums of an n × c matrix, summed
// in float64 over fixed blocks of rows combined in block order
// (deterministic, independent of GOMAXPROCS).
var colSumSpec = &opkit.Spec[struct{}]{
	ID:  "fairmp.ColSum",
	Sig: func(struct{}) opkit.Sig { return opkit.Mats(1) },
	Shape: func(_ struct{}, in []tensor.Shape) (tensor.Shape, error) {
		return tensor.Shape{1, in[0][1]}, nil
	},
	F32:  colSumFwd[float32],
	F64:  colSumFwd[float64],
	Keep: true,
}

// addRowBias returns y + b (b: 1 × c, added to every row of the n × c y).
func addRowBias(y, b *G.Node) (*G.Node, error) {
	sy, sb := y.Shape(), b.Shape()
	if len(sy) != 2 || len(sb) != 2 || sb[0] != 1 || sb[1] != sy[1] || y.Dtype() != b.Dtype() {
		return nil, fmt.Errorf("layers: adding bias %s to %s: want a 1 × c bias for an n × c input of one dtype", opkit.DescribeNode(b), opkit.DescribeNode(y))
	}
	if err := opkit.CheckFloat(y.Dtype()); err != nil {
		return nil, fmt.Errorf("layers: adding bias %s: %w", opkit.DescribeNode(b), err)
	}
	return opkit.Apply(addRowSpec, struct{}{}, y, b)
}

func addRowFwd[T float32 | float64](_ struct{}, a opkit.Args[T]) error {
	addRowKernel(a.Out, a.In[0], a.In[1], a.Shape[0][1])
	return nil
}

func colSumFwd[T float32 | float64](_ struct{}, a opkit.Args[T]) error {
	colSumKernel(a.Out, a.In[0], a.Shape[0][1])
	return nil
}

func addRowKernel[T float32 | float64](out, y, b []T, c int) {
	rows := len(y) / c
	par.Split(len(y), func(lo, hi int) {
		for i := lo / c; i < rows && i*c < hi; i++ {
			s, e := max(i*c, lo), min((i+1)*c, hi)
			yr, or := y[s:e], out[s:e]
			br := b[s-i*c : e-i*c]
			for k, v := range yr {
				or[k] = v + br[k]
			}
		}
	})
}

// colSumBlock is the number of rows per partial sum.
const colSumBlock = 4096

func colSumKernel[T float32 | float64](out, x []T, c int) {
	rows := len(x) / c
	nb := max(1, (rows+colSumBlock-1)/colSumBlock)
	part := make([]float64, nb*c)
	par.For(nb, func(bk int) {
		p := part[bk*c : (bk+1)*c]
		lo, hi := bk*colSumBlock, min((bk+1)*colSumBlock, rows)
		if x32, ok := any(x).([]float32); ok {
			// AVX2, the same adds in the same order (spkern's tests).
			spkern.ColSumAdd32(p, x32[lo*c:hi*c], hi-lo, c)
			return
		}
		for i := lo; i < hi; i++ {
			for k, v := range x[i*c : (i+1)*c] {
				p[k] += float64(v)
			}
		}
	})
	for k := 0; k < c; k++ {
		s := 0.0
		for bk := 0; bk < nb; bk++ {
			s += part[bk*c+k]
		}
		out[k] = T(s)
	}
}
