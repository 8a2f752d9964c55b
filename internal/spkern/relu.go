package spkern

import "math"

// BiasReLU32 sets z[i] = max(z[i] + b[i], 0) for i < len(z) (len(b) ≥
// len(z)): a layer's bias and ReLU on one row, bit for bit as Go
// computes max(z[i]+b[i], 0) (+0 for −0, a NaN with its sign bit
// cleared); b nil adds nothing. Eight lanes at a time in AVX2 where the
// CPU has it.
func BiasReLU32(z, b []float32) {
	n8 := 0
	if kernels && len(z) >= 8 {
		n8 = len(z) &^ 7
		if b == nil {
			reLU8(n8, &z[0])
		} else {
			biasReLU8(n8, &z[0], &b[0])
		}
	}
	if b == nil {
		for i := n8; i < len(z); i++ {
			z[i] = max(z[i], 0)
		}
		return
	}
	b = b[:len(z)]
	for i := n8; i < len(z); i++ {
		z[i] = max(z[i]+b[i], 0)
	}
}

// ReLUMask32 sets out[i] = dy[i] where y[i] > 0 (and where y[i] is a NaN
// without its sign bit), else +0: the ReLU's gradient read from its
// output, as the branch-free Go loop of layers computes it. out may be
// dy. len(y) and len(dy) must be ≥ len(out).
func ReLUMask32(out, y, dy []float32) {
	n8 := 0
	if kernels && len(out) >= 8 {
		n8 = len(out) &^ 7
		reLUMask8(n8, &out[0], &y[0], &dy[0])
	}
	y, dy = y[:len(out)], dy[:len(out)]
	for i := n8; i < len(out); i++ {
		b := int32(math.Float32bits(y[i]))
		m := uint32((-b)>>31) & ^uint32(b>>31)
		out[i] = math.Float32frombits(math.Float32bits(dy[i]) & m)
	}
}

// ColSumAdd32 adds the rows of the rows × c matrix x (row-major) to p in
// float64: p[j] += float64(x[r·c+j]) for r in order, as the plain loop
// does, bit for bit (a float32 widens exactly; each column's adds keep
// their order). AVX2 four columns at a time where the CPU has it, and
// when c is a multiple of 4.
func ColSumAdd32(p []float64, x []float32, rows, c int) {
	if rows <= 0 {
		return
	}
	_ = x[rows*c-1]
	_ = p[c-1]
	if kernels && c%4 == 0 {
		colSumAdd4(rows, c, &x[0], &p[0])
		return
	}
	for r := 0; r < rows; r++ {
		for k, v := range x[r*c : (r+1)*c] {
			p[k] += float64(v)
		}
	}
}
