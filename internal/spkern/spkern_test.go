package spkern

import (
	"math"
	"testing"
)

// TestRowStrip32 checks both widths against a plain loop, including rows
// with more than 8 non-zeros (the prefetching loop) and an unsupported
// width.
func TestRowStrip32(t *testing.T) {
	const ldx, rows = 70, 40
	x := make([]float32, rows*ldx)
	for i := range x {
		x[i] = float32(math.Sin(float64(i)))
	}
	for _, nnz := range []int{1, 3, 8, 9, 25} {
		idx := make([]int32, nnz)
		val := make([]float32, nnz)
		for p := range idx {
			idx[p] = int32((p*7 + 3) % rows)
			val[p] = float32(p) - 2.5
		}
		for _, w := range []int{64, 8} {
			for _, off := range []int{0, 6} {
				out := make([]float32, w)
				if !RowStrip32(w, idx, val, x[off:], ldx, out) {
					if Enabled() {
						t.Fatalf("width %d: kernel not run on a CPU that has it", w)
					}
					t.Skip("no AVX2/FMA")
				}
				for c := 0; c < w; c++ {
					var want float64
					for p, j := range idx {
						want += float64(val[p]) * float64(x[int(j)*ldx+off+c])
					}
					if math.Abs(float64(out[c])-want) > 1e-4*(1+math.Abs(want)) {
						t.Fatalf("nnz %d width %d offset %d: out[%d] = %v, want %v", nnz, w, off, c, out[c], want)
					}
				}
			}
		}
	}
	if RowStrip32(16, []int32{0}, []float32{1}, x, ldx, make([]float32, 16)) {
		t.Fatal("width 16 reported as run")
	}
}
