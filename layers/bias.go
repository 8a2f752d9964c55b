package layers

import (
	"fmt"
	"hash"

	"github.com/chewxy/hm"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/fairmp/fairmp/internal/opkit"
	"github.com/fairmp/fairmp/internal/par"
	"github.com/fairmp/fairmp/internal/spkern"
)

// addRowOp computes y + b for y n × c and b 1 × c (b added to every row)
// in one parallel pass, where gorgonia's BroadcastAdd first materialises
// b repeated n times and then adds. Its gradient is (dY, column sums of
// dY).
type addRowOp struct {
	opkit.Pure
	opkit.Buf // the output, kept between runs
}

// colSumOp computes the 1 × c column sums of an n × c matrix, summed in
// float64 over fixed blocks of rows combined in block order
// (deterministic, independent of GOMAXPROCS).
type colSumOp struct {
	opkit.Pure
	opkit.Buf // the output, kept between runs
}

var (
	_ G.SDOp            = (*addRowOp)(nil)
	_ G.UsePreallocDoer = (*addRowOp)(nil)
	_ G.SDOp            = (*colSumOp)(nil)
	_ G.UsePreallocDoer = (*colSumOp)(nil)
)

// addRowBias returns y + b (b: 1 × c, added to every row of the n × c y).
func addRowBias(y, b *G.Node) (*G.Node, error) {
	sy, sb := y.Shape(), b.Shape()
	if len(sy) != 2 || len(sb) != 2 || sb[0] != 1 || sb[1] != sy[1] || y.Dtype() != b.Dtype() {
		return nil, fmt.Errorf("layers: adding bias %s to %s: want a 1 × c bias for an n × c input of one dtype", opkit.DescribeNode(b), opkit.DescribeNode(y))
	}
	if err := opkit.CheckFloat(y.Dtype()); err != nil {
		return nil, fmt.Errorf("layers: adding bias %s: %w", opkit.DescribeNode(b), err)
	}
	return G.ApplyOp(&addRowOp{}, y, b)
}

func (*addRowOp) Arity() int                { return 2 }
func (*addRowOp) Type() hm.Type             { return opkit.FnType(2) }
func (*addRowOp) DiffWRT(inputs int) []bool { return []bool{true, true} }
func (*addRowOp) String() string            { return "AddRow" }
func (*addRowOp) WriteHash(h hash.Hash)     { fmt.Fprint(h, "fairmp.AddRow") }
func (op *addRowOp) Hashcode() uint32       { return opkit.Hash32(op.WriteHash) }

func (*addRowOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	if len(in) != 2 {
		return nil, fmt.Errorf("AddRow: %d inputs, want 2", len(in))
	}
	s, ok := in[0].(tensor.Shape)
	if !ok || len(s) != 2 {
		return nil, fmt.Errorf("AddRow: input shape %v, want a matrix", in[0])
	}
	return s.Clone(), nil
}

func (op *addRowOp) Do(inputs ...G.Value) (G.Value, error) { return op.UsePreallocDo(nil, inputs...) }

func (op *addRowOp) UsePreallocDo(prealloc G.Value, inputs ...G.Value) (G.Value, error) {
	if len(inputs) != 2 {
		return nil, fmt.Errorf("%v: %d inputs, want 2", op, len(inputs))
	}
	y, err := opkit.Dense(inputs[0])
	if err != nil {
		return nil, fmt.Errorf("%v: %w", op, err)
	}
	b, err := opkit.Dense(inputs[1])
	if err != nil {
		return nil, fmt.Errorf("%v: %w", op, err)
	}
	n, c, err := opkit.Shape2(y)
	if err != nil || b.Size() != c || b.Dtype() != y.Dtype() {
		return nil, fmt.Errorf("%v: %v %v + %v %v, want n × c + 1 × c of one dtype", op, y.Dtype(), y.Shape(), b.Dtype(), b.Shape())
	}
	out := op.Get(prealloc, y.Dtype(), n, c)
	switch ys := y.Data().(type) {
	case []float64:
		addRowKernel(out.Data().([]float64), ys, b.Data().([]float64), c)
	case []float32:
		addRowKernel(out.Data().([]float32), ys, b.Data().([]float32), c)
	default:
		return nil, fmt.Errorf("%v: dtype %v, want float32 or float64", op, y.Dtype())
	}
	return out, nil
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

func (*addRowOp) SymDiff(inputs G.Nodes, output, grad *G.Node) (G.Nodes, error) {
	db, err := G.ApplyOp(&colSumOp{}, grad)
	if err != nil {
		return nil, err
	}
	return G.Nodes{grad, db}, nil
}

func (*colSumOp) Arity() int                { return 1 }
func (*colSumOp) Type() hm.Type             { return opkit.FnType(1) }
func (*colSumOp) DiffWRT(inputs int) []bool { return []bool{false} }
func (*colSumOp) String() string            { return "ColSum" }
func (*colSumOp) WriteHash(h hash.Hash)     { fmt.Fprint(h, "fairmp.ColSum") }
func (op *colSumOp) Hashcode() uint32       { return opkit.Hash32(op.WriteHash) }

func (*colSumOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	if len(in) != 1 {
		return nil, fmt.Errorf("ColSum: %d inputs, want 1", len(in))
	}
	s, ok := in[0].(tensor.Shape)
	if !ok || len(s) != 2 {
		return nil, fmt.Errorf("ColSum: input shape %v, want a matrix", in[0])
	}
	return tensor.Shape{1, s[1]}, nil
}

func (op *colSumOp) Do(inputs ...G.Value) (G.Value, error) { return op.UsePreallocDo(nil, inputs...) }

func (op *colSumOp) UsePreallocDo(prealloc G.Value, inputs ...G.Value) (G.Value, error) {
	if len(inputs) != 1 {
		return nil, fmt.Errorf("%v: %d inputs, want 1", op, len(inputs))
	}
	x, err := opkit.Dense(inputs[0])
	if err != nil {
		return nil, fmt.Errorf("%v: %w", op, err)
	}
	_, c, err := opkit.Shape2(x)
	if err != nil {
		return nil, fmt.Errorf("%v: %w", op, err)
	}
	out := op.Get(prealloc, x.Dtype(), 1, c)
	switch xs := x.Data().(type) {
	case []float64:
		colSumKernel(out.Data().([]float64), xs, c)
	case []float32:
		colSumKernel(out.Data().([]float32), xs, c)
	default:
		return nil, fmt.Errorf("%v: dtype %v, want float32 or float64", op, x.Dtype())
	}
	return out, nil
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

func (*colSumOp) SymDiff(inputs G.Nodes, output, grad *G.Node) (G.Nodes, error) {
	return nil, fmt.Errorf("ColSum: no second-order gradient")
}
