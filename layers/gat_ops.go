package layers

import (
	"encoding/binary"
	"fmt"
	"hash"
	"math"
	"runtime"
	"sync/atomic"

	"github.com/fairmp/fairmp/internal/par"

	"github.com/chewxy/hm"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/fairmp/fairmp/graph"
	"github.com/fairmp/fairmp/internal/opkit"
	"github.com/fairmp/fairmp/internal/spkern"
)

// This file holds GAT's custom ops and their kernels. The attention layer is
// computed by two forward ops:
//
//	gatKAttn: (H, aSrc, aDst) -> α      per-edge attention, E × heads, with
//	                                    the edge softmax over each destination
//	gatKAgg:  (α, H)          -> out    out_i = Σ_j α_ij h_j, per head,
//	                                    concatenated or averaged
//
// and their gradient ops (gatKAttnGrad, gatKScoreGradH, gatKScoreGradSrc,
// gatKScoreGradDst, gatKAggT, gatKEdgeDot). Edges are stored in CSR order of
// a gatCSR: rows are destinations, the entries of row i are i's in-edges
// (its neighbours, plus itself when self-loops are added), sorted by source.

var gatCSRIDs atomic.Uint64

// gatCSR is the edge structure of a GAT layer: row i lists the sources j of
// the edges j→i in ascending order. rev[p] is the position of the reverse
// edge of edge p (the graph is undirected, so it always exists; a self-loop
// is its own reverse).
type gatCSR struct {
	n      int
	indptr []int
	src    []int32
	rev    []int32
	id     uint64
}

// newGATCSR builds the in-edge structure of gr, with one self-loop per node
// when selfLoops is true. graph.Graph holds no self-loops, so none is
// counted twice.
func newGATCSR(gr *graph.Graph, selfLoops bool) *gatCSR {
	n := gr.N()
	m := 2 * gr.NumEdges()
	if selfLoops {
		m += n
	}
	indptr := make([]int, n+1)
	src := make([]int32, 0, m)
	for i := 0; i < n; i++ {
		placed := !selfLoops
		for _, j := range gr.Neighbors(i) {
			if !placed && int(j) > i {
				src = append(src, int32(i))
				placed = true
			}
			src = append(src, j)
		}
		if !placed {
			src = append(src, int32(i))
		}
		indptr[i+1] = len(src)
	}
	// The entries of row j are the i with j ∈ N(i), ascending; visiting the
	// rows i in ascending order meets them in the same order.
	rev := make([]int32, len(src))
	cursor := append([]int(nil), indptr[:n]...)
	for i := 0; i < n; i++ {
		for p := indptr[i]; p < indptr[i+1]; p++ {
			j := src[p]
			rev[p] = int32(cursor[j])
			cursor[j]++
		}
	}
	return &gatCSR{n: n, indptr: indptr, src: src, rev: rev, id: gatCSRIDs.Add(1)}
}

// edges returns the number of stored (directed) edges, self-loops included.
func (c *gatCSR) edges() int { return len(c.src) }

// gatParallelRows runs f over fixed row blocks of a CSR in parallel (see
// par.Rows); each row must be computed independently.
func gatParallelRows(indptr []int, f func(lo, hi int)) { par.Rows(indptr, 1<<13, f) }

// gatParallelRange is gatParallelRows for n rows of equal cost.
func gatParallelRange(n, width int, f func(lo, hi int)) {
	workers := runtime.GOMAXPROCS(0)
	if n*width < 1<<13 || workers <= 1 || n < 2 {
		f(0, n)
		return
	}
	par.Chunks(n, (n+4*workers-1)/(4*workers), f)
}

type gatFloat interface{ float32 | float64 }

func gatExp[T gatFloat](x T) T { return T(math.Exp(float64(x))) }

