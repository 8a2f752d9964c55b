package spkern

import "math"

// kernelSet is one implementation of every kernel: the assembly (AVX2/FMA,
// amd64 without the noasm tag) or pure Go. The exported functions check
// their arguments, then call the active set; the kernels assume the checks
// passed.
type kernelSet struct {
	name string
	asm  bool // Enabled reports it: callers lay out their loops for the assembly

	rowStrip32    func(width int, idx []int32, val, x []float32, ldx int, out []float32) // width 64 or 8, len(idx) > 0
	rowStrip64    func(width int, idx []int32, val, x []float64, ldx int, out []float64) // width 32 or 8, len(idx) > 0
	heads4x16     func(idx, arow []int32, alpha, x []float32, ldx int, out []float32)    // len(idx) > 0
	heads4x16d    func(idx, arow []int32, alpha, x []float64, ldx int, out []float64)    // len(idx) > 0
	heads4x16Dot  func(idx []int32, x []float32, ldx int, d, out []float32, scale float32)
	heads4x16Dotd func(idx []int32, x []float64, ldx int, d, out []float64, scale float64)
	cols2Rows32   func(indptr []int, idx []int32, val, x, out []float32, rows int)
	cols2Rows64   func(indptr []int, idx []int32, val, x, out []float64, rows int)
	cols2Order32  func(order []int32, indptr []int, idx []int32, val, x, out []float32, base int) // len(order) > 0
	cols2Order64  func(order []int32, indptr []int, idx []int32, val, x, out []float64, base int) // len(order) > 0
	biasReLU32    func(z, b []float32)                                                            // b nil: no bias
	reLUMask32    func(out, y, dy []float32)
	colSumAdd32   func(p []float64, x []float32, rows, c int)
}

// kernelPath is a kernel set as the tests see it: missing names what this
// machine or build lacks to run it ("" when it runs).
type kernelPath struct {
	name    string
	set     *kernelSet
	missing string
}

// active is the kernel set the exported functions call: the assembly where
// the CPU runs it, else pure Go. It is chosen by a package variable
// initializer (no init function, no side effect elsewhere); the tests set
// it to force each path in turn.
var active = defaultKernels()

func defaultKernels() *kernelSet {
	for _, p := range kernelPaths {
		if p.missing == "" {
			return p.set
		}
	}
	return &goKernels
}

// goKernels are the pure-Go kernels: the only ones under the noasm tag or
// off amd64, and the fallback on a CPU without AVX2/FMA. Each sums in the
// assembly's order from +0. Every product is rounded before it is added
// (the explicit conversions forbid fusing, which Go does on arm64, ppc64
// and s390x), so results are the same on every architecture, and equal
// the assembly's bit for bit except where the assembly fuses a multiply
// and an add: the float32 RowStrip32, Heads4x16 and Heads4x16Dot, which
// differ in the last bits (same order, one rounding fewer per step).
var goKernels = kernelSet{
	name:          "go",
	rowStrip32:    rowStripGo[float32],
	rowStrip64:    rowStripGo[float64],
	heads4x16:     heads4x16Go[float32],
	heads4x16d:    heads4x16Go[float64],
	heads4x16Dot:  heads4x16DotGo,
	heads4x16Dotd: heads4x16DotdGo,
	cols2Rows32:   cols2RowsGo[float32],
	cols2Rows64:   cols2RowsGo[float64],
	cols2Order32:  cols2OrderGo[float32],
	cols2Order64:  cols2OrderGo[float64],
	biasReLU32:    biasReLUGo,
	reLUMask32:    reLUMaskGo,
	colSumAdd32:   colSumAddGo,
}

func rowStripGo[T Float](width int, idx []int32, val, x []T, ldx int, out []T) {
	o := out[:width:width]
	clear(o)
	val = val[:len(idx)]
	for p, j := range idx {
		v := val[p]
		xr := x[int(j)*ldx : int(j)*ldx+width]
		for c := range o {
			o[c] += T(v * xr[c])
		}
	}
}

func heads4x16Go[T Float](idx, arow []int32, alpha, x []T, ldx int, out []T) {
	o := out[:64:64]
	clear(o)
	for p, j := range idx {
		r := p
		if arow != nil {
			r = int(arow[p])
		}
		w := alpha[4*r : 4*r+4 : 4*r+4]
		xr := x[int(j)*ldx : int(j)*ldx+64]
		for c := range o {
			o[c] += T(w[c>>4] * xr[c])
		}
	}
}

