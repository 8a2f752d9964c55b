package spkern

import (
	"fmt"
	"math"
	"math/rand"
	"testing"
)

// The safety net of the kernels, after gonum's internal/asm tests: every
// kernel on every path this machine runs, at every length around the
// vector widths, on buffers with poisoned margins, against plain Go
// references.

// runnablePaths returns the kernel paths this build and CPU run.
func runnablePaths() []kernelPath {
	var ps []kernelPath
	for _, p := range kernelPaths {
		if p.missing == "" {
			ps = append(ps, p)
		}
	}
	return ps
}

// forEachPath runs f as a subtest on every kernel path, with the path
// forced; a path this machine or build cannot run is skipped, naming what
// it lacks.
func forEachPath(t *testing.T, f func(t *testing.T, k *kernelSet)) {
	t.Helper()
	for _, p := range kernelPaths {
		t.Run(p.name, func(t *testing.T) {
			if p.missing != "" {
				t.Skipf("path %s: this machine lacks %s", p.name, p.missing)
			}
			defer force(p.set)()
			f(t, p.set)
		})
	}
}

// force makes k the active kernel set and returns the restore function.
func force(k *kernelSet) func() {
	old := active
	active = k
	return func() { active = old }
}

// TestKernelPaths checks the path list: the default is the first runnable
// path, the pure-Go path always runs, and the assembly runs exactly when
// Enabled says so.
func TestKernelPaths(t *testing.T) {
	if active != defaultKernels() || active != runnablePaths()[0].set {
		t.Fatalf("active path %s, want the first runnable one", active.name)
	}
	last := kernelPaths[len(kernelPaths)-1]
	if last.set != &goKernels || last.missing != "" {
		t.Fatalf("the pure-Go path is not the last, always runnable one: %+v", last)
	}
	for _, p := range kernelPaths {
		if p.missing != "" && p.set == active {
			t.Fatalf("path %s is active but lacks %s", p.name, p.missing)
		}
		t.Logf("path %s: missing %q", p.name, p.missing)
	}
	if Enabled() != (kernelPaths[0].missing == "" && kernelPaths[0].set.asm) {
		t.Fatalf("Enabled() = %v with the assembly path missing %q", Enabled(), kernelPaths[0].missing)
	}
}

// guardLen is the length of the poisoned margins around every buffer.
const guardLen = 7

// sentinel is the NaN the margins hold; a kernel that reads one puts a
// NaN into its result, one that writes one breaks it.
func sentinel[T Float]() T {
	var z T
	if _, ok := any(z).(float32); ok {
		return T(math.Float32frombits(0x7fc0dead))
	}
	return T(math.Float64frombits(0x7ff800000000dead))
}

// guarded returns a buffer of n values set by fill between margins of
// guardLen+skew sentinels (skew shifts the alignment of the valid part),
// and the valid part.
func guarded[T Float](n, skew int, fill func(i int) T) (all, valid []T) {
	g := guardLen + skew
	all = make([]T, g+n+guardLen)
	for i := range all {
		all[i] = sentinel[T]()
	}
	valid = all[g : g+n : g+n]
	for i := range valid {
		valid[i] = fill(i)
	}
	return all, valid
}

// bits returns the bits of a float32 or float64 (and of an int, for the
// index arrays), so that NaNs compare by payload.
func bits[T Float | int32 | int](v T) uint64 {
	switch v := any(v).(type) {
	case float32:
		return uint64(math.Float32bits(v))
	case float64:
		return math.Float64bits(v)
	case int32:
		return uint64(v)
	case int:
		return uint64(v)
	}
	panic("unreachable")
}

// unchanged fails unless buf is, bit for bit, the copy taken before.
func unchanged[T Float | int32 | int](t testing.TB, what string, before, buf []T) {
	t.Helper()
	for i := range buf {
		if bits(buf[i]) != bits(before[i]) {
			t.Fatalf("%s: %s[%d] changed from %v to %v", active.name, what, i, before[i], buf[i])
		}
	}
}

// guardsIntact fails unless the margins of an output buffer from
// guarded(n, skew, …) still hold the sentinel.
func guardsIntact[T Float](t testing.TB, what string, all []T, n, skew int) {
	t.Helper()
	g := guardLen + skew
	for i, v := range all {
		if (i < g || i >= g+n) && bits(v) != bits(sentinel[T]()) {
			where := fmt.Sprintf("%d after the end", i-g-n)
			if i < g {
				where = fmt.Sprintf("%d before the start", g-i)
			}
			t.Fatalf("%s: %s written outside its %d valid values, %s (%v)", active.name, what, n, where, v)
		}
	}
}

