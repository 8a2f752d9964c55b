package preprocess

import (
	"context"
	"errors"
	"math"
	"math/rand"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gorgonia.org/tensor"

	"github.com/fairmp/fairmp/graph"
	"github.com/fairmp/fairmp/internal/testutil"
	"github.com/fairmp/fairmp/layers/fairness"
)

func TestWasserstein1HandValues(t *testing.T) {
	for _, c := range []struct {
		a, b []float64
		want float64
	}{
		{[]float64{0, 1}, []float64{1, 0}, 0},
		{[]float64{0}, []float64{1}, 1},
		{[]float64{0, 2}, []float64{1}, 1},
		{[]float64{0, 1, 3}, []float64{5}, 11.0 / 3},
		{[]float64{0, 0, 1, 1}, []float64{0, 1}, 0},
		{[]float64{-1, 1}, []float64{0, 0, 0}, 1},
	} {
		got, err := Wasserstein1(c.a, c.b)
		require.NoError(t, err)
		assert.InDelta(t, c.want, got, 1e-12, "%v vs %v", c.a, c.b)
		back, _ := Wasserstein1(c.b, c.a)
		assert.InDelta(t, got, back, 1e-12, "symmetric")
	}
	_, err := Wasserstein1(nil, []float64{1})
	assert.Error(t, err)
	_, err = Wasserstein1([]float64{math.NaN()}, []float64{1})
	assert.Error(t, err)
}

// pair is the two-node graph with one edge.
func pair(t *testing.T) *graph.Graph {
	g, err := graph.FromEdges(2, [][2]int{{0, 1}})
	require.NoError(t, err)
	return g
}

// TestBiasHandValues: two nodes joined by an edge, group 0 and group 1.
// deg = 2, Â = [[½ ½] [½ ½]], P = ½Â + ½I = [[¾ ¼] [¼ ¾]]. Column 0
// (3, 4) scales to (0.6, 0.8): b_attr = 0.2; P x = (0.65, 0.75),
// P² x = (0.675, 0.725), R = P x + 0.9 P² x = (1.2575, 1.4025):
// 0.145. Column 1 is zero: 0 both. Means: 0.1 and 0.0725.
func TestBiasHandValues(t *testing.T) {
	b, err := Bias(pair(t), []float64{3, 0, 4, 0}, 2, []int{0, 1}, DefaultBiasConfig())
	require.NoError(t, err)
	assert.InDeltaSlice(t, []float64{0.2, 0}, b.AttributeColumns, 1e-12)
	assert.InDeltaSlice(t, []float64{0.145, 0}, b.StructuralColumns, 1e-12)
	assert.InDelta(t, 0.1, b.Attribute, 1e-12)
	assert.InDelta(t, 0.0725, b.Structural, 1e-12)
	// The authors' code: P x at each hop, Betas [1.9].
	c := DefaultBiasConfig()
	c.Betas = []float64{1.9}
	b, err = Bias(pair(t), []float64{3, 0, 4, 0}, 2, []int{0, 1}, c)
	require.NoError(t, err)
	assert.InDelta(t, 1.9*0.1, b.StructuralColumns[0], 1e-12)
	// Unknown groups are left out; a third group is refused.
	b, err = Bias(pair(t), []float64{3, 0, 4, 0}, 2, []int{0, -1}, DefaultBiasConfig())
	assert.Error(t, err, "group 1 has no known node")
	_, err = Bias(pair(t), []float64{3, 0, 4, 0}, 2, []int{0, 2}, DefaultBiasConfig())
	assert.ErrorContains(t, err, "group 2")
}

