package graph

import (
	"fmt"
	"math"
	"math/rand"
	"runtime"
	"strings"
	"testing"

	"github.com/fairmp/fairmp/internal/testutil"
	"github.com/stretchr/testify/require"
)

// randomGraph has n nodes, m random edge draws and (for n > 10) some
// isolated nodes: the last n/10 nodes get no edge.
func randomGraph(t *testing.T, rng *rand.Rand, n, m int) *Graph {
	t.Helper()
	k := n - n/10
	edges := make([][2]int, m)
	for e := range edges {
		edges[e] = [2]int{rng.Intn(k), rng.Intn(k)}
	}
	g, err := FromEdges(n, edges)
	require.NoError(t, err)
	return g
}

// denseNorm is the reference: D^-1/2 (A + wI) D^-1/2 (or without
// normalisation / self-loops), dense, from the edge list.
func denseNorm(g *Graph, loops bool, w float64, normalize bool) []float64 {
	n := g.N()
	a := make([]float64, n*n)
	for _, e := range g.Edges() {
		a[e[0]*n+e[1]] = 1
		a[e[1]*n+e[0]] = 1
	}
	if loops {
		for i := 0; i < n; i++ {
			a[i*n+i] = w
		}
	}
	if !normalize {
		return a
	}
	d := make([]float64, n)
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			d[i] += a[i*n+j]
		}
	}
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			if a[i*n+j] != 0 {
				a[i*n+j] /= math.Sqrt(d[i]) * math.Sqrt(d[j])
			}
		}
	}
	return a
}

func TestNormalizedAdjacency(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	for _, size := range [][2]int{{1, 0}, {5, 4}, {30, 40}, {60, 300}} {
		g := randomGraph(t, rng, size[0], size[1])
		m := NormalizedAdjacency(g)
		testutil.AllClose(t, fmt.Sprintf("n=%d", size[0]), m.Dense(), denseNorm(g, true, 1, true), 1e-15, 1e-14)
		if !m.Symmetric() {
			t.Errorf("n=%d: not symmetric", size[0])
		}
		if m.NNZ() != 2*g.NumEdges()+g.N() {
			t.Errorf("n=%d: %d stored entries, want %d", size[0], m.NNZ(), 2*g.NumEdges()+g.N())
		}
		// Isolated nodes keep their self-loop of weight 1.
		for i := 0; i < g.N(); i++ {
			if g.Degree(i) == 0 {
				if v, ok := m.At(i, i); !ok || v != 1 {
					t.Errorf("isolated node %d: Ã_ii = %v (%v), want 1", i, v, ok)
				}
			}
		}
	}
}

func TestGCNNormVariants(t *testing.T) {
	rng := rand.New(rand.NewSource(8))
	g := randomGraph(t, rng, 40, 80)
	for _, o := range []NormOptions{
		{AddSelfLoops: true, SelfLoopWeight: 2, Normalize: true},    // improved
		{AddSelfLoops: true, SelfLoopWeight: 0.5, Normalize: false}, // A + 0.5 I
		{AddSelfLoops: false, SelfLoopWeight: 0, Normalize: true},   // D^-1/2 A D^-1/2
		{AddSelfLoops: false, Normalize: false},                     // A
	} {
		m, err := GCNNorm(g, o)
		require.NoError(t, err)
		testutil.AllClose(t, fmt.Sprintf("%+v", o), m.Dense(), denseNorm(g, o.AddSelfLoops, o.SelfLoopWeight, o.Normalize), 1e-15, 1e-14)
		if !m.Symmetric() {
			t.Errorf("%+v: not symmetric", o)
		}
	}
	a, _ := GCNNorm(g, NormOptions{})
	testutil.AllClose(t, "Adjacency", Adjacency(g).Dense(), a.Dense(), 0, 0)
	// Without self-loops an isolated node has an empty row.
	m, _ := GCNNorm(g, NormOptions{Normalize: true})
	if m.Indptr()[40] != m.Indptr()[39] {
		t.Errorf("isolated node 39 has %d entries, want 0", m.Indptr()[40]-m.Indptr()[39])
	}
	for _, w := range []float64{0, -1, math.NaN(), math.Inf(1)} {
		if _, err := GCNNorm(g, NormOptions{AddSelfLoops: true, SelfLoopWeight: w}); err == nil || !strings.Contains(err.Error(), "SelfLoopWeight") {
			t.Errorf("weight %v: error %v", w, err)
		}
	}
}

func randomCOO(rng *rand.Rand, rows, cols, m int) (r, c []int, v []float64) {
	r, c, v = make([]int, m), make([]int, m), make([]float64, m)
	for k := range r {
		r[k], c[k], v[k] = rng.Intn(rows), rng.Intn(cols), rng.NormFloat64()
	}
	return
}

