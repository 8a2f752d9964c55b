package fastblas

// The safety net of the kernels, after gonum's internal/asm tests: every
// code path this machine can run, forced in turn; buffers with poisoned
// margins (guards) and poisoned padding between rows; nothing written
// outside C's valid elements, inputs unchanged, results against a
// float64 reference; and the argument checks.

import (
	"fmt"
	"math"
	"math/rand"
	"strings"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"
)

// setPath forces path p (with its default thresholds) and returns the
// function that restores the previous state.
func setPath(p path) (restore func()) {
	old := cfg
	cfg = configFor(p)
	return func() { cfg = old }
}

// forEachPath runs f once per code path, with the package forced onto it;
// a path this build or CPU cannot run is skipped, naming what is missing.
func forEachPath(t *testing.T, f func(t *testing.T)) {
	t.Helper()
	for _, p := range paths {
		t.Run(p.String(), func(t *testing.T) {
			if m := p.missing(); m != "" {
				t.Skipf("%s path: this machine or build lacks %s", p, m)
			}
			defer setPath(p)()
			f(t)
		})
	}
}

// available lists the paths this build and CPU can run.
func available() []path {
	var out []path
	for _, p := range paths {
		if p.missing() == "" {
			out = append(out, p)
		}
	}
	return out
}

// TestPaths checks the dispatch state: the default is the best path the
// CPU can run, each path has the kernels it names, and Enabled and
// AVX512 report the path in use.
func TestPaths(t *testing.T) {
	if cfg.path != best() {
		t.Fatalf("default path %v, want the best available %v", cfg.path, best())
	}
	for _, p := range available() {
		restore := setPath(p)
		var sw, dw []int
		for _, s := range cfg.skernels {
			sw = append(sw, s.width)
		}
		for _, s := range cfg.dkernels {
			dw = append(dw, s.width)
		}
		want := map[path]string{pathGo: "[] []", pathAVX2: "[16] [8]", pathAVX512: "[64 32 16] [8]"}[p]
		if got := fmt.Sprint(sw, dw); got != want {
			t.Errorf("%v: kernel widths %s, want %s", p, got, want)
		}
		if Enabled() != (p != pathGo) || AVX512() != (p == pathAVX512) {
			t.Errorf("%v: Enabled() = %v, AVX512() = %v", p, Enabled(), AVX512())
		}
		restore()
	}
	for _, p := range paths {
		t.Logf("path %v: %s", p, map[bool]string{true: "available", false: "missing " + p.missing()}[p.missing() == ""])
	}
}

// Poison values: quiet NaNs with a payload of their own, compared bit for
// bit. A kernel that reads a poisoned element turns its result into a
// NaN; one that writes over it changes its bits.
var (
	poison32 = math.Float32frombits(0x7fc0dead)
	poison64 = math.Float64frombits(0x7ff80000deadbeef)
)

func poison[T float32 | float64]() T {
	var z T
	if _, ok := any(z).(float32); ok {
		return T(any(poison32).(float32))
	}
	return T(any(poison64).(float64))
}

// bits returns v's bits, for bit-for-bit comparisons.
func bits[T float32 | float64](v T) uint64 {
	switch x := any(v).(type) {
	case float32:
		return uint64(math.Float32bits(x))
	default:
		return math.Float64bits(any(v).(float64))
	}
}

// guardLen is the length of the margins on either side of a buffer: more
// than any kernel's width.
const guardLen = 67

// guarded is a buffer of n elements between poisoned margins.
type guarded[T float32 | float64] struct {
	whole []T // margin, the n elements, margin
	n     int
}

func newGuarded[T float32 | float64](n int) guarded[T] {
	g := guarded[T]{whole: make([]T, n+2*guardLen), n: n}
	for i := range g.whole {
		g.whole[i] = poison[T]()
	}
	return g
}

// inner is the buffer handed to the code under test; its capacity runs on
// into the back margin, so that a write past its length lands there.
func (g guarded[T]) inner() []T { return g.whole[guardLen : guardLen+g.n] }

func (g guarded[T]) clone() []T { return append([]T(nil), g.whole...) }

// unchanged reports the first element of the whole buffer (margins
// included) whose bits differ from before, -1 if none.
func (g guarded[T]) unchanged(before []T) int {
	for i, v := range g.whole {
		if bits(v) != bits(before[i]) {
			return i - guardLen
		}
	}
	return -1
}

