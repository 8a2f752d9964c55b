package spkern

import "fmt"

// BiasReLU32 sets z[i] = max(z[i] + b[i], 0) for i < len(z) (len(b) ≥
// len(z)): a layer's bias and ReLU on one row, bit for bit as Go
// computes max(z[i]+b[i], 0) (+0 for −0, a NaN with its sign bit
// cleared); b nil adds nothing. Eight lanes at a time in AVX2 where the
// CPU has it. It panics, before touching memory, when b is not nil and
// shorter than z.
func BiasReLU32(z, b []float32) {
	if b != nil && len(b) < len(z) {
		panic(fmt.Sprintf("spkern: BiasReLU32: b has %d values for %d in z", len(b), len(z)))
	}
	active.biasReLU32(z, b)
}

// ReLUMask32 sets out[i] = dy[i] where y[i] > 0 (and where y[i] is a NaN
// without its sign bit), else +0: the ReLU's gradient read from its
// output, as the branch-free Go loop of layers computes it. out may be
// dy. It panics, before touching memory, when y or dy is shorter than
// out.
func ReLUMask32(out, y, dy []float32) {
	if len(y) < len(out) || len(dy) < len(out) {
		panic(fmt.Sprintf("spkern: ReLUMask32: y has %d values and dy %d for %d in out", len(y), len(dy), len(out)))
	}
	active.reLUMask32(out, y, dy)
}

// ColSumAdd32 adds the rows of the rows × c matrix x (row-major) to p in
// float64: p[j] += float64(x[r·c+j]) for r in order, as the plain loop
// does, bit for bit (a float32 widens exactly; each column's adds keep
// their order). AVX2 four columns at a time where the CPU has it, and
// when c is a multiple of 4. It panics, before touching memory, when rows
// or c is negative, x has fewer than rows·c values or p fewer than c.
func ColSumAdd32(p []float64, x []float32, rows, c int) {
	if rows < 0 || c < 0 {
		panic(fmt.Sprintf("spkern: ColSumAdd32: negative size %d × %d", rows, c))
	}
	if rows == 0 || c == 0 {
		return
	}
	if len(x)/c < rows {
		panic(fmt.Sprintf("spkern: ColSumAdd32: x has %d values for %d × %d", len(x), rows, c))
	}
	if len(p) < c {
		panic(fmt.Sprintf("spkern: ColSumAdd32: p has %d values for %d columns", len(p), c))
	}
	active.colSumAdd32(p, x, rows, c)
}
