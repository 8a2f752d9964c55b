package metrics

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/big"
)

// ClassBreakdown is the per-group view of predictions over c classes:
// one one-vs-rest [Breakdown] per class. Build it with [ByGroupClasses]
// or [EvaluateClasses].
//
// A task with c ≥ 2 classes is judged class by class, one class against
// the rest: for class k a node is positive when y = k and selected when
// ŷ = k, and every binary rate of this package becomes a rate of class k
// (SR_gk = P(ŷ = k | s = g), TPR_gk = P(ŷ = k | y = k, s = g), FPR_gk =
// P(ŷ = k | y ≠ k, s = g)). This is fairlearn's one-vs-rest convention:
// its selection_rate(pos_label=k) counts ŷ = k as selected, and its
// true_positive_rate and false_positive_rate refuse more than two label
// values, so a c-class task is binarised y = k, ŷ = k first, class by
// class, and each class gives a binary MetricFrame.
//
// A criterion for c classes ([ClassBreakdown.Criterion]) is the worst
// class's one-vs-rest criterion:
//
//	difference  max_k ( max_g r_gk − min_g r_gk )   (0: parity in every class)
//	ratio       min_k ( min_g r_gk / max_g r_gk )   (1: parity in every class)
//
// so multi-class ΔDP is the largest gap, over classes, between the groups'
// selection rates of a class, and the multi-class DP ratio the smallest
// ratio. Equalized odds takes the worse of the true- and false-positive
// rates within each class, then the worst class. For c = 2 the two
// classes' selection-rate gaps are equal (class 0's rates are 1 minus
// class 1's), so ΔDP and ΔEOdds are the binary ones; ΔEO is not (class
// 0's true-positive rate is 1 minus class 1's false-positive rate, so the
// c-class ΔEO of a binary task is max(ΔTPR, ΔFPR)), nor are the ratios
// (a ratio of 1 − r is not the ratio of r).
type ClassBreakdown struct {
	// Classes is c.
	Classes int `json:"classes"`
	// Class[k] is the breakdown of class k against the rest: a node is
	// positive when its label is k and selected when its prediction is k,
	// so Class[k].Groups[g].SelectionRate is P(ŷ = k | s = g), .TPR is
	// P(ŷ = k | y = k, s = g) and .FPR is P(ŷ = k | y ≠ k, s = g) (0 with
	// a zero Positives or Negatives count, as in Breakdown). Correct and
	// Accuracy count ŷ = y over all classes, the same in every Class[k].
	// Class[k].Frame(rate) is the Frame (fairlearn's MetricFrame) of one
	// class's rate.
	Class []Breakdown `json:"class"`
}

// ByGroupClasses returns the per-group, per-class breakdown of predictions
// over classes classes: for every class k against the rest and every
// sensitive group, the selection rate, true- and false-positive rates and
// their counts.
//
// pred must hold classes 0..classes−1, labels 0..classes−1 or −1
// (unknown), sens a group id 0..G−1 or −1 (unknown); nodes with an unknown
// label or group are excluded and counted. It returns an error wrapping
// ErrLength, ErrValue (classes < 2, or a value outside its set), ErrEmpty
// or ErrEmptyGroup (every group 0..G−1 needs an evaluated node, G ≥ 2).
// A group without nodes of some class (or with only that class) is not an
// error here: its TPR (or FPR) for that class is 0 and the count says why;
// the criteria that need the rate refuse it.
func ByGroupClasses(pred, labels, sens []int, classes int) (*ClassBreakdown, error) {
	if err := sameLength("pred", len(pred), "labels", len(labels)); err != nil {
		return nil, err
	}
	if err := sameLength("pred", len(pred), "sens", len(sens)); err != nil {
		return nil, err
	}
	return byGroupClasses(pred, labels, sens, classes, -1)
}

