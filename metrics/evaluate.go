package metrics

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
)

// Options controls how Evaluate and EvaluateBinary turn probabilities into
// predictions and which class the fairness metrics treat as positive.
type Options struct {
	// Threshold applies to binary tasks only: a node is predicted as class
	// 1 when P(y = 1) > Threshold (strictly, as the reference code of the
	// FMP paper). Must lie in [0, 1]. With more than two classes the
	// prediction is the argmax and Threshold is not used.
	Threshold float64
	// Positive is the class that counts as positive (ŷ = 1, y = 1) in the
	// selection rates, true- and false-positive rates, F1 and AUC. With
	// more than two classes these are one-vs-rest for this class. Must be a
	// class of the task.
	Positive int
	// AllowUndefined, when true, makes a metric that is undefined on the
	// evaluated nodes NaN in the Report, named in Report.Undefined with
	// the reason, instead of an error: F1 without a positive node or
	// prediction, AUC without both classes, a criterion whose rate has
	// no denominator in some group (a group without positive nodes for
	// ΔEO, without negative nodes for ΔFPR), or a group without any
	// evaluated node. fairlearn's MetricFrame shows such a group's rate
	// as NaN in the same way. A Report marshals NaN as JSON null and
	// prints it as "n/a". Default false: Evaluate returns the error, so
	// that a caller who did not ask never meets a NaN.
	AllowUndefined bool
}

// DefaultOptions returns Threshold 0.5 and Positive 1.
func DefaultOptions() Options { return Options{Threshold: 0.5, Positive: 1} }

// Validate reports (wrapping ErrValue) a Threshold outside [0, 1] or NaN,
// or a negative Positive. Whether Positive is a class of the task is
// checked by Evaluate, which knows the number of classes.
func (o Options) Validate() error {
	if !(o.Threshold >= 0 && o.Threshold <= 1) {
		return fmt.Errorf("%w: Options.Threshold = %v, want a value in [0, 1]", ErrValue, o.Threshold)
	}
	if o.Positive < 0 {
		return fmt.Errorf("%w: Options.Positive = %d, want a class ≥ 0", ErrValue, o.Positive)
	}
	return nil
}

// Report holds every metric of one evaluation, as fractions in [0, 1]. It
// prints as a table row in percent ([Report.String], under [ReportHeader]) and marshals to
// JSON.
type Report struct {
	// Classes is the number of classes of the task; Positive is the
	// positive class; Threshold the binary decision threshold (0 when
	// Classes > 2, where the argmax is used).
	Classes   int     `json:"classes"`
	Positive  int     `json:"positive"`
	Threshold float64 `json:"threshold"`
	// Nodes is the number of nodes asked for (the subset, or all).
	Nodes int `json:"nodes"`
	// Evaluated is the number of nodes the metrics are computed on: Nodes
	// minus Excluded.
	Evaluated int `json:"evaluated"`
	// UnknownLabel and UnknownSens count the nodes with label −1 and with
	// sensitive attribute −1 (a node with both counts in each); Excluded
	// counts the nodes left out for either reason, each once.
	UnknownLabel int `json:"unknown_label"`
	UnknownSens  int `json:"unknown_sens"`
	Excluded     int `json:"excluded"`

	// Accuracy is the fraction of evaluated nodes whose predicted class
	// equals the label (all classes, not one-vs-rest).
	Accuracy float64 `json:"accuracy"`
	// F1 is the F1 score of the positive class.
	F1 float64 `json:"f1"`
	// AUC is the area under the ROC curve of P(y = Positive).
	AUC float64 `json:"auc"`
	// DemographicParity is ΔDP: max − min group selection rate.
	DemographicParity float64 `json:"demographic_parity"`
	// EqualOpportunity is ΔEO: max − min group true-positive rate.
	EqualOpportunity float64 `json:"equal_opportunity"`
	// EqualizedOdds is max(ΔTPR, ΔFPR) between groups.
	EqualizedOdds float64 `json:"equalized_odds"`

	// Overall and Groups are the per-group breakdown (see Breakdown).
	Overall GroupStats   `json:"overall"`
	Groups  []GroupStats `json:"groups"`

	// Undefined lists the metrics that are NaN because they are undefined
	// on the evaluated nodes, with why (only with
	// Options.AllowUndefined; empty otherwise).
	Undefined []Undefined `json:"undefined,omitempty"`
}

