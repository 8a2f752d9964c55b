package main

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/fairmp/fairmp/internal/svgplot"
)

// methodStyle is each method's colour and marker in both figures.
var methodStyle = map[string]struct {
	color string
	shape svgplot.Shape
}{
	"plain":       {svgplot.Black, svgplot.Cross},
	"regularizer": {svgplot.Blue, svgplot.Circle},
	"adversary":   {svgplot.SkyBlue, svgplot.Square},
	"mixup":       {svgplot.BluishGreen, svgplot.TriangleDown},
	"fairgnn":     {svgplot.Yellow, svgplot.Square},
	"nifty":       {svgplot.Orange, svgplot.Circle},
	"fmp":         {svgplot.ReddishPurple, svgplot.Diamond},
	"fmp-post-s0": {svgplot.ReddishPurple, svgplot.Diamond},
	"fmp-post-s1": {svgplot.Orange, svgplot.Diamond},
	"thresholds":  {svgplot.Vermillion, svgplot.Triangle},
}

// methodRank orders the methods in the legends: training first (plain,
// then the strategies), post-processing last.
var methodRank = map[string]int{"plain": 0, "regularizer": 1, "adversary": 2, "mixup": 3, "fairgnn": 4, "nifty": 5, "fmp": 6, "fmp-post-s0": 7, "fmp-post-s1": 8, "thresholds": 9}

// style returns meth's colour and marker (a grey circle for a method
// without one).
func style(meth string) (string, svgplot.Shape) {
	if st, ok := methodStyle[meth]; ok {
		return st.color, st.shape
	}
	return "#777777", svgplot.Circle
}

// isFMP reports whether meth's α is FMP's λf.
func isFMP(meth string) bool {
	return meth == "fmp" || meth == "fmp-post-s0" || meth == "fmp-post-s1"
}

// fewerSeeds names model's methods whose runs cover other seeds than its
// plain runs (runs merged with -from-csv; the summary's criterion), as
// "; adversary, mixup: one seed", or returns "".
func fewerSeeds(rs []result, model string, methods []string) string {
	plain := seedSet(rs, model, "plain")
	var counts []int
	names := map[int][]string{}
	for _, meth := range methods {
		s := seedSet(rs, model, meth)
		if len(s) == 0 || slices.Equal(s, plain) {
			continue
		}
		if names[len(s)] == nil {
			counts = append(counts, len(s))
		}
		names[len(s)] = append(names[len(s)], meth)
	}
	var b strings.Builder
	for _, n := range counts {
		text := "one seed"
		if n > 1 {
			text = fmt.Sprintf("%d seeds", n)
		}
		fmt.Fprintf(&b, "; %s: %s", strings.Join(names[n], ", "), text)
	}
	return b.String()
}

// labelled is a point of a panel with the text drawn beside it ("" for
// none): FMP's λf, or the range of λf of settings with the same metrics.
type labelled struct {
	point
	text string
}

// settings returns model's points of meth with their labels, the plain
// point (the α = 0 of every method) first and unlabelled. FMP's settings
// are labelled with their λf; consecutive λf with identical metrics (λf
// past saturation) are one point labelled with the range, "1–16".
func settings(ps []point, model, meth string) []labelled {
	var out []labelled
	var own []point
	for _, q := range methodPoints(ps, model, meth) {
		if q.method == "plain" {
			out = append(out, labelled{point: q})
		} else {
			own = append(own, q)
		}
	}
	slices.SortStableFunc(own, func(a, b point) int {
		switch {
		case a.alpha < b.alpha:
			return -1
		case a.alpha > b.alpha:
			return 1
		}
		return 0
	})
	drawn := false // whether out ends with one of own's points
	for _, q := range own {
		text := ""
		if isFMP(meth) {
			text = strconv.FormatFloat(q.alpha, 'g', -1, 64)
		}
		if n := len(out) - 1; drawn && out[n].dp == q.dp && out[n].acc == q.acc {
			if text != "" {
				from, _, _ := strings.Cut(out[n].text, "–")
				out[n].text = from + "–" + text
			}
			continue
		}
		out = append(out, labelled{point: q, text: text})
		drawn = true
	}
	return out
}

