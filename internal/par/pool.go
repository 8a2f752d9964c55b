package par

import (
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// Spin is how long a pool worker keeps looking for the next loop after
// finishing one, before it sleeps. A sleeping worker takes tens of
// microseconds to wake (the OS, and on a virtual machine the hypervisor,
// must wake its CPU): on the 2-core machine the README's numbers come
// from, a loop of 8 items of 5 µs took 42 µs on 2 threads against 38 µs
// on one when every loop started its goroutines afresh, and 21 µs with
// the pool. A training epoch runs its parallel loops back to back,
// microseconds apart (FMP's K sparse products one after the other), so
// a worker that waits a little catches the next one at once; between
// them it sleeps after Spin. Spinning costs CPU time (the benchmarks'
// CPU column counts it) and can slow the other core's serial work where
// the cores share a clock budget: 50 µs measured no better than 20 µs
// on FMP's epochs, and the Pokec-z MLP's median epoch was a tenth slower
// with it (within that morning's noise, but not a gain).
const Spin = 20 * time.Microsecond

// pool is the process's loop workers: GOMAXPROCS−1 goroutines (GOMAXPROCS
// as it is at the first parallel loop) that run the items of For, ForWith, Blocks,
// Chunks, Rows and Split beside the calling goroutine. One loop at a time
// uses them; a loop started while they are busy (from another goroutine,
// or from inside a loop's item) starts goroutines of its own, as every
// loop did before the pool.
type pool struct {
	busy    sync.Mutex // held by the goroutine whose loop the workers run
	workers int
	gen     atomic.Uint64 // counts the loops published
	job     atomic.Pointer[loop]
	parked  atomic.Int32
	wake    chan struct{}
}

// loop is one parallel loop: its items are taken in order by whoever
// calls run (the caller and the workers); left counts the items not yet
// finished.
type loop struct {
	n    int
	next atomic.Int64
	left atomic.Int64
	done chan struct{} // closed by whoever finishes the last item
	run  func(l *loop) // takes items until none is left
}

// finished counts one item done and closes l.done after the last.
func (l *loop) finished() {
	if l.left.Add(-1) == 0 {
		close(l.done)
	}
}

var (
	thePool  *pool
	poolOnce sync.Once
)

func getPool() *pool {
	poolOnce.Do(func() {
		w := runtime.GOMAXPROCS(0) - 1
		thePool = &pool{workers: w, wake: make(chan struct{}, max(w, 1))}
		for i := 0; i < w; i++ {
			go thePool.work()
		}
	})
	return thePool
}

// work is a worker's life: run each published loop, wait Spin for the
// next, then sleep until one is published.
func (p *pool) work() {
	seen := p.gen.Load()
	for {
		start := time.Now()
		for p.gen.Load() == seen {
			if time.Since(start) < Spin {
				runtime.Gosched()
				continue
			}
			p.parked.Add(1)
			if p.gen.Load() == seen { // no loop published since the check: sleep
				<-p.wake
			}
			p.parked.Add(-1)
			start = time.Now()
		}
		seen = p.gen.Load()
		if l := p.job.Load(); l != nil {
			l.run(l)
		}
	}
}

// tryRun runs l on the pool and the calling goroutine and reports true,
// or reports false at once when the pool is busy or has no worker.
func tryRun(l *loop) bool {
	p := getPool()
	if p.workers < 1 || !p.busy.TryLock() {
		return false
	}
	defer p.busy.Unlock()
	p.job.Store(l)
	p.gen.Add(1)
	for k := p.parked.Load(); k > 0; k-- {
		select {
		case p.wake <- struct{}{}:
		default:
		}
	}
	l.run(l)
	// Every item is taken; wait for the workers' last ones, spinning
	// first: a worker's item ends within microseconds of the caller's.
	for start := time.Now(); l.left.Load() > 0 && time.Since(start) < Spin; {
		runtime.Gosched()
	}
	<-l.done
	p.job.Store(nil)
	return true
}
