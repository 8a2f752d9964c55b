package layers

import (
	"gonum.org/v1/gonum/blas"

	"github.com/fairmp/fairmp/graph"
	"github.com/fairmp/fairmp/graph/features"
	"github.com/fairmp/fairmp/internal/fastblas"
)

// This file holds the plain-Go arithmetic of whole-graph, layer-by-layer
// inference (LayerwiseLogits, flow_rows.go): dense layers applied to
// chunks of rows and sparse products over the whole graph, in the
// model's dtype, without an expression graph.

// chunkRows is the number of feature rows read and transformed at a time.
const chunkRows = 1 << 15

// dense is one linear layer's weight (in × out) and bias (nil without
// one), read from its parameter nodes' values.
type dense[T float32 | float64] struct {
	w, b    []T
	in, out int
}

// apply writes y = x·W (+ b when bias) for the rows of x (rows × in) into y.
func (d dense[T]) apply(x, y []T, rows int, bias bool) {
	var impl fastblas.Implementation
	switch xs := any(x).(type) {
	case []float32:
		impl.Sgemm(blas.NoTrans, blas.NoTrans, rows, d.out, d.in, 1, xs, d.in, any(d.w).([]float32), d.out, 0, any(y).([]float32), d.out)
	case []float64:
		impl.Dgemm(blas.NoTrans, blas.NoTrans, rows, d.out, d.in, 1, xs, d.in, any(d.w).([]float64), d.out, 0, any(y).([]float64), d.out)
	}
	if bias && d.b != nil {
		addRows(y, d.b, d.out)
	}
}

// addRows adds b to every row of y (rows of width o).
func addRows[T float32 | float64](y, b []T, o int) {
	for i := range y {
		y[i] += b[i%o]
	}
}

func activateRows[T float32 | float64](y []T, act Activation) {
	for i, v := range y {
		y[i] = T(act.Apply(float64(v)))
	}
}

// readRows gathers feature rows [lo, hi) into buf.
func readRows[T float32 | float64](x features.Source, lo, hi int, buf []T, rows []int) error {
	rows = rows[:0]
	for i := lo; i < hi; i++ {
		rows = append(rows, i)
	}
	return features.Gather(x, rows, buf)
}

// mul writes adj·in (n × cols) into out.
func mul[T float32 | float64](adj *graph.Matrix, out, in []T, cols int) {
	switch o := any(out).(type) {
	case []float32:
		adj.MulDense32(o, any(in).([]float32), cols)
	case []float64:
		adj.MulDense64(o, any(in).([]float64), cols)
	}
}

// direct returns the features as one n × d slice of T when x holds them
// so (a memory-mapped float32 file for a float32 model, a Dense for a
// float64 one).
func direct[T float32 | float64](x features.Source) ([]T, bool) {
	var z T
	switch any(z).(type) {
	case float32:
		if d, ok := x.(interface{ Data() []float32 }); ok {
			return any(d.Data()).([]T), true
		}
	case float64:
		if d, ok := x.(interface{ Data() []float64 }); ok {
			return any(d.Data()).([]T), true
		}
	}
	return nil, false
}
