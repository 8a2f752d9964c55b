package fmp

import (
	"math/rand"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/fairmp/fairmp/graph"
	"github.com/fairmp/fairmp/internal/testutil"
)

// TestApplyIsForward: Layer.Apply, the graph-free evaluation pass, gives
// bit for bit the output of the gorgonia Forward, and matches the naive
// dense implementation, on every layer case (both scalings, λs 0 and > 0,
// binding and non-binding λf, K 1 and 3, τ, binary, per-group and
// 3-group attributes) plus λf = 0, in float64 and float32.
func TestApplyIsForward(t *testing.T) {
	rng := rand.New(rand.NewSource(31))
	n, c := 14, 3
	cases := layerCases()
	for _, dc := range deltaCases {
		cfg := DefaultConfig()
		cfg.LambdaF, cfg.PerGroupRows = 0, dc.perGroup
		cases = append(cases, layerCase{cfg, dc, dc.name + "/λf=0"})
	}
	for _, lc := range cases {
		gr := randomGraph(t, rng, n, 25)
		adj := graph.NormalizedAdjacency(gr)
		a := naiveNormAdj(gr)
		sens := randSens(rng, n, lc.dc.groups, 0.15)
		rows, d := naiveDelta(sens, lc.dc.perGroup)
		xv := testutil.RandSlice(rng, n*c, -2, 2)
		for _, dt := range testutil.Dtypes {
			t.Run(lc.name+"/"+dt.String(), func(t *testing.T) {
				l, err := New(adj, sens, lc.cfg)
				require.NoError(t, err)
				l.SetPhase(nil)
				xt := testutil.Tensor(dt, xv, n, c)
				got, err := l.Apply(xt)
				require.NoError(t, err)
				assert.Equal(t, testutil.ToF64(testutil.Tensor(dt, xv, n, c)), testutil.ToF64(xt), "Apply modified its input")

				g := G.NewGraph()
				x := G.NewMatrix(g, dt, G.WithShape(n, c), G.WithName("X"), G.WithValue(xt))
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

func TestApplyErrors(t *testing.T) {
	rng := rand.New(rand.NewSource(32))
	gr := randomGraph(t, rng, 10, 15)
	l, err := New(graph.NormalizedAdjacency(gr), randSens(rng, 10, 2, 0), DefaultConfig())
	require.NoError(t, err)
	_, err = l.Apply(nil)
	assert.ErrorContains(t, err, "nil input")
	_, err = l.Apply(tensor.New(tensor.WithShape(9, 2), tensor.Of(tensor.Float64)))
	assert.ErrorContains(t, err, "want (10, c) with c ≥ 2")
	_, err = l.Apply(tensor.New(tensor.WithShape(10, 1), tensor.Of(tensor.Float64)))
	assert.ErrorContains(t, err, "want (10, c) with c ≥ 2")
	_, err = l.Apply(tensor.New(tensor.WithShape(10, 2), tensor.Of(tensor.Int)))
	assert.Error(t, err)
}