// value draws a test value: wide magnitudes, signed zeros and, when
// special, infinities and NaNs.
func value[T Float](rng *rand.Rand, special bool) T {
	switch r := rng.Intn(20); {
	case r == 0:
		return 0
	case r == 1:
		return T(math.Copysign(0, -1))
	case r == 2 && special:
		return T(math.Inf(1 - 2*rng.Intn(2)))
	case r == 3 && special:
		return T(math.NaN())
	}
	return T(rng.NormFloat64() * math.Ldexp(1, rng.Intn(21)-10))
}

// eps is the unit roundoff of T.
func eps[T Float]() float64 {
	var z T
	if _, ok := any(z).(float32); ok {
		return 0x1p-24
	}
	return 0x1p-53
}

// agree compares a kernel's result with the reference: bit for bit
// (NaNs of any payload alike) when exact, else within the error bound of
// a sum of n rounded terms whose magnitudes add to abs.
func agree[T Float](got, want T, exact bool, n int, abs float64) bool {
	g, w := float64(got), float64(want)
	if math.IsNaN(g) || math.IsNaN(w) {
		return math.IsNaN(g) && math.IsNaN(w)
	}
	if exact {
		return bits(got) == bits(want)
	}
	return math.Abs(g-w) <= 2*float64(n+2)*eps[T]()*abs+1e-300
}

// fusesMulAdd reports whether kernel k's T version of a FMA-summing
// kernel fuses (the float32 assembly): its results then match the
// reference within rounding, not bit for bit.
func fusesMulAdd[T Float](k *kernelSet) bool {
	var z T
	_, f32 := any(z).(float32)
	return f32 && k.asm
}

func rowStrip[T Float](width int, idx []int32, val, x []T, ldx int, out []T) bool {
	switch v := any(val).(type) {
	case []float32:
		return RowStrip32(width, idx, v, any(x).([]float32), ldx, any(out).([]float32))
	default:
		return RowStrip64(width, idx, v.([]float64), any(x).([]float64), ldx, any(out).([]float64))
	}
}

// gatherX builds x for a gather of rows rows of width values at stride
// ldx: the strips hold test values, the columns between them sentinels.
func gatherX[T Float](rng *rand.Rand, rows, width, ldx, skew int, special bool) (all, x []T) {
	n := 0
	if rows > 0 {
		n = (rows-1)*ldx + width
	}
	return guarded(n, skew, func(i int) T {
		if i%ldx >= width {
			return sentinel[T]()
		}
		return value[T](rng, special)
	})
}

// checkRowStrip runs RowStrip32/64 (by T) on guarded buffers with nnz
// non-zeros, x's rows at stride width+extra and the buffers shifted by
// skew, against the plain loop.
func checkRowStrip[T Float](t testing.TB, rng *rand.Rand, width, nnz, extra, skew int) {
	t.Helper()
	exact := !fusesMulAdd[T](active)
	rows := 1 + rng.Intn(2*nnz+1)
	ldx := width + extra
	idxAll := make([]int32, nnz+2*guardLen)
	idx := idxAll[guardLen : guardLen+nnz : guardLen+nnz]
	for p := range idx {
		idx[p] = int32(rng.Intn(rows))
	}
	valAll, val := guarded(nnz, skew, func(int) T { return value[T](rng, exact) })
	xAll, x := gatherX[T](rng, rows, width, ldx, skew, exact)
	outAll, out := guarded(width, skew, func(int) T { return sentinel[T]() })
	in := [][]T{append([]T(nil), valAll...), append([]T(nil), xAll...)}
	idxBefore := append([]int32(nil), idxAll...)
	ran := rowStrip(width, idx, val, x, ldx, out)
	unchanged(t, "idx", idxBefore, idxAll)
	unchanged(t, "val", in[0], valAll)
	unchanged(t, "x", in[1], xAll)
	guardsIntact(t, "out", outAll, width, skew)
	if ran != (nnz > 0) {
		t.Fatalf("%s: RowStrip width %d, %d non-zeros: ran = %v", active.name, width, nnz, ran)
	}
	if !ran {
		return
	}
	for c := range out {
		var want T
		abs := 0.0
		for p, j := range idx {
			want += T(val[p] * x[int(j)*ldx+c])
			abs += math.Abs(float64(val[p]) * float64(x[int(j)*ldx+c]))
		}
		if !agree(out[c], want, exact, nnz, abs) {
			t.Fatalf("%s: RowStrip width %d, %d non-zeros, stride %d, skew %d: out[%d] = %v, want %v", active.name, width, nnz, ldx, skew, c, out[c], want)
		}
	}
}

