package fmpbeam

import (
	"fmt"
	"math"
	"reflect"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
)

// The pipeline's elements. Nodes are numbered 0..n−1 and cut into blocks
// of Layout.Size consecutive nodes; block b holds nodes [b·Size,
// min((b+1)·Size, n)). Every per-node quantity travels as one element per
// block, keyed by the block's index (KV<int64, T>): a layer's transform
// is a ParDo over blocks, a sparse product a join and a group by block.

// AdjBlock holds the entries of a propagation matrix Ã in the columns of
// one block of nodes [Lo, Lo+N), grouped by row: the entries of row
// Row[r] are Col[Ptr[r]:Ptr[r+1]] (local columns, ascending) with values
// Val. Rows ascend, so the rows of each destination block are
// contiguous. The matrix's self-loops are entries like any other.
//
// RowScale (one per Row) and ColScale (one per local column), when set,
// say that every value is their product: Val[q] = RowScale[r]·
// ColScale[Col[q]], bit for bit (a normalised adjacency's 1/√d̂_i ·
// 1/√d̂_j, as BuildMatrix sets them). The block then travels without
// Val, 8 bytes a nonzero fewer, and decoding rebuilds Val with the same
// products. The encoder checks the claim value by value and sends Val
// when it does not hold, so a wrong scale costs bytes, never a value.
// When every scale is also 1/√(k + ScaleShift) for a node degree k (0
// for k = −1), bit for bit, the scales travel as those degrees, a byte
// or two each instead of eight.
type AdjBlock struct {
	Lo         int64
	N          int32
	Row        []int64
	Ptr        []int32
	Col        []int32
	Val        []float64
	RowScale   []float64
	ColScale   []float64
	ScaleShift float64
}

// degScale is a node's scale 1/√(k + shift) for its degree k (0 when
// that is not positive, and for k = −1): Norm's, with shift its
// self-loop weight or 0.
func degScale(k int32, shift float64) float64 {
	if k < 0 {
		return 0
	}
	if d := float64(k) + shift; d > 0 {
		return 1 / math.Sqrt(d)
	}
	return 0
}

// degreesOf returns the degrees k with degScale(k, shift) equal to each
// scale bit for bit, and false if a scale has none.
func degreesOf(scales []float64, shift float64) ([]int32, bool) {
	ks := make([]int32, len(scales))
	for i, s := range scales {
		k := int32(-1)
		if s != 0 {
			d := math.Round(1/(s*s) - shift)
			if !(d >= 0 && d <= math.MaxInt32) {
				return nil, false
			}
			k = int32(d)
		}
		if math.Float64bits(degScale(k, shift)) != math.Float64bits(s) {
			return nil, false
		}
		ks[i] = k
	}
	return ks, true
}

// scaled calls f(q, RowScale[r]·ColScale[Col[q]]) for every entry q, in
// order, until f returns false, or returns an error if the block's parts
// do not fit together (lengths, row starts, columns).
func (a *AdjBlock) scaled(f func(q int32, v float64) bool) error {
	if len(a.RowScale) != len(a.Row) || len(a.ColScale) != int(a.N) || len(a.Ptr) != len(a.Row)+1 || int(a.Ptr[len(a.Row)]) != len(a.Col) {
		return fmt.Errorf("a factored matrix block with %d rows, %d row scales, %d columns, %d column scales, %d row starts and %d entries", len(a.Row), len(a.RowScale), a.N, len(a.ColScale), len(a.Ptr), len(a.Col))
	}
	for row, rs := range a.RowScale {
		lo, hi := a.Ptr[row], a.Ptr[row+1]
		if lo > hi || int(hi) > len(a.Col) {
			return fmt.Errorf("row %d's entries [%d, %d) of %d", row, lo, hi, len(a.Col))
		}
		for q := lo; q < hi; q++ {
			j := a.Col[q]
			if j < 0 || j >= a.N {
				return fmt.Errorf("column %d in a block of %d", j, a.N)
			}
			if !f(q, rs*a.ColScale[j]) {
				return nil
			}
		}
	}
	return nil
}

// factored reports whether a's values are its scales' products bit for
// bit (see AdjBlock).
func (a *AdjBlock) factored() bool {
	if len(a.Val) != len(a.Col) {
		return false
	}
	same := true
	err := a.scaled(func(q int32, v float64) bool {
		same = math.Float64bits(v) == math.Float64bits(a.Val[q])
		return same
	})
	return err == nil && same
}