// byGroupClasses tallies every class against the rest; labels may be nil
// (every node's label known, for the selection rates alone); groups −1
// means 1 + the largest id in sens.
func byGroupClasses(pred, labels, sens []int, classes, groups int) (*ClassBreakdown, error) {
	if classes < 2 {
		return nil, fmt.Errorf("%w: classes = %d, want ≥ 2", ErrValue, classes)
	}
	b := &ClassBreakdown{Classes: classes, Class: make([]Breakdown, classes)}
	for k := range classes {
		bk, err := tally(pred, labels, sens, classes, k, groups)
		if err != nil {
			return nil, err
		}
		b.Class[k] = *bk
	}
	return b, nil
}

// DemographicParityClasses returns the demographic parity difference of
// predictions over classes classes: the largest, over the classes k, of
// the largest minus the smallest selection rate P(ŷ = k | s = g) over the
// sensitive groups (see [ClassBreakdown.Criterion]). For classes = 2 it is
// [DemographicParity], digit for digit.
//
// pred must hold 0..classes−1 and sens 0..G−1 or −1; nodes with sens −1
// are excluded. It returns an error wrapping ErrLength, ErrValue,
// ErrEmpty or ErrEmptyGroup.
func DemographicParityClasses(pred, sens []int, classes int) (float64, error) {
	if err := sameLength("pred", len(pred), "sens", len(sens)); err != nil {
		return 0, err
	}
	b, err := byGroupClasses(pred, nil, sens, classes, -1)
	if err != nil {
		return 0, err
	}
	v, _, err := b.Criterion(DPDifference)
	return v, err
}

// EqualizedOddsClasses returns the equalized odds difference of
// predictions over classes classes: the largest, over the classes k, of
// the larger between-groups difference of the true- and false-positive
// rates of k against the rest. For classes = 2 it is [EqualizedOdds].
// Inputs, exclusions and errors are those of [ByGroupClasses], plus
// ErrNoPositives or ErrNoNegatives when some group has no node of some
// class, or only nodes of it (the error names the class and the group).
func EqualizedOddsClasses(pred, labels, sens []int, classes int) (float64, error) {
	return EOddsDifference.MeasureClasses(pred, labels, sens, classes)
}

// MeasureClasses computes the criterion for c classes from predictions,
// labels and sensitive groups: [ByGroupClasses], then
// [ClassBreakdown.Criterion]. Inputs and exclusions are those of
// ByGroupClasses; the errors are its and the criterion's.
func (c Criterion) MeasureClasses(pred, labels, sens []int, classes int) (float64, error) {
	b, err := ByGroupClasses(pred, labels, sens, classes)
	if err != nil {
		return 0, err
	}
	v, _, err := b.Criterion(c)
	return v, err
}

// PerClass returns criterion c of every class against the rest:
// PerClass(c)[k] is c.Of(&b.Class[k]), fairlearn's function of c's name
// on the binarised y = k, ŷ = k. It returns the first class's error,
// prefixed with the class ("class 2 against the rest: ...").
func (b *ClassBreakdown) PerClass(c Criterion) ([]float64, error) {
	out := make([]float64, len(b.Class))
	for k := range b.Class {
		v, err := c.Of(&b.Class[k])
		if err != nil {
			return nil, classErr(k, err)
		}
		out[k] = v
	}
	return out, nil
}

func classErr(k int, err error) error {
	return fmt.Errorf("class %d against the rest: %w", k, err)
}

