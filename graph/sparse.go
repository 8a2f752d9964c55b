package graph

import (
	"fmt"
	"math"
	"sort"
	"sync/atomic"

	"github.com/fairmp/fairmp/internal/par"

	"github.com/fairmp/fairmp/internal/spkern"
)

var matrixIDs atomic.Uint64

// Matrix is an immutable sparse matrix in compressed sparse row form. The
// non-zeros of row i are at positions Indptr()[i]:Indptr()[i+1] of
// Indices() (column ids, ascending) and of the value slices.
//
// A Matrix holds its values in both float64 and float32, converted once at
// construction, so that float32 and float64 models can share it without a
// hidden conversion at use time. Each Matrix has a unique ID, which custom
// gorgonia ops use in their hashes so that products with different matrices
// are never merged.
type Matrix struct {
	rows, cols int
	indptr     []int
	indices    []int32
	val64      []float64
	val32      []float32
	symmetric  bool
	id         uint64
	// csr is the structure checked once by internal/spkern, whose
	// kernels then check each call in constant time. It shares indptr
	// and indices, which a Matrix never changes after construction.
	csr *spkern.CSR
}

func newMatrix(rows, cols int, indptr []int, indices []int32, val []float64, symmetric bool) *Matrix {
	v32 := make([]float32, len(val))
	for i, v := range val {
		v32[i] = float32(v)
	}
	csr, err := spkern.NewCSR(rows, cols, indptr, indices)
	if err != nil {
		// Every constructor has checked or built the arrays: a bug here.
		panic(fmt.Sprintf("graph: internal error: %v", err))
	}
	return &Matrix{rows: rows, cols: cols, indptr: indptr, indices: indices, val64: val,
		val32: v32, symmetric: symmetric, id: matrixIDs.Add(1), csr: csr}
}

// NewMatrixCSR builds a rows × cols sparse matrix from compressed sparse
// rows: the entries of row i are indices[indptr[i]:indptr[i+1]] (column
// ids, strictly ascending) with values val at the same positions. It takes
// ownership of the slices (no copy; do not modify them afterwards), which
// makes it the cheap constructor for code that builds rows in order, such
// as a neighbour sampler's blocks. It returns an error, naming the row and
// position, for sizes that do not match, a column out of range or out of
// order, and a non-finite value.
func NewMatrixCSR(rows, cols int, indptr []int, indices []int32, val []float64) (*Matrix, error) {
	if rows <= 0 || cols <= 0 {
		return nil, fmt.Errorf("graph: NewMatrixCSR: size %d × %d, want both > 0", rows, cols)
	}
	if len(indptr) != rows+1 || indptr[0] != 0 || indptr[rows] != len(indices) || len(val) != len(indices) {
		return nil, fmt.Errorf("graph: NewMatrixCSR: %d row pointers (first %d, last %d), %d column ids and %d values for %d rows, want %d pointers from 0 to the number of entries and as many values as column ids",
			len(indptr), first(indptr), last(indptr), len(indices), len(val), rows, rows+1)
	}
	for i := 0; i < rows; i++ {
		if indptr[i+1] < indptr[i] {
			return nil, fmt.Errorf("graph: NewMatrixCSR: row %d ends at %d before it starts at %d", i, indptr[i+1], indptr[i])
		}
	}
	for i := 0; i < rows; i++ {
		lo, hi := indptr[i], indptr[i+1]
		for p := lo; p < hi; p++ {
			if j := indices[p]; j < 0 || int(j) >= cols || (p > lo && j <= indices[p-1]) {
				return nil, fmt.Errorf("graph: NewMatrixCSR: row %d, position %d: column %d, want columns in [0, %d), strictly ascending within a row", i, p, j, cols)
			}
			if v := val[p]; math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("graph: NewMatrixCSR: row %d, column %d is %v, want a finite value", i, indices[p], v)
			}
		}
	}
	m := newMatrix(rows, cols, indptr, indices, val, false)
	m.symmetric = m.isSymmetric()
	return m, nil
}

func first(s []int) int {
	if len(s) == 0 {
		return 0
	}
	return s[0]
}

func last(s []int) int {
	if len(s) == 0 {
		return 0
	}
	return s[len(s)-1]
}

