package main

import (
	"fmt"
	"math"
	"strconv"

	"github.com/fairmp/fairmp/graph/datasets"
	"github.com/fairmp/fairmp/internal/svgplot"
	"github.com/fairmp/fairmp/metrics"
)

// methodRates is one method's per-group rates on the test nodes, with
// their 95% Wilson intervals (metrics.NewGroupRates), indexed by group
// (nil: the group has no test node). With c > 2 classes they are of one
// class against the rest (class ≥ 0); with two, of class 1 (class −1).
type methodRates struct {
	name  string
	class int
	rates []*metrics.GroupRates
}

// testGroupRates returns every method's per-group rates on the test
// nodes, from its decisions: of the positive class for two classes, of
// each class against the rest for more (a methodRates per method and
// class, class by class); nil when there are no test nodes.
func testGroupRates(r *result) ([]methodRates, error) {
	ds := r.ds
	c := ds.NumClasses()
	if len(ds.Split.Test) == 0 || c < 2 {
		return nil, nil
	}
	classes := []int{-1}
	if c > 2 {
		classes = classes[:0]
		for k := range c {
			classes = append(classes, k)
		}
	}
	var out []methodRates
	for _, k := range classes {
		labels := ds.Labels
		if k >= 0 {
			labels = make([]int, len(ds.Labels))
			for i, y := range ds.Labels {
				labels[i] = -1
				if y >= 0 {
					labels[i] = b2i(y == k)
				}
			}
		}
		for _, me := range r.methods {
			if me.decision == nil {
				continue
			}
			// One-hot rows of the decisions (class k or not): the rates
			// of what the method decided, thresholded or not.
			onehot := make([]float64, 2*ds.N())
			for i, d := range me.decision {
				if k >= 0 {
					d = b2i(d == k)
				}
				onehot[2*i+d] = 1
			}
			gr, err := metrics.NewGroupRates(onehot, 2, labels, ds.Sens, ds.Split.Test, metrics.DefaultOptions(), 0.95)
			if err != nil {
				return nil, fmt.Errorf("%s: per-group rates: %w", me.Name, err)
			}
			mr := methodRates{name: me.Name, class: k, rates: make([]*metrics.GroupRates, groups(ds))}
			for j := range gr {
				if g := gr[j].Group; g >= 0 && g < len(mr.rates) {
					mr.rates[g] = &gr[j]
				}
			}
			out = append(out, mr)
		}
	}
	return out, nil
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// rateKinds are the three rates of the per-group figure and table.
var rateKinds = []struct {
	title, short string
	of           func(*metrics.GroupRates) *metrics.Interval
}{
	{"selection rate P(ŷ = 1)", "selection rate", func(g *metrics.GroupRates) *metrics.Interval { return &g.Selection }},
	{"true-positive rate (TPR)", "TPR", func(g *metrics.GroupRates) *metrics.Interval { return g.TPR }},
	{"false-positive rate (FPR)", "FPR", func(g *metrics.GroupRates) *metrics.Interval { return g.FPR }},
}

// methodStyle gives each method the style it has in the frontier figure:
// the backbone a black cross, FMP a blue circle, the thresholds a
// vermillion triangle.
func methodStyle(name string, k int) (svgplot.Shape, string) {
	switch name {
	case "backbone":
		return svgplot.Cross, svgplot.Black
	case "fmp":
		return svgplot.Circle, svgplot.Blue
	case "thresholds", "offsets":
		return svgplot.Triangle, svgplot.Vermillion
	}
	return svgplot.Diamond, svgplot.SeriesColor(k + 2)
}

// groupsFigure builds groups.svg: for each of selection rate, TPR and
// FPR a panel, each group a category on x, each method a marker with its
// 95% Wilson interval as an error bar, side by side. A rate that is
// undefined for a group (no positive, or no negative, labelled test node;
// no test node at all) is drawn as nothing and its group's tick reads
// "n/a": never as 0.
func groupsFigure(r *result, rates []methodRates) (*svgplot.Figure, error) {
	ds := r.ds
	ng := groups(ds)
	pos := className(ds, 1)
	fig := &svgplot.Figure{
		Title:  svgplot.Escape(fmt.Sprintf("%s: rates per group on the test nodes (positive class %s; bars: 95%% Wilson intervals)", ds.Name, pos)),
		Legend: svgplot.Legend{Position: svgplot.LegendBelow},
	}
	// Each group's slot must hold its tick label: the axes widen with the
	// number of groups and their names' length.
	longest := 0
	for g := 0; g < ng; g++ {
		longest = max(longest, len([]rune(groupName(ds, g)))+6)
	}
	fig.PlotWidth = math.Max(300, float64(ng)*(float64(longest)*8+12))
	if ng > 3 {
		fig.Columns = 1
	}
	width := 0.5 // the spread of a group's markers, in group units
	if c := ds.NumClasses(); c > 2 {
		// A panel per class: its selection rate P(ŷ = k) in each group,
		// the c-class demographic parity's terms.
		fig.Title = svgplot.Escape(fmt.Sprintf("%s: each class's selection rate per group on the test nodes (bars: 95%% Wilson intervals)", ds.Name))
		for k := range c {
			var cr []methodRates
			for _, mr := range rates {
				if mr.class == k {
					cr = append(cr, mr)
				}
			}
			fig.Panels = append(fig.Panels, ratePanel(ds, cr, fmt.Sprintf("selection rate P(ŷ = %s)", className(ds, k)), "% of the group's test nodes", width, func(g *metrics.GroupRates) *metrics.Interval { return &g.Selection }))
		}
		return fig, nil
	}
	for _, kind := range rateKinds {
		title := kind.title
		if kind.short == "selection rate" {
			title = fmt.Sprintf("selection rate P(ŷ = %s)", pos)
		}
		ylabel := "% of the group's test nodes"
		switch kind.short {
		case "TPR":
			ylabel = "% of its positive test nodes"
		case "FPR":
			ylabel = "% of its negative test nodes"
		}
		fig.Panels = append(fig.Panels, ratePanel(ds, rates, title, ylabel, width, kind.of))
	}
	return fig, nil
}

// ratePanel draws one rate of every method in rates, each group a
// category on x.
func ratePanel(ds *datasets.Dataset, rates []methodRates, title, ylabel string, width float64, of func(*metrics.GroupRates) *metrics.Interval) svgplot.Panel {
	ng := groups(ds)
	p := svgplot.Panel{Title: svgplot.Escape(title), YLabel: ylabel, XRange: svgplot.Range{Min: -0.6, Max: float64(ng) - 0.4}, YRange: svgplot.Range{Min: -4, Max: 104}}
	for g := 0; g < ng; g++ {
		name := groupName(ds, g)
		if _, err := strconv.Atoi(name); err == nil {
			name = "group " + name // a bare number reads as a value on the axis
		}
		label := svgplot.Escape(name)
		if undefinedRate(rates, g, of) {
			label += ": n/a"
		}
		p.XTicks = append(p.XTicks, svgplot.Tick{At: float64(g), Label: label})
	}
	for k, mr := range rates {
		shape, color := methodStyle(mr.name, k)
		se := svgplot.Series{Name: svgplot.Escape(mr.name), NoLine: true, Shape: shape, Color: color}
		off := 0.0
		if len(rates) > 1 {
			off = -width/2 + width*float64(k)/float64(len(rates)-1)
		}
		for g, gr := range mr.rates {
			if gr == nil {
				continue
			}
			iv := of(gr)
			if iv == nil || math.IsNaN(iv.Point) {
				continue
			}
			se.X = append(se.X, float64(g)+off)
			se.Y = append(se.Y, 100*iv.Point)
			se.YLo = append(se.YLo, 100*math.Min(iv.Lo, iv.Point))
			se.YHi = append(se.YHi, 100*math.Max(iv.Hi, iv.Point))
		}
		if len(se.X) > 0 {
			p.Series = append(p.Series, se)
		}
	}
	if len(p.Series) == 0 {
		// Nothing defined in this panel: an invisible point keeps the
		// axes (the ticks say n/a).
		p.Series = []svgplot.Series{{X: []float64{0}, Y: []float64{-10}, NoLine: true, Size: 0.01}}
	}
	return p
}

// undefinedRate reports whether rate kind is undefined for group g in
// every method (it depends on the group's test labels only).
func undefinedRate(rates []methodRates, g int, of func(*metrics.GroupRates) *metrics.Interval) bool {
	for _, mr := range rates {
		if gr := mr.rates[g]; gr != nil {
			if iv := of(gr); iv != nil && !math.IsNaN(iv.Point) {
				return false
			}
		}
	}
	return true
}
