package graph

import (
	"fmt"
	"math/rand"
	"testing"

	"github.com/stretchr/testify/require"
)

// uniformShaped returns the normalised adjacency of a seeded uniform
// random graph of n nodes and m undirected edges, the shapes of the
// real data sets (PyTorch's peer times the same kind of graph).
func uniformShaped(tb testing.TB, n, m int) *Matrix {
	tb.Helper()
	rng := rand.New(rand.NewSource(0))
	seen := make(map[[2]int]bool, m)
	edges := make([][2]int, 0, m)
	for len(edges) < m {
		a, b := rng.Intn(n), rng.Intn(n)
		if a == b {
			continue
		}
		if a > b {
			a, b = b, a
		}
		if seen[[2]int{a, b}] {
			continue
		}
		seen[[2]int{a, b}] = true
		edges = append(edges, [2]int{a, b})
	}
	g, err := FromEdges(n, edges)
	require.NoError(tb, err)
	return NormalizedAdjacency(g)
}

// pokecShaped has the Pokec-z shape (67,796 nodes, 617,958 edges).
func pokecShaped(tb testing.TB) *Matrix { return uniformShaped(tb, 67796, 617958) }

// BenchmarkMulDense32 measures Ã·X on the Pokec-z shape. The reported
// MB/s counts the bytes a single pass must move: the CSR arrays (4-byte
// column ids and values, 8-byte row pointers), X read once, Y written once.
func BenchmarkMulDense32(b *testing.B) {
	a := pokecShaped(b)
	rows, cols := a.Dims()
	for _, c := range []int{1, 2, 16, 64} {
		b.Run(fmt.Sprintf("cols=%d", c), func(b *testing.B) {
			rng := rand.New(rand.NewSource(1))
			x := make([]float32, cols*c)
			for i := range x {
				x[i] = float32(rng.NormFloat64())
			}
			out := make([]float32, rows*c)
			b.SetBytes(int64(a.NNZ()*8 + (rows+1)*8 + cols*c*4 + rows*c*4))
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				a.MulDense32(out, x, c)
			}
		})
	}
}

func BenchmarkMulDense64(b *testing.B) {
	a := pokecShaped(b)
	rows, cols := a.Dims()
	for _, c := range []int{2, 64} {
		b.Run(fmt.Sprintf("cols=%d", c), func(b *testing.B) {
			rng := rand.New(rand.NewSource(1))
			x := make([]float64, cols*c)
			for i := range x {
				x[i] = rng.NormFloat64()
			}
			out := make([]float64, rows*c)
			b.SetBytes(int64(a.NNZ()*12 + (rows+1)*8 + cols*c*8 + rows*c*8))
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				a.MulDense64(out, x, c)
			}
		})
	}
}

// BenchmarkMulDenseBail measures Ã·X with two columns (FMP's logits) on
// Bail's shape (18,876 nodes, 311,870 edges: 34 entries a row), float32
// and float64: the product FMP runs 2K times a training epoch.
func BenchmarkMulDenseBail(b *testing.B) { benchCols2(b, uniformShaped(b, 18876, 311870)) }

// BenchmarkMulDenseCredit is BenchmarkMulDenseBail on Credit's shape
// (30,000 nodes, 137,377 edges: 10 entries a row, where the rows' order
// of summation matters most; see spkern.OrderWindow).
func BenchmarkMulDenseCredit(b *testing.B) { benchCols2(b, uniformShaped(b, 30000, 137377)) }

func benchCols2(b *testing.B, a *Matrix) {
	rows, cols := a.Dims()
	const c = 2
	rng := rand.New(rand.NewSource(1))
	x64 := make([]float64, cols*c)
	x32 := make([]float32, cols*c)
	for i := range x64 {
		x64[i] = rng.NormFloat64()
		x32[i] = float32(x64[i])
	}
	b.Run("float32", func(b *testing.B) {
		out := make([]float32, rows*c)
		for i := 0; i < b.N; i++ {
			a.MulDense32(out, x32, c)
		}
	})
	b.Run("float64", func(b *testing.B) {
		out := make([]float64, rows*c)
		for i := 0; i < b.N; i++ {
			a.MulDense64(out, x64, c)
		}
	})
}