// gatScores computes s = per-head dot products of the rows of h (n × heads·f)
// with a (heads·f), and the same for b into d: s[i·heads+k] = Σ_q h[i, k·f+q]·a[k·f+q].
func gatScores[T gatFloat](h, a, b []T, n, heads, f int, s, d []T) {
	hf := heads * f
	gatParallelRange(n, hf, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			hr := h[i*hf : (i+1)*hf : (i+1)*hf]
			for k := 0; k < heads; k++ {
				hk := hr[k*f : (k+1)*f : (k+1)*f]
				ak := a[k*f : (k+1)*f : (k+1)*f]
				bk := b[k*f : (k+1)*f : (k+1)*f]
				s[i*heads+k] = gatDot(hk, ak)
				d[i*heads+k] = gatDot(hk, bk)
			}
		}
	})
}

// gatAttnForward writes α (E × heads): for edge p = (j→i) and head k,
// e = LeakyReLU(s_j + d_i), α = softmax of e over the in-edges of i, with
// the row maximum subtracted before exponentiation.
func gatAttnForward[T gatFloat](c *gatCSR, h, as, ad []T, heads, f int, slope T, alpha []T) {
	n := c.n
	s := make([]T, n*heads)
	d := make([]T, n*heads)
	gatScores(h, as, ad, n, heads, f, s, d)
	indptr, src := c.indptr, c.src
	gatParallelRows(indptr, func(lo, hi int) {
		mx := make([]T, heads)
		sum := make([]T, heads)
		for i := lo; i < hi; i++ {
			p0, p1 := indptr[i], indptr[i+1]
			if p0 == p1 {
				continue
			}
			di := d[i*heads : (i+1)*heads : (i+1)*heads]
			for k := range mx {
				mx[k] = T(math.Inf(-1))
				sum[k] = 0
			}
			for p := p0; p < p1; p++ {
				j := int(src[p])
				sj := s[j*heads : (j+1)*heads : (j+1)*heads]
				ap := alpha[p*heads : (p+1)*heads : (p+1)*heads]
				for k := range ap {
					z := sj[k] + di[k]
					if z <= 0 {
						z *= slope
					}
					ap[k] = z
					if z > mx[k] {
						mx[k] = z
					}
				}
			}
			for p := p0; p < p1; p++ {
				ap := alpha[p*heads : (p+1)*heads : (p+1)*heads]
				for k := range ap {
					e := gatExp(ap[k] - mx[k])
					ap[k] = e
					sum[k] += e
				}
			}
			for k := range sum {
				sum[k] = 1 / sum[k]
			}
			for p := p0; p < p1; p++ {
				ap := alpha[p*heads : (p+1)*heads : (p+1)*heads]
				for k := range ap {
					ap[k] *= sum[k]
				}
			}
		}
	})
}

// gatAttnBackward computes, from α, dα and the scores, the gradients with
// respect to the per-node source and destination scores s and d, written
// side by side into dsd (n × 2·heads: dS then dD).
//
// With β = dα, the softmax backward is dz_p = α_p (β_p − Σ_q α_q β_q) over
// the in-edges of i; the LeakyReLU backward multiplies by 1 (pre > 0) or
// slope; dD_i sums over i's in-edges, dS_j over j's out-edges (reached
// through rev, in a fixed order).
func gatAttnBackward[T gatFloat](c *gatCSR, alpha, dalpha, h, as, ad []T, heads, f int, slope T, dsd []T) {
	n := c.n
	s := make([]T, n*heads)
	d := make([]T, n*heads)
	gatScores(h, as, ad, n, heads, f, s, d)
	dpre := make([]T, len(alpha))
	indptr, src, rev := c.indptr, c.src, c.rev
	w := 2 * heads
	gatParallelRows(indptr, func(lo, hi int) {
		dot := make([]T, heads)
		for i := lo; i < hi; i++ {
			p0, p1 := indptr[i], indptr[i+1]
			dd := dsd[i*w+heads : (i+1)*w : (i+1)*w]
			for k := range dot {
				dot[k] = 0
				dd[k] = 0
			}
			for p := p0; p < p1; p++ {
				ap := alpha[p*heads : (p+1)*heads : (p+1)*heads]
				bp := dalpha[p*heads : (p+1)*heads : (p+1)*heads]
				for k := range ap {
					dot[k] += ap[k] * bp[k]
				}
			}
			di := d[i*heads : (i+1)*heads : (i+1)*heads]
			for p := p0; p < p1; p++ {
				j := int(src[p])
				sj := s[j*heads : (j+1)*heads : (j+1)*heads]
				ap := alpha[p*heads : (p+1)*heads : (p+1)*heads]
				bp := dalpha[p*heads : (p+1)*heads : (p+1)*heads]
				gp := dpre[p*heads : (p+1)*heads : (p+1)*heads]
				for k := range ap {
					g := ap[k] * (bp[k] - dot[k])
					if sj[k]+di[k] <= 0 {
						g *= slope
					}
					gp[k] = g
					dd[k] += g
				}
			}
		}
	})
	gatParallelRows(indptr, func(lo, hi int) {
		for j := lo; j < hi; j++ {
			ds := dsd[j*w : j*w+heads : j*w+heads]
			for k := range ds {
				ds[k] = 0
			}
			for q := indptr[j]; q < indptr[j+1]; q++ {
				p := int(rev[q])
				gp := dpre[p*heads : (p+1)*heads : (p+1)*heads]
				for k := range ds {
					ds[k] += gp[k]
				}
			}
		}
	})
}

