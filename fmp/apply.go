package fmp

import (
	"fmt"

	"gorgonia.org/tensor"

	"github.com/fairmp/fairmp/internal/opkit"
)

// Apply runs the layer's K steps on x (n × c logits, float32 or float64,
// c ≥ 2) outside gorgonia and returns F^K: the evaluation pass of Forward
// (the same loop, the same sparse product, bit for bit), without an
// expression graph.
//
// It is the whole-graph FMP of mini-batch training: a backbone trained in
// batches (package layers/minibatch) gives its n × c logits, and Apply
// debiases them over the whole graph with K sparse products on c columns.
// Its memory besides x and the adjacency is two n × c buffers of x's
// type and, for λf > 0, two of float64 (the softmaxes), whatever K is,
// where an unrolled graph keeps every step's intermediates; on a graph of
// 10 million nodes with c = 2 in float32 that is 480 MB.
//
// x is not modified. Apply returns an error if x is not a dense float
// matrix with n rows and at least 2 columns.
func (l *Layer) Apply(x *tensor.Dense) (*tensor.Dense, error) {
	out, _, err := l.apply(x, "Apply")
	return out, err
}

// apply runs the layer's loop on x with the ascent policy and returns
// F^K and the dual after each step (float64; nil when every dual is zero).
func (l *Layer) apply(x *tensor.Dense, fn string) (*tensor.Dense, [][]float64, error) {
	if err := l.checkApply(x, fn); err != nil {
		return nil, nil, err
	}
	n, c := x.Shape()[0], x.Shape()[1]
	out := tensor.New(tensor.WithShape(n, c), tensor.Of(x.Dtype()))
	var duals [][]float64
	switch xs := x.Data().(type) {
	case []float64:
		duals = applyLoop(loopFor(l), xs, out.Data().([]float64), c)
	case []float32:
		duals = applyLoop(loopFor(l), xs, out.Data().([]float32), c)
	}
	return out, duals, nil
}

// applyLoop runs p on x into out with a workspace that does not grow with
// K and returns the dual after each step, nil when every dual is zero.
func applyLoop[T float32 | float64](p *loop, x, out []T, c int) [][]float64 {
	var s fusedState[T]
	nsf := 1
	if p.zero {
		nsf = 0 // no softmax is taken
	}
	s.reset(len(x)/c, c, p.k, p.rows, nsf)
	runSteps(p, &s, x, out, c, false, nil)
	var duals [][]float64
	zero := true
	for k := 1; k <= p.k; k++ {
		zero = zero && s.uZero[k]
		d := make([]float64, len(s.u[k]))
		for i, v := range s.u[k] {
			d[i] = float64(v)
		}
		duals = append(duals, d)
	}
	if zero {
		return nil
	}
	return duals
}

// checkApply checks Apply's and Record's input.
func (l *Layer) checkApply(x *tensor.Dense, fn string) error {
	if x == nil {
		return fmt.Errorf("fmp: Layer.%s: nil input", fn)
	}
	if err := opkit.CheckFloat(x.Dtype()); err != nil {
		return fmt.Errorf("fmp: Layer.%s: %w", fn, err)
	}
	if s := x.Shape(); len(s) != 2 || s[0] != l.ds.N() || s[1] < 2 {
		return fmt.Errorf("fmp: Layer.%s: input has shape %v, want (%d, c) with c ≥ 2", fn, s, l.ds.N())
	}
	return nil
}
