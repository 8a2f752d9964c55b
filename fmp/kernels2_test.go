package fmp

import (
	"math"
	"math/rand"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The two-class kernels of the binary attribute (rows == 1, c == 2) must
// give the general kernels' bits. The general path is reached with a
// second row of Δs that is zero everywhere: it adds nothing to any
// expression (a zero Δs entry is skipped), and the first row's results
// are the binary ones.
func TestKernels2BitIdentical(t *testing.T) {
	t.Run("float64", func(t *testing.T) { kernels2BitIdentical[float64](t) })
	t.Run("float32", func(t *testing.T) { kernels2BitIdentical[float32](t) })
}

func kernels2BitIdentical[T float32 | float64](t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	const n = 5000 // more than two row blocks
	special := []float64{0, math.Copysign(0, -1), 1e-300, -1e-30, 40, -40, 1e3, math.Inf(1), math.NaN()}
	val := func() float64 {
		if rng.Intn(50) == 0 {
			return special[rng.Intn(len(special))]
		}
		return rng.NormFloat64() * 3
	}
	f, w := make([]T, 2*n), make([]T, 2*n)
	for i := range f {
		f[i], w[i] = T(val()), T(val())
	}
	ds := make([]float64, n)
	for i := range ds {
		switch rng.Intn(4) {
		case 0: // unknown group
		case 1:
			ds[i] = -1.0 / 3000
		default:
			ds[i] = 1.0 / 2000
		}
	}
	ds2 := append(append([]float64{}, ds...), make([]float64, n)...)
	for _, u := range [][]T{{0.3, -0.3}, {0, 0}, {T(math.Copysign(0, -1)), 2}, {1e-20, -5}} {
		u2 := append(append([]T{}, u...), 7, -7)
		for _, cached := range []bool{false, true} {
			var sm []float64
			if cached {
				sm = make([]float64, 2*n)
				for i := 0; i < n; i++ {
					sm[2*i], sm[2*i+1] = softmax2Of(f, i, 2, nil)
				}
			}
			got, want := make([]T, 2*n), make([]T, 2*n)
			gradKernel(ds, 1, n, f, u, got, 2, 0.7, 2, sm)
			gradKernel(ds2, 2, n, f, u2, want, 2, 0.7, 2, sm)
			requireSameBits(t, want, got, "FairGrad u %v cached %v", u, cached)

			gradBackKernel(ds, 1, n, f, u, w, got, 2, 0.7, 2, sm)
			gradBackKernel(ds2, 2, n, f, u2, w, want, 2, 0.7, 2, sm)
			requireSameBits(t, want, got, "FairGradBackF u %v cached %v", u, cached)
		}
	}
	for _, ww := range [][]T{nil, w} {
		got, want := make([]T, 2), make([]T, 4)
		gapKernel(ds, 1, n, f, ww, got, 2, 1.5, 2, nil)
		gapKernel(ds2, 2, n, f, ww, want, 2, 1.5, 2, nil)
		requireSameBits(t, want[:2], got, "GroupGap w %v", ww != nil)
		assert.Equal(t, []T{0, 0}, want[2:], "the zero row's gap")
	}
}

// requireSameBits compares bit for bit; any NaN equals any NaN (the
// payload an operation on NaNs keeps is the compiler's operand order).
func requireSameBits[T float32 | float64](t *testing.T, want, got []T, msg string, args ...any) {
	t.Helper()
	require.Len(t, got, len(want))
	for i := range want {
		a, b := float64(want[i]), float64(got[i])
		if math.IsNaN(a) && math.IsNaN(b) {
			continue
		}
		if math.Float64bits(a) != math.Float64bits(b) {
			require.Failf(t, "bits differ", msg+": entry %d: want %v (%x), got %v (%x)", append(args, i, a, math.Float64bits(a), b, math.Float64bits(b))...)
		}
	}
}
