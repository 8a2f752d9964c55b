// Package diagnose says what a reader of a result should know before
// reading its numbers: an accuracy not above the majority-class rate, a
// trivial selection, small groups, a rare class, an undefined metric
// ([Report], on a metrics.Report) and a feature that is (nearly) the
// sensitive attribute ([Features]). Each [Diagnostic] has a [Code] for
// callers that branch on it, a message with the numbers and advice.
//
// Every function returns an error (wrapping metrics.ErrValue or
// metrics.ErrLength) for an invalid configuration or inputs of the wrong
// length; none panics.
package diagnose

import (
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/fairmp/fairmp/metrics"
)

// Code names what a Diagnostic is about, for callers that
// branch on it.
type Code string

// The diagnostics a careful analyst would give before anyone reads a
// table's numbers.
const (
	// BelowMajority: the accuracy is not above the majority-class rate
	// (predicting the more frequent class for every evaluated node): at
	// or below it, or, given the accuracy's interval
	// ([Report]), with an interval whose low end is at or
	// below it. A constant prediction then scores as much, as far as
	// these nodes can tell.
	BelowMajority Code = "below-majority"
	// TrivialSelection: (nearly) every node selected, or none: the
	// demographic-parity gap is (nearly) 0 by triviality, not fairness.
	TrivialSelection Code = "trivial-selection"
	// SmallGroup: a sensitive group with few evaluated nodes: its rates,
	// and every gap involving it, are uncertain by several points.
	SmallGroup Code = "small-group"
	// ImbalancedLabel: one class is rare among the evaluated nodes:
	// accuracy is then mostly the majority class's.
	ImbalancedLabel Code = "imbalanced-label"
	// SensitiveLeak: a feature is (nearly) the sensitive attribute: a
	// model reads the attribute through it.
	SensitiveLeak Code = "sensitive-leak"
	// RuleNotMet: no setting met the selection rule; the reference was
	// kept.
	RuleNotMet Code = "rule-not-met"
	// UndefinedMetric: a metric is undefined on the evaluated nodes (a
	// group without positive nodes has no true-positive rate, so no ΔEO);
	// it is reported as undefined (NaN, JSON null, "n/a"), not as a
	// number.
	UndefinedMetric Code = "undefined-metric"
)

// Diagnostic is one thing a result's reader should know, with what to
// try.
type Diagnostic struct {
	Code Code `json:"code"`
	// Subject names what it is about: a method ("backbone", "fmp"), a
	// split, or "data".
	Subject string `json:"subject"`
	// Message says what was found, with the numbers; Advice what to try.
	Message string `json:"message"`
	Advice  string `json:"advice"`
}

// String formats the diagnostic as one line.
func (d Diagnostic) String() string {
	return fmt.Sprintf("%s [%s]: %s; %s", d.Subject, d.Code, d.Message, d.Advice)
}

// Config holds the thresholds of the diagnostics.
type Config struct {
	// TrivialRate: a selection rate at most this, or at least 1 minus
	// this, overall, is TrivialSelection. Default 0.01.
	TrivialRate float64
	// MinGroupCount: a group with fewer evaluated nodes is SmallGroup.
	// Default 30.
	MinGroupCount int
	// MinClassRate: a class rarer than this among the evaluated nodes is
	// ImbalancedLabel. Default 0.1.
	MinClassRate float64
	// LeakCorrelation: a feature whose absolute correlation with a group
	// indicator is at least this is SensitiveLeak. Default 0.95.
	LeakCorrelation float64
	// GroupNames, if not empty, names the groups in the messages
	// (GroupNames[g] for group g); without it they are "group 0", ...
	GroupNames []string
}

// group names group g in a message.
func (c Config) group(g int) string {
	if g >= 0 && g < len(c.GroupNames) {
		return fmt.Sprintf("group %q", c.GroupNames[g])
	}
	return fmt.Sprintf("group %d", g)
}

// nameGroups replaces "group <g>" in a metrics error's reason by the
// group's name, when GroupNames names it.
func (c Config) nameGroups(reason string) string {
	if len(c.GroupNames) == 0 {
		return reason
	}
	return groupRef.ReplaceAllStringFunc(reason, func(m string) string {
		g, err := strconv.Atoi(strings.TrimPrefix(m, "group "))
		if err != nil {
			return m
		}
		return c.group(g)
	})
}