// TestRowStripGuarded runs both widths of both precisions for 0 to
// 3·8+1 non-zeros (the 64- and 32-wide kernels prefetch 8 steps ahead).
func TestRowStripGuarded(t *testing.T) {
	forEachPath(t, func(t *testing.T, k *kernelSet) {
		rng := rand.New(rand.NewSource(1))
		for nnz := 0; nnz <= 3*8+1; nnz++ {
			for _, extra := range []int{0, 1, 3} {
				for skew := 0; skew < 3; skew++ {
					checkRowStrip[float32](t, rng, 64, nnz, extra, skew)
					checkRowStrip[float32](t, rng, 8, nnz, extra, skew)
					checkRowStrip[float64](t, rng, 32, nnz, extra, skew)
					checkRowStrip[float64](t, rng, 8, nnz, extra, skew)
				}
			}
		}
	})
}

func heads[T Float](idx, arow []int32, alpha, x []T, ldx int, out []T) bool {
	switch a := any(alpha).(type) {
	case []float32:
		return Heads4x16(idx, arow, a, any(x).([]float32), ldx, any(out).([]float32))
	default:
		return Heads4x16d(idx, arow, a.([]float64), any(x).([]float64), ldx, any(out).([]float64))
	}
}

// checkHeads4x16 runs Heads4x16/Heads4x16d (by T), with indexed weights
// or not, on guarded buffers against the plain loop.
func checkHeads4x16[T Float](t testing.TB, rng *rand.Rand, nnz, extra, skew int, indexed bool) {
	t.Helper()
	exact := !fusesMulAdd[T](active)
	rows := 1 + rng.Intn(2*nnz+1)
	ldx := 64 + extra
	idx := make([]int32, nnz)
	for p := range idx {
		idx[p] = int32(rng.Intn(rows))
	}
	na := nnz
	var arow []int32
	if indexed {
		na = 1 + rng.Intn(nnz+2)
		arow = make([]int32, nnz)
		for p := range arow {
			arow[p] = int32(rng.Intn(na))
		}
	}
	alphaAll, alpha := guarded(4*na, skew, func(int) T { return value[T](rng, exact) })
	xAll, x := gatherX[T](rng, rows, 64, ldx, skew, exact)
	outAll, out := guarded(64, skew, func(int) T { return sentinel[T]() })
	aBefore, xBefore := append([]T(nil), alphaAll...), append([]T(nil), xAll...)
	if !heads(idx, arow, alpha, x, ldx, out) {
		t.Fatalf("%s: Heads4x16 reported not run", active.name)
	}
	unchanged(t, "alpha", aBefore, alphaAll)
	unchanged(t, "x", xBefore, xAll)
	guardsIntact(t, "out", outAll, 64, skew)
	for c := range out {
		var want T
		abs := 0.0
		for p, j := range idx {
			r := p
			if indexed {
				r = int(arow[p])
			}
			w := alpha[4*r+c/16]
			want += T(w * x[int(j)*ldx+c])
			abs += math.Abs(float64(w) * float64(x[int(j)*ldx+c]))
		}
		if !agree(out[c], want, exact, nnz, abs) {
			t.Fatalf("%s: Heads4x16, %d non-zeros, indexed %v, stride %d, skew %d: out[%d] = %v, want %v", active.name, nnz, indexed, ldx, skew, c, out[c], want)
		}
	}
}

func TestHeads4x16Guarded(t *testing.T) {
	forEachPath(t, func(t *testing.T, k *kernelSet) {
		rng := rand.New(rand.NewSource(2))
		for nnz := 0; nnz <= 3*8+1; nnz++ {
			for _, extra := range []int{0, 1, 3} {
				for skew := 0; skew < 3; skew++ {
					for _, indexed := range []bool{false, true} {
						checkHeads4x16[float32](t, rng, nnz, extra, skew, indexed)
						checkHeads4x16[float64](t, rng, nnz, extra, skew, indexed)
					}
				}
			}
		}
	})
}