// naiveDistance is D computed with dense matrices, independently of
// editsModel: P = α S (W + I) S + (1 − α) I, deg = 1 + rowsum(W),
// D = Σ_h cᵀ P^h X̃ a_h.
func naiveDistance(n, d, hops int, alpha float64, pu, pv []int32, w, xn, c, theta, a []float64) float64 {
	W := make([]float64, n*n)
	for p := range w {
		W[int(pu[p])*n+int(pv[p])] = w[p]
		W[int(pv[p])*n+int(pu[p])] = w[p]
	}
	deg := make([]float64, n)
	for i := 0; i < n; i++ {
		deg[i] = 1
		for j := 0; j < n; j++ {
			deg[i] += W[i*n+j]
		}
	}
	P := make([]float64, n*n)
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			v := W[i*n+j]
			if i == j {
				v++
			}
			P[i*n+j] = alpha * v / math.Sqrt(deg[i]*deg[j])
			if i == j {
				P[i*n+j] += 1 - alpha
			}
		}
	}
	H := make([]float64, n*d)
	for i := 0; i < n; i++ {
		for j := 0; j < d; j++ {
			H[i*d+j] = xn[i*d+j] * theta[j]
		}
	}
	var D float64
	for h := 0; h <= hops; h++ {
		if h > 0 {
			next := make([]float64, n*d)
			for i := 0; i < n; i++ {
				for k := 0; k < n; k++ {
					for j := 0; j < d; j++ {
						next[i*d+j] += P[i*n+k] * H[k*d+j]
					}
				}
			}
			H = next
		}
		for i := 0; i < n; i++ {
			for j := 0; j < d; j++ {
				D += c[i] * H[i*d+j] * a[h*d+j]
			}
		}
	}
	return D
}

// toy is a 7-node graph with a triangle, a path and a pendant, groups and
// features.
func toy(t *testing.T) (*graph.Graph, []float64, int, []int) {
	g, err := graph.FromEdges(7, [][2]int{{0, 1}, {1, 2}, {0, 2}, {2, 3}, {3, 4}, {4, 5}, {5, 6}, {1, 5}})
	require.NoError(t, err)
	rng := rand.New(rand.NewSource(5))
	d := 3
	x := testutil.RandSlice(rng, 7*d, -1, 1)
	return g, x, d, []int{0, 1, 0, -1, 1, 1, 0}
}

func TestEDITSHandDistance(t *testing.T) {
	// The two-node graph, hops 1, θ = 1, a = (0.02, 0.01), c = (1, −1):
	// D = (0.6 − 0.8)·0.02 + (0.65 − 0.75)·0.01 = −0.005.
	for _, dt := range testutil.Dtypes {
		check := func(m interface{ dist() float64 }) {
			atol, rtol := testutil.Tol(dt)
			assert.True(t, testutil.Close(m.dist(), -0.005, atol, rtol), "%v: D = %v, want −0.005", dt, m.dist())
		}
		if dt == tensor.Float32 {
			m := newEditsModel[float32](newWGraph[float32](pair(t), nil), []float64{3, 4}, 1, []int{0, 1}, 1, 0.5)
			m.a[0], m.a[1] = 0.02, 0.01
			m.refresh()
			check(distOf[float32]{m})
		} else {
			m := newEditsModel[float64](newWGraph[float64](pair(t), nil), []float64{3, 4}, 1, []int{0, 1}, 1, 0.5)
			m.a[0], m.a[1] = 0.02, 0.01
			m.refresh()
			check(distOf[float64]{m})
		}
	}
}

type distOf[T float] struct{ m *editsModel[T] }

func (d distOf[T]) dist() float64 { return float64(d.m.distance()) }

func toF64[T float](s []T) []float64 {
	out := make([]float64, len(s))
	for i, v := range s {
		out[i] = float64(v)
	}
	return out
}

