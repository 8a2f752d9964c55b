package fmp

import (
	"fmt"
	"math"
	"math/rand"
	"testing"

	"github.com/fairmp/fairmp/graph"
	"github.com/fairmp/fairmp/internal/testutil"
	"github.com/fairmp/fairmp/layers"
	"github.com/stretchr/testify/require"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

func randomGraph(t testing.TB, rng *rand.Rand, n, m int) *graph.Graph {
	t.Helper()
	edges := make([][2]int, m)
	for k := range edges {
		edges[k] = [2]int{rng.Intn(n), rng.Intn(n)}
	}
	g, err := graph.FromEdges(n, edges)
	require.NoError(t, err)
	return g
}

// naiveNormAdj builds D̂^-1/2 (A+I) D̂^-1/2 densely from the edge list.
func naiveNormAdj(g *graph.Graph) []float64 {
	n := g.N()
	a := make([]float64, n*n)
	for i := 0; i < n; i++ {
		a[i*n+i] = 1
		for _, j := range g.Neighbors(i) {
			if int(j) != i {
				a[i*n+int(j)] = 1
			}
		}
	}
	deg := make([]float64, n)
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			deg[i] += a[i*n+j]
		}
	}
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			a[i*n+j] /= math.Sqrt(deg[i] * deg[j])
		}
	}
	return a
}

// naiveSoftmaxT is the row softmax of F/τ.
func naiveSoftmaxT(f []float64, n, c int, tau float64) []float64 {
	g := make([]float64, len(f))
	for i, v := range f {
		g[i] = v / tau
	}
	return naiveSoftmax(g, n, c)
}

// naiveGradT is the gradient of ⟨Δs SF(F/τ), u⟩ with respect to F:
// (1/τ)(U ⊙ S − rowsum(U ⊙ S) ⊙ S), S = SF(F/τ), by loops.
func naiveGradT(d []float64, rows int, f, u []float64, n, c int, tau float64) []float64 {
	g := make([]float64, len(f))
	for i, v := range f {
		g[i] = v / tau
	}
	out := naiveGrad(d, rows, g, u, n, c)
	for i := range out {
		out[i] /= tau
	}
	return out
}

// naiveFMP runs Steps 1–5 of the paper K times with dense loops (with
// the fairness term on SF(F/τ), τ = cfg.Temperature). With frozen != nil,
// the duals u^1..u^K are taken from frozen instead of being computed
// (used to check the ConstantDual gradient).
func naiveFMP(a []float64, x []float64, n, c int, d []float64, rows int, cfg Config, normSq float64, frozen [][]float64) (f []float64, us [][]float64) {
	gamma := 1 / (1 + cfg.LambdaS)
	tau := cfg.Temperature
	beta, rad := 1/(2*gamma), cfg.LambdaF
	if cfg.Scaling == Normalized {
		beta, rad = cfg.Rho*tau*tau/(gamma*normSq), cfg.LambdaF*tau/normSq
	}
	f = append([]float64(nil), x...)
	u := make([]float64, rows*c)
	for k := 0; k < cfg.K; k++ {
		xagg := make([]float64, n*c)
		for i := 0; i < n; i++ {
			for j := 0; j < c; j++ {
				s := 0.0
				for m := 0; m < n; m++ {
					s += a[i*n+m] * f[m*c+j]
				}
				xagg[i*c+j] = gamma*x[i*c+j] + (1-gamma)*s
			}
		}
		g2 := naiveGradT(d, rows, f, u, n, c, tau)
		fbar := make([]float64, n*c)
		for i := range fbar {
			fbar[i] = xagg[i] - gamma*g2[i]
		}
		sb := naiveSoftmaxT(fbar, n, c, tau)
		ubar := make([]float64, rows*c)
		for r := 0; r < rows; r++ {
			for j := 0; j < c; j++ {
				gap := 0.0
				for i := 0; i < n; i++ {
					gap += d[r*n+i] * sb[i*c+j]
				}
				ubar[r*c+j] = u[r*c+j] + beta*gap
			}
		}
		u = naiveProj(ubar, rad)
		if frozen != nil {
			u = frozen[k]
		}
		us = append(us, u)
		g5 := naiveGradT(d, rows, f, u, n, c, tau)
		nf := make([]float64, n*c)
		for i := range nf {
			nf[i] = xagg[i] - gamma*g5[i]
		}
		f = nf
	}
	return f, us
}

