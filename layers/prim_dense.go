package layers

// Dense, act(h·W + b): its implementations together,
// one per flow: countFlow (Hops), nodeFlow (gorgonia: Forward and
// ForwardBlocks) and rowFlow (plain Go: LayerwiseLogits). The Beam one is
// beamFlow's, in package fmp/fmpbeam (a module of its own, so that this
// one does not depend on Beam).

import (
	"fmt"

	G "gorgonia.org/gorgonia"
)

func (f *countFlow) Dense(h Value, w, b *G.Node, _ Activation) (Value, error) {
	if err := checkParam("Dense", h, w, b); err != nil {
		return Value{}, err
	}
	return f.at(h, w.Shape()[1], h.level), nil
}

// checkParam checks a Dense primitive's parameters against its input.
func checkParam(where string, h Value, w, b *G.Node) error {
	if w == nil || w.Dims() != 2 {
		return fmt.Errorf("%w: %s: the weight is %s, want an in × out matrix", ErrFlow, where, describe(w))
	}
	if w.Shape()[0] != h.cols {
		return fmt.Errorf("%w: %s: weight %q is %v for an input of %d columns", ErrFlow, where, w.Name(), w.Shape(), h.cols)
	}
	if b != nil {
		if s := b.Shape(); b.Dims() != 2 || s[0] != 1 || s[1] != w.Shape()[1] || b.Dtype() != w.Dtype() {
			return fmt.Errorf("%w: %s: bias %q is %v %v, want 1 × %d %v", ErrFlow, where, b.Name(), s, b.Dtype(), w.Shape()[1], w.Dtype())
		}
	}
	return nil
}

func describe(n *G.Node) string {
	if n == nil {
		return "nil"
	}
	return fmt.Sprintf("%q of shape %v", n.Name(), n.Shape())
}

// Dense is denseAct: the product, the bias and a ReLU in one op, another
// activation after it.
func (f *nodeFlow) Dense(h Value, w, b *G.Node, act Activation) (Value, error) {
	if err := checkParam("Dense", h, w, b); err != nil {
		return Value{}, err
	}
	x, err := f.node(h)
	if err != nil {
		return Value{}, err
	}
	if err := checkInput(x, w, "Dense "+w.Name()); err != nil {
		return Value{}, err
	}
	relu := act == ReLU()
	y, err := denseAct(x, w, b, relu)
	if err != nil {
		return Value{}, fmt.Errorf("layers: %s: %w", w.Name(), err)
	}
	if !relu && act != (Activation{}) {
		if y, err = Activate(y, act); err != nil {
			return Value{}, err
		}
	}
	return f.val(y, w.Shape()[1], h.level), nil
}

// denseOfNodes returns a Dense primitive's weight and bias values.
func denseOfNodes[T float32 | float64](w, b *G.Node) (dense[T], error) {
	wv, ok := w.Value().Data().([]T)
	if !ok {
		return dense[T]{}, fmt.Errorf("%w: weight %q is %v, the flow runs in another dtype", ErrFlow, w.Name(), w.Dtype())
	}
	d := dense[T]{w: wv, in: w.Shape()[0], out: w.Shape()[1]}
	if b != nil {
		var err error
		if d.b, err = denseBias[T](b); err != nil {
			return dense[T]{}, err
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