// matrix is a guarded rows × cols matrix of gonum's minimal length with leading dimension ld, its
// padding poisoned and its elements drawn from rng.
func matrix[T float32 | float64](rng *rand.Rand, rows, cols, ld int) guarded[T] {
	g := newGuarded[T](max(0, (rows-1)*ld+cols)) // gonum's minimal length

	in := g.inner()
	for i := 0; i < rows; i++ {
		for j := 0; j < cols; j++ {
			in[i*ld+j] = T(rng.Float64()*2 - 1)
		}
	}
	return g
}

// refGemm is C = alpha·op(A)·op(B) + beta·C in float64 with plain loops,
// and the error bound of a correct float computation of each element:
// (k + chunks + 4)·ε·(|alpha|·Σ|a·b| + |beta·c|).
func refGemm[T float32 | float64](aT, bT bool, m, n, k int, alpha T, a []T, lda int, b []T, ldb int, beta T, c []T, ldc int) (want, bound []float64) {
	eps := 1.0 / (1 << 53)
	if _, ok := any(alpha).(float32); ok {
		eps = 1.0 / (1 << 24)
	}
	want, bound = make([]float64, m*n), make([]float64, m*n)
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			var s, abs float64
			if alpha != 0 {
				for p := 0; p < k; p++ {
					var av, bv T
					if aT {
						av = a[p*lda+i]
					} else {
						av = a[i*lda+p]
					}
					if bT {
						bv = b[j*ldb+p]
					} else {
						bv = b[p*ldb+j]
					}
					s += float64(av) * float64(bv)
					abs += math.Abs(float64(av) * float64(bv))
				}
			}
			w := float64(alpha) * s
			bd := math.Abs(float64(alpha)) * abs
			if beta != 0 {
				w += float64(beta) * float64(c[i*ldc+j])
				bd += math.Abs(float64(beta) * float64(c[i*ldc+j]))
			}
			want[i*n+j] = w
			bound[i*n+j] = float64(k+k/kcMax+4)*eps*bd + 1e-300
		}
	}
	return want, bound
}

// gemmT is the Implementation's Sgemm or Dgemm, by T.
func gemmT[T float32 | float64](tA, tB blas.Transpose, m, n, k int, alpha T, a []T, lda int, b []T, ldb int, beta T, c []T, ldc int) {
	var impl Implementation
	switch as := any(a).(type) {
	case []float32:
		impl.Sgemm(tA, tB, m, n, k, float32(alpha), as, lda, any(b).([]float32), ldb, float32(beta), any(c).([]float32), ldc)
	case []float64:
		impl.Dgemm(tA, tB, m, n, k, float64(alpha), as, lda, any(b).([]float64), ldb, float64(beta), any(c).([]float64), ldc)
	}
}

// gemmCase is one product on guarded buffers.
type gemmCase struct {
	aT, bT           bool
	m, n, k          int
	alpha, beta      float64
	padA, padB, padC int // leading dimension minus the row length
}

func (gc gemmCase) String() string {
	return fmt.Sprintf("m=%d n=%d k=%d aT=%v bT=%v alpha=%g beta=%g pads=%d,%d,%d", gc.m, gc.n, gc.k, gc.aT, gc.bT, gc.alpha, gc.beta, gc.padA, gc.padB, gc.padC)
}

