package layers

import (
	"fmt"
	"hash"

	"github.com/chewxy/hm"
	"gonum.org/v1/gonum/blas"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/fairmp/fairmp/internal/fastblas"
	"github.com/fairmp/fairmp/internal/opkit"
	"github.com/fairmp/fairmp/internal/par"
)

// denseOp computes act(x·W + b) in one op: the product by gorgonia's
// BLAS (the call gorgonia's Mul makes), then the bias and the activation
// in one pass over the output (with fairmp's BLAS in float32, on each
// block of rows as soon as the product finishes it), into a buffer kept
// between runs. Its
// gradients are the ops gorgonia's Mul, AddRow and Activate would build
// (the ReLU mask read from the output, where y > 0 exactly where
// x·W + b > 0), as custom ops with kept buffers. The values equal the
// separate nodes' bit for bit (tested).
type denseOp struct {
	opkit.Pure
	relu, bias bool
	opkit.Buf  // the output, kept between runs
}

// matMulOp computes op(A)·op(B) (op: transpose or not) by gorgonia's
// BLAS into a kept buffer: the gradient products of denseOp.
type matMulOp struct {
	opkit.Pure
	tA, tB bool
	// maskReLU multiplies the product by the ReLU's derivative at a third
	// input y (1 where y > 0): A·Bᵀ ⊙ relu'(y), the gradient reaching a
	// ReLU layer's pre-activation, in the product's epilogue.
	maskReLU bool
	// a and b are the input nodes (not hashed): a later SymDiff fuses the
	// product with the ReLU mask it feeds.
	a, b      *G.Node
	opkit.Buf // the output, kept between runs
}

var (
	_ G.SDOp            = (*denseOp)(nil)
	_ G.UsePreallocDoer = (*denseOp)(nil)
	_ G.SDOp            = (*matMulOp)(nil)
	_ G.UsePreallocDoer = (*matMulOp)(nil)
)

// denseAct returns act(x·w + b) as one node (b may be nil; relu false: no
// activation).
func denseAct(x, w, b *G.Node, relu bool) (*G.Node, error) {
	if b == nil {
		return G.ApplyOp(&denseOp{relu: relu}, x, w)
	}
	if sb := b.Shape(); len(sb) != 2 || sb[0] != 1 || sb[1] != w.Shape()[1] || b.Dtype() != w.Dtype() {
		return nil, fmt.Errorf("layers: bias %s for weights %s, want 1 × %d of one dtype", opkit.DescribeNode(b), opkit.DescribeNode(w), w.Shape()[1])
	}
	return G.ApplyOp(&denseOp{relu: relu, bias: true}, x, w, b)
}

func (op *denseOp) Arity() int {
	if op.bias {
		return 3
	}
	return 2
}
func (op *denseOp) Type() hm.Type { return opkit.FnType(op.Arity()) }
func (op *denseOp) String() string {
	s := "Dense"
	if op.bias {
		s += "+b"
	}
	if op.relu {
		s += "+relu"
	}
	return s
}
func (op *denseOp) DiffWRT(n int) []bool {
	d := make([]bool, n)
	for i := range d {
		d[i] = true
	}
	return d
}
func (op *denseOp) WriteHash(h hash.Hash) {
	fmt.Fprint(h, "fairmp.Dense")
	opkit.WriteBool(h, op.relu)
	opkit.WriteBool(h, op.bias)
}
func (op *denseOp) Hashcode() uint32 { return opkit.Hash32(op.WriteHash) }
func (op *denseOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	s, err := opkit.InputShapes(in, op.Arity(), op.String())
	if err != nil {
		return nil, err
	}
	if s[0][1] != s[1][0] {
		return nil, fmt.Errorf("%v: shapes %v · %v", op, s[0], s[1])
	}
	return tensor.Shape{s[0][0], s[1][1]}, nil
}

func (op *denseOp) Do(inputs ...G.Value) (G.Value, error) { return op.UsePreallocDo(nil, inputs...) }

