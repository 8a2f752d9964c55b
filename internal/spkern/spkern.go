// Package spkern holds the inner loops of fairmp's sparse × dense
// products: one CSR row times a dense row-major matrix, for float32 strips
// of 64 and 8 columns, in AVX2/FMA Go assembly where the CPU has it. The
// sums run over the row's non-zeros in index order with fused
// multiply-adds, so results are deterministic.
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