// heads4x16DotGo sums each head as the assembly does: lanes t_l = x_l·d_l
// + x_{8+l}·d_{8+l} (l < 8; the assembly fuses the second product), then
// ((t0+t1)+(t2+t3)) + ((t4+t5)+(t6+t7)), then times scale.
func heads4x16DotGo(idx []int32, x []float32, ldx int, d, out []float32, scale float32) {
	d = d[:64]
	out = out[:4*len(idx)]
	for p, j := range idx {
		xr := x[int(j)*ldx : int(j)*ldx+64]
		for k := 0; k < 4; k++ {
			xk, dk := xr[16*k:16*k+16], d[16*k:16*k+16]
			var t [8]float32
			for l := range t {
				t[l] = float32(xk[l]*dk[l]) + float32(xk[8+l]*dk[8+l])
			}
			s := ((t[0] + t[1]) + (t[2] + t[3])) + ((t[4] + t[5]) + (t[6] + t[7]))
			out[4*p+k] = float32(s * scale)
		}
	}
}

// heads4x16DotdGo sums each head as gatDot: four interleaved partial sums
// combined as (s0+s1)+(s2+s3), then times scale.
func heads4x16DotdGo(idx []int32, x []float64, ldx int, d, out []float64, scale float64) {
	d = d[:64]
	out = out[:4*len(idx)]
	for p, j := range idx {
		xr := x[int(j)*ldx : int(j)*ldx+64]
		for k := 0; k < 4; k++ {
			xk, dk := xr[16*k:16*k+16], d[16*k:16*k+16]
			var s [4]float64
			for q := range xk {
				s[q&3] += float64(xk[q] * dk[q])
			}
			out[4*p+k] = float64(((s[0] + s[1]) + (s[2] + s[3])) * scale)
		}
	}
}

// cols2RowsGo computes rows rows from indptr[0]: out[2i : 2i+2] = Σ val[p]
// · x[2·idx[p] : +2] for p in [indptr[i], indptr[i+1]).
func cols2RowsGo[T Float](indptr []int, idx []int32, val, x, out []T, rows int) {
	out = out[: 2*rows : 2*rows]
	for i := 0; i < rows; i++ {
		out[2*i], out[2*i+1] = cols2Row(indptr[i], indptr[i+1], idx, val, x)
	}
}

// cols2OrderGo is cols2RowsGo on the rows of order, row r's sums going
// to out[2(r−base) : +2].
func cols2OrderGo[T Float](order []int32, indptr []int, idx []int32, val, x, out []T, base int) {
	for _, r := range order {
		o := 2 * (int(r) - base)
		out[o], out[o+1] = cols2Row(indptr[r], indptr[r+1], idx, val, x)
	}
}

// cols2Row sums one row's entries [ps, pe) against a two-column x from
// +0 in index order, each product rounded before it is added.
func cols2Row[T Float](ps, pe int, idx []int32, val, x []T) (s0, s1 T) {
	for p := ps; p < pe; p++ {
		v, j := val[p], int(idx[p])
		s0 += T(v * x[2*j])
		s1 += T(v * x[2*j+1])
	}
	return s0, s1
}

func biasReLUGo(z, b []float32) {
	if b == nil {
		for i, v := range z {
			z[i] = max(v, 0)
		}
		return
	}
	b = b[:len(z)]
	for i, v := range z {
		z[i] = max(v+b[i], 0)
	}
}

// reLUMaskGo keeps dy[i] where the bits of y[i], as an int32, are > 0 (y >
// 0, and a NaN without its sign bit), branch-free.
func reLUMaskGo(out, y, dy []float32) {
	y, dy = y[:len(out)], dy[:len(out)]
	for i := range out {
		b := int32(math.Float32bits(y[i]))
		m := uint32((-b)>>31) & ^uint32(b>>31)
		out[i] = math.Float32frombits(math.Float32bits(dy[i]) & m)
	}
}

func colSumAddGo(p []float64, x []float32, rows, c int) {
	p = p[:c]
	for r := 0; r < rows; r++ {
		for k, v := range x[r*c : (r+1)*c] {
			p[k] += float64(v)
		}
	}
}
