package layers

import (
	"fmt"
	"hash"
	"hash/fnv"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/chewxy/hm"
	"github.com/fairmp/fairmp/internal/opkit"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// narrowMax is the widest output for which Linear uses narrowMul instead
// of gorgonia's Mul. gonum's pure-Go sgemm/dgemm calls an axpy of the
// output's width for every (row, inner index) pair, so for a width of 2
// (the logits of a binary classifier) it spends almost all its time in
// call overhead: about 0.3 s per epoch for SGC's 67,796 × 276 · 276 × 2
// product, against about 0.03 s here.
const narrowMax = 8

// narrowMul returns a·b for an n × k matrix a and a k × m matrix b with a
// small m, computed with plain loops, rows in parallel. Its gradients are
// dA = dY·bᵀ and dB = aᵀ·dY (the latter summed over fixed blocks of rows
// in a fixed order, so results do not depend on the number of threads).
func narrowMul(a, b *G.Node) (*G.Node, error) {
	sa, sb := a.Shape(), b.Shape()
	if len(sa) != 2 || len(sb) != 2 || sa[1] != sb[0] || a.Dtype() != b.Dtype() {
		return nil, fmt.Errorf("layers: narrowMul: %s · %s, want n × k and k × m matrices of one dtype", describeNode(a), describeNode(b))
	}
	return G.ApplyOp(&narrowMulOp{mode: mulNN}, a, b)
}

const (
	mulNN = iota // a (n×k) · b (k×m) → n×m
	mulNT        // a (n×m) · bᵀ, b k×m → n×k
	mulTN        // aᵀ · b, a n×k, b n×m → k×m
)

type narrowMulOp struct {
	mode int
}

var _ G.SDOp = (*narrowMulOp)(nil)

func (op *narrowMulOp) Arity() int           { return 2 }
func (op *narrowMulOp) Type() hm.Type        { return opkit.FnType(2) }
func (op *narrowMulOp) ReturnsPtr() bool     { return false }
func (op *narrowMulOp) CallsExtern() bool    { return false }
func (op *narrowMulOp) OverwritesInput() int { return -1 }
func (op *narrowMulOp) DiffWRT(inputs int) []bool {
	if op.mode == mulNN {
		return trues(inputs)
	}
	return make([]bool, inputs)
}
func (op *narrowMulOp) String() string {
	return [...]string{"NarrowMul", "NarrowMulNT", "NarrowMulTN"}[op.mode]
}
func (op *narrowMulOp) WriteHash(h hash.Hash) { fmt.Fprintf(h, "fairmp.NarrowMul/%d", op.mode) }
func (op *narrowMulOp) Hashcode() uint32 {
	h := fnv.New32a()
	op.WriteHash(h)
	return h.Sum32()
}

// outShape returns the output shape for input shapes (ar, ac), (br, bc).
func (op *narrowMulOp) outShape(ar, ac, br, bc int) (int, int, error) {
	switch op.mode {
	case mulNN:
		if ac == br {
			return ar, bc, nil
		}
	case mulNT:
		if ac == bc {
			return ar, br, nil
		}
	case mulTN:
		if ar == br {
			return ac, bc, nil
		}
	}
	return 0, 0, fmt.Errorf("%v: shapes %d × %d and %d × %d do not match", op, ar, ac, br, bc)
}

func (op *narrowMulOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	if len(in) != 2 {
		return nil, fmt.Errorf("%v: %d inputs, want 2", op, len(in))
	}
	sa, ok1 := in[0].(tensor.Shape)
	sb, ok2 := in[1].(tensor.Shape)
	if !ok1 || !ok2 || len(sa) != 2 || len(sb) != 2 {
		return nil, fmt.Errorf("%v: input shapes %v, %v, want matrices", op, in[0], in[1])
	}
	r, c, err := op.outShape(sa[0], sa[1], sb[0], sb[1])
	if err != nil {
		return nil, err
	}
	return tensor.Shape{r, c}, nil
}

func (op *narrowMulOp) Do(inputs ...G.Value) (G.Value, error) {
	if len(inputs) != 2 {
		return nil, fmt.Errorf("%v: %d inputs, want 2", op, len(inputs))
	}
	a, err := opkit.Dense(inputs[0])
	if err != nil {
		return nil, fmt.Errorf("%v: %v", op, err)
	}
	b, err := opkit.Dense(inputs[1])
	if err != nil {
		return nil, fmt.Errorf("%v: %v", op, err)
	}
	ar, ac, err1 := opkit.Shape2(a)
	br, bc, err2 := opkit.Shape2(b)
	if err1 != nil || err2 != nil || a.Dtype() != b.Dtype() {
		return nil, fmt.Errorf("%v: inputs %v %v and %v %v", op, a.Dtype(), a.Shape(), b.Dtype(), b.Shape())
	}
	r, c, err := op.outShape(ar, ac, br, bc)
	if err != nil {
		return nil, err
	}
	out := opkit.Alloc(a.Dtype(), r, c)
	switch o := out.Data().(type) {
	case []float64:
		mulKernel(op.mode, o, a.Data().([]float64), b.Data().([]float64), ar, ac, br, bc)
	case []float32:
		mulKernel(op.mode, o, a.Data().([]float32), b.Data().([]float32), ar, ac, br, bc)
	default:
		return nil, fmt.Errorf("%v: dtype %v, want float32 or float64", op, a.Dtype())
	}
	return out, nil
}

// mulBlock is the fixed row-block size of the parallel loops. It does not
// depend on the number of threads, so neither does any result.
const mulBlock = 2048

// forBlocks calls f(lo, hi, b) for the fixed row blocks b of [0, n), in
// parallel.
func forBlocks(n int, f func(lo, hi, b int)) {
	nb := (n + mulBlock - 1) / mulBlock
	workers := min(runtime.GOMAXPROCS(0), nb)
	if workers <= 1 {
		for b := 0; b < nb; b++ {
			f(b*mulBlock, min(n, (b+1)*mulBlock), b)
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				b := int(next.Add(1)) - 1
				if b >= nb {
					return
				}
				f(b*mulBlock, min(n, (b+1)*mulBlock), b)
			}
		}()
	}
	wg.Wait()
}