// Undefined names a metric of a Report that is undefined on the
// evaluated nodes, and why.
type Undefined struct {
	// Metric is the metric's JSON name in the Report ("f1", "auc",
	// "demographic_parity", "equal_opportunity", "equalized_odds").
	Metric string `json:"metric"`
	// Reason says why, naming the group ("group 1 has 2 evaluated nodes,
	// all positive; its false-positive rate is undefined").
	Reason string `json:"reason"`
	// Cause names the sentinel of the error Evaluate returns without
	// AllowUndefined: "no-positives" (ErrNoPositives), "no-negatives"
	// (ErrNoNegatives) or "empty-group" (ErrEmptyGroup). A string, so
	// that a Report stays plain data (gob, Beam, JSON); [Undefined.Err]
	// gives the error.
	Cause string `json:"cause"`
}

// undefinedCauses are Undefined.Cause's values and their sentinels.
var undefinedCauses = []struct {
	name string
	err  error
}{{"no-positives", ErrNoPositives}, {"no-negatives", ErrNoNegatives}, {"empty-group", ErrEmptyGroup}}

// Err returns the error Evaluate returns without AllowUndefined: the
// reason wrapping the cause's sentinel, for errors.Is.
func (u Undefined) Err() error {
	for _, c := range undefinedCauses {
		if c.name == u.Cause {
			return fmt.Errorf("%w: %s", c.err, u.Reason)
		}
	}
	return errors.New(u.Reason)
}

// IsUndefined reports whether metric (a JSON name, see [Undefined]) is
// undefined in r.
func (r Report) IsUndefined(metric string) bool {
	for _, u := range r.Undefined {
		if u.Metric == metric {
			return true
		}
	}
	return false
}

// undefinedCause returns the cause's name when err says a metric is
// undefined on the evaluated nodes (rather than that the input is
// wrong), and "" otherwise.
func undefinedCause(err error) string {
	for _, c := range undefinedCauses {
		if errors.Is(err, c.err) {
			return c.name
		}
	}
	return ""
}

// undefinedReason is err's message without the sentinel's prefix.
func undefinedReason(err error) string {
	msg := err.Error()
	for _, c := range undefinedCauses {
		if errors.Is(err, c.err) {
			msg = strings.TrimPrefix(msg, c.err.Error()+": ")
		}
	}
	return msg
}

// reportJSON is Report's JSON form: the metrics as pointers, nil (null)
// where NaN.
type reportJSON struct {
	Classes           int          `json:"classes"`
	Positive          int          `json:"positive"`
	Threshold         float64      `json:"threshold"`
	Nodes             int          `json:"nodes"`
	Evaluated         int          `json:"evaluated"`
	UnknownLabel      int          `json:"unknown_label"`
	UnknownSens       int          `json:"unknown_sens"`
	Excluded          int          `json:"excluded"`
	Accuracy          *float64     `json:"accuracy"`
	F1                *float64     `json:"f1"`
	AUC               *float64     `json:"auc"`
	DemographicParity *float64     `json:"demographic_parity"`
	EqualOpportunity  *float64     `json:"equal_opportunity"`
	EqualizedOdds     *float64     `json:"equalized_odds"`
	Overall           GroupStats   `json:"overall"`
	Groups            []GroupStats `json:"groups"`
	Undefined         []Undefined  `json:"undefined,omitempty"`
}

// nullable returns &v, or nil for NaN.
func nullable(v float64) *float64 {
	if math.IsNaN(v) {
		return nil
	}
	return &v
}

// orNaN returns *p, or NaN for nil.
func orNaN(p *float64) float64 {
	if p == nil {
		return math.NaN()
	}
	return *p
}