func headsDot[T Float](idx []int32, x []T, ldx int, d, out []T, scale T) bool {
	switch xx := any(x).(type) {
	case []float32:
		return Heads4x16Dot(idx, xx, ldx, any(d).([]float32), any(out).([]float32), any(scale).(float32))
	default:
		return Heads4x16Dotd(idx, xx.([]float64), ldx, any(d).([]float64), any(out).([]float64), any(scale).(float64))
	}
}

// dotRef is the per-head dot product in the kernels' order: float32 as
// the assembly's lanes (((t0+t1)+(t2+t3)) + ((t4+t5)+(t6+t7)) with t_l =
// x_l·d_l + x_{8+l}·d_{8+l}), float64 as gatDot.
func dotRef[T Float](x, d []T, scale T) T {
	var z T
	if _, ok := any(z).(float32); ok {
		var t [8]T
		for l := range t {
			t[l] = T(x[l]*d[l]) + T(x[8+l]*d[8+l])
		}
		return T((((t[0] + t[1]) + (t[2] + t[3])) + ((t[4] + t[5]) + (t[6] + t[7]))) * scale)
	}
	var s [4]T
	for q := 0; q < 16; q++ {
		s[q%4] += T(x[q] * d[q])
	}
	return T(((s[0] + s[1]) + (s[2] + s[3])) * scale)
}

// checkHeads4x16Dot runs Heads4x16Dot/Heads4x16Dotd (by T) on guarded
// buffers against dotRef.
func checkHeads4x16Dot[T Float](t testing.TB, rng *rand.Rand, nnz, extra, skew int) {
	t.Helper()
	exact := !fusesMulAdd[T](active)
	rows := 1 + rng.Intn(2*nnz+1)
	ldx := 64 + extra
	idx := make([]int32, nnz)
	for p := range idx {
		idx[p] = int32(rng.Intn(rows))
	}
	xAll, x := gatherX[T](rng, rows, 64, ldx, skew, exact)
	dAll, d := guarded(64, skew, func(int) T { return value[T](rng, exact) })
	outAll, out := guarded(4*nnz, skew, func(int) T { return sentinel[T]() })
	scale := value[T](rng, false)
	xBefore, dBefore := append([]T(nil), xAll...), append([]T(nil), dAll...)
	if !headsDot(idx, x, ldx, d, out, scale) {
		t.Fatalf("%s: Heads4x16Dot reported not run", active.name)
	}
	unchanged(t, "x", xBefore, xAll)
	unchanged(t, "d", dBefore, dAll)
	guardsIntact(t, "out", outAll, 4*nnz, skew)
	for p, j := range idx {
		for k := 0; k < 4; k++ {
			xk, dk := x[int(j)*ldx+16*k:int(j)*ldx+16*k+16], d[16*k:16*k+16]
			abs := 0.0
			for q := range xk {
				abs += math.Abs(float64(xk[q]) * float64(dk[q]) * float64(scale))
			}
			if want := dotRef(xk, dk, scale); !agree(out[4*p+k], want, exact, 16, abs) {
				t.Fatalf("%s: Heads4x16Dot, %d non-zeros, stride %d, skew %d: out[%d][%d] = %v, want %v", active.name, nnz, ldx, skew, p, k, out[4*p+k], want)
			}
		}
	}
}

func TestHeads4x16DotGuarded(t *testing.T) {
	forEachPath(t, func(t *testing.T, k *kernelSet) {
		rng := rand.New(rand.NewSource(3))
		for nnz := 0; nnz <= 3*8+1; nnz++ {
			for _, extra := range []int{0, 1, 3} {
				for skew := 0; skew < 3; skew++ {
					checkHeads4x16Dot[float32](t, rng, nnz, extra, skew)
					checkHeads4x16Dot[float64](t, rng, nnz, extra, skew)
				}
			}
		}
	})
}

func cols2[T Float](indptr []int, idx []int32, val, x, out []T, lo, hi int) bool {
	switch v := any(val).(type) {
	case []float32:
		return Cols2Rows32(indptr, idx, v, any(x).([]float32), any(out).([]float32), lo, hi)
	default:
		return Cols2Rows64(indptr, idx, v.([]float64), any(x).([]float64), any(out).([]float64), lo, hi)
	}
}