func (op *denseOp) UsePreallocDo(prealloc G.Value, inputs ...G.Value) (G.Value, error) {
	in, sh, err := opkit.DenseInputs(op, op.Arity(), inputs)
	if err != nil {
		return nil, err
	}
	n, k, m := sh[0][0], sh[0][1], sh[1][1]
	if sh[1][0] != k || (op.bias && sh[2] != [2]int{1, m}) {
		return nil, fmt.Errorf("%v: shapes %v, want n × k, k × m and 1 × m", op, sh)
	}
	out := op.Get(prealloc, in[0].Dtype(), n, m)
	switch x := in[0].Data().(type) {
	case []float32:
		var b []float32
		if op.bias {
			b = in[2].Data().([]float32)
		}
		o := out.Data().([]float32)
		if fb, ok := G.WhichBLAS().(fastblas.Implementation); ok && (op.bias || op.relu) {
			// The bias and the ReLU on each block of rows as soon as the
			// product has finished it, while it is in cache.
			fb.SgemmThen(blas.NoTrans, blas.NoTrans, n, m, k, 1, x, k, in[1].Data().([]float32), m, 0, o, m,
				func(lo, hi int) { rowsBiasAct(o[lo*m:hi*m], b, m, op.relu) })
			break
		}
		G.WhichBLAS().Sgemm(blas.NoTrans, blas.NoTrans, n, m, k, 1, x, k, in[1].Data().([]float32), m, 0, o, m)
		biasAct(o, b, m, op.relu)
	case []float64:
		var b []float64
		if op.bias {
			b = in[2].Data().([]float64)
		}
		o := out.Data().([]float64)
		G.WhichBLAS().Dgemm(blas.NoTrans, blas.NoTrans, n, m, k, 1, x, k, in[1].Data().([]float64), m, 0, o, m)
		biasAct(o, b, m, op.relu)
	}
	return out, nil
}

// biasAct adds b to every row of the n × m matrix z (b nil: no bias) and
// applies the ReLU when relu is set, in place, in one pass: the same
// roundings as addRowKernel then activate.
func biasAct[T float32 | float64](z, b []T, m int, relu bool) {
	if b == nil && !relu {
		return
	}
	rows := len(z) / m
	par.Split(len(z), func(lo, hi int) {
		for i := lo / m; i < rows && i*m < hi; i++ {
			s, e := max(i*m, lo), min((i+1)*m, hi)
			zr := z[s:e]
			switch {
			case b == nil:
				for k, v := range zr {
					zr[k] = max(v, 0)
				}
			case relu:
				br := b[s-i*m : e-i*m]
				br = br[:len(zr)]
				for k, v := range zr {
					zr[k] = max(v+br[k], 0)
				}
			default:
				br := b[s-i*m : e-i*m]
				br = br[:len(zr)]
				for k, v := range zr {
					zr[k] = v + br[k]
				}
			}
		}
	})
}

func (op *denseOp) SymDiff(inputs G.Nodes, output, grad *G.Node) (G.Nodes, error) {
	if len(inputs) != op.Arity() {
		return nil, fmt.Errorf("%v: SymDiff with %d inputs, want %d", op, len(inputs), op.Arity())
	}
	x, w := inputs[0], inputs[1]
	dz := grad
	if mm, ok := grad.Op().(*matMulOp); ok && op.relu && mm.tB && !mm.tA && !mm.maskReLU && mm.a != nil {
		// grad is the next layer's dY·Wᵀ: mask it in its product.
		var err error
		if dz, err = G.ApplyOp(&matMulOp{tB: true, maskReLU: true}, mm.a, mm.b, output); err != nil {
			return nil, err
		}
	} else if op.relu {
		var err error
		if dz, err = opkit.Apply(actSpec, actParams{act: ReLU(), dims: 2, grad: true}, output, grad); err != nil {
			return nil, err
		}
	}
	dx, err := G.ApplyOp(&matMulOp{tB: true, a: dz, b: w}, dz, w)
	if err != nil {
		return nil, err
	}
	dw, err := G.ApplyOp(&matMulOp{tA: true}, x, dz)
	if err != nil {
		return nil, err
	}
	if !op.bias {
		return G.Nodes{dx, dw}, nil
	}
	db, err := opkit.Apply(colSumSpec, struct{}{}, dz)
	if err != nil {
		return nil, err
	}
	return G.Nodes{dx, dw, db}, nil
}

