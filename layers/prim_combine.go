package layers

// Combine (Σ coef·v, APPNP's mix) and Jump (jumping-knowledge
// aggregation): their implementations together,
// one per flow: countFlow (Hops), nodeFlow (gorgonia: Forward and
// ForwardBlocks) and rowFlow (plain Go: LayerwiseLogits). The Beam one is
// beamFlow's, in package fmp/fmpbeam (a module of its own, so that this
// one does not depend on Beam).

import (
	"fmt"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/fairmp/fairmp/internal/opkit"
)

func (f *countFlow) Combine(coef []float64, vs ...Value) (Value, error) {
	lv, err := checkCombine(coef, vs)
	return Value{cols: vs[0].cols, level: lv}, err
}

func (f *countFlow) Jump(mode JKMode, vs ...Value) (Value, error) {
	cols, lv, err := checkJump(mode, vs)
	return Value{cols: cols, level: lv}, err
}

func checkCombine(coef []float64, vs []Value) (int, error) {
	if len(vs) == 0 || len(coef) != len(vs) {
		return 0, fmt.Errorf("%w: Combine: %d coefficients for %d values, want one per value and at least one", ErrFlow, len(coef), len(vs))
	}
	lv := 0
	for i, v := range vs {
		if v.cols != vs[0].cols {
			return 0, fmt.Errorf("%w: Combine: value %d has %d columns, value 0 %d", ErrFlow, i, v.cols, vs[0].cols)
		}
		lv = max(lv, v.level)
	}
	return lv, nil
}

func checkJump(mode JKMode, vs []Value) (cols, level int, err error) {
	if len(vs) == 0 {
		return 0, 0, fmt.Errorf("%w: Jump: no values", ErrFlow)
	}
	for i, v := range vs {
		level = max(level, v.level)
		switch mode {
		case JKConcat:
			cols += v.cols
		case JKMax:
			if v.cols != vs[0].cols {
				return 0, 0, fmt.Errorf("%w: Jump max: value %d has %d columns, value 0 %d", ErrFlow, i, v.cols, vs[0].cols)
			}
			cols = v.cols
		default:
			return 0, 0, fmt.Errorf("%w: Jump: mode %q, want %q or %q", ErrFlow, mode, JKConcat, JKMax)
		}
	}
	return cols, level, nil
}

// aligned returns the nodes of vs with the rows of the deepest: the first
// rows of the others (on blocks; on the whole graph they are all n).
func (f *nodeFlow) aligned(vs []Value) (G.Nodes, error) {
	ns := make(G.Nodes, len(vs))
	rows := -1
	for i, v := range vs {
		n, err := f.node(v)
		if err != nil {
			return nil, err
		}
		ns[i] = n
		if r := n.Shape()[0]; rows < 0 || r < rows {
			rows = r
		}
	}
	for i, n := range ns {
		if n.Shape()[0] == rows {
			continue
		}
		s, err := G.Slice(n, G.S(0, rows))
		if err == nil && s.Dims() == 1 {
			s, err = G.Reshape(s, tensor.Shape{rows, n.Shape()[1]}) // Slice drops a dimension of one row
		}
		if err != nil {
			return nil, fmt.Errorf("layers: the first %d rows of %s: %w", rows, opkit.DescribeNode(n), err)
		}
		ns[i] = s
	}
	return ns, nil
}

// Combine is linComb.
func (f *nodeFlow) Combine(coef []float64, vs ...Value) (Value, error) {
	lv, err := checkCombine(coef, vs)
	if err != nil {
		return Value{}, err
	}
	ns, err := f.aligned(vs)
	if err != nil {
		return Value{}, err
	}
	y, err := linComb(coef, ns...)
	if err != nil {
		return Value{}, err
	}
	return f.val(y, vs[0].cols, lv), nil
}

// Jump is concatCols or a chain of MaxBetween.
func (f *nodeFlow) Jump(mode JKMode, vs ...Value) (Value, error) {
	cols, lv, err := checkJump(mode, vs)
	if err != nil {
		return Value{}, err
	}
	ns, err := f.aligned(vs)
	if err != nil {
		return Value{}, err
	}
	y := ns[0]
	if len(ns) > 1 {
		switch mode {
		case JKConcat:
			y, err = concatCols(ns...)
		case JKMax:
			for _, o := range ns[1:] {
				if y, err = G.MaxBetween(y, o); err != nil {
					break
				}
			}
		}
		if err != nil {
			return Value{}, fmt.Errorf("layers: Jump %s: %w", mode, err)
		}
	}
	return f.val(y, cols, lv), nil
}

// Combine computes each term (their rows are kept: APPNP's teleport term
// is used at every step), then Σ coef[i]·vs[i] as linComb does.
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
	combine(out, terms, coef)
	return valueOf(&rows[T]{data: out}, cols), nil
}

func (f *rowFlow[T]) Jump(mode JKMode, vs ...Value) (Value, error) {
	cols, _, err := checkJump(mode, vs)
	if err != nil {
		return Value{}, err
	}
	if len(vs) == 1 {
		return vs[0], nil
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
