package par

import (
	"math/rand"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRowsCoversEachRowOnce checks that every row is handed to exactly one
// call, for serial and parallel work sizes and for GOMAXPROCS 1 and 2.
func TestRowsCoversEachRowOnce(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for _, procs := range []int{1, 2} {
		old := runtime.GOMAXPROCS(procs)
		for _, rows := range []int{0, 1, 7, 5000} {
			indptr := make([]int, rows+1)
			for i := 1; i <= rows; i++ {
				indptr[i] = indptr[i-1] + rng.Intn(10)
			}
			seen := make([]atomic.Int32, rows)
			Rows(indptr, 100, func(lo, hi int) {
				if lo > hi || lo < 0 || hi > rows {
					t.Errorf("block [%d, %d) outside [0, %d)", lo, hi, rows)
					return
				}
				for i := lo; i < hi; i++ {
					seen[i].Add(1)
				}
			})
			for i := range seen {
				require.EqualValues(t, 1, seen[i].Load(), "GOMAXPROCS %d, %d rows: visits of row %d", procs, rows, i)
			}
		}
		runtime.GOMAXPROCS(old)
	}
}

// Loops run back to back, from several goroutines at once and from
// inside one another's items each run every item exactly once.
func TestLoopsCoverOnce(t *testing.T) {
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
	for rep := 0; rep < 2000; rep++ {
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
	For(6, func(int) { For(5, func(int) { inner.Add(1) }) })
	require.EqualValues(t, 30, inner.Load())
}

// A goroutine that takes no item never calls newState.
func TestStateOnlyWithItems(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	for rep := 0; rep < 200; rep++ {
		var states atomic.Int32
		ForWith(1, func() int { states.Add(1); return 0 }, func(int, int) {})
		require.EqualValues(t, 1, states.Load())
		states.Store(0)
		ForWith(2, func() int { states.Add(1); return 0 }, func(int, int) {})
		require.LessOrEqual(t, states.Load(), int32(2))
	}
	for _, procs := range []int{1, 4} {
		runtime.GOMAXPROCS(procs)
		calls := 0
		ForWith(0, func() int { calls++; return 0 }, func(int, int) {})
		assert.Zero(t, calls, "no item, no state (GOMAXPROCS %d)", procs)
	}
}
