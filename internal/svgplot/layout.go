package svgplot

import (
	"errors"
	"fmt"
	"math"
)

// panelTexts are a panel's texts, parsed.
type panelTexts struct {
	title, xLabel, yLabel []run
	names                 [][]run   // per series
	labels                [][][]run // per series and point (nil: none)
	marks, lines          [][]run   // per mark and reference line
	xTicks, yTicks        [][]run   // per custom tick
}

// checkPanel checks panel i, parses its texts and returns them with the
// ranges of its axes; errors name the panel and what in it is wrong.
func checkPanel(i int, p *Panel) (*panelTexts, [2][2]float64, error) {
	var lim [2][2]float64
	where := fmt.Sprintf("Panels[%d] %q", i, p.Title)
	fail := func(format string, a ...any) (*panelTexts, [2][2]float64, error) {
		return nil, lim, fmt.Errorf("svgplot: %s: %s", where, fmt.Sprintf(format, a...))
	}
	pt := &panelTexts{}
	var bad string // the first text with malformed markup
	var badErr error
	parse := func(what, text string) []run {
		runs, err := parseMarkup(text)
		if err != nil && badErr == nil {
			bad, badErr = fmt.Sprintf("%s %q", what, text), err
		}
		return runs
	}
	pt.title, pt.xLabel, pt.yLabel = parse("Title", p.Title), parse("XLabel", p.XLabel), parse("YLabel", p.YLabel)
	var xs, ys []float64 // the values an axis's range spans
	// offLog reports whether (x, y) is off a log axis: a value ≤ 0 on it.
	offLog := func(x, y float64) bool { return (p.LogX && x <= 0) || (p.LogY && y <= 0) }
	for j, se := range p.Series {
		what := fmt.Sprintf("Series[%d] %q", j, se.Name)
		switch {
		case len(se.X) == 0:
			return fail("%s has no points", what)
		case len(se.Y) != len(se.X):
			return fail("%s has %d x and %d y values", what, len(se.X), len(se.Y))
		case se.Labels != nil && len(se.Labels) != len(se.X):
			return fail("%s has %d labels for %d points", what, len(se.Labels), len(se.X))
		case (se.YLo == nil) != (se.YHi == nil):
			return fail("%s has YLo or YHi without the other", what)
		case se.YLo != nil && (len(se.YLo) != len(se.X) || len(se.YHi) != len(se.X)):
			return fail("%s has %d YLo and %d YHi values for %d points", what, len(se.YLo), len(se.YHi), len(se.X))
		}
		if err := checkStyle(se); err != nil {
			return fail("%s %v", what, err)
		}
		for k := range se.X {
			if !finite(se.X[k]) || !finite(se.Y[k]) {
				return fail("%s point %d is (%v, %v), want finite coordinates", what, k, se.X[k], se.Y[k])
			}
			if offLog(se.X[k], se.Y[k]) {
				return fail("%s point %d is (%v, %v), want values > 0 on a log axis", what, k, se.X[k], se.Y[k])
			}
			if se.YLo == nil {
				continue
			}
			lo, hi := se.YLo[k], se.YHi[k]
			switch {
			case !finite(lo) || !finite(hi) || lo > se.Y[k] || hi < se.Y[k]:
				return fail("%s point %d has the error bar [%v, %v] around y = %v, want finite YLo ≤ Y ≤ YHi", what, k, lo, hi, se.Y[k])
			case offLog(se.X[k], lo):
				return fail("%s point %d has the error bar [%v, %v], want values > 0 on a log axis", what, k, lo, hi)
			}
			ys = append(ys, lo, hi)
		}
		xs, ys = append(xs, se.X...), append(ys, se.Y...)
		pt.names = append(pt.names, parse(what+" Name", se.Name))
		labels := make([][]run, len(se.X))
		for k := range se.Labels {
			labels[k] = parse(fmt.Sprintf("%s Labels[%d]", what, k), se.Labels[k])
		}
		pt.labels = append(pt.labels, labels)
	}
	for j, m := range p.Marks {
		what := fmt.Sprintf("Marks[%d] %q", j, m.Label)
		switch {
		case !finite(m.X) || !finite(m.Y):
			return fail("%s is at (%v, %v), want finite coordinates", what, m.X, m.Y)
		case m.Shape < Circle || m.Shape > TriangleDown:
			return fail("%s has unknown %v", what, m.Shape)
		case !finite(m.Size) || m.Size < 0:
			return fail("%s has Size %v, want a finite radius ≥ 0", what, m.Size)
		case offLog(m.X, m.Y):
			return fail("%s is at (%v, %v), want values > 0 on a log axis", what, m.X, m.Y)
		}
		xs, ys = append(xs, m.X), append(ys, m.Y)
		pt.marks = append(pt.marks, parse(what+" Label", m.Label))
	}
	for j, l := range p.Lines {
		what := fmt.Sprintf("Lines[%d] %q", j, l.Label)
		if !finite(l.At) {
			return fail("%s is at %v, want a finite value", what, l.At)
		}
		if (l.Vertical && p.LogX && l.At <= 0) || (!l.Vertical && p.LogY && l.At <= 0) {
			return fail("%s is at %v, want a value > 0 on a log axis", what, l.At)
		}
		if l.Vertical {
			xs = append(xs, l.At)
		} else {
			ys = append(ys, l.At)
		}
		pt.lines = append(pt.lines, parse(what+" Label", l.Label))
	}
	for _, ax := range []struct {
		name  string
		ticks []Tick
		log   bool
		vs    *[]float64
		runs  *[][]run
	}{{"XTicks", p.XTicks, p.LogX, &xs, &pt.xTicks}, {"YTicks", p.YTicks, p.LogY, &ys, &pt.yTicks}} {
		for k, t := range ax.ticks {
			what := fmt.Sprintf("%s[%d] %q", ax.name, k, t.Label)
			if !finite(t.At) || (ax.log && t.At <= 0) {
				return fail("%s is at %v, want a finite value (> 0 on a log axis)", what, t.At)
			}
			*ax.vs = append(*ax.vs, t.At)
			*ax.runs = append(*ax.runs, parse(what+" Label", t.Label))
		}
	}
	if badErr != nil {
		return fail("%s %v", bad, badErr)
	}
	for k, r := range []struct {
		name string
		rg   Range
		vs   []float64
		log  bool
	}{{"XRange", p.XRange, xs, p.LogX}, {"YRange", p.YRange, ys, p.LogY}} {
		lo, hi := r.rg.Min, r.rg.Max
		switch {
		case r.rg == Range{} && len(r.vs) == 0:
			return fail("nothing to plot and no %s", r.name)
		case r.rg == Range{} && r.log:
			lo, hi = autoLogRange(r.vs)
		case r.rg == Range{}:
			lo, hi = autoRange(r.vs)
		case !finite(lo) || !finite(hi) || lo >= hi:
			return fail("%s is [%v, %v], want finite Min < Max", r.name, lo, hi)
		case r.log && lo <= 0:
			return fail("%s is [%v, %v], want Min > 0 on a log axis", r.name, lo, hi)
		}
		if span := hi - lo; !finite(span) || span < 1e-9*math.Max(math.Abs(lo), math.Abs(hi)) {
			return fail("%s [%v, %v] is too wide or too narrow to draw", r.name, lo, hi)
		}
		lim[k] = [2]float64{lo, hi}
	}
	return pt, lim, nil
}