// checkGuardedGemm runs gc on guarded buffers with the current path and
// reports (as errors) a write outside C's valid elements, a change to A
// or B, or an element of C outside the reference's bound.
func checkGuardedGemm[T float32 | float64](t testing.TB, rng *rand.Rand, gc gemmCase) {
	t.Helper()
	m, n, k := gc.m, gc.n, gc.k
	ar, ac := m, k
	if gc.aT {
		ar, ac = k, m
	}
	br, bc := k, n
	if gc.bT {
		br, bc = n, k
	}
	lda, ldb, ldc := max(1, ac)+gc.padA, max(1, bc)+gc.padB, max(1, n)+gc.padC
	ga, gb, gcc := matrix[T](rng, ar, ac, lda), matrix[T](rng, br, bc, ldb), matrix[T](rng, m, n, ldc)
	a0, b0, c0 := ga.clone(), gb.clone(), gcc.clone()
	c := gcc.inner()
	want, bound := refGemm(gc.aT, gc.bT, m, n, k, T(gc.alpha), ga.inner(), lda, gb.inner(), ldb, T(gc.beta), c, ldc)
	tA, tB := blas.NoTrans, blas.NoTrans
	if gc.aT {
		tA = blas.Trans
	}
	if gc.bT {
		tB = blas.Trans
	}
	gemmT(tA, tB, m, n, k, T(gc.alpha), ga.inner(), lda, gb.inner(), ldb, T(gc.beta), c, ldc)
	name := fmt.Sprintf("%T %v path %v", T(0), gc, cfg.path)
	if i := ga.unchanged(a0); i >= 0 {
		t.Fatalf("%s: A changed at %d", name, i)
	}
	if i := gb.unchanged(b0); i >= 0 {
		t.Fatalf("%s: B changed at %d", name, i)
	}
	for i, v := range gcc.whole {
		j := i - guardLen
		r, col := j/ldc, j%ldc
		if j >= 0 && j < gcc.n && col < n {
			if d := math.Abs(float64(v) - want[r*n+col]); !(d <= bound[r*n+col]) {
				t.Fatalf("%s: c[%d, %d] = %v, want %v ± %.3g", name, r, col, v, want[r*n+col], bound[r*n+col])
			}
			continue
		}
		if bits(v) != bits(c0[i]) {
			where := "padding"
			if j < 0 {
				where = "front margin"
			} else if j >= gcc.n {
				where = "back margin"
			}
			t.Fatalf("%s: wrote %v to C's %s at offset %d", name, v, where, j)
		}
	}
}

// guardShapes reach every route of Sgemm and Dgemm with the shipped
// thresholds: the small narrow loop, gonum for small products, the narrow
// paths (A and Aᵀ), gonum for few rows, and the kernels with every strip
// width and remainders of rows, columns and inner chunks.
var guardShapes = [][3]int{
	{403, 2, 95}, {20, 20, 20}, {9000, 2, 64}, {33, 5, 8300}, {2000, 3, 300}, {3, 64, 1000},
	{67, 35, 1100}, {37, 130, 40}, {5, 241, 120}, {64, 64, 64}, {9, 17, 1025},
}

// TestGemmGuard runs Sgemm and Dgemm on guarded buffers, on every path:
// each transposition, padded leading dimensions (lda, ldb, ldc larger
// than the rows), alpha and beta cases.
func TestGemmGuard(t *testing.T) {
	forEachPath(t, func(t *testing.T) {
		rng := rand.New(rand.NewSource(11))
		for _, sz := range guardShapes {
			for _, aT := range []bool{false, true} {
				for _, bT := range []bool{false, true} {
					for _, ab := range [][2]float64{{1, 0}, {-0.75, 1.5}, {0, 0.5}} {
						gc := gemmCase{aT, bT, sz[0], sz[1], sz[2], ab[0], ab[1], rng.Intn(3), 1 + rng.Intn(5), rng.Intn(70)}
						checkGuardedGemm[float32](t, rng, gc)
						checkGuardedGemm[float64](t, rng, gc)
					}
				}
			}
		}
	})
}

// TestGemmGuardSmall lowers the kernels' threshold so that small shapes
// around the kernels' widths (and the 4-row blocks) reach them, on
// guarded buffers.
func TestGemmGuardSmall(t *testing.T) {
	forEachPath(t, func(t *testing.T) {
		cfg.minWork = 1
		rng := rand.New(rand.NewSource(12))
		for _, m := range []int{0, 1, 3, 4, 5, 8, 9} {
			for _, n := range []int{0, 1, 7, 8, 9, 15, 16, 17, 31, 32, 33, 48, 63, 64, 65, 97, 112, 129} {
				for _, k := range []int{0, 1, 2, 5, 513} {
					for tr := 0; tr < 4; tr++ {
						gc := gemmCase{tr&1 != 0, tr&2 != 0, m, n, k, 1.25, []float64{0, 1, -0.5}[rng.Intn(3)], rng.Intn(3), rng.Intn(3), rng.Intn(3)}
						checkGuardedGemm[float32](t, rng, gc)
						checkGuardedGemm[float64](t, rng, gc)
					}
				}
			}
		}
	})
}

