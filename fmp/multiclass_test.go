package fmp

import (
	"fmt"
	"math"
	"math/rand"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/fairmp/fairmp/graph"
	"github.com/fairmp/fairmp/internal/testutil"
)

// FMP's maths is over c classes: the fairness term acts on the row
// softmax of n × c logits. These tests check c = 3 and c = 5 (the other
// tests mostly use c = 2, on which the kernels take a scalar fast path,
// and c = 3 or 4) against the dense plain-loop FMP (naiveFMP) and its
// central differences.

// classCases are the configurations of the c-class tests: both scalings,
// a binding and a free projection, every training mode that has a
// gradient through the steps, binary, per-group and 3-group attributes.
func classCases() []layerCase {
	var out []layerCase
	i := 0
	for _, dc := range deltaCases {
		for _, mode := range []TrainMode{EndToEnd, ConstantDual} {
			for _, lf := range []float64{0.05, 2} {
				i++
				cfg := Config{LambdaS: []float64{1, 0, 2.5}[i%3], LambdaF: lf, K: 3 + i%2, Scaling: Normalized, Rho: 4,
					Temperature: []float64{0.5, 1}[i%2], TrainMode: mode, PerGroupRows: dc.perGroup}
				if i%4 == 0 {
					cfg.Scaling, cfg.LambdaF = Paper, lf/25
				}
				out = append(out, layerCase{cfg, dc, fmt.Sprintf("%s/%v/λs=%v/λf=%v/K=%d/τ=%v/%v", dc.name, mode, cfg.LambdaS, cfg.LambdaF, cfg.K, cfg.Temperature, cfg.Scaling)})
			}
		}
	}
	return out
}

// TestLayerClassesFiniteDifferences: for c = 3 and 5, float64 and
// float32, the layer's output F^K (fused op and separate nodes) matches
// the dense naive FMP, and its gradient with respect to X_trans matches
// the central differences of the naive FMP (EndToEnd through every step,
// ConstantDual with the duals frozen at their forward values), with the
// tolerances of TestStepsOpFiniteDifferences.
func TestLayerClassesFiniteDifferences(t *testing.T) {
	rng := rand.New(rand.NewSource(57))
	n := 16
	for _, c := range []int{3, 5} {
		mixed := 0 // cases whose projection clips some dual entries and not others
		for _, lc := range classCases() {
			gr := randomGraph(t, rng, n, 30)
			adj := graph.NormalizedAdjacency(gr)
			a := naiveNormAdj(gr)
			sens := randSens(rng, n, lc.dc.groups, 0.15)
			rows, d := naiveDelta(sens, lc.dc.perGroup)
			xv := testutil.RandSlice(rng, n*c, -2, 2)
			wv := testutil.RandSlice(rng, n*c, -1, 1)
			l, err := New(adj, sens, lc.cfg)
			require.NoError(t, err)
			normSq := l.groupContrast().NormSq()
			want, us := naiveFMP(a, xv, n, c, d, rows, lc.cfg, normSq, nil)
			if clipped, free := projected(us, lc.cfg, normSq); clipped > 0 && free > 0 {
				mixed++
			}
			var frozen [][]float64
			if lc.cfg.TrainMode == ConstantDual {
				frozen = us
			}
			xp := append([]float64(nil), xv...)
			num := testutil.NumGrad(func() float64 {
				f, _ := naiveFMP(a, xp, n, c, d, rows, lc.cfg, normSq, frozen)
				return dot(f, wv)
			}, xp, 1e-6)
			for _, dt := range testutil.Dtypes {
				t.Run(fmt.Sprintf("c=%d/%s/%v", c, lc.name, dt), func(t *testing.T) {
					got, dx := runLayer(t, adj, sens, lc.cfg, false, dt, xv, wv, c)
					atol, rtol := 1e-7, 1e-5
					fa, fr := 1e-10, 1e-9
					if dt == tensor.Float32 {
						atol, rtol = 2e-4, 2e-3
						fa, fr = 1e-4, 1e-4
					}
					testutil.AllClose(t, "F^K", got, want, fa, fr)
					testutil.AllClose(t, "d/dX", dx, num, atol, rtol)
				})
			}
		}
		t.Logf("c = %d: %d of %d cases clip some dual entries and leave others free", c, mixed, len(classCases()))
		assert.Positive(t, mixed, "c = %d: no case passes through both branches of the projection", c)
	}
}

// projected counts the dual entries the projection clipped to its radius
// and those it left free.
func projected(us [][]float64, cfg Config, normSq float64) (clipped, free int) {
	radius := cfg.LambdaF
	if cfg.Scaling == Normalized {
		radius = cfg.LambdaF * cfg.Temperature / normSq
	}
	for _, u := range us {
		for _, v := range u {
			if math.Abs(v) == radius {
				clipped++
			} else {
				free++
			}
		}
	}
	return clipped, free
}

// TestApplyClasses: Layer.Apply, the graph-free evaluation pass, is
// Forward's output bit for bit and the naive FMP's for c = 3 and 5.
func TestApplyClasses(t *testing.T) {
	rng := rand.New(rand.NewSource(59))
	n := 20
	for _, c := range []int{3, 5} {
		for _, lc := range classCases() {
			gr := randomGraph(t, rng, n, 40)
			adj := graph.NormalizedAdjacency(gr)
			a := naiveNormAdj(gr)
			sens := randSens(rng, n, lc.dc.groups, 0.15)
			rows, d := naiveDelta(sens, lc.dc.perGroup)
			xv := testutil.RandSlice(rng, n*c, -2, 2)
			for _, dt := range testutil.Dtypes {
				t.Run(fmt.Sprintf("c=%d/%s/%v", c, lc.name, dt), func(t *testing.T) {
					l, err := New(adj, sens, lc.cfg)
					require.NoError(t, err)
					l.SetPhase(nil)
					got, err := l.Apply(testutil.Tensor(dt, xv, n, c))
					require.NoError(t, err)
					g := G.NewGraph()
					x := G.NewMatrix(g, dt, G.WithShape(n, c), G.WithName("X"), G.WithValue(testutil.Tensor(dt, xv, n, c)))
					out, err := l.Forward(x)
					require.NoError(t, err)
					var fv G.Value
					G.Read(out, &fv)
					testutil.Run(t, g)
					assert.Equal(t, fv.Data(), got.Data(), "Apply differs from Forward")
					want, _ := naiveFMP(a, xv, n, c, d, rows, lc.cfg, l.groupContrast().NormSq(), nil)
					atol, rtol := testutil.Tol(dt)
					testutil.AllClose(t, "Apply vs naive", testutil.ToF64(got), want, atol, rtol)
				})
			}
		}
	}
}
