package graph

import (
	"fmt"
	"sync"
	"testing"
)

// BenchmarkStream measures the machine's memory bandwidth the way STREAM
// does, for comparison with the sparse products' bytes per second
// (BenchmarkMulDense32): Copy (a[i] = b[i], 16 bytes an element) and Triad
// (a[i] = b[i] + s·c[i], 24 bytes an element) on float64 arrays of 2²⁴
// elements (128 MiB each, far beyond any cache), on one goroutine and
// split between two (this machine's two cores). MB/s counts the bytes
// the loop reads and writes, as STREAM does (not the write-allocate
// traffic).
func BenchmarkStream(b *testing.B) {
	const n = 1 << 24
	x, y, z := make([]float64, n), make([]float64, n), make([]float64, n)
	for i := range x {
		x[i], y[i], z[i] = 1, 2, 3
	}
	split := func(workers int, f func(lo, hi int)) {
		if workers == 1 {
			f(0, n)
			return
		}
		var wg sync.WaitGroup
		for w := 0; w < workers; w++ {
			wg.Add(1)
			go func(lo, hi int) { defer wg.Done(); f(lo, hi) }(w*n/workers, (w+1)*n/workers)
		}
		wg.Wait()
	}
	for _, workers := range []int{1, 2} {
		b.Run(fmt.Sprintf("copy/goroutines=%d", workers), func(b *testing.B) {
			b.SetBytes(16 * n)
			for i := 0; i < b.N; i++ {
				split(workers, func(lo, hi int) { copy(x[lo:hi], y[lo:hi]) })
			}
		})
		b.Run(fmt.Sprintf("triad/goroutines=%d", workers), func(b *testing.B) {
			b.SetBytes(24 * n)
			for i := 0; i < b.N; i++ {
				split(workers, func(lo, hi int) {
					a, bb, c := x[lo:hi], y[lo:hi], z[lo:hi]
					bb, c = bb[:len(a)], c[:len(a)]
					for j := range a {
						a[j] = bb[j] + 3*c[j]
					}
				})
			}
		})
	}
}
