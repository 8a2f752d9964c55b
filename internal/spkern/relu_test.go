package spkern

import (
	"math"
	"math/rand"
	"testing"
)

// special holds the values where a vector max or mask could differ from
// Go's: signed zeros, NaNs of both signs and payloads, infinities,
// subnormals.
var special = []float32{0, float32(math.Copysign(0, -1)), 1, -1, float32(math.Inf(1)), float32(math.Inf(-1)), 1e-45, -1e-45,
	math.Float32frombits(0x7fc00000), math.Float32frombits(0xffc00000), math.Float32frombits(0x7f800001), math.Float32frombits(0xff800001), math.Float32frombits(0xffc00001)}

// TestBiasReLU32 checks the kernels against Go's max, bit for bit, on
// every pair of special values and random ones, for lengths around the
// vector width.
func TestBiasReLU32(t *testing.T) {
	forEachPath(t, func(t *testing.T, _ *kernelSet) {
		rng := rand.New(rand.NewSource(1))
		for _, n := range []int{0, 1, 7, 8, 9, 16, 64, 67} {
			for rep := 0; rep < 20; rep++ {
				z, b := make([]float32, n), make([]float32, n)
				for i := range z {
					pick := func() float32 {
						if rng.Intn(3) == 0 {
							return special[rng.Intn(len(special))]
						}
						return float32(rng.NormFloat64())
					}
					z[i], b[i] = pick(), pick()
				}
				for _, bias := range []bool{true, false} {
					want, got := append([]float32(nil), z...), append([]float32(nil), z...)
					var bb []float32
					if bias {
						bb = b
					}
					for i := range want {
						if bias {
							want[i] = max(want[i]+b[i], 0)
						} else {
							want[i] = max(want[i], 0)
						}
					}
					BiasReLU32(got, bb)
					for i := range want {
						if math.Float32bits(want[i]) != math.Float32bits(got[i]) {
							t.Fatalf("n=%d bias=%v: z=%x b=%x: got %x, want %x", n, bias, math.Float32bits(z[i]), math.Float32bits(b[i]), math.Float32bits(got[i]), math.Float32bits(want[i]))
						}
					}
				}
				// The mask, in place and not.
				y := z
				want := make([]float32, n)
				for i := range want {
					bi := int32(math.Float32bits(y[i]))
					m := uint32((-bi)>>31) & ^uint32(bi>>31)
					want[i] = math.Float32frombits(math.Float32bits(b[i]) & m)
				}
				got := make([]float32, n)
				ReLUMask32(got, y, b)
				in := append([]float32(nil), b...)
				ReLUMask32(in, y, in)
				for i := range want {
					if math.Float32bits(want[i]) != math.Float32bits(got[i]) || math.Float32bits(want[i]) != math.Float32bits(in[i]) {
						t.Fatalf("mask n=%d: y=%x dy=%x: got %x / %x in place, want %x", n, math.Float32bits(y[i]), math.Float32bits(b[i]), math.Float32bits(got[i]), math.Float32bits(in[i]), math.Float32bits(want[i]))
					}
				}
			}
		}
	})
}

// TestColSumAdd32 checks the kernel against the plain loop, bit for bit.
func TestColSumAdd32(t *testing.T) {
	forEachPath(t, func(t *testing.T, _ *kernelSet) {
		rng := rand.New(rand.NewSource(3))
		for _, c := range []int{1, 2, 3, 4, 8, 64, 66} {
			for _, rows := range []int{0, 1, 5, 300} {
				x := make([]float32, rows*c)
				for i := range x {
					x[i] = float32(rng.NormFloat64() * math.Pow(10, float64(rng.Intn(7)-3)))
				}
				want, got := make([]float64, c), make([]float64, c)
				for k := range want {
					want[k] = rng.Float64()
					got[k] = want[k]
				}
				for r := 0; r < rows; r++ {
					for k := 0; k < c; k++ {
						want[k] += float64(x[r*c+k])
					}
				}
				ColSumAdd32(got, x, rows, c)
				for k := range want {
					if math.Float64bits(want[k]) != math.Float64bits(got[k]) {
						t.Fatalf("c=%d rows=%d column %d: %v, want %v", c, rows, k, got[k], want[k])
					}
				}
			}
		}
	})
}
