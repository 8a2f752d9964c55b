package layers

import (
	"fmt"

	"gonum.org/v1/gonum/blas"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/fairmp/fairmp/internal/fastblas"
	"github.com/fairmp/fairmp/internal/opkit"
	"github.com/fairmp/fairmp/internal/par"
)

// denseSpec computes act(x·W + b) in one op: the product by gorgonia's
// BLAS (the call gorgonia's Mul makes), then the bias and the activation
// in one pass over the output (with fairmp's BLAS in float32, on each
// block of rows as soon as the product finishes it), into a buffer kept
// between runs. Its gradients are the ops gorgonia's Mul, AddRow and
// Activate would build (the ReLU mask read from the output, where y > 0
// exactly where x·W + b > 0), as custom ops with kept buffers. The values
// equal the separate nodes' bit for bit (tested).
var denseSpec = &opkit.Spec[denseParams]{
	ID: "fairmp.Dense",
	Name: func(p denseParams) string {
		s := "Dense"
		if p.bias {
			s += "+b"
		}
		if p.relu {
			s += "+relu"
		}
		return s
	},
	Sig: func(p denseParams) opkit.Sig { return opkit.Mats(p.arity()) },
	Shape: func(p denseParams, in []tensor.Shape) (tensor.Shape, error) {
		n, k, m := in[0][0], in[0][1], in[1][1]
		if in[1][0] != k || (p.bias && (in[2][0] != 1 || in[2][1] != m)) {
			return nil, fmt.Errorf("shapes %v, want n × k, k × m and 1 × m", in)
		}
		return tensor.Shape{n, m}, nil
	},
	Hash: func(p denseParams, h opkit.Hasher) { h.Bool(p.relu, p.bias) },
	F32:  denseFwd[float32],
	F64:  denseFwd[float64],
	Grad: denseGrad,
	Keep: true,
}

type denseParams struct{ relu, bias bool }

func (p denseParams) arity() int {
	if p.bias {
		return 3
	}
	return 2
}

// matMulParams are a product op(A)·op(B)'s (op: transpose or not), by
// gorgonia's BLAS into a kept buffer: the gradient products of denseSpec.
type matMulParams struct {
	tA, tB bool
	// maskReLU multiplies the product by the ReLU's derivative at a third
	// input y (1 where y > 0): A·Bᵀ ⊙ relu'(y), the gradient reaching a
	// ReLU layer's pre-activation, in the product's epilogue.
	maskReLU bool
	// a and b are the input nodes (not hashed): a later Grad fuses the
	// product with the ReLU mask it feeds.
	a, b *G.Node
}

var matMulSpec = &opkit.Spec[matMulParams]{
	ID: "fairmp.MatMul",
	Name: func(p matMulParams) string {
		return fmt.Sprintf("MatMul(tA=%v, tB=%v, maskReLU=%v)", p.tA, p.tB, p.maskReLU)
	},
	Sig: func(p matMulParams) opkit.Sig {
		if p.maskReLU {
			return opkit.Mats(3)
		}
		return opkit.Mats(2)
	},
	Shape: func(p matMulParams, in []tensor.Shape) (tensor.Shape, error) {
		m, k, kb, n := p.dims(in[0], in[1])
		if k != kb || (p.maskReLU && (in[2][0] != m || in[2][1] != n)) {
			return nil, fmt.Errorf("shapes %v", in)
		}
		return tensor.Shape{m, n}, nil
	},
	Hash: func(p matMulParams, h opkit.Hasher) { h.Bool(p.tA, p.tB, p.maskReLU) },
	F32:  matMulFwd[float32],
	F64:  matMulFwd[float64],
	Keep: true,
}

// denseAct returns act(x·w + b) as one node (b may be nil; relu false: no
// activation).
func denseAct(x, w, b *G.Node, relu bool) (*G.Node, error) {
	if b == nil {
		return opkit.Apply(denseSpec, denseParams{relu: relu}, x, w)
	}
	if sb := b.Shape(); len(sb) != 2 || sb[0] != 1 || sb[1] != w.Shape()[1] || b.Dtype() != w.Dtype() {
		return nil, fmt.Errorf("layers: bias %s for weights %s, want 1 × %d of one dtype", opkit.DescribeNode(b), opkit.DescribeNode(w), w.Shape()[1])
	}
	return opkit.Apply(denseSpec, denseParams{relu: relu, bias: true}, x, w, b)
}

