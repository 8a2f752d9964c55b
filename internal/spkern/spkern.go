// Package spkern holds the inner loops of fairmp's sparse × dense
// products: one CSR row times a dense row-major matrix, for float32 strips
// of 64 and 8 columns and float64 strips of 32 and 8, in AVX2 Go assembly
// where the CPU has it. The sums run over the row's non-zeros in index
// order, so results are deterministic: float32 with fused multiply-adds,
// float64 with a rounded multiply then a rounded add, which makes each
// float64 sum equal, bit for bit, to the plain Go loop's as Go compiles it
// for amd64 by default (GOAMD64 v1 and v2 never fuse a multiply and an add).
package spkern

// Enabled reports whether the assembly kernels run on this CPU.
func Enabled() bool { return kernels }

// RowStrip32 sets out[c] = Σ_p val[p] · x[idx[p]·ldx + c] for c < width,
// where width is 64 or 8 (the caller splits wider rows into strips and
// handles the remaining columns). x must hold every row idx[p] up to
// column width−1; lengths are the caller's responsibility (checked by
// graph.Matrix before any call). It reports false, doing nothing, when
// the kernels are not available.
func RowStrip32(width int, idx []int32, val []float32, x []float32, ldx int, out []float32) bool {
	if !kernels || len(idx) == 0 {
		return false
	}
	switch width {
	case 64:
		spmmRow64(len(idx), &idx[0], &val[0], &x[0], ldx, &out[0])
	case 8:
		spmmRow8(len(idx), &idx[0], &val[0], &x[0], ldx, &out[0])
	default:
		return false
	}
	return true
}

// RowStrip64 is RowStrip32 in float64, for widths 32 and 8: out[c] =
// Σ_p val[p] · x[idx[p]·ldx + c], summed from +0 in index order with a
// rounded multiply and a rounded add per step, exactly as
// `var s float64; for p := range idx { s += val[p] * x[...] }` computes
// it. It reports false, doing nothing, when the kernels are not available
// or width is another value.
func RowStrip64(width int, idx []int32, val []float64, x []float64, ldx int, out []float64) bool {
	if !kernels || len(idx) == 0 {
		return false
	}
	switch width {
	case 32:
		spmmRow32d(len(idx), &idx[0], &val[0], &x[0], ldx, &out[0])
	case 8:
		spmmRow8d(len(idx), &idx[0], &val[0], &x[0], ldx, &out[0])
	default:
		return false
	}
	return true
}

// Heads4x16 sets out[16k+q] = Σ_p w_p[k] · x[idx[p]·ldx + 16k + q] for
// k < 4, q < 16: the aggregation of a 4-head attention layer with 16
// features per head (a row of 64 outputs). The weights of step p are
// alpha[4p : 4p+4], or alpha[4·arow[p] : +4] when arow is not nil. It
// reports false, doing nothing, when the kernels are not available.
// Lengths are the caller's responsibility.
func Heads4x16(idx, arow []int32, alpha []float32, x []float32, ldx int, out []float32) bool {
	if !kernels {
		return false
	}
	if len(idx) == 0 {
		clear(out[:64])
		return true
	}
	if arow == nil {
		heads4x16Row(len(idx), &idx[0], &alpha[0], &x[0], ldx, &out[0])
	} else {
		heads4x16RowIdx(len(idx), &idx[0], &arow[0], &alpha[0], &x[0], ldx, &out[0])
	}
	return true
}

// Heads4x16d is Heads4x16 in float64 (two passes of two heads): out[16k+q]
// = Σ_p w_p[k] · x[idx[p]·ldx + 16k + q], with w_p = alpha[4p : 4p+4], or
// alpha[4·arow[p] : +4] when arow is not nil, summed from +0 in p order
// with a rounded multiply and a rounded add per step: bit for bit what
// `o[q] = 0; for p { o[q] += w * x }` computes in Go. It reports false,
// doing nothing, when the kernels are not available. Lengths are the
// caller's responsibility.
func Heads4x16d(idx, arow []int32, alpha []float64, x []float64, ldx int, out []float64) bool {
	if !kernels {
		return false
	}
	if len(idx) == 0 {
		clear(out[:64])
		return true
	}
	var ar *int32
	if arow != nil {
		ar = &arow[0]
	}
	heads2x16d(len(idx), &idx[0], ar, &alpha[0], &x[0], ldx, &out[0])
	heads2x16d(len(idx), &idx[0], ar, &alpha[2], &x[32], ldx, &out[32])
	return true
}

// Heads4x16Dot sets out[4p+k] = scale · Σ_q x[idx[p]·ldx + 16k + q] ·
// d[16k+q] for k < 4, q < 16 (per-head dot products of 16). The sum of
// each head runs as ((x0d0+x8d8) + … ) in a fixed pairwise order. It
// reports false, doing nothing, when the kernels are not available.
func Heads4x16Dot(idx []int32, x []float32, ldx int, d []float32, out []float32, scale float32) bool {
	if !kernels {
		return false
	}
	if len(idx) == 0 {
		return true
	}
	_ = d[63]
	_ = out[4*len(idx)-1]
	heads4x16Dot(len(idx), &idx[0], &x[0], ldx, &d[0], &out[0], scale)
	return true
}

// Heads4x16Dotd is Heads4x16Dot in float64, summed exactly as the Go loop
// (gatDot) sums it: four interleaved partial sums of rounded products,
// combined as (s0+s1)+(s2+s3), then times scale; its results equal the Go
// loop's bit for bit. It reports false, doing nothing, when the kernels
// are not available.
func Heads4x16Dotd(idx []int32, x []float64, ldx int, d []float64, out []float64, scale float64) bool {
	if !kernels {
		return false
	}
	if len(idx) == 0 {
		return true
	}
	_ = d[63]
	_ = out[4*len(idx)-1]
	heads4x16Dotd(len(idx), &idx[0], &x[0], ldx, &d[0], &out[0], scale)
	return true
}

// Cols2Rows32 sets out[2(i−lo) : +2] = Σ_p val[p]·x[2·idx[p] : +2] for the
// rows i in [lo, hi) of a CSR matrix (p from indptr[i] to indptr[i+1]):
// a sparse product with a two-column dense matrix, the shape of FMP's
// logits. Four rows are summed side by side; each row is summed from +0 in
// index order with a rounded multiply and a rounded add per step, as the
// plain Go loop `s0 += v*x[2j]; s1 += v*x[2j+1]` does, so results equal
// that loop's bit for bit. Lengths are the caller's responsibility (x must
// hold every row idx[p], out 2·(hi−lo) values). It reports false, doing
// nothing, when the kernels are not available.
func Cols2Rows32(indptr []int, idx []int32, val []float32, x, out []float32, lo, hi int) bool {
	if !kernels || hi <= lo || len(idx) == 0 {
		return false
	}
	cols2Rows32(hi-lo, &indptr[lo], &idx[0], &val[0], &x[0], &out[0])
	return true
}

// Cols2Rows64 is Cols2Rows32 in float64.
func Cols2Rows64(indptr []int, idx []int32, val []float64, x, out []float64, lo, hi int) bool {
	if !kernels || hi <= lo || len(idx) == 0 {
		return false
	}
	cols2Rows64(hi-lo, &indptr[lo], &idx[0], &val[0], &x[0], &out[0])
	return true
}
