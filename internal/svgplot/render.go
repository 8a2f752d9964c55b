package svgplot

import (
	"bytes"
	"fmt"
	"hash/fnv"
	"math"
	"strconv"
)

// Layout constants, in pixels.
const (
	defaultPlotW = 320.0
	defaultPlotH = 240.0
	defaultFont  = 12.0
	margin       = 8.0  // canvas edge to the nearest content
	panelGap     = 24.0 // between one panel's boxes and the next's
	legendGap    = 16.0 // between the panels and the legend
	legendPad    = 8.0  // legend frame to its content
	tickLen      = 4.0
	swatchW      = 28.0 // a legend entry's line
	capHalf      = 3.0  // half an error bar's cap
	fontFamily   = "Helvetica, Arial, 'DejaVu Sans', 'Liberation Sans', sans-serif"
	axisColor    = "#333333"
	gridColor    = "#E5E5E5"
	refColor     = "#555555"
	leaderColor  = "#999999"
)

// rect is a box from (x0, y0) to (x1, y1), y downwards.
type rect struct{ x0, y0, x1, y1 float64 }

func (r rect) union(o rect) rect {
	return rect{math.Min(r.x0, o.x0), math.Min(r.y0, o.y0), math.Max(r.x1, o.x1), math.Max(r.y1, o.y1)}
}

func (r rect) overlaps(o rect) bool {
	return r.x0 < o.x1 && o.x0 < r.x1 && r.y0 < o.y1 && o.y0 < r.y1
}

func (r rect) contains(o rect) bool {
	return r.x0 <= o.x0 && o.x1 <= r.x1 && r.y0 <= o.y0 && o.y1 <= r.y1
}

// label is a text placed at (x, y), a point of its baseline.
type label struct {
	x, y   float64
	runs   []run
	size   float64
	anchor string // start, middle or end
	class  string
	rotate bool // turned a quarter left about (x, y): it reads upwards
	halo   bool // a white outline keeps it legible over lines
}

// box is the label's estimated extent.
func (t label) box() rect {
	w := textWidth(t.runs, t.size)
	u := 0.0 // the text's left end, from x along the baseline
	switch t.anchor {
	case "middle":
		u = -w / 2
	case "end":
		u = -w
	}
	d := descent
	if hasSub(t.runs) {
		d = subDescent
	}
	if t.rotate {
		return rect{t.x - ascent*t.size, t.y - u - w, t.x + d*t.size, t.y - u}
	}
	return rect{t.x + u, t.y - ascent*t.size, t.x + u + w, t.y + d*t.size}
}

// marker is a drawn marker, centred at (x, y).
type marker struct {
	x, y, r float64
	shape   Shape
	color   string
	hidden  bool // a point of a series drawn without markers
}

// box is the marker's extent, its outline included.
func (m marker) box() rect {
	e := m.r + 1
	switch m.shape {
	case Triangle, TriangleDown:
		e = 1.2*m.r + 1
	case Diamond:
		e = 1.25*m.r + 1
	}
	return rect{m.x - e, m.y - e, m.x + e, m.y + e}
}

// polyline is a drawn line through points.
type polyline struct {
	pts    [][2]float64
	color  string
	dashed bool
}

// panelLayout is a panel ready to draw: everything in canvas
// coordinates once placed, its axes' top left at (ox, oy).
type panelLayout struct {
	ox, oy, w, h float64
	x, y         axis
	refs, lines  []polyline
	bars         []polyline // error bars and their caps
	leaders      []polyline // from a point to its label placed farther off
	markers      []marker
	texts        []label
	box          rect // the axes and all texts
}

// shift moves everything in the panel by (dx, dy).
func (p *panelLayout) shift(dx, dy float64) {
	p.ox, p.oy = p.ox+dx, p.oy+dy
	p.box = rect{p.box.x0 + dx, p.box.y0 + dy, p.box.x1 + dx, p.box.y1 + dy}
	for _, ls := range [][]polyline{p.refs, p.lines, p.bars, p.leaders} {
		for _, l := range ls {
			for k := range l.pts {
				l.pts[k][0] += dx
				l.pts[k][1] += dy
			}
		}
	}
	for k := range p.markers {
		p.markers[k].x += dx
		p.markers[k].y += dy
	}
	for k := range p.texts {
		p.texts[k].x += dx
		p.texts[k].y += dy
	}
}

