// Package fastblas is gonum's pure-Go BLAS with faster general matrix
// products. Sgemm and Dgemm of large enough sizes run on register-blocked
// kernels written in Go assembly (4 × 64 and 4 × 32 float32 blocks of C
// summed in AVX-512 registers where the CPU has AVX-512F, else 4 × 16 float32 or
// 4 × 8 float64 blocks in AVX2/FMA registers), blocked over the inner
// dimension so that the operands' panels stay in cache, in parallel over
// blocks of rows of C; products with fewer than 16 columns run in
// parallel plain Go; everything else, and every call on a CPU without
// AVX2 and FMA, is gonum's. No cgo is involved: the default fairmp build stays
// pure Go.
//
// Each element of C is computed by one goroutine, in a fixed order (the
// inner dimension in chunks of at most 512, each chunk summed in order
// with fused multiply-adds), so results are deterministic and do not
// depend on GOMAXPROCS. They differ from gonum's in the last bits (fused
// multiply-add rounding and summation order).
//
// # Safety net
//
// As gonum's own assembly (gonum.org/v1/gonum/internal/asm):
//
//   - The build tag noasm (go build -tags noasm), and every architecture
//     but amd64, select the pure-Go build: no assembly; the products the
//     kernels would run are gonum's, the narrow products the same plain
//     Go as on amd64. It passes every test of the package.
//   - The CPU features come from golang.org/x/sys/cpu (AVX2 and FMA for
//     the AVX2 kernels, AVX-512F besides for the AVX-512 ones, each with
//     the operating system saving the registers).
//   - Sgemm, SgemmThen and Dgemm check their arguments as gonum does and
//     panic with gonum's messages before touching memory. Before any
//     assembly kernel runs, the blocked product checks once (checkBlock)
//     that the whole part of C the kernels compute, and the parts of A
//     and B they read, lie inside the slices; every kernel call computes
//     a 4-row strip of that part, so it stays inside too, and needs no
//     check of its own (its offsets are Go slice expressions, bounds
//     checked). The same check guards strip.run, the checked entry for
//     a single strip.
//   - The tests run every code path this machine can run (gonum's,
//     AVX2, AVX-512) in turn, on buffers with poisoned margins and
//     padding (nothing written outside C's valid elements, inputs
//     unchanged), and fuzz Sgemm, Dgemm and dot2 against references.
package fastblas

import (
	"fmt"
	"runtime"
	"unsafe"

	"github.com/fairmp/fairmp/internal/par"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"
)

// Implementation satisfies gorgonia's BLAS interface (gonum's blas.Float32,
// Float64, Complex64 and Complex128). Only Sgemm and Dgemm differ from
// gonum.Implementation.
type Implementation struct {
	gonum.Implementation
}

// path is a set of kernels: one of the code paths a product can take.
type path int

const (
	// pathGo: no assembly; the products the kernels would run are
	// gonum's (the only path of the pure-Go build).
	pathGo path = iota
	// pathAVX2: the 4 × 16 float32 and 4 × 8 float64 AVX2/FMA kernels.
	pathAVX2
	// pathAVX512: the 4 × 64 and 4 × 32 AVX-512 float32 kernels before
	// the AVX2 ones.
	pathAVX512
)

// paths lists every path, from the plainest.
var paths = []path{pathGo, pathAVX2, pathAVX512}

func (p path) String() string {
	return [...]string{"go", "avx2", "avx512"}[p]
}

// missing names what this build or CPU lacks to run p ("" if nothing).
func (p path) missing() string {
	switch {
	case p == pathGo:
		return ""
	case noKernels != "":
		return noKernels
	case p == pathAVX2 && !haveAVX2():
		return "AVX2 and FMA"
	case p == pathAVX512 && !haveAVX512():
		return "AVX-512F"
	}
	return ""
}

// best is the fastest path this build and CPU can run.
func best() path {
	for i := len(paths) - 1; i > 0; i-- {
		if paths[i].missing() == "" {
			return paths[i]
		}
	}
	return pathGo
}

// config is the dispatch state: the path and its kernels.
type config struct {
	path     path
	kernels  bool // the assembly kernels run
	skernels []strip[float32]
	dkernels []strip[float64]
	// minWork is the smallest m·n·k sent to the kernels; below it the
	// goroutine and blocking overhead is not worth it.
	minWork int
}

