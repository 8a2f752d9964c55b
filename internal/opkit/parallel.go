package opkit

import (
	"runtime"
	"sync"
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
