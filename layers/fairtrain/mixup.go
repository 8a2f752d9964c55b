package fairtrain

import (
	"fmt"
	"math"
	"math/rand"

	"github.com/fairmp/fairmp/internal/opkit"
	"github.com/fairmp/fairmp/layers/minibatch"
	"github.com/fairmp/fairmp/layers/train"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// MixupConfig configures fair mixup (Chuang and Mroueh, ICLR 2021) in its
// manifold form on the logit layer, as in the FMP paper's appendix: at
// every training step, m training nodes are drawn from each of the two
// groups (without replacement, from the strategy's own seeded source)
// and paired in drawn order, and λ ~ Beta(BetaA, BetaB) is drawn. With
// z0_k, z1_k the logits of pair k, the path between the groups is
// z_k(λ) = λ z0_k + (1−λ) z1_k, and the mean prediction along it is
//
//	g(λ) = (1/m) Σ_k p(z_k(λ))[Positive],   p = softmax,
//
// so g(1) − g(0) is the groups' gap on the sample. The penalty is the
// slope of g at the drawn λ,
//
//	|g'(λ)| = | (1/m) Σ_k J(z_k(λ))[Positive,:] · (z0_k − z1_k) |
//	        = | (1/m) Σ_k p_pos (d_pos − Σ_j p_j d_j) |,   d = z0_k − z1_k,
//
// (J the softmax Jacobian; its expectation over λ bounds ∫|g'| ≥ |g(1) −
// g(0)|), and the training loss is CE + α·|g'(λ)|. The derivative is
// computed analytically as a gorgonia expression of the logits, so the
// penalty's gradient flows through z0, z1 and the softmax to the model's
// parameters.
//
// Why the reference code's penalty does nothing:
//
// Fair mixup's published code estimates the slope with autograd: it makes
// the mixed input a leaf that requires a gradient, differentiates the
// summed output with respect to it, and takes the inner product with the
// difference of the endpoints. On the input layer that slope depends on
// the parameters through the model between input and output. Moved to the
// logit layer, nothing lies between the mixed logits and the quantity
// differentiated except the fixed softmax, and the mixed logits are a new
// leaf built from values cut off from the model (the FMP paper's reference
// code differentiates such a constant): the penalty then has no path to
// the parameters, its gradient is zero, and every α trains the same model.
// Here the slope is written in closed form as an expression of the logits
// themselves, so its gradient reaches z0, z1 and through them the model's
// parameters (checked by finite differences in the tests).
type MixupConfig struct {
	// Alpha is the fairness weight α (finite, >= 0). α = 0 trains exactly
	// as without the penalty (bit-identical parameters). Default 1.
	Alpha float64
	// Fraction sets the sample size per group, m = max(1, round(Fraction
	// · the smaller group's training size)), in (0, 1]. Default 1 (every
	// node of the smaller group, and as many of the larger).
	Fraction float64
	// BetaA and BetaB are the parameters of λ's Beta distribution (> 0,
	// finite). Default 2 and 2.
	BetaA, BetaB float64
	// Positive is the class whose probability is compared. Default 1.
	Positive int
	// Seed seeds the draws of nodes and λ. Default 1.
	Seed int64
}

// DefaultMixupConfig returns α = 1, Fraction 1, λ ~ Beta(2, 2), positive
// class 1, seed 1.
func DefaultMixupConfig() MixupConfig {
	return MixupConfig{Alpha: 1, Fraction: 1, BetaA: 2, BetaB: 2, Positive: 1, Seed: 1}
}

// Name returns "mixup".
func (c MixupConfig) Name() string { return "mixup" }

// Weight returns Alpha.
func (c MixupConfig) Weight() float64 { return c.Alpha }

// Validate checks every field.
func (c MixupConfig) Validate() error {
	if err := checkAlpha(c.Alpha); err != nil {
		return err
	}
	if !(c.Fraction > 0 && c.Fraction <= 1) {
		return fmt.Errorf("Fraction = %v, want in (0, 1]", c.Fraction)
	}
	for _, f := range []struct {
		n string
		v float64
	}{{"BetaA", c.BetaA}, {"BetaB", c.BetaB}} {
		if !(f.v > 0) || math.IsInf(f.v, 0) {
			return fmt.Errorf("%s = %v, want a finite value > 0", f.n, f.v)
		}
	}
	if c.Positive < 0 {
		return fmt.Errorf("Positive = %d, want a class >= 0", c.Positive)
	}
	return nil
}

// Apply adds α·|g'(λ)| to tc's loss. It returns an error for an invalid
// configuration or task, a sens of the wrong length, or a sensitive
// attribute that is not binary (0/1, −1 unknown) with both groups among
// the training nodes.
func (c MixupConfig) Apply(tc train.Config, task *train.Task, sens []int) (train.Config, error) {
	if err := c.Validate(); err != nil {
		return tc, fmt.Errorf("fairtrain: mixup: %w", err)
	}
	n, err := checkTask("mixup", task, sens)
	if err != nil {
		return tc, err
	}
	g0, g1, err := twoGroups("mixup", task.Train, sens)
	if err != nil {
		return tc, err
	}
	m := int(math.Round(c.Fraction * float64(min(len(g0), len(g1)))))
	m = max(m, 1)
	return withExtra(tc, func(z *G.Node) (*G.Node, error) {
		s := newMixSampler(g0, g1, m, c.BetaA, c.BetaB, c.Seed)
		pen, err := mixupSlope(z, s, n, c.Positive)
		if err != nil {
			return nil, fmt.Errorf("fairtrain: mixup: %w", err)
		}
		return scaled(c.Alpha, pen)
	}), nil
}

// mixupSlope builds |g'(λ)| for the logits z with sampler s.
func mixupSlope(z *G.Node, s *mixSampler, n, pos int) (*G.Node, error) {
	sh := z.Shape()
	if len(sh) != 2 || sh[0] != n {
		return nil, fmt.Errorf("logits %q have shape %v, want %d × classes", z.Name(), sh, n)
	}
	c := sh[1]
	if pos >= c {
		return nil, fmt.Errorf("positive class %d, want a class in [0, %d)", pos, c)
	}
	mixed, err := opkit.Apply(mixSpec, &mixOp{s: s, n: n, c: c, id: opIDs.Add(1)}, z)
	if err != nil {
		return nil, err
	}
	zm, err := G.Slice(mixed, G.S(0, s.m))
	if err != nil {
		return nil, err
	}
	d, err := G.Slice(mixed, G.S(s.m, 2*s.m))
	if err != nil {
		return nil, err
	}
	if s.m == 1 {
		return onePairSlope(zm, d, c, pos)
	}
	p, err := G.SoftMax(zm)
	if err != nil {
		return nil, err
	}
	pd, err := G.HadamardProd(p, d)
	if err != nil {
		return nil, err
	}
	t, err := G.Sum(pd, 1) // Σ_j p_j d_j, per pair
	if err != nil {
		return nil, err
	}
	ppos, err := G.Slice(p, nil, G.S(pos))
	if err != nil {
		return nil, err
	}
	dpos, err := G.Slice(d, nil, G.S(pos))
	if err != nil {
		return nil, err
	}
	diff, err := G.Sub(dpos, t)
	if err != nil {
		return nil, err
	}
	h, err := G.HadamardProd(ppos, diff)
	if err != nil {
		return nil, err
	}
	mean, err := G.Mean(h)
	if err != nil {
		return nil, err
	}
	return G.Abs(mean)
}

// MiniBatch returns fair mixup's per-batch term for minibatch.Fit
// (Config.Method): on each batch, α·|g'(λ)| with m pairs drawn among the
// batch's targets of groups 0 and 1, m = max(1, round(Fraction · the
// smaller group's size in the batch)), and λ ~ Beta(BetaA, BetaB). The
// draws come from one source seeded by Seed, batch after batch, so a
// seeded run is deterministic. tc is returned unchanged.
//
// The term is an estimate, as the full-batch one is (a random sample of
// pairs and one λ per step): the pairs are drawn from the batch's nodes
// instead of every training node. With one batch holding every training
// node its first step draws what the full-batch run's first step draws.
// A batch that misses a group has no pair: its step trains on the
// cross-entropy alone.
//
// It returns an error for an invalid configuration, a task without Sens,
// or an attribute that is not binary (0/1, −1 unknown) with both groups
// among the training nodes.
func (c MixupConfig) MiniBatch(tc train.Config, task *minibatch.Task) (train.Config, minibatch.Term, error) {
	if err := c.Validate(); err != nil {
		return tc, nil, fmt.Errorf("fairtrain: mixup: %w", err)
	}
	sens, err := batchSens("mixup", task)
	if err != nil {
		return tc, nil, err
	}
	if _, _, err := twoGroups("mixup", task.Train, sens); err != nil {
		return tc, nil, err
	}
	return tc, &mixTerm{cfg: c, sens: sens, rng: rand.New(rand.NewSource(c.Seed))}, nil
}

// mixTerm is fair mixup's per-batch term.
type mixTerm struct {
	cfg  MixupConfig
	sens []int
	rng  *rand.Rand
}

func (t *mixTerm) Loss(b *minibatch.Batch) (*G.Node, error) {
	var g0, g1 []int
	for k, v := range b.Targets {
		switch t.sens[v] {
		case 0:
			g0 = append(g0, k)
		case 1:
			g1 = append(g1, k)
		}
	}
	if len(g0) == 0 || len(g1) == 0 {
		return nil, nil
	}
	m := max(int(math.Round(t.cfg.Fraction*float64(min(len(g0), len(g1))))), 1)
	s := &mixSampler{g0: g0, g1: g1, m: m, a: t.cfg.BetaA, b: t.cfg.BetaB, rng: t.rng, i0: make([]int, m), i1: make([]int, m)}
	pen, err := mixupSlope(b.Logits, s, len(b.Targets), t.cfg.Positive)
	if err != nil {
		return nil, fmt.Errorf("fairtrain: mixup: %w", err)
	}
	return scaled(t.cfg.Alpha, pen)
}

func (t *mixTerm) AfterStep(*minibatch.Batch, *tensor.Dense) error { return nil }

// onePairSlope is mixupSlope's |g'(λ)| for one pair, from the mixed
// logits zm and the direction d (vectors of c: gorgonia slices one row of
// a matrix to a vector, on which the matrix form's row sums fail):
// |p_pos (d_pos − Σ_j p_j d_j)|, p = softmax(zm).
func onePairSlope(zm, d *G.Node, c, pos int) (*G.Node, error) {
	zr, err := G.Reshape(zm, tensor.Shape{1, c})
	if err != nil {
		return nil, err
	}
	p, err := G.SoftMax(zr)
	if err != nil {
		return nil, err
	}
	pv, err := G.Reshape(p, tensor.Shape{c})
	if err != nil {
		return nil, err
	}
	pd, err := G.HadamardProd(pv, d)
	if err != nil {
		return nil, err
	}
	t, err := G.Sum(pd) // Σ_j p_j d_j
	if err != nil {
		return nil, err
	}
	ppos, err := G.Slice(pv, G.S(pos))
	if err != nil {
		return nil, err
	}
	dpos, err := G.Slice(d, G.S(pos))
	if err != nil {
		return nil, err
	}
	diff, err := G.Sub(dpos, t)
	if err != nil {
		return nil, err
	}
	h, err := G.Mul(ppos, diff)
	if err != nil {
		return nil, err
	}
	return G.Abs(h)
}
