package postprocess

import (
	"math/rand"
	"testing"

	"github.com/fairmp/fairmp/metrics"
	"github.com/fairmp/fairmp/metrics/selection"
)

// BenchmarkFitThresholds fits on 5,000 validation nodes in four groups
// (Bail's validation split has 4,719), with the default 200 candidates.
func BenchmarkFitThresholds(b *testing.B) {
	rng := rand.New(rand.NewSource(1))
	p1, labels, sens := randomScores(rng, 5000, 4)
	for i := range p1 {
		p1[i] = min(max(p1[i]+0.01*rng.Float64(), 0), 1) // distinct scores
	}
	val := make([]int, len(p1))
	for i := range val {
		val[i] = i
	}
	for _, c := range []metrics.Criterion{metrics.DPDifference, metrics.DPRatio, metrics.EOddsDifference} {
		for _, goal := range []string{"fairest", "bound"} {
			for _, randomized := range []bool{false, true} {
				cfg := DefaultThresholdsConfig()
				cfg.Randomized = randomized
				cfg.Rule = selection.FairestWithin(c, 0.01)
				if goal == "bound" {
					cfg.Rule = selection.MostAccurateWithin(c, 0.05)
					if c.IsRatio() {
						cfg.Rule.Bound = 0.8
					}
				}
				b.Run(c.Name()+"/"+goal+"/"+kind(randomized), func(b *testing.B) {
					for range b.N {
						if _, err := FitThresholds(p1, labels, sens, val, cfg); err != nil {
							b.Fatal(err)
						}
					}
				})
			}
		}
	}
}