// TestKernelGuard calls each assembly kernel of each path (through
// strip.run) on exactly-sized guarded buffers whose unused elements are
// poisoned: A in both layouts (rows strided by sr, steps by sp), B and C
// with padding. Nothing outside the 4 × width block changes, A and B do
// not change, and the block is c + alpha·A·B.
func TestKernelGuard(t *testing.T) {
	forEachPath(t, func(t *testing.T) {
		if !cfg.kernels {
			t.Skip("no assembly kernels on this path")
		}
		rng := rand.New(rand.NewSource(13))
		for _, s := range cfg.skernels {
			kernelGuard(t, rng, s)
		}
		for _, s := range cfg.dkernels {
			kernelGuard(t, rng, s)
		}
	})
}

func kernelGuard[T float32 | float64](t *testing.T, rng *rand.Rand, s strip[T]) {
	w := s.width
	for _, k := range []int{0, 1, 2, 3, 4, 5, 8, 31, 64, 513} {
		for _, aT := range []bool{false, true} {
			pad := rng.Intn(5)
			// A's footprint: a[r*sr + p*sp], r < 4, p < k.
			sr, sp := k+pad, 1
			if aT {
				sr, sp = 1, 4+pad
			}
			ldb, ldc := w+rng.Intn(5), w+rng.Intn(5)
			na := 0
			if k > 0 {
				na = 3*sr + (k-1)*sp + 1
			}
			ga := newGuarded[T](na)
			for r := 0; r < 4 && k > 0; r++ {
				for p := 0; p < k; p++ {
					ga.inner()[r*sr+p*sp] = T(rng.Float64()*2 - 1)
				}
			}
			gb := matrix[T](rng, k, w, ldb)
			gc := matrix[T](rng, 4, w, ldc)
			alpha := T(0.5 + rng.Float64())
			a0, b0, c0 := ga.clone(), gb.clone(), gc.clone()
			s.run(k, ga.inner(), sr, sp, gb.inner(), ldb, gc.inner(), ldc, alpha)
			name := fmt.Sprintf("%T 4×%d kernel, k=%d aT=%v", T(0), w, k, aT)
			if i := ga.unchanged(a0); i >= 0 {
				t.Fatalf("%s: A changed at %d", name, i)
			}
			if i := gb.unchanged(b0); i >= 0 {
				t.Fatalf("%s: B changed at %d", name, i)
			}
			for i, v := range gc.whole {
				j := i - guardLen
				r, col := j/ldc, j%ldc
				if j < 0 || j >= gc.n || col >= w {
					if bits(v) != bits(c0[i]) {
						t.Fatalf("%s: wrote %v outside the block at offset %d (C holds %d elements, ldc %d)", name, v, j, gc.n, ldc)
					}
					continue
				}
				var sum, abs float64
				for p := 0; p < k; p++ {
					x := float64(ga.inner()[r*sr+p*sp]) * float64(gb.inner()[p*ldb+col])
					sum += x
					abs += math.Abs(x)
				}
				c := float64(c0[i])
				want := c + float64(alpha)*sum
				eps := 1.0 / (1 << 53)
				if w != 8 {
					eps = 1.0 / (1 << 24)
				}
				if d := math.Abs(float64(v) - want); !(d <= float64(k+2)*eps*(math.Abs(c)+float64(alpha)*abs)+1e-300) {
					t.Fatalf("%s: c[%d, %d] = %v, want %v", name, r, col, v, want)
				}
			}
		}
	}
}

