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
	return G.ApplyOp(&spmmOp{a: a}, x)
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

type spmmOp struct {
	opkit.Buf // the output, kept between runs
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
	out := op.Get(prealloc, x.Dtype(), rows, xc)
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
	op := &spmmBiasActOp{a: a, relu: relu, bias: b != nil}
	if b == nil {
		return G.ApplyOp(op, x)
	}
	if sb, sx := b.Shape(), x.Shape(); len(sb) != 2 || sb[0] != 1 || sb[1] != sx[1] || b.Dtype() != x.Dtype() {
		return nil, fmt.Errorf("layers: adding bias %s to A·%s: want a 1 × c bias of the input's dtype", opkit.DescribeNode(b), opkit.DescribeNode(x))
	}
	return G.ApplyOp(op, x, b)
}

type spmmBiasActOp struct {
	opkit.Pure
	a          *graph.Matrix
	relu, bias bool
	opkit.Buf  // the output, kept between runs
}

var (
	_ G.SDOp            = (*spmmBiasActOp)(nil)
	_ G.UsePreallocDoer = (*spmmBiasActOp)(nil)
)

func (op *spmmBiasActOp) Arity() int {
	if op.bias {
		return 2
	}
	return 1
}
func (op *spmmBiasActOp) Type() hm.Type { return opkit.FnType(op.Arity()) }
func (op *spmmBiasActOp) DiffWRT(n int) []bool {
	d := make([]bool, n)
	for i := range d {
		d[i] = true
	}
	return d
}
func (op *spmmBiasActOp) String() string {
	return fmt.Sprintf("SpMM(A#%d)+b=%v+relu=%v", op.a.ID(), op.bias, op.relu)
}
func (op *spmmBiasActOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	s, err := opkit.InputShapes(in, op.Arity(), op.String())
	if err != nil {
		return nil, err
	}
	rows, _ := op.a.Dims()
	return tensor.Shape{rows, s[0][1]}, nil
}
func (op *spmmBiasActOp) WriteHash(h hash.Hash) {
	fmt.Fprintf(h, "fairmp.SpMMBiasAct")
	opkit.WriteU64(h, op.a.ID())
	opkit.WriteBool(h, op.bias)
	opkit.WriteBool(h, op.relu)
}
func (op *spmmBiasActOp) Hashcode() uint32 { return opkit.Hash32(op.WriteHash) }
func (op *spmmBiasActOp) Do(inputs ...G.Value) (G.Value, error) {
	return op.UsePreallocDo(nil, inputs...)
}

func (op *spmmBiasActOp) UsePreallocDo(prealloc G.Value, inputs ...G.Value) (G.Value, error) {
	in, sh, err := opkit.DenseInputs(op, op.Arity(), inputs)
	if err != nil {
		return nil, err
	}
	rows, cols := op.a.Dims()
	c := sh[0][1]
	if sh[0][0] != cols || (op.bias && sh[1] != [2]int{1, c}) {
		return nil, fmt.Errorf("%v: input shapes %v, want %d rows and a 1 × %d bias", op, sh, cols, c)
	}
	out := op.Get(prealloc, in[0].Dtype(), rows, c)
	switch x := in[0].Data().(type) {
	case []float64:
		var b []float64
		if op.bias {
			b = in[1].Data().([]float64)
		}
		o := out.Data().([]float64)
		op.a.MulDenseThen64(o, x, c, func(lo, hi int) { rowsBiasAct(o[lo*c:hi*c], b, c, op.relu) })
	case []float32:
		var b []float32
		if op.bias {
			b = in[1].Data().([]float32)
		}
		o := out.Data().([]float32)
		op.a.MulDenseThen32(o, x, c, func(lo, hi int) { rowsBiasAct(o[lo*c:hi*c], b, c, op.relu) })
	}
	return out, nil
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

func (op *spmmBiasActOp) SymDiff(inputs G.Nodes, output, grad *G.Node) (G.Nodes, error) {
	dz := grad
	if op.relu {
		var err error
		if dz, err = opkit.Apply(actSpec, actParams{act: ReLU(), dims: 2, grad: true}, output, grad); err != nil {
			return nil, err
		}
	}
	dx, err := G.ApplyOp(&spmmOp{a: op.a.Transpose()}, dz)
	if err != nil {
		return nil, err
	}
	if !op.bias {
		return G.Nodes{dx}, nil
	}
	db, err := opkit.Apply(colSumSpec, struct{}{}, dz)
	if err != nil {
		return nil, err
	}
	return G.Nodes{dx, db}, nil
}
