package opkit

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// ParallelGrain is the smallest number of elements worth a goroutine in
// Parallel.
const ParallelGrain = 1 << 15

// Parallel calls f on consecutive ranges [lo, hi) covering [0, n), from
// up to GOMAXPROCS goroutines, for element-wise kernels whose output
// element i depends only on input element i (so that the split does not
// change the result). Below 2·ParallelGrain elements it calls f(0, n).
func Parallel(n int, f func(lo, hi int)) {
	workers := min(runtime.GOMAXPROCS(0), n/ParallelGrain)
	if workers <= 1 {
		f(0, n)
		return
	}
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		lo, hi := n*w/workers, n*(w+1)/workers
		wg.Add(1)
		go func() {
			defer wg.Done()
			f(lo, hi)
		}()
	}
	wg.Wait()
}

// ParallelFor calls f(i) for every i in [0, n) from up to GOMAXPROCS
// goroutines, for coarse items (blocks of rows) whose results do not
// depend on which goroutine runs them.
func ParallelFor(n int, f func(i int)) {
	workers := min(runtime.GOMAXPROCS(0), n)
	if workers <= 1 {
		for i := 0; i < n; i++ {
			f(i)
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				f(i)
			}
		}()
	}
	wg.Wait()
}
