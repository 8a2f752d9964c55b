package layers

import (
	"math"
	"math/rand"
	"testing"

	"github.com/fairmp/fairmp/internal/spkern"
	"github.com/fairmp/fairmp/internal/testutil"
	"gorgonia.org/tensor"
)

// TestGATKernelPathMatchesFloat64 covers the assembly path of the GAT
// aggregation and its two gradients (float32, 4 concatenated heads of 16
// features): output and every parameter gradient must agree with the
// float64 layer, which runs the plain Go loops.
func TestGATKernelPathMatchesFloat64(t *testing.T) {
	if !spkern.Enabled() {
		t.Skip("no AVX2/FMA: the kernel path is not used")
	}
	rng := rand.New(rand.NewSource(8))
	n, in := 2500, 7
	gr := gatTestGraph(t, rng, n, 10000, 10)
	xv := testutil.RandSlice(rng, n*in, -1, 1)
	c := gatCase{heads: 4, out: 16, concat: true, selfLoops: true, bias: true, slope: 0.2}
	cfg := c.config(in, tensor.Float64, 6)
	rv := testutil.RandSlice(rng, n*cfg.outWidth(), -1, 1)
	o64, g64 := gatRunLayer(t, gr, cfg, xv, rv)
	cfg.Dtype = tensor.Float32
	o32, g32 := gatRunLayer(t, gr, cfg, xv, rv)
	testutil.AllClose(t, "out", o32, o64, 1e-5, 1e-4)
	for k := range g64 {
		atol := 1e-5 * math.Sqrt(float64(n))
		testutil.AllClose(t, "grad", g32[k], g64[k], atol, 1e-4)
	}
}