// checkCols2Rows runs Cols2Rows32/64 (by T) over rows [lo, lo+n) of a CSR
// of random rows (up to maxRow non-zeros each, some empty) with rows
// before and after, on guarded buffers, against the plain loop, bit for
// bit.
func checkCols2Rows[T Float](t testing.TB, rng *rand.Rand, n, maxRow, skew int) {
	t.Helper()
	lo := rng.Intn(3)
	total := lo + n + rng.Intn(3)
	xrows := 1 + rng.Intn(10)
	indptr := make([]int, total+1)
	for i := 0; i < total; i++ {
		indptr[i+1] = indptr[i] + rng.Intn(maxRow+1)
	}
	nnz := indptr[total]
	idx := make([]int32, nnz)
	for p := range idx {
		idx[p] = int32(rng.Intn(xrows))
	}
	valAll, val := guarded(nnz, skew, func(int) T { return value[T](rng, true) })
	xAll, x := guarded(2*xrows, skew, func(int) T { return value[T](rng, true) })
	outAll, out := guarded(2*n, skew, func(int) T { return sentinel[T]() })
	ptrBefore, idxBefore := append([]int(nil), indptr...), append([]int32(nil), idx...)
	valBefore, xBefore := append([]T(nil), valAll...), append([]T(nil), xAll...)
	ran := cols2(indptr, idx, val, x, out, lo, lo+n)
	unchanged(t, "indptr", ptrBefore, indptr)
	unchanged(t, "idx", idxBefore, idx)
	unchanged(t, "val", valBefore, valAll)
	unchanged(t, "x", xBefore, xAll)
	guardsIntact(t, "out", outAll, 2*n, skew)
	if ran != (n > 0 && nnz > 0) {
		t.Fatalf("%s: Cols2Rows of %d rows, %d non-zeros: ran = %v", active.name, n, nnz, ran)
	}
	if !ran {
		return
	}
	for i := 0; i < n; i++ {
		var s0, s1 T
		for p := indptr[lo+i]; p < indptr[lo+i+1]; p++ {
			s0 += T(val[p] * x[2*idx[p]])
			s1 += T(val[p] * x[2*idx[p]+1])
		}
		if !agree(out[2*i], s0, true, 0, 0) || !agree(out[2*i+1], s1, true, 0, 0) {
			t.Fatalf("%s: Cols2Rows rows [%d, %d), skew %d: row %d = %v %v, want %v %v", active.name, lo, lo+n, skew, lo+i, out[2*i], out[2*i+1], s0, s1)
		}
	}
}

// TestCols2RowsGuarded runs 0 to 3·4+1 rows (the kernels sum four rows
// side by side) of rows up to 0, 1, 5 and 9 long.
func TestCols2RowsGuarded(t *testing.T) {
	forEachPath(t, func(t *testing.T, k *kernelSet) {
		rng := rand.New(rand.NewSource(4))
		for n := 0; n <= 3*4+1; n++ {
			for _, maxRow := range []int{0, 1, 5, 9} {
				for skew := 0; skew < 3; skew++ {
					for rep := 0; rep < 4; rep++ {
						checkCols2Rows[float32](t, rng, n, maxRow, skew)
						checkCols2Rows[float64](t, rng, n, maxRow, skew)
					}
				}
			}
		}
	})
}