// Value encodings of an AdjBlock.
const (
	adjValues   = 0 // Val, 8 bytes a nonzero
	adjFactored = 1 // RowScale and ColScale
	adjDegrees  = 2 // ScaleShift and the degrees of RowScale and ColScale
)

func (a *AdjBlock) put(w *writer) {
	w.varint(a.Lo)
	w.varint(int64(a.N))
	ascending(w, a.Row)
	ascending(w, a.Ptr)
	w.i32s(a.Col)
	if a.factored() {
		rk, okr := degreesOf(a.RowScale, a.ScaleShift)
		ck, okc := degreesOf(a.ColScale, a.ScaleShift)
		if okr && okc {
			w.uvarint(adjDegrees)
			w.f64s([]float64{a.ScaleShift})
			w.i32s(rk)
			w.i32s(ck)
			return
		}
		w.uvarint(adjFactored)
		w.f64s(a.RowScale)
		w.f64s(a.ColScale)
		return
	}
	w.uvarint(adjValues)
	w.f64s(a.Val)
}

func (a *AdjBlock) get(r *reader) {
	a.Lo, a.N = r.varint(), int32(r.varint())
	a.Row, a.Ptr = readAscending[int64](r), readAscending[int32](r)
	a.Col = r.i32s()
	switch enc := r.uvarint(); {
	case r.err != nil:
	case enc == adjValues:
		a.Val = r.f64s()
	case enc == adjFactored:
		a.RowScale, a.ColScale = r.f64s(), r.f64s()
		a.Val = a.products(r)
	case enc == adjDegrees:
		shift := r.f64s()
		rk, ck := r.i32s(), r.i32s()
		if r.err == nil && len(shift) != 1 {
			r.err = fmt.Errorf("fmpbeam: corrupt element: %d scale shifts, want 1", len(shift))
		}
		if r.err != nil {
			return
		}
		a.ScaleShift = shift[0]
		a.RowScale, a.ColScale = scalesOf(rk, a.ScaleShift, r), scalesOf(ck, a.ScaleShift, r)
		a.Val = a.products(r)
	default:
		r.err = fmt.Errorf("fmpbeam: corrupt element: matrix values encoded as %d, want %d, %d or %d", enc, adjValues, adjFactored, adjDegrees)
	}
}

// scalesOf rebuilds the scales of degrees ks (degreesOf's inverse), or
// sets r's error for a degree below −1.
func scalesOf(ks []int32, shift float64, r *reader) []float64 {
	if r.err != nil {
		return nil
	}
	s := make([]float64, len(ks))
	for i, k := range ks {
		if k < -1 {
			r.err = fmt.Errorf("fmpbeam: corrupt element: node degree %d", k)
			return nil
		}
		s[i] = degScale(k, shift)
	}
	return s
}

// products rebuilds a factored block's values, or sets r's error if the
// decoded parts do not fit together.
func (a *AdjBlock) products(r *reader) []float64 {
	if r.err != nil {
		return nil
	}
	val := make([]float64, len(a.Col))
	if err := a.scaled(func(q int32, v float64) bool { val[q] = v; return true }); err != nil {
		r.err = fmt.Errorf("fmpbeam: corrupt element: %w", err)
		return nil
	}
	return val
}

// Rows is a dense block: the rows of N nodes from Lo, C values each,
// row-major. Tag distinguishes inputs merged into one group (the layers
// of a JKNet, the two terms of an APPNP step). A batch of rows read from
// files, not yet assembled into its block, has Idx: row k is node
// Lo+Idx[k].
type Rows struct {
	Lo   int64
	N, C int32
	Tag  int32
	Idx  []int32
	V    []float64
}

func (x *Rows) put(w *writer) {
	w.varint(x.Lo)
	w.varint(int64(x.N))
	w.varint(int64(x.C))
	w.varint(int64(x.Tag))
	w.i32s(x.Idx)
	w.f64s(x.V)
}

func (x *Rows) get(r *reader) {
	x.Lo, x.N, x.C, x.Tag = r.varint(), int32(r.varint()), int32(r.varint()), int32(r.varint())
	x.Idx, x.V = r.i32s(), r.f64s()
}

