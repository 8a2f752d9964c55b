package metrics

import (
	"errors"
	"fmt"
)

// ErrClasses reports a drift baseline compared with scores of another
// number of classes: a baseline of two classes (or one written before
// baselines recorded every class) with scores of c > 2 classes, or the
// reverse. Save the model again with a baseline of its classes.
var ErrClasses = errors.New("metrics: the baseline and the scores have different classes")

// ClassDrift is one class's per-group rates against the rest, now and in
// a baseline of c > 2 classes.
type ClassDrift struct {
	Class int `json:"class"`
	// Name is the class's name (Baseline.ClassNames), if the baseline has
	// names.
	Name   string       `json:"name,omitempty"`
	Groups []GroupDrift `json:"groups"`
}

// ClassName returns class k's name: ClassNames[k] quoted (class "low"),
// or "class k" without names.
func (b Baseline) ClassName(k int) string {
	return className(b.ClassNames, k)
}

// className names class k as Baseline.ClassName does.
func className(names []string, k int) string { return nameOf("class", names, k) }

// groups returns the baseline's groups with their counts: Groups, or for
// c > 2 classes the first class's (every class has the same).
func (b Baseline) groups() []GroupRates {
	if b.Classes > 2 && len(b.ClassGroups) > 0 {
		return b.ClassGroups[0]
	}
	return b.Groups
}

// newClassBaseline is NewBaseline for classes > 2.
func newClassBaseline(probs []float64, classes int, labels, sens, nodes []int, opt Options, cfg BootstrapConfig) (Baseline, error) {
	iv, err := BootstrapClasses(probs, classes, labels, sens, nodes, opt, cfg)
	if err != nil {
		return Baseline{}, fmt.Errorf("metrics: NewBaseline: %w", err)
	}
	b := Baseline{Nodes: iv.Evaluated, Level: cfg.Level, Criteria: iv.Criteria, Classes: classes, ClassGroups: make([][]GroupRates, classes)}
	for k := range classes {
		o := opt
		o.Positive = k
		if b.ClassGroups[k], err = groupRates(probs, classes, labels, sens, nodes, o, cfg.Level); err != nil {
			return Baseline{}, fmt.Errorf("metrics: NewBaseline: %w", err)
		}
	}
	return b, nil
}

// validateClasses checks the fields of c > 2 classes: none for two
// classes; for c, no Groups, one ClassGroups entry per class listing the
// same groups with the same counts (each checked by check(k)), and
// ClassNames (when present) one per class, non-empty and distinct.
func (b Baseline) validateClasses(check func(k int) error) error {
	if b.Classes == 0 {
		if b.ClassGroups != nil || b.ClassNames != nil {
			return fmt.Errorf("%w: Baseline has ClassGroups or ClassNames but Classes = 0, want Classes = c for a baseline of c > 2 classes (NewBaseline sets it)", ErrValue)
		}
		return nil
	}
	if b.Classes < 3 {
		return fmt.Errorf("%w: Baseline.Classes = %d, want 0 for two classes or c ≥ 3", ErrValue, b.Classes)
	}
	if len(b.Groups) > 0 {
		return fmt.Errorf("%w: Baseline has %d Groups and Classes = %d, want the groups of c > 2 classes in ClassGroups alone", ErrValue, len(b.Groups), b.Classes)
	}
	if len(b.ClassGroups) != b.Classes {
		return fmt.Errorf("%w: Baseline.ClassGroups has %d classes, want Classes = %d", ErrValue, len(b.ClassGroups), b.Classes)
	}
	first := b.ClassGroups[0]
	for k, groups := range b.ClassGroups {
		if err := check(k); err != nil {
			return err
		}
		same := len(groups) == len(first)
		for j := 0; same && j < len(groups); j++ {
			g, h := groups[j], first[j]
			same = g.Group == h.Group && g.Count == h.Count && g.Labelled == h.Labelled
		}
		if !same {
			return fmt.Errorf("%w: Baseline.ClassGroups[%d] lists other groups or counts than class 0's, want the same groups and counts in every class", ErrValue, k)
		}
	}
	if b.ClassNames != nil {
		if len(b.ClassNames) != b.Classes {
			return fmt.Errorf("%w: Baseline.ClassNames has %d names for %d classes, want one per class", ErrValue, len(b.ClassNames), b.Classes)
		}
		if err := distinctNames("ClassNames", "class", "classes", b.ClassNames); err != nil {
			return err
		}
	}
	return nil
}

// distinctNames checks that names (Baseline's field; what they name, one
// and several) are non-empty and distinct.
func distinctNames(field, one, several string, names []string) error {
	seen := map[string]int{}
	for k, name := range names {
		if name == "" {
			return fmt.Errorf("%w: Baseline.%s[%d] is empty, want a name per %s", ErrValue, field, k, one)
		}
		if j, ok := seen[name]; ok {
			return fmt.Errorf("%w: Baseline.%s: %s %d and %d are both named %q", ErrValue, field, several, j, k, name)
		}
		seen[name] = k
	}
	return nil
}

// sameClasses refuses scores of classes classes compared with b when b
// was recorded for another number of classes.
func (b Baseline) sameClasses(classes int) error {
	switch {
	case b.Classes > 2 && classes != b.Classes:
		return fmt.Errorf("%w: the baseline was recorded for %d classes and the scores have %d: compare it with the scores of the model it was recorded for", ErrClasses, b.Classes, classes)
	case b.Classes == 0 && classes > 2:
		return fmt.Errorf("%w: the baseline was recorded for two classes (or before baselines recorded each class: a model file saved before) and the scores have %d classes: save the model again to record a baseline of its %d classes (debias writes one in model.fmp; metrics.NewBaseline with classes = %d)", ErrClasses, classes, classes, classes)
	}
	return nil
}

// classIntervals returns [BootstrapClasses]' intervals of the criteria
// for c classes on nodes (labelled, of a known group), undefined ones
// left out, and the class attaining each on nodes. The groups are those
// present in nodes, numbered in order (a group without a scored node is
// not an empty group here, as in selectionIntervals). With selection,
// labels are not read: every node is labelled by its own decision, so
// that every node of a known group counts, and only the criteria of
// selection rates alone mean anything (the caller keeps only those; their
// resamples are those of the real labels, which selection rates never
// read).
func classIntervals(probs []float64, classes int, labels, sens, nodes []int, opt Options, cfg BootstrapConfig, selection bool) (map[Criterion]Interval, map[Criterion]int, error) {
	ids, _ := renumberGroups(sens, nodes)
	p := make([]float64, 0, len(nodes)*classes)
	lab, sub := make([]int, len(nodes)), make([]int, len(nodes))
	for k, i := range nodes {
		row := probs[i*classes : (i+1)*classes]
		p = append(p, row...)
		lab[k], sub[k] = labels[i], ids[sens[i]]
		if selection {
			lab[k] = decision(row, opt)
		}
	}
	opt.AllowUndefined = true
	iv, err := BootstrapClasses(p, classes, lab, sub, nil, opt, cfg)
	if err != nil {
		return nil, nil, err
	}
	r, err := EvaluateClasses(p, classes, lab, sub, nil, opt)
	if err != nil {
		return nil, nil, err
	}
	at := map[Criterion]int{}
	for c := range iv.Criteria {
		if _, k, err := r.Breakdown.Criterion(c); err == nil {
			at[c] = k
		}
	}
	return iv.Criteria, at, nil
}