// NewMatrix builds a rows × cols sparse matrix from coordinate triplets
// (r[k], c[k], v[k]). Entries with the same coordinates are summed. It
// returns an error on mismatched lengths, non-positive sizes, coordinates
// out of range (naming the triplet) and non-finite values (also when
// duplicates sum to an infinity).
func NewMatrix(rows, cols int, r, c []int, v []float64) (*Matrix, error) {
	if rows <= 0 || cols <= 0 {
		return nil, fmt.Errorf("graph: NewMatrix: size %d × %d, want both > 0", rows, cols)
	}
	if len(r) != len(c) || len(r) != len(v) {
		return nil, fmt.Errorf("graph: NewMatrix: %d row ids, %d column ids, %d values, want equal lengths", len(r), len(c), len(v))
	}
	cnt := make([]int, rows+1)
	for k := range r {
		if r[k] < 0 || r[k] >= rows || c[k] < 0 || c[k] >= cols {
			return nil, fmt.Errorf("graph: NewMatrix: entry %d at (%d, %d), want row in [0, %d) and column in [0, %d)", k, r[k], c[k], rows, cols)
		}
		if math.IsNaN(v[k]) || math.IsInf(v[k], 0) {
			return nil, fmt.Errorf("graph: NewMatrix: entry %d at (%d, %d) is %v, want a finite value", k, r[k], c[k], v[k])
		}
		cnt[r[k]+1]++
	}
	for i := 0; i < rows; i++ {
		cnt[i+1] += cnt[i]
	}
	type ent struct {
		c int32
		v float64
	}
	ents := make([]ent, len(r))
	fill := append([]int(nil), cnt[:rows]...)
	for k := range r {
		ents[fill[r[k]]] = ent{int32(c[k]), v[k]}
		fill[r[k]]++
	}
	indptr := make([]int, rows+1)
	indices := make([]int32, 0, len(r))
	vals := make([]float64, 0, len(r))
	for i := 0; i < rows; i++ {
		row := ents[cnt[i]:cnt[i+1]]
		sort.SliceStable(row, func(a, b int) bool { return row[a].c < row[b].c })
		for k, e := range row {
			if k > 0 && e.c == row[k-1].c {
				vals[len(vals)-1] += e.v
				continue
			}
			indices = append(indices, e.c)
			vals = append(vals, e.v)
		}
		indptr[i+1] = len(indices)
		for p := indptr[i]; p < indptr[i+1]; p++ {
			if math.IsInf(vals[p], 0) {
				return nil, fmt.Errorf("graph: NewMatrix: the entries at (%d, %d) sum to %v, want a finite value", i, indices[p], vals[p])
			}
		}
	}
	m := newMatrix(rows, cols, indptr, indices, vals, false)
	m.symmetric = m.isSymmetric()
	return m, nil
}

func (m *Matrix) isSymmetric() bool {
	if m.rows != m.cols {
		return false
	}
	for i := 0; i < m.rows; i++ {
		for p := m.indptr[i]; p < m.indptr[i+1]; p++ {
			j := int(m.indices[p])
			if v, ok := m.At(j, i); !ok || v != m.val64[p] {
				return false
			}
		}
	}
	return true
}

// At returns the value at (i, j) and whether it is stored.
func (m *Matrix) At(i, j int) (float64, bool) {
	row := m.indices[m.indptr[i]:m.indptr[i+1]]
	k := sort.Search(len(row), func(k int) bool { return int(row[k]) >= j })
	if k < len(row) && int(row[k]) == j {
		return m.val64[m.indptr[i]+k], true
	}
	return 0, false
}

// Dims returns the number of rows and columns.
func (m *Matrix) Dims() (rows, cols int) { return m.rows, m.cols }

// NNZ returns the number of stored entries.
func (m *Matrix) NNZ() int { return len(m.indices) }

// ID returns the matrix's unique identity (used in op hashes).
func (m *Matrix) ID() uint64 { return m.id }

// Symmetric reports whether the matrix equals its transpose exactly.
func (m *Matrix) Symmetric() bool { return m.symmetric }

// Indptr returns the row pointers (length rows+1). Do not modify: the
// products' assembly kernels rely on the arrays checked at construction
// (see MulDense64).
func (m *Matrix) Indptr() []int { return m.indptr }