// checkReLU runs BiasReLU32 (with and without a bias) and ReLUMask32
// (separate and in place) on n guarded values with special ones, against
// Go's max and the branch-free mask, bit for bit.
func checkReLU(t testing.TB, rng *rand.Rand, n, skew int) {
	t.Helper()
	pick := func(int) float32 {
		if rng.Intn(3) == 0 {
			return special[rng.Intn(len(special))]
		}
		return value[float32](rng, true)
	}
	for _, bias := range []bool{false, true} {
		zAll, z := guarded(n, skew, pick)
		bAll, b := guarded(n, skew, pick)
		z0, bBefore := append([]float32(nil), z...), append([]float32(nil), bAll...)
		if !bias {
			b = nil
		}
		BiasReLU32(z, b)
		unchanged(t, "b", bBefore, bAll)
		guardsIntact(t, "z", zAll, n, skew)
		for i := range z {
			want := max(z0[i], 0)
			if bias {
				want = max(z0[i]+b[i], 0)
			}
			// When z and b are both NaNs, which payload the add keeps
			// depends on its operand order, which Go does not fix: the
			// NaN's sign bit is what the kernel must get right.
			bothNaN := bias && z0[i] != z0[i] && b[i] != b[i] && z[i] != z[i] && want != want
			if bits(z[i]) != bits(want) && !(bothNaN && bits(z[i])>>31 == bits(want)>>31) {
				t.Fatalf("%s: BiasReLU32 n=%d bias=%v skew %d: z[%d] = %x, want %x", active.name, n, bias, skew, i, bits(z[i]), bits(want))
			}
		}
	}
	yAll, y := guarded(n, skew, pick)
	dyAll, dy := guarded(n, skew, pick)
	outAll, out := guarded(n, skew, func(int) float32 { return sentinel[float32]() })
	yBefore, dyBefore := append([]float32(nil), yAll...), append([]float32(nil), dyAll...)
	ReLUMask32(out, y, dy)
	unchanged(t, "y", yBefore, yAll)
	unchanged(t, "dy", dyBefore, dyAll)
	guardsIntact(t, "out", outAll, n, skew)
	ReLUMask32(dy, y, dy)
	guardsIntact(t, "dy (in place)", dyAll, n, skew)
	for i := range out {
		bi := int32(math.Float32bits(y[i]))
		m := uint32((-bi)>>31) & ^uint32(bi>>31)
		want := math.Float32frombits(math.Float32bits(dyBefore[guardLen+skew+i]) & m)
		if bits(out[i]) != bits(want) || bits(dy[i]) != bits(want) {
			t.Fatalf("%s: ReLUMask32 n=%d skew %d: out[%d] = %x, in place %x, want %x", active.name, n, skew, i, bits(out[i]), bits(dy[i]), bits(want))
		}
	}
}

// TestReLUGuarded runs every length from 0 to 3·8+1.
func TestReLUGuarded(t *testing.T) {
	forEachPath(t, func(t *testing.T, k *kernelSet) {
		rng := rand.New(rand.NewSource(5))
		for n := 0; n <= 3*8+1; n++ {
			for skew := 0; skew < 3; skew++ {
				for rep := 0; rep < 4; rep++ {
					checkReLU(t, rng, n, skew)
				}
			}
		}
	})
}

// checkColSumAdd runs ColSumAdd32 on a guarded rows × c matrix into a
// guarded p, against the plain loop, bit for bit.
func checkColSumAdd(t testing.TB, rng *rand.Rand, rows, c, skew int) {
	t.Helper()
	xAll, x := guarded(rows*c, skew, func(int) float32 { return value[float32](rng, true) })
	pAll, p := guarded(c, skew, func(int) float64 { return value[float64](rng, true) })
	xBefore := append([]float32(nil), xAll...)
	want := append([]float64(nil), p...)
	for r := 0; r < rows; r++ {
		for k := 0; k < c; k++ {
			want[k] += float64(x[r*c+k])
		}
	}
	ColSumAdd32(p, x, rows, c)
	unchanged(t, "x", xBefore, xAll)
	guardsIntact(t, "p", pAll, c, skew)
	for k := range p {
		if !agree(p[k], want[k], true, 0, 0) {
			t.Fatalf("%s: ColSumAdd32 %d × %d skew %d: p[%d] = %v, want %v", active.name, rows, c, skew, k, p[k], want[k])
		}
	}
}

// TestColSumAddGuarded runs 0 to 3·4+1 columns (the kernel adds four at
// a time) of 0 to 5 rows.
func TestColSumAddGuarded(t *testing.T) {
	forEachPath(t, func(t *testing.T, k *kernelSet) {
		rng := rand.New(rand.NewSource(6))
		for c := 0; c <= 3*4+1; c++ {
			for rows := 0; rows <= 5; rows++ {
				for skew := 0; skew < 3; skew++ {
					checkColSumAdd(t, rng, rows, c, skew)
				}
			}
		}
	})
}

// panicsWith fails unless f panics with exactly msg.
func panicsWith(t *testing.T, msg string, f func()) {
	t.Helper()
	defer func() {
		t.Helper()
		r := recover()
		if r == nil {
			t.Fatalf("no panic, want %q", msg)
		}
		if fmt.Sprint(r) != msg {
			t.Fatalf("panic %q, want %q", r, msg)
		}
	}()
	f()
}

