package layers

import (
	"encoding/binary"
	"fmt"
	"hash"
	"math"

	"github.com/chewxy/hm"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/fairmp/fairmp/internal/opkit"
)

// linComb returns Σ coef[i]·xs[i] for matrices of one shape and dtype.
// Its gradient with respect to xs[i] is coef[i]·dY.
func linComb(coef []float64, xs ...*G.Node) (*G.Node, error) {
	if len(coef) != len(xs) || len(xs) == 0 {
		return nil, fmt.Errorf("layers: linComb: %d coefficients for %d nodes", len(coef), len(xs))
	}
	for _, x := range xs[1:] {
		if !x.Shape().Eq(xs[0].Shape()) || x.Dtype() != xs[0].Dtype() {
			return nil, fmt.Errorf("layers: linComb: %s and %s differ in shape or dtype", opkit.DescribeNode(xs[0]), opkit.DescribeNode(x))
		}
	}
	if len(xs[0].Shape()) != 2 {
		return nil, fmt.Errorf("layers: linComb: %s, want matrices", opkit.DescribeNode(xs[0]))
	}
	return G.ApplyOp(&linCombOp{coef: append([]float64(nil), coef...)}, xs...)
}

type linCombOp struct {
	opkit.Buf // the output, kept between runs
	opkit.Pure
	coef []float64
}

var (
	_ G.SDOp            = (*linCombOp)(nil)
	_ G.UsePreallocDoer = (*linCombOp)(nil)
)

func (op *linCombOp) Arity() int                { return len(op.coef) }
func (op *linCombOp) Type() hm.Type             { return opkit.FnType(len(op.coef)) }
func (op *linCombOp) String() string            { return fmt.Sprintf("LinComb%v", op.coef) }
func (op *linCombOp) DiffWRT(inputs int) []bool { return trues(inputs) }
func trues(n int) []bool {
	b := make([]bool, n)
	for i := range b {
		b[i] = true
	}
	return b
}
func (op *linCombOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	if len(in) != len(op.coef) {
		return nil, fmt.Errorf("%v: %d inputs, want %d", op, len(in), len(op.coef))
	}
	s, ok := in[0].(tensor.Shape)
	if !ok {
		return nil, fmt.Errorf("%v: input shape %v", op, in[0])
	}
	return s.Clone(), nil
}
func (op *linCombOp) WriteHash(h hash.Hash) {
	fmt.Fprintf(h, "fairmp.LinComb/%d", len(op.coef))
	var b [8]byte
	for _, c := range op.coef {
		binary.LittleEndian.PutUint64(b[:], math.Float64bits(c))
		h.Write(b[:])
	}
}
func (op *linCombOp) Hashcode() uint32                      { return opkit.Hash32(op.WriteHash) }
func (op *linCombOp) Do(inputs ...G.Value) (G.Value, error) { return op.UsePreallocDo(nil, inputs...) }
func (op *linCombOp) UsePreallocDo(prealloc G.Value, inputs ...G.Value) (G.Value, error) {
	if len(inputs) != len(op.coef) {
		return nil, fmt.Errorf("%v: %d inputs, want %d", op, len(inputs), len(op.coef))
	}
	ds := make([]*tensor.Dense, len(inputs))
	for i, v := range inputs {
		d, err := opkit.Dense(v)
		if err != nil {
			return nil, fmt.Errorf("%v: %w", op, err)
		}
		if i > 0 && (!d.Shape().Eq(ds[0].Shape()) || d.Dtype() != ds[0].Dtype()) {
			return nil, fmt.Errorf("%v: input %d is %v %v, want %v %v", op, i, d.Dtype(), d.Shape(), ds[0].Dtype(), ds[0].Shape())
		}
		ds[i] = d
	}
	out := op.Get(prealloc, ds[0].Dtype(), ds[0].Shape()...)
	switch o := out.Data().(type) {
	case []float64:
		combine(o, dataOf[float64](ds), op.coef)
	case []float32:
		combine(o, dataOf[float32](ds), op.coef)
	default:
		return nil, fmt.Errorf("%v: dtype %v, want float32 or float64", op, out.Dtype())
	}
	return out, nil
}

// dataOf returns the values of ds.
func dataOf[T float32 | float64](ds []*tensor.Dense) [][]T {
	xs := make([][]T, len(ds))
	for i, d := range ds {
		xs[i] = d.Data().([]T)
	}
	return xs
}

// combine writes Σ coef[i]·xs[i] into out: the linear combination of
// linCombOp and of the plain-Go flow's Combine.
func combine[T float32 | float64](out []T, xs [][]T, coef []float64) {
	for i, x := range xs {
		c := T(coef[i])
		if i == 0 {
			for k, v := range x {
				out[k] = c * v
			}
			continue
		}
		for k, v := range x {
			out[k] += c * v
		}
	}
}

func (op *linCombOp) SymDiff(inputs G.Nodes, output, grad *G.Node) (G.Nodes, error) {
	ds := make(G.Nodes, len(inputs))
	for i := range inputs {
		d, err := G.ApplyOp(&linCombOp{coef: []float64{op.coef[i]}}, grad)
		if err != nil {
			return nil, err
		}
		ds[i] = d
	}
	return ds, nil
}
