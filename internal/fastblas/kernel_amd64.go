package fastblas

//go:noescape
func cpuid(eaxArg, ecxArg uint32) (eax, ebx, ecx, edx uint32)

//go:noescape
func xgetbv0() (eax uint32)

//go:noescape
func sgemm4x16(k int, a *float32, sr, sp int, b *float32, ldb int, c *float32, ldc int, alpha float32)

//go:noescape
func sgemm4x64(k int, a *float32, sr, sp int, b *float32, ldb int, c *float32, ldc int, alpha float32)

//go:noescape
func sgemm4x32(k int, a *float32, sr, sp int, b *float32, ldb int, c *float32, ldc int, alpha float32)

//go:noescape
func dgemm4x8(k int, a *float64, sr, sp int, b *float64, ldb int, c *float64, ldc int, alpha float64)

// hasKernels reports AVX2 and FMA with the OS saving the YMM registers.
func hasKernels() bool {
	maxID, _, _, _ := cpuid(0, 0)
	if maxID < 7 {
		return false
	}
	_, _, ecx1, _ := cpuid(1, 0)
	const fma, osxsave, avx = 1 << 12, 1 << 27, 1 << 28
	if ecx1&fma == 0 || ecx1&osxsave == 0 || ecx1&avx == 0 {
		return false
	}
	if xgetbv0()&6 != 6 { // XMM and YMM state enabled
		return false
	}
	_, ebx7, _, _ := cpuid(7, 0)
	const avx2 = 1 << 5
	return ebx7&avx2 != 0
}

// hasAVX512 reports AVX-512F with the OS saving the opmask and ZMM state.
func hasAVX512() bool {
	if !hasKernels() {
		return false
	}
	_, ebx7, _, _ := cpuid(7, 0)
	const avx512f = 1 << 16
	return ebx7&avx512f != 0 && xgetbv0()&0xe6 == 0xe6
}

//go:noescape
func dot2s(n int, x *float32, y0 *float32, y1 *float32, out *[8]float32)

//go:noescape
func dot2d(n int, x *float64, y0 *float64, y1 *float64, out *[8]float64)
