package spkern

import (
	"errors"
	"fmt"
	"math"

	"github.com/fairmp/fairmp/internal/par"
)

// ErrCSR is the error NewCSR wraps when the arrays are not a CSR matrix
// of the stated size.
var ErrCSR = errors.New("not a valid CSR structure")

// CSR is the structure of a sparse matrix in compressed sparse rows,
// checked once by NewCSR: the entries of row i are at positions
// indptr[i] to indptr[i+1] of the index array, and every index is a
// column in [0, Cols()). Its methods run the kernels on whole rows of
// the matrix with O(1) checks per call (the row, the lengths of the
// value, x and out slices) instead of scanning the row's indices at
// every call as RowStrip32 and Cols2Rows32 do: a product over column
// strips reads each row's indices once per strip, and the scans cost
// as much as an 8-wide strip's arithmetic.
//
// A CSR does not copy the arrays and has no method that changes them.
// Its safety rests on their staying as checked: whoever passed them to
// NewCSR (package graph's Matrix, which never changes them after
// construction) must not modify them while the CSR is in use; a
// modified index could make the assembly read outside x.
type CSR struct {
	indptr     []int
	idx        []int32
	rows, cols int
	// order lists the rows window by window (OrderWindow rows each, the
	// last one shorter), each window's rows sorted by length, longest
	// first (ties in row order): the order Cols2Rows32 and 64 sum rows in
	// (see there).
	order []int32
}

// OrderWindow is the number of consecutive rows CSR.Cols2Rows32 and 64
// sort by length before summing them four side by side. Sorting within
// a window keeps the rows' entries and outputs near one another in
// memory; sorting at all makes the four rows nearly equal in length,
// so the single-row tails, where each add waits on the one before, are
// short: on a uniform random graph of Credit's shape (30,000 nodes,
// about 10 entries a row) the product takes 0.55 of the time it takes
// in row order on one thread (about 0.7 on two); on Bail's (34 entries a
// row), where the tails are a small part of each row, 0.9 on one thread
// and the same on two (graph's BenchmarkMulDenseCredit and
// BenchmarkMulDenseBail).
const OrderWindow = par.Align

// NewCSR checks a rows × cols CSR structure and returns its handle. It
// returns an error wrapping ErrCSR, naming the row, position or index at
// fault, unless rows ≥ 0, cols ≥ 0, indptr has rows+1 non-decreasing
// entries with indptr[0] ≥ 0 and indptr[rows] ≤ len(idx), and every index
// of the rows (idx[indptr[0]:indptr[rows]]) is in [0, cols). Indices need
// not be sorted or distinct. It reads every index once (about a cycle
// each).
func NewCSR(rows, cols int, indptr []int, idx []int32) (*CSR, error) {
	if rows < 0 || cols < 0 {
		return nil, fmt.Errorf("spkern: NewCSR: size %d × %d: %w", rows, cols, ErrCSR)
	}
	if len(indptr) != rows+1 {
		return nil, fmt.Errorf("spkern: NewCSR: %d row pointers for %d rows, want %d: %w", len(indptr), rows, rows+1, ErrCSR)
	}
	if indptr[0] < 0 {
		return nil, fmt.Errorf("spkern: NewCSR: indptr[0] = %d is negative: %w", indptr[0], ErrCSR)
	}
	for i := 0; i < rows; i++ {
		if indptr[i+1] < indptr[i] {
			return nil, fmt.Errorf("spkern: NewCSR: indptr decreases at row %d (%d then %d): %w", i, indptr[i], indptr[i+1], ErrCSR)
		}
	}
	if indptr[rows] > len(idx) {
		return nil, fmt.Errorf("spkern: NewCSR: indptr[%d] = %d beyond the %d indices: %w", rows, indptr[rows], len(idx), ErrCSR)
	}
	// maxIndex reads a negative index as one above math.MaxInt32, so
	// one comparison covers both bounds.
	if s := idx[indptr[0]:indptr[rows]]; len(s) > 0 && int64(maxIndex(s)) >= int64(cols) {
		for p, j := range s {
			if j < 0 || int(j) >= cols {
				return nil, fmt.Errorf("spkern: NewCSR: index %d at position %d is not a column of the %d × %d matrix: %w", j, indptr[0]+p, rows, cols, ErrCSR)
			}
		}
	}
	return &CSR{indptr: indptr, idx: idx, rows: rows, cols: cols, order: lengthOrder(indptr, rows)}, nil
}

