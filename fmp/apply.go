package fmp

import (
	"fmt"

	"gorgonia.org/tensor"

	"github.com/fairmp/fairmp/internal/opkit"
)

// Apply runs the layer's K steps on x (n × c logits, float32 or float64,
// c ≥ 2) outside gorgonia and returns F^K: the same arithmetic as the
// evaluation pass of Forward (the same kernels, the same sparse product,
// the same order of operations), without an expression graph.
//
// It is the whole-graph FMP of mini-batch training: a backbone trained in
// batches (package layers/minibatch) gives its n × c logits, and Apply
// debiases them over the whole graph with K sparse products on c columns.
// Its memory is four n × c buffers besides x and the adjacency, whatever
// K is, where an unrolled graph keeps every step's intermediates; on a
// graph of 10 million nodes with c = 2 in float32 that is 320 MB.
//
// x is not modified. Apply returns an error if x is not a dense float
// matrix with n rows and at least 2 columns.
func (l *Layer) Apply(x *tensor.Dense) (*tensor.Dense, error) {
	if err := l.checkApply(x, "Apply"); err != nil {
		return nil, err
	}
	n, c := x.Shape()[0], x.Shape()[1]
	out := tensor.New(tensor.WithShape(n, c), tensor.Of(x.Dtype()))
	switch xs := x.Data().(type) {
	case []float64:
		applySteps(l, xs, out.Data().([]float64), n, c, l.adj.MulDense64, nil)
	case []float32:
		applySteps(l, xs, out.Data().([]float32), n, c, l.adj.MulDense32, nil)
	}
	return out, nil
}

// checkApply checks Apply's and Fit's input.
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

// applySteps writes F^K of x into f and, with duals not nil, appends a
// copy of each step's dual to it. Each statement rounds as the
// corresponding gorgonia op does (explicit conversions keep the compiler
// from fusing a multiply and an add).
func applySteps[T float32 | float64](l *Layer, x, f []T, n, c int, mul func(out, x []T, cols int), duals *[][]float64) {
	copy(f, x)
	gamma := l.cfg.Gamma()
	if gamma == 1 && l.rad == 0 {
		return // no propagation and no fairness steps: F^K = X
	}
	g, om := T(gamma), T(1-gamma)
	var gx, xagg []T
	if gamma == 1 {
		xagg = x // X_agg = X at every step
	} else {
		gx = make([]T, len(x))
		for i, v := range x {
			gx[i] = v * g
		}
		xagg = make([]T, len(x))
	}
	// propagate sets xagg = γX + (1−γ)ÃF.
	propagate := func() {
		if gamma == 1 {
			return
		}
		mul(xagg, f, c)
		for i, v := range xagg {
			xagg[i] = gx[i] + T(v*om)
		}
	}
	if l.rad == 0 {
		for k := 0; k < l.cfg.K; k++ {
			propagate()
			copy(f, xagg)
		}
		return
	}
	rows := l.ds.Rows()
	d := make([]T, len(x))
	u := make([]T, rows*c)
	ubar := make([]T, rows*c)
	scale, invT := gamma/l.cfg.Temperature, 1/l.cfg.Temperature
	first := true // u = 0 before the first projection
	// Steps 2 and 5 of one iteration take the softmax of the same F.
	var sc *softmaxCache // nil: no cache (Layer.noSoftmaxCache)
	if !l.noSoftmaxCache {
		sc = &softmaxCache{}
	}
	for k := 0; k < l.cfg.K; k++ {
		propagate()
		// Step 2: F̄ = X_agg − γ∇(F, u), into d.
		if first || allZero(u) {
			copy(d, xagg)
		} else {
			gradKernel(l.ds.d64, rows, n, f, u, d, c, scale, invT, get(sc, f, c, invT))
			for i, v := range d {
				d[i] = xagg[i] - v
			}
		}
		// Step 3: ū = u + β Δs SF(F̄).
		gapKernel(l.ds.d64, rows, n, d, nil, ubar, c, l.beta, invT, nil)
		if !first {
			for i, v := range u {
				ubar[i] = v + ubar[i]
			}
		}
		// Step 4: the projection onto the l∞ ball.
		projKernel(ubar, u, l.rad)
		first = false
		if duals != nil {
			d := make([]float64, len(u))
			for i, v := range u {
				d[i] = float64(v)
			}
			*duals = append(*duals, d)
		}
		// Step 5: F = X_agg − γ∇(F, u).
		if allZero(u) {
			copy(f, xagg)
			continue
		}
		gradKernel(l.ds.d64, rows, n, f, u, d, c, scale, invT, get(sc, f, c, invT))
		for i, v := range d {
			f[i] = xagg[i] - v
		}
	}
}