// groupRef matches a group named by its id in a message.
var groupRef = regexp.MustCompile(`group [0-9]+`)

// DefaultConfig returns the defaults above.
func DefaultConfig() Config {
	return Config{TrivialRate: 0.01, MinGroupCount: 30, MinClassRate: 0.1, LeakCorrelation: 0.95}
}

// Validate checks the fields' ranges.
func (c Config) Validate() error {
	switch {
	case !(c.TrivialRate >= 0 && c.TrivialRate < 0.5):
		return fmt.Errorf("%w: Config.TrivialRate = %v, want in [0, 0.5)", metrics.ErrValue, c.TrivialRate)
	case c.MinGroupCount < 0:
		return fmt.Errorf("%w: Config.MinGroupCount = %d, want ≥ 0", metrics.ErrValue, c.MinGroupCount)
	case !(c.MinClassRate >= 0 && c.MinClassRate < 0.5):
		return fmt.Errorf("%w: Config.MinClassRate = %v, want in [0, 0.5)", metrics.ErrValue, c.MinClassRate)
	case !(c.LeakCorrelation > 0 && c.LeakCorrelation <= 1):
		return fmt.Errorf("%w: Config.LeakCorrelation = %v, want in (0, 1]", metrics.ErrValue, c.LeakCorrelation)
	}
	return nil
}

// NotAboveMajority is the one rule of BelowMajority: the accuracy is not
// above the majority-class rate major when acc.Lo ≤ major, the low end
// of the accuracy's interval acc (then the nodes do not show the model
// to beat a constant prediction), or, without an interval (acc nil),
// when the accuracy itself is at or below major.
func NotAboveMajority(accuracy float64, acc *metrics.Interval, major float64) bool {
	if acc != nil && !acc.Undefined() {
		return acc.Lo <= major
	}
	return accuracy <= major
}

// Report returns the diagnostics of one evaluation (a binary task's
// metrics.Report) of the method named subject: BelowMajority (the
// accuracy at or below the majority-class rate, metrics.Report.MajorityRate),
// TrivialSelection, SmallGroup, ImbalancedLabel and UndefinedMetric. A
// report of more than two classes gets SmallGroup and UndefinedMetric only.
//
// acc, if not nil, is the interval of the report's accuracy on the same
// nodes (metrics.Bootstrap's Intervals.Accuracy): BelowMajority is then
// reported when the interval's low end is at or below the majority-class
// rate ([NotAboveMajority]): the accuracy is not shown to be above it,
// which a point a little above it (70.40% against 70.00% on 500 nodes) is
// not either.
func Report(rep metrics.Report, acc *metrics.Interval, subject string, cfg Config) ([]Diagnostic, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	var out []Diagnostic
	o := rep.Overall
	if rep.Classes == 2 && o.Count > 0 {
		pos := float64(o.Positives) / float64(o.Count)
		major, _ := rep.MajorityRate()
		if NotAboveMajority(rep.Accuracy, acc, major) {
			what := fmt.Sprintf("accuracy %.2f%% is at or below", 100*rep.Accuracy)
			if acc != nil && !acc.Undefined() {
				what = fmt.Sprintf("accuracy %.2f%%, interval [%.2f%%, %.2f%%], is not shown to be above", 100*rep.Accuracy, 100*acc.Lo, 100*acc.Hi)
				if rep.Accuracy <= major {
					what = fmt.Sprintf("accuracy %.2f%% (interval [%.2f%%, %.2f%%]) is at or below", 100*rep.Accuracy, 100*acc.Lo, 100*acc.Hi)
				}
			}
			out = append(out, Diagnostic{Code: BelowMajority, Subject: subject,
				Message: fmt.Sprintf("not above the majority rate: %s the %.2f%% that predicting the more frequent class for every one of these %d nodes scores", what, 100*major, o.Count),
				Advice:  "the model has not learnt the task: train longer or with a higher learning rate, and check the labels and the features"})
		}
		sel := float64(o.Selected) / float64(o.Count)
		if sel <= cfg.TrivialRate || sel >= 1-cfg.TrivialRate {
			what := "every node"
			if sel <= cfg.TrivialRate {
				what = "no node"
			}
			out = append(out, Diagnostic{Code: TrivialSelection, Subject: subject,
				Message: fmt.Sprintf("it selects %s (%.2f%% selected): its ΔDP of %.2f%% is parity by triviality, not a fair model", what, 100*sel, 100*rep.DemographicParity),
				Advice:  "do not read its fairness as debiasing: compare methods on a model that predicts both classes, or choose under a ΔDP bound"})
		}
		if minor := math.Min(pos, 1-pos); minor < cfg.MinClassRate {
			out = append(out, Diagnostic{Code: ImbalancedLabel, Subject: subject,
				Message: fmt.Sprintf("the rarer class is %.2f%% of the evaluated nodes: accuracy is mostly the majority class's", 100*minor),
				Advice:  "read F1 and AUC beside accuracy, and ΔEO beside ΔDP"})
		}
	}
	for _, u := range rep.Undefined {
		out = append(out, Diagnostic{Code: UndefinedMetric, Subject: subject,
			Message: fmt.Sprintf("%s is undefined on these nodes: %s", u.Title(), cfg.nameGroups(u.Reason)),
			Advice:  "it is reported as n/a, not as a number: to measure it, give every group nodes of both classes among the evaluated nodes (a split drawn within each group and class does), or merge small groups"})
	}
	for _, g := range rep.Groups {
		if g.Count < cfg.MinGroupCount {
			out = append(out, Diagnostic{Code: SmallGroup, Subject: subject,
				Message: fmt.Sprintf("%s has %s: one node moves its rates by %.1f points", cfg.group(g.Group), plural(g.Count, "evaluated node"), 100/math.Max(1, float64(g.Count))),
				Advice:  "read the gaps with their intervals (they are wide), or merge small groups"})
		}
	}
	return out, nil
}

