package fmp

import (
	"fmt"
	"math"
	"math/rand"
	"testing"

	"github.com/fairmp/fairmp/graph"
	"github.com/fairmp/fairmp/internal/opkit"
	"github.com/fairmp/fairmp/internal/testutil"
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

func mustDelta(t testing.TB, sens []int, perGroup bool) *deltaS {
	t.Helper()
	ds, err := newDeltaS(sens, perGroup)
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
		if _, err := newDeltaS(sens, false); err == nil {
			t.Errorf("newDeltaS(%v) accepted", sens)
		}
	}
}

// opCase builds F, u and a weight W in a fresh graph.
type opCase struct {
	n, c       int
	f, u, w    []float64
	ds         *deltaS
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
	ds, _ := newDeltaS(sens, dc.perGroup)
	rows, d := naiveDelta(sens, dc.perGroup)
	return opCase{n: n, c: c, ds: ds, rows: rows, d: d, name: dc.name,
		f: testutil.RandSlice(rng, n*c, -fScale, fScale),
		u: testutil.RandSlice(rng, rows*c, -5, 5),
		w: testutil.RandSlice(rng, n*c, -1, 1)}
}

// loopGrad computes ∇(F, u) row by row with the loop's primitives
// (expandRow, the row softmax and jvpRow), as steps 2 and 5 do.
func loopGrad(ds []float64, rows, n int, f, u []float64, c int) []float64 {
	out := make([]float64, n*c)
	a, s := make([]float64, c), make([]float64, c)
	for i := 0; i < n; i++ {
		if expandRow(ds, rows, n, i, u, c, a) {
			opkit.SoftmaxRow(f[i*c:(i+1)*c], s, 1)
			jvpRow(s, a, 1, out[i*c:(i+1)*c])
		}
	}
	return out
}

// TestClosedFormMatchesAutodiff builds ⟨Δs SF(F), u⟩ from gorgonia's
// built-in ops (SoftMax, Mul, HadamardProd, Sum), lets gorgonia
// differentiate it, and checks that the closed form the loop computes
// (loopGrad) equals that gradient and central differences.
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
		testutil.Run(t, g)
		cv := loopGrad(oc.ds.d64, oc.ds.Rows(), oc.n, oc.f, oc.u, oc.c)
		testutil.AllClose(t, dc.name+": closed form vs autodiff", cv, testutil.ToF64(auto), 1e-12, 1e-9)
		testutil.AllClose(t, dc.name+": closed form vs naive", cv, naiveGrad(oc.d, oc.rows, oc.f, oc.u, oc.n, oc.c), 1e-12, 1e-9)
		num := testutil.NumGrad(func() float64 { return naiveObjective(oc.d, oc.rows, oc.f, oc.u, oc.n, oc.c) }, oc.f, 1e-6)
		testutil.AllClose(t, dc.name+": closed form vs finite differences", cv, num, 1e-9, 1e-5)
	}
}

// TestProjectLinf checks the loop's projection (step 4), including
// entries exactly at the boundary and r = 0, in float64 and float32.
func TestProjectLinf(t *testing.T) {
	x := []float64{-3, -1, -0.5, 0, 0.25, 1, 2, 1.0 / 1024}
	for _, r := range []float64{1, 0} {
		got := make([]float64, len(x))
		projKernel(x, got, r)
		testutil.AllClose(t, fmt.Sprintf("proj r=%v float64", r), got, naiveProj(x, r), 0, 0)
		x32, got32 := make([]float32, len(x)), make([]float32, len(x))
		for i, v := range x {
			x32[i] = float32(v)
		}
		projKernel(x32, got32, r)
		for i, v := range got32 {
			if float64(v) != naiveProj(x, r)[i] {
				t.Errorf("proj r=%v float32 [%d] = %v, want %v", r, i, v, naiveProj(x, r)[i])
			}
		}
	}
	testutil.AllClose(t, "r = 1 spelled out", naiveProj(x, 1), []float64{-1, -1, -0.5, 0, 0.25, 1, 1, 1.0 / 1024}, 0, 0)
}

// TestClosedFormExtremeLogits: logits of ±1e4 give a finite ∇, and a
// saturated row's softmax Jacobian is 0.
func TestClosedFormExtremeLogits(t *testing.T) {
	rng := rand.New(rand.NewSource(8))
	sens := randSens(rng, 6, 2, 0)
	ds := mustDelta(t, sens, false)
	fv := []float64{1e4, -1e4, -1e4, 1e4, 1e4, 1e4, 0, 1e4, -1e4, 0, 5e3, -5e3}
	y := loopGrad(ds.d64, 1, 6, fv, []float64{3, -2}, 2)
	for i, x := range y {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			t.Errorf("∇[%d] = %v", i, x)
		}
	}
	if y[0] != 0 || y[1] != 0 {
		t.Errorf("saturated row gives ∇ = %v, want 0", y[:2])
	}
}

// TestStepsOpHashesDistinguishParameters: the same input with another Δs
// or another training mode must stay another node.
func TestStepsOpHashesDistinguishParameters(t *testing.T) {
	rng := rand.New(rand.NewSource(9))
	gr := randomGraph(t, rng, 4, 4)
	adj := graph.NormalizedAdjacency(gr)
	sens := []int{0, 1, 1, 0}
	l1, err := New(adj, sens, DefaultConfig())
	require.NoError(t, err)
	l2, err := New(adj, sens, DefaultConfig())
	require.NoError(t, err)
	g := G.NewGraph()
	f := G.NewMatrix(g, tensor.Float64, G.WithShape(4, 2), G.WithName("F"), G.WithInit(G.Zeroes()))
	a, err := G.ApplyOp(newStepsOp(l1, true, nil), f)
	require.NoError(t, err)
	b, err := G.ApplyOp(newStepsOp(l2, true, nil), f)
	require.NoError(t, err)
	if a == b {
		t.Error("the fused op with two Δs became one node")
	}
	if newStepsOp(l1, true, nil).Hashcode() == newStepsOp(l1, false, nil).Hashcode() {
		t.Error("the fused op's hash ignores constDual")
	}
}

// TestForwardInputErrors: Forward refuses inputs that are not n × c
// float matrices with c ≥ 2.
func TestForwardInputErrors(t *testing.T) {
	rng := rand.New(rand.NewSource(10))
	l, err := New(graph.NormalizedAdjacency(randomGraph(t, rng, 3, 3)), []int{0, 1, 1}, DefaultConfig())
	require.NoError(t, err)
	l.SetPhase(nil)
	g := G.NewGraph()
	bad := map[string]*G.Node{
		"rows":   G.NewMatrix(g, tensor.Float64, G.WithShape(4, 2), G.WithName("F4")),
		"cols":   G.NewMatrix(g, tensor.Float64, G.WithShape(3, 1), G.WithName("F1")),
		"vector": G.NewVector(g, tensor.Float64, G.WithShape(3), G.WithName("v")),
		"ints":   G.NewMatrix(g, tensor.Int, G.WithShape(3, 2), G.WithName("ints")),
		"nil":    nil,
	}
	for name, x := range bad {
		if _, err := l.Forward(x); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}