// checkGradients compares editsModel's gradients, computed in T, with
// central differences of naiveDistance in float64, at random θ, w and
// critic, for every hop count up to 3.
func checkGradients[T float](t *testing.T, gtol float64) {
	g, x, d, sens := toy(t)
	for hops := 1; hops <= 3; hops++ {
		wg := newWGraph[T](g, candidates(g, 2, 3))
		require.Greater(t, len(wg.pu), wg.edges, "some candidates")
		m := newEditsModel[T](wg, x, d, sens, hops, 0.5)
		rng := rand.New(rand.NewSource(int64(hops)))
		theta := testutil.RandSlice(rng, d, 0.2, 0.9)
		w := testutil.RandSlice(rng, len(m.w), 0.1, 0.9)
		a := testutil.RandSlice(rng, len(m.a), -0.5, 0.5)
		for j := range theta {
			m.theta[j] = T(theta[j])
		}
		for p := range w {
			m.w[p] = T(w[p])
		}
		for k := range a {
			m.a[k] = T(a[k])
		}
		m.refresh()
		xn, c := toF64(m.xn), toF64(m.c)
		f := func() float64 { return naiveDistance(7, d, hops, 0.5, wg.pu, wg.pv, w, xn, c, theta, a) }
		atol, rtol := testutil.Tol(tensor.Float64)
		if gtol > 1e-6 {
			atol, rtol = testutil.Tol(tensor.Float32)
		}
		assert.True(t, testutil.Close(float64(m.distance()), f(), atol, rtol), "hops %d: D %v, naive %v", hops, m.distance(), f())
		gt, gw, ga := make([]T, d), make([]T, len(w)), make([]T, len(a))
		m.gradTheta(gt)
		m.gradW(gw)
		m.gradCritic(ga)
		testutil.AllClose(t, "∂D/∂θ", toF64(gt), testutil.NumGrad(f, theta, 1e-6), gtol, 1e-4)
		testutil.AllClose(t, "∂D/∂w", toF64(gw), testutil.NumGrad(f, w, 1e-6), gtol, 1e-4)
		testutil.AllClose(t, "∂D/∂a", toF64(ga), testutil.NumGrad(f, a, 1e-6), gtol, 1e-4)
		// The keep terms.
		keepT := func() float64 {
			var s float64
			for j := range theta {
				s += toF64(m.nrm2)[j] * (theta[j] - 1) * (theta[j] - 1)
			}
			return s
		}
		keepW := func() float64 {
			var s float64
			for p := range w {
				s += (w[p] - float64(m.start[p])) * (w[p] - float64(m.start[p]))
			}
			return s
		}
		clear(gt)
		clear(gw)
		assert.True(t, testutil.Close(float64(m.keepTheta(gt, 1)), keepT(), atol, rtol))
		assert.True(t, testutil.Close(float64(m.keepW(gw, 1)), keepW(), atol, rtol))
		testutil.AllClose(t, "keep θ", toF64(gt), testutil.NumGrad(keepT, theta, 1e-6), gtol, 1e-4)
		testutil.AllClose(t, "keep w", toF64(gw), testutil.NumGrad(keepW, w, 1e-6), gtol, 1e-4)
	}
}

func TestEDITSGradientsFiniteDifferences(t *testing.T) {
	t.Run("float64", func(t *testing.T) { checkGradients[float64](t, 1e-7) })
	t.Run("float32", func(t *testing.T) { checkGradients[float32](t, 2e-5) })
}

func TestCandidatesTwoHopsAndBounded(t *testing.T) {
	g, _, _, _ := toy(t)
	c := candidates(g, 2, 7)
	require.NotEmpty(t, c)
	assert.LessOrEqual(t, len(c), 2*g.N())
	for _, p := range c {
		u, v := int(p[0]), int(p[1])
		assert.Less(t, u, v)
		_, adj := slices.BinarySearch(g.Neighbors(u), int32(v))
		assert.False(t, adj, "(%d, %d) is an edge", u, v)
		common := false
		for _, k := range g.Neighbors(u) {
			if _, ok := slices.BinarySearch(g.Neighbors(int(k)), int32(v)); ok {
				common = true
			}
		}
		assert.True(t, common, "(%d, %d) are not two hops apart", u, v)
	}
	assert.Equal(t, c, candidates(g, 2, 7), "seeded")
	assert.Nil(t, candidates(g, 0, 7))
}

// biased is a graph of two groups, each mostly linked within itself,
// whose first column is the group plus noise and the others noise.
func biased(t *testing.T) (*graph.Graph, []float64, int, []int) {
	rng := rand.New(rand.NewSource(11))
	n, d := 60, 4
	sens := make([]int, n)
	x := make([]float64, n*d)
	for i := range sens {
		sens[i] = i % 2
		x[i*d] = float64(sens[i]) + 0.3*rng.NormFloat64()
		for j := 1; j < d; j++ {
			x[i*d+j] = rng.NormFloat64()
		}
	}
	var edges [][2]int
	for len(edges) < 240 {
		u, v := rng.Intn(n), rng.Intn(n)
		if sens[u] == sens[v] || rng.Float64() < 0.1 {
			edges = append(edges, [2]int{u, v})
		}
	}
	g, err := graph.FromEdges(n, edges)
	require.NoError(t, err)
	return g, x, d, sens
}

