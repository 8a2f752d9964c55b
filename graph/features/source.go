package features

import (
	"fmt"
	"math"
)

// Source gives rows of an n × d feature matrix, wherever it lives: Matrix
// (a checked, memory-mapped float32 file) and Dense (an in-memory float64
// matrix, such as a datasets.Dataset's Features) implement it. Mini-batch
// training (layers/minibatch) and whole-graph inference
// (layers.BlockModel) read features through it.
type Source interface {
	// Rows and Cols return n and d.
	Rows() int
	Cols() int
	// Gather copies the given rows, in order, into dst (len(rows)·d
	// values). It returns an error for a row out of range or a dst too
	// short.
	Gather(dst []float32, rows []int) error
}

// gather64 is implemented by sources that hold float64 values, which
// float64 models then read without rounding to float32.
type gather64 interface {
	Gather64(dst []float64, rows []int) error
}

// Gather copies the given rows of src, in order, into dst, as float32 or
// float64: a float64 source (Dense) gives float64 rows without rounding
// them to float32.
func Gather[T float32 | float64](src Source, rows []int, dst []T) error {
	switch d := any(dst).(type) {
	case []float32:
		return src.Gather(d, rows)
	case []float64:
		if g, ok := src.(gather64); ok {
			return g.Gather64(d, rows)
		}
		tmp := make([]float32, len(d))
		if err := src.Gather(tmp, rows); err != nil {
			return err
		}
		for i, v := range tmp {
			d[i] = float64(v)
		}
	}
	return nil
}

// Dense is an in-memory n × d row-major float64 feature matrix.
type Dense struct {
	x    []float64
	n, d int
}

var (
	_ Source = (*Dense)(nil)
	_ Source = (*Matrix)(nil)
)

// NewDense wraps x (n × d, row-major; not copied). It returns an error if
// the sizes do not match or a value is not finite.
func NewDense(x []float64, n, d int) (*Dense, error) {
	if n < 1 || d < 1 || len(x) != n*d {
		return nil, fmt.Errorf("features: NewDense: %d values for %d × %d, want n, d ≥ 1 and n·d values", len(x), n, d)
	}
	for i, v := range x {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("features: NewDense: row %d, column %d is %v, want a finite value", i/d, i%d, v)
		}
	}
	return &Dense{x: x, n: n, d: d}, nil
}

// Rows returns n.
func (m *Dense) Rows() int { return m.n }

// Cols returns d.
func (m *Dense) Cols() int { return m.d }

// Data returns the matrix's n·d values (not a copy: do not modify them).
func (m *Dense) Data() []float64 { return m.x }

// Gather copies rows into dst, rounded to float32.
func (m *Dense) Gather(dst []float32, rows []int) error {
	if err := m.check(len(dst), rows); err != nil {
		return err
	}
	for k, r := range rows {
		src := m.x[r*m.d : (r+1)*m.d]
		out := dst[k*m.d : (k+1)*m.d]
		for j, v := range src {
			out[j] = float32(v)
		}
	}
	return nil
}

// Gather64 copies rows into dst.
func (m *Dense) Gather64(dst []float64, rows []int) error {
	if err := m.check(len(dst), rows); err != nil {
		return err
	}
	for k, r := range rows {
		copy(dst[k*m.d:(k+1)*m.d], m.x[r*m.d:(r+1)*m.d])
	}
	return nil
}

func (m *Dense) check(ldst int, rows []int) error {
	if ldst < len(rows)*m.d {
		return fmt.Errorf("features: Dense.Gather: %d values for %d rows of %d, want %d", ldst, len(rows), m.d, len(rows)*m.d)
	}
	for k, r := range rows {
		if r < 0 || r >= m.n {
			return fmt.Errorf("features: Dense.Gather: row %d (position %d) out of range [0, %d)", r, k, m.n)
		}
	}
	return nil
}