// Criterion returns criterion c for c classes, the worst class's
// one-vs-rest value (see the definitions above [ClassBreakdown]): for a
// difference the largest over classes of max_g r_gk − min_g r_gk, for a
// ratio the smallest of min_g r_gk / max_g r_gk; and the class attaining
// it.
//
// The classes are compared exactly, as fractions of counts, and the value
// returned is the attaining class's own one-vs-rest value (PerClass(c)[k],
// so it agrees with fairlearn's formula on the binarised labels bit for
// bit); on an exact tie the highest class attains it, so that for c = 2
// ΔDP is class 1's, the binary [DemographicParity], digit for digit.
//
// A criterion undefined for any class is undefined: the error of the
// first such class, wrapping ErrNoPositives (a group without a node of the
// class, for a true-positive rate), ErrNoNegatives (a group whose nodes
// are all of the class, for a false-positive rate), or ErrZeroRate (a
// ratio, when no group selects the class), prefixed with the class.
// fairlearn would give 0 for the first two and NaN for the third (and a
// pandas min or max over classes would skip the NaN); here no class is
// silently left out of the worst case.
func (b *ClassBreakdown) Criterion(c Criterion) (float64, int, error) {
	if err := c.Validate(); err != nil {
		return 0, -1, err
	}
	vals, err := b.PerClass(c)
	if err != nil {
		return 0, -1, err
	}
	best := 0
	for k := 1; k < len(vals); k++ {
		// Class k attains the criterion when it is at least as unfair.
		worse := !c.Better(vals[k], vals[best])
		if closeValues(vals[best], vals[k]) {
			// Equal or within rounding: decide exactly.
			cmp := exactOf(c, &b.Class[k]).Cmp(exactOf(c, &b.Class[best]))
			worse = cmp == 0 || (cmp > 0) != c.IsRatio()
		}
		if worse {
			best = k
		}
	}
	return vals[best], best, nil
}

// closeValues reports whether two criterion values computed from counts
// may be in the wrong order through rounding: rates are correctly rounded
// quotients, and a difference or a ratio of two adds a few ulps of 1.
func closeValues(a, b float64) bool { return math.Abs(a-b) <= 1e-13 }

// exactOf returns criterion c of a breakdown exactly, as a fraction of
// its counts. c.Of(b) must have succeeded (every denominator used is > 0).
func exactOf(c Criterion, b *Breakdown) *big.Rat {
	var v *big.Rat
	for k, r := range c.Rates() {
		var lo, hi *big.Rat
		for _, s := range b.Groups {
			num, den := s.Selected, s.Count
			switch r {
			case TruePositiveRate:
				num, den = s.TruePositives, s.Positives
			case FalsePositiveRate:
				num, den = s.FalsePositives, s.Negatives
			case AccuracyRate:
				num = s.Correct
			}
			q := big.NewRat(int64(num), int64(den))
			if lo == nil || q.Cmp(lo) < 0 {
				lo = q
			}
			if hi == nil || q.Cmp(hi) > 0 {
				hi = q
			}
		}
		x := new(big.Rat).Sub(hi, lo)
		if c.IsRatio() {
			x = new(big.Rat).Quo(lo, hi)
		}
		// Two rates: the larger difference, the smaller ratio.
		if k > 0 {
			if cmp := x.Cmp(v); cmp == 0 || (cmp > 0) == c.IsRatio() {
				continue
			}
		}
		v = x
	}
	return v
}

// Accuracy returns the fraction of evaluated nodes whose prediction equals
// their label (all classes).
func (b *ClassBreakdown) Accuracy() float64 { return b.Class[0].Overall.Accuracy }

// MacroF1 returns the macro-averaged F1 score over the evaluated nodes:
// the mean over the c classes of the one-vs-rest F1 of class k,
// 2·TP_k / (2·TP_k + FP_k + FN_k) (sklearn's f1_score with
// average="macro" and labels=range(c)). It returns an error wrapping
// ErrNoPositives, naming the first class with neither a label nor a
// prediction (its F1 is 0/0; sklearn sets it to 0 with a warning, and
// without labels= leaves the class out of the mean).
func (b *ClassBreakdown) MacroF1() (float64, error) {
	sum := 0.0
	for k := range b.Class {
		o := b.Class[k].Overall
		v, err := f1(o.TruePositives, o.FalsePositives, o.Positives-o.TruePositives, o.Count)
		if err != nil {
			return 0, classErr(k, err)
		}
		sum += v
	}
	return sum / float64(len(b.Class)), nil
}