// Split codes of Nodes.Split.
const (
	SplitNone  uint8 = 0
	SplitTrain uint8 = 1
	SplitVal   uint8 = 2
	SplitTest  uint8 = 3
)

// Nodes holds the nodes' attributes of one block: label and group (−1
// unknown) and split (SplitNone, SplitTrain, SplitVal, SplitTest). A
// batch read from the node files, not yet assembled, has Idx: entry k is
// node Lo+Idx[k].
type Nodes struct {
	Lo          int64
	N           int32
	Idx         []int32
	Label, Sens []int32
	Split       []uint8
}

func (x *Nodes) put(w *writer) {
	w.varint(x.Lo)
	w.varint(int64(x.N))
	w.i32s(x.Idx)
	w.i32s(x.Label)
	w.i32s(x.Sens)
	w.u8s(x.Split)
}

func (x *Nodes) get(r *reader) {
	x.Lo, x.N = r.varint(), int32(r.varint())
	x.Idx, x.Label, x.Sens, x.Split = r.i32s(), r.i32s(), r.i32s(), r.u8s()
}

// Partial is what one source block contributes to a destination block's
// rows in a sparse product: V (len(Idx) × C) holds Σ_j Ã[i, j]·x_j over
// the block's columns j, for the destination's local rows Idx
// (ascending). A block sends a Partial to itself even when it has no
// entry there, with N its node count, so that every block gets a row.
// With Narrow, every value of V is a float32 (rounded so by the sender)
// and travels in 4 bytes instead of 8.
type Partial struct {
	From   int64
	N, C   int32
	Narrow bool
	Idx    []int32
	V      []float64
}

func (p *Partial) put(w *writer) {
	w.varint(p.From)
	w.varint(int64(p.N))
	w.varint(int64(p.C))
	ascending(w, p.Idx)
	if p.Narrow {
		w.uvarint(1)
		w.f32s(p.V)
		return
	}
	w.uvarint(0)
	w.f64s(p.V)
}

func (p *Partial) get(r *reader) {
	p.From, p.N, p.C = r.varint(), int32(r.varint()), int32(r.varint())
	p.Idx = readAscending[int32](r)
	if p.Narrow = r.uvarint() == 1; p.Narrow {
		p.V = r.f32s()
		return
	}
	p.V = r.f64s()
}

// Edges is a batch of one block's edge ends, read from the edge files:
// the edge (Lo+Local[k], Other[k]), seen from its end in the block.
type Edges struct {
	Local []int32
	Other []int64
}

func (e *Edges) put(w *writer) {
	w.i32s(e.Local)
	w.uvarint(uint64(len(e.Other)))
	for _, v := range e.Other {
		w.varint(v)
	}
}

func (e *Edges) get(r *reader) {
	e.Local = r.i32s()
	n := r.length(1)
	e.Other = make([]int64, n)
	for i := range e.Other {
		e.Other[i] = r.varint()
	}
}

// Scale is what one block tells another while the propagation matrix is
// built: for each edge (Src[k], Lo+Dst[k]) into the receiving block, the
// source's degree SrcDeg[k] (Src ascending). The message a block sends
// itself also carries its own nodes' degrees (Deg, N of them).
type Scale struct {
	From   int64
	N      int32
	Dst    []int32
	Src    []int64
	SrcDeg []int32
	Deg    []int32
}

func (m *Scale) put(w *writer) {
	w.varint(m.From)
	w.varint(int64(m.N))
	w.i32s(m.Dst)
	ascending(w, m.Src)
	w.i32s(m.SrcDeg)
	w.i32s(m.Deg)
}

func (m *Scale) get(r *reader) {
	m.From, m.N = r.varint(), int32(r.varint())
	m.Dst, m.Src = r.i32s(), readAscending[int64](r)
	m.SrcDeg, m.Deg = r.i32s(), r.i32s()
}

// Messages is what one source block sends a destination block in a GAT
// layer: the distinct sources Src (local to block From, ascending) with W
// values each (their source scores, then their transformed features),
// and the edges, destination Dst[k] (local, non-decreasing) from source
// Src[Ref[k]]. The message a block sends itself has N set and carries
// Own: its nodes' destination scores.
type Messages struct {
	From int64
	N, W int32
	Src  []int32
	V    []float64
	Dst  []int32
	Ref  []int32
	Own  []float64
}