// gatScoreGradH computes dH[i, k·f+q] = dS[i,k]·as[k·f+q] + dD[i,k]·ad[k·f+q].
func gatScoreGradH[T gatFloat](dsd, as, ad []T, n, heads, f int, dh []T) {
	hf := heads * f
	w := 2 * heads
	gatParallelRange(n, hf, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			row := dh[i*hf : (i+1)*hf : (i+1)*hf]
			for k := 0; k < heads; k++ {
				gs, gd := dsd[i*w+k], dsd[i*w+heads+k]
				for q := k * f; q < (k+1)*f; q++ {
					row[q] = gs*as[q] + gd*ad[q]
				}
			}
		}
	})
}

// gatReduceBlock is the number of rows summed by one partial sum in
// gatScoreGradA. It is fixed so that the summation order, and hence the
// result, does not depend on the number of CPUs.
const gatReduceBlock = 2048

// gatScoreGradA computes da[k·f+q] = Σ_i dsd[i, off+k]·h[i, k·f+q] (off = 0 for
// the source vector, heads for the destination vector) as fixed-block
// partial sums added in block order.
func gatScoreGradA[T gatFloat](dsd, h []T, n, heads, f, off int, da []T) {
	hf := heads * f
	w := 2 * heads
	nb := (n + gatReduceBlock - 1) / gatReduceBlock
	part := make([]T, nb*hf)
	gatParallelRange(nb, gatReduceBlock*hf, func(lo, hi int) {
		for b := lo; b < hi; b++ {
			acc := part[b*hf : (b+1)*hf : (b+1)*hf]
			end := min((b+1)*gatReduceBlock, n)
			for i := b * gatReduceBlock; i < end; i++ {
				hr := h[i*hf : (i+1)*hf : (i+1)*hf]
				for k := 0; k < heads; k++ {
					g := dsd[i*w+off+k]
					for q := k * f; q < (k+1)*f; q++ {
						acc[q] += g * hr[q]
					}
				}
			}
		}
	})
	for q := range da {
		da[q] = 0
	}
	for b := 0; b < nb; b++ {
		for q, v := range part[b*hf : (b+1)*hf] {
			da[q] += v
		}
	}
}

