package score

import (
	"errors"
	"fmt"

	"github.com/fairmp/fairmp/graph/features"
	"github.com/fairmp/fairmp/metrics"
)

// ErrNoBaseline is returned by Scorer.Drift for a model file that records
// no drift baseline. Record one when saving: metrics.NewBaseline on the
// validation nodes (with its GroupNames set and RecordFeatures called on
// the training nodes' features), passed as modelio.SaveConfig.Baseline to
// modelio.Save (modelio.DefaultSaveConfig records none; debias -model-out does).
var ErrNoBaseline = errors.New("score: the model file records no drift baseline")

// Drift compares the nodes out scored with the baseline the model file
// recorded (its validation nodes' decisions, group mix and, when
// recorded, its training nodes' features): metrics.Baseline.Compare with
// the default decision options (threshold 0.5, class 1 positive) and
// bootstrap configuration; for a model of c > 2 classes, whose file
// records a baseline of every class, every class's per-group rates and
// the criteria for c classes (a baseline of two classes in such a file is
// metrics.ErrClasses). labels (nil: none known) and sens hold one
// entry per node of the graph scored (−1: unknown), x its features (nil:
// the features are not compared), as Score took them. Groups are named by
// the baseline's GroupNames in every message when it has them.
//
// It returns ErrNoBaseline for a file without a baseline, and an error
// for sizes that do not match the graph scored or metrics' errors.
func (s *Scorer) Drift(out *Scores, labels, sens []int, x features.Source) (metrics.Drift, error) {
	return s.DriftWith(out, labels, sens, x, metrics.DefaultOptions(), metrics.DefaultBootstrapConfig())
}

// DriftWith is Drift with the decision options and the bootstrap
// configuration given (its Level is the baseline's).
func (s *Scorer) DriftWith(out *Scores, labels, sens []int, x features.Source, opt metrics.Options, cfg metrics.BootstrapConfig) (metrics.Drift, error) {
	b := s.header.Baseline
	if b == nil {
		return metrics.Drift{}, fmt.Errorf("%w: save the model with modelio.Save and SaveConfig.Baseline (metrics.NewBaseline on the validation nodes, GroupNames set, RecordFeatures on the training nodes)", ErrNoBaseline)
	}
	if out == nil || len(out.Nodes) == 0 {
		return metrics.Drift{}, errors.New("score: Drift: no scores, want Score's output")
	}
	n := len(sens)
	if labels != nil && len(labels) != n {
		return metrics.Drift{}, fmt.Errorf("score: Drift: %d labels and %d groups, want one of each per node of the graph scored", len(labels), n)
	}
	if x != nil && (x.Rows() != n || x.Cols() != s.in) {
		return metrics.Drift{}, fmt.Errorf("score: Drift: features of %d × %d for %d nodes, want %d × %d (the model's columns)", x.Rows(), x.Cols(), n, n, s.in)
	}
	sc := metrics.Scored{Probs: out.Probs, Classes: out.Classes, Sens: make([]int, len(out.Nodes))}
	if labels != nil {
		sc.Labels = make([]int, len(out.Nodes))
	}
	for k, i := range out.Nodes {
		if i < 0 || i >= n {
			return metrics.Drift{}, fmt.Errorf("score: Drift: scored node %d, want a node of the %d given groups", i, n)
		}
		sc.Sens[k] = sens[i]
		if labels != nil {
			sc.Labels[k] = labels[i]
		}
	}
	if x != nil {
		sc.X, sc.D = make([]float64, len(out.Nodes)*s.in), s.in
		if err := features.Gather(x, out.Nodes, sc.X); err != nil {
			return metrics.Drift{}, fmt.Errorf("score: Drift: %w", err)
		}
	}
	d, err := b.Compare(sc, opt, cfg)
	if err != nil {
		return metrics.Drift{}, fmt.Errorf("score: Drift: %w", err)
	}
	return d, nil
}
