package layers

import (
	"fmt"

	G "gorgonia.org/gorgonia"

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
	x   features.Source
	n   int
	gat *spkern.GATCSR
}

// rows is a rowFlow's payload.
type rows[T float32 | float64] struct {
	data  []T                           // n × cols once computed
	chunk func(lo, hi int) ([]T, error) // rows [lo, hi) as a new slice, until then
	src   bool                          // the input features
	pre   *preDense[T]                  // a Dense without bias or activation
}

// preDense records in·W so that Propagate can take the product in the
// cheaper order, (Ã·in)·W, as the models' whole-graph passes did.
type preDense[T float32 | float64] struct {
	in *rows[T]
	w  dense[T]
}

func runRows[T float32 | float64](m BlockModel, adj *graph.Matrix, x features.Source) ([]T, int, error) {
	f := &rowFlow[T]{adj: adj, x: x, n: x.Rows()}
	in := &rows[T]{src: true, chunk: func(lo, hi int) ([]T, error) {
		buf := make([]T, (hi-lo)*x.Cols())
		if err := readRows(x, lo, hi, buf, make([]int, 0, hi-lo)); err != nil {
			return nil, fmt.Errorf("features: %w", err)
		}
		return buf, nil
	}}
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
	if r.src {
		if d, ok := direct[T](f.x); ok {
			return d, nil
		}
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

// denseOfNodes returns a Dense primitive's weight and bias values.
func denseOfNodes[T float32 | float64](w, b *G.Node) (dense[T], error) {
	wv, ok := w.Value().Data().([]T)
	if !ok {
		return dense[T]{}, fmt.Errorf("%w: weight %q is %v, the flow runs in another dtype", ErrFlow, w.Name(), w.Dtype())
	}
	d := dense[T]{w: wv, in: w.Shape()[0], out: w.Shape()[1]}
	if b != nil {
		if d.b, ok = b.Value().Data().([]T); !ok {
			return dense[T]{}, fmt.Errorf("%w: bias %q is %v, the flow runs in another dtype", ErrFlow, b.Name(), b.Dtype())
		}
	}
	return d, nil
}

func (f *rowFlow[T]) Dense(h Value, w, b *G.Node, act Activation) (Value, error) {
	if err := checkParam("Dense", h, w, b); err != nil {
		return Value{}, err
	}
	in, err := f.rowsOf(h)
	if err != nil {
		return Value{}, err
	}
	d, err := denseOfNodes[T](w, b)
	if err != nil {
		return Value{}, err
	}
	none := act == (Activation{})
	out := &rows[T]{chunk: func(lo, hi int) ([]T, error) {
		x, err := in.chunkOf(lo, hi, d.in)
		if err != nil {
			return nil, err
		}
		y := make([]T, (hi-lo)*d.out)
		d.apply(x, y, hi-lo, true)
		if !none {
			activateRows(y, act)
		}
		return y, nil
	}}
	if b == nil && none {
		out.pre = &preDense[T]{in: in, w: d}
	}
	return valueOf(out, d.out), nil
}

// Propagate multiplies by the whole graph's matrix. Of a Dense without
// bias or activation on the input features held as one slice, it takes
// (Ã·X)·W a chunk of rows at a time (one n × out buffer); otherwise
// Ã·(h·W).
func (f *rowFlow[T]) Propagate(h Value, p Hop) (Value, error) {
	if err := checkHop(h, p); err != nil {
		return Value{}, err
	}
	if err := f.checkAdj("propagates"); err != nil {
		return Value{}, err
	}
	in, err := f.rowsOf(h)
	if err != nil {
		return Value{}, err
	}
	var bias []T
	if p.Bias != nil {
		if bias, err = denseBias[T](p.Bias); err != nil {
			return Value{}, err
		}
	}
	cols := h.cols
	out := make([]T, f.n*cols)
	if pd := in.pre; pd != nil && pd.in.src && in.data == nil {
		if xs, ok := direct[T](f.x); ok {
			d, k := pd.w, pd.w.in
			buf := make([]T, chunkRows*k)
			for lo := 0; lo < f.n; lo += chunkRows {
				hi := min(lo+chunkRows, f.n)
				ax := buf[:(hi-lo)*k]
				switch a := any(ax).(type) {
				case []float32:
					f.adj.MulDenseRows32(a, any(xs).([]float32), k, lo, hi)
				case []float64:
					f.adj.MulDenseRows64(a, any(xs).([]float64), k, lo, hi)
				}
				y := out[lo*cols : hi*cols]
				d.apply(ax, y, hi-lo, false)
				f.finish(y, bias, cols, p.Act)
			}
			return valueOf(&rows[T]{data: out}, cols), nil
		}
	}
	t, err := f.all(in, cols)
	if err != nil {
		return Value{}, err
	}
	mul(f.adj, out, t, cols)
	f.finish(out, bias, cols, p.Act)
	return valueOf(&rows[T]{data: out}, cols), nil
}

// checkAdj checks the whole graph's matrix for a model that does what.
func (f *rowFlow[T]) checkAdj(what string) error {
	if f.adj == nil {
		return fmt.Errorf("%w: the model %s: give its propagation matrix", ErrFlow, what)
	}
	if r, c := f.adj.Dims(); r != f.n || c != f.n {
		return fmt.Errorf("%w: the propagation matrix is %d × %d for %d feature rows", ErrFlow, r, c, f.n)
	}
	return nil
}

func (f *rowFlow[T]) finish(y, bias []T, cols int, act Activation) {
	if bias != nil {
		addRows(y, bias, cols)
	}
	if act != (Activation{}) {
		activateRows(y, act)
	}
}

func denseBias[T float32 | float64](b *G.Node) ([]T, error) {
	v, ok := b.Value().Data().([]T)
	if !ok {
		return nil, fmt.Errorf("%w: bias %q is %v, the flow runs in another dtype", ErrFlow, b.Name(), b.Dtype())
	}
	return v, nil
}

func (f *rowFlow[T]) Activate(h Value, act Activation) (Value, error) {
	if act == (Activation{}) {
		return h, nil
	}
	if err := act.Validate(); err != nil {
		return Value{}, fmt.Errorf("%w: Activate: %v", ErrFlow, err)
	}
	in, err := f.rowsOf(h)
	if err != nil {
		return Value{}, err
	}
	cols := h.cols
	return valueOf(&rows[T]{chunk: func(lo, hi int) ([]T, error) {
		x, err := in.chunkOf(lo, hi, cols)
		if err != nil {
			return nil, err
		}
		y := make([]T, len(x))
		copy(y, x)
		activateRows(y, act)
		return y, nil
	}}, cols), nil
}

// Dropout is the identity: the flow evaluates.
func (f *rowFlow[T]) Dropout(h Value, _ float64, _ int64) (Value, error) { return h, nil }

// Combine computes each term (their rows are kept: APPNP's teleport term
// is used at every step), then Σ coef[i]·vs[i], each product rounded to T.
func (f *rowFlow[T]) Combine(coef []float64, vs ...Value) (Value, error) {
	if _, err := checkCombine(coef, vs); err != nil {
		return Value{}, err
	}
	cols := vs[0].cols
	terms := make([][]T, len(vs))
	for i, v := range vs {
		r, err := f.rowsOf(v)
		if err != nil {
			return Value{}, err
		}
		if terms[i], err = f.all(r, cols); err != nil {
			return Value{}, err
		}
	}
	out := make([]T, f.n*cols)
	for i, x := range terms {
		c := T(coef[i])
		if i == 0 {
			for k, v := range x {
				out[k] = T(c * v)
			}
			continue
		}
		for k, v := range x {
			out[k] = out[k] + T(c*v)
		}
	}
	return valueOf(&rows[T]{data: out}, cols), nil
}

func (f *rowFlow[T]) Jump(mode JKMode, vs ...Value) (Value, error) {
	cols, _, err := checkJump(mode, vs)
	if err != nil {
		return Value{}, err
	}
	hs := make([][]T, len(vs))
	for i, v := range vs {
		r, err := f.rowsOf(v)
		if err != nil {
			return Value{}, err
		}
		if hs[i], err = f.all(r, v.cols); err != nil {
			return Value{}, err
		}
	}
	if len(hs) == 1 {
		return vs[0], nil
	}
	var out []T
	switch mode {
	case JKConcat:
		out = make([]T, f.n*cols)
		at := 0
		for l, h := range hs {
			w := vs[l].cols
			for i := 0; i < f.n; i++ {
				copy(out[i*cols+at:], h[i*w:(i+1)*w])
			}
			at += w
		}
	case JKMax:
		out = append([]T(nil), hs[0]...)
		for _, h := range hs[1:] {
			for k, v := range h {
				out[k] = max(out[k], v)
			}
		}
	}
	return valueOf(&rows[T]{data: out}, cols), nil
}

// Attend computes h·W, then the attention and aggregation over the
// pattern of the whole graph's matrix (gatLayerRows).
func (f *rowFlow[T]) Attend(h Value, l *GATConv) (Value, error) {
	if err := checkAttend(h, l); err != nil {
		return Value{}, err
	}
	if err := f.checkAdj("attends over edges"); err != nil {
		return Value{}, err
	}
	in, err := f.rowsOf(h)
	if err != nil {
		return Value{}, err
	}
	d, err := denseOfNodes[T](l.w, nil)
	if err != nil {
		return Value{}, err
	}
	hw := make([]T, f.n*d.out)
	for lo := 0; lo < f.n; lo += chunkRows {
		hi := min(lo+chunkRows, f.n)
		x, err := in.chunkOf(lo, hi, d.in)
		if err != nil {
			return Value{}, err
		}
		d.apply(x, hw[lo*d.out:hi*d.out], hi-lo, false)
	}
	if f.gat == nil {
		f.gat = spkern.NewGATBlock(f.n, f.n, f.adj.Indptr(), f.adj.Indices())
	}
	return valueOf(&rows[T]{data: gatLayerRows(f.gat, l, hw)}, l.cfg.outWidth()), nil
}
