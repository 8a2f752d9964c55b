package metrics

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestFrameRefusesNonFinite: a user's metric that returns NaN or ±Inf,
// overall or in any group, is refused with the metric and the group
// named, whichever group it is (before, a NaN in group 0 made Difference
// NaN and one in group 1 was silently ignored by GroupMin/GroupMax).
func TestFrameRefusesNonFinite(t *testing.T) {
	bad := func(v float64, on int) Metric {
		return func(pred, labels []int) (float64, error) {
			if len(pred) == on {
				return v, nil
			}
			return 0.5, nil
		}
	}
	// triSens has groups of 6, 4 and 5 evaluated nodes, 15 in all.
	for _, v := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		for on, who := range map[int]string{6: "group 0", 4: "group 1", 5: "group 2", 15: "all evaluated nodes"} {
			f, err := NewFrame("mine", bad(v, on), triPred, triLabels, triSens)
			require.Error(t, err, "%v on %s", v, who)
			assert.Nil(t, f)
			assert.ErrorIs(t, err, ErrValue)
			assert.ErrorContains(t, err, "mine")
			assert.ErrorContains(t, err, who)
			assert.ErrorContains(t, err, "not finite")
		}
	}
	f, err := NewFrame("mine", bad(0.25, 4), triPred, triLabels, triSens)
	require.NoError(t, err)
	near(t, "difference", f.Difference(BetweenGroups), 0.25)
}
