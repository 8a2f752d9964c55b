package fmp

import (
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/fairmp/fairmp/internal/svgplot"
	"github.com/fairmp/fairmp/metrics"
	"github.com/fairmp/fairmp/metrics/selection"
)

// PlotConfig configures [Frontier.WriteSVG].
type PlotConfig struct {
	// Title prefixes the two panels' titles (a data set's name, say).
	// Plain text. Default "".
	Title string
	// Marks are other methods drawn beside the frontier as single
	// markers, such as the backbone alone and per-group thresholds.
	Marks []PlotMark
	// MajorityVal and MajorityTest are the accuracy of predicting the
	// more frequent class for every node, on the validation and on the
	// test nodes (fractions in [0, 1]; 0: not drawn): the accuracy any
	// model must beat to have learnt something. Each is drawn as a
	// dotted horizontal line in its panel when it is near the frontier's
	// accuracies, and named in the legend with its value either way (a
	// line far below the frontier would squash it).
	MajorityVal, MajorityTest float64
}

// PlotMark is a method drawn beside the frontier: its validation and test
// metrics (nil: not drawn in that panel) under a plain-text name.
type PlotMark struct {
	Name      string
	Val, Test *metrics.Report
	// ValClasses and TestClasses are, for a task of more than two
	// classes, the c-class reports the mark is drawn at (as the
	// frontier's points, FrontierPoint.ValClasses); nil for two classes.
	ValClasses, TestClasses *metrics.ClassReport
}

// DefaultPlotConfig returns no title and no marks.
func DefaultPlotConfig() PlotConfig { return PlotConfig{} }

// Validate checks that every mark has a name and that the majority rates
// are fractions.
func (c PlotConfig) Validate() error {
	for _, v := range []struct {
		name string
		v    float64
	}{{"MajorityVal", c.MajorityVal}, {"MajorityTest", c.MajorityTest}} {
		if !(v.v >= 0 && v.v <= 1) {
			return fmt.Errorf("fmp: PlotConfig.%s = %v, want an accuracy in [0, 1] (0: no line)", v.name, v.v)
		}
	}
	for i, m := range c.Marks {
		if m.Name == "" {
			return fmt.Errorf("fmp: PlotConfig.Marks[%d] has no name", i)
		}
	}
	return nil
}

// markStyles are the shapes and colours of PlotConfig.Marks, in order.
var markStyles = []struct {
	shape svgplot.Shape
	color string
}{
	{svgplot.Cross, svgplot.Black}, {svgplot.Triangle, svgplot.Vermillion},
	{svgplot.Square, svgplot.ReddishPurple}, {svgplot.Diamond, svgplot.BluishGreen},
}

