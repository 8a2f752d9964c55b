package minibatch

import (
	"fmt"

	"gonum.org/v1/gonum/blas"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/fairmp/fairmp/graph"
	"github.com/fairmp/fairmp/internal/fastblas"
	"github.com/fairmp/fairmp/layers"
)

// chunkRows is the number of feature rows Logits reads and transforms at
// a time.
const chunkRows = 1 << 15

// Logits returns the whole graph's n × classes logits of the model
// configuration model with parameters params (Result.Params), computed
// layer by layer without sampling: exactly the full-batch model's
// evaluation output, up to floating-point summation order, without its
// expression graph.
//
// adj is the whole graph's propagation matrix (Matrix; nil for an MLP)
// and x the features, read in chunks of rows. Memory, besides adj and x:
// for GCN one n × Hidden buffer when the features are one slice of the
// model's dtype (a memory-mapped file for float32, Dense for float64),
// else two; for SGC two n × d, for APPNP and the
// MLP three n × classes; everything in the model's dtype. This is the
// inference of mini-batch training (its evaluation pass samples with
// every neighbour instead, which is exact too but reads each node's
// neighbourhood once per target) and the input of whole-graph FMP
// (fmp.Layer.Apply).
func Logits(model any, params []*tensor.Dense, adj *graph.Matrix, x Features) (*tensor.Dense, error) {
	s, err := newSpec(model)
	if err != nil {
		return nil, fmt.Errorf("minibatch: Logits: %w", err)
	}
	if x == nil {
		return nil, fmt.Errorf("minibatch: Logits: nil features")
	}
	if x.Cols() != s.in {
		return nil, fmt.Errorf("minibatch: Logits: the features have %d columns, the model takes %d", x.Cols(), s.in)
	}
	n := x.Rows()
	_, isMLP := s.cfg.(layers.MLPConfig)
	if !isMLP {
		if adj == nil {
			return nil, fmt.Errorf("minibatch: Logits: nil propagation matrix for a %T", model)
		}
		if r, c := adj.Dims(); r != n || c != n {
			return nil, fmt.Errorf("minibatch: Logits: propagation matrix is %d × %d for %d feature rows", r, c, n)
		}
	}
	// Check the parameters' number, shapes and dtype against the model.
	m, err := s.build(G.NewGraph(), s.seed(), nil)
	if err != nil {
		return nil, fmt.Errorf("minibatch: Logits: %w", err)
	}
	if err := setParams(m, params); err != nil {
		return nil, fmt.Errorf("minibatch: Logits: %w", err)
	}
	if s.dtype == tensor.Float32 {
		out, err := logits[float32](s, params, adj, x, n)
		if err != nil {
			return nil, err
		}
		return tensor.New(tensor.WithShape(n, s.classes), tensor.WithBacking(out)), nil
	}
	out, err := logits[float64](s, params, adj, x, n)
	if err != nil {
		return nil, err
	}
	return tensor.New(tensor.WithShape(n, s.classes), tensor.WithBacking(out)), nil
}

// dense is one layer's weight (in × out) and bias (nil without one).
type dense[T float32 | float64] struct {
	w, b    []T
	in, out int
}

// stack reads the parameters of `depth` linear layers from params (in
// Learnables order: W, then b when bias).
func stack[T float32 | float64](params []*tensor.Dense, depth int, bias bool) []dense[T] {
	var ls []dense[T]
	k := 0
	for l := 0; l < depth; l++ {
		w := params[k]
		k++
		d := dense[T]{w: w.Data().([]T), in: w.Shape()[0], out: w.Shape()[1]}
		if bias {
			d.b = params[k].Data().([]T)
			k++
		}
		ls = append(ls, d)
	}
	return ls
}

// apply writes y = x·W (+ b) for the rows of x (rows × in) into y.
func (d dense[T]) apply(x, y []T, rows int, bias bool) {
	var impl fastblas.Implementation
	switch xs := any(x).(type) {
	case []float32:
		impl.Sgemm(blas.NoTrans, blas.NoTrans, rows, d.out, d.in, 1, xs, d.in, any(d.w).([]float32), d.out, 0, any(y).([]float32), d.out)
	case []float64:
		impl.Dgemm(blas.NoTrans, blas.NoTrans, rows, d.out, d.in, 1, xs, d.in, any(d.w).([]float64), d.out, 0, any(y).([]float64), d.out)
	}
	if bias && d.b != nil {
		addBias(y, d.b, d.out)
	}
}

func addBias[T float32 | float64](y, b []T, o int) {
	for i := range y {
		y[i] += b[i%o]
	}
}

func activate[T float32 | float64](y []T, act layers.Activation) {
	for i, v := range y {
		y[i] = T(act.Apply(float64(v)))
	}
}

// readRows gathers feature rows [lo, hi) into buf in the element type T.
func readRows[T float32 | float64](x Features, lo, hi int, buf []T, rows []int) error {
	rows = rows[:0]
	for i := lo; i < hi; i++ {
		rows = append(rows, i)
	}
	switch b := any(buf).(type) {
	case []float32:
		return gatherInto(x, rows, b, nil)
	case []float64:
		return gatherInto(x, rows, nil, b)
	}
	return nil
}

// mlpRows runs the MLP's layers on feature rows in chunks and returns
// the n × out result.
func mlpRows[T float32 | float64](ls []dense[T], act layers.Activation, x Features, n int) ([]T, error) {
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
			return nil, fmt.Errorf("minibatch: Logits: features: %w", err)
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
				activate(y, act)
			}
			h = y
		}
	}
	return res, nil
}

