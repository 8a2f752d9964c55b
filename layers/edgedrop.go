package layers

import (
	"fmt"
	"math/rand"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/fairmp/fairmp/graph"
	"github.com/fairmp/fairmp/internal/opkit"
	"github.com/fairmp/fairmp/internal/par"
)

// EdgeDropoutSpMM returns (A ⊙ M)·x, where in training M drops each
// stored entry of A (each directed edge and each self-loop) with
// probability p and scales the kept ones by 1/(1−p), as PyG's APPNP
// applies dropout to the normalised edge weights (no renormalisation);
// in evaluation (phase nil or not training) it is A·x. A fresh mask is
// drawn on every training run from math/rand seeded with seed; the
// gradient (A ⊙ M)ᵀ·dY uses the mask of the same run.
//
// With p = 0 it is SpMM(a, x). It returns an error for p outside [0, 1)
// and for the inputs SpMM rejects.
func EdgeDropoutSpMM(a *graph.Matrix, x *G.Node, p float64, seed int64, phase *Phase) (*G.Node, error) {
	if !(p >= 0 && p < 1) {
		return nil, fmt.Errorf("layers: EdgeDropoutSpMM: p = %v, want 0 <= p < 1", p)
	}
	if p == 0 {
		return SpMM(a, x)
	}
	if a == nil || x == nil {
		return nil, fmt.Errorf("layers: EdgeDropoutSpMM: nil matrix or input node")
	}
	if err := opkit.CheckFloat(x.Dtype()); err != nil {
		return nil, fmt.Errorf("layers: EdgeDropoutSpMM: input %s: %w", opkit.DescribeNode(x), err)
	}
	if _, cols := a.Dims(); len(x.Shape()) != 2 || x.Shape()[0] != cols {
		return nil, fmt.Errorf("layers: EdgeDropoutSpMM: input %s, want a matrix with %d rows", opkit.DescribeNode(x), cols)
	}
	op := &edgeDropOp{a: a, p: p, seed: seed, phase: phase, rng: rand.New(rand.NewSource(seed)), id: opIDs.Add(1)}
	return opkit.Apply(edgeDropSpec, op, x)
}

// edgeDropOp is the state of an edge-dropout product, (A ⊙ M)·x; with
// back set (holding the forward op's) it is the gradient's, (A ⊙ M)ᵀ·dY
// with the forward op's latest mask.
type edgeDropOp struct {
	a     *graph.Matrix
	p     float64
	seed  int64
	phase *Phase
	id    uint64
	rng   *rand.Rand
	back  *edgeDropOp

	// The transpose's structure, built with the gradient op: row j of Aᵀ
	// holds entries tIndptr[j]:tIndptr[j+1] with columns tIndices and
	// values taken from A's entry tPerm[q].
	tIndptr  []int
	tIndices []int32
	tPerm    []int

	masked bool
	vals64 []float64 // masked values of the latest training run
	vals32 []float32
}

// edgeDropSpec is EdgeDropoutSpMM and its gradient.
var edgeDropSpec = &opkit.Spec[*edgeDropOp]{
	ID: "fairmp.EdgeDropoutSpMM",
	Name: func(op *edgeDropOp) string {
		if op.back != nil {
			return fmt.Sprintf("EdgeDropoutSpMMᵀ#%d", op.back.id)
		}
		return fmt.Sprintf("EdgeDropoutSpMM(A#%d,p=%g,seed=%d)", op.a.ID(), op.p, op.seed)
	},
	Sig: func(*edgeDropOp) opkit.Sig { return opkit.Mats(1) },
	Shape: func(op *edgeDropOp, in []tensor.Shape) (tensor.Shape, error) {
		rows, cols := op.a.Dims()
		if op.back != nil {
			rows, cols = cols, rows
		}
		if in[0][0] != cols {
			return nil, fmt.Errorf("input shape %v, want %d rows", in[0], cols)
		}
		return tensor.Shape{rows, in[0][1]}, nil
	},
	Hash: func(op *edgeDropOp, h opkit.Hasher) {
		if op.back != nil {
			h.Bool(true)
			h.U64(op.back.id)
			return
		}
		h.Bool(false)
		h.U64(op.a.ID())
		h.F64(op.p)
		h.Int(int(op.seed))
		h.Str(fmt.Sprintf("%p", op.phase))
	},
	F32: edgeDropFwd[float32],
	F64: edgeDropFwd[float64],
	DiffWRT: func(op *edgeDropOp, n int) []bool {
		d := make([]bool, n)
		for i := range d {
			d[i] = op.back == nil
		}
		return d
	},
	Grad: func(o *opkit.Op[*edgeDropOp], _ G.Nodes, _, grad *G.Node) (G.Nodes, error) {
		op := o.P
		if op.back != nil {
			return nil, fmt.Errorf("%v: second derivatives are not implemented", o)
		}
		op.buildTranspose()
		d, err := o.Apply(&edgeDropOp{a: op.a, back: op}, grad)
		if err != nil {
			return nil, err
		}
		return G.Nodes{d}, nil
	},
	Keep: true,
}