// Indices returns the column ids of the stored entries. Do not modify:
// the products' assembly kernels rely on the ids checked at
// construction (see MulDense64).
func (m *Matrix) Indices() []int32 { return m.indices }

// Values64 returns the stored values in float64. Do not modify.
func (m *Matrix) Values64() []float64 { return m.val64 }

// Values32 returns the stored values in float32. Do not modify.
func (m *Matrix) Values32() []float32 { return m.val32 }

// Transpose returns the transpose. A symmetric matrix is its own transpose
// and is returned as is.
func (m *Matrix) Transpose() *Matrix {
	if m.symmetric {
		return m
	}
	cnt := make([]int, m.cols+1)
	for _, j := range m.indices {
		cnt[j+1]++
	}
	for j := 0; j < m.cols; j++ {
		cnt[j+1] += cnt[j]
	}
	fill := append([]int(nil), cnt[:m.cols]...)
	idx := make([]int32, len(m.indices))
	val := make([]float64, len(m.indices))
	for i := 0; i < m.rows; i++ {
		for p := m.indptr[i]; p < m.indptr[i+1]; p++ {
			j := m.indices[p]
			idx[fill[j]] = int32(i)
			val[fill[j]] = m.val64[p]
			fill[j]++
		}
	}
	return newMatrix(m.cols, m.rows, cnt, idx, val, false)
}

// Dense returns the matrix as a dense row-major slice. It is meant for
// tests on small matrices: it allocates rows × cols values.
func (m *Matrix) Dense() []float64 {
	d := make([]float64, m.rows*m.cols)
	for i := 0; i < m.rows; i++ {
		for p := m.indptr[i]; p < m.indptr[i+1]; p++ {
			d[i*m.cols+int(m.indices[p])] += m.val64[p]
		}
	}
	return d
}

// Adjacency returns the plain adjacency matrix A of g (1 on every edge, in
// both directions, 0 on the diagonal).
func Adjacency(g *Graph) *Matrix {
	val := make([]float64, len(g.indices))
	for i := range val {
		val[i] = 1
	}
	return newMatrix(g.n, g.n, append([]int(nil), g.indptr...), append([]int32(nil), g.indices...), val, true)
}

// NormOptions controls GCN normalisation (see GCNNorm). The zero value is
// not the default: start from DefaultNormOptions.
type NormOptions struct {
	// AddSelfLoops adds a self-loop of weight SelfLoopWeight to every node
	// before normalising. Default true.
	AddSelfLoops bool
	// SelfLoopWeight is the weight of the added self-loops: 1 for GCN, 2 for
	// PyG's improved GCN. Must be > 0. Default 1.
	SelfLoopWeight float64
	// Normalize applies D̂^-1/2 Â D̂^-1/2. When false the (self-looped)
	// adjacency is returned unnormalised. Default true.
	Normalize bool
}

// DefaultNormOptions returns the options of Kipf & Welling's GCN and of
// PyG's GCNConv defaults: self-loops of weight 1, symmetric normalisation.
func DefaultNormOptions() NormOptions {
	return NormOptions{AddSelfLoops: true, SelfLoopWeight: 1, Normalize: true}
}

// NormalizedAdjacency returns Ã = D̂^-1/2 (A+I) D̂^-1/2, the GCN propagation
// matrix, with D̂ the degree matrix of A+I. Isolated nodes keep their
// self-loop (Ã_ii = 1). Ã is symmetric.
func NormalizedAdjacency(g *Graph) *Matrix {
	m, _ := GCNNorm(g, DefaultNormOptions())
	return m
}

// GCNNorm returns the adjacency of g with optional self-loops and optional
// symmetric normalisation, as PyG's gcn_norm. With opts.SelfLoopWeight = 2
// it is the `improved` variant. It returns an error for a non-positive or
// non-finite self-loop weight. A node without any edge (and without
// self-loop) gets an empty row.
func GCNNorm(g *Graph, opts NormOptions) (*Matrix, error) {
	w := opts.SelfLoopWeight
	if opts.AddSelfLoops && (!(w > 0) || math.IsInf(w, 0)) {
		return nil, fmt.Errorf("graph: GCNNorm: SelfLoopWeight = %v, want a finite value > 0", w)
	}
	return gcnNormRows(g, nil, nil, opts), nil
}

