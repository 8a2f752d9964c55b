package fmp

import (
	"fmt"
	"math"
	"math/rand"
	"testing"

	"github.com/fairmp/fairmp/internal/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// ---- naive reference implementations (plain loops, no shared code) ----

func naiveSoftmax(f []float64, n, c int) []float64 {
	s := make([]float64, n*c)
	for i := 0; i < n; i++ {
		m := math.Inf(-1)
		for j := 0; j < c; j++ {
			m = math.Max(m, f[i*c+j])
		}
		z := 0.0
		for j := 0; j < c; j++ {
			z += math.Exp(f[i*c+j] - m)
		}
		for j := 0; j < c; j++ {
			s[i*c+j] = math.Exp(f[i*c+j]-m) / z
		}
	}
	return s
}

// naiveDelta builds Δs from its definition (paper's single row for two
// groups unless perGroup).
func naiveDelta(sens []int, perGroup bool) (rows int, d []float64) {
	n := len(sens)
	groups := 0
	for _, s := range sens {
		if s+1 > groups {
			groups = s + 1
		}
	}
	cnt := make([]float64, groups)
	known := 0.0
	for _, s := range sens {
		if s >= 0 {
			cnt[s]++
			known++
		}
	}
	if groups == 2 && !perGroup {
		d = make([]float64, n)
		for i, s := range sens {
			if s == 1 {
				d[i] = 1 / cnt[1]
			} else if s == 0 {
				d[i] = -1 / cnt[0]
			}
		}
		return 1, d
	}
	d = make([]float64, groups*n)
	for g := 0; g < groups; g++ {
		for i, s := range sens {
			if s < 0 {
				continue
			}
			if s == g {
				d[g*n+i] += 1 / cnt[g]
			}
			d[g*n+i] -= 1 / known
		}
	}
	return groups, d
}

// naiveObjective returns ⟨Δs SF(F), u⟩.
func naiveObjective(d []float64, rows int, f, u []float64, n, c int) float64 {
	s := naiveSoftmax(f, n, c)
	v := 0.0
	for r := 0; r < rows; r++ {
		for i := 0; i < n; i++ {
			for j := 0; j < c; j++ {
				v += d[r*n+i] * s[i*c+j] * u[r*c+j]
			}
		}
	}
	return v
}

// naiveGrad returns ∇(F, u) by Theorem 1 written with explicit loops.
func naiveGrad(d []float64, rows int, f, u []float64, n, c int) []float64 {
	s := naiveSoftmax(f, n, c)
	out := make([]float64, n*c)
	for i := 0; i < n; i++ {
		uu := make([]float64, c)
		for j := 0; j < c; j++ {
			for r := 0; r < rows; r++ {
				uu[j] += d[r*n+i] * u[r*c+j]
			}
		}
		rs := 0.0
		for j := 0; j < c; j++ {
			rs += uu[j] * s[i*c+j]
		}
		for j := 0; j < c; j++ {
			out[i*c+j] = uu[j]*s[i*c+j] - rs*s[i*c+j]
		}
	}
	return out
}

func naiveGap(d []float64, rows int, f []float64, n, c int) []float64 {
	s := naiveSoftmax(f, n, c)
	out := make([]float64, rows*c)
	for r := 0; r < rows; r++ {
		for i := 0; i < n; i++ {
			for j := 0; j < c; j++ {
				out[r*c+j] += d[r*n+i] * s[i*c+j]
			}
		}
	}
	return out
}

func naiveProj(x []float64, r float64) []float64 {
	out := make([]float64, len(x))
	for i, v := range x {
		a := math.Min(math.Abs(v), r)
		if v < 0 {
			a = -a
		}
		out[i] = a
	}
	return out
}

func dot(a, b []float64) float64 {
	s := 0.0
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

func randSens(rng *rand.Rand, n, groups int, unknown float64) []int {
	for {
		s := make([]int, n)
		cnt := make([]int, groups)
		for i := range s {
			if rng.Float64() < unknown {
				s[i] = -1
				continue
			}
			s[i] = rng.Intn(groups)
			cnt[s[i]]++
		}
		ok := true
		for _, c := range cnt {
			ok = ok && c > 0
		}
		if ok {
			return s
		}
	}
}

func mustDelta(t testing.TB, sens []int, perGroup bool) *DeltaS {
	t.Helper()
	ds, err := NewDeltaS(sens, perGroup)
	require.NoError(t, err)
	return ds
}

type deltaCase struct {
	name     string
	groups   int
	perGroup bool
}

var deltaCases = []deltaCase{{"binary", 2, false}, {"binary-rows", 2, true}, {"3groups", 3, false}}

func TestNewDeltaSMatchesDefinition(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	for _, dc := range deltaCases {
		sens := randSens(rng, 40, dc.groups, 0.2)
		ds := mustDelta(t, sens, dc.perGroup)
		rows, d := naiveDelta(sens, dc.perGroup)
		if ds.Rows() != rows {
			t.Fatalf("%s: %d rows, want %d", dc.name, ds.Rows(), rows)
		}
		testutil.AllClose(t, dc.name, ds.d64, d, 0, 1e-15)
		// ‖Δs‖² is the largest eigenvalue of Δs Δsᵀ: check that it is
		// an eigenvalue bound attained by a Rayleigh quotient search.
		if rows == 1 {
			n1, n0 := float64(ds.Counts()[1]), float64(ds.Counts()[0])
			if !testutil.Close(ds.NormSq(), 1/n1+1/n0, 0, 1e-12) {
				t.Errorf("binary ‖Δs‖² = %v, want 1/n₁+1/n₀ = %v", ds.NormSq(), 1/n1+1/n0)
			}
		} else {
			best := 0.0
			for trial := 0; trial < 20000; trial++ {
				v := testutil.RandSlice(rng, rows, -1, 1)
				norm := math.Sqrt(dot(v, v))
				q := 0.0
				for i := 0; i < len(sens); i++ {
					x := 0.0
					for r := 0; r < rows; r++ {
						x += v[r] / norm * d[r*len(sens)+i]
					}
					q += x * x
				}
				best = math.Max(best, q)
			}
			if best > ds.NormSq()*(1+1e-12) || best < ds.NormSq()*0.99 {
				t.Errorf("%s: ‖Δs‖² = %v, Rayleigh search found %v", dc.name, ds.NormSq(), best)
			}
		}
	}
}

// TestBinaryPerGroupReducesToPaper checks the relation between the two
// forms for a binary attribute: the per-group rows are p₀Δ and −p₁Δ with
// Δ the paper's row, so the fairness terms λf Σ_g ‖row_g SF(F)‖₁ and
// λf ‖Δ SF(F)‖₁ are equal for every F.
func TestBinaryPerGroupReducesToPaper(t *testing.T) {
	rng := rand.New(rand.NewSource(4))
	sens := randSens(rng, 50, 2, 0.3)
	paper := mustDelta(t, sens, false)
	rows := mustDelta(t, sens, true)
	n := len(sens)
	p0 := float64(paper.Counts()[0]) / float64(paper.Known())
	p1 := float64(paper.Counts()[1]) / float64(paper.Known())
	for i := 0; i < n; i++ {
		if !testutil.Close(rows.Row(1)[i], p0*paper.Row(0)[i], 1e-17, 1e-12) ||
			!testutil.Close(rows.Row(0)[i], -p1*paper.Row(0)[i], 1e-17, 1e-12) {
			t.Fatalf("node %d: rows %v %v, paper %v", i, rows.Row(0)[i], rows.Row(1)[i], paper.Row(0)[i])
		}
	}
	c := 3
	f := testutil.RandSlice(rng, n*c, -3, 3)
	gp := naiveGap(paper.d64, 1, f, n, c)
	gr := naiveGap(rows.d64, 2, f, n, c)
	l1 := func(x []float64) float64 {
		s := 0.0
		for _, v := range x {
			s += math.Abs(v)
		}
		return s
	}
	if !testutil.Close(l1(gr), l1(gp), 1e-15, 1e-12) {
		t.Errorf("Σ_g ‖row_g SF‖₁ = %v, paper ‖Δ SF‖₁ = %v", l1(gr), l1(gp))
	}
}

func TestNewDeltaSErrors(t *testing.T) {
	for _, sens := range [][]int{nil, {0, 0, -1}, {0, 2, 2, 0}, {0, 1, -2}, {-1, -1}} {
		if _, err := NewDeltaS(sens, false); err == nil {
			t.Errorf("NewDeltaS(%v) accepted", sens)
		}
	}
}

// opCase builds F, u and a weight W in a fresh graph.
type opCase struct {
	n, c       int
	f, u, w    []float64
	ds         *DeltaS
	rows       int
	d          []float64
	fScale     float64
	name       string
	groups     int
	perGroup   bool
	unknownPct float64
}

func newOpCase(rng *rand.Rand, dc deltaCase, n, c int, fScale float64) opCase {
	sens := randSens(rng, n, dc.groups, 0.2)
	ds, _ := NewDeltaS(sens, dc.perGroup)
	rows, d := naiveDelta(sens, dc.perGroup)
	return opCase{n: n, c: c, ds: ds, rows: rows, d: d, name: dc.name,
		f: testutil.RandSlice(rng, n*c, -fScale, fScale),
		u: testutil.RandSlice(rng, rows*c, -5, 5),
		w: testutil.RandSlice(rng, n*c, -1, 1)}
}

// TestFairGradForwardAndGradients checks ∇(F, u) against the naive loops,
// and the gradients of ⟨W, ∇(F, u)⟩ with respect to F and u against
// central differences of the naive implementation (float64), for the
// binary, binary per-group and 3-group Δs, c ∈ {2, 4}, and agreement of
// float32 with float64.
func TestFairGradForwardAndGradients(t *testing.T) {
	rng := rand.New(rand.NewSource(5))
	for _, dc := range deltaCases {
		for _, c := range []int{2, 4} {
			oc := newOpCase(rng, dc, 23, c, 3)
			var f64, df64, du64 []float64
			for _, dt := range testutil.Dtypes {
				t.Run(fmt.Sprintf("%s/c=%d/%v", dc.name, c, dt), func(t *testing.T) {
					g := G.NewGraph()
					f := G.NewMatrix(g, dt, G.WithShape(oc.n, c), G.WithName("F"), G.WithValue(testutil.Tensor(dt, oc.f, oc.n, c)))
					u := G.NewMatrix(g, dt, G.WithShape(oc.rows, c), G.WithName("u"), G.WithValue(testutil.Tensor(dt, oc.u, oc.rows, c)))
					w := G.NewConstant(testutil.Tensor(dt, oc.w, oc.n, c), G.WithName("W"))
					y, err := FairGrad(f, u, oc.ds)
					require.NoError(t, err)
					var yv G.Value
					G.Read(y, &yv)
					cost := G.Must(G.Sum(G.Must(G.HadamardProd(y, w))))
					grads, err := G.Grad(cost, f, u)
					require.NoError(t, err)
					testutil.Run(t, g)
					got := testutil.ToF64(yv)
					atol, rtol := testutil.Tol(dt)
					testutil.AllClose(t, "∇", got, naiveGrad(oc.d, oc.rows, oc.f, oc.u, oc.n, c), atol, rtol)
					df, du := testutil.ToF64(grads[0].Value()), testutil.ToF64(grads[1].Value())
					if dt == tensor.Float64 {
						f64, df64, du64 = got, df, du
						loss := func() float64 { return dot(oc.w, naiveGrad(oc.d, oc.rows, oc.f, oc.u, oc.n, c)) }
						testutil.AllClose(t, "d/dF", df, testutil.NumGrad(loss, oc.f, 1e-6), 1e-8, 1e-5)
						testutil.AllClose(t, "d/du", du, testutil.NumGrad(loss, oc.u, 1e-6), 1e-8, 1e-5)
						return
					}
					testutil.AllClose(t, "∇ f32 vs f64", got, f64, 1e-6, 1e-4)
					testutil.AllClose(t, "d/dF f32 vs f64", df, df64, 1e-6, 1e-4)
					testutil.AllClose(t, "d/du f32 vs f64", du, du64, 1e-6, 1e-4)
				})
			}
		}
	}
}

// TestFairGradZeroDual: with u = 0 (InferenceOnly training, the first
// step) FairGrad and its F-gradient are exactly zero (the ops skip the
// softmax), while its u-gradient is not, and matches central differences.
func TestFairGradZeroDual(t *testing.T) {
	rng := rand.New(rand.NewSource(6))
	for _, dc := range deltaCases {
		oc := newOpCase(rng, dc, 23, 2, 3)
		clear(oc.u)
		for _, dt := range testutil.Dtypes {
			g := G.NewGraph()
			f := G.NewMatrix(g, dt, G.WithShape(oc.n, 2), G.WithName("F"), G.WithValue(testutil.Tensor(dt, oc.f, oc.n, 2)))
			u := G.NewMatrix(g, dt, G.WithShape(oc.rows, 2), G.WithName("u"), G.WithValue(testutil.Tensor(dt, oc.u, oc.rows, 2)))
			w := G.NewConstant(testutil.Tensor(dt, oc.w, oc.n, 2), G.WithName("W"))
			y, err := FairGrad(f, u, oc.ds)
			require.NoError(t, err)
			var yv G.Value
			G.Read(y, &yv)
			grads, err := G.Grad(G.Must(G.Sum(G.Must(G.HadamardProd(y, w)))), f, u)
			require.NoError(t, err)
			testutil.Run(t, g)
			zero := make([]float64, oc.n*2)
			assert.Equal(t, zero, testutil.ToF64(yv), "%s %v: ∇(F, 0)", dc.name, dt)
			assert.Equal(t, zero, testutil.ToF64(grads[0].Value()), "%s %v: d/dF at u = 0", dc.name, dt)
			loss := func() float64 { return dot(oc.w, naiveGrad(oc.d, oc.rows, oc.f, oc.u, oc.n, 2)) }
			num := testutil.NumGrad(loss, oc.u, 1e-6)
			require.NotEqual(t, make([]float64, len(num)), num, "the u-gradient at u = 0 is not zero")
			atol, rtol := 1e-8, 1e-5
			if dt == tensor.Float32 {
				atol, rtol = 1e-5, 1e-3
			}
			testutil.AllClose(t, "d/du at u = 0", testutil.ToF64(grads[1].Value()), num, atol, rtol)
		}
	}
}

// TestGroupGapForwardAndGradient checks Δs·SF(F) against loops and its
// gradient with respect to F against central differences.
func TestGroupGapForwardAndGradient(t *testing.T) {
	rng := rand.New(rand.NewSource(6))
	for _, dc := range deltaCases {
		oc := newOpCase(rng, dc, 31, 3, 2)
		wg := testutil.RandSlice(rng, oc.rows*oc.c, -1, 1)
		var v64, d64 []float64
		for _, dt := range testutil.Dtypes {
			t.Run(fmt.Sprintf("%s/%v", dc.name, dt), func(t *testing.T) {
				g := G.NewGraph()
				f := G.NewMatrix(g, dt, G.WithShape(oc.n, oc.c), G.WithName("F"), G.WithValue(testutil.Tensor(dt, oc.f, oc.n, oc.c)))
				w := G.NewConstant(testutil.Tensor(dt, wg, oc.rows, oc.c), G.WithName("W"))
				y, err := GroupGap(f, oc.ds)
				require.NoError(t, err)
				var yv G.Value
				G.Read(y, &yv)
				cost := G.Must(G.Sum(G.Must(G.HadamardProd(y, w))))
				grads, err := G.Grad(cost, f)
				require.NoError(t, err)
				testutil.Run(t, g)
				got, df := testutil.ToF64(yv), testutil.ToF64(grads[0].Value())
				atol, rtol := testutil.Tol(dt)
				testutil.AllClose(t, "gap", got, naiveGap(oc.d, oc.rows, oc.f, oc.n, oc.c), atol, rtol)
				if dt == tensor.Float64 {
					v64, d64 = got, df
					loss := func() float64 { return dot(wg, naiveGap(oc.d, oc.rows, oc.f, oc.n, oc.c)) }
					testutil.AllClose(t, "d/dF", df, testutil.NumGrad(loss, oc.f, 1e-6), 1e-9, 1e-5)
					// The gradient of ⟨Δs SF(F), W⟩ is ∇(F, W) (Theorem 1).
					testutil.AllClose(t, "d/dF = ∇(F, W)", df, naiveGrad(oc.d, oc.rows, oc.f, wg, oc.n, oc.c), 1e-12, 1e-9)
					return
				}
				testutil.AllClose(t, "gap f32 vs f64", got, v64, 1e-6, 1e-4)
				testutil.AllClose(t, "d/dF f32 vs f64", df, d64, 1e-7, 1e-4)
			})
		}
	}
}

// TestClosedFormMatchesAutodiff builds ⟨Δs SF(F), u⟩ from gorgonia's
// built-in ops (SoftMax, Mul, HadamardProd, Sum), lets gorgonia
// differentiate it, and checks that FairGrad equals that gradient.
func TestClosedFormMatchesAutodiff(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	for _, dc := range deltaCases {
		oc := newOpCase(rng, dc, 17, 3, 2)
		g := G.NewGraph()
		dt := tensor.Float64
		f := G.NewMatrix(g, dt, G.WithShape(oc.n, oc.c), G.WithName("F"), G.WithValue(testutil.Tensor(dt, oc.f, oc.n, oc.c)))
		u := G.NewConstant(testutil.Tensor(dt, oc.u, oc.rows, oc.c), G.WithName("u"))
		d := G.NewConstant(testutil.Tensor(dt, oc.d, oc.rows, oc.n), G.WithName("Δs"))
		sm := G.Must(G.SoftMax(f))
		obj := G.Must(G.Sum(G.Must(G.HadamardProd(G.Must(G.Mul(d, sm)), u))))
		grads, err := G.Grad(obj, f)
		require.NoError(t, err)
		var auto G.Value
		G.Read(grads[0], &auto)
		u2 := G.NewMatrix(g, dt, G.WithShape(oc.rows, oc.c), G.WithName("u2"), G.WithValue(testutil.Tensor(dt, oc.u, oc.rows, oc.c)))
		closed, err := FairGrad(f, u2, oc.ds)
		require.NoError(t, err)
		var cv G.Value
		G.Read(closed, &cv)
		testutil.Run(t, g)
		testutil.AllClose(t, dc.name+": closed form vs autodiff", testutil.ToF64(cv), testutil.ToF64(auto), 1e-12, 1e-9)
		num := testutil.NumGrad(func() float64 { return naiveObjective(oc.d, oc.rows, oc.f, oc.u, oc.n, oc.c) }, oc.f, 1e-6)
		testutil.AllClose(t, dc.name+": closed form vs finite differences", testutil.ToF64(cv), num, 1e-9, 1e-5)
	}
}

// TestProjectLinf checks the projection and its gradient mask, including
// entries exactly at the boundary (treated as clipped) and r = 0.
func TestProjectLinf(t *testing.T) {
	x := []float64{-3, -1, -0.5, 0, 0.25, 1, 2, 1.0 / 1024}
	w := []float64{1, 2, 3, 4, 5, 6, 7, 8}
	for _, r := range []float64{1, 0} {
		for _, dt := range testutil.Dtypes {
			g := G.NewGraph()
			xn := G.NewMatrix(g, dt, G.WithShape(2, 4), G.WithName("x"), G.WithValue(testutil.Tensor(dt, x, 2, 4)))
			y, err := ProjectLinf(xn, r)
			require.NoError(t, err)
			var yv G.Value
			G.Read(y, &yv)
			cost := G.Must(G.Sum(G.Must(G.HadamardProd(y, G.NewConstant(testutil.Tensor(dt, w, 2, 4))))))
			grads, err := G.Grad(cost, xn)
			require.NoError(t, err)
			testutil.Run(t, g)
			testutil.AllClose(t, fmt.Sprintf("proj r=%v %v", r, dt), testutil.ToF64(yv), naiveProj(x, r), 0, 0)
			want := make([]float64, len(x))
			for i, v := range x {
				if math.Abs(v) < r {
					want[i] = w[i]
				}
			}
			if r == 1 {
				// Interior entries pass, clipped and boundary (±1) entries do not.
				testutil.AllClose(t, "mask r=1 spelled out", want, []float64{0, 0, 3, 4, 5, 0, 0, 8}, 0, 0)
			}
			testutil.AllClose(t, fmt.Sprintf("grad r=%v %v", r, dt), testutil.ToF64(grads[0].Value()), want, 0, 0)
			if r == 0 {
				for _, v := range testutil.ToF64(grads[0].Value()) {
					if v != 0 {
						t.Errorf("r = 0: gradient %v, want exactly 0", v)
					}
				}
			}
		}
	}
	g := G.NewGraph()
	xn := G.NewMatrix(g, tensor.Float64, G.WithShape(2, 2), G.WithName("x"))
	for _, r := range []float64{-1, math.NaN(), math.Inf(1)} {
		if _, err := ProjectLinf(xn, r); err == nil {
			t.Errorf("ProjectLinf accepted r = %v", r)
		}
	}
}

// TestOpsExtremeLogits: logits of ±1e4 give finite values and gradients.
func TestOpsExtremeLogits(t *testing.T) {
	rng := rand.New(rand.NewSource(8))
	sens := randSens(rng, 6, 2, 0)
	ds := mustDelta(t, sens, false)
	fv := []float64{1e4, -1e4, -1e4, 1e4, 1e4, 1e4, 0, 1e4, -1e4, 0, 5e3, -5e3}
	for _, dt := range testutil.Dtypes {
		g := G.NewGraph()
		f := G.NewMatrix(g, dt, G.WithShape(6, 2), G.WithName("F"), G.WithValue(testutil.Tensor(dt, fv, 6, 2)))
		u := G.NewMatrix(g, dt, G.WithShape(1, 2), G.WithName("u"), G.WithValue(testutil.Tensor(dt, []float64{3, -2}, 1, 2)))
		y, _ := FairGrad(f, u, ds)
		gap, _ := GroupGap(f, ds)
		var yv, gv G.Value
		G.Read(y, &yv)
		G.Read(gap, &gv)
		cost := G.Must(G.Add(G.Must(G.Sum(y)), G.Must(G.Sum(gap))))
		grads, err := G.Grad(cost, f, u)
		require.NoError(t, err)
		testutil.Run(t, g)
		for name, v := range map[string]G.Value{"∇": yv, "gap": gv, "dF": grads[0].Value(), "du": grads[1].Value()} {
			for i, x := range testutil.ToF64(v) {
				if math.IsNaN(x) || math.IsInf(x, 0) {
					t.Errorf("%v %s[%d] = %v", dt, name, i, x)
				}
			}
		}
		// The row (1e4, −1e4) is saturated: its softmax Jacobian is 0.
		if v := testutil.ToF64(yv); v[0] != 0 || v[1] != 0 {
			t.Errorf("%v: saturated row gives ∇ = %v, want 0", dt, v[:2])
		}
	}
}

// TestOpHashesDistinguishParameters: the same inputs with a different Δs
// or radius must stay different nodes.
func TestOpHashesDistinguishParameters(t *testing.T) {
	sens := []int{0, 1, 1, 0}
	d1, d2 := mustDelta(t, sens, false), mustDelta(t, sens, false)
	g := G.NewGraph()
	f := G.NewMatrix(g, tensor.Float64, G.WithShape(4, 2), G.WithName("F"), G.WithInit(G.Zeroes()))
	u := G.NewMatrix(g, tensor.Float64, G.WithShape(1, 2), G.WithName("u"), G.WithInit(G.Zeroes()))
	a, _ := FairGrad(f, u, d1)
	b, _ := FairGrad(f, u, d2)
	if a == b {
		t.Error("FairGrad with two Δs became one node")
	}
	p, _ := GroupGap(f, d1)
	q, _ := GroupGap(f, d2)
	if p == q {
		t.Error("GroupGap with two Δs became one node")
	}
	x, _ := ProjectLinf(u, 1)
	y, _ := ProjectLinf(u, 1.0000001)
	if x == y {
		t.Error("ProjectLinf with two radii became one node")
	}
	if (&gradOp{ds: d1, scale: 1}).Hashcode() == (&gradOp{ds: d1, scale: 2}).Hashcode() {
		t.Error("FairGrad hash ignores the scale")
	}
	if (&gradOp{ds: d1, scale: 1}).Hashcode() == (&gradOp{ds: d1, scale: 1, constDual: true}).Hashcode() {
		t.Error("FairGrad hash ignores constDual")
	}
}

func TestOpConstructionErrors(t *testing.T) {
	ds := mustDelta(t, []int{0, 1, 1}, false)
	g := G.NewGraph()
	f := G.NewMatrix(g, tensor.Float64, G.WithShape(3, 2), G.WithName("F"))
	f4 := G.NewMatrix(g, tensor.Float64, G.WithShape(4, 2), G.WithName("F4"))
	f32 := G.NewMatrix(g, tensor.Float32, G.WithShape(3, 2), G.WithName("F32"))
	u := G.NewMatrix(g, tensor.Float64, G.WithShape(1, 2), G.WithName("u"))
	u2 := G.NewMatrix(g, tensor.Float64, G.WithShape(2, 2), G.WithName("u2"))
	u3 := G.NewMatrix(g, tensor.Float64, G.WithShape(1, 3), G.WithName("u3"))
	v := G.NewVector(g, tensor.Float64, G.WithShape(3), G.WithName("v"))
	ints := G.NewMatrix(g, tensor.Int, G.WithShape(3, 2), G.WithName("ints"))
	bad := []struct {
		name string
		err  error
	}{
		{"rows", second(FairGrad(f4, u, ds))},
		{"dtype", second(FairGrad(f32, u, ds))},
		{"u rows", second(FairGrad(f, u2, ds))},
		{"u cols", second(FairGrad(f, u3, ds))},
		{"vector", second(GroupGap(v, ds))},
		{"ints", second(GroupGap(ints, ds))},
		{"nil ds", second(GroupGap(f, nil))},
		{"nil u", second(FairGrad(f, nil, ds))},
	}
	for _, b := range bad {
		if b.err == nil {
			t.Errorf("%s: accepted", b.name)
		}
	}
}

func second[T any](_ T, err error) error { return err }