// MarshalJSON writes the report with undefined (NaN) metrics as null.
func (r Report) MarshalJSON() ([]byte, error) {
	return json.Marshal(reportJSON{r.Classes, r.Positive, r.Threshold, r.Nodes, r.Evaluated, r.UnknownLabel, r.UnknownSens, r.Excluded,
		nullable(r.Accuracy), nullable(r.F1), nullable(r.AUC), nullable(r.DemographicParity), nullable(r.EqualOpportunity), nullable(r.EqualizedOdds),
		r.Overall, r.Groups, r.Undefined})
}

// UnmarshalJSON reads what MarshalJSON writes (null as NaN), strictly:
// an unknown field is an error.
func (r *Report) UnmarshalJSON(b []byte) error {
	var j reportJSON
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	if err := d.Decode(&j); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	*r = Report{Classes: j.Classes, Positive: j.Positive, Threshold: j.Threshold, Nodes: j.Nodes, Evaluated: j.Evaluated,
		UnknownLabel: j.UnknownLabel, UnknownSens: j.UnknownSens, Excluded: j.Excluded,
		Accuracy: orNaN(j.Accuracy), F1: orNaN(j.F1), AUC: orNaN(j.AUC), DemographicParity: orNaN(j.DemographicParity),
		EqualOpportunity: orNaN(j.EqualOpportunity), EqualizedOdds: orNaN(j.EqualizedOdds),
		Overall: j.Overall, Groups: j.Groups, Undefined: j.Undefined}
	return nil
}

// Percent converts a fraction to percent, the unit of every fairness and
// accuracy number fairmp prints in a table (the functions of this package
// return fractions).
func Percent(frac float64) float64 { return 100 * frac }

// reportCriteria are the criteria a Report and a Summary hold (the FMP
// paper's ΔDP and ΔEO, and equalized odds), in their columns' order.
var reportCriteria = [...]Criterion{DPDifference, EODifference, EOddsDifference}

// reportJSONNames are reportCriteria's fields' JSON names in a Report.
var reportJSONNames = [len(reportCriteria)]string{"demographic_parity", "equal_opportunity", "equalized_odds"}

// reportTitles returns the column titles accuracy, F1, AUC, then
// reportCriteria's declared titles, each with "%".
func reportTitles() []any {
	out := []any{"acc%", "f1%", "auc%"}
	for _, c := range reportCriteria {
		out = append(out, c.Title()+"%")
	}
	return out
}

// ReportHeader returns the column titles matching Report.String.
func ReportHeader() string {
	return fmt.Sprintf("%7s %7s %7s %7s %7s %7s %7s %6s", append(reportTitles(), "n", "excl")...)
}

// String formats r as one table row under [ReportHeader]: accuracy, F1, AUC, ΔDP,
// ΔEO and equalized odds in percent with two decimals ("n/a" where
// undefined), then the numbers of evaluated and excluded nodes.
func (r Report) String() string {
	var b strings.Builder
	for _, v := range []float64{r.Accuracy, r.F1, r.AUC, r.DemographicParity, r.EqualOpportunity, r.EqualizedOdds} {
		if math.IsNaN(v) {
			fmt.Fprintf(&b, "%7s ", "n/a")
			continue
		}
		fmt.Fprintf(&b, "%7.2f ", Percent(v))
	}
	fmt.Fprintf(&b, "%7d %6d", r.Evaluated, r.Excluded)
	return b.String()
}

