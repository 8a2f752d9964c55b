package fairtrain

import (
	"fmt"

	"github.com/fairmp/fairmp/layers/minibatch"
	"github.com/fairmp/fairmp/layers/train"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// RegularizerConfig configures the demographic-parity regulariser: the
// training loss becomes
//
//	CE + α · (max_g m_g − min_g m_g),   m_g = mean over the training nodes
//	                                          of group g of P(y = Positive),
//
// which is CE + α·|m₀ − m₁| for a binary attribute (dpGap on the training
// nodes; nodes whose group is unknown are left out). The probabilities are
// those of the training forward pass (dropout on).
type RegularizerConfig struct {
	// Alpha is the fairness weight α (finite, >= 0). α = 0 trains exactly
	// as without the regulariser (bit-identical parameters). Default 1.
	Alpha float64
	// Positive is the class whose probability is compared (>= 0, a class
	// of the task). Default 1.
	Positive int
}

// DefaultRegularizerConfig returns α = 1 and positive class 1.
func DefaultRegularizerConfig() RegularizerConfig {
	return RegularizerConfig{Alpha: 1, Positive: 1}
}

// Name returns "regularizer".
func (c RegularizerConfig) Name() string { return "regularizer" }

// Weight returns Alpha.
func (c RegularizerConfig) Weight() float64 { return c.Alpha }

// Validate checks every field.
func (c RegularizerConfig) Validate() error {
	if err := checkAlpha(c.Alpha); err != nil {
		return err
	}
	if c.Positive < 0 {
		return fmt.Errorf("Positive = %d, want a class >= 0", c.Positive)
	}
	return nil
}

// Apply adds α·dpGap over task.Train to tc's loss. It returns an error
// for an invalid configuration or task, a sens of the wrong length, or
// fewer than two groups among the training nodes; a Positive that is not a
// class is reported when the trainer builds the loss.
func (c RegularizerConfig) Apply(tc train.Config, task *train.Task, sens []int) (train.Config, error) {
	if err := c.Validate(); err != nil {
		return tc, fmt.Errorf("fairtrain: regularizer: %w", err)
	}
	n, err := checkTask("regularizer", task, sens)
	if err != nil {
		return tc, err
	}
	if _, _, err := groupsOf(sens, task.Train, n); err != nil {
		return tc, fmt.Errorf("fairtrain: regularizer: training nodes: %w", err)
	}
	sens = append([]int(nil), sens...)
	train := append([]int(nil), task.Train...)
	return withExtra(tc, func(z *G.Node) (*G.Node, error) {
		gap, err := dpGap(z, sens, train, c.Positive)
		if err != nil {
			return nil, err
		}
		return scaled(c.Alpha, gap)
	}), nil
}

// MiniBatch returns the regulariser's per-batch term for minibatch.Fit
// (Config.Method): on each batch, α·dpGap over the batch's targets (its
// training nodes), with the groups of task.Sens. tc is returned
// unchanged.
//
// The term is an estimate per batch: each group's mean P(y = Positive)
// over the batch estimates its mean over every training node, and the gap
// of the estimates is biased upward by their spread (smaller the larger
// the batch). It is exact when a batch holds every training node. A
// batch that misses a group of the training nodes has no gap to estimate:
// its step trains on the cross-entropy alone.
//
// It returns an error for an invalid configuration, a task without Sens,
// or fewer than two groups among the training nodes.
func (c RegularizerConfig) MiniBatch(tc train.Config, task *minibatch.Task) (train.Config, minibatch.Term, error) {
	if err := c.Validate(); err != nil {
		return tc, nil, fmt.Errorf("fairtrain: regularizer: %w", err)
	}
	sens, err := batchSens("regularizer", task)
	if err != nil {
		return tc, nil, err
	}
	_, counts, err := groupsOf(sens, task.Train, len(sens))
	if err != nil {
		return tc, nil, fmt.Errorf("fairtrain: regularizer: training nodes: %w", err)
	}
	return tc, &regTerm{cfg: c, sens: sens, groups: len(counts)}, nil
}

// regTerm is the regulariser's per-batch term.
type regTerm struct {
	cfg    RegularizerConfig
	sens   []int
	groups int // the training nodes' groups, 0..groups−1
}

func (r *regTerm) Loss(b *minibatch.Batch) (*G.Node, error) {
	sl := make([]int, len(b.Targets))
	idx := make([]int, len(b.Targets))
	counts := make([]int, r.groups)
	for k, v := range b.Targets {
		sl[k], idx[k] = r.sens[v], k
		if g := sl[k]; g >= 0 && g < r.groups {
			counts[g]++
		}
	}
	for _, n := range counts {
		if n == 0 {
			return nil, nil // a group is missing: no gap on this batch
		}
	}
	gap, err := dpGap(b.Logits, sl, idx, r.cfg.Positive)
	if err != nil {
		return nil, err
	}
	return scaled(r.cfg.Alpha, gap)
}

func (r *regTerm) AfterStep(*minibatch.Batch, *tensor.Dense) error { return nil }
