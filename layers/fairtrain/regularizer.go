package fairtrain

import (
	"fmt"

	"github.com/fairmp/fairmp/layers/train"
	G "gorgonia.org/gorgonia"
)

// RegularizerConfig configures the demographic-parity regulariser: the
// training loss becomes
//
//	CE + α · (max_g m_g − min_g m_g),   m_g = mean over the training nodes
//	                                          of group g of P(y = Positive),
//
// which is CE + α·|m₀ − m₁| for a binary attribute (DPGap on the training
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

// Apply adds α·DPGap over task.Train to tc's loss. It returns an error
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
		gap, err := DPGap(z, sens, train, c.Positive)
		if err != nil {
			return nil, err
		}
		return scaled(c.Alpha, gap)
	}), nil
}