// Evaluate computes every metric from predicted class probabilities.
//
// probs holds an n × classes matrix row-major (row i = node i), classes ≥ 2;
// labels and sens have length n, with −1 for unknown. nodes selects the
// nodes to evaluate (for example a test split); nil means all n nodes.
// With two classes node i is predicted as class 1 when probs[2i+1] >
// opt.Threshold; with more, as the argmax of its row (the lowest class on
// ties). Nodes of the subset with an unknown label or sensitive attribute
// are excluded from every metric and counted in the Report.
//
// Evaluate returns an error wrapping ErrLength (len(probs) ≠ n·classes,
// len(sens) ≠ n), ErrValue (classes < 2, invalid options, a probability
// outside [0, 1] or not finite, a label outside 0..classes−1 and −1, a
// group below −1, a node index out of range or repeated), ErrEmpty,
// ErrEmptyGroup, ErrNoPositives or ErrNoNegatives (from the metrics, see
// their docs): a Report is returned only when every metric is defined,
// unless opt.AllowUndefined makes the undefined ones NaN and lists them
// in Report.Undefined.
func Evaluate(probs []float64, classes int, labels, sens, nodes []int, opt Options) (Report, error) {
	if classes < 2 {
		return Report{}, fmt.Errorf("%w: classes = %d, want ≥ 2 (use EvaluateBinary for a P(y=1) vector)", ErrValue, classes)
	}
	n := len(labels)
	if len(probs) != n*classes {
		return Report{}, fmt.Errorf("%w: len(probs) = %d, want len(labels) × classes = %d × %d = %d", ErrLength, len(probs), n, classes, n*classes)
	}
	return evaluate(probs, classes, labels, sens, nodes, opt)
}

// EvaluateBinary is Evaluate for a binary task given p, the length-n vector
// of P(y = 1): node i is predicted as class 1 when p[i] > opt.Threshold, and
// its score for the AUC of class opt.Positive is p[i] (or 1 − p[i] when
// Positive is 0). Errors are those of Evaluate with classes = 2.
func EvaluateBinary(p []float64, labels, sens, nodes []int, opt Options) (Report, error) {
	if err := sameLength("p", len(p), "labels", len(labels)); err != nil {
		return Report{}, err
	}
	return evaluate(p, 1, labels, sens, nodes, opt)
}

