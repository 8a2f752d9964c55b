package main

import (
	"fmt"
	"image/color"
	"math"
	"os"
	"slices"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

var methodStyle = map[string]struct {
	color color.Color
	shape draw.GlyphDrawer
}{
	"regularizer": {color.RGBA{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff}, draw.CircleGlyph{}},
	"adversary":   {color.RGBA{R: 0xd6, G: 0x27, B: 0x28, A: 0xff}, draw.TriangleGlyph{}},
	"mixup":       {color.RGBA{R: 0x2c, G: 0xa0, B: 0x2c, A: 0xff}, draw.SquareGlyph{}},
	"fairgnn":     {color.RGBA{R: 0x17, G: 0xbe, B: 0xcf, A: 0xff}, draw.CrossGlyph{}},
	"nifty":       {color.RGBA{R: 0xbc, G: 0xbd, B: 0x22, A: 0xff}, draw.BoxGlyph{}},
	"fmp":         {color.RGBA{R: 0x94, G: 0x67, B: 0xbd, A: 0xff}, draw.PyramidGlyph{}},
	"fmp-post-s0": {color.RGBA{R: 0x94, G: 0x67, B: 0xbd, A: 0xff}, draw.PyramidGlyph{}},
	"fmp-post-s1": {color.RGBA{R: 0x8c, G: 0x56, B: 0x4b, A: 0xff}, draw.PlusGlyph{}},
	"thresholds":  {color.RGBA{R: 0xff, G: 0x7f, B: 0x0e, A: 0xff}, draw.RingGlyph{}},
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

// plotFronts draws one panel per backbone: every configuration's mean
// (ΔDP, accuracy) per method, the method's Pareto front as a line, and
// the plain run as a black cross.
func plotFronts(path, title string, o *options, rs []result, ps []point) error {
	maxDP, minAcc, maxAcc := 1.0, 100.0, 0.0
	for _, q := range ps {
		maxDP, minAcc, maxAcc = max(maxDP, q.dp), min(minAcc, q.acc), max(maxAcc, q.acc)
	}
	var row []*plot.Plot
	for _, m := range o.models {
		p := plot.New()
		runs := 0
		for _, q := range ps {
			if q.model == m && q.method == "plain" {
				runs = q.summary.Runs
			}
		}
		p.Title.Text = fmt.Sprintf("%s (%s%s)", m, seedsText(runs), fewerSeeds(rs, m, o.methods))
		if len(o.models) == 1 {
			p.Title.Text = title + " — " + p.Title.Text
		}
		p.X.Label.Text = "ΔDP (%)"
		p.Y.Label.Text = "accuracy (%)"
		p.Add(plotter.NewGrid())
		for _, meth := range o.methods {
			if !hasMethod(ps, m, meth) {
				continue
			}
			st := methodStyle[meth]
			pts := methodPoints(ps, m, meth)
			all := make(plotter.XYs, 0, len(pts))
			for _, q := range pts {
				if q.method == meth {
					all = append(all, plotter.XY{X: q.dp, Y: q.acc})
				}
			}
			sc, err := plotter.NewScatter(all)
			if err != nil {
				return err
			}
			sc.GlyphStyle.Color, sc.GlyphStyle.Shape, sc.GlyphStyle.Radius = st.color, st.shape, vg.Points(3)
			f := front(pts)
			fx := make(plotter.XYs, len(f))
			for i, q := range f {
				fx[i] = plotter.XY{X: q.dp, Y: q.acc}
			}
			ln, err := plotter.NewLine(fx)
			if err != nil {
				return err
			}
			ln.LineStyle.Color, ln.LineStyle.Width = st.color, vg.Points(1.2)
			p.Add(sc, ln)
			label := meth
			switch meth {
			case "fmp":
				label = "FMP backbone (a = lambda_f)"
			case "fmp-post-s0":
				label = "FMP, lambda_s 0"
			case "fmp-post-s1":
				label = "FMP, lambda_s 1"
			case "thresholds":
				label = "thresholds"
			}
			p.Legend.Add(label, sc, ln)
		}
		var plain plotter.XYs
		for _, q := range ps {
			if q.model == m && q.method == "plain" {
				plain = append(plain, plotter.XY{X: q.dp, Y: q.acc})
			}
		}
		pl, err := plotter.NewScatter(plain)
		if err != nil {
			return err
		}
		pl.GlyphStyle.Shape, pl.GlyphStyle.Radius = draw.CrossGlyph{}, vg.Points(5)
		pl.GlyphStyle.Color = color.Black
		p.Add(pl)
		p.Legend.Add("plain (a = 0)", pl)
		// Shared axes across panels; room on the right for the legend,
		// text after the symbols (a viewer with a wider font overflows the
		// panel, not the symbols).
		p.Legend.Top, p.Legend.Left = false, true
		p.Legend.XOffs = 2.6 * vg.Inch
		p.X.Min, p.X.Max = 0, 1.6*maxDP
		p.Y.Min, p.Y.Max = minAcc-1, maxAcc+1
		row = append(row, p)
	}
	width := vg.Length(len(row)) * 5 * vg.Inch
	height := 4 * vg.Inch
	var c vg.CanvasWriterTo = vgsvg.New(width, height)
	if strings.HasSuffix(path, ".png") {
		c = vgimg.PngCanvas{Canvas: vgimg.New(width, height)}
	}
	dc := draw.New(c)
	if len(row) > 1 {
		top := dc
		top.Min.Y = top.Max.Y - vg.Points(20)
		fnt := plot.DefaultFont
		fnt.Size = vg.Points(12)
		top.FillText(draw.TextStyle{Color: color.Black, Font: fnt, XAlign: draw.XCenter, YAlign: draw.YTop, Handler: plot.DefaultTextHandler},
			vg.Point{X: width / 2, Y: top.Max.Y}, title)
		dc.Max.Y -= vg.Points(20)
	}
	tiles := draw.Tiles{Rows: 1, Cols: len(row), PadX: vg.Points(10)}
	canvases := plot.Align([][]*plot.Plot{row}, tiles, dc)
	for i, p := range row {
		p.Draw(canvases[0][i])
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := c.WriteTo(f); err != nil {
		f.Close()
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return f.Close()
}

// methodLabel is a method's name in the plots' legends.
func methodLabel(meth string) string {
	switch meth {
	case "fmp":
		return "FMP backbone"
	case "fmp-post-s0":
		return "FMP, lambda_s 0"
	case "fmp-post-s1":
		return "FMP, lambda_s 1"
	}
	return meth
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

// plotRuntime draws the running-time figure: per backbone, one bar per
// method (plain training first) with its mean seconds per run on a log
// axis, the value written above each bar. Training strategies' bars are
// whole training runs; FMP's and the thresholds' are the post-processing
// of a trained plain run (the training itself is the plain bar).
func plotRuntime(path, title string, o *options, ps []point) error {
	// Training first (plain, then the strategies), post-processing last.
	rank := map[string]int{"plain": 0, "regularizer": 1, "adversary": 2, "mixup": 3, "fairgnn": 4, "nifty": 5, "fmp": 6, "fmp-post-s0": 7, "fmp-post-s1": 8, "thresholds": 9}
	methods := append([]string{"plain"}, o.methods...)
	slices.SortStableFunc(methods, func(a, b string) int { return rank[a] - rank[b] })
	type bar struct {
		group, slot int
		secs        float64
	}
	var bars []bar
	lo, hi := math.Inf(1), 0.0
	for g, m := range o.models {
		for k, meth := range methods {
			if s, ok := meanSeconds(ps, m, meth); ok {
				s = math.Max(s, 0.01) // the CSV keeps tenths of a second: 0.0 is "under 0.05 s"
				bars = append(bars, bar{g, k, s})
				lo, hi = math.Min(lo, s), math.Max(hi, s)
			}
		}
	}
	if len(bars) == 0 {
		return fmt.Errorf("runtime plot %s: no runs", path)
	}
	p := plot.New()
	p.Title.Text = title
	p.Y.Label.Text = "seconds per run (log scale)"
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = plot.LogTicks{Prec: -1}
	base := math.Pow(10, math.Floor(math.Log10(lo)))
	p.Y.Min, p.Y.Max = base, hi*300 // the top decades hold the legend
	p.Add(plotter.NewGrid())
	width := 0.8 / float64(len(methods))
	var ticks []plot.Tick
	for g, m := range o.models {
		ticks = append(ticks, plot.Tick{Value: float64(g), Label: m})
	}
	p.X.Tick.Marker = plot.ConstantTicks(ticks)
	p.X.Min, p.X.Max = -0.5, float64(len(o.models))-0.5
	var labels plotter.XYLabels
	for k, meth := range methods {
		var rings []plotter.XYer
		for _, b := range bars {
			if b.slot != k {
				continue
			}
			x0 := float64(b.group) - 0.4 + float64(k)*width
			rings = append(rings, plotter.XYs{{X: x0, Y: base}, {X: x0 + width, Y: base}, {X: x0 + width, Y: b.secs}, {X: x0, Y: b.secs}})
			labels.XYs = append(labels.XYs, plotter.XY{X: x0 + width/2, Y: b.secs * 1.15})
			labels.Labels = append(labels.Labels, secondsText(b.secs))
		}
		if len(rings) == 0 {
			continue
		}
		poly, err := plotter.NewPolygon(rings...)
		if err != nil {
			return err
		}
		c := color.Color(color.Gray{Y: 0x60})
		if st, ok := methodStyle[meth]; ok {
			c = st.color
		}
		poly.Color, poly.LineStyle.Width = c, 0
		p.Add(poly)
		p.Legend.Add(methodLabel(meth), poly)
	}
	lb, err := plotter.NewLabels(labels)
	if err != nil {
		return err
	}
	for i := range lb.TextStyle {
		lb.TextStyle[i].XAlign, lb.TextStyle[i].Font.Size = draw.XCenter, vg.Points(7)
	}
	p.Add(lb)
	p.Legend.Top, p.Legend.Left = true, true
	w := vg.Length(2+2*len(o.models)) * vg.Inch
	return p.Save(w, 4*vg.Inch, path)
}

// secondsText writes a bar's value: tenths below 10 s, whole seconds
// above, "<0.1" for the CSV's 0.0.
func secondsText(s float64) string {
	if s < 0.05 {
		return "<0.1"
	}
	if s < 10 {
		return fmt.Sprintf("%.1f", s)
	}
	return fmt.Sprintf("%.0f", s)
}
