package fairtrain

import (
	"math"
	"math/rand"
	"testing"

	"github.com/fairmp/fairmp/internal/testutil"
	"github.com/fairmp/fairmp/layers"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// gradTol is the tolerance of a gradient against central differences.
func gradTol(dt tensor.Dtype) float64 {
	if dt == tensor.Float32 {
		return 1e-5
	}
	return 1e-7
}

func TestBCEWithLogitsSoftHand(t *testing.T) {
	// Two logits 0 and ln 3 (σ = 1/2, 3/4), targets 0.5 and 1:
	// softplus(0) − 0.5·0 = ln 2; softplus(ln 3) − ln 3 = ln(4/3).
	a := []float64{0, math.Log(3)}
	y := []float64{0.5, 1}
	want := (math.Log(2) + math.Log(4.0/3)) / 2
	wantGrad := []float64{(0.5 - 0.5) / 2, (0.75 - 1) / 2}
	for _, dt := range testutil.Dtypes {
		v, gr := scalarGrad(t, dt, a, 2, 1, func(z *G.Node) (*G.Node, error) { return bceWithLogitsSoft(z, y) })
		atol, rtol := testutil.Tol(dt)
		assert.True(t, testutil.Close(v, want, atol, rtol), "%v: %v, want %v", dt, v, want)
		testutil.AllClose(t, dt.String()+" gradient", gr, wantGrad, atol, rtol)
	}
	g := G.NewGraph()
	z := G.NewMatrix(g, tensor.Float64, G.WithShape(2, 1), G.WithName("z"))
	_, err := bceWithLogitsSoft(z, []float64{0.5, 1.5})
	assert.ErrorContains(t, err, "target 1 is 1.5")
	_, err = bceWithLogitsSoft(z, []float64{0.5})
	assert.ErrorContains(t, err, "want a float 1 × 1 matrix")
}

// naiveCov is |Cov(s, softmax(z)[pos])| computed plainly.
func naiveCov(z []float64, c int, s []float64, pos int) float64 {
	n := len(s)
	p := make([]float64, n)
	ms, mp := 0.0, 0.0
	for i := range s {
		p[i] = softmax(z[i*c : (i+1)*c])[pos]
		ms += s[i]
		mp += p[i]
	}
	ms /= float64(n)
	mp /= float64(n)
	cv := 0.0
	for i := range s {
		cv += (s[i] - ms) * (p[i] - mp)
	}
	return math.Abs(cv / float64(n))
}

func TestCovarianceHand(t *testing.T) {
	// Logit rows (0, 0) and (0, ln 3): p = 1/2 and 3/4; s = 0 and 1:
	// Cov = ((−1/2)(−1/8) + (1/2)(1/8))/2 = 1/16.
	z := []float64{0, 0, 0, math.Log(3)}
	s := []float64{0, 1}
	for _, dt := range testutil.Dtypes {
		v, gr := scalarGrad(t, dt, z, 2, 2, func(x *G.Node) (*G.Node, error) { return covariance(x, s, 1) })
		atol, rtol := testutil.Tol(dt)
		assert.True(t, testutil.Close(v, 1.0/16, atol, rtol), "%v: %v", dt, v)
		// ∂/∂p_i = (s_i − 1/2)/2; ∂p/∂z = p(1−p)·(−1, +1).
		want := []float64{0.25 * 0.25, -0.25 * 0.25, -0.25 * 0.1875, 0.25 * 0.1875}
		testutil.AllClose(t, dt.String()+" gradient", gr, want, atol, rtol)
	}
}

func TestCovarianceGradient(t *testing.T) {
	rng := rand.New(rand.NewSource(2))
	n, c := 12, 3
	zv := testutil.RandSlice(rng, n*c, -2, 2)
	s := testutil.RandSlice(rng, n, 0, 1)
	for _, pos := range []int{0, 2} {
		want := naiveCov(zv, c, s, pos)
		num := testutil.NumGrad(func() float64 { return naiveCov(zv, c, s, pos) }, zv, 1e-6)
		for _, dt := range testutil.Dtypes {
			v, gr := scalarGrad(t, dt, zv, n, c, func(z *G.Node) (*G.Node, error) { return covariance(z, s, pos) })
			atol, rtol := testutil.Tol(dt)
			assert.True(t, testutil.Close(v, want, atol, rtol), "%v: %v, want %v", dt, v, want)
			testutil.AllClose(t, dt.String()+" gradient", gr, num, gradTol(dt), 1e-4)
		}
	}
	g := G.NewGraph()
	z := G.NewMatrix(g, tensor.Float64, G.WithShape(2, 2), G.WithName("z"))
	_, err := covariance(z, []float64{0}, 1)
	assert.ErrorContains(t, err, "1 scores for 2 rows")
	_, err = covariance(z, []float64{0, math.NaN()}, 1)
	assert.ErrorContains(t, err, "score 1 is NaN")
	_, err = covariance(z, []float64{0, 1}, 2)
	assert.ErrorContains(t, err, "positive class 2")
}

// naiveNegCos is −mean cos between rows.
func naiveNegCos(a, b []float64, k int) float64 {
	m := len(a) / k
	s := 0.0
	for i := 0; i < m; i++ {
		dot, na, nb := 0.0, 0.0, 0.0
		for j := 0; j < k; j++ {
			x, y := a[i*k+j], b[i*k+j]
			dot, na, nb = dot+x*y, na+x*x, nb+y*y
		}
		s += dot / (math.Max(math.Sqrt(na), 1e-8) * math.Max(math.Sqrt(nb), 1e-8))
	}
	return -s / float64(m)
}

func TestNegCosine(t *testing.T) {
	// Hand: rows (1, 0)·(1, 1) → cos 1/√2; (0, 2)·(0, −3) → −1.
	a := []float64{1, 0, 0, 2}
	b := []float64{1, 1, 0, -3}
	want := -(1/math.Sqrt2 - 1) / 2
	rng := rand.New(rand.NewSource(3))
	ra, rb := testutil.RandSlice(rng, 15, -1, 1), testutil.RandSlice(rng, 15, -1, 1)
	for _, dt := range testutil.Dtypes {
		atol, rtol := testutil.Tol(dt)
		for _, tc := range []struct {
			a, b []float64
			m, k int
		}{{a, b, 2, 2}, {ra, rb, 5, 3}} {
			g := G.NewGraph()
			an := G.NewMatrix(g, dt, G.WithShape(tc.m, tc.k), G.WithName("a"), G.WithValue(testutil.Tensor(dt, tc.a, tc.m, tc.k)))
			bn := G.NewMatrix(g, dt, G.WithShape(tc.m, tc.k), G.WithName("b"), G.WithValue(testutil.Tensor(dt, tc.b, tc.m, tc.k)))
			out, err := negCosine(an, bn)
			require.NoError(t, err)
			var v G.Value
			G.Read(out, &v)
			grads, err := G.Grad(out, an, bn)
			require.NoError(t, err)
			testutil.Run(t, g)
			w := naiveNegCos(tc.a, tc.b, tc.k)
			assert.True(t, testutil.Close(testutil.ToF64(v)[0], w, atol, rtol))
			numA := testutil.NumGrad(func() float64 { return naiveNegCos(tc.a, tc.b, tc.k) }, tc.a, 1e-6)
			numB := testutil.NumGrad(func() float64 { return naiveNegCos(tc.a, tc.b, tc.k) }, tc.b, 1e-6)
			testutil.AllClose(t, dt.String()+" ∂a", testutil.ToF64(grads[0].Value()), numA, gradTol(dt), 1e-4)
			testutil.AllClose(t, dt.String()+" ∂b", testutil.ToF64(grads[1].Value()), numB, gradTol(dt), 1e-4)
		}
	}
	assert.InDelta(t, want, naiveNegCos(a, b, 2), 1e-15)
}

func TestStopGradientAndPhaseSelect(t *testing.T) {
	for _, dt := range testutil.Dtypes {
		ph := layers.NewPhase()
		g := G.NewGraph()
		a := G.NewMatrix(g, dt, G.WithShape(1, 2), G.WithName("a"), G.WithValue(testutil.Tensor(dt, []float64{1, 2}, 1, 2)))
		b := G.NewMatrix(g, dt, G.WithShape(1, 2), G.WithName("b"), G.WithValue(testutil.Tensor(dt, []float64{3, 5}, 1, 2)))
		sb, err := stopGradient(b)
		require.NoError(t, err)
		sel, err := phaseSelect(ph, a, sb)
		require.NoError(t, err)
		sum, err := G.Sum(sel)
		require.NoError(t, err)
		var v G.Value
		G.Read(sum, &v)
		grads, err := G.Grad(sum, a, b)
		require.NoError(t, err)
		m := G.NewTapeMachine(g)
		require.NoError(t, m.RunAll())
		assert.Equal(t, 3.0, testutil.ToF64(v)[0], "evaluation reads a")
		assert.Equal(t, []float64{1, 1}, testutil.ToF64(grads[0].Value()))
		assert.Equal(t, []float64{0, 0}, testutil.ToF64(grads[1].Value()))
		m.Reset()
		ph.SetTraining(true)
		require.NoError(t, m.RunAll())
		assert.Equal(t, 8.0, testutil.ToF64(v)[0], "training reads b")
		assert.Equal(t, []float64{0, 0}, testutil.ToF64(grads[0].Value()))
		assert.Equal(t, []float64{0, 0}, testutil.ToF64(grads[1].Value()), "b's gradient is stopped")
		m.Close()
	}
}