// gatAggregate computes out_i = Σ_{p=(j→i)} α_p[k] h_j[k-th head block],
// concatenated over heads (out n × heads·f) or averaged (out n × f).
func gatAggregate[T gatFloat](c *gatCSR, alpha, h []T, heads, f int, mean bool, out []T) {
	hf := heads * f
	ow := hf
	if mean {
		ow = f
	}
	indptr, src := c.indptr, c.src
	if a32, h32, o32, ok := gatKernel32(heads, f, mean, alpha, h, out); ok {
		gatParallelRows(indptr, func(lo, hi int) {
			for i := lo; i < hi; i++ {
				p0, p1 := indptr[i], indptr[i+1]
				spkern.Heads4x16(src[p0:p1], nil, a32[4*p0:], h32, 64, o32[i*64:(i+1)*64])
			}
		})
		return
	}
	scale := 1 / T(heads)
	gatParallelRows(indptr, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			o := out[i*ow : (i+1)*ow : (i+1)*ow]
			for q := range o {
				o[q] = 0
			}
			for p := indptr[i]; p < indptr[i+1]; p++ {
				j := int(src[p])
				hj := h[j*hf : (j+1)*hf : (j+1)*hf]
				ap := alpha[p*heads : (p+1)*heads : (p+1)*heads]
				for k, a := range ap {
					hk := hj[k*f : (k+1)*f : (k+1)*f]
					ok := o[:f:f]
					if !mean {
						ok = o[k*f : (k+1)*f : (k+1)*f]
					}
					gatAxpy(a, hk, ok)
				}
			}
			if mean && heads > 1 {
				for q := range o {
					o[q] *= scale
				}
			}
		}
	})
}

// gatAggregateT is the transposed aggregation, the gradient of gatAggregate
// with respect to h: dh_j[k-th block] = Σ_{p=(j→i)} α_p[k] dout_i[block],
// where the out-edges of j are reached through rev in a fixed order.
func gatAggregateT[T gatFloat](c *gatCSR, alpha, dout []T, heads, f int, mean bool, dh []T) {
	hf := heads * f
	ow := hf
	if mean {
		ow = f
	}
	indptr, src, rev := c.indptr, c.src, c.rev
	if a32, d32, g32, ok := gatKernel32(heads, f, mean, alpha, dout, dh); ok {
		gatParallelRows(indptr, func(lo, hi int) {
			for j := lo; j < hi; j++ {
				q0, q1 := indptr[j], indptr[j+1]
				spkern.Heads4x16(src[q0:q1], rev[q0:q1], a32, d32, 64, g32[j*64:(j+1)*64])
			}
		})
		return
	}
	scale := 1 / T(heads)
	gatParallelRows(indptr, func(lo, hi int) {
		for j := lo; j < hi; j++ {
			g := dh[j*hf : (j+1)*hf : (j+1)*hf]
			for q := range g {
				g[q] = 0
			}
			for q := indptr[j]; q < indptr[j+1]; q++ {
				i := int(src[q])
				p := int(rev[q])
				di := dout[i*ow : (i+1)*ow : (i+1)*ow]
				ap := alpha[p*heads : (p+1)*heads : (p+1)*heads]
				for k, a := range ap {
					gk := g[k*f : (k+1)*f : (k+1)*f]
					dk := di[:f:f]
					if !mean {
						dk = di[k*f : (k+1)*f : (k+1)*f]
					}
					gatAxpy(a, dk, gk)
				}
			}
			if mean && heads > 1 {
				for q := range g {
					g[q] *= scale
				}
			}
		}
	})
}

// gatEdgeDot is the gradient of gatAggregate with respect to α:
// dα_p[k] = dout_i[block k] · h_j[k-th block] for p = (j→i).
func gatEdgeDot[T gatFloat](c *gatCSR, dout, h []T, heads, f int, mean bool, dalpha []T) {
	hf := heads * f
	ow := hf
	if mean {
		ow = f
	}
	indptr, src := c.indptr, c.src
	if d32, h32, g32, ok := gatKernel32(heads, f, mean, dout, h, dalpha); ok {
		gatParallelRows(indptr, func(lo, hi int) {
			for i := lo; i < hi; i++ {
				p0, p1 := indptr[i], indptr[i+1]
				if p1 > p0 {
					spkern.Heads4x16Dot(src[p0:p1], h32, 64, d32[i*64:(i+1)*64], g32[4*p0:4*p1], 1)
				}
			}
		})
		return
	}
	scale := T(1)
	if mean {
		scale = 1 / T(heads)
	}
	gatParallelRows(indptr, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			di := dout[i*ow : (i+1)*ow : (i+1)*ow]
			for p := indptr[i]; p < indptr[i+1]; p++ {
				j := int(src[p])
				hj := h[j*hf : (j+1)*hf : (j+1)*hf]
				gp := dalpha[p*heads : (p+1)*heads : (p+1)*heads]
				for k := range gp {
					hk := hj[k*f : (k+1)*f : (k+1)*f]
					dk := di[:f:f]
					if !mean {
						dk = di[k*f : (k+1)*f : (k+1)*f]
					}
					gp[k] = gatDot(hk, dk) * scale
				}
			}
		}
	})
}