// lengthOrder returns the rows sorted by length, longest first, within
// each window of OrderWindow rows (a stable insertion sort: O(rows ·
// OrderWindow) at worst, about a row's length comparisons a row on
// graphs whose lengths vary little). Rows beyond MaxInt32 are left
// out (nil): the products then sum in row order.
func lengthOrder(indptr []int, rows int) []int32 {
	if rows > math.MaxInt32 {
		return nil
	}
	order := make([]int32, rows)
	for w := 0; w < rows; w += OrderWindow {
		win := order[w:min(w+OrderWindow, rows)]
		for k := range win {
			r := int32(w + k)
			n := indptr[r+1] - indptr[r]
			q := k
			for ; q > 0 && indptr[win[q-1]+1]-indptr[win[q-1]] < n; q-- {
				win[q] = win[q-1]
			}
			win[q] = r
		}
	}
	return order
}

// ordered splits rows [lo, hi) into the rows before the first whole
// window, the whole windows (a to b, the last window whole when hi is
// the last row) and the rows after them: [lo, a) and [b, hi) are summed
// in row order, [a, b) in m.order.
func (m *CSR) ordered(lo, hi int) (a, b int) {
	if m.order == nil {
		return hi, hi
	}
	a = (lo + OrderWindow - 1) / OrderWindow * OrderWindow
	b = hi / OrderWindow * OrderWindow
	if hi == m.rows {
		b = hi
	}
	if a >= b {
		return hi, hi
	}
	return a, b
}

// Rows returns the number of rows.
func (m *CSR) Rows() int { return m.rows }

// Cols returns the number of columns: every index is below it.
func (m *CSR) Cols() int { return m.cols }

// RowStrip32 is RowStrip32 on row i of m, with val the values of m's
// entries (the row's are val[indptr[i]:indptr[i+1]]): out[c] = Σ_p
// val[p] · x[idx[p]·ldx + c] for c < width (64 or 8). It reports false,
// doing nothing, when width is another value or the row is empty. Its
// checks take constant time: it panics, before touching memory, when i
// is not a row of m, val is too short for the row, out is shorter than
// width, ldx is negative, or x does not hold m.Cols() rows of width
// values at stride ldx (len(x) ≥ (Cols−1)·ldx + width), whatever the
// row's indices.
func (m *CSR) RowStrip32(width, i int, val, x []float32, ldx int, out []float32) bool {
	if width != 64 && width != 8 {
		return false
	}
	idx := m.row("RowStrip32", i, len(val))
	if len(idx) == 0 {
		return false
	}
	m.checkStrip("RowStrip32", width, len(x), ldx, len(out))
	active.rowStrip32(width, idx, val[m.indptr[i]:m.indptr[i+1]], x, ldx, out)
	return true
}

// RowStrip64 is m.RowStrip32 in float64, for widths 32 and 8, with the
// sums of the package function RowStrip64.
func (m *CSR) RowStrip64(width, i int, val, x []float64, ldx int, out []float64) bool {
	if width != 32 && width != 8 {
		return false
	}
	idx := m.row("RowStrip64", i, len(val))
	if len(idx) == 0 {
		return false
	}
	m.checkStrip("RowStrip64", width, len(x), ldx, len(out))
	active.rowStrip64(width, idx, val[m.indptr[i]:m.indptr[i+1]], x, ldx, out)
	return true
}

// Cols2Rows32 is Cols2Rows32 on rows [lo, hi) of m: out[2(i−lo) : +2] =
// Σ_p val[p]·x[2·idx[p] : +2], summed as the package function sums. It
// reports false, doing nothing, when hi ≤ lo or the rows hold no entry.
// Its checks take constant time: it panics, before touching memory,
// when lo < 0 or hi > m.Rows(), val is shorter than indptr[hi], out than
// 2·(hi−lo), or x than 2·m.Cols() (two values for every column of m).
//
// The rows of each whole window of OrderWindow rows inside [lo, hi) are
// summed in order of length (see OrderWindow); each row's sum is the
// same, so the result does not depend on it. Callers splitting a
// product across goroutines get the most from it by splitting at
// multiples of OrderWindow.
func (m *CSR) Cols2Rows32(val, x, out []float32, lo, hi int) bool {
	if !m.checkCols2("Cols2Rows32", len(val), len(x), len(out), lo, hi) {
		return false
	}
	cols2Ordered(m, val, x, out, lo, hi, active.cols2Rows32, active.cols2Order32)
	return true
}

