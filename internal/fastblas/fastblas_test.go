package fastblas

import (
	"fmt"
	"math"
	"math/rand"
	"runtime"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"
)

func randSlice(rng *rand.Rand, n int) []float64 {
	s := make([]float64, n)
	for i := range s {
		s[i] = rng.Float64()*2 - 1
	}
	return s
}

func to32(s []float64) []float32 {
	out := make([]float32, len(s))
	for i, v := range s {
		out[i] = float32(v)
	}
	return out
}

// TestGemmMatchesGonum compares Sgemm and Dgemm with gonum's on every
// transposition, shapes with and without remainders (rows not a multiple
// of 4, columns not a multiple of the kernel width, an inner dimension
// longer than one chunk), padded leading dimensions, and alpha/beta
// cases; and checks determinism.
func TestGemmMatchesGonum(t *testing.T) {
	forEachPath(t, func(t *testing.T) {
		if !Enabled() {
			t.Log("no AVX2/FMA: Implementation is gonum's; comparing anyway")
		}
		rng := rand.New(rand.NewSource(1))
		ref := gonum.Implementation{}
		var impl Implementation
		trans := []blas.Transpose{blas.NoTrans, blas.Trans}
		for _, sz := range [][3]int{{64, 64, 64}, {67, 35, 1100}, {301, 64, 276}, {276, 64, 3001}, {130, 19, 70}, {8, 16, 2048}, {37, 48, 600}, {64, 80, 513}, {9000, 2, 64}, {64, 2, 9000}, {33, 5, 8300}, {2000, 3, 300}, {403, 2, 95}, {95, 2, 403}, {7, 3, 5}, {20, 15, 30}, {1, 1, 1}} {
			m, n, k := sz[0], sz[1], sz[2]
			for _, tA := range trans {
				for _, tB := range trans {
					for _, ab := range [][2]float64{{1, 0}, {-0.7, 0.5}, {2, 1}} {
						ar, ac := m, k
						if tA == blas.Trans {
							ar, ac = k, m
						}
						br, bc := k, n
						if tB == blas.Trans {
							br, bc = n, k
						}
						lda, ldb, ldc := ac+3, bc+1, n+2
						a := randSlice(rng, lda*(ar-1)+ac)
						b := randSlice(rng, ldb*(br-1)+bc)
						c0 := randSlice(rng, ldc*(m-1)+n)
						name := fmt.Sprintf("m=%d n=%d k=%d tA=%c tB=%c alpha=%g beta=%g", m, n, k, tA, tB, ab[0], ab[1])

						want := append([]float64(nil), c0...)
						ref.Dgemm(tA, tB, m, n, k, ab[0], a, lda, b, ldb, ab[1], want, ldc)
						got := append([]float64(nil), c0...)
						impl.Dgemm(tA, tB, m, n, k, ab[0], a, lda, b, ldb, ab[1], got, ldc)
						tol := 1e-12 * float64(k)
						// The checks run per element; testify is called on a
						// failure only (millions of calls otherwise).
						for i := range want {
							if !(math.Abs(want[i]-got[i]) <= tol*(1+math.Abs(want[i]))) {
								require.InDelta(t, want[i], got[i], tol*(1+math.Abs(want[i])), "Dgemm %s: c[%d]", name, i)
							}
						}
						again := append([]float64(nil), c0...)
						impl.Dgemm(tA, tB, m, n, k, ab[0], a, lda, b, ldb, ab[1], again, ldc)
						for i := range got {
							if !(got[i] == again[i]) {
								require.Equal(t, got[i], again[i], "Dgemm %s: not deterministic at %d", name, i)
							}
						}

						a32, b32 := to32(a), to32(b)
						want32 := to32(c0)
						ref.Sgemm(tA, tB, m, n, k, float32(ab[0]), a32, lda, b32, ldb, float32(ab[1]), want32, ldc)
						got32 := to32(c0)
						impl.Sgemm(tA, tB, m, n, k, float32(ab[0]), a32, lda, b32, ldb, float32(ab[1]), got32, ldc)
						// The float64 product of the same inputs: absSum holds
						// |alpha|·Σ_p |a_ip b_pj| + |beta c_ij|, so that the
						// float32 result must be within the classic bound
						// (k+2)·ε32·absSum (inputs rounded to float32, then k
						// rounded multiply-adds).
						abs := func(v []float64) []float64 {
							out := make([]float64, len(v))
							for i, x := range v {
								out[i] = math.Abs(x)
							}
							return out
						}
						absSum := abs(c0)
						ref.Dgemm(tA, tB, m, n, k, math.Abs(ab[0]), abs(a), lda, abs(b), ldb, math.Abs(ab[1]), absSum, ldc)
						const eps32 = 1.0 / (1 << 24)
						for i := range want32 {
							// Padding between rows must stay untouched.
							if i%ldc >= n {
								if !(want32[i] == got32[i]) {
									require.Equal(t, want32[i], got32[i], "Sgemm %s: padding c[%d] changed", name, i)
								}
								continue
							}
							if bound := float64(k+2) * eps32 * absSum[i]; !(math.Abs(want[i]-float64(got32[i])) <= bound) {
								require.InDelta(t, want[i], float64(got32[i]), bound, "Sgemm %s: c[%d] (gonum's float32: %v)", name, i, want32[i])
							}
						}
					}
				}
			}
		}
	})
}