// MacroF1 returns the [Metric] of the macro-averaged F1 over classes
// classes ([ClassBreakdown.MacroF1]), for [NewFrame] and
// [BootstrapFrame]: pred must hold 0..classes−1 and labels 0..classes−1
// or −1 (excluded). The metric returns an error wrapping ErrValue for a
// value outside its set or classes < 2, ErrEmpty when no label is known,
// and ErrNoPositives naming a class with neither a label nor a
// prediction.
func MacroF1(classes int) Metric {
	return func(pred, labels []int) (float64, error) {
		if classes < 2 {
			return 0, fmt.Errorf("%w: MacroF1(%d): want ≥ 2 classes", ErrValue, classes)
		}
		if err := sameLength("pred", len(pred), "labels", len(labels)); err != nil {
			return 0, err
		}
		tp, fp, fn := make([]int, classes), make([]int, classes), make([]int, classes)
		n := 0
		for i, p := range pred {
			y := labels[i]
			if p < 0 || p >= classes {
				return 0, fmt.Errorf("%w: pred[%d] = %d, want %s", ErrValue, i, p, classSet(classes, false))
			}
			if y < -1 || y >= classes {
				return 0, fmt.Errorf("%w: labels[%d] = %d, want %s", ErrValue, i, y, classSet(classes, true))
			}
			if y == -1 {
				continue
			}
			n++
			if p == y {
				tp[y]++
			} else {
				fp[p]++
				fn[y]++
			}
		}
		if n == 0 {
			return 0, emptyErr(len(pred), "label")
		}
		sum := 0.0
		for k := range classes {
			v, err := f1(tp[k], fp[k], fn[k], n)
			if err != nil {
				return 0, classErr(k, err)
			}
			sum += v
		}
		return sum / float64(classes), nil
	}
}

// ClassReport holds the metrics of one evaluation over c classes, as
// fractions in [0, 1]: [EvaluateClasses]'s result.
type ClassReport struct {
	// Classes is c; Threshold the binary decision threshold (0 when
	// Classes > 2, where the argmax is used).
	Classes   int     `json:"classes"`
	Threshold float64 `json:"threshold"`
	// Nodes, Evaluated, UnknownLabel, UnknownSens and Excluded count the
	// nodes as in [Report].
	Nodes        int `json:"nodes"`
	Evaluated    int `json:"evaluated"`
	UnknownLabel int `json:"unknown_label"`
	UnknownSens  int `json:"unknown_sens"`
	Excluded     int `json:"excluded"`
	// Accuracy is the fraction of evaluated nodes with ŷ = y.
	Accuracy float64 `json:"accuracy"`
	// MacroF1 is the mean over classes of the one-vs-rest F1.
	MacroF1 float64 `json:"macro_f1"`
	// DemographicParity, EqualOpportunity and EqualizedOdds are the
	// c-class ΔDP, ΔEO and ΔEOdds (the worst class's, see
	// [ClassBreakdown.Criterion]); any other criterion is r.Of(c).
	DemographicParity float64 `json:"demographic_parity"`
	EqualOpportunity  float64 `json:"equal_opportunity"`
	EqualizedOdds     float64 `json:"equalized_odds"`
	// Breakdown holds every class's per-group rates.
	Breakdown *ClassBreakdown `json:"breakdown"`
	// Undefined lists the metrics that are NaN because they are undefined
	// on the evaluated nodes (only with Options.AllowUndefined), as in
	// Report; the reason names the class.
	Undefined []Undefined `json:"undefined,omitempty"`
}

// Of returns criterion c for c classes ([ClassBreakdown.Criterion]).
func (r ClassReport) Of(c Criterion) (float64, error) {
	if r.Breakdown == nil {
		return 0, fmt.Errorf("%w: the class report has no breakdown", ErrEmptyGroup)
	}
	v, _, err := r.Breakdown.Criterion(c)
	return v, err
}