// Cols2Rows64 is m.Cols2Rows32 in float64.
func (m *CSR) Cols2Rows64(val, x, out []float64, lo, hi int) bool {
	if !m.checkCols2("Cols2Rows64", len(val), len(x), len(out), lo, hi) {
		return false
	}
	cols2Ordered(m, val, x, out, lo, hi, active.cols2Rows64, active.cols2Order64)
	return true
}

// cols2Ordered runs the row-order kernel on the rows of [lo, hi) outside
// whole windows and the ordered kernel on the whole windows.
func cols2Ordered[T Float](m *CSR, val, x, out []T, lo, hi int,
	rows func(indptr []int, idx []int32, val, x, out []T, rows int),
	ordered func(order []int32, indptr []int, idx []int32, val, x, out []T, base int)) {
	a, b := m.ordered(lo, hi)
	if a > lo {
		rows(m.indptr[lo:], m.idx, val, x, out, a-lo)
	}
	if b > a {
		ordered(m.order[a:b], m.indptr, m.idx, val, x, out, lo)
	}
	if hi > b {
		rows(m.indptr[b:], m.idx, val, x, out[2*(b-lo):], hi-b)
	}
}

// row returns the indices of row i after checking that i is a row and,
// unless the row is empty, that lv values cover it.
func (m *CSR) row(fn string, i, lv int) []int32 {
	if i < 0 || i >= m.rows {
		panic(fmt.Sprintf("spkern: CSR.%s: row %d outside the %d rows", fn, i, m.rows))
	}
	p0, p1 := m.indptr[i], m.indptr[i+1]
	if p0 == p1 {
		return nil // nothing to read
	}
	if lv < p1 {
		panic(fmt.Sprintf("spkern: CSR.%s: val has %d values, want at least indptr[%d] = %d", fn, lv, i+1, p1))
	}
	return m.idx[p0:p1]
}

// checkStrip checks, in constant time, a gather of width values at
// stride ldx from x (lx values) for any column of m, into lout values.
func (m *CSR) checkStrip(fn string, width, lx, ldx, lout int) {
	if lout < width {
		panic(fmt.Sprintf("spkern: CSR.%s: out has %d values, want at least %d", fn, lout, width))
	}
	if ldx < 0 {
		panic(fmt.Sprintf("spkern: CSR.%s: negative stride ldx = %d", fn, ldx))
	}
	// A non-empty row means cols ≥ 1; the last column is cols−1, and the
	// division keeps (cols−1)·ldx from overflowing.
	if last := m.cols - 1; lx < width || (last > 0 && ldx > (lx-width)/last) {
		panic(fmt.Sprintf("spkern: CSR.%s: x has %d values, too few for %d columns of %d values at stride %d", fn, lx, m.cols, width, ldx))
	}
}

// checkCols2 checks rows [lo, hi) of a product with a two-column x and
// reports whether there is anything to compute.
func (m *CSR) checkCols2(fn string, lv, lx, lout, lo, hi int) bool {
	if hi <= lo {
		return false
	}
	if lo < 0 || hi > m.rows {
		panic(fmt.Sprintf("spkern: CSR.%s: rows [%d, %d) outside the %d rows", fn, lo, hi, m.rows))
	}
	if m.indptr[hi] == m.indptr[lo] {
		return false
	}
	if lout/2 < hi-lo {
		panic(fmt.Sprintf("spkern: CSR.%s: out has %d values for %d rows, want at least %d", fn, lout, hi-lo, 2*(hi-lo)))
	}
	if end := m.indptr[hi]; lv < end {
		panic(fmt.Sprintf("spkern: CSR.%s: val has %d values, want at least indptr[%d] = %d", fn, lv, hi, end))
	}
	if lx/2 < m.cols {
		panic(fmt.Sprintf("spkern: CSR.%s: x has %d values, want 2 for each of the %d columns", fn, lx, m.cols))
	}
	return true
}
