package fastblas

import (
	"math"
	"math/rand"
	"testing"
)

// fuzzGemm decodes a fuzz input into a product and runs it on guarded
// buffers on every path this machine can run, against the float64
// reference: m < 40 and n < 160 (around the 4-row blocks and the 8, 16,
// 32 and 64 column strips), k < 1100 (one, two or three inner chunks);
// flags choose the transpositions, alpha, beta, padded leading dimensions
// and whether the kernels' size threshold is lowered to 1 (so that small
// shapes reach them).
func fuzzGemm[T float32 | float64](t *testing.T, m, n uint8, k uint16, flags uint8, seed int64) {
	gc := gemmCase{
		aT: flags&1 != 0, bT: flags&2 != 0,
		m: int(m) % 40, n: int(n) % 160, k: int(k) % 1100,
		alpha: []float64{1, -0.5, 0, 2.25}[flags>>2&3],
		beta:  []float64{0, 1, -1.5, 0.5}[flags>>4&3],
	}
	if flags&64 != 0 {
		gc.padA, gc.padB, gc.padC = 1+int(seed&3), 1+int(seed>>2&7), 1+int(seed>>5&15)
	}
	defer setPath(cfg.path)()
	for _, p := range available() {
		cfg = configFor(p)
		if flags&128 != 0 {
			cfg.minWork = 1
		}
		checkGuardedGemm[T](t, rand.New(rand.NewSource(seed)), gc)
	}
}

func addGemmSeeds(f *testing.F) {
	for _, s := range [][5]int{
		{4, 16, 1, 128, 0}, {5, 17, 513, 128 | 64 | 1, 1}, {8, 64, 300, 128 | 2, 2}, {7, 97, 40, 128 | 3 | 64, 3},
		{39, 130, 600, 0, 4}, {9, 2, 1099, 1 | 16, 5}, {30, 159, 1025, 64 | 8 | 32, 6}, {0, 5, 3, 0, 7}, {3, 0, 3, 0, 8},
	} {
		f.Add(uint8(s[0]), uint8(s[1]), uint16(s[2]), uint8(s[3]), int64(s[4]))
	}
}

// FuzzSgemm fuzzes Sgemm on every available path (see fuzzGemm).
func FuzzSgemm(f *testing.F) {
	addGemmSeeds(f)
	f.Fuzz(func(t *testing.T, m, n uint8, k uint16, flags uint8, seed int64) {
		fuzzGemm[float32](t, m, n, k, flags, seed)
	})
}

// FuzzDgemm fuzzes Dgemm on every available path (see fuzzGemm).
func FuzzDgemm(f *testing.F) {
	addGemmSeeds(f)
	f.Fuzz(func(t *testing.T, m, n uint8, k uint16, flags uint8, seed int64) {
		fuzzGemm[float64](t, m, n, k, flags, seed)
	})
}

// FuzzDot2 fuzzes dot2 (float32 and float64, every length to 300, signed
// zeros, infinities, NaNs, subnormals and huge values among random ones)
// on every available path against its Go loop, bit for bit (any NaN
// equal to any NaN), on guarded buffers.
func FuzzDot2(f *testing.F) {
	for i := 0; i < 8; i++ {
		f.Add(uint16(i*37), int64(i), uint8(i*30))
	}
	special := []float64{0, math.Copysign(0, -1), math.Inf(1), math.Inf(-1), math.NaN(), 1e-310, 3e38, 1e-40}
	f.Fuzz(func(t *testing.T, n uint16, seed int64, specials uint8) {
		defer setPath(cfg.path)()
		for _, p := range available() {
			cfg = configFor(p)
			for _, f32 := range []bool{true, false} {
				rng := rand.New(rand.NewSource(seed))
				val := func() float64 {
					if rng.Intn(256) < int(specials) {
						return special[rng.Intn(len(special))]
					}
					return rng.Float64()*2 - 1
				}
				nn := int(n) % 301
				if f32 {
					dot2Fuzz[float32](t, nn, val)
				} else {
					dot2Fuzz[float64](t, nn, val)
				}
			}
		}
	})
}

func dot2Fuzz[T float32 | float64](t *testing.T, n int, val func() float64) {
	gx, g0, g1 := newGuarded[T](n), newGuarded[T](n), newGuarded[T](n)
	for i := 0; i < n; i++ {
		gx.inner()[i], g0.inner()[i], g1.inner()[i] = T(val()), T(val()), T(val())
	}
	x0, y00, y10 := gx.clone(), g0.clone(), g1.clone()
	w0, w1 := dot2Go(gx.inner(), g0.inner(), g1.inner())
	v0, v1 := dot2(gx.inner(), g0.inner(), g1.inner())
	same := func(a, b T) bool { return bits(a) == bits(b) || (a != a && b != b) }
	if !same(v0, w0) || !same(v1, w1) {
		t.Fatalf("%T dot2 n=%d path %v: %v %v, want %v %v", T(0), n, cfg.path, v0, v1, w0, w1)
	}
	if gx.unchanged(x0) >= 0 || g0.unchanged(y00) >= 0 || g1.unchanged(y10) >= 0 {
		t.Fatalf("%T dot2 n=%d path %v: an input changed", T(0), n, cfg.path)
	}
}