// IsUndefined reports whether metric (a JSON name: "macro_f1",
// "demographic_parity", "equal_opportunity", "equalized_odds") is
// undefined in r.
func (r ClassReport) IsUndefined(metric string) bool {
	for _, u := range r.Undefined {
		if u.Metric == metric {
			return true
		}
	}
	return false
}

// classReportJSON is ClassReport's JSON form: NaN metrics as null.
type classReportJSON struct {
	Classes           int             `json:"classes"`
	Threshold         float64         `json:"threshold"`
	Nodes             int             `json:"nodes"`
	Evaluated         int             `json:"evaluated"`
	UnknownLabel      int             `json:"unknown_label"`
	UnknownSens       int             `json:"unknown_sens"`
	Excluded          int             `json:"excluded"`
	Accuracy          *float64        `json:"accuracy"`
	MacroF1           *float64        `json:"macro_f1"`
	DemographicParity *float64        `json:"demographic_parity"`
	EqualOpportunity  *float64        `json:"equal_opportunity"`
	EqualizedOdds     *float64        `json:"equalized_odds"`
	Breakdown         *ClassBreakdown `json:"breakdown"`
	Undefined         []Undefined     `json:"undefined,omitempty"`
}

// MarshalJSON writes undefined (NaN) metrics as null.
func (r ClassReport) MarshalJSON() ([]byte, error) {
	return json.Marshal(classReportJSON{r.Classes, r.Threshold, r.Nodes, r.Evaluated, r.UnknownLabel, r.UnknownSens, r.Excluded,
		nullable(r.Accuracy), nullable(r.MacroF1), nullable(r.DemographicParity), nullable(r.EqualOpportunity), nullable(r.EqualizedOdds),
		r.Breakdown, r.Undefined})
}

// UnmarshalJSON reads what MarshalJSON writes (null as NaN), strictly.
func (r *ClassReport) UnmarshalJSON(b []byte) error {
	var j classReportJSON
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	if err := d.Decode(&j); err != nil {
		return fmt.Errorf("class report: %w", err)
	}
	*r = ClassReport{Classes: j.Classes, Threshold: j.Threshold, Nodes: j.Nodes, Evaluated: j.Evaluated,
		UnknownLabel: j.UnknownLabel, UnknownSens: j.UnknownSens, Excluded: j.Excluded,
		Accuracy: orNaN(j.Accuracy), MacroF1: orNaN(j.MacroF1), DemographicParity: orNaN(j.DemographicParity),
		EqualOpportunity: orNaN(j.EqualOpportunity), EqualizedOdds: orNaN(j.EqualizedOdds),
		Breakdown: j.Breakdown, Undefined: j.Undefined}
	return nil
}

// EvaluateClasses computes the c-class metrics from predicted class
// probabilities: the accuracy, the macro-F1 and the c-class ΔDP, ΔEO and
// ΔEOdds, with every class's per-group rates.
//
// The arguments mean what they mean for [Evaluate]: probs is the n ×
// classes matrix row-major, nodes the subset (nil: all), and the
// prediction is the argmax of a row (the lowest class on ties), or for
// two classes class 1 when P(y = 1) > opt.Threshold. opt.Positive is not
// used (every class is judged against the rest) but must be valid.
//
// It returns Evaluate's input errors, and the errors of the metrics
// (ErrNoPositives, ErrNoNegatives, naming the class) unless
// opt.AllowUndefined makes an undefined metric NaN, listed in Undefined.
func EvaluateClasses(probs []float64, classes int, labels, sens, nodes []int, opt Options) (ClassReport, error) {
	pred, lab, sub, groups, err := classInputs(probs, classes, labels, sens, nodes, opt)
	if err != nil {
		return ClassReport{}, err
	}
	b, err := byGroupClasses(pred, lab, sub, classes, groups)
	if err != nil {
		return ClassReport{}, err
	}
	return classReport(b, len(pred), opt)
}

