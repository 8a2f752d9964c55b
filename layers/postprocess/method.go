package postprocess

import (
	"fmt"

	"github.com/fairmp/fairmp/layers/fairness"
)

// The package's methods, registered once with package layers/fairness,
// the one registry of methods of every stage: per-group thresholds
// (binary labels) and per-group class offsets (any number of classes).
var _ = fairness.MustRegister(DefaultThresholdsConfig(), DefaultClassOffsetsConfig())

var (
	_ fairness.Post    = ThresholdsConfig{}
	_ fairness.Post    = ClassOffsetsConfig{}
	_ fairness.Decider = thresholdsDecider{}
	_ fairness.Decider = offsetsDecider{}
)

// Name returns "thresholds".
func (c ThresholdsConfig) Name() string { return "thresholds" }

// Post fits per-group thresholds (FitThresholds) on s's validation nodes
// from the probability of class 1. It refuses more than two classes: a
// c-class decision is an argmax, not a cut (use ClassOffsetsConfig).
func (c ThresholdsConfig) Post(s fairness.Scores) (fairness.Decider, error) {
	if s.Classes != 2 {
		return nil, fmt.Errorf("postprocess: thresholds: %d classes, want 2: a threshold cuts the probability of class 1; for more classes use class-offsets", s.Classes)
	}
	p1, err := column1(s.Probs, s.Classes)
	if err != nil {
		return nil, err
	}
	th, err := FitThresholds(p1, s.Labels, s.Sens, s.Val, c)
	if err != nil {
		return nil, err
	}
	return thresholdsDecider{th}, nil
}

type thresholdsDecider struct{ t *Thresholds }

// Decide applies the thresholds to the probability of class 1.
func (d thresholdsDecider) Decide(probs []float64, sens []int, seed int64) ([]int, error) {
	p1, err := column1(probs, 2)
	if err != nil {
		return nil, err
	}
	return d.t.Decide(p1, sens, seed)
}

// column1 returns column 1 of the n × c row-major probs.
func column1(probs []float64, c int) ([]float64, error) {
	if c < 2 || len(probs)%c != 0 {
		return nil, fmt.Errorf("postprocess: %d probabilities for %d classes, want n × %d", len(probs), c, c)
	}
	out := make([]float64, len(probs)/c)
	for i := range out {
		out[i] = probs[i*c+1]
	}
	return out, nil
}

// Name returns "class-offsets".
func (c ClassOffsetsConfig) Name() string { return "class-offsets" }

// Post fits per-group class offsets (FitClassOffsets) on s's validation
// nodes. Its decisions draw nothing: Decide ignores the seed.
func (c ClassOffsetsConfig) Post(s fairness.Scores) (fairness.Decider, error) {
	o, err := FitClassOffsets(s.Probs, s.Classes, s.Labels, s.Sens, s.Val, c)
	if err != nil {
		return nil, err
	}
	return offsetsDecider{o}, nil
}

type offsetsDecider struct{ o *ClassOffsets }

// Decide applies the offsets; the seed is unused.
func (d offsetsDecider) Decide(probs []float64, sens []int, _ int64) ([]int, error) {
	return d.o.Decide(probs, sens)
}