// evaluate does the work; cols = 1 means probs is a P(y=1) vector.
// decision is the class predicted from a node's probabilities (one
// column: P(y = 1); two: the classes' probabilities, class 1 when
// P(y = 1) > opt.Threshold; more: the argmax, the first on ties).
func decision(row []float64, opt Options) int {
	switch len(row) {
	case 1:
		if row[0] > opt.Threshold {
			return 1
		}
		return 0
	case 2:
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

func evaluate(probs []float64, cols int, labels, sens, nodes []int, opt Options) (Report, error) {
	classes := max(cols, 2)
	if err := opt.Validate(); err != nil {
		return Report{}, err
	}
	if opt.Positive >= classes {
		return Report{}, fmt.Errorf("%w: Options.Positive = %d, want a class in 0..%d", ErrValue, opt.Positive, classes-1)
	}
	n := len(labels)
	if err := sameLength("labels", n, "sens", len(sens)); err != nil {
		return Report{}, err
	}
	nodes, err := checkNodes(nodes, n)
	if err != nil {
		return Report{}, err
	}

	m := len(nodes)
	pred := make([]int, m)
	score := make([]float64, m)
	lab := make([]int, m)
	sub := make([]int, m)
	for k, i := range nodes {
		row := probs[i*cols : (i+1)*cols]
		for j, v := range row {
			if !(v >= 0 && v <= 1) {
				name := fmt.Sprintf("probs[%d]", i*cols+j)
				if cols == 1 {
					name = fmt.Sprintf("p[%d]", i)
				}
				return Report{}, fmt.Errorf("%w: %s = %v (node %d), want a probability in [0, 1]", ErrValue, name, v, i)
			}
		}
		pred[k] = decision(row, opt)
		score[k] = row[min(opt.Positive, cols-1)]
		if cols == 1 && opt.Positive == 0 {
			score[k] = 1 - row[0]
		}
		lab[k], sub[k] = labels[i], sens[i]
	}
	for k, y := range lab {
		if y < -1 || y >= classes {
			return Report{}, fmt.Errorf("%w: labels[%d] = %d, want %s", ErrValue, nodes[k], y, classSet(classes, true))
		}
		if sub[k] < -1 {
			return Report{}, fmt.Errorf("%w: sens[%d] = %d, want a group id ≥ 0 or −1 (unknown)", ErrValue, nodes[k], sub[k])
		}
	}

	// The groups are those of the whole sens, not of the subset: a group
	// the subset misses is reported, whatever its id.
	groups, err := groupCount(sens, m)
	if err != nil {
		return Report{}, err
	}
	b, err := tally(pred, lab, sub, classes, opt.Positive, groups)
	if err != nil {
		return Report{}, err
	}
	r := Report{
		Classes:      classes,
		Positive:     opt.Positive,
		Nodes:        m,
		Evaluated:    b.Overall.Count,
		UnknownLabel: b.UnknownLabel,
		UnknownSens:  b.UnknownSens,
		Excluded:     b.Excluded,
		Accuracy:     b.Overall.Accuracy,
		Overall:      b.Overall,
		Groups:       b.Groups,
	}
	if classes == 2 {
		r.Threshold = opt.Threshold
	}
	// undefined keeps a metric undefined on these nodes as NaN when the
	// caller allows it.
	undefined := func(dst *float64, metric string, err error) error {
		return keepUndefined(opt, &r.Undefined, dst, metric, err)
	}
	for k, dst := range [len(reportCriteria)]*float64{&r.DemographicParity, &r.EqualOpportunity, &r.EqualizedOdds} {
		*dst, err = reportCriteria[k].Of(b)
		if err = undefined(dst, reportJSONNames[k], err); err != nil {
			return Report{}, err
		}
	}
	o := b.Overall
	r.F1, err = f1(o.TruePositives, o.FalsePositives, o.Positives-o.TruePositives, o.Count)
	if err = undefined(&r.F1, "f1", err); err != nil {
		return Report{}, err
	}
	idx := make([]int, 0, o.Count)
	for k := range lab {
		if lab[k] != -1 && sub[k] != -1 {
			idx = append(idx, k)
		}
	}
	r.AUC, err = aucOf(score, lab, idx, opt.Positive)
	if err = undefined(&r.AUC, "auc", err); err != nil {
		return Report{}, err
	}
	return r, nil
}

// Breakdown returns the report's per-group breakdown (Overall and Groups;
// the exclusion counts are the report's).
func (r Report) Breakdown() *Breakdown {
	return &Breakdown{Overall: r.Overall, Groups: r.Groups, UnknownLabel: r.UnknownLabel, UnknownSens: r.UnknownSens, Excluded: r.Excluded}
}

// Frame returns the Frame of the rate over the report's groups (see
// [Breakdown.Frame]): a Report is a [RateFrames], so that
// c.Of(report) computes any [Criterion] of an evaluation.
func (r Report) Frame(rate Rate) (*Frame, error) { return r.Breakdown().Frame(rate) }

// keepUndefined handles err, the error of computing metric into dst: nil
// stays nil; an error that says the metric is undefined on these nodes
// (undefinedCause) sets dst to NaN and is listed in *list when opt
// allows undefined metrics; any other error is returned.
func keepUndefined(opt Options, list *[]Undefined, dst *float64, metric string, err error) error {
	if err == nil {
		return nil
	}
	cause := undefinedCause(err)
	if !opt.AllowUndefined || cause == "" {
		return err
	}
	*dst = math.NaN()
	*list = append(*list, Undefined{Metric: metric, Reason: undefinedReason(err), Cause: cause})
	return nil
}

// MajorityRate returns the accuracy of predicting the more frequent
// class for every evaluated node of a binary report, and false for a
// report of more classes or without evaluated nodes.
func (r Report) MajorityRate() (float64, bool) {
	o := r.Overall
	if r.Classes != 2 || o.Count == 0 {
		return 0, false
	}
	pos := float64(o.Positives) / float64(o.Count)
	return math.Max(pos, 1-pos), true
}

// Title is the title of the undefined metric ("ΔEO" for
// "equal_opportunity"), as tables print it.
func (u Undefined) Title() string {
	metric := u.Metric
	for k, n := range reportJSONNames {
		if n == metric {
			return reportCriteria[k].Title()
		}
	}
	switch metric {
	case "f1":
		return "F1"
	case "auc":
		return "AUC"
	}
	return metric
}