// checkStyle checks a series' shape and size.
func checkStyle(se Series) error {
	switch {
	case se.Shape < Circle || se.Shape > TriangleDown:
		return fmt.Errorf("has unknown %v", se.Shape)
	case !finite(se.Size) || se.Size < 0:
		return fmt.Errorf("has Size %v, want a finite radius ≥ 0", se.Size)
	case se.NoLine && se.NoMarkers:
		return errors.New("has NoLine and NoMarkers: nothing to draw")
	}
	return nil
}

// seriesRadius is a series' marker radius, its default applied.
func seriesRadius(se Series) float64 {
	if se.Size == 0 {
		return 4
	}
	return se.Size
}

// seriesEntry is the legend entry of a series drawn in colour c.
func seriesEntry(runs []run, se Series, c string) entry {
	return entry{runs: runs, line: !se.NoLine, dashed: se.Dashed, m: marker{r: math.Max(seriesRadius(se), 3), shape: se.Shape, color: c, hidden: se.NoMarkers}}
}

// layoutPanel checks panel i, lays it out with its axes' top left at
// (0, 0), and returns its legend entries.
func layoutPanel(i int, p *Panel, s sizes) (*panelLayout, []entry, error) {
	pt, lim, err := checkPanel(i, p)
	if err != nil {
		return nil, nil, err
	}
	pl := &panelLayout{w: s.w, h: s.h}
	for _, ax := range []struct {
		a          *axis
		name       string
		lim        [2]float64
		log        bool
		ticks      []Tick
		runs       [][]run
		length     float64
		horizontal bool
	}{{&pl.x, "XTicks", lim[0], p.LogX, p.XTicks, pt.xTicks, s.w, true}, {&pl.y, "YTicks", lim[1], p.LogY, p.YTicks, pt.yTicks, s.h, false}} {
		switch {
		case len(ax.ticks) > 0:
			a, err := makeCustomAxis(ax.lim[0], ax.lim[1], ax.log, ax.ticks, ax.runs, ax.length, s.tick, ax.horizontal)
			if err != nil {
				return nil, nil, fmt.Errorf("svgplot: Panels[%d] %q: %s: %v", i, p.Title, ax.name, err)
			}
			*ax.a = a
		case ax.log:
			*ax.a = makeLogAxis(ax.lim[0], ax.lim[1], ax.length, s.tick, ax.horizontal)
		default:
			*ax.a = makeAxis(ax.lim[0], ax.lim[1], ax.length, s.tick, ax.horizontal)
		}
	}
	pl.axisTexts(pt, s)
	es, refLabels := pl.data(p, pt, s)
	pl.innerLabels(p, pt, refLabels, s)
	pl.box = rect{0, 0, s.w, s.h}
	for _, t := range pl.texts {
		pl.box = pl.box.union(t.box())
	}
	return pl, es, nil
}