// gatKind selects what a gatOp computes.
type gatKind uint8

const (
	gatKAttn         gatKind = iota // (H, aSrc, aDst) -> α (E × heads)
	gatKAttnGrad                    // (α, dα, H, aSrc, aDst) -> dSD (n × 2·heads)
	gatKScoreGradH                  // (dSD, aSrc, aDst) -> dH (n × heads·f)
	gatKScoreGradSrc                // (dSD, H) -> daSrc (1 × heads·f)
	gatKScoreGradDst                // (dSD, H) -> daDst (1 × heads·f)
	gatKAgg                         // (α, H) -> out (n × heads·f, or n × f when mean)
	gatKAggT                        // (α, dOut) -> dH (n × heads·f)
	gatKEdgeDot                     // (dOut, H) -> dα (E × heads)
)

var gatKindNames = [...]string{"GATAttention", "GATAttentionGrad", "GATScoreGradH", "GATScoreGradSrc",
	"GATScoreGradDst", "GATAggregate", "GATAggregateT", "GATEdgeDot"}

var gatKindArity = [...]int{3, 5, 3, 2, 2, 2, 2, 2}

// gatOp is every custom op of the GAT layer; kind selects the computation.
type gatOp struct {
	opkit.Pure
	kind  gatKind
	c     *gatCSR
	heads int
	f     int
	mean  bool
	slope float64
}

var (
	_ G.SDOp            = (*gatOp)(nil)
	_ G.UsePreallocDoer = (*gatOp)(nil)
)

func (op *gatOp) Arity() int    { return gatKindArity[op.kind] }
func (op *gatOp) Type() hm.Type { return opkit.FnType(op.Arity()) }

func (op *gatOp) String() string {
	agg := "concat"
	if op.mean {
		agg = "mean"
	}
	return fmt.Sprintf("%s(E#%d, heads=%d, f=%d, %s, slope=%g)", gatKindNames[op.kind], op.c.id, op.heads, op.f, agg, op.slope)
}

func (op *gatOp) WriteHash(h hash.Hash) {
	fmt.Fprintf(h, "fairmp.GAT")
	var b [8]byte
	put := func(v uint64) {
		binary.LittleEndian.PutUint64(b[:], v)
		h.Write(b[:])
	}
	put(uint64(op.kind))
	put(op.c.id)
	put(uint64(op.heads))
	put(uint64(op.f))
	if op.mean {
		put(1)
	} else {
		put(0)
	}
	put(math.Float64bits(op.slope))
}

func (op *gatOp) Hashcode() uint32 { return opkit.Hash32(op.WriteHash) }

// outShape returns the output shape for the given input shapes.
func (op *gatOp) outShape(in []tensor.Shape) (tensor.Shape, error) {
	if len(in) != op.Arity() {
		return nil, fmt.Errorf("%v: %d inputs, want %d", op, len(in), op.Arity())
	}
	for k, s := range in {
		if len(s) != 2 {
			return nil, fmt.Errorf("%v: input %d has shape %v, want a matrix", op, k, s)
		}
	}
	n, e, hf := op.c.n, op.c.edges(), op.heads*op.f
	ow := hf
	if op.mean {
		ow = op.f
	}
	hs := tensor.Shape{n, hf}
	as := tensor.Shape{1, hf}
	es := tensor.Shape{e, op.heads}
	ss := tensor.Shape{n, 2 * op.heads}
	os := tensor.Shape{n, ow}
	var want []tensor.Shape
	var out tensor.Shape
	switch op.kind {
	case gatKAttn:
		want, out = []tensor.Shape{hs, as, as}, es
	case gatKAttnGrad:
		want, out = []tensor.Shape{es, es, hs, as, as}, ss
	case gatKScoreGradH:
		want, out = []tensor.Shape{ss, as, as}, hs
	case gatKScoreGradSrc, gatKScoreGradDst:
		want, out = []tensor.Shape{ss, hs}, as
	case gatKAgg:
		want, out = []tensor.Shape{es, hs}, os
	case gatKAggT:
		want, out = []tensor.Shape{es, os}, hs
	case gatKEdgeDot:
		want, out = []tensor.Shape{os, hs}, es
	default:
		return nil, fmt.Errorf("gat: unknown op kind %d", op.kind)
	}
	for k := range want {
		if !in[k].Eq(want[k]) {
			return nil, fmt.Errorf("%v: input %d has shape %v, want %v", op, k, in[k], want[k])
		}
	}
	return out, nil
}

