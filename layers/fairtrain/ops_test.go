package fairtrain

import (
	"math"
	"math/rand"
	"testing"

	"github.com/fairmp/fairmp/internal/testutil"
	"github.com/stretchr/testify/require"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

func softmax(row []float64) []float64 {
	m := math.Inf(-1)
	for _, v := range row {
		m = math.Max(m, v)
	}
	p := make([]float64, len(row))
	s := 0.0
	for j, v := range row {
		p[j] = math.Exp(v - m)
		s += p[j]
	}
	for j := range p {
		p[j] /= s
	}
	return p
}

// naiveGap is max − min over groups of the mean softmax probability of
// class pos over idx (sens −1 skipped).
func naiveGap(z []float64, c int, sens, idx []int, pos int) float64 {
	sum := map[int]float64{}
	cnt := map[int]float64{}
	for _, i := range idx {
		if sens[i] < 0 {
			continue
		}
		sum[sens[i]] += softmax(z[i*c : (i+1)*c])[pos]
		cnt[sens[i]]++
	}
	hi, lo := math.Inf(-1), math.Inf(1)
	for g := range sum {
		m := sum[g] / cnt[g]
		hi, lo = math.Max(hi, m), math.Min(lo, m)
	}
	return hi - lo
}

// scalarGrad runs f(z) for a z input node holding zv and returns its
// value and gradient with respect to z.
func scalarGrad(t *testing.T, dt tensor.Dtype, zv []float64, n, c int, f func(z *G.Node) (*G.Node, error)) (float64, []float64) {
	t.Helper()
	g := G.NewGraph()
	z := G.NewMatrix(g, dt, G.WithShape(n, c), G.WithName("z"), G.WithValue(testutil.Tensor(dt, zv, n, c)))
	out, err := f(z)
	require.NoError(t, err)
	var v G.Value
	G.Read(out, &v)
	gr, err := G.Grad(out, z)
	require.NoError(t, err)
	testutil.Run(t, g)
	return testutil.ToF64(v)[0], testutil.ToF64(gr[0].Value())
}

func TestDPGap(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	n, c := 30, 3
	zv := testutil.RandSlice(rng, n*c, -2, 2)
	sens := make([]int, n)
	for i := range sens {
		sens[i] = rng.Intn(3)
	}
	sens[4], sens[9] = -1, -1
	idx := []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 20, 21, 22, 23, 24, 3}
	for _, pos := range []int{1, 2} {
		want := naiveGap(zv, c, sens, idx, pos)
		num := testutil.NumGrad(func() float64 { return naiveGap(zv, c, sens, idx, pos) }, zv, 1e-6)
		for _, dt := range testutil.Dtypes {
			v, gr := scalarGrad(t, dt, zv, n, c, func(z *G.Node) (*G.Node, error) { return dpGap(z, sens, idx, pos) })
			atol, rtol := testutil.Tol(dt)
			if !testutil.Close(v, want, atol, rtol) {
				t.Errorf("%v pos %d: gap %v, want %v", dt, pos, v, want)
			}
			gtol := 1e-7
			if dt == tensor.Float32 {
				gtol = 1e-5
			}
			testutil.AllClose(t, dt.String()+" gradient", gr, num, gtol, 1e-4)
		}
		if want < 0.01 {
			t.Fatalf("test data gives a gap of %v: too small to test anything", want)
		}
	}
	// Large logits stay finite.
	big := make([]float64, n*c)
	for i := range big {
		big[i] = 1e4 * float64(i%3-1)
	}
	v, gr := scalarGrad(t, tensor.Float32, big, n, c, func(z *G.Node) (*G.Node, error) { return dpGap(z, sens, idx, 1) })
	if math.IsNaN(v) || math.IsInf(v, 0) {
		t.Errorf("gap of large logits = %v", v)
	}
	for _, x := range gr {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			t.Fatalf("gradient of large logits holds %v", x)
		}
	}
}