// entry is a legend entry: a marker, on a line for a series.
type entry struct {
	runs   []run
	line   bool
	dashed bool
	m      marker
}

// sizes are the figure's dimensions after defaults.
type sizes struct {
	w, h, font, title, tick, note, figTitle float64
}

func (f *Figure) sizes() (sizes, error) {
	s := sizes{w: f.PlotWidth, h: f.PlotHeight, font: f.FontSize}
	for _, v := range []struct {
		name string
		v    *float64
		def  float64
	}{{"PlotWidth", &s.w, defaultPlotW}, {"PlotHeight", &s.h, defaultPlotH}, {"FontSize", &s.font, defaultFont}} {
		if !finite(*v.v) || *v.v < 0 {
			return s, fmt.Errorf("svgplot: Figure.%s = %v, want a finite size ≥ 0 (0 for the default)", v.name, *v.v)
		}
		if *v.v == 0 {
			*v.v = v.def
		}
	}
	s.title, s.tick, s.note, s.figTitle = 1.15*s.font, 0.9*s.font, 0.85*s.font, 1.3*s.font
	return s, nil
}

// render draws the figure into b.
func (f *Figure) render(b *bytes.Buffer) error {
	if len(f.Panels) == 0 {
		return fmt.Errorf("svgplot: the figure has no panels")
	}
	s, err := f.sizes()
	if err != nil {
		return err
	}
	if f.Legend.Position < LegendRight || f.Legend.Position > LegendNone {
		return fmt.Errorf("svgplot: Legend.Position = %d, want LegendRight, LegendBelow or LegendNone", f.Legend.Position)
	}
	legendTitle, err := parseMarkup(f.Legend.Title)
	if err != nil {
		return fmt.Errorf("svgplot: Legend.Title %q %v", f.Legend.Title, err)
	}
	figTitle, err := parseMarkup(f.Title)
	if err != nil {
		return fmt.Errorf("svgplot: Title %q %v", f.Title, err)
	}
	if f.Columns < 0 {
		return fmt.Errorf("svgplot: Columns = %d, want ≥ 0 (0 for one row)", f.Columns)
	}
	var panels []*panelLayout
	var entries []entry
	seen := map[string]bool{}
	addEntries := func(es []entry) {
		for _, e := range es {
			key := fmt.Sprintf("%v|%v|%v|%v|%v|%v|%v", e.runs, e.line, e.dashed, e.m.shape, e.m.color, e.m.r, e.m.hidden)
			if !seen[key] {
				seen[key] = true
				entries = append(entries, e)
			}
		}
	}
	for i := range f.Panels {
		p, es, err := layoutPanel(i, &f.Panels[i], s)
		if err != nil {
			return err
		}
		panels = append(panels, p)
		addEntries(es)
	}
	for j, se := range f.Legend.Extra {
		what := fmt.Sprintf("svgplot: Legend.Extra[%d] %q", j, se.Name)
		if len(se.X) > 0 || len(se.Y) > 0 || se.Labels != nil || se.YLo != nil || se.YHi != nil {
			return fmt.Errorf("%s has points, labels or error bars, want a style only", what)
		}
		if err := checkStyle(se); err != nil {
			return fmt.Errorf("%s %v", what, err)
		}
		runs, err := parseMarkup(se.Name)
		if err != nil {
			return fmt.Errorf("%s Name %v", what, err)
		}
		c := se.Color
		if c == "" {
			c = Black
		}
		if len(runs) > 0 {
			addEntries([]entry{seriesEntry(runs, se, c)})
		}
	}
	// The figure's title on top, then the panels in rows of cols, the
	// axes of a row at one height and those of a column at one x; each
	// column as wide as its widest panel's texts reach, each row as tall.
	top := margin
	var title *label
	if len(figTitle) > 0 {
		title = &label{y: margin + ascent*s.figTitle, runs: figTitle, size: s.figTitle, anchor: "middle", class: "figtitle"}
		top = margin + (ascent+descentOf(figTitle))*s.figTitle + 8
	}
	cols := f.Columns
	if cols == 0 || cols > len(panels) {
		cols = len(panels)
	}
	rows := (len(panels) + cols - 1) / cols
	left, right, above, below := make([]float64, cols), make([]float64, cols), make([]float64, rows), make([]float64, rows)
	for i, p := range panels { // laid out with the axes' top left at (0, 0)
		c, r := i%cols, i/cols
		left[c], right[c] = math.Max(left[c], -p.box.x0), math.Max(right[c], p.box.x1)
		above[r], below[r] = math.Max(above[r], -p.box.y0), math.Max(below[r], p.box.y1)
	}
	all := rect{margin, top, margin, top}
	for i, p := range panels {
		c, r := i%cols, i/cols
		x, y := margin+left[c], top+above[r]
		for k := 0; k < c; k++ {
			x += left[k] + right[k] + panelGap
		}
		for k := 0; k < r; k++ {
			y += above[k] + below[k] + panelGap
		}
		p.shift(x, y)
		all = all.union(p.box)
	}
	if title != nil {
		title.x = (all.x0 + all.x1) / 2
		if b := title.box(); b.x0 < margin {
			title.x += margin - b.x0
		}
		all = all.union(title.box())
	}
	var leg *legendLayout
	if len(entries) > 0 && f.Legend.Position != LegendNone {
		if f.Legend.Position == LegendRight {
			leg = layoutLegend(entries, legendTitle, s.font, all.x1+legendGap, panels[0].oy, math.Inf(1))
		} else {
			leg = layoutLegend(entries, legendTitle, s.font, margin, all.y1+legendGap, all.x1-margin)
		}
		all = all.union(leg.frame)
	}
	width, height := all.x1+margin, all.y1+margin
	fmt.Fprintf(b, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n")
	fmt.Fprintf(b, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%s\" height=\"%s\" viewBox=\"0 0 %s %s\" font-family=\"%s\" font-size=\"%s\">\n",
		num(width), num(height), num(width), num(height), fontFamily, num(s.font))
	fmt.Fprintf(b, "<rect width=\"%s\" height=\"%s\" fill=\"#FFFFFF\"/>\n<defs>\n", num(width), num(height))
	// Clip ids unique to the figure, so that several figures inlined in
	// one HTML page (whose ids share one namespace) clip each its own
	// panels: the same figure, the same ids.
	h := fnv.New32a()
	fmt.Fprintf(h, "%s|%s|%s|%d", f.Title, num(width), num(height), len(panels))
	for _, p := range f.Panels {
		fmt.Fprintf(h, "|%s|%d", p.Title, len(p.Series))
	}
	clipID := func(i int) string { return fmt.Sprintf("svgplot-%08x-clip-%d", h.Sum32(), i) }
	for i, p := range panels {
		fmt.Fprintf(b, "<clipPath id=\"%s\"><rect x=\"%s\" y=\"%s\" width=\"%s\" height=\"%s\"/></clipPath>\n", clipID(i), num(p.ox), num(p.oy), num(p.w), num(p.h))
	}
	b.WriteString("</defs>\n")
	if title != nil {
		drawText(b, *title)
	}
	for i, p := range panels {
		drawPanel(b, clipID(i), p)
	}
	if leg != nil {
		fmt.Fprintf(b, "<g class=\"legend\">\n<rect class=\"legend\" x=\"%s\" y=\"%s\" width=\"%s\" height=\"%s\" fill=\"#FFFFFF\" stroke=\"#BBBBBB\"/>\n",
			num(leg.frame.x0), num(leg.frame.y0), num(leg.frame.x1-leg.frame.x0), num(leg.frame.y1-leg.frame.y0))
		for _, l := range leg.lines {
			drawLine(b, l, 1.8)
		}
		for _, m := range leg.markers {
			drawMarker(b, m)
		}
		for _, t := range leg.texts {
			drawText(b, t)
		}
		b.WriteString("</g>\n")
	}
	b.WriteString("</svg>\n")
	return nil
}

// at returns t placed at (x, y) with the given anchor.
func at(t label, x, y float64, anchor string) label {
	t.x, t.y, t.anchor = x, y, anchor
	return t
}

// segmentHits reports whether the segment s (x0, y0, x1, y1) meets r
// (Liang–Barsky clipping).
func segmentHits(s [4]float64, r rect) bool {
	t0, t1 := 0.0, 1.0
	dx, dy := s[2]-s[0], s[3]-s[1]
	for _, c := range [4][2]float64{{-dx, s[0] - r.x0}, {dx, r.x1 - s[0]}, {-dy, s[1] - r.y0}, {dy, r.y1 - s[1]}} {
		p, q := c[0], c[1]
		if p == 0 {
			if q < 0 {
				return false
			}
			continue
		}
		t := q / p
		if p < 0 {
			t0 = math.Max(t0, t)
		} else {
			t1 = math.Min(t1, t)
		}
		if t0 > t1 {
			return false
		}
	}
	return true
}

// legendLayout is a placed legend.
type legendLayout struct {
	frame   rect
	texts   []label
	markers []marker
	lines   []polyline
}

// layoutLegend places the entries in a frame whose top left is (x0, y0):
// one entry a row, or, when maxW is finite, in rows up to maxW wide.
func layoutLegend(entries []entry, title []run, font, x0, y0, maxW float64) *legendLayout {
	l := &legendLayout{}
	rowH := 1.8 * font
	for _, e := range entries {
		rowH = math.Max(rowH, 2*(e.m.box().y1-e.m.y)+4)
	}
	y := y0 + legendPad
	right := x0 + legendPad
	if len(title) > 0 {
		t := label{x: x0 + legendPad, y: y + ascent*font, runs: title, size: font, anchor: "start", class: "legend"}
		l.texts = append(l.texts, t)
		right = math.Max(right, t.box().x1)
		y += rowH
	}
	x := x0 + legendPad
	for k, e := range entries {
		w := swatchW + 6 + textWidth(e.runs, font)
		if k > 0 && (math.IsInf(maxW, 1) || x+w > x0+maxW-legendPad) {
			x, y = x0+legendPad, y+rowH
		}
		cy := y + rowH/2
		if e.line {
			l.lines = append(l.lines, polyline{pts: [][2]float64{{x, cy}, {x + swatchW, cy}}, color: e.m.color, dashed: e.dashed})
		}
		m := e.m
		m.x, m.y = x+swatchW/2, cy
		l.markers = append(l.markers, m)
		t := label{x: x + swatchW + 6, y: cy + 0.35*font, runs: e.runs, size: font, anchor: "start", class: "legend"}
		l.texts = append(l.texts, t)
		right = math.Max(right, t.box().x1)
		x += w + 18
	}
	l.frame = rect{x0, y0, right + legendPad, y + rowH + legendPad}
	return l
}

// num prints a coordinate to a hundredth of a pixel.
func num(v float64) string {
	s := strconv.FormatFloat(math.Round(v*100)/100, 'f', -1, 64)
	if s == "-0" {
		return "0"
	}
	return s
}

// drawPanel writes a panel, clipped by the clip path of id clip: grid, ticks, reference lines, the data
// clipped to the axes, the frame and the texts.
func drawPanel(b *bytes.Buffer, clip string, p *panelLayout) {
	fmt.Fprintf(b, "<g class=\"panel\">\n")
	var grid, ticks bytes.Buffer
	for _, v := range p.x.ticks {
		x := num(p.ox + p.x.pos(v, p.w))
		fmt.Fprintf(&grid, "M%s %sV%s", x, num(p.oy), num(p.oy+p.h))
		fmt.Fprintf(&ticks, "M%s %sv%s", x, num(p.oy+p.h), num(tickLen))
	}
	for _, v := range p.y.ticks {
		y := num(p.oy + p.h - p.y.pos(v, p.h))
		fmt.Fprintf(&grid, "M%s %sH%s", num(p.ox), y, num(p.ox+p.w))
		fmt.Fprintf(&ticks, "M%s %sh%s", num(p.ox), y, num(-tickLen))
	}
	fmt.Fprintf(b, "<path class=\"grid\" d=\"%s\" stroke=\"%s\" fill=\"none\"/>\n", grid.String(), gridColor)
	fmt.Fprintf(b, "<path class=\"ticks\" d=\"%s\" stroke=\"%s\" fill=\"none\"/>\n", ticks.String(), axisColor)
	fmt.Fprintf(b, "<g clip-path=\"url(#%s)\">\n", clip)
	for _, l := range p.refs {
		drawLine(b, l, 1.2)
	}
	for _, l := range p.lines {
		drawLine(b, l, 1.8)
	}
	for _, l := range p.bars {
		drawLine(b, l, 1.2)
	}
	for _, l := range p.leaders {
		drawLine(b, l, 0.8)
	}
	for _, m := range p.markers {
		drawMarker(b, m)
	}
	b.WriteString("</g>\n")
	fmt.Fprintf(b, "<rect class=\"plotarea\" x=\"%s\" y=\"%s\" width=\"%s\" height=\"%s\" fill=\"none\" stroke=\"%s\"/>\n", num(p.ox), num(p.oy), num(p.w), num(p.h), axisColor)
	for _, t := range p.texts {
		drawText(b, t)
	}
	b.WriteString("</g>\n")
}

func drawLine(b *bytes.Buffer, l polyline, width float64) {
	b.WriteString("<polyline points=\"")
	for k, p := range l.pts {
		if k > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(b, "%s,%s", num(p[0]), num(p[1]))
	}
	fmt.Fprintf(b, "\" fill=\"none\" stroke=\"%s\" stroke-width=\"%s\" stroke-linejoin=\"round\"", esc(l.color), num(width))
	if l.dashed {
		b.WriteString(" stroke-dasharray=\"5 4\"")
	}
	b.WriteString("/>\n")
}

func drawMarker(b *bytes.Buffer, m marker) {
	if m.hidden {
		return
	}
	c, r := esc(m.color), m.r
	outline := "stroke=\"#FFFFFF\" stroke-width=\"0.8\""
	if r < 3 {
		outline = "stroke=\"none\""
	}
	poly := func(pts ...float64) {
		b.WriteString("<polygon points=\"")
		for k := 0; k < len(pts); k += 2 {
			if k > 0 {
				b.WriteByte(' ')
			}
			fmt.Fprintf(b, "%s,%s", num(m.x+pts[k]*r), num(m.y+pts[k+1]*r))
		}
		fmt.Fprintf(b, "\" fill=\"%s\" %s/>\n", c, outline)
	}
	switch m.shape {
	case Circle:
		fmt.Fprintf(b, "<circle cx=\"%s\" cy=\"%s\" r=\"%s\" fill=\"%s\" %s/>\n", num(m.x), num(m.y), num(r), c, outline)
	case Ring:
		fmt.Fprintf(b, "<circle cx=\"%s\" cy=\"%s\" r=\"%s\" fill=\"none\" stroke=\"%s\" stroke-width=\"1.8\"/>\n", num(m.x), num(m.y), num(r), c)
	case Cross:
		d := 0.85 * r
		fmt.Fprintf(b, "<path d=\"M%s %sL%s %sM%s %sL%s %s\" fill=\"none\" stroke=\"%s\" stroke-width=\"2.2\" stroke-linecap=\"round\"/>\n",
			num(m.x-d), num(m.y-d), num(m.x+d), num(m.y+d), num(m.x-d), num(m.y+d), num(m.x+d), num(m.y-d), c)
	case Triangle:
		poly(0, -1.2, 1.04, 0.6, -1.04, 0.6)
	case Square:
		poly(-0.9, -0.9, 0.9, -0.9, 0.9, 0.9, -0.9, 0.9)
	case Diamond:
		poly(0, -1.25, 1.25, 0, 0, 1.25, -1.25, 0)
	case TriangleDown:
		poly(0, 1.2, 1.04, -0.6, -1.04, -0.6)
	}
}

func drawText(b *bytes.Buffer, t label) {
	fmt.Fprintf(b, "<text class=\"%s\" x=\"%s\" y=\"%s\" font-size=\"%s\"", t.class, num(t.x), num(t.y), num(t.size))
	if t.anchor != "start" {
		fmt.Fprintf(b, " text-anchor=\"%s\"", t.anchor)
	}
	if t.rotate {
		fmt.Fprintf(b, " transform=\"rotate(-90 %s %s)\"", num(t.x), num(t.y))
	}
	if t.halo {
		b.WriteString(" stroke=\"#FFFFFF\" stroke-width=\"3\" stroke-linejoin=\"round\" paint-order=\"stroke\"")
	}
	b.WriteString(">")
	for _, r := range t.runs {
		if r.sub {
			fmt.Fprintf(b, "<tspan baseline-shift=\"sub\" font-size=\"%s\">%s</tspan>", num(t.size*subScale), esc(r.text))
		} else {
			b.WriteString(esc(r.text))
		}
	}
	b.WriteString("</text>\n")
}