func (m *Messages) put(w *writer) {
	w.varint(m.From)
	w.varint(int64(m.N))
	w.varint(int64(m.W))
	ascending(w, m.Src)
	w.f64s(m.V)
	ascending(w, m.Dst)
	w.i32s(m.Ref)
	w.f64s(m.Own)
}

func (m *Messages) get(r *reader) {
	m.From, m.N, m.W = r.varint(), int32(r.varint()), int32(r.varint())
	m.Src, m.V = readAscending[int32](r), r.f64s()
	m.Dst, m.Ref, m.Own = readAscending[int32](r), r.i32s(), r.f64s()
}

// State is one block's FMP state for S settings of C classes: the groups
// (−1 unknown), X_trans (N × C), F and X_agg (N × S × C).
type State struct {
	Lo      int64
	N, C, S int32
	Group   []int32
	X, F    []float64
	Agg     []float64
}

func (x *State) put(w *writer) {
	w.varint(x.Lo)
	w.varint(int64(x.N))
	w.varint(int64(x.C))
	w.varint(int64(x.S))
	w.i32s(x.Group)
	w.f64s(x.X)
	w.f64s(x.F)
	w.f64s(x.Agg)
}

func (x *State) get(r *reader) {
	x.Lo, x.N, x.C, x.S = r.varint(), int32(r.varint()), int32(r.varint()), int32(r.varint())
	x.Group, x.X, x.F, x.Agg = r.i32s(), r.f64s(), r.f64s(), r.f64s()
}

// Sums is the groups' summed probabilities of one FMP step, S × G × C
// fixed-point numbers (see fixedSum), and the groups' sizes: integer sums,
// so the total does not depend on the order Beam adds in.
type Sums struct {
	S, G, C int32
	Hi, Lo  []uint64
	Count   []int64
}

func (x *Sums) put(w *writer) {
	w.varint(int64(x.S))
	w.varint(int64(x.G))
	w.varint(int64(x.C))
	w.uvarint(uint64(len(x.Hi)))
	for k := range x.Hi {
		w.uvarint(x.Hi[k])
		w.uvarint(x.Lo[k])
	}
	w.uvarint(uint64(len(x.Count)))
	for _, c := range x.Count {
		w.varint(c)
	}
}

func (x *Sums) get(r *reader) {
	x.S, x.G, x.C = int32(r.varint()), int32(r.varint()), int32(r.varint())
	n := r.length(2)
	x.Hi, x.Lo = make([]uint64, n), make([]uint64, n)
	for k := 0; k < n; k++ {
		x.Hi[k], x.Lo[k] = r.uvarint(), r.uvarint()
	}
	n = r.length(1)
	x.Count = make([]int64, n)
	for k := range x.Count {
		x.Count[k] = r.varint()
	}
}

// Dual holds the FMP duals of S settings after a step: setting s's is
// Rows[s] × C, in U from s·R·C (R the largest of Rows).
type Dual struct {
	S, R, C int32
	Rows    []int32
	U       []float64
}

func (x *Dual) put(w *writer) {
	w.varint(int64(x.S))
	w.varint(int64(x.R))
	w.varint(int64(x.C))
	w.i32s(x.Rows)
	w.f64s(x.U)
}

func (x *Dual) get(r *reader) {
	x.S, x.R, x.C = int32(r.varint()), int32(r.varint()), int32(r.varint())
	x.Rows, x.U = r.i32s(), r.f64s()
}

// Eval is one block's part of an evaluation: the nodes of the
// validation and test splits (local Idx), their labels, groups and
// splits, and their C logits under one setting.
type Eval struct {
	Lo          int64
	C           int32
	Idx         []int32
	Label, Sens []int32
	Split       []uint8
	Z           []float64
}

func (x *Eval) put(w *writer) {
	w.varint(x.Lo)
	w.varint(int64(x.C))
	ascending(w, x.Idx)
	w.i32s(x.Label)
	w.i32s(x.Sens)
	w.u8s(x.Split)
	w.f64s(x.Z)
}