func TestDPGapErrors(t *testing.T) {
	g := G.NewGraph()
	z := G.NewMatrix(g, tensor.Float64, G.WithShape(4, 2), G.WithName("z"), G.WithInit(G.Zeroes()))
	for name, f := range map[string]func() error{
		"one group":   func() error { _, err := dpGap(z, []int{0, 0, 0, -1}, []int{0, 1, 2, 3}, 1); return err },
		"gap in ids":  func() error { _, err := dpGap(z, []int{0, 2, 0, 2}, []int{0, 1, 2, 3}, 1); return err },
		"sens length": func() error { _, err := dpGap(z, []int{0, 1}, []int{0, 1}, 1); return err },
		"index":       func() error { _, err := dpGap(z, []int{0, 1, 0, 1}, []int{0, 4}, 1); return err },
		"positive":    func() error { _, err := dpGap(z, []int{0, 1, 0, 1}, []int{0, 1}, 2); return err },
		"sens value":  func() error { _, err := dpGap(z, []int{0, 1, -2, 1}, []int{0, 1, 2}, 1); return err },
	} {
		if f() == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func naiveBCE(a []float64, y []int) float64 {
	s := 0.0
	for k, v := range a {
		p := 1 / (1 + math.Exp(-v))
		if y[k] == 1 {
			s -= math.Log(p)
		} else {
			s -= math.Log(1 - p)
		}
	}
	return s / float64(len(a))
}

func TestBCEWithLogits(t *testing.T) {
	rng := rand.New(rand.NewSource(2))
	m := 17
	av := testutil.RandSlice(rng, m, -4, 4)
	y := make([]int, m)
	for k := range y {
		y[k] = rng.Intn(2)
	}
	want := naiveBCE(av, y)
	num := testutil.NumGrad(func() float64 { return naiveBCE(av, y) }, av, 1e-6)
	for _, dt := range testutil.Dtypes {
		v, gr := scalarGrad(t, dt, av, m, 1, func(a *G.Node) (*G.Node, error) { return bceWithLogits(a, y) })
		atol, rtol := testutil.Tol(dt)
		if !testutil.Close(v, want, atol, rtol) {
			t.Errorf("%v: BCE %v, want %v", dt, v, want)
		}
		testutil.AllClose(t, dt.String()+" gradient", gr, num, 1e-6, 1e-4)
	}
	// Stable for logits where the naive form overflows: a = ±800.
	v, gr := scalarGrad(t, tensor.Float64, []float64{800, -800}, 2, 1, func(a *G.Node) (*G.Node, error) { return bceWithLogits(a, []int{0, 1}) })
	if !testutil.Close(v, 800, 1e-9, 1e-12) || !testutil.Close(gr[0], 0.5, 1e-12, 0) || !testutil.Close(gr[1], -0.5, 1e-12, 0) {
		t.Errorf("BCE of ±800 with wrong targets: %v, gradient %v; want 800, [0.5 −0.5]", v, gr)
	}
	g := G.NewGraph()
	a := G.NewMatrix(g, tensor.Float64, G.WithShape(2, 1), G.WithName("a"), G.WithInit(G.Zeroes()))
	if _, err := bceWithLogits(a, []int{0, 2}); err == nil {
		t.Errorf("target 2 accepted")
	}
	if _, err := bceWithLogits(a, []int{0}); err == nil {
		t.Errorf("1 target for 2 rows accepted")
	}
}

// pathMean is g(λ) = mean_k softmax(λ z[i0_k] + (1−λ) z[i1_k])[pos].
func pathMean(z []float64, c int, i0, i1 []int, lambda float64, pos int) float64 {
	s := 0.0
	row := make([]float64, c)
	for k := range i0 {
		for j := range row {
			row[j] = lambda*z[i0[k]*c+j] + (1-lambda)*z[i1[k]*c+j]
		}
		s += softmax(row)[pos]
	}
	return s / float64(len(i0))
}

// naiveSlope is the closed form |mean_k p_pos (d_pos − Σ_j p_j d_j)|.
func naiveSlope(z []float64, c int, i0, i1 []int, lambda float64, pos int) float64 {
	s := 0.0
	row := make([]float64, c)
	d := make([]float64, c)
	for k := range i0 {
		for j := range row {
			a, b := z[i0[k]*c+j], z[i1[k]*c+j]
			row[j] = lambda*a + (1-lambda)*b
			d[j] = a - b
		}
		p := softmax(row)
		t := 0.0
		for j := range p {
			t += p[j] * d[j]
		}
		s += p[pos] * (d[pos] - t)
	}
	return math.Abs(s / float64(len(i0)))
}

// TestMixupSlope checks the penalty against the derivative of the path
// mean by central differences in λ, and its gradient with respect to the
// logits (the route to the parameters) by central differences in z.
func TestMixupSlope(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	n, c := 40, 3
	zv := testutil.RandSlice(rng, n*c, -2, 2)
	var g0, g1 []int
	for i := 0; i < n; i++ {
		if i%3 == 0 {
			g1 = append(g1, i)
		} else {
			g0 = append(g0, i)
		}
	}
	for _, dt := range testutil.Dtypes {
		s := newMixSampler(g0, g1, 9, 2, 2, 7)
		v, gr := scalarGrad(t, dt, zv, n, c, func(z *G.Node) (*G.Node, error) { return mixupSlope(z, s, n, 1) })
		if s.draws != 1 {
			t.Fatalf("%d draws in one run, want 1", s.draws)
		}
		i0, i1, l := s.i0, s.i1, s.lambda
		h := 1e-5
		fd := math.Abs((pathMean(zv, c, i0, i1, l+h, 1) - pathMean(zv, c, i0, i1, l-h, 1)) / (2 * h))
		tol := 1e-8
		if dt == tensor.Float32 {
			tol = 1e-5
		}
		if !testutil.Close(v, fd, tol, 1e-5) || fd < 1e-3 {
			t.Errorf("%v: slope %v, d/dλ of the path mean %v", dt, v, fd)
		}
		num := testutil.NumGrad(func() float64 { return naiveSlope(zv, c, i0, i1, l, 1) }, zv, 1e-6)
		testutil.AllClose(t, dt.String()+" gradient", gr, num, 10*tol, 1e-4)
		nonzero := 0
		for _, x := range gr {
			if x != 0 {
				nonzero++
			}
		}
		if nonzero < 2*9 {
			t.Errorf("%v: %d non-zero gradient entries, want the rows of 18 sampled nodes", dt, nonzero)
		}
	}
}

func TestMixSamplerDistinctAndBeta(t *testing.T) {
	g0 := []int{0, 1, 2, 3, 4, 5}
	g1 := []int{10, 11, 12}
	s := newMixSampler(g0, g1, 3, 2, 2, 1)
	sum, sumSq := 0.0, 0.0
	const draws = 20000
	for d := 0; d < draws; d++ {
		s.draw()
		seen := map[int]bool{}
		for k := 0; k < 3; k++ {
			if seen[s.i0[k]] || s.i0[k] > 5 || s.i1[k] < 10 {
				t.Fatalf("draw %d: pairs %v %v", d, s.i0, s.i1)
			}
			seen[s.i0[k]] = true
		}
		sum += s.lambda
		sumSq += s.lambda * s.lambda
	}
	mean := sum / draws
	variance := sumSq/draws - mean*mean
	// Beta(2, 2): mean 1/2, variance 1/20.
	if math.Abs(mean-0.5) > 0.01 || math.Abs(variance-0.05) > 0.003 {
		t.Errorf("λ mean %.4f variance %.4f, want 0.5 and 0.05", mean, variance)
	}
	a := newMixSampler(g0, g1, 3, 2, 2, 9)
	b := newMixSampler(g0, g1, 3, 2, 2, 9)
	for d := 0; d < 5; d++ {
		a.draw()
		b.draw()
		if a.lambda != b.lambda || a.i0[0] != b.i0[0] || a.i1[2] != b.i1[2] {
			t.Fatalf("same seed, different draws")
		}
	}
}
