package datasets

import (
	"math/rand"
	"testing"
)

// BenchmarkSyntheticPokecZ generates the Pokec-z-shaped graph (67,796
// nodes, 276 features, 617,958 edges).
func BenchmarkSyntheticPokecZ(b *testing.B) {
	for i := 0; i < b.N; i++ {
		if _, err := Synthetic(PokecZShape(int64(i))); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSimilarityEdges builds NIFTY's similarity graph over 10,000
// rows of 16 integer-valued columns (O(n²·d)).
func BenchmarkSimilarityEdges(b *testing.B) {
	n, d := 10000, 16
	rng := rand.New(rand.NewSource(1))
	x := make([]float64, n*d)
	for k := range x {
		x[k] = float64(rng.Intn(10))
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := similarityEdges(x, n, d, 0.7); err != nil {
			b.Fatal(err)
		}
	}
}