func (op *matMulOp) Arity() int {
	if op.maskReLU {
		return 3
	}
	return 2
}
func (op *matMulOp) Type() hm.Type { return opkit.FnType(op.Arity()) }
func (op *matMulOp) String() string {
	return fmt.Sprintf("MatMul(tA=%v, tB=%v, maskReLU=%v)", op.tA, op.tB, op.maskReLU)
}
func (op *matMulOp) DiffWRT(n int) []bool { return make([]bool, n) }
func (op *matMulOp) WriteHash(h hash.Hash) {
	fmt.Fprint(h, "fairmp.MatMul")
	opkit.WriteBool(h, op.tA)
	opkit.WriteBool(h, op.tB)
	opkit.WriteBool(h, op.maskReLU)
}
func (op *matMulOp) Hashcode() uint32 { return opkit.Hash32(op.WriteHash) }

// dims returns m, k, n of op(A) (m × k) · op(B) (k × n) for stored shapes
// sa and sb.
func (op *matMulOp) dims(sa, sb [2]int) (m, k, kb, n int) {
	m, k = sa[0], sa[1]
	if op.tA {
		m, k = k, m
	}
	kb, n = sb[0], sb[1]
	if op.tB {
		kb, n = n, kb
	}
	return m, k, kb, n
}

func (op *matMulOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	s, err := opkit.InputShapes(in, op.Arity(), op.String())
	if err != nil {
		return nil, err
	}
	m, k, kb, n := op.dims([2]int{s[0][0], s[0][1]}, [2]int{s[1][0], s[1][1]})
	if k != kb {
		return nil, fmt.Errorf("%v: shapes %v and %v", op, s[0], s[1])
	}
	return tensor.Shape{m, n}, nil
}

func (op *matMulOp) Do(inputs ...G.Value) (G.Value, error) { return op.UsePreallocDo(nil, inputs...) }

func (op *matMulOp) UsePreallocDo(prealloc G.Value, inputs ...G.Value) (G.Value, error) {
	in, sh, err := opkit.DenseInputs(op, op.Arity(), inputs)
	if err != nil {
		return nil, err
	}
	m, k, kb, n := op.dims(sh[0], sh[1])
	if k != kb || (op.maskReLU && sh[2] != [2]int{m, n}) {
		return nil, fmt.Errorf("%v: shapes %v", op, sh)
	}
	tA, tB := blas.NoTrans, blas.NoTrans
	if op.tA {
		tA = blas.Trans
	}
	if op.tB {
		tB = blas.Trans
	}
	lda, ldb := sh[0][1], sh[1][1]
	out := op.Get(prealloc, in[0].Dtype(), m, n)
	switch a := in[0].Data().(type) {
	case []float32:
		o := out.Data().([]float32)
		if !op.maskReLU {
			G.WhichBLAS().Sgemm(tA, tB, m, n, k, 1, a, lda, in[1].Data().([]float32), ldb, 0, o, n)
			break
		}
		y := in[2].Data().([]float32)
		if fb, ok := G.WhichBLAS().(fastblas.Implementation); ok {
			fb.SgemmThen(tA, tB, m, n, k, 1, a, lda, in[1].Data().([]float32), ldb, 0, o, n,
				func(lo, hi int) { reluBack32(o[lo*n:hi*n], y[lo*n:hi*n], o[lo*n:hi*n]) })
			break
		}
		G.WhichBLAS().Sgemm(tA, tB, m, n, k, 1, a, lda, in[1].Data().([]float32), ldb, 0, o, n)
		par.Split(len(o), func(lo, hi int) { reluBack32(o[lo:hi], y[lo:hi], o[lo:hi]) })
	case []float64:
		o := out.Data().([]float64)
		G.WhichBLAS().Dgemm(tA, tB, m, n, k, 1, a, lda, in[1].Data().([]float64), ldb, 0, o, n)
		if op.maskReLU {
			y := in[2].Data().([]float64)
			par.Split(len(o), func(lo, hi int) { reluBack64(o[lo:hi], y[lo:hi], o[lo:hi]) })
		}
	}
	return out, nil
}

func (op *matMulOp) SymDiff(G.Nodes, *G.Node, *G.Node) (G.Nodes, error) {
	return nil, fmt.Errorf("%v: no second-order gradient", op)
}
