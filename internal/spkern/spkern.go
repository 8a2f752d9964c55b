// Package spkern holds the inner loops of fairmp's sparse × dense
// products: one CSR row times a dense row-major matrix, for float32 strips
// of 64 and 8 columns and float64 strips of 32 and 8, in AVX2 Go assembly
// where the CPU has it. The sums run over the row's non-zeros in index
// order, so results are deterministic: float32 with fused multiply-adds,
// float64 with a rounded multiply then a rounded add, which makes each
// float64 sum equal, bit for bit, to the plain Go loop's as Go compiles it
// for amd64 by default (GOAMD64 v1 and v2 never fuse a multiply and an add).
//
// # Kernel paths and the noasm tag
//
// Each kernel has two implementations: AVX2/FMA assembly, and pure Go.
// The assembly runs on amd64 when golang.org/x/sys/cpu reports AVX, AVX2
// and FMA (with the OS saving the YMM registers); the pure-Go kernels run
// everywhere else: on other architectures, on older CPUs, and in any build
// with the noasm tag (gonum's convention), which leaves the assembly out:
//
//	go test -tags noasm ./internal/spkern/ ./layers/
//
// The choice is made once, by a package variable initializer. The Go
// kernels sum in the assembly's order with every product rounded before
// it is added, so they give the same results on every architecture, equal
// to the assembly's bit for bit except for the float32 RowStrip32,
// Heads4x16 and Heads4x16Dot, where the assembly fuses multiplies and adds
// (same order, results within a few units in the last place). Enabled
// reports whether the assembly runs: graph and the GAT functions lay out
// their loops for the kernels only then.
//
// # Safety net
//
// The assembly does no bounds checking, so every exported kernel checks
// its arguments first, as gonum's BLAS does: slices long enough for the
// sizes, every index a row of x, a CSR's indptr non-decreasing and inside
// its index array. A failed check panics with a message naming the
// function, the argument and the lengths, before any memory is touched;
// the ops that call the kernels validate their shapes at construction, so
// the panics only catch programming errors.
//
// Checking every index costs a pass over the indices at every call
// (about a cycle each: as much as the arithmetic of an 8-wide strip, and
// a product over column strips repeats it once per strip). A sparse
// matrix that is multiplied many times is therefore checked once: NewCSR
// reads its indices once and returns a CSR handle, whose methods
// (CSR.RowStrip32, CSR.RowStrip64, CSR.Cols2Rows32, CSR.Cols2Rows64) run
// the same kernels on a row or rows of it with constant-time checks: the
// row in range, the values covering it, out long enough, and x holding
// every column of the matrix (len(x) ≥ (Cols−1)·ldx + width), whatever
// the row's own indices. The handle shares the arrays it was given, which
// their owner must not modify afterwards (package graph's Matrix, the one
// user, never does). The tests run every kernel on
// every path this machine runs (forcing each in turn; a path the CPU or
// the build lacks is skipped with the missing feature named), at every
// length around the vector widths, against plain Go references, on
// buffers whose margins (and, in gathered rows, the columns outside the
// strip) hold NaN sentinels: a write outside the valid range breaks a
// sentinel, a read puts a NaN in the result, and the inputs must come
// back unchanged. Fuzz targets (Fuzz*) do the same on random sizes.
package spkern

import (
	"fmt"
	"math"
)

// Enabled reports whether the assembly kernels run: on amd64 with AVX2
// and FMA, built without the noasm tag. Callers lay out their loops for
// the kernels when it is true; the kernels compute the same results in
// pure Go when it is false.
func Enabled() bool { return active.asm }

// RowStrip32 sets out[c] = Σ_p val[p] · x[idx[p]·ldx + c] for c < width,
// where width is 64 or 8 (the caller splits wider rows into strips and
// handles the remaining columns). It reports false, doing nothing, when
// width is another value or idx is empty. It panics, before touching
// memory, when val is shorter than idx, out than width, ldx is negative,
// an index is negative or x does not hold every row idx[p] up to column
// width−1.
func RowStrip32(width int, idx []int32, val []float32, x []float32, ldx int, out []float32) bool {
	if (width != 64 && width != 8) || len(idx) == 0 {
		return false
	}
	checkStrip("RowStrip32", width, idx, len(val), len(x), ldx, len(out))
	active.rowStrip32(width, idx, val, x, ldx, out)
	return true
}

