package spkern

import (
	"errors"
	"fmt"
	"math"
	"math/rand"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestNewCSRRefuses checks that NewCSR refuses every structure that could
// make a kernel reach outside x, naming the row, position or index.
func TestNewCSRRefuses(t *testing.T) {
	for _, c := range []struct {
		rows, cols int
		indptr     []int
		idx        []int32
		want       string
	}{
		{2, 3, []int{0, 1, 3}, []int32{0, 2, 3}, "index 3 at position 2 is not a column of the 2 × 3 matrix"},
		{2, 3, []int{0, 1, 3}, []int32{0, -1, 2}, "index -1 at position 1 is not a column of the 2 × 3 matrix"},
		{1, 3, []int{1, 2}, []int32{7, math.MaxInt32}, "index 2147483647 at position 1 is not a column"},
		{1, 0, []int{0, 1}, []int32{0}, "index 0 at position 0 is not a column of the 1 × 0 matrix"},
		{2, 3, []int{0, 2, 1}, []int32{0, 1}, "indptr decreases at row 1 (2 then 1)"},
		{2, 3, []int{0, 1, 4}, []int32{0, 1, 2}, "indptr[2] = 4 beyond the 3 indices"},
		{2, 3, []int{-1, 1, 2}, []int32{0, 1, 2}, "indptr[0] = -1 is negative"},
		{2, 3, []int{0, 1}, []int32{0, 1}, "2 row pointers for 2 rows, want 3"},
		{-1, 3, nil, nil, "size -1 × 3"},
		{1, -3, []int{0, 0}, nil, "size 1 × -3"},
	} {
		m, err := NewCSR(c.rows, c.cols, c.indptr, c.idx)
		if m != nil || !errors.Is(err, ErrCSR) || !strings.HasPrefix(err.Error(), "spkern: NewCSR: ") || !strings.Contains(err.Error(), c.want) {
			t.Errorf("NewCSR(%d, %d, %v, %v) = %v, %v, want an ErrCSR containing %q", c.rows, c.cols, c.indptr, c.idx, m, err, c.want)
		}
	}
	// Indices outside the rows' range of idx are not read; unsorted and
	// repeated indices, empty rows and an empty matrix are valid.
	for _, c := range []struct {
		rows, cols int
		indptr     []int
		idx        []int32
	}{
		{1, 3, []int{1, 3}, []int32{-5, 2, 2, 99}},
		{3, 4, []int{0, 0, 3, 3}, []int32{3, 0, 3}},
		{0, 0, []int{0}, nil},
		{2, 0, []int{0, 0, 0}, nil},
	} {
		m, err := NewCSR(c.rows, c.cols, c.indptr, c.idx)
		if err != nil || m.Rows() != c.rows || m.Cols() != c.cols {
			t.Errorf("NewCSR(%d, %d, %v, %v) = %v, %v, want a valid %d × %d CSR", c.rows, c.cols, c.indptr, c.idx, m, err, c.rows, c.cols)
		}
	}
}

// mustCSR is NewCSR for valid test structures.
func mustCSR(tb testing.TB, rows, cols int, indptr []int, idx []int32) *CSR {
	tb.Helper()
	m, err := NewCSR(rows, cols, indptr, idx)
	if err != nil {
		tb.Fatal(err)
	}
	return m
}

// TestCSRChecks checks that every CSR method refuses, with its message,
// each argument that could reach outside the slices, on every path, in
// constant time: x must hold every column of the matrix, even when the
// row's own indices need less.
func TestCSRChecks(t *testing.T) {
	forEachPath(t, func(t *testing.T, k *kernelSet) {
		f32, f64 := make([]float32, 400), make([]float64, 400)
		// 2 rows × 5 columns; row 0 uses only column 0, row 1 columns 0-2.
		m := mustCSR(t, 2, 5, []int{0, 1, 4}, []int32{0, 2, 1, 0})
		for _, c := range []struct {
			msg string
			f   func()
		}{
			{"spkern: CSR.RowStrip32: x has 39 values, too few for 5 columns of 8 values at stride 8", func() { m.RowStrip32(8, 0, f32, f32[:39], 8, f32) }},
			{"spkern: CSR.RowStrip32: x has 319 values, too few for 5 columns of 64 values at stride 64", func() { m.RowStrip32(64, 1, f32, f32[:319], 64, f32) }},
			{"spkern: CSR.RowStrip32: x has 7 values, too few for 5 columns of 8 values at stride 0", func() { m.RowStrip32(8, 0, f32, f32[:7], 0, f32) }},
			{fmt.Sprintf("spkern: CSR.RowStrip32: x has 400 values, too few for 5 columns of 8 values at stride %d", math.MaxInt), func() { m.RowStrip32(8, 0, f32, f32, math.MaxInt, f32) }},
			{"spkern: CSR.RowStrip32: negative stride ldx = -8", func() { m.RowStrip32(8, 0, f32, f32, -8, f32) }},
			{"spkern: CSR.RowStrip32: out has 63 values, want at least 64", func() { m.RowStrip32(64, 1, f32, f32, 64, f32[:63]) }},
			{"spkern: CSR.RowStrip32: val has 3 values, want at least indptr[2] = 4", func() { m.RowStrip32(8, 1, f32[:3], f32, 8, f32) }},
			{"spkern: CSR.RowStrip32: row 2 outside the 2 rows", func() { m.RowStrip32(8, 2, f32, f32, 8, f32) }},
			{"spkern: CSR.RowStrip32: row -1 outside the 2 rows", func() { m.RowStrip32(8, -1, f32, f32, 8, f32) }},
			{"spkern: CSR.RowStrip64: x has 159 values, too few for 5 columns of 32 values at stride 32", func() { m.RowStrip64(32, 1, f64, f64[:159], 32, f64) }},
			{"spkern: CSR.RowStrip64: val has 0 values, want at least indptr[1] = 1", func() { m.RowStrip64(8, 0, nil, f64, 8, f64) }},
			{"spkern: CSR.RowStrip64: out has 7 values, want at least 8", func() { m.RowStrip64(8, 0, f64, f64, 8, f64[:7]) }},
			{"spkern: CSR.RowStrip64: row 5 outside the 2 rows", func() { m.RowStrip64(32, 5, f64, f64, 32, f64) }},
			{"spkern: CSR.Cols2Rows32: x has 9 values, want 2 for each of the 5 columns", func() { m.Cols2Rows32(f32, f32[:9], f32, 0, 1) }},
			{"spkern: CSR.Cols2Rows32: rows [0, 3) outside the 2 rows", func() { m.Cols2Rows32(f32, f32, f32, 0, 3) }},
			{"spkern: CSR.Cols2Rows32: rows [-1, 1) outside the 2 rows", func() { m.Cols2Rows32(f32, f32, f32, -1, 1) }},
			{"spkern: CSR.Cols2Rows32: out has 3 values for 2 rows, want at least 4", func() { m.Cols2Rows32(f32, f32, f32[:3], 0, 2) }},
			{"spkern: CSR.Cols2Rows32: val has 3 values, want at least indptr[2] = 4", func() { m.Cols2Rows32(f32[:3], f32, f32, 1, 2) }},
			{"spkern: CSR.Cols2Rows64: x has 9 values, want 2 for each of the 5 columns", func() { m.Cols2Rows64(f64, f64[:9], f64, 1, 2) }},
			{"spkern: CSR.Cols2Rows64: out has 1 values for 1 rows, want at least 2", func() { m.Cols2Rows64(f64, f64, f64[:1], 1, 2) }},
		} {
			panicsWith(t, c.msg, c.f)
		}
		// The edge cases that do nothing need no memory.
		e := mustCSR(t, 3, 4, []int{0, 0, 2, 2}, []int32{1, 3})
		if e.RowStrip32(8, 0, nil, nil, 0, nil) || e.RowStrip64(8, 2, nil, nil, 0, nil) || m.RowStrip32(16, 1, f32, f32, 64, f32) || m.RowStrip64(64, 1, f64, f64, 64, f64) {
			t.Fatal("CSR.RowStrip ran on an empty row or an unsupported width")
		}
		if e.Cols2Rows32(nil, nil, nil, 0, 1) || e.Cols2Rows64(nil, nil, nil, 2, 3) || m.Cols2Rows32(nil, nil, nil, 1, 1) || m.Cols2Rows64(nil, nil, nil, 5, 2) {
			t.Fatal("CSR.Cols2Rows ran on no rows or no non-zeros")
		}
		// Exactly long enough: no panic.
		m.RowStrip32(8, 0, f32[:1], f32[:4*8+8], 8, f32[:8])
		m.RowStrip64(32, 1, f64[:4], f64[:4*40+32], 40, f64[:32])
		m.Cols2Rows32(f32[:4], f32[:10], f32[:4], 0, 2)
	})
}

// csrCase is a random CSR of rows rows (some empty, up to maxRow entries,
// indices unsorted and repeated) over cols columns, in margins of
// sentinels (indptr's and idx's of out-of-range values, so that a kernel
// reading past them would fail), with its values in T.
type csrCase[T Float] struct {
	m           *CSR
	indptr      []int
	idx, idxAll []int32
	val, valAll []T
}

func newCSRCase[T Float](t testing.TB, rng *rand.Rand, rows, cols, maxRow, skew int, exact bool) csrCase[T] {
	t.Helper()
	start := rng.Intn(3) // indptr need not start at 0
	indptr := make([]int, rows+1)
	indptr[0] = start
	for i := 0; i < rows; i++ {
		n := rng.Intn(maxRow + 1)
		if cols == 0 {
			n = 0
		}
		indptr[i+1] = indptr[i] + n
	}
	nnz := indptr[rows]
	idxAll := make([]int32, nnz+2*guardLen)
	for p := range idxAll {
		idxAll[p] = math.MinInt32 + int32(p)
	}
	idx := idxAll[guardLen : guardLen+nnz+rng.Intn(2) : guardLen+nnz+guardLen]
	for p := start; p < nnz; p++ {
		idx[p] = int32(rng.Intn(cols))
	}
	valAll, val := guarded(nnz, skew, func(int) T { return value[T](rng, exact) })
	return csrCase[T]{m: mustCSR(t, rows, cols, indptr, idx), indptr: indptr, idx: idx, idxAll: idxAll, val: val, valAll: valAll}
}

func csrStrip[T Float](m *CSR, width, i int, val, x []T, ldx int, out []T) bool {
	switch v := any(val).(type) {
	case []float32:
		return m.RowStrip32(width, i, v, any(x).([]float32), ldx, any(out).([]float32))
	default:
		return m.RowStrip64(width, i, v.([]float64), any(x).([]float64), ldx, any(out).([]float64))
	}
}

func csrCols2[T Float](m *CSR, val, x, out []T, lo, hi int) bool {
	switch v := any(val).(type) {
	case []float32:
		return m.Cols2Rows32(v, any(x).([]float32), any(out).([]float32), lo, hi)
	default:
		return m.Cols2Rows64(v.([]float64), any(x).([]float64), any(out).([]float64), lo, hi)
	}
}

// checkCSRStrip runs m.RowStrip32/64 (by T) on every row of a random CSR
// with x exactly Cols rows of width values at stride width+extra (the
// columns between the strips and the margins sentinels), and checks that
// the result equals the package function's on the same row, bit for bit,
// and that nothing outside out changes.
func checkCSRStrip[T Float](t testing.TB, rng *rand.Rand, width, rows, cols, maxRow, extra, skew int) {
	t.Helper()
	exact := !fusesMulAdd[T](active)
	c := newCSRCase[T](t, rng, rows, cols, maxRow, skew, exact)
	ldx := width + extra
	xAll, x := gatherX[T](rng, cols, width, ldx, skew, exact)
	if cols == 0 {
		xAll, x = guarded(width, skew, func(int) T { return value[T](rng, exact) })
	}
	ptrBefore, idxBefore := append([]int(nil), c.indptr...), append([]int32(nil), c.idxAll...)
	valBefore, xBefore := append([]T(nil), c.valAll...), append([]T(nil), xAll...)
	for i := 0; i < rows; i++ {
		outAll, out := guarded(width, skew, func(int) T { return sentinel[T]() })
		ran := csrStrip(c.m, width, i, c.val, x, ldx, out)
		guardsIntact(t, "out", outAll, width, skew)
		p0, p1 := c.indptr[i], c.indptr[i+1]
		if ran != (p1 > p0) {
			t.Fatalf("%s: CSR.RowStrip width %d, row %d of %d entries: ran = %v", active.name, width, i, p1-p0, ran)
		}
		if !ran {
			for _, v := range out {
				if bits(v) != bits(sentinel[T]()) {
					t.Fatalf("%s: CSR.RowStrip width %d wrote an empty row", active.name, width)
				}
			}
			continue
		}
		want := make([]T, width)
		rowStrip(width, c.idx[p0:p1], c.val[p0:p1], x, ldx, want)
		for k := range want {
			if bits(out[k]) != bits(want[k]) {
				t.Fatalf("%s: CSR.RowStrip width %d, row %d, stride %d, skew %d: out[%d] = %v, RowStrip gives %v", active.name, width, i, ldx, skew, k, out[k], want[k])
			}
		}
	}
	unchanged(t, "indptr", ptrBefore, c.indptr)
	unchanged(t, "idx", idxBefore, c.idxAll)
	unchanged(t, "val", valBefore, c.valAll)
	unchanged(t, "x", xBefore, xAll)
}

// TestCSRRowStripGuarded runs both widths of both precisions on CSRs of
// rows of 0 to 3·8+1 entries (the 64- and 32-wide kernels prefetch 8
// steps ahead), including a row reaching the last column of x.
func TestCSRRowStripGuarded(t *testing.T) {
	forEachPath(t, func(t *testing.T, k *kernelSet) {
		rng := rand.New(rand.NewSource(21))
		for _, cols := range []int{1, 2, 7, 40} {
			for _, extra := range []int{0, 1, 3} {
				for skew := 0; skew < 3; skew++ {
					checkCSRStrip[float32](t, rng, 64, 9, cols, 3*8+1, extra, skew)
					checkCSRStrip[float32](t, rng, 8, 9, cols, 3*8+1, extra, skew)
					checkCSRStrip[float64](t, rng, 32, 9, cols, 3*8+1, extra, skew)
					checkCSRStrip[float64](t, rng, 8, 9, cols, 3*8+1, extra, skew)
				}
			}
		}
		// A row whose only index is the last column: x ends right after it.
		for _, cols := range []int{1, 5} {
			m := mustCSR(t, 1, cols, []int{0, 1}, []int32{int32(cols - 1)})
			xAll, x := guarded(cols*8, 0, func(i int) float32 { return float32(i) })
			outAll, out := guarded(8, 0, func(int) float32 { return sentinel[float32]() })
			if !m.RowStrip32(8, 0, []float32{2}, x, 8, out) {
				t.Fatal("CSR.RowStrip32 did not run")
			}
			guardsIntact(t, "out", outAll, 8, 0)
			guardsIntact(t, "x", xAll, cols*8, 0)
			for c, v := range out {
				if want := float32(2 * ((cols-1)*8 + c)); v != want {
					t.Fatalf("%s: last column, out[%d] = %v, want %v", active.name, c, v, want)
				}
			}
		}
	})
}

// checkCSRCols2 runs m.Cols2Rows32/64 (by T) over rows [lo, hi) of a
// random CSR with x exactly 2·Cols values, on guarded buffers, and checks
// that the result equals the package function's, bit for bit.
func checkCSRCols2[T Float](t testing.TB, rng *rand.Rand, rows, cols, maxRow, skew int) {
	t.Helper()
	c := newCSRCase[T](t, rng, rows, cols, maxRow, skew, true)
	lo := rng.Intn(rows + 1)
	hi := lo + rng.Intn(rows-lo+1)
	xAll, x := guarded(2*cols, skew, func(int) T { return value[T](rng, true) })
	ptrBefore, idxBefore := append([]int(nil), c.indptr...), append([]int32(nil), c.idxAll...)
	valBefore, xBefore := append([]T(nil), c.valAll...), append([]T(nil), xAll...)
	outAll, out := guarded(2*(hi-lo), skew, func(int) T { return sentinel[T]() })
	ran := csrCols2(c.m, c.val, x, out, lo, hi)
	guardsIntact(t, "out", outAll, 2*(hi-lo), skew)
	unchanged(t, "indptr", ptrBefore, c.indptr)
	unchanged(t, "idx", idxBefore, c.idxAll)
	unchanged(t, "val", valBefore, c.valAll)
	unchanged(t, "x", xBefore, xAll)
	if ran != (c.indptr[hi] > c.indptr[lo]) {
		t.Fatalf("%s: CSR.Cols2Rows rows [%d, %d) of %d entries: ran = %v", active.name, lo, hi, c.indptr[hi]-c.indptr[lo], ran)
	}
	if !ran {
		return
	}
	want := make([]T, 2*(hi-lo))
	if !cols2(c.indptr, c.idx, c.val, x, want, lo, hi) {
		t.Fatal("Cols2Rows did not run")
	}
	for k := range want {
		if bits(out[k]) != bits(want[k]) {
			t.Fatalf("%s: CSR.Cols2Rows rows [%d, %d), skew %d: out[%d] = %v, Cols2Rows gives %v", active.name, lo, hi, skew, k, out[k], want[k])
		}
	}
}

// TestCSRCols2RowsGuarded runs 0 to 3·4+1 rows (the kernels sum four rows
// side by side) of rows up to 0, 1, 5 and 9 long.
func TestCSRCols2RowsGuarded(t *testing.T) {
	forEachPath(t, func(t *testing.T, k *kernelSet) {
		rng := rand.New(rand.NewSource(22))
		for rows := 0; rows <= 3*4+1; rows++ {
			for _, maxRow := range []int{0, 1, 5, 9} {
				for skew := 0; skew < 3; skew++ {
					for rep := 0; rep < 4; rep++ {
						cols := 1 + rng.Intn(10)
						checkCSRCols2[float32](t, rng, rows, cols, maxRow, skew)
						checkCSRCols2[float64](t, rng, rows, cols, maxRow, skew)
					}
				}
			}
		}
	})
}

// FuzzCSR runs the CSR methods' guard-band checks on random sizes, on
// every kernel path this machine runs:
//
//	go test -run - -fuzz '^FuzzCSR$' -fuzztime 60s -parallel 1 ./internal/spkern/
func FuzzCSR(f *testing.F) {
	f.Add(int64(1), uint8(0), uint8(3), uint8(9), uint8(1), uint8(1))
	f.Add(int64(2), uint8(5), uint8(13), uint8(25), uint8(0), uint8(2))
	f.Fuzz(func(t *testing.T, seed int64, which, rows, maxRow, extra, skew uint8) {
		r, n, e, s := int(rows)%(3*4+2), int(maxRow)%(3*8+2), int(extra)%9, int(skew)%4
		onEveryPath(func() {
			rng := rand.New(rand.NewSource(seed))
			cols := rng.Intn(12)
			switch which % 6 {
			case 0:
				checkCSRStrip[float32](t, rng, 64, r, cols, n, e, s)
			case 1:
				checkCSRStrip[float32](t, rng, 8, r, cols, n, e, s)
			case 2:
				checkCSRStrip[float64](t, rng, 32, r, cols, n, e, s)
			case 3:
				checkCSRStrip[float64](t, rng, 8, r, cols, n, e, s)
			case 4:
				checkCSRCols2[float32](t, rng, r, cols, n, s)
			case 5:
				checkCSRCols2[float64](t, rng, r, cols, n, s)
			}
		})
	})
}

// TestCSRCols2RowsOrdered runs Cols2Rows32/64 on CSRs of several
// windows (OrderWindow rows each), so that whole windows are summed in
// length order, beside rows before and after them in row order: the
// result is the row-order function's bit for bit.
func TestCSRCols2RowsOrdered(t *testing.T) {
	forEachPath(t, func(t *testing.T, k *kernelSet) {
		rng := rand.New(rand.NewSource(23))
		for _, rows := range []int{OrderWindow - 1, OrderWindow, OrderWindow + 1, 2*OrderWindow + 3, 4 * OrderWindow} {
			for _, maxRow := range []int{0, 1, 9, 40} {
				for rep := 0; rep < 12; rep++ {
					cols := 1 + rng.Intn(50)
					checkCSRCols2[float32](t, rng, rows, cols, maxRow, rep%3)
					checkCSRCols2[float64](t, rng, rows, cols, maxRow, rep%3)
				}
			}
		}
	})
}

// lengthOrder sorts each window's rows by length, longest first, ties
// in row order, and leaves every row in its window.
func TestLengthOrder(t *testing.T) {
	rng := rand.New(rand.NewSource(24))
	rows := 2*OrderWindow + 5
	indptr := make([]int, rows+1)
	for i := 0; i < rows; i++ {
		indptr[i+1] = indptr[i] + rng.Intn(6)
	}
	order := lengthOrder(indptr, rows)
	require.Len(t, order, rows)
	length := func(r int32) int { return indptr[r+1] - indptr[r] }
	for w := 0; w < rows; w += OrderWindow {
		win := order[w:min(w+OrderWindow, rows)]
		seen := map[int32]bool{}
		for q, r := range win {
			assert.True(t, int(r) >= w && int(r) < w+len(win), "row %d outside window %d", r, w)
			assert.False(t, seen[r], "row %d twice", r)
			seen[r] = true
			if q > 0 {
				p := win[q-1]
				assert.True(t, length(p) > length(r) || length(p) == length(r) && p < r, "rows %d then %d", p, r)
			}
		}
	}
	assert.Equal(t, []int32{0, 2, 1}, lengthOrder([]int{0, 2, 3, 5}, 3))
}