func (op *gatOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	ss := make([]tensor.Shape, len(in))
	for k, d := range in {
		s, ok := d.(tensor.Shape)
		if !ok {
			return nil, fmt.Errorf("%v: input %d: shape of type %T", op, k, d)
		}
		ss[k] = s
	}
	return op.outShape(ss)
}

func (op *gatOp) DiffWRT(inputs int) []bool {
	w := make([]bool, inputs)
	switch op.kind {
	case gatKAttn, gatKAgg:
		for k := range w {
			w[k] = true
		}
	}
	return w
}

func (op *gatOp) Do(inputs ...G.Value) (G.Value, error) {
	return op.UsePreallocDo(nil, inputs...)
}

func (op *gatOp) UsePreallocDo(prealloc G.Value, inputs ...G.Value) (G.Value, error) {
	if len(inputs) != op.Arity() {
		return nil, fmt.Errorf("%v: %d inputs, want %d", op, len(inputs), op.Arity())
	}
	ds := make([]*tensor.Dense, len(inputs))
	shapes := make([]tensor.Shape, len(inputs))
	for k, v := range inputs {
		d, err := opkit.Dense(v)
		if err != nil {
			return nil, fmt.Errorf("%v: input %d: %w", op, k, err)
		}
		if k > 0 && d.Dtype() != ds[0].Dtype() {
			return nil, fmt.Errorf("%v: input %d has dtype %v, want %v (input 0's)", op, k, d.Dtype(), ds[0].Dtype())
		}
		ds[k] = d
		shapes[k] = d.Shape()
	}
	shape, err := op.outShape(shapes)
	if err != nil {
		return nil, err
	}
	dt := ds[0].Dtype()
	out := opkit.Reuse(prealloc, dt, shape...)
	switch dt {
	case tensor.Float64:
		gatRun(op, gatData[float64](ds), out.Data().([]float64))
	case tensor.Float32:
		gatRun(op, gatData[float32](ds), out.Data().([]float32))
	default:
		return nil, fmt.Errorf("%v: dtype %v, want float32 or float64", op, dt)
	}
	return out, nil
}

func gatData[T gatFloat](ds []*tensor.Dense) [][]T {
	out := make([][]T, len(ds))
	for k, d := range ds {
		out[k] = d.Data().([]T)
	}
	return out
}

// gatRun dispatches to the kernel of op.kind; shapes are already checked.
func gatRun[T gatFloat](op *gatOp, in [][]T, out []T) {
	c, heads, f, slope := op.c, op.heads, op.f, T(op.slope)
	switch op.kind {
	case gatKAttn:
		gatAttnForward(c, in[0], in[1], in[2], heads, f, slope, out)
	case gatKAttnGrad:
		gatAttnBackward(c, in[0], in[1], in[2], in[3], in[4], heads, f, slope, out)
	case gatKScoreGradH:
		gatScoreGradH(in[0], in[1], in[2], c.n, heads, f, out)
	case gatKScoreGradSrc:
		gatScoreGradA(in[0], in[1], c.n, heads, f, 0, out)
	case gatKScoreGradDst:
		gatScoreGradA(in[0], in[1], c.n, heads, f, heads, out)
	case gatKAgg:
		gatAggregate(c, in[0], in[1], heads, f, op.mean, out)
	case gatKAggT:
		gatAggregateT(c, in[0], in[1], heads, f, op.mean, out)
	case gatKEdgeDot:
		gatEdgeDot(c, in[0], in[1], heads, f, op.mean, out)
	}
}

