package layers

// Activate and Dropout, element-wise: their implementations together,
// one per flow: countFlow (Hops), nodeFlow (gorgonia: Forward and
// ForwardBlocks) and rowFlow (plain Go: LayerwiseLogits). The Beam one is
// beamFlow's, in package fmp/fmpbeam (a module of its own, so that this
// one does not depend on Beam).

import (
	"fmt"
)

func (f *countFlow) Activate(h Value, _ Activation) (Value, error) { return h, nil }

func (f *countFlow) Dropout(h Value, _ float64, _ int64) (Value, error) { return h, nil }

func (f *nodeFlow) Activate(h Value, act Activation) (Value, error) {
	if act == (Activation{}) {
		return h, nil
	}
	x, err := f.node(h)
	if err != nil {
		return Value{}, err
	}
	y, err := Activate(x, act)
	if err != nil {
		return Value{}, err
	}
	return f.val(y, h.cols, h.level), nil
}

func (f *nodeFlow) Dropout(h Value, rate float64, seed int64) (Value, error) {
	if rate == 0 {
		return h, nil
	}
	x, err := f.node(h)
	if err != nil {
		return Value{}, err
	}
	y, err := Dropout(x, rate, seed, f.phase)
	if err != nil {
		return Value{}, err
	}
	return f.val(y, h.cols, h.level), nil
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
