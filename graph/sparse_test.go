package graph

import (
	"fmt"
	"math"
	"math/rand"
	"runtime"
	"testing"

	"github.com/fairmp/fairmp/internal/testutil"
	"github.com/stretchr/testify/assert"
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
		assert.True(t, m.Symmetric(), "n=%d: not symmetric", size[0])
		assert.Equal(t, 2*g.NumEdges()+g.N(), m.NNZ(), "n=%d: stored entries", size[0])
		// Isolated nodes keep their self-loop of weight 1.
		for i := 0; i < g.N(); i++ {
			if g.Degree(i) == 0 {
				v, ok := m.At(i, i)
				assert.True(t, ok, "isolated node %d: Ã_ii not stored", i)
				assert.Equal(t, 1.0, v, "isolated node %d: Ã_ii", i)
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
		assert.True(t, m.Symmetric(), "%+v: not symmetric", o)
	}
	a, err := GCNNorm(g, NormOptions{})
	require.NoError(t, err)
	assert.Equal(t, Adjacency(g).Dense(), a.Dense())
	// Without self-loops an isolated node has an empty row.
	m, err := GCNNorm(g, NormOptions{Normalize: true})
	require.NoError(t, err)
	assert.Equal(t, m.Indptr()[39], m.Indptr()[40], "isolated node 39 has entries")
	for _, w := range []float64{0, -1, math.NaN(), math.Inf(1)} {
		_, err := GCNNorm(g, NormOptions{AddSelfLoops: true, SelfLoopWeight: w})
		assert.ErrorContains(t, err, "SelfLoopWeight", "weight %v", w)
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
	rr, cc := m.Dims()
	assert.Equal(t, [2]int{rows, cols}, [2]int{rr, cc}, "dims")
	assert.False(t, m.Symmetric())
	for i := 0; i < rows; i++ {
		for p := m.Indptr()[i] + 1; p < m.Indptr()[i+1]; p++ {
			require.Greater(t, m.Indices()[p], m.Indices()[p-1], "row %d: columns not strictly ascending", i)
		}
	}
	require.Len(t, m.Values32(), len(m.Values64()))
	for k, x := range m.Values64() {
		require.Equal(t, float32(x), m.Values32()[k], "Values32[%d]", k)
	}
	mt := m.Transpose()
	tr := make([]float64, rows*cols)
	for i := 0; i < rows; i++ {
		for j := 0; j < cols; j++ {
			tr[j*rows+i] = want[i*cols+j]
		}
	}
	testutil.AllClose(t, "transpose", mt.Dense(), tr, 1e-14, 0)
	rr, cc = mt.Dims()
	assert.Equal(t, [2]int{cols, rows}, [2]int{rr, cc}, "transpose dims")
	assert.NotEqual(t, m.ID(), mt.ID(), "transpose has the same id")
	assert.Equal(t, m.Dense(), mt.Transpose().Dense(), "transpose²")

	// A symmetric matrix is detected and is its own transpose.
	s, err := NewMatrix(3, 3, []int{0, 1, 2, 1}, []int{1, 0, 2, 1}, []float64{2, 2, 5, 1})
	require.NoError(t, err)
	assert.True(t, s.Symmetric())
	assert.Same(t, s, s.Transpose())
	v01, ok := s.At(0, 1)
	assert.True(t, ok, "At(0, 1) stored")
	assert.Equal(t, 2.0, v01)
	_, ok = s.At(0, 0)
	assert.False(t, ok, "At(0, 0) reported stored")
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
		assert.ErrorContains(t, err, c.want)
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
	m, err := NewMatrix(rows, cols, r, c, v)
	require.NoError(t, err)
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
		assert.Equal(t, out, one, "w=%d: result depends on the worker count", w)
		assert.Equal(t, out, four, "w=%d: result depends on the worker count", w)
	}
}
