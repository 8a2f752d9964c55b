package fmp

import (
	"math"
	"math/rand"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gorgonia.org/tensor"

	"github.com/fairmp/fairmp/graph"
	"github.com/fairmp/fairmp/internal/opkit"
	"github.com/fairmp/fairmp/internal/testutil"
	"github.com/fairmp/fairmp/layers"
)

// The two-class paths of the binary attribute (rows == 1, c == 2: the
// loop's passA2 and passB2, the backward's back2, gapParts2) must give the
// general paths' bits. The general path is reached with a second row of
// Δs that is zero everywhere: it adds nothing to any expression (a zero Δs
// entry is skipped), and the first row's results are the binary ones.
func TestTwoClassPathsBitIdentical(t *testing.T) {
	t.Run("float64", func(t *testing.T) { twoClassBitIdentical[float64](t, tensor.Float64) })
	t.Run("float32", func(t *testing.T) { twoClassBitIdentical[float32](t, tensor.Float32) })
}

func twoClassBitIdentical[T float32 | float64](t *testing.T, dt tensor.Dtype) {
	rng := rand.New(rand.NewSource(7))
	const n = 5000 // more than two row blocks
	special := []float64{0, math.Copysign(0, -1), 1e-300, -1e-30, 40, -40, 1e3}
	val := func() float64 {
		if rng.Intn(50) == 0 {
			return special[rng.Intn(len(special))]
		}
		return rng.NormFloat64() * 3
	}
	xv, wv := make([]float64, 2*n), make([]float64, 2*n)
	for i := range xv {
		xv[i], wv[i] = val(), val()
	}
	sens := randSens(rng, n, 2, 0.25)
	ds1 := mustDelta(t, sens, false)
	ds2 := *ds1
	ds2.rows, ds2.id = 2, deltaIDs.Add(1)
	ds2.d64 = append(append([]float64{}, ds1.d64...), make([]float64, n)...)
	adj := graph.NormalizedAdjacency(randomGraph(t, rng, n, 3*n))
	for _, mode := range []string{"EndToEnd", "ConstantDual", "InferenceOnly-train", "InferenceOnly-eval"} {
		for _, lambdaS := range []float64{0, 1} {
			cfg := DefaultConfig()
			cfg.K, cfg.LambdaS = 4, lambdaS
			cfg.TrainMode = map[string]TrainMode{"EndToEnd": EndToEnd, "ConstantDual": ConstantDual}[mode]
			if mode[0] == 'I' {
				cfg.TrainMode = InferenceOnly
			}
			ph := layers.NewPhase()
			ph.SetTraining(mode == "InferenceOnly-train")
			run := func(ds *deltaS) (f, dx []T) {
				l := newChecked(adj, sens, ds, cfg)
				op := newStepsOp(l, cfg.TrainMode != EndToEnd, ph)
				back := opkit.New(stepsBackSpec, stepsBack{fwd: op.P, at: adj.Transpose()})
				x := testutil.Tensor(dt, xv, n, 2)
				fv, err := op.Do(x)
				require.NoError(t, err)
				dv, err := back.Do(x, testutil.Tensor(dt, wv, n, 2))
				require.NoError(t, err)
				return fv.Data().([]T), dv.Data().([]T)
			}
			f1, d1 := run(ds1)
			f2, d2 := run(&ds2)
			requireSameBits(t, f2, f1, "F^K %s λs=%v", mode, lambdaS)
			requireSameBits(t, d2, d1, "dX %s λs=%v", mode, lambdaS)
			assert.NotEqual(t, make([]T, 2*n), f1)
		}
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