type layerCase struct {
	cfg  Config
	dc   deltaCase
	name string
}

func layerCases() []layerCase {
	var out []layerCase
	for _, dc := range deltaCases {
		for _, sc := range []Scaling{Paper, Normalized} {
			for _, ls := range []float64{0, 1.5} {
				for _, lf := range []float64{0.05, 3} {
					for _, k := range []int{1, 3} {
						tau := 1.0
						if k == 3 && ls > 0 {
							tau = 0.4 // the temperature, on a subset of the cases
						}
						cfg := Config{LambdaS: ls, LambdaF: lf, K: k, Scaling: sc, Rho: 2.5, Temperature: tau, TrainMode: EndToEnd, PerGroupRows: dc.perGroup}
						out = append(out, layerCase{cfg, dc, fmt.Sprintf("%s/%v/λs=%v/λf=%v/K=%d/τ=%v", dc.name, sc, ls, lf, k, tau)})
					}
				}
			}
		}
	}
	return out
}

// TestLayerMatchesNaive compares the layer's output and final dual with a
// dense plain-loop implementation of Steps 1–5 on small random graphs,
// for both scalings, λs = 0 and > 0, binding and non-binding λf, K = 1
// and 3, binary / binary per-group / 3-group attributes, float64 and
// float32; and the gradient of ⟨W, F^K⟩ with respect to X_trans against
// central differences of the naive implementation (float64).
func TestLayerMatchesNaive(t *testing.T) {
	rng := rand.New(rand.NewSource(11))
	n, c := 14, 3
	for _, lc := range layerCases() {
		gr := randomGraph(t, rng, n, 25)
		adj := graph.NormalizedAdjacency(gr)
		a := naiveNormAdj(gr)
		sens := randSens(rng, n, lc.dc.groups, 0.15)
		rows, d := naiveDelta(sens, lc.dc.perGroup)
		xv := testutil.RandSlice(rng, n*c, -2, 2)
		wv := testutil.RandSlice(rng, n*c, -1, 1)
		{
			var out64, dx64 []float64
			for _, dt := range testutil.Dtypes {
				t.Run(fmt.Sprintf("%s/%v", lc.name, dt), func(t *testing.T) {
					l, err := New(adj, sens, lc.cfg)
					require.NoError(t, err)
					l.SetPhase(nil)
					wantF, us := naiveFMP(a, xv, n, c, d, rows, lc.cfg, l.groupContrast().NormSq(), nil)
					g := G.NewGraph()
					x := G.NewMatrix(g, dt, G.WithShape(n, c), G.WithName("X"), G.WithValue(testutil.Tensor(dt, xv, n, c)))
					tr, err := l.forwardAudit(x)
					require.NoError(t, err)
					var fv, uv G.Value
					G.Read(tr.Output, &fv)
					if tr.Dual != nil { // nil at λf = 0
						G.Read(tr.Dual, &uv)
					}
					cost := G.Must(G.Sum(G.Must(G.HadamardProd(tr.Output, G.NewConstant(testutil.Tensor(dt, wv, n, c))))))
					grads, err := G.Grad(cost, x)
					require.NoError(t, err)
					testutil.Run(t, g)
					got, dx := testutil.ToF64(fv), testutil.ToF64(grads[0].Value())
					if dt == tensor.Float64 {
						out64, dx64 = got, dx
						testutil.AllClose(t, "F^K", got, wantF, 1e-10, 1e-9)
						if uv != nil {
							testutil.AllClose(t, "u^K", testutil.ToF64(uv), us[len(us)-1], 1e-10, 1e-9)
						}
						num := testutil.NumGrad(func() float64 {
							f, _ := naiveFMP(a, xv, n, c, d, rows, lc.cfg, l.groupContrast().NormSq(), nil)
							return dot(f, wv)
						}, xv, 1e-6)
						testutil.AllClose(t, "d/dX", dx, num, 1e-7, 1e-5)
						return
					}
					testutil.AllClose(t, "F^K f32 vs f64", got, out64, 1e-4, 1e-4)
					testutil.AllClose(t, "d/dX f32 vs f64", dx, dx64, 1e-4, 1e-3)
				})
			}
		}
	}
}

