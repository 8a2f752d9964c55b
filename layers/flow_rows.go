package layers

import (
	"fmt"

	"github.com/fairmp/fairmp/graph"
	"github.com/fairmp/fairmp/graph/features"
	"github.com/fairmp/fairmp/internal/spkern"
)

// rowFlow executes a computation over the whole graph in plain Go, in the
// model's dtype T (LayerwiseLogits). Row-wise primitives are lazy: a
// value is a function of a chunk of rows until a primitive needs all of
// its rows (a propagation, an attention, a jump, a combination), which
// then computes it once, a chunk at a time, into one n × width buffer.
type rowFlow[T float32 | float64] struct {
	adj *graph.Matrix
	n   int
	gat *spkern.GATCSR
	// means holds the meanMatrix of adj (Aggr "mean").
	means map[*graph.Matrix]*graph.Matrix
}

// rows is a rowFlow's payload.
type rows[T float32 | float64] struct {
	data  []T                           // n × cols once computed
	chunk func(lo, hi int) ([]T, error) // rows [lo, hi) as a new slice, until then
	src   bool                          // the input features (data when one slice of T)
	pre   *preDense[T]                  // a Dense without bias or activation
}

// preDense records in·W so that Propagate can take the product in the
// cheaper order, (Ã·in)·W, as the models' whole-graph passes did.
type preDense[T float32 | float64] struct {
	in *rows[T]
	w  dense[T]
}

func runRows[T float32 | float64](m BlockModel, adj *graph.Matrix, x features.Source) ([]T, int, error) {
	f := &rowFlow[T]{adj: adj, n: x.Rows()}
	in := &rows[T]{src: true}
	if d, ok := direct[T](x); ok {
		in.data = d // read in place, never written
	} else {
		in.chunk = func(lo, hi int) ([]T, error) {
			buf := make([]T, (hi-lo)*x.Cols())
			if err := readRows(x, lo, hi, buf, make([]int, 0, hi-lo)); err != nil {
				return nil, fmt.Errorf("features: %w", err)
			}
			return buf, nil
		}
	}
	out, err := m.Compute(f, Value{v: in, cols: x.Cols()})
	if err != nil {
		return nil, 0, err
	}
	r, err := f.rowsOf(out)
	if err != nil {
		return nil, 0, err
	}
	data, err := f.all(r, out.cols)
	return data, out.cols, err
}

func (f *rowFlow[T]) rowsOf(v Value) (*rows[T], error) {
	r, ok := v.v.(*rows[T])
	if !ok {
		return nil, fmt.Errorf("%w: a value of another flow (%T)", ErrFlow, v.v)
	}
	return r, nil
}

// all returns r's n × cols values, computing and keeping them the first
// time.
func (f *rowFlow[T]) all(r *rows[T], cols int) ([]T, error) {
	if r.data != nil || f.n == 0 {
		return r.data, nil
	}
	data := make([]T, f.n*cols)
	for lo := 0; lo < f.n; lo += chunkRows {
		hi := min(lo+chunkRows, f.n)
		c, err := r.chunk(lo, hi)
		if err != nil {
			return nil, err
		}
		copy(data[lo*cols:hi*cols], c)
	}
	r.data, r.chunk = data, nil
	return data, nil
}

// chunkOf returns rows [lo, hi) of r (a view of its data once computed:
// the caller must not write to it).
func (r *rows[T]) chunkOf(lo, hi, cols int) ([]T, error) {
	if r.data != nil {
		return r.data[lo*cols : hi*cols], nil
	}
	return r.chunk(lo, hi)
}

func valueOf[T float32 | float64](r *rows[T], cols int) Value { return Value{v: r, cols: cols} }
