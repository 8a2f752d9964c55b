package postprocess

import (
	"fmt"
	"testing"

	"github.com/fairmp/fairmp/metrics"
	"github.com/stretchr/testify/assert"
)

// TestFitThresholdsMissingGroupEitherPosition: the groups are 0..G−1
// with G = 1 + the largest id in sens (the whole graph's, not only the
// validation nodes'), and a group without a validation node of known
// label is an error naming it, a middle id or the highest alike. Before,
// a missing group 1 of 0..2 was an error while a missing group 2 was
// dropped silently (the thresholds were fitted for groups 0..1).
func TestFitThresholdsMissingGroupEitherPosition(t *testing.T) {
	// Nodes 0..3 group 0, 4..7 group 1, 8..11 group 2.
	p1 := []float64{0.9, 0.8, 0.3, 0.2, 0.7, 0.6, 0.4, 0.1, 0.95, 0.55, 0.45, 0.05}
	labels := []int{1, 1, 0, 0, 1, 1, 0, 0, 1, 1, 0, 0}
	sens := []int{0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2}
	for _, randomized := range []bool{false, true} {
		cfg := DefaultThresholdsConfig()
		cfg.Randomized = randomized
		for _, missing := range []int{1, 2} {
			var val []int
			for i, s := range sens {
				if s != missing {
					val = append(val, i)
				}
			}
			_, err := FitThresholds(p1, labels, sens, val, cfg)
			assert.ErrorIs(t, err, metrics.ErrEmptyGroup, "group %d outside val", missing)
			assert.ErrorContains(t, err, fmt.Sprintf("group %d of 0..2", missing), "group %d outside val", missing)
			// In val, but with unknown labels.
			lab := append([]int(nil), labels...)
			for i, s := range sens {
				if s == missing {
					lab[i] = -1
				}
			}
			_, err = FitThresholds(p1, lab, sens, []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, cfg)
			assert.ErrorIs(t, err, metrics.ErrEmptyGroup, "group %d unlabelled", missing)
			assert.ErrorContains(t, err, fmt.Sprintf("group %d of 0..2", missing), "group %d unlabelled", missing)
		}
		// A huge id is refused before anything of its size is allocated.
		_, err := FitThresholds([]float64{0.9, 0.1, 0.5}, []int{1, 0, 0}, []int{0, 1, 1 << 40}, []int{0, 1}, cfg)
		assert.ErrorIs(t, err, metrics.ErrEmptyGroup)
	}
}