func (x *Eval) get(r *reader) {
	x.Lo, x.C = r.varint(), int32(r.varint())
	x.Idx, x.Label, x.Sens, x.Split, x.Z = readAscending[int32](r), r.i32s(), r.i32s(), r.u8s(), r.f64s()
}

// element is implemented by every binary-coded element type.
type element interface {
	put(w *writer)
}

// encodedSize returns the bytes of an element's encoding.
func encodedSize(e element) int {
	w := writer{count: true}
	e.put(&w)
	return w.size()
}

// encodeElement returns an element's encoding.
func encodeElement(e element) []byte {
	w := writer{}
	e.put(&w)
	return w.b
}

// decoder is implemented by the element types' pointers.
type decoder interface{ get(r *reader) }

// decodeElement decodes b into e.
func decodeElement(e decoder, b []byte, name string) error {
	r := reader{b: b}
	e.get(&r)
	return r.done(name)
}

// The coders' functions are plain named functions: Beam finds them by
// name in the worker binary, and the instances of a generic function
// share one name.

func encAdjBlock(v AdjBlock) []byte { return encodeElement(&v) }

func decAdjBlock(b []byte) (AdjBlock, error) {
	var v AdjBlock
	err := decodeElement(&v, b, "AdjBlock")
	return v, err
}

func encRows(v Rows) []byte { return encodeElement(&v) }

func decRows(b []byte) (Rows, error) {
	var v Rows
	err := decodeElement(&v, b, "Rows")
	return v, err
}

func encNodes(v Nodes) []byte { return encodeElement(&v) }

func decNodes(b []byte) (Nodes, error) {
	var v Nodes
	err := decodeElement(&v, b, "Nodes")
	return v, err
}

func encPartial(v Partial) []byte { return encodeElement(&v) }

func decPartial(b []byte) (Partial, error) {
	var v Partial
	err := decodeElement(&v, b, "Partial")
	return v, err
}

func encEdges(v Edges) []byte { return encodeElement(&v) }

func decEdges(b []byte) (Edges, error) {
	var v Edges
	err := decodeElement(&v, b, "Edges")
	return v, err
}

func encScale(v Scale) []byte { return encodeElement(&v) }

func decScale(b []byte) (Scale, error) {
	var v Scale
	err := decodeElement(&v, b, "Scale")
	return v, err
}

func encMessages(v Messages) []byte { return encodeElement(&v) }

func decMessages(b []byte) (Messages, error) {
	var v Messages
	err := decodeElement(&v, b, "Messages")
	return v, err
}

func encState(v State) []byte { return encodeElement(&v) }

func decState(b []byte) (State, error) {
	var v State
	err := decodeElement(&v, b, "State")
	return v, err
}

func encSums(v Sums) []byte { return encodeElement(&v) }

func decSums(b []byte) (Sums, error) {
	var v Sums
	err := decodeElement(&v, b, "Sums")
	return v, err
}

func encDual(v Dual) []byte { return encodeElement(&v) }

func decDual(b []byte) (Dual, error) {
	var v Dual
	err := decodeElement(&v, b, "Dual")
	return v, err
}

func encEval(v Eval) []byte { return encodeElement(&v) }

func decEval(b []byte) (Eval, error) {
	var v Eval
	err := decodeElement(&v, b, "Eval")
	return v, err
}

func init() {
	beam.RegisterCoder(reflect.TypeOf(AdjBlock{}), encAdjBlock, decAdjBlock)
	beam.RegisterCoder(reflect.TypeOf(Rows{}), encRows, decRows)
	beam.RegisterCoder(reflect.TypeOf(Nodes{}), encNodes, decNodes)
	beam.RegisterCoder(reflect.TypeOf(Partial{}), encPartial, decPartial)
	beam.RegisterCoder(reflect.TypeOf(Edges{}), encEdges, decEdges)
	beam.RegisterCoder(reflect.TypeOf(Scale{}), encScale, decScale)
	beam.RegisterCoder(reflect.TypeOf(Messages{}), encMessages, decMessages)
	beam.RegisterCoder(reflect.TypeOf(State{}), encState, decState)
	beam.RegisterCoder(reflect.TypeOf(Sums{}), encSums, decSums)
	beam.RegisterCoder(reflect.TypeOf(Dual{}), encDual, decDual)
	beam.RegisterCoder(reflect.TypeOf(Eval{}), encEval, decEval)
}
