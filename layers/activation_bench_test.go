package layers

import (
	"fmt"
	"math"
	"math/rand"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// BenchmarkActivateReLU measures the ReLU kernel, forward and backward, on
// a hidden layer of the Bail shape (18,876 nodes × 64) and the Pokec-z
// shape (67,796 × 64). MB/s counts the slices read and written once.
func BenchmarkActivateReLU(b *testing.B) {
	for _, n := range []int{18876 * 64, 67796 * 64} {
		rng := rand.New(rand.NewSource(1))
		x, dy, out := make([]float32, n), make([]float32, n), make([]float32, n)
		for i := range x {
			x[i], dy[i] = float32(rng.NormFloat64()), float32(rng.NormFloat64())
		}
		relu := Activation{Kind: ActReLU}
		b.Run(fmt.Sprintf("forward/n=%d", n), func(b *testing.B) {
			b.SetBytes(int64(8 * n))
			for i := 0; i < b.N; i++ {
				activateParallel(relu, out, x, nil)
			}
		})
		b.Run(fmt.Sprintf("backward/n=%d", n), func(b *testing.B) {
			b.SetBytes(int64(12 * n))
			for i := 0; i < b.N; i++ {
				activateParallel(relu, out, x, dy)
			}
		})
	}
}

// TestReLUBackwardBranchless checks the branchless ReLU gradient against
// its definition (dy where x > 0, else 0) on edge values and random ones,
// in float32 and float64.
func TestReLUBackwardBranchless(t *testing.T) {
	edge := []float64{0, math.Copysign(0, -1), 1, -1, math.Inf(1), math.Inf(-1), math.SmallestNonzeroFloat64, -math.SmallestNonzeroFloat64, 1e-40, -1e-40, math.MaxFloat64, -math.MaxFloat64}
	rng := rand.New(rand.NewSource(3))
	for i := 0; i < 1000; i++ {
		edge = append(edge, rng.NormFloat64())
	}
	x64, dy64, out64 := make([]float64, len(edge)), make([]float64, len(edge)), make([]float64, len(edge))
	x32, dy32, out32 := make([]float32, len(edge)), make([]float32, len(edge)), make([]float32, len(edge))
	for i, v := range edge {
		x64[i], dy64[i] = v, rng.NormFloat64()
		x32[i], dy32[i] = float32(v), float32(dy64[i])
	}
	relu := Activation{Kind: ActReLU}
	activate(relu, out64, x64, dy64)
	activate(relu, out32, x32, dy32)
	for i := range edge {
		want64, want32 := 0.0, float32(0)
		if x64[i] > 0 {
			want64 = dy64[i]
		}
		if x32[i] > 0 {
			want32 = dy32[i]
		}
		require.Equal(t, math.Float64bits(want64), math.Float64bits(out64[i]), "float64 x = %v", x64[i])
		require.Equal(t, math.Float32bits(want32), math.Float32bits(out32[i]), "float32 x = %v", x32[i])
	}
	// NaN passes the gradient through when its sign bit is clear.
	activate(relu, out64[:1], []float64{math.NaN()}, []float64{2.5})
	assert.Equal(t, 2.5, out64[0])
}
