package fmp

import (
	"fmt"
	"io"

	"github.com/fairmp/fairmp/internal/svgplot"
	"github.com/fairmp/fairmp/metrics"
)

// PlotConfig configures [Frontier.WriteSVG].
type PlotConfig struct {
	// Title prefixes the two panels' titles (a data set's name, say).
	// Plain text. Default "".
	Title string
	// Marks are other methods drawn beside the frontier as single
	// markers, such as the backbone alone and per-group thresholds.
	Marks []PlotMark
}

// PlotMark is a method drawn beside the frontier: its validation and test
// metrics (nil: not drawn in that panel) under a plain-text name.
type PlotMark struct {
	Name      string
	Val, Test *metrics.Report
}

// DefaultPlotConfig returns no title and no marks.
func DefaultPlotConfig() PlotConfig { return PlotConfig{} }

// Validate checks that every mark has a name.
func (c PlotConfig) Validate() error {
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
// (where the choice was made) and test: accuracy against the rule's
// criterion (ΔDP by default; any metrics.Criterion, in percent: a DP
// ratio of 0.8 is drawn at 80), in percent; a setting on which the
// criterion is undefined (a ratio of zero rates) is left out;
// one line per value of λs with each point labelled with its λf (settings
// with identical metrics, λf past saturation, drawn as one point labelled
// with the range), the chosen point ringed, the rule's limit dashed on the
// validation panel, and cfg.Marks beside them. The legend sits outside
// the axes. It returns an error for an invalid cfg or a frontier without
// points, and the writer's error.
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
	// at returns the point of a report: the criterion and the accuracy in
	// percent, and whether the criterion is defined.
	at := func(rep *metrics.Report) (x, y float64, ok bool) {
		v, err := crit.Of(*rep)
		return 100 * v, 100 * rep.Accuracy, err == nil
	}
	fig := svgplot.Figure{Legend: svgplot.Legend{Title: "numbers at points: λ_f"}}
	for _, part := range []string{"validation (choice)", "test"} {
		title := part
		if cfg.Title != "" {
			title = svgplot.Escape(cfg.Title) + ": " + part
		}
		p := svgplot.Panel{Title: title, XLabel: crit.Title() + " (%)", YLabel: "accuracy (%)"}
		pick := func(val, test *metrics.Report) *metrics.Report {
			if part == "test" {
				return test
			}
			return val
		}
		for _, s := range ls {
			se := svgplot.Series{Name: fmt.Sprintf("FMP, λ_s = %g", s)}
			var first string // the first λf of the last point drawn
			for _, q := range f.Points {
				if q.Config.LambdaS != s {
					continue
				}
				x, y, ok := at(pick(&q.Val, &q.Test))
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
			p.Series = append(p.Series, se)
		}
		best, label := f.Best(), "FMP chosen"
		if !f.Met() {
			label = "no setting met the rule: λ_f 0 kept"
		}
		if x, y, ok := at(pick(&best.Val, &best.Test)); ok {
			p.Marks = append(p.Marks, svgplot.Mark{X: x, Y: y, Shape: svgplot.Ring, Size: 7, Label: label})
		}
		for i, m := range cfg.Marks {
			rep := pick(m.Val, m.Test)
			if rep == nil {
				continue
			}
			x, y, ok := at(rep)
			if !ok {
				continue
			}
			st := markStyles[i]
			p.Marks = append(p.Marks, svgplot.Mark{X: x, Y: y, Shape: st.shape, Color: st.color, Label: svgplot.Escape(m.Name)})
		}
		if part != "test" {
			switch rule := f.Rule; rule.Goal {
			case metrics.MostAccurate:
				op := "≤"
				if crit.IsRatio() {
					op = "≥"
				}
				p.Lines = []svgplot.RefLine{{Vertical: true, At: 100 * rule.Bound, Label: fmt.Sprintf("rule: %s %s %.4g", crit.Title(), op, 100*rule.Bound)}}
			case metrics.Fairest:
				floor := 100 * (f.Reference.Val.Accuracy - rule.MaxAccuracyLoss)
				p.Lines = []svgplot.RefLine{{At: floor, Label: fmt.Sprintf("rule: accuracy ≥ %.4g", floor)}}
			}
		}
		fig.Panels = append(fig.Panels, p)
	}
	return fig.WriteSVG(w)
}
