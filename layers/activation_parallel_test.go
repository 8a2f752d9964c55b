package layers

import (
	"math/rand"
	"runtime"
	"testing"

	"github.com/fairmp/fairmp/internal/par"
)

// TestActivateParallelMatchesSerial checks that the parallel activation
// (large inputs, several workers) is bit-identical to the serial loop, in
// both directions, for every kind.
func TestActivateParallelMatchesSerial(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	rng := rand.New(rand.NewSource(9))
	n := 5*par.Grain + 17
	x := make([]float32, n)
	dy := make([]float32, n)
	for i := range x {
		x[i], dy[i] = float32(rng.NormFloat64()), float32(rng.NormFloat64())
	}
	for _, a := range []Activation{ReLU(), ELU(1.3), LeakyReLU(0.1)} {
		for _, g := range [][]float32{nil, dy} {
			want := make([]float32, n)
			got := make([]float32, n)
			activate(a, want, x, g)
			activateParallel(a, got, x, g)
			for i := range want {
				if got[i] != want[i] {
					t.Fatalf("%v (gradient %v): element %d = %v, serial %v", a, g != nil, i, got[i], want[i])
				}
			}
		}
	}
}