// parallelRows runs f over fixed row blocks in parallel (see par.Rows).
func parallelRows(indptr []int, f func(lo, hi int)) { par.Rows(indptr, 1<<14, f) }

// MulDense64 computes out = m · x for a dense row-major x with the given
// number of columns (x has m's column count of rows). out must have
// rows × cols elements; it is overwritten. Rows are processed in parallel
// blocks; each output row is summed in a fixed order, so results are
// bit-for-bit deterministic. For 8 or more columns it runs on AVX2 kernels
// (internal/spkern) where the CPU has them; they add the same products in
// the same order with the same roundings as the Go loops, so the result
// does not depend on the CPU. It panics if cols < 1 or out or x is too
// short.
//
// The kernels do no bounds checking of their own. The column ids are
// checked once, when the Matrix is built (internal/spkern.NewCSR), and
// each kernel call checks only its row and the lengths of x and out, in
// constant time: this is why the arrays that Indptr and Indices return
// must never be modified.
func (m *Matrix) MulDense64(out, x []float64, cols int) {
	m.checkMul(len(out), len(x), cols)
	mulDenseThen(m, m.val64, out, x, cols, 0, m.rows, nil)
}

// MulDense32 is MulDense64 in float32. For 8 or more columns it runs on
// AVX2/FMA kernels (internal/spkern) where the CPU has them.
func (m *Matrix) MulDense32(out, x []float32, cols int) {
	m.checkMul(len(out), len(x), cols)
	mulDenseThen(m, m.val32, out, x, cols, 0, m.rows, nil)
}

// MulDenseThen32 is MulDense32 followed by then(lo, hi) on each block of
// rows [lo, hi) of out, called by the goroutine that computed the block
// right after computing it, while its rows are still in cache: for a
// bias and an activation fused into the product. Blocks are disjoint and
// cover every row once; then runs concurrently on different blocks.
func (m *Matrix) MulDenseThen32(out, x []float32, cols int, then func(lo, hi int)) {
	m.checkMul(len(out), len(x), cols)
	mulDenseThen(m, m.val32, out, x, cols, 0, m.rows, then)
}

// MulDenseThen64 is MulDenseThen32 in float64.
func (m *Matrix) MulDenseThen64(out, x []float64, cols int, then func(lo, hi int)) {
	m.checkMul(len(out), len(x), cols)
	mulDenseThen(m, m.val64, out, x, cols, 0, m.rows, then)
}

// MulDenseRows32 computes rows lo..hi−1 of m · x into out, which must
// hold (hi−lo)·cols values: the product one block of rows at a time, for
// callers that cannot hold the whole rows × cols result (whole-graph
// inference on a graph of millions of nodes). Each row is the same sum,
// in the same order, as in MulDense32. It panics if the range or a
// buffer is out of bounds.
func (m *Matrix) MulDenseRows32(out, x []float32, cols, lo, hi int) {
	m.checkRows(len(out), len(x), cols, lo, hi)
	mulDenseThen(m, m.val32, out, x, cols, lo, hi-lo, nil)
}

// MulDenseRows64 is MulDenseRows32 in float64.
func (m *Matrix) MulDenseRows64(out, x []float64, cols, lo, hi int) {
	m.checkRows(len(out), len(x), cols, lo, hi)
	mulDenseThen(m, m.val64, out, x, cols, lo, hi-lo, nil)
}

func (m *Matrix) checkRows(lout, lx, cols, lo, hi int) {
	if lo < 0 || hi > m.rows || lo >= hi || cols < 1 || lout < (hi-lo)*cols || lx < m.cols*cols {
		panic(fmt.Sprintf("graph: MulDenseRows: rows [%d, %d) of a %d × %d matrix, %d columns, out has %d values and x %d, want 0 ≤ lo < hi ≤ %d, cols ≥ 1, ≥ %d and ≥ %d",
			lo, hi, m.rows, m.cols, cols, lout, lx, m.rows, (hi-lo)*cols, m.cols*cols))
	}
}

func (m *Matrix) checkMul(lout, lx, cols int) {
	if cols < 1 || lout < m.rows*cols || lx < m.cols*cols {
		panic(fmt.Sprintf("graph: MulDense: out has %d values and x %d for a %d × %d matrix and %d columns, want cols >= 1, >= %d and >= %d",
			lout, lx, m.rows, m.cols, cols, m.rows*cols, m.cols*cols))
	}
}

