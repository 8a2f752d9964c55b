package layers

import (
	"math"
	"math/rand"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/fairmp/fairmp/internal/testutil"
	"github.com/stretchr/testify/require"
)

// naiveCE is the textbook mean cross-entropy, without max-subtraction.
func naiveCE(z []float64, c int, labels, idx []int) float64 {
	s := 0.0
	for _, i := range idx {
		e := 0.0
		for j := 0; j < c; j++ {
			e += math.Exp(z[i*c+j])
		}
		s += math.Log(e) - z[i*c+labels[i]]
	}
	return s / float64(len(idx))
}

func ceRun(t *testing.T, dt tensor.Dtype, zv []float64, n, c int, labels, idx []int) (float64, []float64) {
	t.Helper()
	g := G.NewGraph()
	z := G.NewMatrix(g, dt, G.WithShape(n, c), G.WithName("z"), G.WithValue(testutil.Tensor(dt, zv, n, c)))
	loss, err := CrossEntropy(z, labels, idx)
	require.NoError(t, err)
	var lv G.Value
	G.Read(loss, &lv)
	gr, err := G.Grad(loss, z)
	require.NoError(t, err)
	testutil.Run(t, g)
	return testutil.ToF64(lv)[0], testutil.ToF64(gr[0].Value())
}

func TestCrossEntropy(t *testing.T) {
	rng := rand.New(rand.NewSource(5))
	n, c := 20, 3
	zv := testutil.RandSlice(rng, n*c, -3, 3)
	labels := make([]int, n)
	for i := range labels {
		labels[i] = rng.Intn(c)
	}
	labels[1] = -1 // unknown, outside idx
	idx := []int{0, 2, 3, 5, 7, 11, 13, 2}
	want := naiveCE(zv, c, labels, idx)
	num := testutil.NumGrad(func() float64 { return naiveCE(zv, c, labels, idx) }, zv, 1e-6)
	for _, dt := range testutil.Dtypes {
		l, gr := ceRun(t, dt, zv, n, c, labels, idx)
		atol, rtol := testutil.Tol(dt)
		if !testutil.Close(l, want, atol, rtol) {
			t.Errorf("%v: loss %v, want %v", dt, l, want)
		}
		testutil.AllClose(t, dt.String()+" dZ", gr, num, 1e-7+atol, 1e-6+rtol)
	}
}

// TestCrossEntropyStable checks logits far beyond exp's range.
func TestCrossEntropyStable(t *testing.T) {
	zv := []float64{1000, 0, -1000, 1000, 500, 500}
	for _, dt := range testutil.Dtypes {
		l, gr := ceRun(t, dt, zv, 3, 2, []int{1, 0, 0}, []int{0, 1, 2})
		// rows (1000, 0) y=1, (−1000, 1000) y=0, (500, 500) y=0:
		// losses 1000, 2000 and log 2.
		want := (3000 + math.Ln2) / 3
		if !testutil.Close(l, want, 1e-6, 1e-6) {
			t.Errorf("%v: loss %v, want %v", dt, l, want)
		}
		testutil.AllClose(t, dt.String()+" dZ", gr, []float64{1.0 / 3, -1.0 / 3, -1.0 / 3, 1.0 / 3, -1.0 / 6, 1.0 / 6}, 1e-7, 1e-6)
	}
}

func TestCrossEntropyErrors(t *testing.T) {
	g := G.NewGraph()
	z := G.NewMatrix(g, tensor.Float64, G.WithShape(3, 2), G.WithName("z"))
	cases := map[string]struct {
		labels, idx []int
	}{
		"short labels":  {[]int{0, 1}, []int{0}},
		"empty idx":     {[]int{0, 1, 0}, nil},
		"idx too large": {[]int{0, 1, 0}, []int{3}},
		"negative idx":  {[]int{0, 1, 0}, []int{-1}},
		"label = c":     {[]int{0, 2, 0}, []int{1}},
		"unknown label": {[]int{0, -1, 0}, []int{1}},
	}
	for name, c := range cases {
		if _, err := CrossEntropy(z, c.labels, c.idx); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	v := G.NewVector(g, tensor.Float64, G.WithShape(3), G.WithName("v"))
	if _, err := CrossEntropy(v, []int{0, 0, 0}, []int{0}); err == nil {
		t.Error("vector logits accepted")
	}
}

// TestCEGradParallelSameValues checks ceGrad's parallel rows against its
// one-loop path (a repeated row forces it), bit for bit.
func TestCEGradParallelSameValues(t *testing.T) {
	const n, c = 20000, 2
	z := make([]float32, n*c)
	labels := make([]int, n)
	for i := range z {
		z[i] = float32(math.Cos(float64(i)) * 3)
	}
	var idx []int
	for i := 0; i < n; i++ {
		labels[i] = (i / 3) % c
		if i%5 != 0 {
			idx = append(idx, i)
		}
	}
	par, one := make([]float32, n*c), make([]float32, n*c)
	ceGrad(par, z, labels, idx, c, 0.37, true)
	ceGrad(one, z, labels, idx, c, 0.37, false)
	for i := range one {
		require.Equal(t, math.Float32bits(one[i]), math.Float32bits(par[i]), "element %d", i)
	}
}
