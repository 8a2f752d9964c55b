package spkern

import (
	"math"
	"runtime"
	"sync/atomic"

	"github.com/fairmp/fairmp/internal/par"
)

// The GAT kernels: per-edge attention scores, the edge softmax over each
// destination, aggregation, and their gradients, over a GATCSR (rows are
// destinations, the entries of row i are i's in-edges, sorted by source).
// layers' GAT ops call them; float32 with 4 heads of 16 features runs on
// the AVX2/FMA kernels of this package. Every output is summed in a fixed
// order, so results are deterministic for any GOMAXPROCS.

var gatCSRIDs atomic.Uint64

// GATCSR is the edge structure of a GAT layer: row i lists the sources j
// of the edges j→i. On the whole graph (NewGATCSR) rows and sources are the
// same N nodes, and rev[p] is the position of the reverse edge of edge p
// (the graph is undirected, so it always exists; a self-loop is its own
// reverse). On a sampled block (NewGATBlock) the N rows are the first N
// of the Cols source nodes, as in a mini-batch's chain of blocks, and
// there is no reverse edge.
//
// The kernels reach the out-edges of a source through the transpose:
// for source j, TDst[q] and TEdge[q] (q from TIndptr[j] to TIndptr[j+1])
// are the destination and the position of each edge j→TDst[q]. On the
// whole graph they are Indptr, Src and Rev themselves (row j of an
// undirected graph lists the destinations of j's out-edges).
type GATCSR struct {
	N      int // rows: the destinations
	Cols   int // sources (N on the whole graph; ≥ N on a block)
	Indptr []int
	Src    []int32
	Rev    []int32 // nil on a block
	ID     uint64  // identifies the structure in op hashes

	TIndptr []int
	TDst    []int32
	TEdge   []int32

	// checked is set by the constructors once the arrays are checked
	// (valid): the kernels then check each call's slices once, not each
	// row's indices.
	checked bool
}

// valid reports whether every index of c is within its range: the rows'
// sources in [0, Cols), the transpose's destinations in [0, N) and its
// edges in [0, len(Src)), every Indptr non-decreasing from 0 to its
// array's length. O(edges), once per structure.
func (c *GATCSR) valid() bool {
	ptrOK := func(ptr []int, rows, total int) bool {
		if len(ptr) != rows+1 || ptr[0] != 0 || ptr[rows] != total {
			return false
		}
		for i := 0; i < rows; i++ {
			if ptr[i+1] < ptr[i] {
				return false
			}
		}
		return true
	}
	inRange := func(idx []int32, n int) bool {
		for _, j := range idx {
			if j < 0 || int(j) >= n {
				return false
			}
		}
		return true
	}
	e := len(c.Src)
	return ptrOK(c.Indptr, c.N, e) && inRange(c.Src, c.Cols) &&
		len(c.TDst) == e && len(c.TEdge) == e && ptrOK(c.TIndptr, len(c.TIndptr)-1, e) && len(c.TIndptr)-1 <= c.Cols &&
		inRange(c.TDst, c.N) && inRange(c.TEdge, e)
}