// TestLambdaFZeroIsPropagation: λf = 0 reproduces exactly (bit for bit)
// the propagation-only output γX + (1−γ)ÃF iterated K times.
func TestLambdaFZeroIsPropagation(t *testing.T) {
	rng := rand.New(rand.NewSource(12))
	n, c := 40, 2
	gr := randomGraph(t, rng, n, 80)
	adj := graph.NormalizedAdjacency(gr)
	sens := randSens(rng, n, 2, 0.1)
	xv := testutil.RandSlice(rng, n*c, -3, 3)
	for _, dt := range testutil.Dtypes {
		for _, sc := range []Scaling{Paper, Normalized} {
			cfg := DefaultConfig()
			cfg.LambdaF, cfg.Scaling, cfg.K, cfg.LambdaS = 0, sc, 4, 2
			l, err := New(adj, sens, cfg)
			require.NoError(t, err)
			l.SetPhase(nil)
			g := G.NewGraph()
			x := G.NewMatrix(g, dt, G.WithShape(n, c), G.WithName("X"), G.WithValue(testutil.Tensor(dt, xv, n, c)))
			out, err := l.Forward(x)
			require.NoError(t, err)
			// An independent propagation-only graph with SpMM.
			gamma := cfg.Gamma()
			p := x
			for k := 0; k < cfg.K; k++ {
				ap := G.Must(layers.SpMM(adj, p))
				p = G.Must(G.Add(G.Must(G.Mul(x, scalarOf(dt, gamma))), G.Must(G.Mul(ap, scalarOf(dt, 1-gamma)))))
			}
			var ov, pv G.Value
			G.Read(out, &ov)
			G.Read(p, &pv)
			testutil.Run(t, g)
			got, want := testutil.ToF64(ov), testutil.ToF64(pv)
			testutil.AllClose(t, fmt.Sprintf("%v %v λf=0 vs propagation", dt, sc), got, want, 0, 0)
			// And against the dense formula.
			a := naiveNormAdj(gr)
			f := append([]float64(nil), xv...)
			for k := 0; k < cfg.K; k++ {
				nf := make([]float64, n*c)
				for i := 0; i < n; i++ {
					for j := 0; j < c; j++ {
						s := 0.0
						for m := 0; m < n; m++ {
							s += a[i*n+m] * f[m*c+j]
						}
						nf[i*c+j] = gamma*xv[i*c+j] + (1-gamma)*s
					}
				}
				f = nf
			}
			atol, rtol := testutil.Tol(dt)
			testutil.AllClose(t, "λf=0 vs dense", got, f, 10*atol, 10*rtol)
		}
	}
	// λs = 0: γ = 1, no propagation: the output is X itself.
	cfg := DefaultConfig()
	cfg.LambdaS, cfg.LambdaF = 0, 0
	g := G.NewGraph()
	x := G.NewMatrix(g, tensor.Float64, G.WithShape(n, c), G.WithName("X"), G.WithValue(testutil.Tensor(tensor.Float64, xv, n, c)))
	out, err := evalForward(x, adj, sens, cfg)
	require.NoError(t, err)
	var ov G.Value
	G.Read(out, &ov)
	testutil.Run(t, g)
	testutil.AllClose(t, "λs=0, λf=0", testutil.ToF64(ov), xv, 0, 0)
}

