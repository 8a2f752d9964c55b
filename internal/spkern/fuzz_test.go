package spkern

import (
	"math/rand"
	"testing"
)

// The fuzz targets run the guard-band checks of kern_test.go on random
// sizes, alignments and values, on every kernel path this machine runs in
// turn, float32 and float64. Sizes wrap around the vector widths: 0 to
// 3·width+1 (width 8 for the strips, heads and ReLU, whose 64- and 32-wide
// kernels also prefetch 8 steps ahead; 4 rows or columns for Cols2Rows and
// ColSumAdd32).
//
//	go test -run - -fuzz '^FuzzRowStrip$' -fuzztime 60s -parallel 1 ./internal/spkern/

// onEveryPath runs f with each runnable kernel path forced in turn.
func onEveryPath(f func()) {
	defer force(active)()
	for _, p := range runnablePaths() {
		active = p.set
		f()
	}
}

func FuzzRowStrip(f *testing.F) {
	f.Add(int64(1), uint8(0), uint8(9), uint8(1), uint8(1))
	f.Add(int64(2), uint8(3), uint8(25), uint8(0), uint8(2))
	f.Fuzz(func(t *testing.T, seed int64, which, nnz, extra, skew uint8) {
		n, e, s := int(nnz)%(3*8+2), int(extra)%9, int(skew)%4
		onEveryPath(func() {
			rng := rand.New(rand.NewSource(seed))
			switch which % 4 {
			case 0:
				checkRowStrip[float32](t, rng, 64, n, e, s)
			case 1:
				checkRowStrip[float32](t, rng, 8, n, e, s)
			case 2:
				checkRowStrip[float64](t, rng, 32, n, e, s)
			case 3:
				checkRowStrip[float64](t, rng, 8, n, e, s)
			}
		})
	})
}

func FuzzHeads4x16(f *testing.F) {
	f.Add(int64(1), false, uint8(5), uint8(1), uint8(1), false)
	f.Add(int64(2), true, uint8(17), uint8(0), uint8(3), true)
	f.Fuzz(func(t *testing.T, seed int64, f64 bool, nnz, extra, skew uint8, indexed bool) {
		n, e, s := int(nnz)%(3*8+2), int(extra)%9, int(skew)%4
		onEveryPath(func() {
			rng := rand.New(rand.NewSource(seed))
			if f64 {
				checkHeads4x16[float64](t, rng, n, e, s, indexed)
			} else {
				checkHeads4x16[float32](t, rng, n, e, s, indexed)
			}
		})
	})
}

func FuzzHeads4x16Dot(f *testing.F) {
	f.Add(int64(1), false, uint8(5), uint8(1), uint8(1))
	f.Add(int64(2), true, uint8(17), uint8(0), uint8(3))
	f.Fuzz(func(t *testing.T, seed int64, f64 bool, nnz, extra, skew uint8) {
		n, e, s := int(nnz)%(3*8+2), int(extra)%9, int(skew)%4
		onEveryPath(func() {
			rng := rand.New(rand.NewSource(seed))
			if f64 {
				checkHeads4x16Dot[float64](t, rng, n, e, s)
			} else {
				checkHeads4x16Dot[float32](t, rng, n, e, s)
			}
		})
	})
}

func FuzzCols2Rows(f *testing.F) {
	f.Add(int64(1), false, uint8(5), uint8(3), uint8(1))
	f.Add(int64(2), true, uint8(13), uint8(9), uint8(0))
	f.Fuzz(func(t *testing.T, seed int64, f64 bool, rows, maxRow, skew uint8) {
		n, m, s := int(rows)%(3*4+2), int(maxRow)%12, int(skew)%4
		onEveryPath(func() {
			rng := rand.New(rand.NewSource(seed))
			if f64 {
				checkCols2Rows[float64](t, rng, n, m, s)
			} else {
				checkCols2Rows[float32](t, rng, n, m, s)
			}
		})
	})
}

func FuzzReLU(f *testing.F) {
	f.Add(int64(1), uint8(9), uint8(1))
	f.Add(int64(2), uint8(25), uint8(3))
	f.Fuzz(func(t *testing.T, seed int64, n, skew uint8) {
		onEveryPath(func() {
			checkReLU(t, rand.New(rand.NewSource(seed)), int(n)%(3*8+2), int(skew)%4)
		})
	})
}

func FuzzColSumAdd32(f *testing.F) {
	f.Add(int64(1), uint8(3), uint8(8), uint8(1))
	f.Add(int64(2), uint8(7), uint8(13), uint8(0))
	f.Fuzz(func(t *testing.T, seed int64, rows, c, skew uint8) {
		onEveryPath(func() {
			checkColSumAdd(t, rand.New(rand.NewSource(seed)), int(rows)%9, int(c)%(3*4+2), int(skew)%4)
		})
	})
}
