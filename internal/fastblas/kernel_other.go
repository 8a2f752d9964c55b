//go:build !amd64

package fastblas

func hasKernels() bool { return false }

func hasAVX512() bool { return false }

func sgemm4x32(k int, a *float32, sr, sp int, b *float32, ldb int, c *float32, ldc int, alpha float32) {
	panic("fastblas: no kernel on this architecture")
}

func sgemm4x16(k int, a *float32, sr, sp int, b *float32, ldb int, c *float32, ldc int, alpha float32) {
	panic("fastblas: no kernel on this architecture")
}

func dgemm4x8(k int, a *float64, sr, sp int, b *float64, ldb int, c *float64, ldc int, alpha float64) {
	panic("fastblas: no kernel on this architecture")
}

func sgemm4x64(k int, a *float32, sr, sp int, b *float32, ldb int, c *float32, ldc int, alpha float32) {
	panic("fastblas: no kernel on this architecture")
}

func dot2s(n int, x *float32, y0 *float32, y1 *float32, out *[8]float32) {
	panic("fastblas: no kernel on this architecture")
}

func dot2d(n int, x *float64, y0 *float64, y1 *float64, out *[8]float64) {
	panic("fastblas: no kernel on this architecture")
}