// TestLayerGradientThroughMLPWeights: the gradient of a loss with respect
// to the weights of a linear+tanh+linear backbone feeding FMP (K = 4,
// partly binding λf) against central differences, in EndToEnd mode; and in
// ConstantDual mode against the finite differences of the naive layer
// with the duals frozen at their forward values.
func TestLayerGradientThroughMLPWeights(t *testing.T) {
	rng := rand.New(rand.NewSource(13))
	n, din, h, c := 16, 5, 4, 2
	gr := randomGraph(t, rng, n, 30)
	adj := graph.NormalizedAdjacency(gr)
	a := naiveNormAdj(gr)
	sens := randSens(rng, n, 2, 0.1)
	rows, d := naiveDelta(sens, false)
	zv := testutil.RandSlice(rng, n*din, -1, 1)
	w1 := testutil.RandSlice(rng, din*h, -1, 1)
	w2 := testutil.RandSlice(rng, h*c, -1, 1)
	wv := testutil.RandSlice(rng, n*c, -1, 1)
	mlp := func() []float64 {
		hid := make([]float64, n*h)
		for i := 0; i < n; i++ {
			for j := 0; j < h; j++ {
				s := 0.0
				for k := 0; k < din; k++ {
					s += zv[i*din+k] * w1[k*h+j]
				}
				hid[i*h+j] = math.Tanh(s)
			}
		}
		out := make([]float64, n*c)
		for i := 0; i < n; i++ {
			for j := 0; j < c; j++ {
				for k := 0; k < h; k++ {
					out[i*c+j] += hid[i*h+k] * w2[k*c+j]
				}
			}
		}
		return out
	}
	var e2e []float64
	for _, mode := range []TrainMode{EndToEnd, ConstantDual} {
		cfg := Config{LambdaS: 1, LambdaF: 0.0925, K: 4, Scaling: Normalized, Rho: 4, Temperature: 1, TrainMode: mode}
		l, err := New(adj, sens, cfg)
		require.NoError(t, err)
		g := G.NewGraph()
		dt := tensor.Float64
		z := G.NewConstant(testutil.Tensor(dt, zv, n, din))
		W1 := G.NewMatrix(g, dt, G.WithShape(din, h), G.WithName("W1"), G.WithValue(testutil.Tensor(dt, w1, din, h)))
		W2 := G.NewMatrix(g, dt, G.WithShape(h, c), G.WithName("W2"), G.WithValue(testutil.Tensor(dt, w2, h, c)))
		x := G.Must(G.Mul(G.Must(G.Tanh(G.Must(G.Mul(z, W1)))), W2))
		out, err := l.Forward(x)
		require.NoError(t, err)
		cost := G.Must(G.Sum(G.Must(G.HadamardProd(out, G.NewConstant(testutil.Tensor(dt, wv, n, c))))))
		grads, err := G.Grad(cost, W1, W2)
		require.NoError(t, err)
		testutil.Run(t, g)
		_, us0 := naiveFMP(a, mlp(), n, c, d, rows, cfg, l.groupContrast().NormSq(), nil)
		binds, free := false, false
		for _, u := range us0 {
			for _, v := range u {
				clipped := math.Abs(v) == 0.0925/l.groupContrast().NormSq()
				binds = binds || clipped
				free = free || !clipped
			}
		}
		if !binds || !free {
			t.Logf("duals %v radius %v", us0, 0.0925/l.groupContrast().NormSq())
			t.Fatalf("%v: the test needs a binding projection", mode)
		}
		var frozen [][]float64
		if mode == ConstantDual {
			frozen = us0
		}
		loss := func() float64 {
			f, _ := naiveFMP(a, mlp(), n, c, d, rows, cfg, l.groupContrast().NormSq(), frozen)
			return dot(f, wv)
		}
		testutil.AllClose(t, mode.String()+" d/dW1", testutil.ToF64(grads[0].Value()), testutil.NumGrad(loss, w1, 1e-6), 1e-7, 1e-5)
		testutil.AllClose(t, mode.String()+" d/dW2", testutil.ToF64(grads[1].Value()), testutil.NumGrad(loss, w2, 1e-6), 1e-7, 1e-5)
		dw2 := testutil.ToF64(grads[1].Value())
		if mode == EndToEnd {
			e2e = dw2
			continue
		}
		diff := 0.0
		for i := range dw2 {
			diff = math.Max(diff, math.Abs(dw2[i]-e2e[i]))
		}
		if diff < 1e-4 {
			t.Errorf("ConstantDual and EndToEnd gradients differ by only %g: the test cannot tell them apart", diff)
		}
	}
}