// NewGATCSR builds the in-edge structure of an undirected graph of n
// nodes whose sorted neighbour lists neighbors returns (without
// self-loops), with one self-loop per node when selfLoops is true.
func NewGATCSR(n int, neighbors func(i int) []int32, selfLoops bool) *GATCSR {
	m := 0
	for i := 0; i < n; i++ {
		m += len(neighbors(i))
	}
	if selfLoops {
		m += n
	}
	indptr := make([]int, n+1)
	src := make([]int32, 0, m)
	for i := 0; i < n; i++ {
		placed := !selfLoops
		for _, j := range neighbors(i) {
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
	c, _ := whole(n, indptr, src) // symmetric by construction
	return c
}

// NewGATWhole builds the whole-graph structure (with Rev, as NewGATCSR)
// from the pattern of a square n × n CSR matrix whose rows list their
// columns in ascending order: the propagation matrix of an undirected
// graph, self-loops included when it stores them. It reports false, for
// the caller to use NewGATBlock instead, when the pattern is not
// symmetric (an entry (i, j) without its (j, i)). The caller has checked
// the arrays as for NewGATBlock. The structure shares indptr and indices.
func NewGATWhole(n int, indptr []int, indices []int32) (*GATCSR, bool) {
	return whole(n, indptr, indices)
}

// whole computes Rev: the entries of row j are the i with j ∈ N(i),
// ascending, so visiting the rows i in ascending order meets them in the
// same order. It checks that each reverse edge is where it should be.
func whole(n int, indptr []int, src []int32) (*GATCSR, bool) {
	rev := make([]int32, len(src))
	cursor := append([]int(nil), indptr[:n]...)
	for i := 0; i < n; i++ {
		for p := indptr[i]; p < indptr[i+1]; p++ {
			j := src[p]
			q := cursor[j]
			if q >= indptr[j+1] || int(src[q]) != i {
				return nil, false
			}
			rev[p] = int32(q)
			cursor[j]++
		}
	}
	c := &GATCSR{N: n, Cols: n, Indptr: indptr, Src: src, Rev: rev, ID: gatCSRIDs.Add(1),
		TIndptr: indptr, TDst: src, TEdge: rev}
	c.checked = c.valid()
	return c, true
}

// NewGATBlock builds the edge structure of a sampled block: rows
// destinations, cols ≥ rows sources (the first rows of which are the
// destinations themselves), and the edges of row i are the sources
// indices[indptr[i]:indptr[i+1]], in that order (a block of package
// graph/sample: its stored entries, self-loops included when it stores
// them). The caller has checked the arrays: indptr has rows+1
// non-decreasing entries from 0 to len(indices), every index is in
// [0, cols).
func NewGATBlock(rows, cols int, indptr []int, indices []int32) *GATCSR {
	tptr := make([]int, cols+1)
	for _, j := range indices {
		tptr[j+1]++
	}
	for j := 0; j < cols; j++ {
		tptr[j+1] += tptr[j]
	}
	tdst := make([]int32, len(indices))
	tedge := make([]int32, len(indices))
	cursor := append([]int(nil), tptr[:cols]...)
	for i := 0; i < rows; i++ {
		for p := indptr[i]; p < indptr[i+1]; p++ {
			j := indices[p]
			tdst[cursor[j]], tedge[cursor[j]] = int32(i), int32(p)
			cursor[j]++
		}
	}
	c := &GATCSR{N: rows, Cols: cols, Indptr: indptr, Src: indices, ID: gatCSRIDs.Add(1),
		TIndptr: tptr, TDst: tdst, TEdge: tedge}
	c.checked = c.valid()
	return c
}

// Edges returns the number of stored (directed) edges, self-loops included.
func (c *GATCSR) Edges() int { return len(c.Src) }

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

type Float interface{ float32 | float64 }

func gatExp[T Float](x T) T { return T(math.Exp(float64(x))) }

// GATScores computes s = per-head dot products of the rows of h (n × heads·f)
// with a (heads·f), and the same for b into d: s[i·heads+k] = Σ_q h[i, k·f+q]·a[k·f+q].
func GATScores[T Float](h, a, b []T, n, heads, f int, s, d []T) {
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

// GATAttnForward writes α (E × heads): for edge p = (j→i) and head k,
// e = LeakyReLU(s_j + d_i), α = softmax of e over the in-edges of i, with
// the row maximum subtracted before exponentiation.
func GATAttnForward[T Float](c *GATCSR, h, as, ad []T, heads, f int, slope T, alpha []T) {
	s := make([]T, c.Cols*heads)
	d := make([]T, c.Cols*heads)
	GATScores(h, as, ad, c.Cols, heads, f, s, d)
	indptr, src := c.Indptr, c.Src
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

// GATAttnBackward computes, from α, dα and the scores, the gradients with
// respect to the per-node source and destination scores s and d, written
// side by side into dsd (Cols × 2·heads: dS then dD; dD is zero on the
// sources that are not rows).
//
// With β = dα, the softmax backward is dz_p = α_p (β_p − Σ_q α_q β_q) over
// the in-edges of i; the LeakyReLU backward multiplies by 1 (pre > 0) or
// slope; dD_i sums over i's in-edges, dS_j over j's out-edges (reached
// through rev, in a fixed order).
func GATAttnBackward[T Float](c *GATCSR, alpha, dalpha, h, as, ad []T, heads, f int, slope T, dsd []T) {
	s := make([]T, c.Cols*heads)
	d := make([]T, c.Cols*heads)
	GATScores(h, as, ad, c.Cols, heads, f, s, d)
	dpre := make([]T, len(alpha))
	indptr, src := c.Indptr, c.Src
	w := 2 * heads
	for i := c.N; i < c.Cols; i++ {
		clear(dsd[i*w+heads : (i+1)*w])
	}
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
	gatParallelRows(c.TIndptr, func(lo, hi int) {
		for j := lo; j < hi; j++ {
			ds := dsd[j*w : j*w+heads : j*w+heads]
			for k := range ds {
				ds[k] = 0
			}
			for q := c.TIndptr[j]; q < c.TIndptr[j+1]; q++ {
				p := int(c.TEdge[q])
				gp := dpre[p*heads : (p+1)*heads : (p+1)*heads]
				for k := range ds {
					ds[k] += gp[k]
				}
			}
		}
	})
}

// GATScoreGradH computes dH[i, k·f+q] = dS[i,k]·as[k·f+q] + dD[i,k]·ad[k·f+q].
func GATScoreGradH[T Float](dsd, as, ad []T, n, heads, f int, dh []T) {
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
// GATScoreGradA. It is fixed so that the summation order, and hence the
// result, does not depend on the number of CPUs.
const gatReduceBlock = 2048

// GATScoreGradA computes da[k·f+q] = Σ_i dsd[i, off+k]·h[i, k·f+q] (off = 0 for
// the source vector, heads for the destination vector) as fixed-block
// partial sums added in block order.
func GATScoreGradA[T Float](dsd, h []T, n, heads, f, off int, da []T) {
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

// GATAggregate computes out_i = Σ_{p=(j→i)} α_p[k] h_j[k-th head block],
// concatenated over heads (out n × heads·f) or averaged (out n × f).
func GATAggregate[T Float](c *GATCSR, alpha, h []T, heads, f int, mean bool, out []T) {
	hf := heads * f
	ow := hf
	if mean {
		ow = f
	}
	indptr, src := c.Indptr, c.Src
	// fast: the structure is checked and the slices hold every row the
	// kernels reach, so the rows run without the per-call index scan.
	fast := c.checked && len(alpha) >= 4*len(src) && len(h) >= c.Cols*64 && len(out) >= c.N*64
	if a32, h32, o32, ok := gatKernel32(heads, f, mean, alpha, h, out); ok {
		gatParallelRows(indptr, func(lo, hi int) {
			for i := lo; i < hi; i++ {
				p0, p1 := indptr[i], indptr[i+1]
				switch {
				case !fast:
					Heads4x16(src[p0:p1], nil, a32[4*p0:], h32, 64, o32[i*64:(i+1)*64])
				case p1 > p0:
					active.heads4x16(src[p0:p1], nil, a32[4*p0:], h32, 64, o32[i*64:(i+1)*64])
				default:
					clear(o32[i*64 : (i+1)*64])
				}
			}
		})
		return
	}
	if a64, h64, o64, ok := gatKernel64(heads, f, mean, alpha, h, out); ok {
		gatParallelRows(indptr, func(lo, hi int) {
			for i := lo; i < hi; i++ {
				p0, p1 := indptr[i], indptr[i+1]
				switch {
				case !fast:
					Heads4x16d(src[p0:p1], nil, a64[4*p0:], h64, 64, o64[i*64:(i+1)*64])
				case p1 > p0:
					active.heads4x16d(src[p0:p1], nil, a64[4*p0:], h64, 64, o64[i*64:(i+1)*64])
				default:
					clear(o64[i*64 : (i+1)*64])
				}
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

// GATAggregateT is the transposed aggregation, the gradient of GATAggregate
// with respect to h: dh_j[k-th block] = Σ_{p=(j→i)} α_p[k] dout_i[block],
// where the out-edges of j are reached through rev in a fixed order.
func GATAggregateT[T Float](c *GATCSR, alpha, dout []T, heads, f int, mean bool, dh []T) {
	hf := heads * f
	ow := hf
	if mean {
		ow = f
	}
	indptr, dst, edge := c.TIndptr, c.TDst, c.TEdge
	fast := c.checked && len(alpha) >= 4*len(c.Src) && len(dout) >= c.N*64 && len(dh) >= (len(indptr)-1)*64
	if a32, d32, g32, ok := gatKernel32(heads, f, mean, alpha, dout, dh); ok {
		gatParallelRows(indptr, func(lo, hi int) {
			for j := lo; j < hi; j++ {
				q0, q1 := indptr[j], indptr[j+1]
				switch {
				case !fast:
					Heads4x16(dst[q0:q1], edge[q0:q1], a32, d32, 64, g32[j*64:(j+1)*64])
				case q1 > q0:
					active.heads4x16(dst[q0:q1], edge[q0:q1], a32, d32, 64, g32[j*64:(j+1)*64])
				default:
					clear(g32[j*64 : (j+1)*64])
				}
			}
		})
		return
	}
	if a64, d64, g64, ok := gatKernel64(heads, f, mean, alpha, dout, dh); ok {
		gatParallelRows(indptr, func(lo, hi int) {
			for j := lo; j < hi; j++ {
				q0, q1 := indptr[j], indptr[j+1]
				switch {
				case !fast:
					Heads4x16d(dst[q0:q1], edge[q0:q1], a64, d64, 64, g64[j*64:(j+1)*64])
				case q1 > q0:
					active.heads4x16d(dst[q0:q1], edge[q0:q1], a64, d64, 64, g64[j*64:(j+1)*64])
				default:
					clear(g64[j*64 : (j+1)*64])
				}
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
				i := int(dst[q])
				p := int(edge[q])
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

// GATEdgeDot is the gradient of GATAggregate with respect to α:
// dα_p[k] = dout_i[block k] · h_j[k-th block] for p = (j→i).
func GATEdgeDot[T Float](c *GATCSR, dout, h []T, heads, f int, mean bool, dalpha []T) {
	hf := heads * f
	ow := hf
	if mean {
		ow = f
	}
	indptr, src := c.Indptr, c.Src
	fast := c.checked && len(dout) >= c.N*64 && len(h) >= c.Cols*64 && len(dalpha) >= 4*len(src)
	if d32, h32, g32, ok := gatKernel32(heads, f, mean, dout, h, dalpha); ok {
		gatParallelRows(indptr, func(lo, hi int) {
			for i := lo; i < hi; i++ {
				p0, p1 := indptr[i], indptr[i+1]
				switch {
				case p1 == p0:
				case fast:
					active.heads4x16Dot(src[p0:p1], h32, 64, d32[i*64:(i+1)*64], g32[4*p0:4*p1], 1)
				default:
					Heads4x16Dot(src[p0:p1], h32, 64, d32[i*64:(i+1)*64], g32[4*p0:4*p1], 1)
				}
			}
		})
		return
	}
	if d64, h64, g64, ok := gatKernel64(heads, f, mean, dout, h, dalpha); ok {
		gatParallelRows(indptr, func(lo, hi int) {
			for i := lo; i < hi; i++ {
				p0, p1 := indptr[i], indptr[i+1]
				switch {
				case p1 == p0:
				case fast:
					active.heads4x16Dotd(src[p0:p1], h64, 64, d64[i*64:(i+1)*64], g64[4*p0:4*p1], 1)
				default:
					Heads4x16Dotd(src[p0:p1], h64, 64, d64[i*64:(i+1)*64], g64[4*p0:4*p1], 1)
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

// gatKernel32 returns the three slices as float32 and true when the
// assembly kernels of internal/spkern apply: float32, 4 heads of 16
// features, heads concatenated, on a CPU with AVX2/FMA. They sum each
// output in a fixed order of their own (with fused multiply-adds), so
// results are deterministic; they differ from the Go loops' in the last
// bits.
func gatKernel32[T Float](heads, f int, mean bool, a, b, c []T) ([]float32, []float32, []float32, bool) {
	if heads != 4 || f != 16 || mean || !Enabled() {
		return nil, nil, nil, false
	}
	a32, ok1 := any(a).([]float32)
	b32, ok2 := any(b).([]float32)
	c32, ok3 := any(c).([]float32)
	return a32, b32, c32, ok1 && ok2 && ok3
}

// gatKernel64 is gatKernel32 for the float64 aggregation kernels
// (Heads4x16d, Heads4x16Dotd), which add in the Go loops' order with the Go loops'
// roundings: their results equal the Go loops' bit for bit.
func gatKernel64[T Float](heads, f int, mean bool, a, b, c []T) ([]float64, []float64, []float64, bool) {
	if heads != 4 || f != 16 || mean || !Enabled() {
		return nil, nil, nil, false
	}
	a64, ok1 := any(a).([]float64)
	b64, ok2 := any(b).([]float64)
	c64, ok3 := any(c).([]float64)
	return a64, b64, c64, ok1 && ok2 && ok3
}

// gatAxpy computes y += a·x (len(y) >= len(x)), unrolled by four.
func gatAxpy[T Float](a T, x, y []T) {
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
func gatDot[T Float](x, y []T) T {
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