// TestGemmInvalidPanicsLikeGonum checks that bad arguments reach gonum's
// checks instead of the kernels.
func TestGemmInvalidPanicsLikeGonum(t *testing.T) {
	var impl Implementation
	a := make([]float32, 64*64)
	c := make([]float32, 64*64)
	defer func() {
		if r := recover(); r == nil {
			t.Fatal("short B slice did not panic")
		}
	}()
	impl.Sgemm(blas.NoTrans, blas.NoTrans, 64, 64, 64, 1, a, 64, a[:100], 64, 0, c, 64)
}

func benchShapes(b *testing.B, f func(tA blas.Transpose, m, n, k int, a, bb, c []float32)) {
	rng := rand.New(rand.NewSource(1))
	const n, d, h = 67796, 276, 64
	x := to32(randSlice(rng, n*d))
	w := to32(randSlice(rng, d*h))
	y := to32(randSlice(rng, n*h))
	dw := make([]float32, d*h)
	b.Run("XW", func(b *testing.B) { // forward: (n×d)·(d×h)
		b.SetBytes(2 * n * d * h) // flops, reported as "MB/s" = MFLOP/s
		for i := 0; i < b.N; i++ {
			f(blas.NoTrans, n, h, d, x, w, y)
		}
	})
	b.Run("XtdY", func(b *testing.B) { // weight gradient: (n×d)ᵀ·(n×h)
		b.SetBytes(2 * n * d * h)
		for i := 0; i < b.N; i++ {
			f(blas.Trans, d, h, n, x, y, dw)
		}
	})
}

// BenchmarkSgemm reports MFLOP/s (as MB/s) on the Pokec-z first-layer
// shapes.
func BenchmarkSgemm(b *testing.B) {
	var impl Implementation
	benchShapes(b, func(tA blas.Transpose, m, n, k int, a, bb, c []float32) {
		lda := k
		if tA == blas.Trans {
			lda = m
		}
		impl.Sgemm(tA, blas.NoTrans, m, n, k, 1, a, lda, bb, n, 0, c, n)
	})
}

func BenchmarkSgemmGonum(b *testing.B) {
	var impl gonum.Implementation
	benchShapes(b, func(tA blas.Transpose, m, n, k int, a, bb, c []float32) {
		lda := k
		if tA == blas.Trans {
			lda = m
		}
		impl.Sgemm(tA, blas.NoTrans, m, n, k, 1, a, lda, bb, n, 0, c, n)
	})
}

// TestGemmIndependentOfGOMAXPROCS checks bit-identical results with one
// and several workers, for the kernel path and the narrow path.
func TestGemmIndependentOfGOMAXPROCS(t *testing.T) {
	forEachPath(t, func(t *testing.T) {
		rng := rand.New(rand.NewSource(2))
		var impl Implementation
		for _, sz := range [][3]int{{1001, 64, 300}, {276, 64, 5000}, {5000, 2, 64}, {64, 2, 20000}} {
			m, n, k := sz[0], sz[1], sz[2]
			for _, tA := range []blas.Transpose{blas.NoTrans, blas.Trans} {
				lda := k
				a := to32(randSlice(rng, m*k))
				if tA == blas.Trans {
					lda = m
				}
				b := to32(randSlice(rng, k*n))
				run := func(procs int) []float32 {
					defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
					c := make([]float32, m*n)
					impl.Sgemm(tA, blas.NoTrans, m, n, k, 1, a, lda, b, n, 0, c, n)
					return c
				}
				one, four := run(1), run(4)
				for i := range one {
					if one[i] != four[i] {
						t.Fatalf("m=%d n=%d k=%d tA=%c: c[%d] = %v with 1 worker, %v with 4", m, n, k, tA, i, one[i], four[i])
					}
				}
			}
		}
	})
}