// with returns a copy of op computing kind.
func (op *gatOp) with(kind gatKind) *gatOp {
	o := *op
	o.kind = kind
	return &o
}

func (op *gatOp) SymDiff(inputs G.Nodes, output, grad *G.Node) (G.Nodes, error) {
	if len(inputs) != op.Arity() {
		return nil, fmt.Errorf("%v: SymDiff: %d inputs, want %d", op, len(inputs), op.Arity())
	}
	switch op.kind {
	case gatKAttn:
		h, as, ad := inputs[0], inputs[1], inputs[2]
		dsd, err := G.ApplyOp(op.with(gatKAttnGrad), output, grad, h, as, ad)
		if err != nil {
			return nil, err
		}
		dh, err := G.ApplyOp(op.with(gatKScoreGradH), dsd, as, ad)
		if err != nil {
			return nil, err
		}
		das, err := G.ApplyOp(op.with(gatKScoreGradSrc), dsd, h)
		if err != nil {
			return nil, err
		}
		dad, err := G.ApplyOp(op.with(gatKScoreGradDst), dsd, h)
		if err != nil {
			return nil, err
		}
		return G.Nodes{dh, das, dad}, nil
	case gatKAgg:
		alpha, h := inputs[0], inputs[1]
		dalpha, err := G.ApplyOp(op.with(gatKEdgeDot), grad, h)
		if err != nil {
			return nil, err
		}
		dh, err := G.ApplyOp(op.with(gatKAggT), alpha, grad)
		if err != nil {
			return nil, err
		}
		return G.Nodes{dalpha, dh}, nil
	}
	return nil, fmt.Errorf("%v: no second-order gradient", op)
}

// gatKernel32 returns the three slices as float32 and true when the
// assembly kernels of internal/spkern apply: float32, 4 heads of 16
// features, heads concatenated, on a CPU with AVX2/FMA. They sum each
// output in a fixed order of their own (with fused multiply-adds), so
// results are deterministic; they differ from the Go loops' in the last
// bits.
func gatKernel32[T gatFloat](heads, f int, mean bool, a, b, c []T) ([]float32, []float32, []float32, bool) {
	if heads != 4 || f != 16 || mean || !spkern.Enabled() {
		return nil, nil, nil, false
	}
	a32, ok1 := any(a).([]float32)
	b32, ok2 := any(b).([]float32)
	c32, ok3 := any(c).([]float32)
	return a32, b32, c32, ok1 && ok2 && ok3
}

// gatAxpy computes y += a·x (len(y) >= len(x)), unrolled by four.
func gatAxpy[T gatFloat](a T, x, y []T) {
	y = y[:len(x)]
	q := 0
	for ; q+4 <= len(x); q += 4 {
		xs := x[q : q+4 : q+4]
		ys := y[q : q+4 : q+4]
		ys[0] += a * xs[0]
		ys[1] += a * xs[1]
		ys[2] += a * xs[2]
		ys[3] += a * xs[3]
	}
	for ; q < len(x); q++ {
		y[q] += a * x[q]
	}
}

// gatDot returns x·y (len(y) >= len(x)), summed in four interleaved
// partial sums combined in a fixed order.
func gatDot[T gatFloat](x, y []T) T {
	y = y[:len(x)]
	var s0, s1, s2, s3 T
	q := 0
	for ; q+4 <= len(x); q += 4 {
		xs := x[q : q+4 : q+4]
		ys := y[q : q+4 : q+4]
		s0 += xs[0] * ys[0]
		s1 += xs[1] * ys[1]
		s2 += xs[2] * ys[2]
		s3 += xs[3] * ys[3]
	}
	for ; q < len(x); q++ {
		s0 += x[q] * y[q]
	}
	return (s0 + s1) + (s2 + s3)
}