// TestKernelRunChecks checks that strip.run refuses, before the kernel
// runs, every call that would reach outside a, b or c.
func TestKernelRunChecks(t *testing.T) {
	called := false
	s := strip[float32]{16, func(int, *float32, int, int, *float32, int, *float32, int, float32) { called = true }}
	const k, sr, sp, ldb, ldc = 5, 7, 1, 16, 18
	a := make([]float32, 3*sr+(k-1)*sp+1)
	b := make([]float32, (k-1)*ldb+16)
	c := make([]float32, 3*ldc+16)
	s.run(k, a, sr, sp, b, ldb, c, ldc, 1)
	if !called {
		t.Fatal("a valid call did not reach the kernel")
	}
	// With k = 1 the steps' strides sp and ldb are never used: they may
	// exceed the slices.
	called = false
	s.run(1, a[:3*sr+1], sr, 1000, b[:16], 1000, c, ldc, 1)
	if !called {
		t.Fatal("a valid call with k = 1 and long strides did not reach the kernel")
	}
	for _, tc := range []struct {
		name string
		run  func()
		want string
	}{
		{"k < 0", func() { s.run(-1, a, sr, sp, b, ldb, c, ldc, 1) }, "bad arguments k = -1"},
		{"sr < 0", func() { s.run(k, a, -1, sp, b, ldb, c, ldc, 1) }, "bad arguments"},
		{"ldb < width", func() { s.run(k, a, sr, sp, b, 15, c, ldc, 1) }, "ldb = 15"},
		{"ldc < width", func() { s.run(k, a, sr, sp, b, ldb, c, 15, 1) }, "ldc = 15"},
		{"short c", func() { s.run(k, a, sr, sp, b, ldb, c[:len(c)-1], ldc, 1) }, "len(c) = 69"},
		{"short a", func() { s.run(k, a[:len(a)-1], sr, sp, b, ldb, c, ldc, 1) }, "len(a) = 25"},
		{"short a, transposed", func() { s.run(k, a, 1, 7, b, ldb, c, ldc, 1) }, "len(a) = 26"},
		{"short b", func() { s.run(k, a, sr, sp, b[:len(b)-1], ldb, c, ldc, 1) }, "len(b) = 79"},
		{"huge strides", func() { s.run(k, a, math.MaxInt/2, sp, b, ldb, c, ldc, 1) }, "len(a) = 26"},
	} {
		called = false
		msg := panicOf(tc.run)
		if !strings.HasPrefix(msg, "fastblas: 4 × 16 kernel: ") || !strings.Contains(msg, tc.want) {
			t.Errorf("%s: panic %q, want one containing %q", tc.name, msg, tc.want)
		}
		if called {
			t.Errorf("%s: the kernel ran", tc.name)
		}
	}
}

// TestCheckBlock checks the once-per-product check of gemm on blocks of
// any size: a block's exact footprint in a, b and c passes, one element
// fewer in any of them panics (naming it), as do negative strides and
// strides so large that the footprint would overflow.
func TestCheckBlock(t *testing.T) {
	rng := rand.New(rand.NewSource(14))
	for rep := 0; rep < 2000; rep++ {
		rows, w, k := 1+rng.Intn(13), 1+rng.Intn(100), rng.Intn(9)
		sr, sp := rng.Intn(20), rng.Intn(20)
		ldb, ldc := w+rng.Intn(4), w+rng.Intn(4)
		// Largest element read or written, plus one.
		la := (rows-1)*sr + max(k-1, 0)*sp + 1
		lb := max(k-1, 0)*ldb + w
		lc := (rows-1)*ldc + w
		name := fmt.Sprintf("%d × %d block, k = %d, sr = %d, sp = %d, ldb = %d, ldc = %d", rows, w, k, sr, sp, ldb, ldc)
		if msg := panicOf(func() { checkBlock(rows, w, k, la, sr, sp, lb, ldb, lc, ldc) }); msg != "" {
			t.Fatalf("%s: exact footprint refused: %s", name, msg)
		}
		type shortCase struct {
			what string
			f    func()
		}
		short := []shortCase{{"len(c)", func() { checkBlock(rows, w, k, la, sr, sp, lb, ldb, lc-1, ldc) }}}
		if k > 0 { // a and b are not read
			short = append(short,
				shortCase{"len(a)", func() { checkBlock(rows, w, k, la-1, sr, sp, lb, ldb, lc, ldc) }},
				shortCase{"len(b)", func() { checkBlock(rows, w, k, la, sr, sp, lb-1, ldb, lc, ldc) }})
		}
		for _, sc := range short {
			want := fmt.Sprintf("fastblas: %d × %d kernel: %s = ", rows, w, sc.what)
			if msg := panicOf(sc.f); !strings.HasPrefix(msg, want) {
				t.Fatalf("%s: one element short in %s: panic %q, want one starting %q", name, sc.what, msg, want)
			}
		}
	}
	for _, tc := range []struct {
		name string
		run  func()
		want string
	}{
		{"no rows", func() { checkBlock(0, 16, 1, 100, 1, 1, 100, 16, 100, 16) }, "bad arguments"},
		{"sp < 0", func() { checkBlock(8, 16, 2, 100, 1, -1, 100, 16, 100, 16) }, "bad arguments"},
		{"huge sr", func() { checkBlock(8, 16, 2, 100, math.MaxInt/4, 1, 100, 16, 200, 16) }, "len(a) = 100"},
		{"huge sp", func() { checkBlock(8, 16, 3, 100, 1, math.MaxInt/2+1, 100, 16, 200, 16) }, "len(a) = 100"},
		{"huge ldb", func() { checkBlock(8, 16, 3, 100, 1, 1, 100, math.MaxInt/2+1, 200, 16) }, "len(b) = 100"},
		{"huge ldc", func() { checkBlock(8, 16, 3, 100, 1, 1, 100, 16, 200, math.MaxInt/4) }, "len(c) = 200"},
		{"huge k", func() { checkBlock(8, 16, math.MaxInt, 100, 1, 1, 100, 16, 200, 16) }, "len(a) = 100"},
	} {
		if msg := panicOf(tc.run); !strings.HasPrefix(msg, "fastblas: ") || !strings.Contains(msg, tc.want) {
			t.Errorf("%s: panic %q, want one containing %q", tc.name, msg, tc.want)
		}
	}
}