func denseFwd[T float32 | float64](p denseParams, a opkit.Args[T]) error {
	n, k, m := a.Shape[0][0], a.Shape[0][1], a.Shape[1][1]
	var b []T
	if p.bias {
		b = a.In[2]
	}
	switch x := any(a.In[0]).(type) {
	case []float32:
		b, _ := any(b).([]float32)
		o := any(a.Out).([]float32)
		w := any(a.In[1]).([]float32)
		if fb, ok := G.WhichBLAS().(fastblas.Implementation); ok && (p.bias || p.relu) {
			// The bias and the ReLU on each block of rows as soon as the
			// product has finished it, while it is in cache.
			fb.SgemmThen(blas.NoTrans, blas.NoTrans, n, m, k, 1, x, k, w, m, 0, o, m,
				func(lo, hi int) { rowsBiasAct(o[lo*m:hi*m], b, m, p.relu) })
			break
		}
		G.WhichBLAS().Sgemm(blas.NoTrans, blas.NoTrans, n, m, k, 1, x, k, w, m, 0, o, m)
		biasAct(o, b, m, p.relu)
	case []float64:
		b, _ := any(b).([]float64)
		o := any(a.Out).([]float64)
		G.WhichBLAS().Dgemm(blas.NoTrans, blas.NoTrans, n, m, k, 1, x, k, any(a.In[1]).([]float64), m, 0, o, m)
		biasAct(o, b, m, p.relu)
	}
	return nil
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

func denseGrad(op *opkit.Op[denseParams], inputs G.Nodes, output, grad *G.Node) (G.Nodes, error) {
	x, w := inputs[0], inputs[1]
	dz := grad
	if mm, ok := opkit.ParamsOf(matMulSpec, grad.Op()); ok && op.P.relu && mm.tB && !mm.tA && !mm.maskReLU && mm.a != nil {
		// grad is the next layer's dY·Wᵀ: mask it in its product.
		var err error
		if dz, err = opkit.Apply(matMulSpec, matMulParams{tB: true, maskReLU: true}, mm.a, mm.b, output); err != nil {
			return nil, err
		}
	} else if op.P.relu {
		var err error
		if dz, err = opkit.Apply(actSpec, actParams{act: ReLU(), dims: 2, grad: true}, output, grad); err != nil {
			return nil, err
		}
	}
	dx, err := opkit.Apply(matMulSpec, matMulParams{tB: true, a: dz, b: w}, dz, w)
	if err != nil {
		return nil, err
	}
	dw, err := opkit.Apply(matMulSpec, matMulParams{tA: true}, x, dz)
	if err != nil {
		return nil, err
	}
	if !op.P.bias {
		return G.Nodes{dx, dw}, nil
	}
	db, err := opkit.Apply(colSumSpec, struct{}{}, dz)
	if err != nil {
		return nil, err
	}
	return G.Nodes{dx, dw, db}, nil
}

// dims returns m, k, n of op(A) (m × k) · op(B) (k × n) for stored shapes
// sa and sb.
func (p matMulParams) dims(sa, sb tensor.Shape) (m, k, kb, n int) {
	m, k = sa[0], sa[1]
	if p.tA {
		m, k = k, m
	}
	kb, n = sb[0], sb[1]
	if p.tB {
		kb, n = n, kb
	}
	return m, k, kb, n
}

func matMulFwd[T float32 | float64](p matMulParams, a opkit.Args[T]) error {
	m, k, _, n := p.dims(a.Shape[0], a.Shape[1])
	tA, tB := blas.NoTrans, blas.NoTrans
	if p.tA {
		tA = blas.Trans
	}
	if p.tB {
		tB = blas.Trans
	}
	lda, ldb := a.Shape[0][1], a.Shape[1][1]
	switch x := any(a.In[0]).(type) {
	case []float32:
		o := any(a.Out).([]float32)
		bm := any(a.In[1]).([]float32)
		if !p.maskReLU {
			G.WhichBLAS().Sgemm(tA, tB, m, n, k, 1, x, lda, bm, ldb, 0, o, n)
			break
		}
		y := any(a.In[2]).([]float32)
		if fb, ok := G.WhichBLAS().(fastblas.Implementation); ok {
			fb.SgemmThen(tA, tB, m, n, k, 1, x, lda, bm, ldb, 0, o, n,
				func(lo, hi int) { reluBack32(o[lo*n:hi*n], y[lo*n:hi*n], o[lo*n:hi*n]) })
			break
		}
		G.WhichBLAS().Sgemm(tA, tB, m, n, k, 1, x, lda, bm, ldb, 0, o, n)
		par.Split(len(o), func(lo, hi int) { reluBack32(o[lo:hi], y[lo:hi], o[lo:hi]) })
	case []float64:
		o := any(a.Out).([]float64)
		G.WhichBLAS().Dgemm(tA, tB, m, n, k, 1, x, lda, any(a.In[1]).([]float64), ldb, 0, o, n)
		if p.maskReLU {
			y := any(a.In[2]).([]float64)
			par.Split(len(o), func(lo, hi int) { reluBack64(o[lo:hi], y[lo:hi], o[lo:hi]) })
		}
	}
	return nil
}
