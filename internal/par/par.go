// Package par runs row-parallel loops in fixed blocks. The partition never
// changes a result as long as each row is computed independently, so the
// sparse kernels built on it are deterministic for any GOMAXPROCS.
package par

import (
	"runtime"
	"sort"
	"sync"
	"sync/atomic"
)

// Rows calls f(lo, hi) on fixed blocks of rows covering [0, len(indptr)-1),
// in parallel. Blocks are cut from the CSR row pointers indptr so that each
// holds about the same rows + non-zeros. Work below minWork (rows +
// non-zeros) runs serially on the calling goroutine.
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
		if r > bounds[len(bounds)-1] && r < rows {
			bounds = append(bounds, r)
		}
	}
	bounds = append(bounds, rows)
	Blocks(bounds, workers, f)
}

// Blocks calls f(bounds[b], bounds[b+1]) for every consecutive pair of
// bounds, on workers goroutines that take blocks in order.
func Blocks(bounds []int, workers int, f func(lo, hi int)) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				b := int(next.Add(1)) - 1
				if b >= len(bounds)-1 {
					return
				}
				f(bounds[b], bounds[b+1])
			}
		}()
	}
	wg.Wait()
}