// panicOf runs f and returns its panic's message ("" if none).
func panicOf(f func()) (msg string) {
	defer func() {
		if r := recover(); r != nil {
			msg = fmt.Sprint(r)
		}
	}()
	f()
	return ""
}

// TestGemmChecks checks each of Sgemm's, SgemmThen's and Dgemm's argument
// checks: the same panic as gonum's for the same call, before C (guarded)
// changes or then runs.
func TestGemmChecks(t *testing.T) {
	const m, n, k = 8, 20, 6 // A m × k, B k × n, C m × n: large enough for every route once lowered
	type args struct {
		tA, tB        blas.Transpose
		m, n, k       int
		la, lda       int
		lb, ldb       int
		lc, ldc       int
		want          string
		transposedOps bool
	}
	ok := args{blas.NoTrans, blas.NoTrans, m, n, k, (m-1)*k + k, k, (k-1)*n + n, n, (m-1)*n + n, n, "", false}
	cases := map[string]args{}
	add := func(name string, f func(*args)) {
		a := ok
		f(&a)
		cases[name] = a
	}
	add("bad tA", func(a *args) { a.tA = 'X'; a.want = badTranspose })
	add("bad tB", func(a *args) { a.tB = 0; a.want = badTranspose })
	add("m < 0", func(a *args) { a.m = -1; a.want = mLT0 })
	add("n < 0", func(a *args) { a.n = -1; a.want = nLT0 })
	add("k < 0", func(a *args) { a.k = -1; a.want = kLT0 })
	add("lda < k", func(a *args) { a.lda = k - 1; a.want = badLdA })
	add("lda < m (Aᵀ)", func(a *args) { a.tA = blas.Trans; a.lda = m - 1; a.la = 1000; a.want = badLdA })
	add("ldb < n", func(a *args) { a.ldb = n - 1; a.want = badLdB })
	add("ldb < k (Bᵀ)", func(a *args) { a.tB = blas.Trans; a.ldb = k - 1; a.lb = 1000; a.want = badLdB })
	add("ldc < n", func(a *args) { a.ldc = n - 1; a.want = badLdC })
	add("lda 0 with k = 0", func(a *args) { a.k = 0; a.lda = 0; a.want = badLdA })
	add("short a", func(a *args) { a.la--; a.want = shortA })
	add("short a (Aᵀ)", func(a *args) { a.tA = blas.Trans; a.lda = m; a.la = (k-1)*m + m - 1; a.want = shortA })
	add("short b", func(a *args) { a.lb--; a.want = shortB })
	add("short b (Bᵀ)", func(a *args) { a.tB = blas.ConjTrans; a.ldb = k; a.lb = (n-1)*k + k - 1; a.want = shortB })
	add("short c", func(a *args) { a.lc--; a.want = shortC })
	add("short c, padded ldc", func(a *args) { a.ldc = n + 3; a.lc = (m-1)*(n+3) + n - 1; a.want = shortC })
	add("m = 0, empty slices", func(a *args) { a.m, a.la, a.lc = 0, 0, 0 })
	add("n = 0, empty slices", func(a *args) { a.n, a.lb, a.lc = 0, 0, 0 })
	add("k = 0, empty A and B", func(a *args) { a.k, a.lda, a.la, a.lb = 0, 1, (m-1)*1, 0 })
	forEachPath(t, func(t *testing.T) {
		for _, lowered := range []bool{false, true} {
			if lowered {
				cfg.minWork = 1 // every route, the kernels included
			}
			for name, tc := range cases {
				name := fmt.Sprintf("%s (minWork %d)", name, cfg.minWork)
				ref := panicOf(func() {
					gonum.Implementation{}.Dgemm(tc.tA, tc.tB, tc.m, tc.n, tc.k, 1, make([]float64, tc.la), tc.lda, make([]float64, tc.lb), tc.ldb, 0, make([]float64, tc.lc), tc.ldc)
				})
				if ref != tc.want {
					t.Fatalf("%s: gonum panics with %q, the case expects %q", name, ref, tc.want)
				}
				gc64 := newGuarded[float64](tc.lc)
				before64 := gc64.clone()
				got := panicOf(func() {
					Implementation{}.Dgemm(tc.tA, tc.tB, tc.m, tc.n, tc.k, 1, make([]float64, tc.la), tc.lda, make([]float64, tc.lb), tc.ldb, 0, gc64.inner(), tc.ldc)
				})
				if got != tc.want {
					t.Errorf("Dgemm %s: panic %q, want %q", name, got, tc.want)
				}
				if tc.want != "" && gc64.unchanged(before64) >= 0 {
					t.Errorf("Dgemm %s: C changed before the panic", name)
				}
				for _, then := range []bool{false, true} {
					gc32 := newGuarded[float32](tc.lc)
					before32 := gc32.clone()
					ran := false
					var f func(lo, hi int)
					if then {
						f = func(lo, hi int) { ran = true }
					}
					got := panicOf(func() {
						Implementation{}.SgemmThen(tc.tA, tc.tB, tc.m, tc.n, tc.k, 1, make([]float32, tc.la), tc.lda, make([]float32, tc.lb), tc.ldb, 0, gc32.inner(), tc.ldc, f)
					})
					if got != tc.want {
						t.Errorf("SgemmThen (then %v) %s: panic %q, want %q", then, name, got, tc.want)
					}
					if tc.want != "" && (gc32.unchanged(before32) >= 0 || ran) {
						t.Errorf("SgemmThen (then %v) %s: C changed or then ran before the panic", then, name)
					}
					if tc.want == "" && then && !ran {
						t.Errorf("SgemmThen %s: then never ran", name)
					}
				}
			}
		}
	})
}

