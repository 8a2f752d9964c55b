package opkit

import (
	"runtime"
	"sync/atomic"
	"testing"
)

func TestParallelCoversOnce(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	for _, n := range []int{0, 1, 100, 2*ParallelGrain - 1, 2 * ParallelGrain, 5*ParallelGrain + 3} {
		hits := make([]atomic.Int32, n)
		calls := atomic.Int32{}
		Parallel(n, func(lo, hi int) {
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
		if want := max(1, min(4, n/ParallelGrain)); int(calls.Load()) != want {
			t.Errorf("n=%d: %d calls, want %d", n, calls.Load(), want)
		}
	}
}

func TestParallelForCoversOnce(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(3))
	for _, n := range []int{0, 1, 2, 7, 100} {
		hits := make([]atomic.Int32, n)
		ParallelFor(n, func(i int) { hits[i].Add(1) })
		for i := range hits {
			if h := hits[i].Load(); h != 1 {
				t.Fatalf("n=%d: item %d run %d times", n, i, h)
			}
		}
	}
}