func edgeDropFwd[T float32 | float64](op *edgeDropOp, a opkit.Args[T]) error {
	xs, res, xc := a.In[0], a.Out, a.Shape[0][1]
	fwd := op
	if op.back != nil {
		fwd = op.back
	} else {
		fwd.masked = fwd.phase.Training()
		if fwd.masked {
			fwd.drawMask(a.OutDense.Dtype())
		}
	}
	if !fwd.masked && op.back == nil {
		// Evaluation: the plain product, on graph's parallel kernel.
		switch xs := any(xs).(type) {
		case []float64:
			op.a.MulDense64(any(res).([]float64), xs, xc)
		case []float32:
			op.a.MulDense32(any(res).([]float32), xs, xc)
		}
		return nil
	}
	switch xs := any(xs).(type) {
	case []float64:
		vals := op.a.Values64()
		if fwd.masked {
			vals = fwd.vals64
		}
		op.mul(fwd, vals, any(res).([]float64), xs, xc)
	case []float32:
		vals := op.a.Values32()
		if fwd.masked {
			vals = fwd.vals32
		}
		op.mul(fwd, vals, any(res).([]float32), xs, xc)
	}
	return nil
}

// drawMask fills the masked values for one training run.
func (op *edgeDropOp) drawMask(dt tensor.Dtype) {
	thr := uint64(op.p * (1 << 53))
	scale := 1 / (1 - op.p)
	v := op.a.Values64()
	if dt == tensor.Float64 {
		if op.vals64 == nil {
			op.vals64 = make([]float64, len(v))
		}
		for k, a := range v {
			op.vals64[k] = 0
			if op.rng.Uint64()>>11 >= thr {
				op.vals64[k] = a * scale
			}
		}
		return
	}
	if op.vals32 == nil {
		op.vals32 = make([]float32, len(v))
	}
	for k, a := range v {
		op.vals32[k] = 0
		if op.rng.Uint64()>>11 >= thr {
			op.vals32[k] = float32(a * scale)
		}
	}
}

// mul computes out = M·x for the forward op, or out = Mᵀ·x for the
// gradient op (fwd holds the transpose's structure), M having the values
// vals on A's pattern.
func (op *edgeDropOp) mul(fwd *edgeDropOp, vals any, out, x any, c int) {
	switch v := vals.(type) {
	case []float64:
		if op.back == nil {
			gatherMul(op.a.Indptr(), op.a.Indices(), nil, v, out.([]float64), x.([]float64), c)
		} else {
			gatherMul(fwd.tIndptr, fwd.tIndices, fwd.tPerm, v, out.([]float64), x.([]float64), c)
		}
	case []float32:
		if op.back == nil {
			gatherMul(op.a.Indptr(), op.a.Indices(), nil, v, out.([]float32), x.([]float32), c)
		} else {
			gatherMul(fwd.tIndptr, fwd.tIndices, fwd.tPerm, v, out.([]float32), x.([]float32), c)
		}
	}
}

// gatherMul computes out[i,:] = Σ_q vals[perm[q]]·x[indices[q],:] over
// the entries q of row i (perm nil: the identity). Rows are computed in
// parallel, each by one goroutine in a fixed order, so the result does not
// depend on the number of threads.
func gatherMul[T float32 | float64](indptr []int, indices []int32, perm []int, vals []T, out, x []T, c int) {
	rows := len(indptr) - 1
	const block = 1024
	nb := (rows + block - 1) / block
	work := func(b int) {
		if c == 2 { // APPNP on two classes: the common case, unrolled
			for i := b * block; i < min(rows, (b+1)*block); i++ {
				var s0, s1 T
				for q := indptr[i]; q < indptr[i+1]; q++ {
					p := q
					if perm != nil {
						p = perm[q]
					}
					v := vals[p]
					j := int(indices[q]) * 2
					xr := x[j : j+2 : j+2]
					s0 += v * xr[0]
					s1 += v * xr[1]
				}
				out[2*i], out[2*i+1] = s0, s1
			}
			return
		}
		for i := b * block; i < min(rows, (b+1)*block); i++ {
			o := out[i*c : (i+1)*c : (i+1)*c]
			for k := range o {
				o[k] = 0
			}
			for q := indptr[i]; q < indptr[i+1]; q++ {
				p := q
				if perm != nil {
					p = perm[q]
				}
				v := vals[p]
				if v == 0 {
					continue
				}
				j := int(indices[q]) * c
				for k, xv := range x[j : j+c : j+c] {
					o[k] += v * xv
				}
			}
		}
	}
	par.For(nb, work)
}

// buildTranspose fills the transpose's structure (counting sort by
// column, stable in row order).
func (op *edgeDropOp) buildTranspose() {
	if op.tIndptr != nil {
		return
	}
	rows, cols := op.a.Dims()
	indptr, indices := op.a.Indptr(), op.a.Indices()
	cnt := make([]int, cols+1)
	for _, j := range indices {
		cnt[j+1]++
	}
	for j := 0; j < cols; j++ {
		cnt[j+1] += cnt[j]
	}
	fill := append([]int(nil), cnt[:cols]...)
	op.tIndices = make([]int32, len(indices))
	op.tPerm = make([]int, len(indices))
	for i := 0; i < rows; i++ {
		for p := indptr[i]; p < indptr[i+1]; p++ {
			j := indices[p]
			op.tIndices[fill[j]] = int32(i)
			op.tPerm[fill[j]] = p
			fill[j]++
		}
	}
	op.tIndptr = cnt
}
