//go:build !noasm

package spkern

import "golang.org/x/sys/cpu"

// kernelPaths lists the kernel sets of this build, the assembly first:
// the default is the first one the CPU runs.
var kernelPaths = []kernelPath{
	{name: "avx2", set: &asmKernels, missing: missingAVX2()},
	{name: "go", set: &goKernels},
}

// missingAVX2 names the CPU features the assembly needs and this CPU (or
// its OS, which must save the YMM registers) lacks, "" when none.
func missingAVX2() string {
	s := ""
	for _, f := range []struct {
		name string
		has  bool
	}{{"AVX", cpu.X86.HasAVX}, {"AVX2", cpu.X86.HasAVX2}, {"FMA", cpu.X86.HasFMA}} {
		if !f.has {
			if s != "" {
				s += ", "
			}
			s += f.name
		}
	}
	return s
}

// asmKernels wraps the AVX2/FMA assembly. The exported functions have
// checked every length and index before any of these runs.
var asmKernels = kernelSet{
	name: "avx2",
	asm:  true,
	rowStrip32: func(width int, idx []int32, val, x []float32, ldx int, out []float32) {
		if width == 64 {
			spmmRow64(len(idx), &idx[0], &val[0], &x[0], ldx, &out[0])
		} else {
			spmmRow8(len(idx), &idx[0], &val[0], &x[0], ldx, &out[0])
		}
	},
	rowStrip64: func(width int, idx []int32, val, x []float64, ldx int, out []float64) {
		if width == 32 {
			spmmRow32d(len(idx), &idx[0], &val[0], &x[0], ldx, &out[0])
		} else {
			spmmRow8d(len(idx), &idx[0], &val[0], &x[0], ldx, &out[0])
		}
	},
	heads4x16: func(idx, arow []int32, alpha, x []float32, ldx int, out []float32) {
		if arow == nil {
			heads4x16Row(len(idx), &idx[0], &alpha[0], &x[0], ldx, &out[0])
		} else {
			heads4x16RowIdx(len(idx), &idx[0], &arow[0], &alpha[0], &x[0], ldx, &out[0])
		}
	},
	heads4x16d: func(idx, arow []int32, alpha, x []float64, ldx int, out []float64) {
		var ar *int32
		if arow != nil {
			ar = &arow[0]
		}
		heads2x16d(len(idx), &idx[0], ar, &alpha[0], &x[0], ldx, &out[0])
		heads2x16d(len(idx), &idx[0], ar, &alpha[2], &x[32], ldx, &out[32])
	},
	heads4x16Dot: func(idx []int32, x []float32, ldx int, d, out []float32, scale float32) {
		heads4x16Dot(len(idx), &idx[0], &x[0], ldx, &d[0], &out[0], scale)
	},
	heads4x16Dotd: func(idx []int32, x []float64, ldx int, d, out []float64, scale float64) {
		heads4x16Dotd(len(idx), &idx[0], &x[0], ldx, &d[0], &out[0], scale)
	},
	cols2Rows32: func(indptr []int, idx []int32, val, x, out []float32, rows int) {
		cols2Rows32(rows, &indptr[0], &idx[0], &val[0], &x[0], &out[0])
	},
	cols2Rows64: func(indptr []int, idx []int32, val, x, out []float64, rows int) {
		cols2Rows64(rows, &indptr[0], &idx[0], &val[0], &x[0], &out[0])
	},
	cols2Order32: func(order []int32, indptr []int, idx []int32, val, x, out []float32, base int) {
		cols2Order32(len(order), &order[0], &indptr[0], &idx[0], &val[0], &x[0], &out[0], base)
	},
	cols2Order64: func(order []int32, indptr []int, idx []int32, val, x, out []float64, base int) {
		cols2Order64(len(order), &order[0], &indptr[0], &idx[0], &val[0], &x[0], &out[0], base)
	},
	biasReLU32: func(z, b []float32) {
		n8 := len(z) &^ 7
		if n8 > 0 {
			if b == nil {
				reLU8(n8, &z[0])
			} else {
				biasReLU8(n8, &z[0], &b[0])
			}
		}
		if b != nil {
			b = b[n8:]
		}
		biasReLUGo(z[n8:], b)
	},
	reLUMask32: func(out, y, dy []float32) {
		n8 := len(out) &^ 7
		if n8 > 0 {
			reLUMask8(n8, &out[0], &y[0], &dy[0])
		}
		reLUMaskGo(out[n8:], y[n8:], dy[n8:])
	},
	colSumAdd32: func(p []float64, x []float32, rows, c int) {
		if c%4 != 0 {
			colSumAddGo(p, x, rows, c)
			return
		}
		colSumAdd4(rows, c, &x[0], &p[0])
	},
}

//go:noescape
func spmmRow64(n int, idx *int32, val *float32, x *float32, ldx int, out *float32)

//go:noescape
func spmmRow8(n int, idx *int32, val *float32, x *float32, ldx int, out *float32)

//go:noescape
func spmmRow32d(n int, idx *int32, val *float64, x *float64, ldx int, out *float64)

//go:noescape
func spmmRow8d(n int, idx *int32, val *float64, x *float64, ldx int, out *float64)

//go:noescape
func heads2x16d(n int, idx *int32, arow *int32, alpha *float64, x *float64, ldx int, out *float64)

//go:noescape
func heads4x16Dotd(n int, idx *int32, x *float64, ldx int, d *float64, out *float64, scale float64)

//go:noescape
func heads4x16Row(n int, idx *int32, alpha *float32, x *float32, ldx int, out *float32)

//go:noescape
func heads4x16RowIdx(n int, idx *int32, arow *int32, alpha *float32, x *float32, ldx int, out *float32)

//go:noescape
func heads4x16Dot(n int, idx *int32, x *float32, ldx int, d *float32, out *float32, scale float32)

//go:noescape
func cols2Rows32(rows int, indptr *int, idx *int32, val *float32, x *float32, out *float32)

//go:noescape
func cols2Order32(n int, order *int32, indptr *int, idx *int32, val *float32, x *float32, out *float32, base int)

//go:noescape
func cols2Order64(n int, order *int32, indptr *int, idx *int32, val *float64, x *float64, out *float64, base int)

//go:noescape
func cols2Rows64(rows int, indptr *int, idx *int32, val *float64, x *float64, out *float64)

//go:noescape
func biasReLU8(n int, z *float32, b *float32)

//go:noescape
func reLU8(n int, z *float32)

//go:noescape
func reLUMask8(n int, out *float32, y *float32, dy *float32)

//go:noescape
func colSumAdd4(rows, c int, x *float32, p *float64)
