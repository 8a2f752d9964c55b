package minibatch

import (
	"fmt"
	"math"
)

// Features gives rows of an n × d feature matrix. graph/features' Matrix
// (a memory-mapped float32 file) implements it, and Dense wraps an
// in-memory matrix such as a datasets.Dataset's Features.
type Features interface {
	// Rows and Cols return n and d.
	Rows() int
	Cols() int
	// Gather copies the given rows, in order, into dst (len(rows)·d
	// values). It returns an error for a row out of range.
	Gather(dst []float32, rows []int) error
}

// gather64 is implemented by Features that hold float64 values, which
// float64 models then read without rounding to float32.
type gather64 interface {
	Gather64(dst []float64, rows []int) error
}

// Dense is an in-memory n × d row-major float64 feature matrix.
type Dense struct {
	x    []float64
	n, d int
}

// NewDense wraps x (n × d, row-major; not copied). It returns an error if
// the sizes do not match or a value is not finite.
func NewDense(x []float64, n, d int) (*Dense, error) {
	if n < 1 || d < 1 || len(x) != n*d {
		return nil, fmt.Errorf("minibatch: NewDense: %d values for %d × %d, want n, d ≥ 1 and n·d values", len(x), n, d)
	}
	for i, v := range x {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("minibatch: NewDense: row %d, column %d is %v, want a finite value", i/d, i%d, v)
		}
	}
	return &Dense{x: x, n: n, d: d}, nil
}

// Rows returns n.
func (m *Dense) Rows() int { return m.n }

// Cols returns d.
func (m *Dense) Cols() int { return m.d }

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
		return fmt.Errorf("minibatch: Dense.Gather: %d values for %d rows of %d, want %d", ldst, len(rows), m.d, len(rows)*m.d)
	}
	for k, r := range rows {
		if r < 0 || r >= m.n {
			return fmt.Errorf("minibatch: Dense.Gather: row %d (position %d) out of range [0, %d)", r, k, m.n)
		}
	}
	return nil
}

// gatherInto fills a float32 or float64 buffer with rows of x.
func gatherInto(x Features, rows []int, f32 []float32, f64 []float64) error {
	if f64 != nil {
		if g, ok := x.(gather64); ok {
			return g.Gather64(f64, rows)
		}
		tmp := make([]float32, len(f64))
		if err := x.Gather(tmp, rows); err != nil {
			return err
		}
		for i, v := range tmp {
			f64[i] = float64(v)
		}
		return nil
	}
	return x.Gather(f32, rows)
}