// WriteSVG draws the frontier as an SVG figure of two panels, validation
// (where the choice was made) and test, under a title that states the
// rule: accuracy (in percent) against the rule's criterion (ΔDP by
// default; any metrics.Criterion) in the units the commands' flags and
// tables use: a difference in percentage points (-bound 5 is 5 on the
// axis), a ratio as a ratio (-bound 0.8 is 0.8). A setting on which the
// criterion is undefined (a ratio of zero rates) is left out. One line
// per value of λs, every point labelled with its λf (settings with
// identical metrics, λf past saturation, drawn as one point labelled
// with the range; a label with no room beside its point is placed
// farther off with a leader line; no two texts overlap, so a label with
// no free place left in the axes is left out: frontier.csv lists every
// setting), the chosen point
// ringed, the rule's limit dashed on the validation panel, the
// majority-class accuracy (cfg.MajorityVal, cfg.MajorityTest) dotted,
// and cfg.Marks beside them. The legend sits outside the axes. It
// returns an error for an invalid cfg or a frontier without points, and
// the writer's error.
func (f *Frontier) WriteSVG(w io.Writer, cfg PlotConfig) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	if f == nil || len(f.Points) == 0 {
		return fmt.Errorf("fmp: Frontier.WriteSVG: no points")
	}
	if len(cfg.Marks) > len(markStyles) {
		return fmt.Errorf("fmp: Frontier.WriteSVG: %d marks, at most %d", len(cfg.Marks), len(markStyles))
	}
	var ls []float64
	for _, q := range f.Points {
		seen := false
		for _, s := range ls {
			seen = seen || s == q.Config.LambdaS
		}
		if !seen {
			ls = append(ls, q.Config.LambdaS)
		}
	}
	crit := f.Rule.Criterion
	// scale puts the criterion in the flags' units: points for a
	// difference, the ratio itself for a ratio.
	scale, xLabel := 100.0, crit.Title()+" (%)"
	if crit.IsRatio() {
		scale, xLabel = 1, crit.Title()
	}
	// at returns the point of a report: the criterion (in the flags'
	// units) and the accuracy in percent, and whether the criterion is
	// defined.
	// With more than two classes the point is the c-class report's (cls),
	// the criterion the rule chose by.
	at := func(rep *metrics.Report, cls *metrics.ClassReport) (x, y float64, ok bool) {
		if cls != nil {
			v, err := cls.Of(crit)
			return scale * v, 100 * cls.Accuracy, err == nil
		}
		v, err := crit.Of(*rep)
		return scale * v, 100 * rep.Accuracy, err == nil
	}
	if len(f.Points) > 0 && f.Points[0].ValClasses != nil {
		xLabel = crit.Title() + ", c classes (%)"
		if crit.IsRatio() {
			xLabel = crit.Title() + ", c classes"
		}
	}
	fig := svgplot.Figure{Title: "rule: " + svgplot.Escape(f.Rule.String()), Legend: svgplot.Legend{Title: "numbers at points: λ_f"}}
	const majorityColor = "#8A8A8A"
	var majorityNotes []string
	for _, part := range []string{"validation (choice)", "test"} {
		title := part
		if cfg.Title != "" {
			title = svgplot.Escape(cfg.Title) + ": " + part
		}
		p := svgplot.Panel{Title: title, XLabel: xLabel, YLabel: "accuracy (%)"}
		pick := func(val, test *metrics.Report) *metrics.Report {
			if part == "test" {
				return test
			}
			return val
		}
		pickClasses := func(val, test *metrics.ClassReport) *metrics.ClassReport {
			if part == "test" {
				return test
			}
			return val
		}
		for _, s := range ls {
			se := svgplot.Series{Name: fmt.Sprintf("FMP, λ_s = %g", s), KeepLabels: true}
			var first string // the first λf of the last point drawn
			for _, q := range f.Points {
				if q.Config.LambdaS != s {
					continue
				}
				x, y, ok := at(pick(&q.Val, &q.Test), pickClasses(q.ValClasses, q.TestClasses))
				if !ok {
					continue
				}
				lf := fmt.Sprintf("%g", q.Config.LambdaF)
				// Settings with the same metrics as the previous one (λf
				// past saturation) are one point, labelled with the range.
				if n := len(se.X); n > 0 && se.X[n-1] == x && se.Y[n-1] == y {
					se.Labels[n-1] = first + "–" + lf
					continue
				}
				se.X, se.Y, se.Labels, first = append(se.X, x), append(se.Y, y), append(se.Labels, lf), lf
			}
			if len(se.X) > 0 {
				p.Series = append(p.Series, se)
			}
		}
		best, label := f.Best(), "FMP chosen"
		if !f.Met() {
			label = "no setting met the rule: λ_f 0 kept"
		}
		if x, y, ok := at(pick(&best.Val, &best.Test), pickClasses(best.ValClasses, best.TestClasses)); ok {
			p.Marks = append(p.Marks, svgplot.Mark{X: x, Y: y, Shape: svgplot.Ring, Size: 7, Label: label})
		}
		for i, m := range cfg.Marks {
			rep := pick(m.Val, m.Test)
			if rep == nil {
				continue
			}
			x, y, ok := at(rep, pickClasses(m.ValClasses, m.TestClasses))
			if !ok {
				continue
			}
			st := markStyles[i]
			p.Marks = append(p.Marks, svgplot.Mark{X: x, Y: y, Shape: st.shape, Color: st.color, Label: svgplot.Escape(m.Name)})
		}
		if part != "test" {
			switch rule := f.Rule; rule.Goal {
			case selection.MostAccurate:
				op := "≤"
				if crit.IsRatio() {
					op = "≥"
				}
				p.Lines = []svgplot.RefLine{{Vertical: true, At: scale * rule.Bound, Label: fmt.Sprintf("rule: %s %s %.4g", crit.Title(), op, scale*rule.Bound)}}
			case selection.Fairest:
				floor := 100 * (f.Reference.Val.Accuracy - rule.MaxAccuracyLoss)
				p.Lines = []svgplot.RefLine{{At: floor, Label: fmt.Sprintf("rule: accuracy ≥ %.4g", floor)}}
			}
		}
		if maj := pick(&metrics.Report{Accuracy: cfg.MajorityVal}, &metrics.Report{Accuracy: cfg.MajorityTest}).Accuracy; maj > 0 {
			v := 100 * maj
			note := fmt.Sprintf("%s %.2f", map[bool]string{true: "test", false: "val"}[part == "test"], v)
			if near(p, v) {
				p.Lines = append(p.Lines, svgplot.RefLine{At: v, Label: fmt.Sprintf("majority class %.2f", v), Color: majorityColor})
			} else {
				note += " (below the axes)"
			}
			majorityNotes = append(majorityNotes, note)
		}
		fig.Panels = append(fig.Panels, p)
	}
	if len(majorityNotes) > 0 {
		name := "majority class: " + strings.Join(majorityNotes, ", ")
		if below := " (below the axes)"; strings.Count(name, below) == len(majorityNotes) {
			name = "majority class" + below + ": " + strings.ReplaceAll(strings.Join(majorityNotes, ", "), below, "")
		}
		fig.Legend.Extra = append(fig.Legend.Extra, svgplot.Series{Name: name,
			Dashed: true, NoMarkers: true, Color: majorityColor})
	}
	return fig.WriteSVG(w)
}

// near reports whether an accuracy v (percent) is close enough to what
// panel p draws to be drawn in it: at most the data's span (and at
// least 1 point) below the lowest accuracy drawn, or above it.
func near(p svgplot.Panel, v float64) bool {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, se := range p.Series {
		for _, y := range se.Y {
			lo, hi = math.Min(lo, y), math.Max(hi, y)
		}
	}
	for _, m := range p.Marks {
		lo, hi = math.Min(lo, m.Y), math.Max(hi, m.Y)
	}
	for _, l := range p.Lines {
		if !l.Vertical {
			lo, hi = math.Min(lo, l.At), math.Max(hi, l.At)
		}
	}
	if lo > hi {
		return true
	}
	return v >= lo-math.Max(hi-lo, 1)
}