// Features returns a SensitiveLeak diagnostic for each feature
// column (features n × d, row-major, named by names) whose absolute
// Pearson correlation with the indicator of some group of sens (−1:
// unknown, left out) is at least cfg.LeakCorrelation.
func Features(features []float64, d int, names []string, sens []int, cfg Config) ([]Diagnostic, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if d <= 0 || len(features) != d*len(sens) || (names != nil && len(names) != d) {
		return nil, fmt.Errorf("%w: diagnose.Features: %d values, %d columns, %d names for %d nodes", metrics.ErrLength, len(features), d, len(names), len(sens))
	}
	groups := 0
	for _, s := range sens {
		groups = max(groups, s+1)
	}
	var out []Diagnostic
	for j := 0; j < d; j++ {
		best, bestG := 0.0, -1
		first := 0
		if groups == 2 {
			first = 1 // the indicators of two groups are one variable: group 1's
		}
		for g := first; g < groups; g++ {
			r := corr(features, d, j, sens, g)
			if math.Abs(r) > math.Abs(best) {
				best, bestG = r, g
			}
		}
		if math.Abs(best) >= cfg.LeakCorrelation {
			name := fmt.Sprintf("column %d", j)
			if names != nil {
				name = fmt.Sprintf("%q", names[j])
			}
			out = append(out, Diagnostic{Code: SensitiveLeak, Subject: "data",
				Message: fmt.Sprintf("feature %s is (nearly) the sensitive attribute: correlation %.3f with membership of %s", name, best, cfg.group(bestG)),
				Advice:  "a model reads the attribute through it: leave the column out of the features (Drop) unless that is the point"})
		}
	}
	sort.SliceStable(out, func(a, b int) bool { return out[a].Message < out[b].Message })
	return out, nil
}

// corr is the Pearson correlation of column j with the indicator of
// group g over the nodes of known group (0 when either is constant).
func corr(x []float64, d, j int, sens []int, g int) float64 {
	var n, sx, sy, sxx, syy, sxy float64
	for i, s := range sens {
		if s < 0 {
			continue
		}
		v, y := x[i*d+j], 0.0
		if s == g {
			y = 1
		}
		n++
		sx, sy = sx+v, sy+y
		sxx, syy, sxy = sxx+v*v, syy+y*y, sxy+v*y
	}
	if n < 2 {
		return 0
	}
	cov := sxy - sx*sy/n
	vx, vy := sxx-sx*sx/n, syy-sy*sy/n
	if vx <= 0 || vy <= 0 {
		return 0
	}
	return cov / math.Sqrt(vx*vy)
}

// plural writes n and noun, with an s unless n is 1.
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
