package metrics

import (
	"errors"
	"math/rand"
	"testing"

	"github.com/stretchr/testify/require"
)

// FuzzEvaluateBinary checks that arbitrary inputs give either an error
// wrapping one of the sentinels or a report whose metrics all lie in
// [0, 1]: never a panic, never NaN. Each byte describes one node.
func FuzzEvaluateBinary(f *testing.F) {
	f.Add([]byte{0x00, 0x41, 0x82, 0xc3, 0x14, 0x55}, uint8(0), false)
	f.Add([]byte{0xff, 0x10, 0x20, 0x30}, uint8(3), true)
	f.Add([]byte{}, uint8(0), false)
	f.Add([]byte{0x07, 0x37, 0x67, 0x97, 0xc7, 0xf7, 0x01}, uint8(200), true)
	f.Fuzz(func(t *testing.T, data []byte, thr uint8, subset bool) {
		n := len(data)
		p := make([]float64, n)
		labels := make([]int, n)
		sens := make([]int, n)
		for i, b := range data {
			p[i] = float64(b&0x0f) / 14 // 15/14 > 1 is invalid on purpose
			labels[i] = int(b>>4&0x3) - 1
			sens[i] = int(b>>6) - 1
		}
		var nodes []int
		if subset {
			nodes = rand.New(rand.NewSource(int64(n))).Perm(n)[:n/2]
		}
		opt := Options{Threshold: float64(thr) / 200, Positive: 1}
		r, err := EvaluateBinary(p, labels, sens, nodes, opt)
		if err != nil {
			for _, s := range []error{ErrLength, ErrEmpty, ErrValue, ErrEmptyGroup, ErrNoPositives, ErrNoNegatives} {
				if errors.Is(err, s) {
					return
				}
			}
			require.Fail(t, "error wraps no sentinel", "%v", err)
		}
		for _, v := range []float64{r.Accuracy, r.F1, r.AUC, r.DemographicParity, r.EqualOpportunity, r.EqualizedOdds} {
			require.True(t, v >= 0 && v <= 1, "metric %v outside [0, 1] in %+v", v, r) // false for NaN
		}
		require.Equal(t, r.Nodes, r.Evaluated+r.Excluded, "evaluated + excluded = nodes")
	})
}