// classReport fills a ClassReport from a breakdown of nodes nodes.
func classReport(b *ClassBreakdown, nodes int, opt Options) (ClassReport, error) {
	b0 := &b.Class[0]
	r := ClassReport{Classes: b.Classes, Nodes: nodes, Evaluated: b0.Overall.Count,
		UnknownLabel: b0.UnknownLabel, UnknownSens: b0.UnknownSens, Excluded: b0.Excluded,
		Accuracy: b.Accuracy(), Breakdown: b}
	if b.Classes == 2 {
		r.Threshold = opt.Threshold
	}
	undefined := func(dst *float64, metric string, err error) error {
		return keepUndefined(opt, &r.Undefined, dst, metric, err)
	}
	var err error
	r.MacroF1, err = b.MacroF1()
	if err = undefined(&r.MacroF1, "macro_f1", err); err != nil {
		return ClassReport{}, err
	}
	for _, rc := range [...]struct {
		c    Criterion
		name string
		dst  *float64
	}{
		{DPDifference, "demographic_parity", &r.DemographicParity},
		{EODifference, "equal_opportunity", &r.EqualOpportunity},
		{EOddsDifference, "equalized_odds", &r.EqualizedOdds},
	} {
		*rc.dst, _, err = b.Criterion(rc.c)
		if err = undefined(rc.dst, rc.name, err); err != nil {
			return ClassReport{}, err
		}
	}
	return r, nil
}

// classInputs validates EvaluateClasses' arguments and returns the
// subset's predictions, labels and groups, and the number of groups of
// the whole sens.
func classInputs(probs []float64, classes int, labels, sens, nodes []int, opt Options) (pred, lab, sub []int, groups int, err error) {
	if classes < 2 {
		return nil, nil, nil, 0, fmt.Errorf("%w: classes = %d, want ≥ 2", ErrValue, classes)
	}
	if err := opt.Validate(); err != nil {
		return nil, nil, nil, 0, err
	}
	if opt.Positive >= classes {
		return nil, nil, nil, 0, fmt.Errorf("%w: Options.Positive = %d, want a class in 0..%d", ErrValue, opt.Positive, classes-1)
	}
	n := len(labels)
	if len(probs) != n*classes {
		return nil, nil, nil, 0, fmt.Errorf("%w: len(probs) = %d, want len(labels) × classes = %d × %d = %d", ErrLength, len(probs), n, classes, n*classes)
	}
	if err := sameLength("labels", n, "sens", len(sens)); err != nil {
		return nil, nil, nil, 0, err
	}
	if nodes, err = checkNodes(nodes, n); err != nil {
		return nil, nil, nil, 0, err
	}
	m := len(nodes)
	pred, lab, sub = make([]int, m), make([]int, m), make([]int, m)
	for k, i := range nodes {
		row := probs[i*classes : (i+1)*classes]
		for j, v := range row {
			if !(v >= 0 && v <= 1) {
				return nil, nil, nil, 0, fmt.Errorf("%w: probs[%d] = %v (node %d), want a probability in [0, 1]", ErrValue, i*classes+j, v, i)
			}
		}
		pred[k], lab[k], sub[k] = decision(row, opt), labels[i], sens[i]
		if y := lab[k]; y < -1 || y >= classes {
			return nil, nil, nil, 0, fmt.Errorf("%w: labels[%d] = %d, want %s", ErrValue, i, y, classSet(classes, true))
		}
		if sub[k] < -1 {
			return nil, nil, nil, 0, fmt.Errorf("%w: sens[%d] = %d, want a group id ≥ 0 or −1 (unknown)", ErrValue, i, sub[k])
		}
	}
	// The groups are those of the whole sens, as for Evaluate.
	if groups, err = groupCount(sens, m); err != nil {
		return nil, nil, nil, 0, err
	}
	return pred, lab, sub, groups, nil
}
