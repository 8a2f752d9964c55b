package par

import (
	"runtime"
	"sync/atomic"
	"testing"
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
			if h := hits[i].Load(); h != 1 {
				t.Fatalf("n=%d: element %d visited %d times", n, i, h)
			}
		}
		if want := max(1, min(4, n/Grain)); int(calls.Load()) != want {
			t.Errorf("n=%d: %d calls, want %d", n, calls.Load(), want)
		}
	}
}

func TestForCoversOnce(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(3))
	for _, n := range []int{0, 1, 2, 7, 100} {
		hits := make([]atomic.Int32, n)
		For(n, func(i int) { hits[i].Add(1) })
		for i := range hits {
			if h := hits[i].Load(); h != 1 {
				t.Fatalf("n=%d: item %d run %d times", n, i, h)
			}
		}
	}
}

func TestChunksAndForWith(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(3))
	for _, c := range []struct{ n, grain int }{{0, 4}, {1, 4}, {10, 3}, {12, 3}, {1000, 64}} {
		hits := make([]atomic.Int32, c.n)
		Chunks(c.n, c.grain, func(lo, hi int) {
			if hi-lo > c.grain || (hi < c.n && hi-lo != c.grain) {
				t.Errorf("n=%d grain=%d: range [%d, %d)", c.n, c.grain, lo, hi)
			}
			for i := lo; i < hi; i++ {
				hits[i].Add(1)
			}
		})
		for i := range hits {
			if h := hits[i].Load(); h != 1 {
				t.Fatalf("n=%d: element %d visited %d times", c.n, i, h)
			}
		}
	}
	// Each goroutine gets its own state.
	var states atomic.Int32
	sums := make([]int, 50)
	ForWith(50, func() []int { states.Add(1); return make([]int, 1) }, func(s []int, i int) {
		s[0]++
		sums[i] = i
	})
	if n := states.Load(); n < 1 || n > 3 {
		t.Errorf("%d states for 3 workers", n)
	}
	for i, v := range sums {
		if v != i {
			t.Fatalf("item %d not run", i)
		}
	}
}
