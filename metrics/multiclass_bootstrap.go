package metrics

import "math/rand"

// ClassIntervals holds symmetric bootstrap intervals of the c-class
// metrics of [EvaluateClasses], as returned by [BootstrapClasses].
type ClassIntervals struct {
	Accuracy Interval `json:"accuracy"`
	// MacroF1 is undefined (NaN, JSON null) when the macro-F1 is undefined
	// on the evaluated nodes (with Options.AllowUndefined) or on every
	// resample.
	MacroF1 Interval `json:"macro_f1"`
	// Criteria holds the interval of every criterion for c classes
	// ([ClassBreakdown.Criterion]) defined on the evaluated nodes and on
	// at least one resample, keyed by criterion (JSON: by its name).
	Criteria map[Criterion]Interval `json:"criteria,omitempty"`
	// SelectionRates[g][k] is the interval of P(ŷ = k | s = g), the
	// selection rate of class k in group g.
	SelectionRates [][]Interval `json:"selection_rates"`
	// Level and Resamples are those of the BootstrapConfig used;
	// Evaluated is the number of nodes resampled.
	Level     float64 `json:"level"`
	Resamples int     `json:"resamples"`
	Evaluated int     `json:"evaluated"`
}

// Of returns the interval of criterion c for c classes, and whether it
// has one.
func (iv ClassIntervals) Of(c Criterion) (Interval, bool) {
	i, ok := iv.Criteria[c]
	return i, ok
}

// BootstrapClasses returns symmetric bootstrap intervals for the
// accuracy, the macro-F1, every criterion for c classes and every group's
// selection rate of every class, from the same arguments as
// [EvaluateClasses]. Each Point is EvaluateClasses' value exactly (for a
// criterion, [ClassReport.Of]).
//
// The resampling is [Bootstrap]'s: within every sensitive group, as many
// evaluated nodes as the group has, drawn with replacement (a stratified
// bootstrap), seeded by cfg.Seed, groups in order 0..G−1, the quantiles
// of [SymmetricInterval] clipped to [0, 1]. For two classes the resamples are Bootstrap's, so ΔDP's
// interval is Bootstrap's DemographicParity digit for digit. A metric
// undefined on a resample (a group that drew no node of a class, for a
// true-positive rate; a class neither drawn nor predicted, for the
// macro-F1) skips that resample for that metric alone; Interval.Used
// counts the resamples each interval rests on. The cost is O(Resamples ×
// (nodes + G·c³)).
//
// BootstrapClasses returns EvaluateClasses' errors on the same arguments
// and an error wrapping ErrValue for an invalid cfg.
func BootstrapClasses(probs []float64, classes int, labels, sens, nodes []int, opt Options, cfg BootstrapConfig) (ClassIntervals, error) {
	if err := cfg.Validate(); err != nil {
		return ClassIntervals{}, err
	}
	pred, lab, sub, groups, err := classInputs(probs, classes, labels, sens, nodes, opt)
	if err != nil {
		return ClassIntervals{}, err
	}
	b, err := byGroupClasses(pred, lab, sub, classes, groups)
	if err != nil {
		return ClassIntervals{}, err
	}
	r, err := classReport(b, len(pred), opt)
	if err != nil {
		return ClassIntervals{}, err
	}

	// Each evaluated node's code is y·c + ŷ, kept per group in order.
	members := make([][]int32, groups)
	for k, y := range lab {
		if y != -1 && sub[k] != -1 {
			members[sub[k]] = append(members[sub[k]], int32(y*classes+pred[k]))
		}
	}
	crit := Criteria()
	var point [numCriteria]float64
	var defined [numCriteria]bool
	for _, c := range crit {
		v, _, err := b.Criterion(c)
		point[c], defined[c] = v, err == nil
	}
	var acc, f1s []float64
	var vals [numCriteria][]float64
	sr := make([][][]float64, groups)
	for g := range sr {
		sr[g] = make([][]float64, classes)
	}
	conf := make([][]int, groups)
	idx := make([][]int32, groups)
	for g := range idx {
		conf[g] = make([]int, classes*classes)
		idx[g] = make([]int32, len(members[g]))
	}
	rng := rand.New(rand.NewSource(cfg.Seed))
	for range cfg.Resamples {
		for g := range idx {
			drawIndices(rng, idx[g])
			clear(conf[g])
			for _, i := range idx[g] {
				conf[g][members[g][i]]++
			}
		}
		rb := confusionBreakdown(conf, classes)
		acc = append(acc, rb.Accuracy())
		if v, err := rb.MacroF1(); err == nil {
			f1s = append(f1s, v)
		}
		for _, c := range crit {
			if !defined[c] {
				continue
			}
			if v, _, err := rb.Criterion(c); err == nil {
				vals[c] = append(vals[c], v)
			}
		}
		for g := range sr {
			for k := range classes {
				sr[g][k] = append(sr[g][k], rb.Class[k].Groups[g].SelectionRate)
			}
		}
	}
	iv := ClassIntervals{
		Accuracy:       unitInterval(acc, r.Accuracy, cfg.Level),
		MacroF1:        undefinedInterval(),
		Criteria:       map[Criterion]Interval{},
		SelectionRates: make([][]Interval, groups),
		Level:          cfg.Level,
		Resamples:      cfg.Resamples,
		Evaluated:      r.Evaluated,
	}
	if !r.IsUndefined("macro_f1") && len(f1s) > 0 {
		iv.MacroF1 = unitInterval(f1s, r.MacroF1, cfg.Level)
	}
	for _, c := range crit {
		if defined[c] && len(vals[c]) > 0 {
			iv.Criteria[c] = unitInterval(vals[c], point[c], cfg.Level)
		}
	}
	for g := range sr {
		iv.SelectionRates[g] = make([]Interval, classes)
		for k := range classes {
			iv.SelectionRates[g][k] = unitInterval(sr[g][k], b.Class[k].Groups[g].SelectionRate, cfg.Level)
		}
	}
	return iv, nil
}

// confusionBreakdown builds the per-class breakdown of per-group
// confusion counts: conf[g][y·c + ŷ] nodes of group g with label y and
// prediction ŷ. Every group must have a node. The counts, and so the
// rates, are those ByGroupClasses finds on the same nodes.
func confusionBreakdown(conf [][]int, classes int) *ClassBreakdown {
	b := &ClassBreakdown{Classes: classes, Class: make([]Breakdown, classes)}
	for k := range b.Class {
		bk := &b.Class[k]
		bk.Groups = make([]GroupStats, len(conf))
		bk.Overall.Group = -1
		for g, cg := range conf {
			st := &bk.Groups[g]
			st.Group = g
			for code, n := range cg {
				if n == 0 {
					continue
				}
				y, p := code/classes, code%classes
				st.add(y == k, p == k, p == y, n)
				bk.Overall.add(y == k, p == k, p == y, n)
			}
			st.rates()
		}
		bk.Overall.rates()
	}
	return b
}