// frontOf splits pts into the method's Pareto front (front's order:
// ΔDP rising) and the rest, in pts' order.
func frontOf(pts []labelled) (on, off []labelled) {
	plain := make([]point, len(pts))
	for k, q := range pts {
		plain[k] = q.point
	}
	f := front(plain)
	used := make([]bool, len(pts))
	for _, q := range f {
		for k := range pts {
			if !used[k] && pts[k].point == q {
				used[k] = true
				on = append(on, pts[k])
				break
			}
		}
	}
	for k := range pts {
		if !used[k] {
			off = append(off, pts[k])
		}
	}
	return on, off
}

// span returns the range of vs plus 5% each side (the range svgplot
// would take for one panel), so that panels can share their axes.
func span(vs []float64) svgplot.Range {
	lo, hi := slices.Min(vs), slices.Max(vs)
	d := 0.05 * (hi - lo)
	if d == 0 {
		d = 0.5
	}
	return svgplot.Range{Min: lo - d, Max: hi + d}
}

// plotFronts draws one panel per backbone (two a row): every setting's
// mean test (ΔDP, accuracy) per method, the method's Pareto front as a
// line with the settings on it, the others as small markers, FMP's
// settings labelled with their λf, the plain run as a black cross and a
// dashed line one accuracy point below it (the summary's criterion). The
// panels share their ΔDP axis; each has its own accuracy axis.
func plotFronts(path, title string, o *options, rs []result, ps []point) error {
	var dps []float64
	for _, q := range ps {
		dps = append(dps, q.dp)
	}
	if len(ps) == 0 {
		return fmt.Errorf("plot %s: no runs", path)
	}
	fig := svgplot.Figure{
		Title: svgplot.Escape(title),
		Legend: svgplot.Legend{Title: "numbers at points: λ_f", Extra: []svgplot.Series{
			{Name: "setting off the front", NoLine: true, Size: 2.5},
			{Name: "plain run − 1 accuracy point", Dashed: true, NoMarkers: true, Color: "#555555"},
		}},
	}
	methods := slices.Clone(o.methods)
	slices.SortStableFunc(methods, func(a, b string) int { return methodRank[a] - methodRank[b] })
	if len(o.models) > 2 {
		fig.Columns = 2
	}
	for _, m := range o.models {
		runs := 0
		for _, q := range ps {
			if q.model == m && q.method == "plain" {
				runs = q.summary.Runs
			}
		}
		p := svgplot.Panel{
			Title:  svgplot.Escape(fmt.Sprintf("%s (%s%s)", m, seedsText(runs), fewerSeeds(rs, m, o.methods))),
			XLabel: "ΔDP (%)", YLabel: "accuracy (%)", XRange: span(dps),
		}
		for _, meth := range methods {
			if !hasMethod(ps, m, meth) {
				continue
			}
			c, sh := style(meth)
			on, off := frontOf(settings(ps, m, meth))
			line := svgplot.Series{Name: methodLabel(meth), Color: c, Shape: sh}
			for _, q := range on {
				line.X, line.Y, line.Labels = append(line.X, q.dp), append(line.Y, q.acc), append(line.Labels, q.text)
			}
			p.Series = append(p.Series, line)
			if len(off) > 0 {
				dots := svgplot.Series{Color: c, Shape: sh, NoLine: true, Size: 2.5}
				for _, q := range off {
					dots.X, dots.Y, dots.Labels = append(dots.X, q.dp), append(dots.Y, q.acc), append(dots.Labels, q.text)
				}
				p.Series = append(p.Series, dots)
			}
		}
		for _, q := range ps {
			if q.model == m && q.method == "plain" {
				c, sh := style("plain")
				p.Marks = append(p.Marks, svgplot.Mark{X: q.dp, Y: q.acc, Shape: sh, Color: c, Label: methodLabel("plain")})
				p.Lines = append(p.Lines, svgplot.RefLine{At: q.acc - 1})
			}
		}
		fig.Panels = append(fig.Panels, p)
	}
	return writeSVG(path, &fig)
}