func TestNewMatrixAndTranspose(t *testing.T) {
	rng := rand.New(rand.NewSource(9))
	rows, cols := 23, 17
	r, c, v := randomCOO(rng, rows, cols, 200) // many duplicates
	m, err := NewMatrix(rows, cols, r, c, v)
	require.NoError(t, err)
	want := make([]float64, rows*cols)
	for k := range r {
		want[r[k]*cols+c[k]] += v[k]
	}
	testutil.AllClose(t, "dense", m.Dense(), want, 1e-14, 0)
	if rr, cc := m.Dims(); rr != rows || cc != cols || m.Symmetric() {
		t.Errorf("dims %d × %d, symmetric %v", rr, cc, m.Symmetric())
	}
	for i := 0; i < rows; i++ {
		for p := m.Indptr()[i] + 1; p < m.Indptr()[i+1]; p++ {
			if m.Indices()[p] <= m.Indices()[p-1] {
				t.Fatalf("row %d: columns not strictly ascending", i)
			}
		}
	}
	for k, x := range m.Values64() {
		if m.Values32()[k] != float32(x) {
			t.Fatalf("Values32[%d] = %v, want float32(%v)", k, m.Values32()[k], x)
		}
	}
	mt := m.Transpose()
	tr := make([]float64, rows*cols)
	for i := 0; i < rows; i++ {
		for j := 0; j < cols; j++ {
			tr[j*rows+i] = want[i*cols+j]
		}
	}
	testutil.AllClose(t, "transpose", mt.Dense(), tr, 1e-14, 0)
	if rr, cc := mt.Dims(); rr != cols || cc != rows || mt.ID() == m.ID() {
		t.Errorf("transpose dims %d × %d, id %d vs %d", rr, cc, mt.ID(), m.ID())
	}
	testutil.AllClose(t, "transpose²", mt.Transpose().Dense(), m.Dense(), 0, 0)

	// A symmetric matrix is detected and is its own transpose.
	s, err := NewMatrix(3, 3, []int{0, 1, 2, 1}, []int{1, 0, 2, 1}, []float64{2, 2, 5, 1})
	if err != nil || !s.Symmetric() || s.Transpose() != s {
		t.Errorf("symmetric matrix: %v, symmetric %v", err, s.Symmetric())
	}
	if v, ok := s.At(0, 1); !ok || v != 2 {
		t.Errorf("At(0, 1) = %v, %v", v, ok)
	}
	if _, ok := s.At(0, 0); ok {
		t.Error("At(0, 0) reported stored")
	}
}

func TestNewMatrixErrors(t *testing.T) {
	for _, c := range []struct {
		rows, cols int
		r, c       []int
		v          []float64
		want       string
	}{
		{0, 3, nil, nil, nil, "size 0 × 3, want both > 0"},
		{3, -1, nil, nil, nil, "size 3 × -1"},
		{3, 3, []int{0}, []int{0, 1}, []float64{1}, "1 row ids, 2 column ids, 1 values"},
		{3, 3, []int{0, 3}, []int{0, 1}, []float64{1, 1}, "entry 1 at (3, 1), want row in [0, 3)"},
		{3, 3, []int{0, 1}, []int{-1, 1}, []float64{1, 1}, "entry 0 at (0, -1)"},
		{3, 3, []int{0, 1}, []int{0, 1}, []float64{1, math.NaN()}, "entry 1 at (1, 1) is NaN, want a finite value"},
		{3, 3, []int{2, 2}, []int{1, 1}, []float64{math.MaxFloat64, math.MaxFloat64}, "sum to +Inf"},
	} {
		_, err := NewMatrix(c.rows, c.cols, c.r, c.c, c.v)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("error %v, want %q", err, c.want)
		}
	}
}

func denseMul(a []float64, n, k int, x []float64, c int) []float64 {
	out := make([]float64, n*c)
	for i := 0; i < n; i++ {
		for j := 0; j < k; j++ {
			for q := 0; q < c; q++ {
				out[i*c+q] += a[i*k+j] * x[j*c+q]
			}
		}
	}
	return out
}

// TestMulDense checks both precisions against a dense product, on a
// matrix large enough for the parallel path, and that the result does not
// depend on the number of workers.
func TestMulDense(t *testing.T) {
	rng := rand.New(rand.NewSource(10))
	rows, cols := 700, 500
	r, c, v := randomCOO(rng, rows, cols, 20000)
	m, _ := NewMatrix(rows, cols, r, c, v)
	dense := m.Dense()
	for _, w := range []int{1, 2, 3, 7} {
		x := testutil.RandSlice(rng, cols*w, -1, 1)
		want := denseMul(dense, rows, cols, x, w)
		out := make([]float64, rows*w)
		for k := range out {
			out[k] = math.NaN() // overwritten
		}
		m.MulDense64(out, x, w)
		testutil.AllClose(t, fmt.Sprintf("f64 w=%d", w), out, want, 1e-12, 1e-12)

		x32 := make([]float32, len(x))
		for k := range x {
			x32[k] = float32(x[k])
		}
		out32 := make([]float32, rows*w)
		m.MulDense32(out32, x32, w)
		testutil.AllClose(t, fmt.Sprintf("f32 w=%d", w), testutil.ToF64(out32), want, 1e-4, 1e-4)

		prev := runtime.GOMAXPROCS(1)
		one := make([]float64, rows*w)
		m.MulDense64(one, x, w)
		runtime.GOMAXPROCS(4)
		four := make([]float64, rows*w)
		m.MulDense64(four, x, w)
		runtime.GOMAXPROCS(prev)
		for k := range one {
			if one[k] != out[k] || four[k] != out[k] {
				t.Fatalf("w=%d: result depends on the worker count at %d", w, k)
			}
		}
	}
}
