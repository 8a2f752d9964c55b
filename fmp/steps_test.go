package fmp

import (
	"math/rand"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gorgonia.org/tensor"

	"github.com/fairmp/fairmp/graph"
	"github.com/fairmp/fairmp/internal/testutil"
)

// stepsApply runs the K steps node by node with s, as an engine that
// holds the nodes apart would (the sums in node order), and returns F^K.
func stepsApply(s *Steps, adj *graph.Matrix, sens []int, x []float64, n, c int) []float64 {
	f := append([]float64(nil), x...)
	af := make([]float64, n*c)
	xagg := make([]float64, n*c)
	fbar := make([]float64, c)
	p := make([]float64, c)
	u := make([]float64, s.Rows()*c)
	for k := 0; k < s.Config().K; k++ {
		adj.MulDense64(af, f, c)
		sums := make([]float64, s.Groups()*c)
		for i := 0; i < n; i++ {
			r := i * c
			s.Aggregate(xagg[r:r+c], x[r:r+c], af[r:r+c])
			s.Descend(fbar, xagg[r:r+c], f[r:r+c], sens[i], u)
			if g := sens[i]; g >= 0 {
				s.Probs(p, fbar)
				for j, v := range p {
					sums[g*c+j] += v
				}
			}
		}
		s.Dual(u, sums)
		for i := 0; i < n; i++ {
			r := i * c
			if i%2 == 0 { // out may be f or xagg
				s.Descend(f[r:r+c], xagg[r:r+c], f[r:r+c], sens[i], u)
			} else {
				s.Descend(xagg[r:r+c], xagg[r:r+c], f[r:r+c], sens[i], u)
				copy(f[r:r+c], xagg[r:r+c])
			}
		}
	}
	return f
}

// TestStepsIsApply: the per-node steps give Layer.Apply's output (up to
// summation order) on every layer case plus λf = 0, and their ‖Δs‖² and
// dual step are the layer's.
func TestStepsIsApply(t *testing.T) {
	rng := rand.New(rand.NewSource(32))
	n, c := 14, 3
	cases := layerCases()
	for _, dc := range deltaCases {
		cfg := DefaultConfig()
		cfg.LambdaF, cfg.PerGroupRows = 0, dc.perGroup
		cases = append(cases, layerCase{cfg, dc, dc.name + "/λf=0"})
	}
	for _, lc := range cases {
		t.Run(lc.name, func(t *testing.T) {
			adj := graph.NormalizedAdjacency(randomGraph(t, rng, n, 25))
			sens := randSens(rng, n, lc.dc.groups, 0.15)
			xv := testutil.RandSlice(rng, n*c, -2, 2)
			l, err := New(adj, sens, lc.cfg)
			require.NoError(t, err)
			want, err := l.Apply(testutil.Tensor(tensor.Float64, xv, n, c))
			require.NoError(t, err)
			s, err := NewSteps(lc.cfg, l.groupContrast().Counts())
			require.NoError(t, err)
			assert.Equal(t, l.groupContrast().Rows(), s.Rows())
			assert.InEpsilon(t, l.groupContrast().NormSq(), s.NormSq(), 1e-14)
			b0, r0 := l.DualStep()
			b1, r1 := s.DualStep()
			assert.InEpsilon(t, b0, b1, 1e-14)
			if r0 == 0 {
				assert.Zero(t, r1)
			} else {
				assert.InEpsilon(t, r0, r1, 1e-14)
			}
			got := stepsApply(s, adj, sens, xv, n, c)
			testutil.AllClose(t, "F^K", got, testutil.ToF64(want), 1e-12, 1e-11)
		})
	}
}

func TestNewStepsErrors(t *testing.T) {
	for name, counts := range map[string][]int{"one group": {3}, "empty group": {2, 0, 4}, "none": nil} {
		_, err := NewSteps(DefaultConfig(), counts)
		assert.Error(t, err, name)
	}
	bad := DefaultConfig()
	bad.K = 0
	_, err := NewSteps(bad, []int{2, 3})
	assert.ErrorContains(t, err, "Config.K")
}
