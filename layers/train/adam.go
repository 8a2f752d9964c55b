package train

import (
	"fmt"
	"math"

	"github.com/fairmp/fairmp/internal/opkit"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// AdamConfig configures the Adam optimiser with PyTorch's semantics
// (torch.optim.Adam, amsgrad off).
type AdamConfig struct {
	// LR is the learning rate (> 0). Default 0.001.
	LR float64
	// Beta1 and Beta2 are the moment decay rates, in [0, 1). Defaults 0.9
	// and 0.999.
	Beta1, Beta2 float64
	// Eps is added to the root of the bias-corrected second moment (> 0).
	// Default 1e-8.
	Eps float64
	// WeightDecay (>= 0) adds WeightDecay·w to each gradient before the
	// moments are updated (L2 regularisation, PyTorch's weight_decay; not
	// AdamW's decoupled decay). Default 0.
	WeightDecay float64
}

// DefaultAdamConfig returns PyTorch's defaults: lr 1e-3, betas (0.9,
// 0.999), eps 1e-8, no weight decay.
func DefaultAdamConfig() AdamConfig {
	return AdamConfig{LR: 1e-3, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8}
}

// Validate checks every field.
func (c AdamConfig) Validate() error {
	if !(c.LR > 0) || math.IsInf(c.LR, 0) {
		return fmt.Errorf("LR = %v, want a finite value > 0", c.LR)
	}
	if !(c.Beta1 >= 0 && c.Beta1 < 1) {
		return fmt.Errorf("Beta1 = %v, want 0 <= Beta1 < 1", c.Beta1)
	}
	if !(c.Beta2 >= 0 && c.Beta2 < 1) {
		return fmt.Errorf("Beta2 = %v, want 0 <= Beta2 < 1", c.Beta2)
	}
	if !(c.Eps > 0) || math.IsInf(c.Eps, 0) {
		return fmt.Errorf("Eps = %v, want a finite value > 0", c.Eps)
	}
	if !(c.WeightDecay >= 0) || math.IsInf(c.WeightDecay, 0) {
		return fmt.Errorf("WeightDecay = %v, want a finite value >= 0", c.WeightDecay)
	}
	return nil
}

// Adam updates parameters in place from their gradients, with PyTorch's
// update rule: with g = ∇ + λw,
//
//	m ← β₁m + (1−β₁)g,  v ← β₂v + (1−β₂)g²,
//	w ← w − lr · (m/(1−β₁ᵗ)) / (√v/√(1−β₂ᵗ) + ε).
//
// It works on the parameters' backing slices (float32 or float64, the
// arithmetic of each element in float64), allocates nothing per step and
// is deterministic.
//
// gorgonia's AdamSolver (v0.9.18, solvers.go) with WithL2Reg(λ) also adds
// λ·w to the gradient before the moments (coupled L2, like PyTorch's
// weight_decay, not AdamW), then divides by the batch size and clips, and
// uses the same bias correction and ε placement. It allocates several
// tensors per parameter per step (clones of the gradient and the moments)
// and zeroes the gradients; fairmp uses this type instead.
type Adam struct {
	cfg    AdamConfig
	params G.Nodes
	t      int
	m, v   [][]float64 // first and second moments, one per parameter
	grads  []G.Value
}

// NewAdam returns an optimiser for params (learnable nodes holding dense
// float32 or float64 values). It returns an error for an invalid
// configuration or a parameter without a dense float value.
func NewAdam(cfg AdamConfig, params G.Nodes) (*Adam, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("train: NewAdam: %w", err)
	}
	a := &Adam{cfg: cfg, params: params}
	for _, p := range params {
		d, ok := p.Value().(*tensor.Dense)
		if !ok || opkit.CheckFloat(p.Dtype()) != nil {
			return nil, fmt.Errorf("train: NewAdam: parameter %q (node %d) holds %T of %v, want a dense float32 or float64 value", p.Name(), p.ID(), p.Value(), p.Dtype())
		}
		a.m = append(a.m, make([]float64, d.Size()))
		a.v = append(a.v, make([]float64, d.Size()))
	}
	return a, nil
}

// Steps returns the number of steps taken.
func (a *Adam) Steps() int { return a.t }

// Step applies one update to every parameter from its gradient, read with
// Node.Grad() (bind the gradients to the parameters, e.g. by compiling the
// machine with gorgonia.BindDualValues(params...)). It returns an error if
// a gradient is missing or has the wrong size; parameters before the
// failing one have then been updated.
func (a *Adam) Step() error {
	if a.grads == nil {
		a.grads = make([]G.Value, len(a.params))
	}
	grads := a.grads
	for i, p := range a.params {
		g, err := p.Grad()
		if err != nil {
			return fmt.Errorf("train: Adam: gradient of %q (node %d): %w", p.Name(), p.ID(), err)
		}
		grads[i] = g
	}
	return a.StepWith(grads)
}

// StepWith applies one update with the given gradients, one per
// parameter in order.
func (a *Adam) StepWith(grads []G.Value) error {
	if len(grads) != len(a.params) {
		return fmt.Errorf("train: Adam: %d gradients for %d parameters", len(grads), len(a.params))
	}
	a.t++
	c := a.cfg
	bc1 := 1 - math.Pow(c.Beta1, float64(a.t))
	bc2 := math.Sqrt(1 - math.Pow(c.Beta2, float64(a.t)))
	step := c.LR / bc1
	for i, p := range a.params {
		w, ok := p.Value().(*tensor.Dense)
		if !ok {
			return fmt.Errorf("train: Adam: parameter %q (node %d) holds %T, want *tensor.Dense", p.Name(), p.ID(), p.Value())
		}
		g, err := opkit.Dense(grads[i])
		if err != nil || g.Size() != w.Size() || g.Dtype() != w.Dtype() {
			return fmt.Errorf("train: Adam: gradient of %q (node %d) is %v, want %v %v", p.Name(), p.ID(), describe(grads[i]), w.Dtype(), w.Shape())
		}
		switch ws := w.Data().(type) {
		case []float64:
			adamUpdate(ws, g.Data().([]float64), a.m[i], a.v[i], c, step, bc2)
		case []float32:
			adamUpdate(ws, g.Data().([]float32), a.m[i], a.v[i], c, step, bc2)
		}
	}
	return nil
}

func describe(v G.Value) string {
	if v == nil {
		return "missing"
	}
	return fmt.Sprintf("%v %v", v.Dtype(), v.Shape())
}

func adamUpdate[T float32 | float64](w, g []T, m, v []float64, c AdamConfig, step, bc2 float64) {
	b1, b2 := c.Beta1, c.Beta2
	for k := range w {
		gk := float64(g[k]) + c.WeightDecay*float64(w[k])
		m[k] = b1*m[k] + (1-b1)*gk
		v[k] = b2*v[k] + (1-b2)*gk*gk
		w[k] = T(float64(w[k]) - step*m[k]/(math.Sqrt(v[k])/bc2+c.Eps))
	}
}
