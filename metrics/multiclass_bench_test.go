package metrics

import (
	"math/rand"
	"testing"
)

// BenchmarkBootstrapClasses: 1000 resamples of 5,000 nodes, 5 classes,
// 2 groups.
func BenchmarkBootstrapClasses(b *testing.B) {
	rng := rand.New(rand.NewSource(1))
	n, c := 5000, 5
	pred, labels, sens := classCase(rng, n, c, 2)
	probs := make([]float64, n*c)
	for i, p := range pred {
		probs[i*c+p] = 1
	}
	for b.Loop() {
		if _, err := BootstrapClasses(probs, c, labels, sens, nil, DefaultOptions(), DefaultBootstrapConfig()); err != nil {
			b.Fatal(err)
		}
	}
}