// mulDenseThen computes rows [base, base+n) of m · x into out (row base
// first) from m's values val, calling then (when not nil) on each block
// of rows [lo, hi) of out after computing it. The Go loops see indptr
// from row base on, so that their row i is out's row i; the kernels
// take m's row base+i.
func mulDenseThen[T float32 | float64](m *Matrix, val []T, out, x []T, cols, base, n int, then func(lo, hi int)) {
	indptr, indices := m.indptr[base:base+n+1], m.indices
	rows := func(lo, hi int) {
		switch {
		case cols >= 8 && spkern.Enabled():
			if v32, ok := any(val).([]float32); ok {
				mulRowsStrips32(m.csr, base, indptr, indices, v32, any(out).([]float32), any(x).([]float32), cols, lo, hi)
			} else {
				mulRowsStrips64(m.csr, base, indptr, indices, any(val).([]float64), any(out).([]float64), any(x).([]float64), cols, lo, hi)
			}
		case cols == 2 && spkern.Enabled():
			mulRows2Kern(m.csr, base, indptr, indices, val, out, x, lo, hi)
		case cols == 1:
			mulRows1(indptr, indices, val, out, x, lo, hi)
		case cols == 2:
			mulRows2(indptr, indices, val, out, x, lo, hi)
		default:
			mulRowsN(indptr, indices, val, out, x, cols, lo, hi)
		}
		if then != nil {
			then(lo, hi)
		}
	}
	parallelRows(indptr, rows)
}

func mulRows1[T float32 | float64](indptr []int, indices []int32, val []T, out, x []T, lo, hi int) {
	for i := lo; i < hi; i++ {
		ps, pe := indptr[i], indptr[i+1]
		idx, vv := indices[ps:pe], val[ps:pe]
		vv = vv[:len(idx)]
		var s T
		for p, j := range idx {
			s += vv[p] * x[j]
		}
		out[i] = s
	}
}

func mulRows2[T float32 | float64](indptr []int, indices []int32, val []T, out, x []T, lo, hi int) {
	for i := lo; i < hi; i++ {
		ps, pe := indptr[i], indptr[i+1]
		idx, vv := indices[ps:pe], val[ps:pe]
		vv = vv[:len(idx)]
		var s0, s1 T
		for p, j := range idx {
			a := vv[p]
			xr := x[2*int(j) : 2*int(j)+2 : 2*int(j)+2]
			s0 += a * xr[0]
			s1 += a * xr[1]
		}
		o := out[2*i : 2*i+2 : 2*i+2]
		o[0], o[1] = s0, s1
	}
}

// mulRows2Kern is mulRows2 on the assembly kernels of internal/spkern
// (four rows summed side by side, each in mulRows2's order with its
// roundings: the same result bit for bit). Row i of indptr and out is row
// base+i of csr.
func mulRows2Kern[T float32 | float64](csr *spkern.CSR, base int, indptr []int, indices []int32, val []T, out, x []T, lo, hi int) {
	switch v := any(val).(type) {
	case []float32:
		if csr.Cols2Rows32(v, any(x).([]float32), any(out).([]float32)[2*lo:2*hi], base+lo, base+hi) {
			return
		}
	case []float64:
		if csr.Cols2Rows64(v, any(x).([]float64), any(out).([]float64)[2*lo:2*hi], base+lo, base+hi) {
			return
		}
	}
	mulRows2(indptr, indices, val, out, x, lo, hi)
}