// RowStrip64 is RowStrip32 in float64, for widths 32 and 8: out[c] =
// Σ_p val[p] · x[idx[p]·ldx + c], summed from +0 in index order with a
// rounded multiply and a rounded add per step, exactly as
// `var s float64; for p := range idx { s += float64(val[p] * x[...]) }`
// computes it. It reports false, doing nothing, when width is another
// value or idx is empty; it panics on the lengths RowStrip32 panics on.
func RowStrip64(width int, idx []int32, val []float64, x []float64, ldx int, out []float64) bool {
	if (width != 32 && width != 8) || len(idx) == 0 {
		return false
	}
	checkStrip("RowStrip64", width, idx, len(val), len(x), ldx, len(out))
	active.rowStrip64(width, idx, val, x, ldx, out)
	return true
}

// Heads4x16 sets out[16k+q] = Σ_p w_p[k] · x[idx[p]·ldx + 16k + q] for
// k < 4, q < 16: the aggregation of a 4-head attention layer with 16
// features per head (a row of 64 outputs). The weights of step p are
// alpha[4p : 4p+4], or alpha[4·arow[p] : +4] when arow is not nil. It
// reports true. It panics, before touching memory, when out has fewer
// than 64 values, arow (when not nil) fewer than idx, an arow entry is
// out of alpha's range or alpha is shorter than 4·len(idx) (arow nil), or
// on the x and ldx RowStrip32 panics on (rows of 64).
func Heads4x16(idx, arow []int32, alpha []float32, x []float32, ldx int, out []float32) bool {
	checkHeads("Heads4x16", idx, arow, len(alpha), len(x), ldx, len(out))
	if len(idx) == 0 {
		clear(out[:64])
		return true
	}
	active.heads4x16(idx, arow, alpha, x, ldx, out)
	return true
}

// Heads4x16d is Heads4x16 in float64 (two passes of two heads): out[16k+q]
// = Σ_p w_p[k] · x[idx[p]·ldx + 16k + q], with w_p = alpha[4p : 4p+4], or
// alpha[4·arow[p] : +4] when arow is not nil, summed from +0 in p order
// with a rounded multiply and a rounded add per step: bit for bit what
// `o[q] = 0; for p { o[q] += float64(w * x) }` computes in Go. It reports
// true; it panics on the lengths Heads4x16 panics on.
func Heads4x16d(idx, arow []int32, alpha []float64, x []float64, ldx int, out []float64) bool {
	checkHeads("Heads4x16d", idx, arow, len(alpha), len(x), ldx, len(out))
	if len(idx) == 0 {
		clear(out[:64])
		return true
	}
	active.heads4x16d(idx, arow, alpha, x, ldx, out)
	return true
}

// Heads4x16Dot sets out[4p+k] = scale · Σ_q x[idx[p]·ldx + 16k + q] ·
// d[16k+q] for k < 4, q < 16 (per-head dot products of 16). The sum of
// each head runs as ((x0d0+x8d8) + … ) in a fixed pairwise order. It
// reports true. It panics, before touching memory, when d has fewer than
// 64 values, out fewer than 4·len(idx), or on the x and ldx RowStrip32
// panics on (rows of 64).
func Heads4x16Dot(idx []int32, x []float32, ldx int, d []float32, out []float32, scale float32) bool {
	checkDot("Heads4x16Dot", idx, len(x), ldx, len(d), len(out))
	if len(idx) == 0 {
		return true
	}
	active.heads4x16Dot(idx, x, ldx, d, out, scale)
	return true
}

