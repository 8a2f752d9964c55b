// Package par runs row-parallel loops in fixed blocks. The partition never
// changes a result as long as each row is computed independently, so the
// sparse kernels built on it are deterministic for any GOMAXPROCS. Each
// loop starts its goroutines afresh: a pool of workers that spun between
// loops was tried (2026-11-28) and measured slower on whole epochs
// (examples/paper/bench, "The worker pool, measured again").
package par

import (
	"runtime"
	"sort"
	"sync"
	"sync/atomic"
)

// Rows calls f(lo, hi) on fixed blocks of rows covering [0, len(indptr)-1),
// in parallel. Blocks are cut from the CSR row pointers indptr so that each
// holds about the same rows + non-zeros, at multiples of Align rows. Work
// below minWork (rows + non-zeros) runs serially on the calling goroutine.
func Rows(indptr []int, minWork int, f func(lo, hi int)) {
	rows := len(indptr) - 1
	nnz := indptr[rows]
	workers := runtime.GOMAXPROCS(0)
	if workers > 1 && nnz+rows < minWork {
		workers = 1
	}
	blocks := workers * 4
	if blocks > rows {
		blocks = rows
	}
	if workers <= 1 || blocks <= 1 {
		f(0, rows)
		return
	}
	bounds := make([]int, 0, blocks+1)
	bounds = append(bounds, 0)
	total := nnz + rows
	for b := 1; b < blocks; b++ {
		target := total * b / blocks
		// the smallest row r with indptr[r]+r >= target
		r := sort.Search(rows+1, func(r int) bool { return indptr[r]+r >= target })
		r -= r % Align
		if r > bounds[len(bounds)-1] && r < rows {
			bounds = append(bounds, r)
		}
	}
	bounds = append(bounds, rows)
	Blocks(bounds, f)
}

// Align is the multiple of rows Rows cuts its blocks at (but for the
// last block's end): internal/spkern's CSR sums whole windows of this
// many rows in length order, and a block boundary inside a window sums
// that window in row order.
const Align = 64

// Blocks calls f(bounds[b], bounds[b+1]) for every consecutive pair of
// bounds, in parallel as For runs items.
func Blocks(bounds []int, f func(lo, hi int)) {
	For(len(bounds)-1, func(b int) { f(bounds[b], bounds[b+1]) })
}

// For calls f(i) for every i in [0, n), from up to GOMAXPROCS goroutines
// that take the items in order; for coarse items (blocks of rows) whose
// results do not depend on which goroutine runs them. With one worker or
// one item it runs on the calling goroutine.
func For(n int, f func(i int)) {
	ForWith(n, func() struct{} { return struct{}{} }, func(_ struct{}, i int) { f(i) })
}

// ForWith is For with per-goroutine state: each goroutine that takes an
// item calls newState once and passes the state to every f it runs
// (scratch buffers).
func ForWith[S any](n int, newState func() S, f func(s S, i int)) {
	if n <= 0 {
		return // no item: no state either
	}
	workers := min(runtime.GOMAXPROCS(0), n)
	if workers <= 1 {
		s := newState()
		for i := 0; i < n; i++ {
			f(s, i)
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var s S
			started := false
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				if !started {
					s, started = newState(), true
				}
				f(s, i)
			}
		}()
	}
	wg.Wait()
}

// Chunks calls f on the consecutive ranges [lo, hi) of [0, n) of grain
// items (the last one shorter), in parallel as For runs items.
func Chunks(n, grain int, f func(lo, hi int)) {
	if grain < 1 {
		grain = 1
	}
	For((n+grain-1)/grain, func(t int) { f(t*grain, min((t+1)*grain, n)) })
}

// Grain is the smallest number of elements worth a goroutine in Split.
const Grain = 1 << 15

// Split calls f on one range of [0, n) per worker, from up to GOMAXPROCS
// goroutines, for element-wise kernels whose output element i depends
// only on input element i (so that the split does not change the result).
// Below 2·Grain elements it calls f(0, n).
func Split(n int, f func(lo, hi int)) {
	workers := min(runtime.GOMAXPROCS(0), n/Grain)
	if workers <= 1 {
		f(0, n)
		return
	}
	For(workers, func(w int) { f(n*w/workers, n*(w+1)/workers) })
}