// TestDot2Guard runs dot2 on every path on guarded buffers (y0 and y1
// longer than x, their tails poisoned): the result is its Go loop's, bit
// for bit, and no buffer changes.
func TestDot2Guard(t *testing.T) {
	forEachPath(t, func(t *testing.T) {
		rng := rand.New(rand.NewSource(14))
		for n := 0; n <= 70; n++ {
			dot2Guard[float32](t, rng, n, 3)
			dot2Guard[float64](t, rng, n, 3)
		}
	})
}

func dot2Guard[T float32 | float64](t testing.TB, rng *rand.Rand, n, extra int) {
	t.Helper()
	gx, g0, g1 := newGuarded[T](n), newGuarded[T](n+extra), newGuarded[T](n+extra)
	for _, g := range []guarded[T]{gx, g0, g1} {
		for i := 0; i < n; i++ {
			g.inner()[i] = T(rng.Float64()*2 - 1)
		}
	}
	x0, y00, y10 := gx.clone(), g0.clone(), g1.clone()
	w0, w1 := dot2Go(gx.inner(), g0.inner()[:n], g1.inner()[:n])
	v0, v1 := dot2(gx.inner(), g0.inner(), g1.inner())
	if bits(v0) != bits(w0) || bits(v1) != bits(w1) {
		t.Fatalf("%T dot2 n=%d path %v: %v %v, want %v %v", T(0), n, cfg.path, v0, v1, w0, w1)
	}
	if gx.unchanged(x0) >= 0 || g0.unchanged(y00) >= 0 || g1.unchanged(y10) >= 0 {
		t.Fatalf("%T dot2 n=%d path %v: an input changed", T(0), n, cfg.path)
	}
}
