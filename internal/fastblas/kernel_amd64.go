//go:build !noasm

package fastblas

import "golang.org/x/sys/cpu"

// The assembly kernels (kernel_amd64.s, dot2_amd64.s). Each computes, for
// r in 0..3 and j below its width,
//
//	c[r*ldc+j] += alpha · Σ_{p<k} a[r*sr+p*sp] · b[p*ldb+j]
//
// summed in p order with fused multiply-adds; strides are in elements.
// They are called only through strip.run, or by gemm after checkBlock of
// the whole block they compute strips of: either way, every element they
// touch has been checked to be inside the slices.

//go:noescape
func sgemm4x16(k int, a *float32, sr, sp int, b *float32, ldb int, c *float32, ldc int, alpha float32)

//go:noescape
func sgemm4x64(k int, a *float32, sr, sp int, b *float32, ldb int, c *float32, ldc int, alpha float32)

//go:noescape
func sgemm4x32(k int, a *float32, sr, sp int, b *float32, ldb int, c *float32, ldc int, alpha float32)

//go:noescape
func dgemm4x8(k int, a *float64, sr, sp int, b *float64, ldb int, c *float64, ldc int, alpha float64)

// dot2s and dot2d write the four lanes of Σ x·y0 and of Σ x·y1 (lane r
// summing the steps p ≡ r mod 4, each product rounded, then added) over
// the first n elements (n a multiple of 4) to out[0:4] and out[4:8].
//
//go:noescape
func dot2s(n int, x *float32, y0 *float32, y1 *float32, out *[8]float32)

//go:noescape
func dot2d(n int, x *float64, y0 *float64, y1 *float64, out *[8]float64)

// haveAVX2 reports AVX2 and FMA with the OS saving the YMM registers (the
// 4 × 16 float32, 4 × 8 float64 and dot2 kernels).
func haveAVX2() bool { return cpu.X86.HasAVX2 && cpu.X86.HasFMA }

// haveAVX512 reports, besides haveAVX2, AVX-512F with the OS saving the
// opmask and ZMM registers (the 4 × 64 and 4 × 32 float32 kernels).
func haveAVX512() bool { return haveAVX2() && cpu.X86.HasAVX512F }

// noKernels is why this build has no assembly at all ("" here: it has).
const noKernels = ""

// sStrips lists the float32 kernels of a path, by decreasing width.
func sStrips(p path) []strip[float32] {
	switch p {
	case pathAVX512:
		return []strip[float32]{{64, sgemm4x64}, {32, sgemm4x32}, {16, sgemm4x16}}
	case pathAVX2:
		return []strip[float32]{{16, sgemm4x16}}
	}
	return nil
}

// dStrips lists the float64 kernels of a path.
func dStrips(p path) []strip[float64] {
	if p == pathGo {
		return nil
	}
	return []strip[float64]{{8, dgemm4x8}}
}
