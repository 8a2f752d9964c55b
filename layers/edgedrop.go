package layers

import (
	"encoding/binary"
	"fmt"
	"hash"
	"math"
	"math/rand"

	"github.com/chewxy/hm"
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
	return G.ApplyOp(op, x)
}

// edgeDropOp computes (A ⊙ M)·x; with back set (holding the forward op)
// it computes (A ⊙ M)ᵀ·dY with the forward op's latest mask.
type edgeDropOp struct {
	opkit.Buf // the output, kept between runs
	opkit.Pure
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

var (
	_ G.SDOp            = (*edgeDropOp)(nil)
	_ G.UsePreallocDoer = (*edgeDropOp)(nil)
)

func (op *edgeDropOp) Arity() int                { return 1 }
func (op *edgeDropOp) Type() hm.Type             { return opkit.FnType(1) }
func (op *edgeDropOp) DiffWRT(inputs int) []bool { return []bool{true} }
func (op *edgeDropOp) String() string {
	if op.back != nil {
		return fmt.Sprintf("EdgeDropoutSpMMᵀ#%d", op.back.id)
	}
	return fmt.Sprintf("EdgeDropoutSpMM(A#%d,p=%g,seed=%d)", op.a.ID(), op.p, op.seed)
}
func (op *edgeDropOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	s, ok := in[0].(tensor.Shape)
	if !ok || len(s) != 2 {
		return nil, fmt.Errorf("%v: input shape %v, want a matrix", op, in[0])
	}
	rows, cols := op.a.Dims()
	if op.back != nil {
		return tensor.Shape{cols, s[1]}, nil
	}
	return tensor.Shape{rows, s[1]}, nil
}
func (op *edgeDropOp) WriteHash(h hash.Hash) {
	var b [8]byte
	if op.back != nil {
		fmt.Fprintf(h, "fairmp.EdgeDropoutSpMMT")
		binary.LittleEndian.PutUint64(b[:], op.back.id)
		h.Write(b[:])
		return
	}
	fmt.Fprintf(h, "fairmp.EdgeDropoutSpMM")
	for _, u := range []uint64{op.a.ID(), math.Float64bits(op.p), uint64(op.seed)} {
		binary.LittleEndian.PutUint64(b[:], u)
		h.Write(b[:])
	}
	fmt.Fprintf(h, "%p", op.phase)
}
func (op *edgeDropOp) Hashcode() uint32                      { return opkit.Hash32(op.WriteHash) }
func (op *edgeDropOp) Do(inputs ...G.Value) (G.Value, error) { return op.UsePreallocDo(nil, inputs...) }

func (op *edgeDropOp) UsePreallocDo(prealloc G.Value, inputs ...G.Value) (G.Value, error) {
	if len(inputs) != 1 {
		return nil, fmt.Errorf("%v: %d inputs, want 1", op, len(inputs))
	}
	x, err := opkit.Dense(inputs[0])
	if err != nil {
		return nil, fmt.Errorf("%v: %w", op, err)
	}
	rows, cols := op.a.Dims()
	in, out := cols, rows
	if op.back != nil {
		in, out = rows, cols
	}
	xr, xc, err := opkit.Shape2(x)
	if err != nil || xr != in {
		return nil, fmt.Errorf("%v: input shape %v, want %d rows", op, x.Shape(), in)
	}
	res := op.Get(prealloc, x.Dtype(), out, xc)
	fwd := op
	if op.back != nil {
		fwd = op.back
	} else {
		fwd.masked = fwd.phase.Training()
		if fwd.masked {
			fwd.drawMask(x.Dtype())
		}
	}
	if !fwd.masked && op.back == nil {
		// Evaluation: the plain product, on graph's parallel kernel.
		switch xs := x.Data().(type) {
		case []float64:
			op.a.MulDense64(res.Data().([]float64), xs, xc)
			return res, nil
		case []float32:
			op.a.MulDense32(res.Data().([]float32), xs, xc)
			return res, nil
		}
	}
	switch xs := x.Data().(type) {
	case []float64:
		vals := op.a.Values64()
		if fwd.masked {
			vals = fwd.vals64
		}
		op.mul(fwd, vals, res.Data().([]float64), xs, xc)
	case []float32:
		vals := op.a.Values32()
		if fwd.masked {
			vals = fwd.vals32
		}
		op.mul(fwd, vals, res.Data().([]float32), xs, xc)
	default:
		return nil, fmt.Errorf("%v: dtype %v, want float32 or float64", op, x.Dtype())
	}
	return res, nil
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

func (op *edgeDropOp) SymDiff(inputs G.Nodes, output, grad *G.Node) (G.Nodes, error) {
	if op.back != nil {
		return nil, fmt.Errorf("%v: second derivatives are not implemented", op)
	}
	op.buildTranspose()
	d, err := G.ApplyOp(&edgeDropOp{a: op.a, back: op}, grad)
	if err != nil {
		return nil, err
	}
	return G.Nodes{d}, nil
}