func logits[T float32 | float64](s spec, params []*tensor.Dense, adj *graph.Matrix, x Features, n int) ([]T, error) {
	mul := func(out, in []T, cols int) {
		switch o := any(out).(type) {
		case []float32:
			adj.MulDense32(o, any(in).([]float32), cols)
		case []float64:
			adj.MulDense64(o, any(in).([]float64), cols)
		}
	}
	switch c := s.cfg.(type) {
	case layers.MLPConfig:
		return mlpRows(stack[T](params, c.Layers, c.Bias), c.Activation, x, n)
	case layers.APPNPConfig:
		h, err := mlpRows(stack[T](params, c.Layers, c.Bias), c.Activation, x, n)
		if err != nil {
			return nil, err
		}
		z := append([]T(nil), h...)
		az := make([]T, len(h))
		a0, a1 := T(1-c.Alpha), T(c.Alpha)
		for k := 0; k < c.K; k++ {
			mul(az, z, c.Classes)
			for i := range z {
				z[i] = T(a0*az[i]) + T(a1*h[i])
			}
		}
		return z, nil
	case layers.SGCConfig:
		d := x.Cols()
		p := make([]T, n*d)
		rows := make([]int, 0, chunkRows)
		for lo := 0; lo < n; lo += chunkRows {
			hi := min(lo+chunkRows, n)
			if err := readRows(x, lo, hi, p[lo*d:hi*d], rows); err != nil {
				return nil, fmt.Errorf("minibatch: Logits: features: %w", err)
			}
		}
		q := make([]T, n*d)
		for k := 0; k < c.K; k++ {
			mul(q, p, d)
			p, q = q, p
		}
		lin := stack[T](params, 1, c.Bias)[0]
		out := make([]T, n*c.Classes)
		lin.apply(p, out, n, true)
		return out, nil
	case layers.GCNConfig:
		ls := stack[T](params, c.Layers, c.Bias)
		h, err := gcnFirst(ls[0], adj, x, n, c.Layers == 1, c.Activation)
		if err != nil {
			return nil, err
		}
		var t []T
		for l := 1; l < len(ls); l++ {
			d := ls[l]
			if cap(t) < n*d.out {
				t = make([]T, n*d.out)
			}
			t = t[:n*d.out]
			d.apply(h, t, n, false)
			if l == len(ls)-1 || len(h) < n*d.out {
				h = make([]T, n*d.out)
			}
			h = h[:n*d.out]
			mul(h, t, d.out)
			if d.b != nil {
				addBias(h, d.b, d.out)
			}
			if l < len(ls)-1 {
				activate(h, c.Activation)
			}
		}
		return h, nil
	}
	return nil, fmt.Errorf("minibatch: Logits: unknown model %T", s.cfg)
}

// direct returns the features as one n × d slice of T when x holds them
// so (a memory-mapped float32 file for a float32 model, a Dense for a
// float64 one).
func direct[T float32 | float64](x Features) ([]T, bool) {
	var z T
	switch any(z).(type) {
	case float32:
		if d, ok := x.(interface{ Data() []float32 }); ok {
			return any(d.Data()).([]T), true
		}
	case float64:
		if d, ok := x.(*Dense); ok {
			return any(d.x).([]T), true
		}
	}
	return nil, false
}

// gcnFirst returns the first GCN layer's output over the whole graph,
// act(Ã·X·W₁ + b₁) (no activation when it is the last layer). When the
// features are one slice of T it works one block of rows at a time,
// (Ã·X)[rows]·W₁, and holds only the n × out result; otherwise it gathers
// X·W₁ in chunks and multiplies it by Ã (two n × out buffers).
func gcnFirst[T float32 | float64](d dense[T], adj *graph.Matrix, x Features, n int, last bool, act layers.Activation) ([]T, error) {
	in := x.Cols()
	h := make([]T, n*d.out)
	if xs, ok := direct[T](x); ok {
		buf := make([]T, chunkRows*in)
		for lo := 0; lo < n; lo += chunkRows {
			hi := min(lo+chunkRows, n)
			ax := buf[:(hi-lo)*in]
			switch a := any(ax).(type) {
			case []float32:
				adj.MulDenseRows32(a, any(xs).([]float32), in, lo, hi)
			case []float64:
				adj.MulDenseRows64(a, any(xs).([]float64), in, lo, hi)
			}
			y := h[lo*d.out : hi*d.out]
			d.apply(ax, y, hi-lo, true)
			if !last {
				activate(y, act)
			}
		}
		return h, nil
	}
	t := make([]T, n*d.out)
	buf := make([]T, chunkRows*in)
	rows := make([]int, 0, chunkRows)
	for lo := 0; lo < n; lo += chunkRows {
		hi := min(lo+chunkRows, n)
		if err := readRows(x, lo, hi, buf[:(hi-lo)*in], rows); err != nil {
			return nil, fmt.Errorf("minibatch: Logits: features: %w", err)
		}
		d.apply(buf[:(hi-lo)*in], t[lo*d.out:hi*d.out], hi-lo, false)
	}
	switch o := any(h).(type) {
	case []float32:
		adj.MulDense32(o, any(t).([]float32), d.out)
	case []float64:
		adj.MulDense64(o, any(t).([]float64), d.out)
	}
	if d.b != nil {
		addBias(h, d.b, d.out)
	}
	if !last {
		activate(h, act)
	}
	return h, nil
}
