package layers

import (
	"fmt"

	"gonum.org/v1/gonum/blas"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/fairmp/fairmp/graph"
	"github.com/fairmp/fairmp/graph/features"
	"github.com/fairmp/fairmp/internal/fastblas"
)

// This file holds the plain-Go pieces of whole-graph, layer-by-layer
// inference (BlockModel.LayerwiseLogits): dense layers applied to chunks
// of feature rows and sparse products over the whole graph, in the
// model's dtype, without an expression graph. Each model's
// LayerwiseLogits, in its own file, composes them.

// chunkRows is the number of feature rows read and transformed at a time.
const chunkRows = 1 << 15

// dense is one linear layer's weight (in × out) and bias (nil without
// one), read from its parameter nodes' values.
type dense[T float32 | float64] struct {
	w, b    []T
	in, out int
}

// denseOf returns the current values of linear layers.
func denseOf[T float32 | float64](ls []*Linear) []dense[T] {
	out := make([]dense[T], len(ls))
	for i, l := range ls {
		w := l.W.Value().Data().([]T)
		out[i] = dense[T]{w: w, in: l.W.Shape()[0], out: l.W.Shape()[1]}
		if l.B != nil {
			out[i].b = l.B.Value().Data().([]T)
		}
	}
	return out
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

// mlpRows runs linear layers with act between them on the feature rows,
// a chunk at a time, and returns the n × out result.
func mlpRows[T float32 | float64](ls []dense[T], act Activation, x features.Source, n int) ([]T, error) {
	out := ls[len(ls)-1].out
	res := make([]T, n*out)
	in := x.Cols()
	buf := make([]T, chunkRows*in)
	rows := make([]int, 0, chunkRows)
	var tmp [2][]T
	for lo := 0; lo < n; lo += chunkRows {
		hi := min(lo+chunkRows, n)
		m := hi - lo
		if err := readRows(x, lo, hi, buf[:m*in], rows); err != nil {
			return nil, fmt.Errorf("features: %w", err)
		}
		h := buf[:m*in]
		for l, d := range ls {
			var y []T
			if l == len(ls)-1 {
				y = res[lo*out : hi*out]
			} else {
				if len(tmp[l%2]) < m*d.out {
					tmp[l%2] = make([]T, chunkRows*d.out)
				}
				y = tmp[l%2][:m*d.out]
			}
			d.apply(h, y, m, true)
			if l < len(ls)-1 {
				activateRows(y, act)
			}
			h = y
		}
	}
	return res, nil
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

// layerwise is the common part of the models' LayerwiseLogits: it checks
// the features, the propagation matrix (for a model with hops) and the
// parameters' values (params, of the dtype in b), then runs f32 or f64,
// by b's dtype, on the n feature rows and wraps the n × Classes result.
func layerwise(where string, b Base, hops int, params G.Nodes, adj *graph.Matrix, x features.Source,
	f32 func(n int) ([]float32, error), f64 func(n int) ([]float64, error)) (*tensor.Dense, error) {
	if x == nil {
		return nil, fmt.Errorf("layers: %s: LayerwiseLogits: nil features", where)
	}
	if x.Cols() != b.In {
		return nil, fmt.Errorf("layers: %s: LayerwiseLogits: the features have %d columns, the model takes %d", where, x.Cols(), b.In)
	}
	n := x.Rows()
	if hops > 0 {
		if adj == nil {
			return nil, fmt.Errorf("layers: %s: LayerwiseLogits: nil propagation matrix", where)
		}
		if r, c := adj.Dims(); r != n || c != n {
			return nil, fmt.Errorf("layers: %s: LayerwiseLogits: propagation matrix is %d × %d for %d feature rows", where, r, c, n)
		}
	}
	for _, p := range params {
		v, ok := p.Value().(*tensor.Dense)
		if !ok || v.Dtype() != b.Dtype {
			return nil, fmt.Errorf("layers: %s: parameter %q has no dense %v value", where, p.Name(), b.Dtype)
		}
	}
	var out any
	var err error
	if b.Dtype == tensor.Float32 {
		out, err = f32(n)
	} else {
		out, err = f64(n)
	}
	if err != nil {
		return nil, fmt.Errorf("layers: %s: LayerwiseLogits: %w", where, err)
	}
	return tensor.New(tensor.WithShape(n, b.Classes), tensor.WithBacking(out)), nil
}