// Heads4x16Dotd is Heads4x16Dot in float64, summed exactly as the Go loop
// (gatDot) sums it: four interleaved partial sums of rounded products,
// combined as (s0+s1)+(s2+s3), then times scale; its results equal the Go
// loop's bit for bit. It reports true; it panics on the lengths
// Heads4x16Dot panics on.
func Heads4x16Dotd(idx []int32, x []float64, ldx int, d []float64, out []float64, scale float64) bool {
	checkDot("Heads4x16Dotd", idx, len(x), ldx, len(d), len(out))
	if len(idx) == 0 {
		return true
	}
	active.heads4x16Dotd(idx, x, ldx, d, out, scale)
	return true
}

// Cols2Rows32 sets out[2(i−lo) : +2] = Σ_p val[p]·x[2·idx[p] : +2] for the
// rows i in [lo, hi) of a CSR matrix (p from indptr[i] to indptr[i+1]):
// a sparse product with a two-column dense matrix, the shape of FMP's
// logits. Four rows are summed side by side; each row is summed from +0 in
// index order with a rounded multiply and a rounded add per step, as the
// plain Go loop `s0 += v*x[2j]; s1 += v*x[2j+1]` does on amd64, so results
// equal that loop's bit for bit. It reports false, doing nothing, when
// hi ≤ lo or idx is empty. It panics, before touching memory, when lo <
// 0, hi ≥ len(indptr), indptr decreases in [lo, hi] or leaves [0,
// len(idx)], val is shorter than indptr[hi], out than 2·(hi−lo), or an
// index of rows lo to hi−1 is not a row of x (0 ≤ idx[p] < len(x)/2).
func Cols2Rows32(indptr []int, idx []int32, val []float32, x, out []float32, lo, hi int) bool {
	if hi <= lo || len(idx) == 0 {
		return false
	}
	checkCols2("Cols2Rows32", indptr, idx, len(val), len(x), len(out), lo, hi)
	active.cols2Rows32(indptr[lo:], idx, val, x, out, hi-lo)
	return true
}

// Cols2Rows64 is Cols2Rows32 in float64.
func Cols2Rows64(indptr []int, idx []int32, val []float64, x, out []float64, lo, hi int) bool {
	if hi <= lo || len(idx) == 0 {
		return false
	}
	checkCols2("Cols2Rows64", indptr, idx, len(val), len(x), len(out), lo, hi)
	active.cols2Rows64(indptr[lo:], idx, val, x, out, hi-lo)
	return true
}

// The checks below run before any kernel: the assembly does no bounds
// checking, so an argument they let through could read or write outside
// the caller's slices. Their panics name the function, the argument and
// both lengths, as gonum's ("blas: insufficient length of x").

// checkStrip checks a gather of len(idx) rows of width values at stride
// ldx from x (lx values), with lv weights, into lout values.
func checkStrip(fn string, width int, idx []int32, lv, lx, ldx, lout int) {
	if lv < len(idx) {
		panic(fmt.Sprintf("spkern: %s: val has %d values for %d indices", fn, lv, len(idx)))
	}
	if lout < width {
		panic(fmt.Sprintf("spkern: %s: out has %d values, want at least %d", fn, lout, width))
	}
	checkGather(fn, idx, lx, ldx, width)
}

// checkGather checks that x (lx values) holds x[j·ldx : j·ldx+width] for
// every index j of idx.
func checkGather(fn string, idx []int32, lx, ldx, width int) {
	if ldx < 0 {
		panic(fmt.Sprintf("spkern: %s: negative stride ldx = %d", fn, ldx))
	}
	if len(idx) == 0 {
		return
	}
	hi := maxIndex(idx)
	if hi > math.MaxInt32 {
		for _, j := range idx {
			if j < 0 {
				panic(fmt.Sprintf("spkern: %s: negative index %d", fn, j))
			}
		}
	}
	if lx < width || (hi > 0 && ldx > (lx-width)/int(hi)) {
		panic(fmt.Sprintf("spkern: %s: x has %d values, too few for row %d of %d values at stride %d", fn, lx, hi, width, ldx))
	}
}