// px and py map data to the panel's pixels.
func (pl *panelLayout) px(v float64) float64 { return pl.x.pos(v, pl.w) }
func (pl *panelLayout) py(v float64) float64 { return pl.h - pl.y.pos(v, pl.h) }

// descentOf is how far runs reach below the baseline, in ems.
func descentOf(runs []run) float64 {
	if hasSub(runs) {
		return subDescent
	}
	return descent
}

// axisTexts places the tick labels, the axis labels and the title
// around the axes.
func (pl *panelLayout) axisTexts(pt *panelTexts, s sizes) {
	add := func(t label) { pl.texts = append(pl.texts, t) }
	widest := 0.0
	xDescent := descent // the x tick labels' reach below their baseline
	for k, v := range pl.y.ticks {
		r := pl.y.runs[k]
		widest = math.Max(widest, textWidth(r, s.tick))
		add(label{x: -tickLen - 3, y: pl.py(v) + 0.35*s.tick, runs: r, size: s.tick, anchor: "end", class: "tick"})
	}
	for k, v := range pl.x.ticks {
		xDescent = math.Max(xDescent, descentOf(pl.x.runs[k]))
		add(label{x: pl.px(v), y: pl.h + tickLen + 3 + ascent*s.tick, runs: pl.x.runs[k], size: s.tick, anchor: "middle", class: "tick"})
	}
	// clear moves t down (dir 1) or up (-1) until it is 4 pixels clear of
	// the texts so far: a y label longer than the axes are high reaches
	// beside the title and the x label.
	clear := func(t label, dir float64) label {
		for moved := true; moved; {
			moved = false
			for _, o := range pl.texts {
				if b, ob := t.box(), o.box(); b.overlaps(rect{ob.x0, ob.y0 - 4, ob.x1, ob.y1 + 4}) {
					if dir > 0 {
						t.y += ob.y1 + 4 - b.y0
					} else {
						t.y -= b.y1 - (ob.y0 - 4)
					}
					moved = true
				}
			}
		}
		return t
	}
	if yl := pt.yLabel; len(yl) > 0 {
		x := -tickLen - 3 - widest - 6 - descentOf(yl)*s.font
		add(label{x: x, y: pl.h / 2, runs: yl, size: s.font, anchor: "middle", class: "ylabel", rotate: true})
	}
	if xl := pt.xLabel; len(xl) > 0 {
		y := pl.h + tickLen + 3 + (ascent+xDescent)*s.tick + 6 + ascent*s.font
		add(clear(label{x: pl.w / 2, y: y, runs: xl, size: s.font, anchor: "middle", class: "xlabel"}, 1))
	}
	if title := pt.title; len(title) > 0 {
		y := -8 - descentOf(title)*s.title
		add(clear(label{x: pl.w / 2, y: y, runs: title, size: s.title, anchor: "middle", class: "title"}, -1))
	}
}