// TestSgemmThen checks that SgemmThen leaves C as Sgemm does, bit for
// bit, and calls then on blocks that cover every row exactly once, each
// after its rows are final (then copies them; the copy must equal C).
func TestSgemmThen(t *testing.T) {
	forEachPath(t, func(t *testing.T) {
		rng := rand.New(rand.NewSource(2))
		var impl Implementation
		for _, sz := range [][3]int{{18876, 64, 18}, {1001, 64, 95}, {403, 2, 95}, {30, 48, 700}, {7, 20, 3}, {5000, 5, 64}} {
			m, n, k := sz[0], sz[1], sz[2]
			a, b := to32(randSlice(rng, m*k)), to32(randSlice(rng, k*n))
			want := make([]float32, m*n)
			impl.Sgemm(blas.NoTrans, blas.NoTrans, m, n, k, 1, a, k, b, n, 0, want, n)
			got := make([]float32, m*n)
			seen := make([]int32, m)
			snap := make([]float32, m*n)
			var mu sync.Mutex
			impl.SgemmThen(blas.NoTrans, blas.NoTrans, m, n, k, 1, a, k, b, n, 0, got, n, func(lo, hi int) {
				mu.Lock()
				defer mu.Unlock()
				for i := lo; i < hi; i++ {
					seen[i]++
				}
				copy(snap[lo*n:hi*n], got[lo*n:hi*n])
			})
			for i := range seen {
				require.Equal(t, int32(1), seen[i], "%v: row %d seen %d times", sz, i, seen[i])
			}
			require.Equal(t, want, got, "%v: C", sz)
			require.Equal(t, want, snap, "%v: rows when then saw them", sz)
		}
	})
}

// dot2Go is dot2's plain Go loop, the reference of its kernels.
func dot2Go[T float32 | float64](x, y0, y1 []T) (T, T) {
	var a0, a1, a2, a3, c0, c1, c2, c3 T
	p := 0
	for ; p+4 <= len(x); p += 4 {
		a0 += x[p] * y0[p]
		a1 += x[p+1] * y0[p+1]
		a2 += x[p+2] * y0[p+2]
		a3 += x[p+3] * y0[p+3]
		c0 += x[p] * y1[p]
		c1 += x[p+1] * y1[p+1]
		c2 += x[p+2] * y1[p+2]
		c3 += x[p+3] * y1[p+3]
	}
	for ; p < len(x); p++ {
		a0 += x[p] * y0[p]
		c0 += x[p] * y1[p]
	}
	return (a0 + a1) + (a2 + a3), (c0 + c1) + (c2 + c3)
}

// TestDot2Kernels checks dot2 (vector lanes for the partial sums) against
// its Go loop bit for bit, float32 and float64, every length to 70, with
// signed zeros, infinities and NaNs among random values.
func TestDot2Kernels(t *testing.T) {
	forEachPath(t, func(t *testing.T) {
		rng := rand.New(rand.NewSource(4))
		special := []float64{0, math.Copysign(0, -1), math.Inf(1), math.Inf(-1), math.NaN(), 1e-310, 3e38}
		for n := 0; n <= 70; n++ {
			for rep := 0; rep < 10; rep++ {
				x, y0, y1 := randSlice(rng, n), randSlice(rng, n), randSlice(rng, n)
				for _, v := range [][]float64{x, y0, y1} {
					for i := range v {
						if rng.Intn(10) == 0 {
							v[i] = special[rng.Intn(len(special))]
						}
					}
				}
				// Bit for bit, but a NaN equals any NaN: which operand's
				// payload an add of two NaNs keeps depends on how the
				// compiler orders the operands, even between two copies of
				// one Go loop.
				same64 := func(a, b float64) bool { return math.Float64bits(a) == math.Float64bits(b) || (a != a && b != b) }
				same32 := func(a, b float32) bool { return math.Float32bits(a) == math.Float32bits(b) || (a != a && b != b) }
				w0, w1 := dot2Go(x, y0, y1)
				g0, g1 := dot2(x, y0, y1)
				require.True(t, same64(w0, g0) && same64(w1, g1), "float64 n=%d: %v %v, want %v %v", n, g0, g1, w0, w1)
				x32, a32, b32 := to32(x), to32(y0), to32(y1)
				v0, v1 := dot2Go(x32, a32, b32)
				h0, h1 := dot2(x32, a32, b32)
				require.True(t, same32(v0, h0) && same32(v1, h1), "float32 n=%d: %v %v, want %v %v", n, h0, h1, v0, v1)
			}
		}
	})
}