// mulRowsN computes rows [lo, hi) for any column count. Each row is done
// in column strips of 8 (then 4, then 1) summed in registers over the
// row's non-zeros: the row's ids and values stay in L1 across strips, and
// no partial sum goes through memory. Each output element is the sum over
// the row's non-zeros in index order, whatever the strip, so the result
// does not depend on cols' decomposition or on the row partition.
func mulRowsN[T float32 | float64](indptr []int, indices []int32, val []T, out, x []T, cols, lo, hi int) {
	for i := lo; i < hi; i++ {
		ps, pe := indptr[i], indptr[i+1]
		idx, vv := indices[ps:pe], val[ps:pe]
		vv = vv[:len(idx)]
		o := out[i*cols : (i+1)*cols : (i+1)*cols]
		c0 := 0
		for ; c0+8 <= cols; c0 += 8 {
			var s0, s1, s2, s3, s4, s5, s6, s7 T
			for p, j := range idx {
				a := vv[p]
				b := int(j)*cols + c0
				xr := x[b : b+8 : b+8]
				s0 += a * xr[0]
				s1 += a * xr[1]
				s2 += a * xr[2]
				s3 += a * xr[3]
				s4 += a * xr[4]
				s5 += a * xr[5]
				s6 += a * xr[6]
				s7 += a * xr[7]
			}
			oo := o[c0 : c0+8 : c0+8]
			oo[0], oo[1], oo[2], oo[3], oo[4], oo[5], oo[6], oo[7] = s0, s1, s2, s3, s4, s5, s6, s7
		}
		for ; c0+4 <= cols; c0 += 4 {
			var s0, s1, s2, s3 T
			for p, j := range idx {
				a := vv[p]
				b := int(j)*cols + c0
				xr := x[b : b+4 : b+4]
				s0 += a * xr[0]
				s1 += a * xr[1]
				s2 += a * xr[2]
				s3 += a * xr[3]
			}
			oo := o[c0 : c0+4 : c0+4]
			oo[0], oo[1], oo[2], oo[3] = s0, s1, s2, s3
		}
		for ; c0 < cols; c0++ {
			var s T
			for p, j := range idx {
				s += vv[p] * x[int(j)*cols+c0]
			}
			o[c0] = s
		}
	}
}

// mulRowsStrips32 is mulRowsN for float32 with the assembly kernels of
// internal/spkern: strips of 64, then 8 columns, then single columns in Go.
// Row i of indptr and out is row base+i of csr, whose kernels check each
// strip in constant time (the row's ids were checked with the Matrix).
func mulRowsStrips32(csr *spkern.CSR, base int, indptr []int, indices []int32, val []float32, out, x []float32, cols, lo, hi int) {
	for i := lo; i < hi; i++ {
		ps, pe := indptr[i], indptr[i+1]
		idx, vv := indices[ps:pe], val[ps:pe]
		o := out[i*cols : (i+1)*cols : (i+1)*cols]
		if len(idx) == 0 {
			clear(o)
			continue
		}
		c0 := 0
		for ; c0+64 <= cols; c0 += 64 {
			csr.RowStrip32(64, base+i, val, x[c0:], cols, o[c0:])
		}
		for ; c0+8 <= cols; c0 += 8 {
			csr.RowStrip32(8, base+i, val, x[c0:], cols, o[c0:])
		}
		for ; c0 < cols; c0++ {
			var s float32
			for p, j := range idx {
				s += vv[p] * x[int(j)*cols+c0]
			}
			o[c0] = s
		}
	}
}

// mulRowsStrips64 is mulRowsN for float64 with the assembly kernels of
// internal/spkern: strips of 32, then 8 columns, then mulRowsN's Go loops
// for the last columns. The kernels multiply and add without fusing, in
// index order, so every element equals mulRowsN's bit for bit: the two
// paths give the same model on every CPU. Row i of indptr and out is row
// base+i of csr.
func mulRowsStrips64(csr *spkern.CSR, base int, indptr []int, indices []int32, val []float64, out, x []float64, cols, lo, hi int) {
	for i := lo; i < hi; i++ {
		ps, pe := indptr[i], indptr[i+1]
		idx, vv := indices[ps:pe], val[ps:pe]
		o := out[i*cols : (i+1)*cols : (i+1)*cols]
		if len(idx) == 0 {
			clear(o)
			continue
		}
		c0 := 0
		for ; c0+32 <= cols; c0 += 32 {
			csr.RowStrip64(32, base+i, val, x[c0:], cols, o[c0:])
		}
		for ; c0+8 <= cols; c0 += 8 {
			csr.RowStrip64(8, base+i, val, x[c0:], cols, o[c0:])
		}
		for ; c0 < cols; c0++ {
			var s float64
			for p, j := range idx {
				s += vv[p] * x[int(j)*cols+c0]
			}
			o[c0] = s
		}
	}
}