// data lays out the reference lines, the series and the marks, and
// returns the legend entries and each reference label's places, best
// first. A reference line outside a fixed range is left out.
func (pl *panelLayout) data(p *Panel, pt *panelTexts, s sizes) ([]entry, [][]label) {
	var refLabels [][]label
	for j, l := range p.Lines {
		c := l.Color
		if c == "" {
			c = refColor
		}
		t := label{runs: pt.lines[j], size: s.note, class: "reflabel", halo: true}
		var cands []label
		if l.Vertical {
			if l.At < pl.x.lo || l.At > pl.x.hi {
				continue
			}
			v := pl.px(l.At)
			pl.refs = append(pl.refs, polyline{pts: [][2]float64{{v, 0}, {v, pl.h}}, color: c, dashed: true})
			top, bottom := 4+ascent*t.size, pl.h-4-descentOf(t.runs)*t.size
			cands = []label{at(t, v+4, top, "start"), at(t, v-4, top, "end"), at(t, v+4, bottom, "start"), at(t, v-4, bottom, "end")}
		} else {
			if l.At < pl.y.lo || l.At > pl.y.hi {
				continue
			}
			v := pl.py(l.At)
			pl.refs = append(pl.refs, polyline{pts: [][2]float64{{0, v}, {pl.w, v}}, color: c, dashed: true})
			above, below := v-4-descentOf(t.runs)*t.size, v+4+ascent*t.size
			cands = []label{at(t, pl.w-4, above, "end"), at(t, pl.w-4, below, "end"), at(t, 4, above, "start"), at(t, 4, below, "start")}
		}
		if len(t.runs) > 0 {
			refLabels = append(refLabels, cands)
		}
	}
	var es []entry
	for j, se := range p.Series {
		c := se.Color
		if c == "" {
			c = SeriesColor(j)
		}
		l := polyline{color: c, dashed: se.Dashed}
		for k := range se.X {
			x, y := pl.px(se.X[k]), pl.py(se.Y[k])
			l.pts = append(l.pts, [2]float64{x, y})
			pl.markers = append(pl.markers, marker{x: x, y: y, r: seriesRadius(se), shape: se.Shape, color: c, hidden: se.NoMarkers})
			if se.YLo != nil {
				lo, hi := pl.py(se.YLo[k]), pl.py(se.YHi[k])
				pl.bars = append(pl.bars, polyline{pts: [][2]float64{{x, lo}, {x, hi}}, color: c},
					polyline{pts: [][2]float64{{x - capHalf, lo}, {x + capHalf, lo}}, color: c},
					polyline{pts: [][2]float64{{x - capHalf, hi}, {x + capHalf, hi}}, color: c})
			}
		}
		if !se.NoLine {
			pl.lines = append(pl.lines, l)
		}
		if len(pt.names[j]) > 0 {
			es = append(es, seriesEntry(pt.names[j], se, c))
		}
	}
	for j, m := range p.Marks {
		c, r := m.Color, m.Size
		if c == "" {
			c = Black
		}
		if r == 0 {
			r = 6
		}
		pl.markers = append(pl.markers, marker{x: pl.px(m.X), y: pl.py(m.Y), r: r, shape: m.Shape, color: c})
		if len(pt.marks[j]) > 0 {
			es = append(es, entry{runs: pt.marks[j], m: marker{r: r, shape: m.Shape, color: c}})
		}
	}
	return es, refLabels
}

// pointClear is how far a point label keeps from the other markers, in
// pixels, lest it seem to belong to them.
const pointClear = 4.0

