package layers

// Propagate, one hop act(Ã·h + b) with edge dropout: its implementations together,
// one per flow: countFlow (Hops), nodeFlow (gorgonia: Forward and
// ForwardBlocks) and rowFlow (plain Go: LayerwiseLogits). The Beam one is
// beamFlow's, in package fmp/fmpbeam (a module of its own, so that this
// one does not depend on Beam).

import (
	"fmt"

	G "gorgonia.org/gorgonia"
)

func (f *countFlow) Propagate(h Value, p Hop) (Value, error) {
	if err := checkHop(h, p); err != nil {
		return Value{}, err
	}
	return f.at(h, h.cols, h.level+1), nil
}

func checkHop(h Value, p Hop) error {
	switch p.Aggr {
	case aggrSum, "sum", aggrMean, aggrMax:
	default:
		return fmt.Errorf("%w: Propagate: Aggr = %q, want \"sum\" (or \"\"), %q or %q", ErrFlow, p.Aggr, aggrMean, aggrMax)
	}
	if p.EdgeDropout > 0 && p.Aggr != aggrSum && p.Aggr != "sum" {
		return fmt.Errorf("%w: Propagate: EdgeDropout with Aggr = %q: edge dropout applies to the weighted sum only", ErrFlow, p.Aggr)
	}
	if !(p.EdgeDropout >= 0 && p.EdgeDropout < 1) {
		return fmt.Errorf("%w: Propagate: EdgeDropout = %v, want 0 <= p < 1", ErrFlow, p.EdgeDropout)
	}
	if p.EdgeDropout > 0 && (p.Bias != nil || p.Act != (Activation{})) {
		return fmt.Errorf("%w: Propagate: EdgeDropout with a bias or an activation: apply them after the hop", ErrFlow)
	}
	if p.Act != (Activation{}) {
		if err := p.Act.Validate(); err != nil {
			return fmt.Errorf("%w: Propagate: %v", ErrFlow, err)
		}
	}
	if b := p.Bias; b != nil {
		if s := b.Shape(); b.Dims() != 2 || s[0] != 1 || s[1] != h.cols {
			return fmt.Errorf("%w: Propagate: bias %q is %v, want 1 × %d", ErrFlow, b.Name(), s, h.cols)
		}
	}
	return nil
}

// Propagate is SpMM (EdgeDropoutSpMM with edge dropout), with the bias
// and a ReLU fused into the product (spmmBiasAct); the mean is SpMM with
// the matrix's meanMatrix, the maximum maxAgg then the bias and the
// activation.
func (f *nodeFlow) Propagate(h Value, p Hop) (Value, error) {
	if err := checkHop(h, p); err != nil {
		return Value{}, err
	}
	a, err := f.matrix(h.level)
	if err != nil {
		return Value{}, err
	}
	if a, err = aggMatrix(&f.means, a, p.Aggr); err != nil {
		return Value{}, err
	}
	if nv := h.v.(nodeVal); nv.konst != nil && p.EdgeDropout == 0 && p.Bias == nil && p.Act == (Activation{}) {
		d, err := propagateConst(a, nv.konst, p.Aggr)
		if err != nil {
			return Value{}, fmt.Errorf("layers: Propagate: %w", err)
		}
		return Value{v: nodeVal{konst: d}, cols: h.cols, level: h.level + 1}, nil
	}
	x, err := f.node(h)
	if err != nil {
		return Value{}, err
	}
	var y *G.Node
	if p.Aggr == aggrMax {
		y, err = maxAgg(a, x)
		if err == nil && p.Bias != nil {
			y, err = addRowBias(y, p.Bias)
		}
		if err == nil && p.Act != (Activation{}) {
			y, err = Activate(y, p.Act)
		}
	} else if p.EdgeDropout > 0 {
		y, err = EdgeDropoutSpMM(a, x, p.EdgeDropout, p.Seed, f.phase)
	} else {
		relu := p.Act == ReLU()
		y, err = spmmBiasAct(a, x, p.Bias, relu)
		if err == nil && !relu && p.Act != (Activation{}) {
			y, err = Activate(y, p.Act)
		}
	}
	if err != nil {
		return Value{}, err
	}
	return f.val(y, h.cols, h.level+1), nil
}

// Propagate multiplies by the whole graph's matrix (its meanMatrix for
// the mean). Of a Dense without bias or activation on the input features
// held as one slice, it takes (Ã·X)·W a chunk of rows at a time (one
// n × out buffer); otherwise Ã·(h·W). The maximum is maxRows.
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
	adj, err := aggMatrix(&f.means, f.adj, p.Aggr)
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
	if p.Aggr == aggrMax {
		t, err := f.all(in, cols)
		if err != nil {
			return Value{}, err
		}
		maxRows(adj, out, t, cols)
		f.finish(out, bias, cols, p.Act)
		return valueOf(&rows[T]{data: out}, cols), nil
	}
	if pd := in.pre; pd != nil && pd.in.src && pd.in.data != nil && in.data == nil {
		xs, d, k := pd.in.data, pd.w, pd.w.in
		buf := make([]T, chunkRows*k)
		for lo := 0; lo < f.n; lo += chunkRows {
			hi := min(lo+chunkRows, f.n)
			ax := buf[:(hi-lo)*k]
			switch a := any(ax).(type) {
			case []float32:
				adj.MulDenseRows32(a, any(xs).([]float32), k, lo, hi)
			case []float64:
				adj.MulDenseRows64(a, any(xs).([]float64), k, lo, hi)
			}
			y := out[lo*cols : hi*cols]
			d.apply(ax, y, hi-lo, false)
			f.finish(y, bias, cols, p.Act)
		}
		return valueOf(&rows[T]{data: out}, cols), nil
	}
	t, err := f.all(in, cols)
	if err != nil {
		return Value{}, err
	}
	mul(adj, out, t, cols)
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
