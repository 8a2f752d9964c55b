package sample

import (
	"math/rand/v2"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fairmp/fairmp/graph"
)

// benchSampler builds a seeded random graph of 200,000 nodes with mean
// degree 20 (2,000,000 undirected edges), GCN-normalised, and a sampler
// with batches of 1024 targets and fan-outs {10, 10}.
func benchSampler(b *testing.B) (*Sampler, []int) {
	b.Helper()
	const n, edges = 200_000, 2_000_000
	r := rand.New(rand.NewPCG(1, 2))
	e := make([][2]int, edges)
	for k := range e {
		e[k] = [2]int{r.IntN(n), r.IntN(n)}
	}
	g, err := graph.FromEdges(n, e)
	require.NoError(b, err)
	a, err := graph.GCNNorm(g, graph.DefaultNormOptions())
	require.NoError(b, err)
	cfg := DefaultConfig()
	cfg.Fanouts = []int{10, 10}
	cfg.BatchSize = 1024
	s, err := NewSampler(a, cfg)
	require.NoError(b, err)
	return s, r.Perm(n)
}

func BenchmarkBatch(b *testing.B) {
	s, targets := benchSampler(b)
	nb := s.NumBatches(targets)
	_, err := s.Batch(targets, 0, 0) // allocate the scratch
	require.NoError(b, err)
	nodes, nnz := 0, 0
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		bt, err := s.Batch(targets, i/nb, i%nb)
		if err != nil {
			b.Fatal(err)
		}
		nodes += len(bt.Nodes)
		nnz += bt.Blocks[0].NNZ() + bt.Blocks[1].NNZ()
	}
	b.ReportMetric(float64(nodes)/float64(b.N), "nodes/batch")
	b.ReportMetric(float64(nnz)/float64(b.N), "nnz/batch")
}

func BenchmarkBatchParallel(b *testing.B) {
	s, targets := benchSampler(b)
	nb := s.NumBatches(targets)
	b.ReportAllocs()
	b.ResetTimer()
	var next atomic.Int64
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			i := int(next.Add(1) - 1)
			if _, err := s.Batch(targets, i/nb, i%nb); err != nil {
				b.Error(err)
				return
			}
		}
	})
}