// innerLabels places the labels inside the axes, clear of the frame,
// the markers, the lines and each other: each reference label in its
// first free place (or its first place if none is free), then each
// point label in its first free place beside its point, pointClear away
// from the other markers, or nowhere. A point whose marker touches
// another point's keeps no label: the two are too close to tell apart.
// A mark centred on a point (a ring around it) counts as the point's.
// The labels of a series with KeepLabels that are not placed so go
// farther off, with a leader line; where the axes have no room left for
// a label that overlaps no other text, it is left out.
func (pl *panelLayout) innerLabels(p *Panel, pt *panelTexts, refLabels [][]label, s sizes) {
	var taken []rect // the markers', then the labels' boxes
	for _, m := range pl.markers {
		taken = append(taken, m.box())
	}
	nm := len(pl.markers)
	var segs [][4]float64
	for _, ls := range [][]polyline{pl.refs, pl.lines, pl.bars} {
		for _, l := range ls {
			for k := 1; k < len(l.pts); k++ {
				segs = append(segs, [4]float64{l.pts[k-1][0], l.pts[k-1][1], l.pts[k][0], l.pts[k][1]})
			}
		}
	}
	inner := rect{2, 2, pl.w - 2, pl.h - 2}
	// fits reports whether c lies inside the axes, clear of the lines, the
	// labels so far and the markers: pad pixels clear of those not in own.
	fits := func(c label, own map[int]bool, pad float64) bool {
		b := c.box()
		if !inner.contains(b) {
			return false
		}
		for k, o := range taken {
			if k < nm && !own[k] {
				o = rect{o.x0 - pad, o.y0 - pad, o.x1 + pad, o.y1 + pad}
			}
			if b.overlaps(o) {
				return false
			}
		}
		for _, sg := range segs {
			if segmentHits(sg, b) {
				return false
			}
		}
		return true
	}
	add := func(c label) {
		taken = append(taken, c.box())
		pl.texts = append(pl.texts, c)
	}
	// place adds the first of cands that fits, if any.
	place := func(cands []label, own map[int]bool, pad float64) bool {
		for _, c := range cands {
			if fits(c, own, pad) {
				add(c)
				return true
			}
		}
		return false
	}
	for _, cands := range refLabels {
		if place(cands, nil, 0) {
			continue
		}
		// No free place: the first that at least overlaps no other text,
		// else the first.
		c := cands[0]
		for _, o := range cands {
			free := true
			for _, t := range taken[nm:] {
				free = free && !o.box().overlaps(t)
			}
			if free {
				c = o
				break
			}
		}
		add(c)
	}
	np := 0 // the series' points are the first markers
	for _, se := range p.Series {
		np += len(se.X)
	}
	mi := -1
	var later []pending
	for j, se := range p.Series {
		for k := range se.X {
			mi++
			m := pl.markers[mi]
			if len(pt.labels[j][k]) == 0 {
				continue
			}
			own := map[int]bool{mi: true}
			e := m.box().x1 - m.x // from the centre to a label's near edge
			crowded := false
			for n, o := range pl.markers {
				switch {
				case n >= np && math.Abs(o.x-m.x) < 1 && math.Abs(o.y-m.y) < 1:
					own[n] = true
					e = math.Max(e, o.box().x1-o.x)
				case n < np && n != mi && o.box().overlaps(m.box()):
					crowded = true
				}
			}
			e += 2
			d := 0.7 * e // the same, diagonally
			t := label{runs: pt.labels[j][k], size: s.note, class: "pointlabel", halo: true}
			up, down, mid := m.y-e-descentOf(t.runs)*t.size, m.y+e+ascent*t.size, m.y+0.35*t.size
			near := []label{
				at(t, m.x+e, mid, "start"), at(t, m.x-e, mid, "end"), at(t, m.x, up, "middle"), at(t, m.x, down, "middle"),
				at(t, m.x+d, up+e-d, "start"), at(t, m.x+d, down-e+d, "start"), at(t, m.x-d, up+e-d, "end"), at(t, m.x-d, down-e+d, "end"),
			}
			if (crowded || !place(near, own, pointClear)) && se.KeepLabels {
				later = append(later, pending{m: m, t: t, own: own, near: near[0]})
			}
		}
	}
	// The labels kept (Series.KeepLabels) that fit nowhere beside their
	// point: farther off, on rings around it, with a leader line that
	// crosses no label; the nearest free place first.
	for _, q := range later {
		placed := false
		// First a leader that crosses no label and no other leader, then
		// (the texts' white halo keeps them legible over it) any leader.
		for strict := 1; strict >= 0 && !placed; strict-- {
			for _, dist := range []float64{16, 24, 34, 46, 60, 78, 100, 130, 170, 220} {
				for a := 0; a < 24 && !placed; a++ {
					ang := float64(a) * math.Pi / 12
					cx, cy := q.m.x+dist*math.Cos(ang), q.m.y-dist*math.Sin(ang)
					anchor := "middle"
					switch c := math.Cos(ang); {
					case c > 0.3:
						anchor = "start"
					case c < -0.3:
						anchor = "end"
					}
					c := at(q.t, cx, cy+0.35*q.t.size, anchor)
					if !fits(c, q.own, pointClear) {
						continue
					}
					b := c.box()
					// The leader runs from the point to the nearest point
					// of the label's box.
					lx, ly := math.Max(b.x0, math.Min(q.m.x, b.x1)), math.Max(b.y0, math.Min(q.m.y, b.y1))
					seg := [4]float64{q.m.x, q.m.y, lx, ly}
					clear := true
					if strict == 1 {
						for _, o := range taken[nm:] {
							clear = clear && !segmentHits(seg, o)
						}
						for _, l := range pl.leaders {
							clear = clear && !segmentsCross(seg, [4]float64{l.pts[0][0], l.pts[0][1], l.pts[1][0], l.pts[1][1]})
						}
					}
					if !clear {
						continue
					}
					add(c)
					segs = append(segs, seg)
					pl.leaders = append(pl.leaders, polyline{pts: [][2]float64{{seg[0], seg[1]}, {seg[2], seg[3]}}, color: leaderColor})
					placed = true
				}
				if placed {
					break
				}
			}
		}
		// Still no room: the nearest place on a grid over the axes that
		// overlaps no other text and no marker, then no other text (a
		// line or a marker under the label's halo stays legible; two
		// texts over each other do not), with a leader line. A label
		// with no such place anywhere is left out: overlapping texts are
		// never drawn.
		for pass := 0; pass < 2 && !placed; pass++ {
			type spot struct {
				c    label
				d    float64
				x, y float64
			}
			var spots []spot
			for y := 4.0; y < pl.h; y += 6 {
				for x := 4.0; x < pl.w; x += 6 {
					c := at(q.t, x, y, "start")
					b := c.box()
					if !inner.contains(b) {
						continue
					}
					free := true
					for k, o := range taken {
						if (k >= nm || pass == 0) && !(k < nm && q.own[k]) && b.overlaps(o) {
							free = false
							break
						}
					}
					if free {
						cx, cy := math.Max(b.x0, math.Min(q.m.x, b.x1)), math.Max(b.y0, math.Min(q.m.y, b.y1))
						spots = append(spots, spot{c, math.Hypot(cx-q.m.x, cy-q.m.y), cx, cy})
					}
				}
			}
			if len(spots) == 0 {
				continue
			}
			best := spots[0]
			for _, sp := range spots[1:] {
				if sp.d < best.d {
					best = sp
				}
			}
			add(best.c)
			seg := [4]float64{q.m.x, q.m.y, best.x, best.y}
			segs = append(segs, seg)
			pl.leaders = append(pl.leaders, polyline{pts: [][2]float64{{seg[0], seg[1]}, {seg[2], seg[3]}}, color: leaderColor})
			placed = true
		}
	}
}

// pending is a point label that Series.KeepLabels keeps although it fits
// nowhere beside its point: its marker, its text, the markers that are
// its own, and its first place beside the point, used when no room is
// left anywhere.
type pending struct {
	m    marker
	t    label
	own  map[int]bool
	near label
}

// segmentsCross reports whether the segments a and b (x0, y0, x1, y1)
// cross at a point inside both (touching ends do not count).
func segmentsCross(a, b [4]float64) bool {
	side := func(s [4]float64, x, y float64) float64 {
		return (s[2]-s[0])*(y-s[1]) - (s[3]-s[1])*(x-s[0])
	}
	d1, d2 := side(a, b[0], b[1]), side(a, b[2], b[3])
	d3, d4 := side(b, a[0], a[1]), side(b, a[2], a[3])
	return d1*d2 < 0 && d3*d4 < 0
}