// TestLengthChecks checks that every exported kernel refuses, with its
// message, each argument too short or inconsistent, on every path: the
// check runs before the kernel, so no path may read or write out of
// bounds first.
func TestLengthChecks(t *testing.T) {
	forEachPath(t, func(t *testing.T, k *kernelSet) {
		f32, f64 := make([]float32, 200), make([]float64, 200)
		idx := []int32{0, 2, 1}
		cases := []struct {
			msg string
			f   func()
		}{
			{"spkern: RowStrip32: val has 2 values for 3 indices", func() { RowStrip32(8, idx, f32[:2], f32, 10, f32) }},
			{"spkern: RowStrip32: out has 63 values, want at least 64", func() { RowStrip32(64, idx, f32, f32, 64, f32[:63]) }},
			{"spkern: RowStrip32: negative stride ldx = -1", func() { RowStrip32(8, idx, f32, f32, -1, f32) }},
			{"spkern: RowStrip32: negative index -1", func() { RowStrip32(8, []int32{0, -1}, f32, f32, 8, f32) }},
			{"spkern: RowStrip32: x has 25 values, too few for row 2 of 8 values at stride 9", func() { RowStrip32(8, idx, f32, f32[:25], 9, f32) }},
			{"spkern: RowStrip32: x has 200 values, too few for row 2 of 64 values at stride 70", func() { RowStrip32(64, idx, f32, f32, 70, f32) }},
			{"spkern: RowStrip32: x has 7 values, too few for row 0 of 8 values at stride 8", func() { RowStrip32(8, []int32{0}, f32, f32[:7], 8, f32) }},
			{"spkern: RowStrip32: x has 200 values, too few for row 2147483647 of 8 values at stride 1", func() { RowStrip32(8, []int32{math.MaxInt32}, f32, f32, 1, f32) }},
			{fmt.Sprintf("spkern: RowStrip64: x has 200 values, too few for row 1 of 8 values at stride %d", math.MaxInt), func() { RowStrip64(8, []int32{1}, f64, f64, math.MaxInt, f64) }},
			{"spkern: RowStrip64: out has 31 values, want at least 32", func() { RowStrip64(32, idx, f64, f64, 32, f64[:31]) }},
			{"spkern: RowStrip64: val has 0 values for 3 indices", func() { RowStrip64(8, idx, nil, f64, 8, f64) }},
			{"spkern: Heads4x16: out has 63 values, want at least 64", func() { Heads4x16(nil, nil, f32, f32, 64, f32[:63]) }},
			{"spkern: Heads4x16: alpha has 11 values for 3 indices, want at least 12", func() { Heads4x16(idx, nil, f32[:11], f32, 64, f32) }},
			{"spkern: Heads4x16: arow has 2 entries for 3 indices", func() { Heads4x16(idx, []int32{0, 0}, f32, f32, 64, f32) }},
			{"spkern: Heads4x16: arow entry 3 outside alpha's 3 rows of 4", func() { Heads4x16(idx, []int32{0, 3, 0}, f32[:12], f32, 64, f32) }},
			{"spkern: Heads4x16: arow entry -1 outside alpha's 3 rows of 4", func() { Heads4x16(idx, []int32{0, -1, 0}, f32[:12], f32, 64, f32) }},
			{"spkern: Heads4x16: x has 191 values, too few for row 2 of 64 values at stride 64", func() { Heads4x16(idx, nil, f32, f32[:191], 64, f32) }},
			{"spkern: Heads4x16d: x has 200 values, too few for row 2 of 64 values at stride 70", func() { Heads4x16d(idx, nil, f64, f64, 70, f64) }},
			{"spkern: Heads4x16d: alpha has 8 values for 3 indices, want at least 12", func() { Heads4x16d(idx, nil, f64[:8], f64, 64, f64) }},
			{"spkern: Heads4x16Dot: d has 63 values, want at least 64", func() { Heads4x16Dot(idx, f32, 64, f32[:63], f32, 1) }},
			{"spkern: Heads4x16Dot: out has 11 values for 3 indices, want at least 12", func() { Heads4x16Dot(idx, f32, 64, f32, f32[:11], 1) }},
			{"spkern: Heads4x16Dot: x has 191 values, too few for row 2 of 64 values at stride 64", func() { Heads4x16Dot(idx, f32[:191], 64, f32, f32, 1) }},
			{"spkern: Heads4x16Dotd: negative index -5", func() { Heads4x16Dotd([]int32{-5}, f64, 64, f64, f64, 1) }},
			{"spkern: Heads4x16Dotd: out has 8 values for 3 indices, want at least 12", func() { Heads4x16Dotd(idx, f64, 64, f64, f64[:8], 1) }},
			{"spkern: Cols2Rows32: rows [0, 3) outside the 2 rows of indptr (3 entries)", func() { Cols2Rows32([]int{0, 1, 3}, idx, f32, f32, f32, 0, 3) }},
			{"spkern: Cols2Rows32: rows [-1, 1) outside the 2 rows of indptr (3 entries)", func() { Cols2Rows32([]int{0, 1, 3}, idx, f32, f32, f32, -1, 1) }},
			{"spkern: Cols2Rows32: out has 3 values for 2 rows, want at least 4", func() { Cols2Rows32([]int{0, 1, 3}, idx, f32, f32, f32[:3], 0, 2) }},
			{"spkern: Cols2Rows32: indptr[1] = -1 is negative", func() { Cols2Rows32([]int{0, -1, 3}, idx, f32, f32, f32, 1, 2) }},
			{"spkern: Cols2Rows32: indptr decreases at row 1 (2 then 1)", func() { Cols2Rows32([]int{0, 2, 1, 3}, idx, f32, f32, f32, 0, 3) }},
			{"spkern: Cols2Rows32: indptr[2] = 4 beyond the 3 indices", func() { Cols2Rows32([]int{0, 1, 4}, idx, f32, f32, f32, 0, 2) }},
			{"spkern: Cols2Rows32: val has 2 values, want at least indptr[2] = 3", func() { Cols2Rows32([]int{0, 1, 3}, idx, f32[:2], f32, f32, 0, 2) }},
			{"spkern: Cols2Rows32: index 2 at position 1 is not a row of x (2 rows of 2)", func() { Cols2Rows32([]int{0, 1, 3}, idx, f32, f32[:5], f32, 0, 2) }},
			{"spkern: Cols2Rows64: index -1 at position 2 is not a row of x (100 rows of 2)", func() { Cols2Rows64([]int{0, 1, 3}, []int32{0, 1, -1}, f64, f64, f64, 1, 2) }},
			{"spkern: Cols2Rows64: indptr[2] = 5 beyond the 3 indices", func() { Cols2Rows64([]int{0, 1, 5}, idx, f64, f64, f64, 1, 2) }},
			{"spkern: BiasReLU32: b has 15 values for 16 in z", func() { BiasReLU32(f32[:16], f32[16:31]) }},
			{"spkern: ReLUMask32: y has 15 values and dy 16 for 16 in out", func() { ReLUMask32(f32[:16], f32[:15], f32[:16]) }},
			{"spkern: ReLUMask32: y has 16 values and dy 9 for 16 in out", func() { ReLUMask32(f32[:16], f32[:16], f32[:9]) }},
			{"spkern: ColSumAdd32: negative size -1 × 4", func() { ColSumAdd32(f64, f32, -1, 4) }},
			{"spkern: ColSumAdd32: negative size 2 × -4", func() { ColSumAdd32(f64, f32, 2, -4) }},
			{"spkern: ColSumAdd32: x has 200 values for 51 × 4", func() { ColSumAdd32(f64, f32, 51, 4) }},
			{fmt.Sprintf("spkern: ColSumAdd32: x has 200 values for 2 × %d", math.MaxInt/2+1), func() { ColSumAdd32(f64, f32, 2, math.MaxInt/2+1) }},
			{"spkern: ColSumAdd32: p has 3 values for 4 columns", func() { ColSumAdd32(f64[:3], f32, 2, 4) }},
		}
		for _, c := range cases {
			panicsWith(t, c.msg, c.f)
		}
		// The edge cases that do nothing need no memory.
		if RowStrip32(8, nil, nil, nil, 0, nil) || RowStrip64(16, idx, f64, f64, 8, f64) {
			t.Fatal("RowStrip ran on an empty row or an unsupported width")
		}
		if Cols2Rows32(nil, nil, nil, nil, nil, 0, 0) || Cols2Rows64([]int{0, 0}, nil, nil, nil, nil, 0, 1) {
			t.Fatal("Cols2Rows ran on no rows or no non-zeros")
		}
		ColSumAdd32(nil, nil, 0, 4)
		ColSumAdd32(nil, nil, 3, 0)
		BiasReLU32(nil, nil)
		ReLUMask32(nil, nil, nil)
		if !Heads4x16Dot(nil, nil, 0, f32, nil, 1) {
			t.Fatal("Heads4x16Dot reported not run on no edges")
		}
	})
}