func mulKernel[T float32 | float64](mode int, out, a, b []T, ar, ac, br, bc int) {
	switch mode {
	case mulNN: // out n×m = a n×k · b k×m
		k, m := ac, bc
		forBlocks(ar, func(lo, hi, _ int) {
			for i := lo; i < hi; i++ {
				o := out[i*m : (i+1)*m : (i+1)*m]
				for j := range o {
					o[j] = 0
				}
				for l, x := range a[i*k : (i+1)*k] {
					if x == 0 {
						continue
					}
					w := b[l*m : (l+1)*m : (l+1)*m]
					for j, wv := range w {
						o[j] += x * wv
					}
				}
			}
		})
	case mulNT: // out n×k = a n×m · (b k×m)ᵀ
		m, k := ac, br
		forBlocks(ar, func(lo, hi, _ int) {
			for i := lo; i < hi; i++ {
				g := a[i*m : (i+1)*m : (i+1)*m]
				o := out[i*k : (i+1)*k : (i+1)*k]
				for l := range o {
					w := b[l*m : (l+1)*m : (l+1)*m]
					var s T
					for j, gv := range g {
						s += gv * w[j]
					}
					o[l] = s
				}
			}
		})
	case mulTN: // out k×m = (a n×k)ᵀ · b n×m, per-block partial sums
		n, k, m := ar, ac, bc
		nb := (n + mulBlock - 1) / mulBlock
		parts := make([][]T, nb)
		forBlocks(n, func(lo, hi, blk int) {
			p := make([]T, k*m)
			for i := lo; i < hi; i++ {
				g := b[i*m : (i+1)*m : (i+1)*m]
				for l, x := range a[i*k : (i+1)*k] {
					if x == 0 {
						continue
					}
					pr := p[l*m : (l+1)*m : (l+1)*m]
					for j, gv := range g {
						pr[j] += x * gv
					}
				}
			}
			parts[blk] = p
		})
		for i := range out {
			out[i] = 0
		}
		for _, p := range parts {
			for i, v := range p {
				out[i] += v
			}
		}
	}
}

func (op *narrowMulOp) SymDiff(inputs G.Nodes, output, grad *G.Node) (G.Nodes, error) {
	if op.mode != mulNN {
		return nil, fmt.Errorf("%v: second derivatives are not implemented", op)
	}
	da, err := G.ApplyOp(&narrowMulOp{mode: mulNT}, grad, inputs[1])
	if err != nil {
		return nil, err
	}
	db, err := G.ApplyOp(&narrowMulOp{mode: mulTN}, inputs[0], grad)
	if err != nil {
		return nil, err
	}
	return G.Nodes{da, db}, nil
}
