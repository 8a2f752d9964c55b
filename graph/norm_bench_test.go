package graph

import (
	"math/rand"
	"testing"
)

// BenchmarkGCNNorm builds Ã for a random graph of Pokec-z's size (67,796
// nodes, about 618,000 edges).
func BenchmarkGCNNorm(b *testing.B) {
	rng := rand.New(rand.NewSource(1))
	n := 67796
	edges := make([][2]int, 618000)
	for k := range edges {
		edges[k] = [2]int{rng.Intn(n), rng.Intn(n)}
	}
	g, err := FromEdges(n, edges)
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for range b.N {
		if _, err := GCNNorm(g, DefaultNormOptions()); err != nil {
			b.Fatal(err)
		}
	}
}