// writeSVG writes fig to path.
func writeSVG(path string, fig *svgplot.Figure) error {
	var b bytes.Buffer
	if err := fig.WriteSVG(&b); err != nil {
		return fmt.Errorf("plot %s: %w", path, err)
	}
	return os.WriteFile(path, b.Bytes(), 0o644)
}

// methodLabel is a method's name in the figures' legends (markup).
func methodLabel(meth string) string {
	switch meth {
	case "plain":
		return "plain run (α = 0)"
	case "fmp":
		return "FMP backbone (λ_f sweep)"
	case "fmp-post-s0":
		return "FMP on it, λ_s = 0"
	case "fmp-post-s1":
		return "FMP on it, λ_s = 1"
	case "mixup":
		return "fair mixup"
	}
	return svgplot.Escape(meth)
}

// meanSeconds is the summary's "s a run" of a backbone's method: the
// mean over its settings of each setting's mean seconds over seeds. ok is
// false when the method has no setting on that backbone.
func meanSeconds(ps []point, model, method string) (secs float64, ok bool) {
	n := 0
	for _, q := range ps {
		if q.model == model && q.method == method {
			secs += q.seconds
			n++
		}
	}
	if n == 0 {
		return 0, false
	}
	return secs / float64(n), true
}

// plotRuntime draws the running-time figure, a dot plot: per backbone,
// one marker per method (plain training first) at its mean seconds per
// run on a log axis, labelled with the value. Training strategies' dots
// are whole training runs; FMP's and the thresholds' are the
// post-processing of a trained plain run (the training itself is the
// plain dot).
func plotRuntime(path, title string, o *options, ps []point) error {
	methods := append([]string{"plain"}, o.methods...)
	slices.SortStableFunc(methods, func(a, b string) int { return methodRank[a] - methodRank[b] })
	p := svgplot.Panel{
		Title:  "training: plain and strategies; FMP and thresholds: post-processing a trained plain run",
		YLabel: "seconds per run (log scale)", LogY: true,
	}
	for g, m := range o.models {
		p.XTicks = append(p.XTicks, svgplot.Tick{At: float64(g), Label: svgplot.Escape(m)})
	}
	width := 0.8 / float64(len(methods)) // of a method's slot in a backbone's group
	for k, meth := range methods {
		c, sh := style(meth)
		se := svgplot.Series{Name: methodLabel(meth), Color: c, Shape: sh, NoLine: true}
		if meth == "plain" {
			se.Name = "plain training"
		}
		for g, m := range o.models {
			if s, ok := meanSeconds(ps, m, meth); ok {
				se.X = append(se.X, float64(g)-0.4+width*(float64(k)+0.5))
				// The CSV keeps tenths of a second: a mean of 0.0 is "under
				// 0.05 s", drawn at 0.01.
				se.Y, se.Labels = append(se.Y, math.Max(s, 0.01)), append(se.Labels, secondsText(s))
			}
		}
		if len(se.X) > 0 {
			p.Series = append(p.Series, se)
		}
	}
	if len(p.Series) == 0 {
		return fmt.Errorf("runtime plot %s: no runs", path)
	}
	fig := svgplot.Figure{
		Title:     svgplot.Escape(title),
		Panels:    []svgplot.Panel{p},
		Legend:    svgplot.Legend{Title: "numbers at points: seconds"},
		PlotWidth: math.Max(320, 200*float64(len(o.models))),
	}
	return writeSVG(path, &fig)
}

// secondsText writes a dot's value: tenths below 10 s, whole seconds
// above, "<0.1" below 0.05 (the CSV's 0.0).
func secondsText(s float64) string {
	if s < 0.05 {
		return "<0.1"
	}
	if s < 10 {
		return fmt.Sprintf("%.1f", s)
	}
	return fmt.Sprintf("%.0f", s)
}