// TestInferenceOnlyMode: while the phase trains, the output is the
// propagation-only output and the gradient equals propagation's; in
// evaluation it equals the EndToEnd output.
func TestInferenceOnlyMode(t *testing.T) {
	rng := rand.New(rand.NewSource(14))
	n, c := 30, 2
	gr := randomGraph(t, rng, n, 60)
	adj := graph.NormalizedAdjacency(gr)
	sens := randSens(rng, n, 2, 0)
	xv := testutil.RandSlice(rng, n*c, -2, 2)
	run := func(mode TrainMode, lf float64, training bool) []float64 {
		cfg := DefaultConfig()
		cfg.TrainMode, cfg.LambdaF = mode, lf
		l, err := New(adj, sens, cfg)
		require.NoError(t, err)
		ph := layers.NewPhase()
		ph.SetTraining(training)
		l.SetPhase(ph)
		g := G.NewGraph()
		x := G.NewMatrix(g, tensor.Float64, G.WithShape(n, c), G.WithName("X"), G.WithValue(testutil.Tensor(tensor.Float64, xv, n, c)))
		out, err := l.Forward(x)
		require.NoError(t, err)
		var ov G.Value
		G.Read(out, &ov)
		testutil.Run(t, g)
		return testutil.ToF64(ov)
	}
	prop := run(EndToEnd, 0, false)
	e2e := run(EndToEnd, 2, false)
	testutil.AllClose(t, "InferenceOnly, training", run(InferenceOnly, 2, true), prop, 0, 0)
	testutil.AllClose(t, "InferenceOnly, evaluation", run(InferenceOnly, 2, false), e2e, 0, 0)
	diff := 0.0
	for i := range prop {
		diff = math.Max(diff, math.Abs(prop[i]-e2e[i]))
	}
	if diff < 1e-3 {
		t.Fatalf("λf = 2 changed the output by only %v: the test cannot tell the modes apart", diff)
	}
}

// gapsOf returns the per-group mean probability of class 1 of logits f.
func groupMeans(f []float64, n, c int, sens []int, groups int) [][]float64 {
	s := naiveSoftmax(f, n, c)
	m := make([][]float64, groups)
	cnt := make([]float64, groups)
	for g := range m {
		m[g] = make([]float64, c)
	}
	for i, g := range sens {
		if g < 0 {
			continue
		}
		cnt[g]++
		for j := 0; j < c; j++ {
			m[g][j] += s[i*c+j]
		}
	}
	for g := range m {
		for j := range m[g] {
			m[g][j] /= cnt[g]
		}
	}
	return m
}

func maxPairGap(m [][]float64) float64 {
	best := 0.0
	for a := range m {
		for b := range m {
			for j := range m[a] {
				best = math.Max(best, m[a][j]-m[b][j])
			}
		}
	}
	return best
}

// TestMultiGroupLowersLargestGap generates a 3-group graph whose logits
// depend on the group and whose edges are mostly within groups, and checks
// that FMP (Normalized, per-group Δs) lowers the largest pairwise gap of
// mean predicted probability below the propagation-only one, more as λf
// grows.
func TestMultiGroupLowersLargestGap(t *testing.T) {
	rng := rand.New(rand.NewSource(15))
	n, c, groups := 300, 2, 3
	sens := make([]int, n)
	for i := range sens {
		sens[i] = i % groups
		if rng.Float64() < 0.1 {
			sens[i] = -1 // unknown, but still biased below
		}
	}
	var edges [][2]int
	for len(edges) < 1200 {
		i, j := rng.Intn(n), rng.Intn(n)
		if i%groups == j%groups || rng.Float64() < 0.2 {
			edges = append(edges, [2]int{i, j})
		}
	}
	gr, err := graph.FromEdges(n, edges)
	require.NoError(t, err)
	adj := graph.NormalizedAdjacency(gr)
	shift := []float64{-1, 0.2, 1.2}
	xv := make([]float64, n*c)
	for i := 0; i < n; i++ {
		xv[i*c] = rng.NormFloat64()
		xv[i*c+1] = rng.NormFloat64() + shift[i%groups]
	}
	prev := math.Inf(1)
	var first float64
	for _, lf := range []float64{0, 0.1, 0.3, 1, 3} {
		cfg := DefaultConfig()
		cfg.LambdaF, cfg.K = lf, 10
		g := G.NewGraph()
		x := G.NewMatrix(g, tensor.Float64, G.WithShape(n, c), G.WithName("X"), G.WithValue(testutil.Tensor(tensor.Float64, xv, n, c)))
		out, err := evalForward(x, adj, sens, cfg)
		require.NoError(t, err)
		var ov G.Value
		G.Read(out, &ov)
		testutil.Run(t, g)
		gap := maxPairGap(groupMeans(testutil.ToF64(ov), n, c, sens, groups))
		t.Logf("λf = %v: largest pairwise gap %.4f", lf, gap)
		if lf == 0 {
			first = gap
		} else if gap >= prev {
			t.Errorf("λf = %v: gap %.4f, not below %.4f for the smaller λf", lf, gap, prev)
		}
		prev = gap
	}
	if prev > first/2 {
		t.Errorf("largest gap %.4f at λf = 8, want at most half the propagation-only %.4f", prev, first)
	}
}