// maxIndex returns the largest index of idx as a uint32, so that a
// negative index comes out above math.MaxInt32. Four running maxima keep
// the check to about a cycle per index.
func maxIndex(idx []int32) uint32 {
	var m0, m1, m2, m3 uint32
	p := 0
	for ; p+4 <= len(idx); p += 4 {
		s := idx[p : p+4 : p+4]
		m0, m1 = max(m0, uint32(s[0])), max(m1, uint32(s[1]))
		m2, m3 = max(m2, uint32(s[2])), max(m3, uint32(s[3]))
	}
	for _, j := range idx[p:] {
		m0 = max(m0, uint32(j))
	}
	return max(max(m0, m1), max(m2, m3))
}

// checkHeads checks the arguments of Heads4x16 and Heads4x16d.
func checkHeads(fn string, idx, arow []int32, la, lx, ldx, lout int) {
	if lout < 64 {
		panic(fmt.Sprintf("spkern: %s: out has %d values, want at least 64", fn, lout))
	}
	if arow == nil {
		if la/4 < len(idx) {
			panic(fmt.Sprintf("spkern: %s: alpha has %d values for %d indices, want at least %d", fn, la, len(idx), 4*len(idx)))
		}
	} else {
		if len(arow) < len(idx) {
			panic(fmt.Sprintf("spkern: %s: arow has %d entries for %d indices", fn, len(arow), len(idx)))
		}
		for _, r := range arow[:len(idx)] {
			if r < 0 || int(r) >= la/4 {
				panic(fmt.Sprintf("spkern: %s: arow entry %d outside alpha's %d rows of 4", fn, r, la/4))
			}
		}
	}
	checkGather(fn, idx, lx, ldx, 64)
}

// checkDot checks the arguments of Heads4x16Dot and Heads4x16Dotd.
func checkDot(fn string, idx []int32, lx, ldx, ld, lout int) {
	if ld < 64 {
		panic(fmt.Sprintf("spkern: %s: d has %d values, want at least 64", fn, ld))
	}
	if lout/4 < len(idx) {
		panic(fmt.Sprintf("spkern: %s: out has %d values for %d indices, want at least %d", fn, lout, len(idx), 4*len(idx)))
	}
	checkGather(fn, idx, lx, ldx, 64)
}

// checkCols2 checks the CSR rows [lo, hi) of a product with a two-column x.
func checkCols2(fn string, indptr []int, idx []int32, lv, lx, lout, lo, hi int) {
	if lo < 0 || hi >= len(indptr) {
		panic(fmt.Sprintf("spkern: %s: rows [%d, %d) outside the %d rows of indptr (%d entries)", fn, lo, hi, len(indptr)-1, len(indptr)))
	}
	if lout/2 < hi-lo {
		panic(fmt.Sprintf("spkern: %s: out has %d values for %d rows, want at least %d", fn, lout, hi-lo, 2*(hi-lo)))
	}
	if indptr[lo] < 0 {
		panic(fmt.Sprintf("spkern: %s: indptr[%d] = %d is negative", fn, lo, indptr[lo]))
	}
	for i := lo; i < hi; i++ {
		if indptr[i+1] < indptr[i] {
			panic(fmt.Sprintf("spkern: %s: indptr decreases at row %d (%d then %d)", fn, i, indptr[i], indptr[i+1]))
		}
	}
	end := indptr[hi]
	if end > len(idx) {
		panic(fmt.Sprintf("spkern: %s: indptr[%d] = %d beyond the %d indices", fn, hi, end, len(idx)))
	}
	if lv < end {
		panic(fmt.Sprintf("spkern: %s: val has %d values, want at least indptr[%d] = %d", fn, lv, hi, end))
	}
	rows := lx / 2
	if s := idx[indptr[lo]:end]; int64(maxIndex(s)) >= int64(rows) {
		for p, j := range s {
			if j < 0 || int(j) >= rows {
				panic(fmt.Sprintf("spkern: %s: index %d at position %d is not a row of x (%d rows of 2)", fn, j, indptr[lo]+p, rows))
			}
		}
	}
}
