package layers

import (
	"fmt"
	"math/rand"
	"sync"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/fairmp/fairmp/graph"
	"github.com/fairmp/fairmp/graph/datasets"
	"github.com/fairmp/fairmp/internal/opkit"
	"github.com/stretchr/testify/require"
)

// The SpMM benchmarks run on the normalised adjacency of a generated graph
// shaped like Pokec-z (67,796 nodes, 617,958 undirected edges, so
// nnz = 2·617,958 + 67,796 = 1,303,712 with self-loops), built once.
//
// Reported MB/s use the effective traffic of one product Y = A·X with X
// and Y of `cols` columns:
//
//	bytes = nnz·(4 + v) + 2·rows·cols·v
//
// with v the value size (4 for float32, 8 for float64): each stored entry
// reads a 4-byte column index and a value, X is read once and Y written
// once. Row pointers and the re-reads of X rows that miss the cache are
// not counted, so this is a lower bound on the real traffic.
//
// Run: go test ./layers -run '^$' -bench SpMM -benchtime 3x

var pokec struct {
	once sync.Once
	a    *graph.Matrix
	err  error
}

func pokecAdjacency(b *testing.B) *graph.Matrix {
	b.Helper()
	pokec.once.Do(func() {
		ds, err := datasets.Synthetic(datasets.PokecZShape(1))
		if err != nil {
			pokec.err = err
			return
		}
		pokec.a = graph.NormalizedAdjacency(ds.Graph)
	})
	if pokec.err != nil {
		b.Fatal(pokec.err)
	}
	return pokec.a
}

func spmmBytes(a *graph.Matrix, cols int, dt tensor.Dtype) int64 {
	v := int64(dt.Size())
	rows, _ := a.Dims()
	return int64(a.NNZ())*(4+v) + 2*int64(rows)*int64(cols)*v
}

func randTensor(dt tensor.Dtype, rows, cols int, seed int64) *tensor.Dense {
	rng := rand.New(rand.NewSource(seed))
	t := opkit.Alloc(dt, rows, cols)
	switch d := t.Data().(type) {
	case []float64:
		for i := range d {
			d[i] = rng.Float64()*2 - 1
		}
	case []float32:
		for i := range d {
			d[i] = float32(rng.Float64()*2 - 1)
		}
	}
	return t
}

// BenchmarkSpMMForward times the op's UsePreallocDo (Y = A·X into a
// preallocated Y), as the TapeMachine calls it.
func BenchmarkSpMMForward(b *testing.B) {
	for _, dt := range []tensor.Dtype{tensor.Float32, tensor.Float64} {
		for _, cols := range []int{2, 64} {
			b.Run(fmt.Sprintf("%v/cols=%d", dt, cols), func(b *testing.B) {
				a := pokecAdjacency(b)
				rows, n := a.Dims()
				x := randTensor(dt, n, cols, 1)
				out := opkit.Alloc(dt, rows, cols)
				op := opkit.New(spmmSpec, spmmParams{a: a})
				b.SetBytes(spmmBytes(a, cols, dt))
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					if _, err := op.UsePreallocDo(out, x); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkSpMMBackward times the gradient op that SymDiff builds
// (dX = Aᵀ·dY; A itself here, since the normalised adjacency is
// symmetric) on an upstream gradient dY.
func BenchmarkSpMMBackward(b *testing.B) {
	for _, dt := range []tensor.Dtype{tensor.Float32, tensor.Float64} {
		for _, cols := range []int{2, 64} {
			b.Run(fmt.Sprintf("%v/cols=%d", dt, cols), func(b *testing.B) {
				a := pokecAdjacency(b)
				rows, n := a.Dims()
				g := G.NewGraph()
				x := G.NewMatrix(g, dt, G.WithShape(n, cols), G.WithName("x"))
				y, err := SpMM(a, x)
				require.NoError(b, err)
				dyNode := G.NewMatrix(g, dt, G.WithShape(rows, cols), G.WithName("dy"))
				dx, err := y.Op().(G.SDOp).SymDiff(G.Nodes{x}, y, dyNode)
				require.NoError(b, err)
				back, ok := dx[0].Op().(G.UsePreallocDoer)
				if !ok {
					b.Fatalf("gradient op %v has no UsePreallocDo", dx[0].Op())
				}
				dy := randTensor(dt, rows, cols, 2)
				out := opkit.Alloc(dt, n, cols)
				b.SetBytes(spmmBytes(a, cols, dt))
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					if _, err := back.UsePreallocDo(out, dy); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
