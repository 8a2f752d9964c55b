package metrics

import (
	"fmt"
	"math"
	"math/rand"
)

// ChangeRate returns the share of the evaluated nodes whose predicted
// class differs between two predictions of the same nodes, probs and alt
// (each n × classes, row-major, as Evaluate takes them), with a
// symmetric bootstrap interval over the nodes. It is the quantity behind
// two metrics of NIFTY (Agarwal, Lakkaraju & Zitnik, UAI 2021), which
// differ only in where alt comes from:
//
//   - counterfactual unfairness: alt is the model's prediction with every
//     node's sensitive attribute flipped (0 ↔ 1), in the features and
//     wherever else the model reads it (FMP's group contrast): the share
//     of decisions that depend on the attribute itself;
//   - instability: alt is the prediction on slightly perturbed inputs
//     (noise on non-sensitive features, dropped edges): the share of
//     decisions that small changes overturn.
//
// NIFTY's code computes both as 1 − (matching decisions)/(test nodes);
// ChangeRate is that number. Package layers/perturb builds alt for any
// trained model.
//
// Predictions are made as Evaluate makes them (P(y = 1) > opt.Threshold
// for two classes, the argmax otherwise). nodes selects the nodes (nil:
// all); labels and groups are not needed, so no node is excluded. The
// interval resamples the nodes with replacement cfg.Resamples times
// (unstratified: the rate needs no group), seeded by cfg.Seed.
//
// ChangeRate returns an error wrapping ErrLength (probs and alt of
// different lengths, or not n × classes), ErrValue (classes < 2, a
// probability outside [0, 1] or not finite, a node out of range or
// repeated, invalid options or cfg) or ErrEmpty (no node).
func ChangeRate(probs, alt []float64, classes int, nodes []int, opt Options, cfg BootstrapConfig) (Interval, error) {
	if err := cfg.Validate(); err != nil {
		return Interval{}, err
	}
	if err := opt.Validate(); err != nil {
		return Interval{}, err
	}
	if classes < 2 {
		return Interval{}, fmt.Errorf("%w: ChangeRate: classes = %d, want ≥ 2", ErrValue, classes)
	}
	if opt.Positive >= classes {
		return Interval{}, fmt.Errorf("%w: ChangeRate: Options.Positive = %d, want a class < %d", ErrValue, opt.Positive, classes)
	}
	if len(probs)%classes != 0 {
		return Interval{}, fmt.Errorf("%w: ChangeRate: %d probabilities, want n × %d", ErrLength, len(probs), classes)
	}
	if len(alt) != len(probs) {
		return Interval{}, fmt.Errorf("%w: ChangeRate: %d probabilities in alt and %d in probs, want one row per node in both", ErrLength, len(alt), len(probs))
	}
	n := len(probs) / classes
	for name, p := range map[string][]float64{"probs": probs, "alt": alt} {
		for i, v := range p {
			if math.IsNaN(v) || v < 0 || v > 1 {
				return Interval{}, fmt.Errorf("%w: ChangeRate: %s[%d] (node %d, class %d) = %v, want a probability in [0, 1]", ErrValue, name, i, i/classes, i%classes, v)
			}
		}
	}
	if nodes == nil {
		nodes = make([]int, n)
		for i := range nodes {
			nodes[i] = i
		}
	}
	if len(nodes) == 0 {
		return Interval{}, fmt.Errorf("%w: ChangeRate: no node to compare", ErrEmpty)
	}
	seen := make([]bool, n)
	changed := make([]uint8, len(nodes))
	count := 0
	for k, i := range nodes {
		if i < 0 || i >= n {
			return Interval{}, fmt.Errorf("%w: ChangeRate: nodes[%d] = %d, want a node in [0, %d)", ErrValue, k, i, n)
		}
		if seen[i] {
			return Interval{}, fmt.Errorf("%w: ChangeRate: node %d repeated (nodes[%d])", ErrValue, i, k)
		}
		seen[i] = true
		a := decide(probs[i*classes:(i+1)*classes], opt)
		b := decide(alt[i*classes:(i+1)*classes], opt)
		if a != b {
			changed[k] = 1
			count++
		}
	}
	m := len(nodes)
	point := float64(count) / float64(m)
	rng := rand.New(rand.NewSource(cfg.Seed))
	rates := make([]float64, cfg.Resamples)
	idx := make([]int32, m)
	for r := range rates {
		drawIndices(rng, idx)
		c := 0
		for _, j := range idx {
			c += int(changed[j])
		}
		rates[r] = float64(c) / float64(m)
	}
	return unitInterval(rates, point, cfg.Level), nil
}

// decide returns the predicted class of one row: class 1 when its
// probability exceeds the threshold for two classes, the argmax (lowest
// class on ties) otherwise.
func decide(row []float64, opt Options) int {
	if len(row) == 2 {
		if row[1] > opt.Threshold {
			return 1
		}
		return 0
	}
	best := 0
	for j, v := range row {
		if v > row[best] {
			best = j
		}
	}
	return best
}
