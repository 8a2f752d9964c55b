package layers

import (
	"encoding/binary"
	"fmt"
	"hash"

	"github.com/chewxy/hm"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/fairmp/fairmp/graph"
	"github.com/fairmp/fairmp/internal/opkit"
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
	if a == nil {
		return nil, fmt.Errorf("layers: SpMM: nil matrix")
	}
	if x == nil {
		return nil, fmt.Errorf("layers: SpMM: nil input node")
	}
	if err := opkit.CheckFloat(x.Dtype()); err != nil {
		return nil, fmt.Errorf("layers: SpMM: input %q (node %d): %w", x.Name(), x.ID(), err)
	}
	s := x.Shape()
	if len(s) != 2 {
		return nil, fmt.Errorf("layers: SpMM: input %q (node %d) has shape %v, want a matrix", x.Name(), x.ID(), s)
	}
	_, cols := a.Dims()
	if s[0] != cols {
		return nil, fmt.Errorf("layers: SpMM: input %q (node %d) has %d rows, want %d (the matrix's column count)", x.Name(), x.ID(), s[0], cols)
	}
	return G.ApplyOp(&spmmOp{a: a}, x)
}

type spmmOp struct {
	out opkit.Buf // the output, kept between runs
	opkit.Pure
	a *graph.Matrix
}

var (
	_ G.SDOp            = (*spmmOp)(nil)
	_ G.UsePreallocDoer = (*spmmOp)(nil)
)

func (op *spmmOp) Arity() int                { return 1 }
func (op *spmmOp) Type() hm.Type             { return opkit.FnType(1) }
func (op *spmmOp) DiffWRT(inputs int) []bool { return []bool{true} }
func (op *spmmOp) String() string            { return fmt.Sprintf("SpMM(A#%d)", op.a.ID()) }
func (op *spmmOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	if len(in) != 1 {
		return nil, fmt.Errorf("SpMM: %d inputs, want 1", len(in))
	}
	s, ok := in[0].(tensor.Shape)
	if !ok || len(s) != 2 {
		return nil, fmt.Errorf("SpMM: input shape %v, want a matrix", in[0])
	}
	rows, _ := op.a.Dims()
	return tensor.Shape{rows, s[1]}, nil
}

func (op *spmmOp) WriteHash(h hash.Hash) {
	fmt.Fprintf(h, "fairmp.SpMM")
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], op.a.ID())
	h.Write(b[:])
}

func (op *spmmOp) Hashcode() uint32 { return opkit.Hash32(op.WriteHash) }

func (op *spmmOp) Do(inputs ...G.Value) (G.Value, error) {
	return op.UsePreallocDo(nil, inputs...)
}

func (op *spmmOp) UsePreallocDo(prealloc G.Value, inputs ...G.Value) (G.Value, error) {
	if len(inputs) != 1 {
		return nil, fmt.Errorf("%v: %d inputs, want 1", op, len(inputs))
	}
	x, err := opkit.Dense(inputs[0])
	if err != nil {
		return nil, fmt.Errorf("%v: %w", op, err)
	}
	rows, cols := op.a.Dims()
	xr, xc, err := opkit.Shape2(x)
	if err != nil || xr != cols {
		return nil, fmt.Errorf("%v: input shape %v, want %d rows", op, x.Shape(), cols)
	}
	out := op.out.Get(prealloc, x.Dtype(), rows, xc)
	switch x.Dtype() {
	case tensor.Float64:
		op.a.MulDense64(out.Data().([]float64), x.Data().([]float64), xc)
	case tensor.Float32:
		op.a.MulDense32(out.Data().([]float32), x.Data().([]float32), xc)
	default:
		return nil, fmt.Errorf("%v: dtype %v, want float32 or float64", op, x.Dtype())
	}
	return out, nil
}

func (op *spmmOp) SymDiff(inputs G.Nodes, output, grad *G.Node) (G.Nodes, error) {
	dx, err := G.ApplyOp(&spmmOp{a: op.a.Transpose()}, grad)
	if err != nil {
		return nil, err
	}
	return G.Nodes{dx}, nil
}
