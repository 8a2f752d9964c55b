package layers

import (
	"fmt"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/fairmp/fairmp/internal/opkit"
)

// linComb returns Σ coef[i]·xs[i] for matrices of one shape and dtype.
// Its gradient with respect to xs[i] is coef[i]·dY.
func linComb(coef []float64, xs ...*G.Node) (*G.Node, error) {
	if len(coef) != len(xs) || len(xs) == 0 {
		return nil, fmt.Errorf("layers: linComb: %d coefficients for %d nodes", len(coef), len(xs))
	}
	for _, x := range xs[1:] {
		if !x.Shape().Eq(xs[0].Shape()) || x.Dtype() != xs[0].Dtype() {
			return nil, fmt.Errorf("layers: linComb: %s and %s differ in shape or dtype", opkit.DescribeNode(xs[0]), opkit.DescribeNode(x))
		}
	}
	if len(xs[0].Shape()) != 2 {
		return nil, fmt.Errorf("layers: linComb: %s, want matrices", opkit.DescribeNode(xs[0]))
	}
	return opkit.Apply(linCombSpec, append([]float64(nil), coef...), xs...)
}

// linCombSpec is linComb, with the coefficients as parameters.
var linCombSpec = &opkit.Spec[[]float64]{
	ID:   "fairmp.LinComb",
	Name: func(coef []float64) string { return fmt.Sprintf("LinComb%v", coef) },
	Sig:  func(coef []float64) opkit.Sig { return opkit.Mats(len(coef)) },
	Shape: func(_ []float64, in []tensor.Shape) (tensor.Shape, error) {
		for i, s := range in[1:] {
			if !s.Eq(in[0]) {
				return nil, fmt.Errorf("input %d is %v, want %v", i+1, s, in[0])
			}
		}
		return in[0], nil
	},
	Hash: func(coef []float64, h opkit.Hasher) { h.F64s(coef) },
	F32:  func(coef []float64, a opkit.Args[float32]) error { combine(a.Out, a.In, coef); return nil },
	F64:  func(coef []float64, a opkit.Args[float64]) error { combine(a.Out, a.In, coef); return nil },
	Grad: func(op *opkit.Op[[]float64], inputs G.Nodes, _, grad *G.Node) (G.Nodes, error) {
		ds := make(G.Nodes, len(inputs))
		for i := range inputs {
			d, err := op.Apply([]float64{op.P[i]}, grad)
			if err != nil {
				return nil, err
			}
			ds[i] = d
		}
		return ds, nil
	},
	Keep: true,
}

// combine writes Σ coef[i]·xs[i] into out: the linear combination of
// linCombSpec and of the plain-Go flow's Combine.
func combine[T float32 | float64](out []T, xs [][]T, coef []float64) {
	for i, x := range xs {
		c := T(coef[i])
		if i == 0 {
			for k, v := range x {
				out[k] = c * v
			}
			continue
		}
		for k, v := range x {
			out[k] += c * v
		}
	}
}