// configFor is the dispatch state of path p (which must not be missing).
func configFor(p path) config {
	return config{path: p, kernels: p != pathGo, skernels: sStrips(p), dkernels: dStrips(p), minWork: 1 << 17}
}

// cfg is set once from the CPU; tests set it to force each path in turn
// (never while a product runs).
var cfg = configFor(best())

// Enabled reports whether the assembly kernels run on this CPU (amd64 with
// AVX2 and FMA, and not the pure-Go build, -tags noasm). When false, the
// products that the kernels would run are gonum's.
func Enabled() bool { return cfg.kernels }

// kcMax bounds the inner-dimension chunk.
const kcMax = 512

// Sgemm computes C = alpha·op(A)·op(B) + beta·C (row-major, as gonum).
// It checks its arguments as gonum does, and panics with gonum's messages
// ("blas: insufficient length of a", ...) before touching any memory.
func (impl Implementation) Sgemm(tA, tB blas.Transpose, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	impl.SgemmThen(tA, tB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, nil)
}

// SgemmThen is Sgemm followed by then(lo, hi) on blocks of rows [lo, hi)
// of C that cover every row once, each called as soon as its rows are
// final, by the goroutine that computed them while they are still in
// cache (then may run concurrently on different blocks): an epilogue
// such as a layer's bias and activation, without another pass over C
// from memory. C is the same as Sgemm's; then nil is Sgemm. It checks its
// arguments as Sgemm does, before calling then.
func (impl Implementation) SgemmThen(tA, tB blas.Transpose, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int, then func(lo, hi int)) {
	checkGemm(tA, tB, m, n, k, len(a), lda, len(b), ldb, len(c), ldc)
	if m == 0 || n == 0 {
		after(then, m)
		return
	}
	if m*n*k < cfg.minWork && n < 16 && k > 0 {
		// Small and narrow (a small graph's logits and their gradients):
		// gonum splits even these over goroutines and runs axpys of
		// length n; the narrow loops on the calling goroutine take a
		// fraction of the time.
		narrowSerial(tA != blas.NoTrans, tB != blas.NoTrans, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
		after(then, m)
		return
	}
	if m*n*k < cfg.minWork || k == 0 {
		impl.Implementation.Sgemm(tA, tB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
		after(then, m)
		return
	}
	if n < 16 && narrow(tA != blas.NoTrans, tB != blas.NoTrans, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc) {
		after(then, m)
		return
	}
	if !cfg.kernels || n < 16 || m < 4 {
		impl.Implementation.Sgemm(tA, tB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
		after(then, m)
		return
	}
	ks := cfg.skernels
	if tA != blas.NoTrans && ks[0].width == 64 {
		// Measured: with A transposed (strided broadcasts of A, k long)
		// the 4 × 32 kernel needs less CPU than the 4 × 64 one.
		ks = ks[1:]
	}
	gemm(ks, tA != blas.NoTrans, tB != blas.NoTrans, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, then)
}

// after calls then(0, m) when then is not nil.
func after(then func(lo, hi int), m int) {
	if then != nil {
		then(0, m)
	}
}

// Dgemm computes C = alpha·op(A)·op(B) + beta·C (row-major, as gonum),
// checking its arguments as Sgemm does.
func (impl Implementation) Dgemm(tA, tB blas.Transpose, m, n, k int, alpha float64, a []float64, lda int, b []float64, ldb int, beta float64, c []float64, ldc int) {
	checkGemm(tA, tB, m, n, k, len(a), lda, len(b), ldb, len(c), ldc)
	if m*n*k < cfg.minWork || m == 0 || n == 0 || k == 0 {
		impl.Implementation.Dgemm(tA, tB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
		return
	}
	if n < 8 && narrow(tA != blas.NoTrans, tB != blas.NoTrans, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc) {
		return
	}
	if !cfg.kernels || n < 8 || m < 4 {
		impl.Implementation.Dgemm(tA, tB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
		return
	}
	gemm(cfg.dkernels, tA != blas.NoTrans, tB != blas.NoTrans, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, nil)
}

// gonum's panic messages (gonum.org/v1/gonum/blas/gonum/errors.go).
const (
	badTranspose = "blas: illegal transpose"
	mLT0         = "blas: m < 0"
	nLT0         = "blas: n < 0"
	kLT0         = "blas: k < 0"
	badLdA       = "blas: bad leading dimension of A"
	badLdB       = "blas: bad leading dimension of B"
	badLdC       = "blas: bad leading dimension of C"
	shortA       = "blas: insufficient length of a"
	shortB       = "blas: insufficient length of b"
	shortC       = "blas: insufficient length of c"
)

// checkGemm repeats gonum's argument checks of Sgemm and Dgemm, in
// gonum's order and with its messages: nothing past it reads or writes
// out of bounds (la, lb and lc are the slices' lengths).
func checkGemm(tA, tB blas.Transpose, m, n, k, la, lda, lb, ldb, lc, ldc int) {
	okT := func(t blas.Transpose) bool { return t == blas.NoTrans || t == blas.Trans || t == blas.ConjTrans }
	switch {
	case !okT(tA), !okT(tB):
		panic(badTranspose)
	case m < 0:
		panic(mLT0)
	case n < 0:
		panic(nLT0)
	case k < 0:
		panic(kLT0)
	}
	ar, ac := m, k // stored shape of A
	if tA != blas.NoTrans {
		ar, ac = k, m
	}
	br, bc := k, n
	if tB != blas.NoTrans {
		br, bc = n, k
	}
	switch {
	case lda < max(1, ac):
		panic(badLdA)
	case ldb < max(1, bc):
		panic(badLdB)
	case ldc < max(1, n):
		panic(badLdC)
	case m == 0 || n == 0:
		return
	case la < (ar-1)*lda+ac:
		panic(shortA)
	case lb < (br-1)*ldb+bc:
		panic(shortB)
	case lc < (m-1)*ldc+n:
		panic(shortC)
	}
}

type kernel[T float32 | float64] func(k int, a *T, sr, sp int, b *T, ldb int, c *T, ldc int, alpha T)

// strip is a kernel computing a 4 × width block of C.
type strip[T float32 | float64] struct {
	width int
	kern  kernel[T]
}

// run computes, for r < 4 and j < width,
//
//	c[r*ldc+j] += alpha · Σ_{p<k} a[r*sr+p*sp] · b[p*ldb+j]
//
// with the strip's kernel, after checking that every element the kernel
// reads or writes is inside a, b and c (checkBlock of a 4 × width
// block). gemm calls the kernels directly instead, having checked its
// whole block once; run is the checked entry for single strips (the
// tests). A panic here is a bug in fastblas.
func (s strip[T]) run(k int, a []T, sr, sp int, b []T, ldb int, c []T, ldc int, alpha T) {
	checkBlock(4, s.width, k, len(a), sr, sp, len(b), ldb, len(c), ldc)
	s.kern(k, unsafe.SliceData(a), sr, sp, unsafe.SliceData(b), ldb, unsafe.SliceData(c), ldc, alpha)
}

// checkBlock panics unless a block of rows × w elements of C computed
// as in strip.run,
//
//	c[r*ldc+j] += alpha · Σ_{p<k} a[r*sr+p*sp] · b[p*ldb+j]   (r < rows, j < w),
//
// reads and writes only inside a, b and c (la, lb and lc elements long):
// the kernels' pointer arithmetic then never leaves them. The strides
// must not be negative, so every 4 × width strip inside the block (rows
// and columns of it, steps of a chunk of the k) stays inside too, which
// lets gemm check once per call. The divisions keep the products from
// overflowing.
func checkBlock(rows, w, k, la, sr, sp, lb, ldb, lc, ldc int) {
	switch {
	case rows < 1 || w < 1 || k < 0 || sr < 0 || sp < 0 || ldb < w || ldc < w:
		panic(fmt.Sprintf("fastblas: %d × %d kernel: bad arguments k = %d, sr = %d, sp = %d, ldb = %d, ldc = %d", rows, w, k, sr, sp, ldb, ldc))
	case rows > 1 && ldc > lc/(rows-1) || lc < (rows-1)*ldc+w:
		panic(fmt.Sprintf("fastblas: %d × %d kernel: len(c) = %d, want at least %d·ldc + %d with ldc = %d", rows, w, lc, rows-1, w, ldc))
	case k == 0:
	case rows > 1 && sr > la/(rows-1) || k > 1 && sp > la/(k-1) || la <= (rows-1)*sr+(k-1)*sp:
		panic(fmt.Sprintf("fastblas: %d × %d kernel: len(a) = %d, want more than %d·sr + (k−1)·sp with k = %d, sr = %d, sp = %d", rows, w, la, rows-1, k, sr, sp))
	case k > 1 && ldb > lb/(k-1) || lb < (k-1)*ldb+w:
		panic(fmt.Sprintf("fastblas: %d × %d kernel: len(b) = %d, want at least (k−1)·ldb + %d with k = %d, ldb = %d", rows, w, lb, w, k, ldb))
	}
}

// AVX512 reports whether the float32 kernels use AVX-512 (4 × 64 and
// 4 × 32 blocks).
func AVX512() bool { return cfg.path == pathAVX512 }

func gemm[T float32 | float64](kerns []strip[T], aT, bT bool, m, n, k int, alpha T, a []T, lda int, b []T, ldb int, beta T, c []T, ldc int, then func(lo, hi int)) {
	if beta != 1 {
		for i := 0; i < m; i++ {
			row := c[i*ldc : i*ldc+n]
			if beta == 0 {
				clear(row)
				continue
			}
			for j := range row {
				row[j] *= beta
			}
		}
	}
	if alpha == 0 {
		after(then, m)
		return
	}
	if bT { // pack op(B) = Bᵀ (k × n) contiguously
		bp := make([]T, k*n)
		for j := 0; j < n; j++ {
			for p := 0; p < k; p++ {
				bp[p*n+j] = b[j*ldb+p]
			}
		}
		b, ldb = bp, n
	}
	// Element (r, p) of op(A) is a[r*sr + p*sp].
	sr, sp := lda, 1
	if aT {
		sr, sp = 1, lda
	}
	chunks := (k + kcMax - 1) / kcMax
	kc := (k + chunks - 1) / chunks
	mFull := m / 4 * 4
	nFull := 0 // columns covered by the kernels
	for _, st := range kerns {
		nFull += (n - nFull) / st.width * st.width
	}
	if mFull > 0 && nFull > 0 {
		// Once for every strip below: each is a 4 × width block of this
		// one, over a chunk of its k steps, so it stays inside the slices.
		checkBlock(mFull, nFull, k, len(a), sr, sp, len(b), ldb, len(c), ldc)
	}

	// Tasks are ranges of 4-row blocks of C. With A not transposed, A is
	// streamed row by row and B (k × n) is reused from cache: small tasks
	// balance the load. With A transposed (A's columns are C's rows, k is
	// typically the long dimension), each task streams all of B: one task
	// per worker.
	workers := runtime.GOMAXPROCS(0)
	blocks := mFull / 4
	per := 64
	if aT {
		per = (blocks + workers - 1) / workers
	}
	if per < 1 {
		per = 1
	}
	tasks := (blocks + per - 1) / per
	work := func(t int) {
		if t == tasks {
			// The last m − mFull rows (fewer than 4), in plain Go, as
			// one more task beside the others.
			tail(mFull, m, 0, n, k, kc, alpha, a, sr, sp, b, ldb, c, ldc)
			if then != nil {
				then(mFull, m)
			}
			return
		}
		lo, hi := t*per*4, min((t+1)*per*4, mFull)
		for p0 := 0; p0 < k; p0 += kc {
			kk := min(kc, k-p0)
			for i := lo; i < hi; i += 4 {
				ai := unsafe.SliceData(a[i*sr+p0*sp:])
				j := 0
				for _, st := range kerns {
					for ; j+st.width <= n; j += st.width {
						// Inside the block checkBlock checked: the kernel
						// without strip.run's checks.
						st.kern(kk, ai, sr, sp, unsafe.SliceData(b[p0*ldb+j:]), ldb, unsafe.SliceData(c[i*ldc+j:]), ldc, alpha)
					}
				}
			}
		}
		if nFull < n {
			tail(lo, hi, nFull, n, k, kc, alpha, a, sr, sp, b, ldb, c, ldc)
		}
		if then != nil {
			then(lo, hi)
		}
	}
	if mFull < m {
		par.For(tasks+1, work)
		return
	}
	par.For(tasks, work)
}

// tail computes rows [i0, i1) × columns [j0, j1) of C in plain Go, with
// the same chunking of the inner dimension as the kernels.
//
// Each element's chunk sum runs over p in order, as before, but the
// columns are the innermost loop (one partial sum per column): B is read
// row by row, contiguously, instead of one strided column at a time,
// which on a tall B (the k = 18,876 rows of Xᵀ·dH on the Bail shape) cost
// a cache miss per product.
func tail[T float32 | float64](i0, i1, j0, j1, k, kc int, alpha T, a []T, sr, sp int, b []T, ldb int, c []T, ldc int) {
	w := j1 - j0
	if w <= 0 {
		return
	}
	acc := make([]T, w)
	for i := i0; i < i1; i++ {
		ci := c[i*ldc+j0 : i*ldc+j1]
		for p0 := 0; p0 < k; p0 += kc {
			clear(acc)
			for p := p0; p < min(p0+kc, k); p++ {
				av := a[i*sr+p*sp]
				br := b[p*ldb+j0 : p*ldb+j1]
				for j, bv := range br {
					acc[j] += av * bv
				}
			}
			for j, s := range acc {
				ci[j] += alpha * s
			}
		}
	}
}

// narrowChunk is the number of inner-dimension steps per partial sum in
// the transposed narrow case; fixed, so that results do not depend on
// the number of workers.
const narrowChunk = 2048

// narrow handles products with few columns (n < 16), such as a layer's
// logits (n = 2) and their weight gradient, which gonum runs as axpys of
// length n. It returns false, leaving C untouched, when the shape does not
// suit it. Plain Go; parallel; deterministic.
func narrow[T float32 | float64](aT, bT bool, m, n, k int, alpha T, a []T, lda int, b []T, ldb int, beta T, c []T, ldc int) bool {
	chunks := (k + narrowChunk - 1) / narrowChunk
	if aT && (chunks*m*n > 1<<22 || k < 4*narrowChunk) {
		return false
	}
	narrowRun(par.Chunks, aT, bT, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
	return true
}

// narrowSerial is narrow for any shape, on the calling goroutine: for
// products too small to split. Each element is the same sum as narrow's.
func narrowSerial[T float32 | float64](aT, bT bool, m, n, k int, alpha T, a []T, lda int, b []T, ldb int, beta T, c []T, ldc int) {
	narrowRun(func(n, _ int, f func(lo, hi int)) { f(0, n) }, aT, bT, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

// narrowRun is narrow's body; chunks runs f over [0, n) in ranges of
// grain items (the results do not depend on how).
func narrowRun[T float32 | float64](chunksFn func(n, grain int, f func(lo, hi int)), aT, bT bool, m, n, k int, alpha T, a []T, lda int, b []T, ldb int, beta T, c []T, ldc int) {
	chunks := (k + narrowChunk - 1) / narrowChunk
	if bT {
		bp := make([]T, k*n)
		for j := 0; j < n; j++ {
			for p := 0; p < k; p++ {
				bp[p*n+j] = b[j*ldb+p]
			}
		}
		b, ldb = bp, n
	}
	store := func(i int, acc []T) {
		row := c[i*ldc : i*ldc+n]
		for j := range row {
			if beta == 0 {
				row[j] = alpha * acc[j]
			} else {
				row[j] = alpha*acc[j] + beta*row[j]
			}
		}
	}
	if !aT {
		// Row i of C: Σ_p a[i, p] · b[p, :], p in order (for n = 2: two
		// dot products with the columns of B, each summed as four
		// interleaved partial sums, p ≡ 0, 1, 2, 3 mod 4).
		var b0, b1 []T
		if n == 2 {
			b0, b1 = make([]T, k), make([]T, k)
			for p := 0; p < k; p++ {
				b0[p], b1[p] = b[p*ldb], b[p*ldb+1]
			}
		}
		chunksFn(m, 256, func(lo, hi int) {
			var buf [16]T
			acc := buf[:n]
			for i := lo; i < hi; i++ {
				clear(acc)
				ar := a[i*lda : i*lda+k]
				if n == 2 {
					acc[0], acc[1] = dot2(ar, b0, b1)
				} else {
					for p, av := range ar {
						br := b[p*ldb : p*ldb+n]
						for j, bv := range br {
							acc[j] += av * bv
						}
					}
				}
				store(i, acc)
			}
		})
		return
	}
	// C = Σ_p a[p, :]ᵀ b[p, :]: one partial m × n sum per chunk of
	// narrowChunk steps (in parallel), then the partials added in chunk
	// order.
	part := make([]T, chunks*m*n)
	chunksFn(chunks, 1, func(lo, hi int) {
		for ch := lo; ch < hi; ch++ {
			pc := part[ch*m*n : (ch+1)*m*n]
			p, pEnd := ch*narrowChunk, min((ch+1)*narrowChunk, k)
			if n == 2 {
				// Four steps at a time: one update of the partial sum per
				// four products, (a0·b0 + a1·b1) + (a2·b2 + a3·b3).
				for ; p+4 <= pEnd; p += 4 {
					a0, a1 := a[p*lda:p*lda+m], a[(p+1)*lda:(p+1)*lda+m]
					a2, a3 := a[(p+2)*lda:(p+2)*lda+m], a[(p+3)*lda:(p+3)*lda+m]
					b00, b01 := b[p*ldb], b[p*ldb+1]
					b10, b11 := b[(p+1)*ldb], b[(p+1)*ldb+1]
					b20, b21 := b[(p+2)*ldb], b[(p+2)*ldb+1]
					b30, b31 := b[(p+3)*ldb], b[(p+3)*ldb+1]
					for i, v0 := range a0 {
						v1, v2, v3 := a1[i], a2[i], a3[i]
						q := pc[2*i : 2*i+2 : 2*i+2]
						q[0] += (v0*b00 + v1*b10) + (v2*b20 + v3*b30)
						q[1] += (v0*b01 + v1*b11) + (v2*b21 + v3*b31)
					}
				}
			}
			for ; p < pEnd; p++ {
				ar := a[p*lda : p*lda+m]
				br := b[p*ldb : p*ldb+n]
				if n == 2 {
					b0, b1 := br[0], br[1]
					for i, av := range ar {
						q := pc[2*i : 2*i+2 : 2*i+2]
						q[0] += av * b0
						q[1] += av * b1
					}
					continue
				}
				for i, av := range ar {
					q := pc[i*n : i*n+n]
					for j, bv := range br {
						q[j] += av * bv
					}
				}
			}
		}
	})
	acc := make([]T, n)
	for i := 0; i < m; i++ {
		clear(acc)
		for ch := 0; ch < chunks; ch++ {
			q := part[(ch*m+i)*n : (ch*m+i)*n+n]
			for j, v := range q {
				acc[j] += v
			}
		}
		store(i, acc)
	}
}

// dot2 returns (x·y0, x·y1), each as ((s0+s1)+(s2+s3)) over the
// interleaved partial sums s_r = Σ_{p ≡ r mod 4}.
func dot2[T float32 | float64](x, y0, y1 []T) (T, T) {
	y0, y1 = y0[:len(x)], y1[:len(x)]
	var a0, a1, a2, a3, c0, c1, c2, c3 T
	p := 0
	if n4 := len(x) &^ 3; cfg.kernels && n4 > 0 {
		// The four partial sums in the lanes of one vector register,
		// each step a rounded multiply then a rounded add, as below.
		switch xs := any(x).(type) {
		case []float32:
			var l [8]float32
			dot2s(n4, &xs[0], &any(y0).([]float32)[0], &any(y1).([]float32)[0], &l)
			a0, a1, a2, a3, c0, c1, c2, c3 = T(l[0]), T(l[1]), T(l[2]), T(l[3]), T(l[4]), T(l[5]), T(l[6]), T(l[7])
		case []float64:
			var l [8]float64
			dot2d(n4, &xs[0], &any(y0).([]float64)[0], &any(y1).([]float64)[0], &l)
			a0, a1, a2, a3, c0, c1, c2, c3 = T(l[0]), T(l[1]), T(l[2]), T(l[3]), T(l[4]), T(l[5]), T(l[6]), T(l[7])
		}
		p = n4
	}
	for ; p+4 <= len(x); p += 4 {
		xs := x[p : p+4 : p+4]
		u := y0[p : p+4 : p+4]
		v := y1[p : p+4 : p+4]
		a0 += xs[0] * u[0]
		a1 += xs[1] * u[1]
		a2 += xs[2] * u[2]
		a3 += xs[3] * u[3]
		c0 += xs[0] * v[0]
		c1 += xs[1] * v[1]
		c2 += xs[2] * v[2]
		c3 += xs[3] * v[3]
	}
	for ; p < len(x); p++ {
		a0 += x[p] * y0[p]
		c0 += x[p] * y1[p]
	}
	return (a0 + a1) + (a2 + a3), (c0 + c1) + (c2 + c3)
}