func TestEDITSDebiases(t *testing.T) {
	g, x, d, sens := biased(t)
	x0, s0 := slices.Clone(x), slices.Clone(sens)
	before, err := Bias(g, x, d, sens, DefaultBiasConfig())
	require.NoError(t, err)
	for _, dt := range testutil.Dtypes {
		c := DefaultEDITSConfig()
		c.Mask, c.Dtype, c.Epochs = 1, dt, 60
		out, err := c.Debias(context.Background(), g, x, d, sens)
		require.NoError(t, err)
		assert.Equal(t, x0, x, "input features unchanged")
		assert.Equal(t, s0, sens)
		assert.Equal(t, []int{0}, out.Masked, "%v: the biased column is masked (θ %v)", dt, out.Weights)
		for i := 0; i < g.N(); i++ {
			assert.Zero(t, out.Features[i*d])
			assert.Equal(t, x[i*d+1:i*d+d], out.Features[i*d+1:i*d+d])
		}
		assert.Len(t, out.Trace, 60)
		assert.Equal(t, g.NumEdges()-out.Removed+out.Added, out.Graph.NumEdges())
		after, err := Bias(out.Graph, out.Features, d, sens, DefaultBiasConfig())
		require.NoError(t, err)
		assert.Less(t, after.Attribute, before.Attribute)
		assert.Less(t, after.Structural, before.Structural)
		t.Logf("%v: b_attr %.4f → %.4f, b_stru %.4f → %.4f, edges +%d −%d of %d, θ %.4f",
			dt, before.Attribute, after.Attribute, before.Structural, after.Structural, out.Added, out.Removed, g.NumEdges(), out.Weights)
		// Reruns are bit-identical.
		again, err := c.Debias(context.Background(), g, x, d, sens)
		require.NoError(t, err)
		assert.Equal(t, out.Weights, again.Weights)
		assert.Equal(t, out.Trace, again.Trace)
		assert.Equal(t, out.Graph.Edges(), again.Graph.Edges())
		assert.Equal(t, out.Features, again.Features)
	}
}

func TestEDITSErrors(t *testing.T) {
	g, x, d, sens := toy(t)
	c := DefaultEDITSConfig()
	c.Mask = 1
	for name, f := range map[string]func() error{
		"mask all":    func() error { c := c; c.Mask = d; _, err := c.Debias(context.Background(), g, x, d, sens); return err },
		"shape":       func() error { _, err := c.Debias(context.Background(), g, x[1:], d, sens); return err },
		"sens length": func() error { _, err := c.Debias(context.Background(), g, x, d, sens[1:]); return err },
		"three groups": func() error {
			s := slices.Clone(sens)
			s[0] = 2
			_, err := c.Debias(context.Background(), g, x, d, s)
			return err
		},
		"one group": func() error {
			_, err := c.Debias(context.Background(), g, x, d, []int{0, 0, 0, -1, 0, 0, 0})
			return err
		},
		"nan": func() error {
			y := slices.Clone(x)
			y[4] = math.NaN()
			_, err := c.Debias(context.Background(), g, y, d, sens)
			return err
		},
		"nil graph": func() error { _, err := c.Debias(context.Background(), nil, x, d, sens); return err },
		"dtype":     func() error { c := c; c.Dtype = tensor.Int; return c.Validate() },
		"epochs":    func() error { c := c; c.Epochs = 0; return c.Validate() },
		"threshold": func() error { c := c; c.Threshold = 2; return c.Validate() },
		"negative":  func() error { c := c; c.StructKeep = -1; return c.Validate() },
	} {
		assert.Error(t, f(), name)
	}
	require.NoError(t, DefaultEDITSConfig().Validate())
}

func TestRegistered(t *testing.T) {
	assert.Equal(t, []string{"edits"}, fairness.Names(fairness.StagePre))
	m, err := fairness.Lookup("edits")
	require.NoError(t, err)
	assert.Equal(t, int64(9), fairness.WithSeed(m, 9).(EDITSConfig).Seed)
	st, err := fairness.StageOf(m)
	require.NoError(t, err)
	assert.Equal(t, fairness.StagePre, st)
}

// TestEDITSCancel: a cancelled context stops EDITS before its first
// epoch with an error wrapping context.Canceled.
func TestEDITSCancel(t *testing.T) {
	g, x, d, sens := toy(t)
	done, cancel := context.WithCancel(context.Background())
	cancel()
	c := DefaultEDITSConfig()
	c.Mask = 1
	_, err := c.Debias(done, g, x, d, sens)
	assert.True(t, errors.Is(err, context.Canceled), "%v", err)
	assert.ErrorContains(t, err, "before epoch 1")
}
