package fairtrain

import (
	"fmt"
	"math"

	"github.com/fairmp/fairmp/layers/train"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// An in-training method (fairness.Loss) returns from Apply a copy of a
// trainer configuration with the method's loss term
// ([train.Config].ExtraLoss) and, where the method needs them, its hooks
// (AfterStep) and warm-up (SelectAfter) added; the result is passed to
// train.Fit. Hooks already set in the configuration are kept and run
// first (extra losses are summed). A configuration returned by Apply
// holds the method's state (a sampler, an adversary) and is good for one
// train.Fit or train.NewTrainer call on the task it was made for.

// checkAlpha validates a fairness weight.
func checkAlpha(a float64) error {
	if !(a >= 0) || math.IsInf(a, 0) {
		return fmt.Errorf("Alpha = %v, want a finite weight >= 0", a)
	}
	return nil
}

// checkTask validates the task and the sensitive attribute against it
// and returns the node count and the logits' width.
func checkTask(name string, task *train.Task, sens []int) (int, error) {
	if err := task.Validate(); err != nil {
		return 0, fmt.Errorf("fairtrain: %s: task: %w", name, err)
	}
	n := task.X.Shape()[0]
	if len(sens) != n {
		return 0, fmt.Errorf("fairtrain: %s: %d sensitive values for %d nodes, want one per node", name, len(sens), n)
	}
	return n, nil
}

// twoGroups returns the training nodes of groups 0 and 1 (in train's
// order), or an error unless the known groups among them are exactly 0
// and 1, both present.
func twoGroups(name string, train, sens []int) (g0, g1 []int, err error) {
	for _, i := range train {
		switch s := sens[i]; {
		case s == 0:
			g0 = append(g0, i)
		case s == 1:
			g1 = append(g1, i)
		case s < -1 || s > 1:
			return nil, nil, fmt.Errorf("fairtrain: %s: sensitive value %d of training node %d, want 0, 1 or −1 (unknown): this method needs a binary attribute", name, s, i)
		}
	}
	if len(g0) == 0 || len(g1) == 0 {
		return nil, nil, fmt.Errorf("fairtrain: %s: %d training nodes in group 0 and %d in group 1, want both groups present", name, len(g0), len(g1))
	}
	return g0, g1, nil
}

// withExtra returns tc with f's term added to its ExtraLoss.
func withExtra(tc train.Config, f func(logits *G.Node) (*G.Node, error)) train.Config {
	prev := tc.ExtraLoss
	tc.ExtraLoss = func(z *G.Node) (*G.Node, error) {
		e, err := f(z)
		if err != nil || prev == nil {
			return e, err
		}
		p, err := prev(z)
		if err != nil {
			return nil, err
		}
		return G.Add(p, e)
	}
	return tc
}

// withAfterStep returns tc with f run after its AfterStep hook.
func withAfterStep(tc train.Config, f func(epoch int) error) train.Config {
	prev := tc.AfterStep
	tc.AfterStep = func(e int) error {
		if prev != nil {
			if err := prev(e); err != nil {
				return err
			}
		}
		return f(e)
	}
	return tc
}

// scaled returns the scalar node a·x in x's dtype.
func scaled(a float64, x *G.Node) (*G.Node, error) {
	var c *G.Node
	if x.Dtype() == tensor.Float32 {
		c = G.NewConstant(float32(a))
	} else {
		c = G.NewConstant(a)
	}
	return G.Mul(c, x)
}
