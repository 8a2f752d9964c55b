package fmpbeam

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/bits"
)

// The element types travel between workers in a compact binary form:
// integers as varints (sorted ids as varint deltas), floats as 8
// little-endian bytes. One writer serves both encoding and counting: with
// count set it only adds up the bytes it would write, so the byte
// counters of the pipeline measure exactly what the coders produce.

// writer appends an element's encoding to b, or counts its bytes.
type writer struct {
	b     []byte
	n     int
	count bool
}

func (w *writer) uvarint(v uint64) {
	if w.count {
		w.n += uvarintLen(v)
		return
	}
	w.b = binary.AppendUvarint(w.b, v)
}

func (w *writer) varint(v int64) { w.uvarint(uint64(v<<1) ^ uint64(v>>63)) }

func (w *writer) f64s(v []float64) {
	w.uvarint(uint64(len(v)))
	if w.count {
		w.n += 8 * len(v)
		return
	}
	for _, x := range v {
		w.b = binary.LittleEndian.AppendUint64(w.b, math.Float64bits(x))
	}
}

// f32s writes float64 values that are float32s (see Partial.Narrow) in
// 4 bytes each; a value that is not is rounded to the nearest float32.
func (w *writer) f32s(v []float64) {
	w.uvarint(uint64(len(v)))
	if w.count {
		w.n += 4 * len(v)
		return
	}
	for _, x := range v {
		w.b = binary.LittleEndian.AppendUint32(w.b, math.Float32bits(float32(x)))
	}
}

func (w *writer) i32s(v []int32) {
	w.uvarint(uint64(len(v)))
	for _, x := range v {
		w.varint(int64(x))
	}
}

// ascending writes a non-decreasing sequence as its first value and the
// gaps after it (small numbers: a byte or two each).
func ascending[T int32 | int64](w *writer, v []T) {
	w.uvarint(uint64(len(v)))
	prev := int64(0)
	for _, x := range v {
		w.varint(int64(x) - prev)
		prev = int64(x)
	}
}

func (w *writer) u8s(v []uint8) {
	w.uvarint(uint64(len(v)))
	if w.count {
		w.n += len(v)
		return
	}
	w.b = append(w.b, v...)
}

func (w *writer) size() int {
	if w.count {
		return w.n
	}
	return len(w.b)
}

func uvarintLen(v uint64) int { return max(1, (bits.Len64(v)+6)/7) }

// errTruncated is the error of a decoding that runs past its bytes.
var errTruncated = errors.New("fmpbeam: corrupt element: truncated")

// reader decodes what writer wrote; the first error sticks.
type reader struct {
	b   []byte
	err error
}

func (r *reader) uvarint() uint64 {
	if r.err != nil {
		return 0
	}
	v, k := binary.Uvarint(r.b)
	if k <= 0 {
		r.err = errTruncated
		return 0
	}
	r.b = r.b[k:]
	return v
}

func (r *reader) varint() int64 {
	u := r.uvarint()
	return int64(u>>1) ^ -int64(u&1)
}

// length reads a slice length and checks that at least min bytes per
// element remain.
func (r *reader) length(min int) int {
	n := r.uvarint()
	if r.err == nil && n > uint64(len(r.b)/max(min, 1)) {
		r.err = fmt.Errorf("fmpbeam: corrupt element: %d entries in %d bytes", n, len(r.b))
	}
	if r.err != nil {
		return 0
	}
	return int(n)
}

func (r *reader) f64s() []float64 {
	n := r.length(8)
	if n == 0 {
		return nil
	}
	v := make([]float64, n)
	for i := range v {
		v[i] = math.Float64frombits(binary.LittleEndian.Uint64(r.b[8*i:]))
	}
	r.b = r.b[8*n:]
	return v
}

func (r *reader) f32s() []float64 {
	n := r.length(4)
	if n == 0 {
		return nil
	}
	v := make([]float64, n)
	for i := range v {
		v[i] = float64(math.Float32frombits(binary.LittleEndian.Uint32(r.b[4*i:])))
	}
	r.b = r.b[4*n:]
	return v
}

func (r *reader) i32s() []int32 {
	n := r.length(1)
	if n == 0 {
		return nil
	}
	v := make([]int32, n)
	for i := range v {
		v[i] = int32(r.varint())
	}
	return v
}

func readAscending[T int32 | int64](r *reader) []T {
	n := r.length(1)
	if n == 0 {
		return nil
	}
	v := make([]T, n)
	prev := int64(0)
	for i := range v {
		prev += r.varint()
		v[i] = T(prev)
	}
	return v
}

func (r *reader) u8s() []uint8 {
	n := r.length(1)
	if n == 0 {
		return nil
	}
	v := append([]uint8(nil), r.b[:n]...)
	r.b = r.b[n:]
	return v
}

// done returns the decoding's error, or one for bytes left over.
func (r *reader) done(what string) error {
	if r.err == nil && len(r.b) != 0 {
		r.err = fmt.Errorf("fmpbeam: corrupt %s: %d bytes left after decoding", what, len(r.b))
	}
	if r.err != nil {
		return fmt.Errorf("%s: %w", what, r.err)
	}
	return nil
}
