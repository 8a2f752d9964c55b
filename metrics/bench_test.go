package metrics

import (
	"math/rand"
	"testing"
)

// BenchmarkEvaluateBinary evaluates a Pokec-z-sized graph (67,796 nodes)
// on a 25% test subset and on all nodes.
func BenchmarkEvaluateBinary(b *testing.B) {
	rng := rand.New(rand.NewSource(5))
	p, labels, sens := randomCase(rng, 67796, 2)
	test := rng.Perm(len(p))[:len(p)/4]
	for _, c := range []struct {
		name  string
		nodes []int
	}{{"test", test}, {"all", nil}} {
		b.Run(c.name, func(b *testing.B) {
			for range b.N {
				if _, err := EvaluateBinary(p, labels, sens, c.nodes, DefaultOptions()); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
