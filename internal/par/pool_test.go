package par

import (
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
)

// Loops run back to back, from several goroutines at once (all but one
// find the pool busy and start goroutines of their own) and from inside
// one another's items, each run every item exactly once.
func TestPoolLoopsCoverOnce(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(3))
	check := func(t *testing.T, n int) {
		hits := make([]atomic.Int32, n)
		For(n, func(i int) { hits[i].Add(1) })
		for i := range hits {
			if hits[i].Load() != 1 {
				t.Errorf("n=%d: item %d run %d times", n, i, hits[i].Load())
				return
			}
		}
	}
	for rep := 0; rep < 2000; rep++ { // back to back: the workers spin between them
		check(t, 1+rep%17)
	}
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for rep := 0; rep < 200; rep++ {
				check(t, 1+(g+rep)%23)
			}
		}()
	}
	wg.Wait()
	var inner atomic.Int32
	For(6, func(int) { // nested: the inner loops find the pool busy
		For(5, func(int) { inner.Add(1) })
	})
	require.EqualValues(t, 30, inner.Load())
}

// A worker that takes no item never calls newState.
func TestPoolStateOnlyWithItems(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	for rep := 0; rep < 200; rep++ {
		var states atomic.Int32
		ForWith(1, func() int { states.Add(1); return 0 }, func(int, int) {})
		require.EqualValues(t, 1, states.Load())
		states.Store(0)
		ForWith(2, func() int { states.Add(1); return 0 }, func(int, int) {})
		require.LessOrEqual(t, states.Load(), int32(2))
	}
}
