package par

import (
	"runtime"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSplitCoversOnce(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	for _, n := range []int{0, 1, 100, 2*Grain - 1, 2 * Grain, 5*Grain + 3} {
		hits := make([]atomic.Int32, n)
		calls := atomic.Int32{}
		Split(n, func(lo, hi int) {
			calls.Add(1)
			for i := lo; i < hi; i++ {
				hits[i].Add(1)
			}
		})
		for i := range hits {
			require.EqualValues(t, 1, hits[i].Load(), "n=%d: visits of element %d", n, i)
		}
		assert.EqualValues(t, max(1, min(4, n/Grain)), calls.Load(), "n=%d: calls", n)
	}
}

func TestForCoversOnce(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(3))
	for _, n := range []int{0, 1, 2, 7, 100} {
		hits := make([]atomic.Int32, n)
		For(n, func(i int) { hits[i].Add(1) })
		for i := range hits {
			require.EqualValues(t, 1, hits[i].Load(), "n=%d: runs of item %d", n, i)
		}
	}
}

func TestChunksAndForWith(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(3))
	for _, c := range []struct{ n, grain int }{{0, 4}, {1, 4}, {10, 3}, {12, 3}, {1000, 64}} {
		hits := make([]atomic.Int32, c.n)
		Chunks(c.n, c.grain, func(lo, hi int) {
			assert.False(t, hi-lo > c.grain || (hi < c.n && hi-lo != c.grain), "n=%d grain=%d: range [%d, %d)", c.n, c.grain, lo, hi)
			for i := lo; i < hi; i++ {
				hits[i].Add(1)
			}
		})
		for i := range hits {
			require.EqualValues(t, 1, hits[i].Load(), "n=%d: visits of element %d", c.n, i)
		}
	}
	// Each goroutine gets its own state.
	var states atomic.Int32
	sums := make([]int, 50)
	ForWith(50, func() []int { states.Add(1); return make([]int, 1) }, func(s []int, i int) {
		s[0]++
		sums[i] = i
	})
	assert.True(t, states.Load() >= 1 && states.Load() <= 3, "%d states for 3 workers", states.Load())
	for i, v := range sums {
		require.Equal(t, i, v, "item %d not run", i)
	}
}