// TestLayerExtremeLogits: logits of ±1e4 give finite outputs and gradients.
func TestLayerExtremeLogits(t *testing.T) {
	rng := rand.New(rand.NewSource(16))
	n, c := 20, 2
	adj := graph.NormalizedAdjacency(randomGraph(t, rng, n, 40))
	sens := randSens(rng, n, 3, 0)
	xv := make([]float64, n*c)
	for i := range xv {
		xv[i] = float64(rng.Intn(3)-1) * 1e4
	}
	for _, dt := range testutil.Dtypes {
		cfg := DefaultConfig()
		cfg.LambdaF = 50
		g := G.NewGraph()
		x := G.NewMatrix(g, dt, G.WithShape(n, c), G.WithName("X"), G.WithValue(testutil.Tensor(dt, xv, n, c)))
		out, err := evalForward(x, adj, sens, cfg)
		require.NoError(t, err)
		var ov G.Value
		G.Read(out, &ov)
		grads, err := G.Grad(G.Must(G.Sum(out)), x)
		require.NoError(t, err)
		testutil.Run(t, g)
		for _, v := range append(testutil.ToF64(ov), testutil.ToF64(grads[0].Value())...) {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				t.Fatalf("%v: non-finite value %v", dt, v)
			}
		}
	}
}

func TestConfigValidate(t *testing.T) {
	if err := DefaultConfig().Validate(); err != nil {
		t.Fatal(err)
	}
	bad := []func(*Config){
		func(c *Config) { c.LambdaS = -1 },
		func(c *Config) { c.LambdaS = math.NaN() },
		func(c *Config) { c.LambdaF = math.Inf(1) },
		func(c *Config) { c.LambdaF = -0.1 },
		func(c *Config) { c.K = 0 },
		func(c *Config) { c.Scaling = 0 },
		func(c *Config) { c.Rho = 0 },
		func(c *Config) { c.Rho = 4.01 },
		func(c *Config) { c.TrainMode = 0 },
		func(c *Config) { c.Temperature = 0 },
		func(c *Config) { c.Temperature = math.Inf(1) },
		func(c *Config) { c.TrainMode = 9 },
	}
	for i, f := range bad {
		c := DefaultConfig()
		f(&c)
		if c.Validate() == nil {
			t.Errorf("case %d: %+v accepted", i, c)
		}
	}
	c := DefaultConfig()
	c.Scaling, c.Rho = Paper, 0
	if err := c.Validate(); err != nil {
		t.Errorf("Paper scaling with ρ = 0 rejected: %v", err)
	}
	// Layer construction errors.
	adj := graph.NormalizedAdjacency(randomGraph(t, rand.New(rand.NewSource(1)), 4, 4))
	if _, err := New(adj, []int{0, 1, 0}, DefaultConfig()); err == nil {
		t.Error("New accepted 3 sens entries for 4 nodes")
	}
	if _, err := New(nil, []int{0, 1}, DefaultConfig()); err == nil {
		t.Error("New accepted a nil adjacency")
	}
	l, err := New(adj, []int{0, 1, 0, 1}, DefaultConfig())
	require.NoError(t, err)
	g := G.NewGraph()
	// InferenceOnly (the default) without SetPhase: an error naming the fix.
	_, err = l.Forward(G.NewMatrix(g, tensor.Float64, G.WithShape(4, 2), G.WithName("x")))
	require.ErrorIs(t, err, ErrNoPhase)
	l.SetPhase(nil)
	for _, x := range []*G.Node{
		G.NewMatrix(g, tensor.Float64, G.WithShape(4, 1), G.WithName("one column")),
		G.NewMatrix(g, tensor.Float64, G.WithShape(5, 2), G.WithName("five rows")),
		G.NewVector(g, tensor.Float64, G.WithShape(4), G.WithName("vector")),
	} {
		if _, err := l.Forward(x); err == nil {
			t.Errorf("Forward accepted %s", x.Name())
		}
	}
}

// TestNormalizedShiftBounds checks the bounds the package doc derives for
// Normalized scaling: with λs = 0 every logit moves by at most λf/2; with
// propagation the root-mean-square change over all logits (against the
// propagation-only output) is at most λf/4. Both for a binary attribute,
// on random graphs of two sizes, with binding and non-binding λf; and the
// bounds are not vacuous (the change reaches a sizeable fraction).
func TestNormalizedShiftBounds(t *testing.T) {
	rng := rand.New(rand.NewSource(17))
	for _, n := range []int{60, 600} {
		c := 2
		gr := randomGraph(t, rng, n, 3*n)
		adj := graph.NormalizedAdjacency(gr)
		sens := randSens(rng, n, 2, 0.1)
		xv := testutil.RandSlice(rng, n*c, -3, 3)
		for i := 0; i < n; i++ {
			if sens[i] == 1 {
				xv[i*c+1] += 2 // biased logits
			}
		}
		for _, ls := range []float64{0, 2} {
			for _, lf := range []float64{0.1, 1, 5} {
				cfg := DefaultConfig()
				cfg.LambdaS, cfg.LambdaF, cfg.K = ls, lf, 10
				rep, err := Explain(testutil.Tensor(tensor.Float64, xv, n, c), adj, sens, cfg)
				require.NoError(t, err)
				ss := 0.0
				for _, v := range rep.Influence {
					ss += v * v
				}
				rms := math.Sqrt(ss / float64(n*c))
				t.Logf("n=%d λs=%v λf=%v: max |ΔF| %.4f (bound %.4f), rms %.4f (bound %.4f)", n, ls, lf, rep.MaxAbsInfluence, lf/2, rms, lf/4)
				if ls == 0 && rep.MaxAbsInfluence > lf/2*(1+1e-12) {
					t.Errorf("n=%d λf=%v: max logit change %v > λf/2", n, lf, rep.MaxAbsInfluence)
				}
				if rms > lf/4*(1+1e-12) {
					t.Errorf("n=%d λs=%v λf=%v: rms logit change %v > λf/4", n, ls, lf, rms)
				}
				if lf == 0.1 && rep.MaxAbsInfluence < lf/10 {
					t.Errorf("n=%d λs=%v: binding λf = 0.1 moved logits by only %v: bound vacuous", n, ls, rep.MaxAbsInfluence)
				}
			}
		}
	}
}

// TestTemperatureEquivalence: with Normalized scaling, FMP with
// temperature τ on X equals τ · FMP with τ = 1 on X/τ with λf/τ (the
// scalings of β and the radius are exactly what makes them agree).
func TestTemperatureEquivalence(t *testing.T) {
	rng := rand.New(rand.NewSource(18))
	n, c := 50, 2
	adj := graph.NormalizedAdjacency(randomGraph(t, rng, n, 120))
	sens := randSens(rng, n, 2, 0.1)
	xv := testutil.RandSlice(rng, n*c, -2, 2)
	for _, tau := range []float64{0.5, 0.2} {
		cfg := DefaultConfig()
		cfg.LambdaF, cfg.K, cfg.Temperature = 0.8, 6, tau
		got, err := Explain(testutil.Tensor(tensor.Float64, xv, n, c), adj, sens, cfg)
		require.NoError(t, err)
		xs := make([]float64, len(xv))
		for i, v := range xv {
			xs[i] = v / tau
		}
		cfg1 := cfg
		cfg1.Temperature, cfg1.LambdaF = 1, cfg.LambdaF/tau
		ref, err := Explain(testutil.Tensor(tensor.Float64, xs, n, c), adj, sens, cfg1)
		require.NoError(t, err)
		want := make([]float64, len(ref.Output))
		for i, v := range ref.Output {
			want[i] = tau * v
		}
		testutil.AllClose(t, fmt.Sprintf("τ=%v", tau), got.Output, want, 1e-12, 1e-10)
		if got.MaxAbsInfluence < 1e-3 {
			t.Errorf("τ=%v: influence %v too small for the test to mean anything", tau, got.MaxAbsInfluence)
		}
	}
}

// evalForward is New followed by Layer.Forward for a layer used in
// evaluation only.
func evalForward(x *G.Node, adj *graph.Matrix, sens []int, cfg Config) (*G.Node, error) {
	l, err := New(adj, sens, cfg)
	if err != nil {
		return nil, err
	}
	l.SetPhase(nil)
	return l.Forward(x)
}

// scalarOf is the constant v in dt.
func scalarOf(dt tensor.Dtype, v float64) *G.Node {
	if dt == tensor.Float32 {
		return G.NewConstant(float32(v))
	}
	return G.NewConstant(v)
}
