package svgplot

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// demoFigure is a frontier like the debias command's: three λs series
// labelled by λf, the chosen point, two baselines, the rule's limits.
func demoFigure(legend LegendPosition) *Figure {
	lf := []float64{0, 0.5, 1, 2, 4, 8}
	f := &Figure{Legend: Legend{Position: legend, Title: "numbers: λ_f"}}
	for _, part := range []string{"validation (choice)", "test"} {
		p := Panel{Title: "synthetic: " + part, XLabel: "ΔDP (%)", YLabel: "accuracy (%)"}
		for k, ls := range []float64{0.5, 1, 2} {
			s := Series{Name: fmt.Sprintf("FMP, λ_s = %g", ls)}
			for _, v := range lf {
				s.X = append(s.X, 14/(1+v*(0.4+0.3*float64(k))))
				s.Y = append(s.Y, 86.2-0.35*v*(1+0.4*float64(k))-0.3*float64(k))
				s.Labels = append(s.Labels, strconv.FormatFloat(v, 'g', -1, 64))
			}
			p.Series = append(p.Series, s)
		}
		p.Marks = []Mark{
			{X: p.Series[1].X[3], Y: p.Series[1].Y[3], Shape: Ring, Size: 7, Label: "FMP chosen"},
			{X: 15.2, Y: 86.4, Shape: Cross, Label: "backbone"},
			{X: 3.1, Y: 83.9, Shape: Triangle, Color: Vermillion, Label: "thresholds"},
		}
		if part != "test" {
			p.Lines = []RefLine{{Vertical: true, At: 5, Label: "ΔDP ≤ 5"}, {At: 84.5, Label: "accuracy floor"}}
		}
		f.Panels = append(f.Panels, p)
	}
	return f
}

// longFigure has texts longer than the axes are wide or high.
func longFigure(legend LegendPosition) *Figure {
	f := demoFigure(legend)
	f.Panels[0].Series[0].Name = "a much longer series name, WWW MMM %%% ≤≥"
	f.Panels[0].Title = "a title wider than the axes of its panel, WWW MMM"
	f.Panels[0].YLabel = "a y label longer than the axes are high, λ_{fairness}"
	f.Panels[1].Series = f.Panels[1].Series[:1]
	f.Panels[1].XLabel = "an x label wider than the axes of its panel, λ_{f}"
	return f
}

// featureFigure uses what the lab's figures need beyond demoFigure: a
// log y axis over categories, a scatter of small markers, error bars, a
// dashed series and legend entries of a shared style.
func featureFigure(legend LegendPosition) *Figure {
	f := &Figure{Legend: Legend{Position: legend, Title: "numbers at points: seconds",
		Extra: []Series{{Name: "dashed: mean P(y = 1)", Dashed: true, Size: 2}}}}
	runtime := Panel{Title: "seconds per run", YLabel: "seconds (log scale)", LogY: true,
		XTicks: []Tick{{0, "MLP"}, {1, "GCN"}, {2, "GAT"}},
		Lines:  []RefLine{{At: 1, Label: "one second"}}}
	for k, m := range []string{"plain", "adversary", "FMP, λ_s 1"} {
		s := Series{Name: m, NoLine: true, Shape: Shape(k + 4)}
		for g, secs := range [][]float64{{31, 87, 1.4}, {154, 117, 1.2}, {227, 160, 0.04}} {
			s.X, s.Y = append(s.X, float64(g)+0.25*float64(k-1)), append(s.Y, secs[k])
			s.Labels = append(s.Labels, strconv.FormatFloat(secs[k], 'g', -1, 64))
		}
		runtime.Series = append(runtime.Series, s)
	}
	bars := Panel{Title: "ΔDP against homophily", XLabel: "homophily", YLabel: "ΔDP (%)"}
	for k, base := range []float64{25, 30} {
		s := Series{Name: fmt.Sprintf("model %d", k), Color: SeriesColor(k)}
		for i := 0; i < 6; i++ {
			y := base + float64(i*i)*(0.5+float64(k))
			s.X, s.Y = append(s.X, 0.5+0.09*float64(i)), append(s.Y, y)
			s.YLo, s.YHi = append(s.YLo, y-3-float64(i)), append(s.YHi, y+3+float64(i))
		}
		bars.Series = append(bars.Series, s)
		soft := Series{X: s.X, Y: make([]float64, len(s.X)), Dashed: true, Size: 2, Color: SeriesColor(k)}
		for i := range s.Y {
			soft.Y[i] = s.Y[i] - 8
		}
		bars.Series = append(bars.Series, soft)
	}
	bars.Series[0].Labels = []string{"a", "b", "c", "d", "e", "f"}
	scatter := Panel{Title: "logits", XLabel: "z_1 − z_0", YLabel: "z_0 + z_1", Lines: []RefLine{{Vertical: true, At: 0, Label: "boundary"}}}
	for g := 0; g < 2; g++ {
		s := Series{Name: fmt.Sprintf("s = %d", g), NoLine: true, Size: 1.5}
		for i := 0; i < 400; i++ {
			a := float64(i) * 0.37
			s.X = append(s.X, 3*math.Sin(a)+float64(2*g-1))
			s.Y = append(s.Y, math.Cos(1.7*a)*0.8)
		}
		scatter.Series = append(scatter.Series, s)
	}
	f.Panels = []Panel{runtime, bars, scatter}
	return f
}

// gridFigure is demoFigure's panels twice, two a row, under a title.
func gridFigure(legend LegendPosition) *Figure {
	f := demoFigure(legend)
	f.Title = "a figure title: two rows of λ_s panels"
	f.Columns = 2
	more := demoFigure(legend).Panels
	more[0].YLabel = "a longer y label: accuracy (%)"
	f.Panels = append(f.Panels, more...)
	return f
}

func render(t *testing.T, f *Figure) []byte {
	t.Helper()
	var b bytes.Buffer
	require.NoError(t, f.WriteSVG(&b))
	return b.Bytes()
}

// TestWriteDemo writes the demo figures to $SVGPLOT_OUT, to look at.
func TestWriteDemo(t *testing.T) {
	dir := os.Getenv("SVGPLOT_OUT")
	if dir == "" {
		t.Skip("set SVGPLOT_OUT to a folder to write the demo figures")
	}
	for name, pos := range map[string]LegendPosition{"right": LegendRight, "below": LegendBelow} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, "demo-"+name+".svg"), render(t, demoFigure(pos)), 0o644))
		require.NoError(t, os.WriteFile(filepath.Join(dir, "long-"+name+".svg"), render(t, longFigure(pos)), 0o644))
		require.NoError(t, os.WriteFile(filepath.Join(dir, "features-"+name+".svg"), render(t, featureFigure(pos)), 0o644))
		require.NoError(t, os.WriteFile(filepath.Join(dir, "grid-"+name+".svg"), render(t, gridFigure(pos)), 0o644))
	}
}

func TestNiceTicks(t *testing.T) {
	cases := []struct {
		lo, hi float64
		want   []float64
		dec    int
	}{
		{0, 47.3, []float64{0, 10, 20, 30, 40, 50}, 0},
		{0.81, 0.93, []float64{0.80, 0.82, 0.84, 0.86, 0.88, 0.90, 0.92, 0.94}, 2},
		{75, 82.5, []float64{74, 76, 78, 80, 82, 84}, 0},
		{-3, 7.2, []float64{-4, -2, 0, 2, 4, 6, 8}, 0},
		{0, 1, []float64{0, 0.2, 0.4, 0.6, 0.8, 1}, 1},
		{1200, 5100, []float64{1000, 2000, 3000, 4000, 5000, 6000}, 0},
	}
	for _, c := range cases {
		ts, dec := niceTicks(c.lo, c.hi, 5)
		require.Len(t, ts, len(c.want), "[%v, %v]: %v", c.lo, c.hi, ts)
		for k := range ts {
			assert.InDelta(t, c.want[k], ts[k], 1e-12, "[%v, %v] tick %d", c.lo, c.hi, k)
		}
		assert.Equal(t, c.dec, dec, "[%v, %v]", c.lo, c.hi)
	}
	assert.Equal(t, "0.82", formatTick(41.0/50, 2))
	assert.Equal(t, "0", formatTick(math.Copysign(0, -1), 0))
	assert.Equal(t, "0.0", formatTick(-1e-17, 1))
	assert.Equal(t, "−1.5", formatTick(-1.5, 1))
}

// Every axis prints its labels with one number of decimals.
func TestTickDecimalsConsistent(t *testing.T) {
	for _, r := range [][2]float64{{75, 82.5}, {0.81, 0.93}, {-0.37, 2.9}, {0, 47.3}, {81.2, 82.05}, {0.001, 0.0042}, {3, 3.5}} {
		for _, horizontal := range []bool{true, false} {
			a := makeAxis(r[0], r[1], 320, 11, horizontal)
			require.GreaterOrEqual(t, len(a.labels), 2, "%v", r)
			decimals := func(s string) int {
				if _, frac, ok := strings.Cut(s, "."); ok {
					return len(frac)
				}
				return 0
			}
			for _, l := range a.labels {
				assert.Equal(t, decimals(a.labels[0]), decimals(l), "%v: %v", r, a.labels)
			}
			for _, v := range a.ticks {
				assert.True(t, v >= r[0]-1e-9 && v <= r[1]+1e-9, "%v: tick %v outside", r, v)
			}
		}
	}
	// A narrow axis takes fewer ticks rather than crowd its labels.
	a := makeAxis(0.81, 0.93, 100, 11, true)
	assert.Less(t, len(a.ticks), len(makeAxis(0.81, 0.93, 320, 11, true).ticks))
}

func TestAutoRange(t *testing.T) {
	lo, hi := autoRange([]float64{0, 12, 5})
	assert.InDelta(t, -0.6, lo, 1e-9)
	assert.InDelta(t, 12.6, hi, 1e-9)
	a := makeAxis(lo, hi, 320, 11, true)
	assert.Equal(t, "0", a.labels[0], "no negative tick for data at or above zero")
	lo, hi = autoRange([]float64{80, 90})
	assert.InDelta(t, 79.5, lo, 1e-9)
	assert.InDelta(t, 90.5, hi, 1e-9)
	lo, hi = autoRange([]float64{-2, -2})
	assert.Less(t, lo, -2.0)
	assert.Greater(t, hi, -2.0)
}

func TestMarkup(t *testing.T) {
	cases := []struct {
		in   string
		want []run
	}{
		{"plain", []run{{"plain", false}}},
		{"λ_s", []run{{"λ", false}, {"s", true}}},
		{"FMP, λ_{max} = 1", []run{{"FMP, λ", false}, {"max", true}, {" = 1", false}}},
		{`a\_b \\ {c}`, []run{{`a_b \ {c}`, false}}},
		{"", nil},
	}
	for _, c := range cases {
		got, err := parseMarkup(c.in)
		require.NoError(t, err, c.in)
		assert.Equal(t, c.want, got, c.in)
	}
	for _, bad := range []string{"a_", `a\`, "λ_{f", "λ_{a_b}"} {
		_, err := parseMarkup(bad)
		assert.Error(t, err, bad)
	}
	runs, err := parseMarkup(Escape(`my_data\set`))
	require.NoError(t, err)
	assert.Equal(t, []run{{`my_data\set`, false}}, runs)
}

func TestSubscriptTspan(t *testing.T) {
	f := &Figure{Panels: []Panel{{XLabel: "λ_f", Series: []Series{{X: []float64{1, 2}, Y: []float64{3, 4}}}}}}
	svg := string(render(t, f))
	assert.Contains(t, svg, `λ<tspan baseline-shift="sub" font-size="8.4">f</tspan></text>`)
}

func TestValidXMLAndDeterministic(t *testing.T) {
	for _, pos := range []LegendPosition{LegendRight, LegendBelow, LegendNone} {
		a := render(t, demoFigure(pos))
		assert.Equal(t, a, render(t, demoFigure(pos)), "two renders differ")
		assert.Equal(t, render(t, featureFigure(pos)), render(t, featureFigure(pos)), "two renders of the features differ")
		assert.Equal(t, render(t, gridFigure(pos)), render(t, gridFigure(pos)), "two renders of the grid differ")
		var doc struct {
			XMLName xml.Name
			Width   string `xml:"width,attr"`
			Height  string `xml:"height,attr"`
			ViewBox string `xml:"viewBox,attr"`
		}
		require.NoError(t, xml.Unmarshal(a, &doc))
		assert.Equal(t, "http://www.w3.org/2000/svg", doc.XMLName.Space)
		assert.Equal(t, "svg", doc.XMLName.Local)
		assert.Equal(t, "0 0 "+doc.Width+" "+doc.Height, doc.ViewBox)
		assert.Contains(t, string(a), "sans-serif")
		legend := strings.Contains(string(a), `class="legend"`)
		assert.Equal(t, pos != LegendNone, legend)
	}
}

func TestEscaping(t *testing.T) {
	f := &Figure{Panels: []Panel{{Title: `a<b & c>"d"`, Series: []Series{{Name: "<&>", X: []float64{1}, Y: []float64{1}, Color: `"red"`}}}}}
	svg := render(t, f)
	assert.Contains(t, string(svg), "a&lt;b &amp; c&gt;&#34;d&#34;")
	assert.Contains(t, string(svg), ">&lt;&amp;&gt;</text>")
	assert.NotContains(t, string(svg), "<&>")
	require.NoError(t, xml.Unmarshal(svg, new(struct{})))
}

func TestErrors(t *testing.T) {
	one := func() Panel {
		return Panel{Title: "p", Series: []Series{{Name: "s", X: []float64{1, 2}, Y: []float64{1, 2}}}}
	}
	cases := []struct {
		name string
		edit func(f *Figure)
		want string
	}{
		{"empty figure", func(f *Figure) { f.Panels = nil }, "no panels"},
		{"NaN", func(f *Figure) { f.Panels[1].Series[0].Y[1] = math.NaN() }, `Panels[1] "p": Series[0] "s" point 1 is (2, NaN)`},
		{"Inf mark", func(f *Figure) { f.Panels[0].Marks = []Mark{{X: math.Inf(1), Label: "m"}} }, `Panels[0] "p": Marks[0] "m" is at (+Inf, 0)`},
		{"lengths", func(f *Figure) { f.Panels[0].Series[0].Y = []float64{1} }, `Series[0] "s" has 2 x and 1 y values`},
		{"labels", func(f *Figure) { f.Panels[0].Series[0].Labels = []string{"a"} }, "1 labels for 2 points"},
		{"no points", func(f *Figure) { f.Panels[0].Series[0].X, f.Panels[0].Series[0].Y = nil, nil }, "has no points"},
		{"empty panel", func(f *Figure) { f.Panels[1] = Panel{Title: "q"} }, `Panels[1] "q": nothing to plot and no XRange`},
		{"reversed range", func(f *Figure) { f.Panels[0].YRange = Range{Min: 2, Max: 1} }, "YRange is [2, 1]"},
		{"shape", func(f *Figure) { f.Panels[0].Series[0].Shape = 9 }, "unknown Shape(9)"},
		{"markup", func(f *Figure) { f.Panels[0].XLabel = "λ_{f" }, `XLabel "λ_{f" has an unclosed "_{"`},
		{"line", func(f *Figure) { f.Panels[0].Lines = []RefLine{{At: math.NaN(), Label: "l"}} }, `Lines[0] "l" is at NaN`},
		{"size", func(f *Figure) { f.FontSize = -1 }, "FontSize = -1"},
		{"series size", func(f *Figure) { f.Panels[0].Series[0].Size = -2 }, `Series[0] "s" has Size -2`},
		{"YLo alone", func(f *Figure) { f.Panels[0].Series[0].YLo = []float64{0, 1} }, "YLo or YHi without the other"},
		{"bar lengths", func(f *Figure) {
			f.Panels[0].Series[0].YLo, f.Panels[0].Series[0].YHi = []float64{0}, []float64{2, 3}
		}, "1 YLo and 2 YHi values for 2 points"},
		{"bar off its point", func(f *Figure) {
			f.Panels[0].Series[0].YLo, f.Panels[0].Series[0].YHi = []float64{0, 2.5}, []float64{2, 3}
		}, "point 1 has the error bar [2.5, 3] around y = 2"},
		{"NaN bar", func(f *Figure) {
			f.Panels[0].Series[0].YLo, f.Panels[0].Series[0].YHi = []float64{0, 1}, []float64{math.NaN(), 3}
		}, "point 0 has the error bar [0, NaN]"},
		{"log zero", func(f *Figure) { f.Panels[1].LogY, f.Panels[1].Series[0].Y[0] = true, 0 }, `Panels[1] "p": Series[0] "s" point 0 is (1, 0), want values > 0 on a log axis`},
		{"log bar", func(f *Figure) {
			f.Panels[0].LogY, f.Panels[0].Series[0].YLo, f.Panels[0].Series[0].YHi = true, []float64{-1, 1}, []float64{2, 3}
		}, "error bar [-1, 2], want values > 0 on a log axis"},
		{"log mark", func(f *Figure) { f.Panels[0].LogX, f.Panels[0].Marks = true, []Mark{{X: -1, Y: 1, Label: "m"}} }, `Marks[0] "m" is at (-1, 1), want values > 0`},
		{"log line", func(f *Figure) { f.Panels[0].LogY, f.Panels[0].Lines = true, []RefLine{{At: 0, Label: "l"}} }, `Lines[0] "l" is at 0, want a value > 0`},
		{"log range", func(f *Figure) { f.Panels[0].LogY, f.Panels[0].YRange = true, Range{Min: 0, Max: 3} }, "YRange is [0, 3], want Min > 0 on a log axis"},
		{"tick NaN", func(f *Figure) { f.Panels[0].XTicks = []Tick{{At: math.NaN(), Label: "a"}} }, `XTicks[0] "a" is at NaN`},
		{"tick markup", func(f *Figure) { f.Panels[0].YTicks = []Tick{{At: 1, Label: "a_"}} }, `YTicks[0] "a_" Label "a_" ends in "_"`},
		{"ticks crowded", func(f *Figure) {
			f.Panels[0].XTicks = []Tick{{At: 1, Label: "a long category name"}, {At: 1.1, Label: "another long one"}}
		}, `XTicks: tick labels "a long category name" and "another long one" are too close`},
		{"columns", func(f *Figure) { f.Columns = -1 }, "Columns = -1"},
		{"title", func(f *Figure) { f.Title = `a\` }, `Title "a\\" ends in a lone`},
		{"nothing drawn", func(f *Figure) { f.Panels[0].Series[0].NoLine, f.Panels[0].Series[0].NoMarkers = true, true }, "has NoLine and NoMarkers"},
		{"extra with points", func(f *Figure) { f.Legend.Extra = []Series{{Name: "e", X: []float64{1}, Y: []float64{1}}} }, `Legend.Extra[0] "e" has points`},
		{"extra shape", func(f *Figure) { f.Legend.Extra = []Series{{Name: "e", Shape: -1}} }, `Legend.Extra[0] "e" has unknown Shape(-1)`},
		{"extra markup", func(f *Figure) { f.Legend.Extra = []Series{{Name: "λ_"}} }, `Legend.Extra[0] "λ_" Name ends in "_"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := &Figure{Panels: []Panel{one(), one()}}
			c.edit(f)
			var b bytes.Buffer
			err := f.WriteSVG(&b)
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.want)
			assert.Zero(t, b.Len(), "wrote on error")
		})
	}
}

// svgText is a parsed <text>: its class and estimated box.
type svgText struct {
	class, content string
	box            rect
}

// parseSVG returns the canvas size, the boxes of the rects of a class
// and every text's estimated box, from the SVG itself.
func parseSVG(t *testing.T, svg []byte) (w, h float64, rects map[string][]rect, texts []svgText) {
	t.Helper()
	rects = map[string][]rect{}
	attr := func(e xml.StartElement, name string) string {
		for _, a := range e.Attr {
			if a.Name.Local == name {
				return a.Value
			}
		}
		return ""
	}
	fl := func(e xml.StartElement, name string) float64 {
		v, err := strconv.ParseFloat(attr(e, name), 64)
		require.NoError(t, err, "%s of %s", name, e.Name.Local)
		return v
	}
	d := xml.NewDecoder(bytes.NewReader(svg))
	var cur *label
	var class string
	sub := false
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
		switch e := tok.(type) {
		case xml.StartElement:
			switch e.Name.Local {
			case "svg":
				w, h = fl(e, "width"), fl(e, "height")
			case "rect":
				if c := attr(e, "class"); c != "" {
					x, y := fl(e, "x"), fl(e, "y")
					rects[c] = append(rects[c], rect{x, y, x + fl(e, "width"), y + fl(e, "height")})
				}
			case "text":
				anchor := attr(e, "text-anchor")
				if anchor == "" {
					anchor = "start"
				}
				cur = &label{x: fl(e, "x"), y: fl(e, "y"), size: fl(e, "font-size"), anchor: anchor,
					rotate: strings.HasPrefix(attr(e, "transform"), "rotate(-90 ")}
				class = attr(e, "class")
			case "tspan":
				sub = attr(e, "baseline-shift") == "sub"
				require.InDelta(t, cur.size*subScale, fl(e, "font-size"), 0.01)
			}
		case xml.CharData:
			if cur != nil {
				cur.runs = append(cur.runs, run{string(e), sub})
			}
		case xml.EndElement:
			switch e.Name.Local {
			case "tspan":
				sub = false
			case "text":
				var s strings.Builder
				for _, r := range cur.runs {
					s.WriteString(r.text)
				}
				texts = append(texts, svgText{class, s.String(), cur.box()})
				cur = nil
			}
		}
	}
	return w, h, rects, texts
}

// Every text lies inside the canvas and overlaps no other; the legend
// and the texts around the axes stay off the axes, the labels inside
// them stay in.
func TestLayoutFits(t *testing.T) {
	for name, f := range map[string]*Figure{
		"right": demoFigure(LegendRight), "below": demoFigure(LegendBelow),
		"long right": longFigure(LegendRight), "long below": longFigure(LegendBelow),
		"features right": featureFigure(LegendRight), "features below": featureFigure(LegendBelow),
		"grid right": gridFigure(LegendRight), "grid below": gridFigure(LegendBelow),
	} {
		t.Run(name, func(t *testing.T) {
			w, h, rects, texts := parseSVG(t, render(t, f))
			canvas := rect{0, 0, w, h}
			plots := rects["plotarea"]
			require.Len(t, plots, len(f.Panels))
			require.Len(t, rects["legend"], 1)
			legend := rects["legend"][0]
			assert.True(t, canvas.contains(legend), "legend %v outside canvas %v", legend, canvas)
			classes := map[string]int{}
			for k, tx := range texts {
				classes[tx.class]++
				assert.True(t, canvas.contains(tx.box), "%s %q %v outside canvas %v", tx.class, tx.content, tx.box, canvas)
				inside := tx.class == "pointlabel" || tx.class == "reflabel"
				in := false
				for _, p := range plots {
					if inside && p.contains(tx.box) {
						in = true
					}
					if !inside {
						assert.False(t, tx.box.overlaps(p), "%s %q %v over the axes %v", tx.class, tx.content, tx.box, p)
					}
				}
				assert.Equal(t, inside, in, "%s %q %v: inside the axes", tx.class, tx.content, tx.box)
				if tx.class == "legend" {
					assert.True(t, legend.contains(tx.box), "legend text %q %v outside the legend %v", tx.content, tx.box, legend)
				} else {
					assert.False(t, tx.box.overlaps(legend), "%s %q over the legend", tx.class, tx.content)
				}
				for _, o := range texts[k+1:] {
					assert.False(t, tx.box.overlaps(o.box), "%s %q %v overlaps %s %q %v", tx.class, tx.content, tx.box, o.class, o.content, o.box)
				}
			}
			for _, p := range plots {
				assert.False(t, legend.overlaps(p), "legend over the axes")
			}
			for _, c := range []string{"title", "xlabel", "ylabel", "tick", "legend", "pointlabel", "reflabel"} {
				assert.Positive(t, classes[c], "no %s text", c)
			}
		})
	}
}

// A point label stays clear of the other points: two points too close
// to tell apart keep no label, the others keep theirs.
func TestPointLabelsAvoidPoints(t *testing.T) {
	f := &Figure{Panels: []Panel{{Series: []Series{{
		X: []float64{0, 1, 1.02, 2}, Y: []float64{0, 1, 1.01, 2}, Labels: []string{"a", "b", "c", "d"},
	}}}}}
	_, _, _, texts := parseSVG(t, render(t, f))
	var got []string
	for _, tx := range texts {
		if tx.class == "pointlabel" {
			got = append(got, tx.content)
		}
	}
	assert.Equal(t, []string{"a", "d"}, got)
}

// A fixed range is kept, and its ticks are inside it.
func TestFixedRange(t *testing.T) {
	f := &Figure{Panels: []Panel{{XRange: Range{Min: 0, Max: 100}, YRange: Range{Min: 50, Max: 60},
		Series: []Series{{X: []float64{10, 20}, Y: []float64{55, 56}}}}}}
	_, _, _, texts := parseSVG(t, render(t, f))
	var ticks []string
	for _, tx := range texts {
		if tx.class == "tick" {
			ticks = append(ticks, tx.content)
		}
	}
	assert.Equal(t, []string{"50", "52", "54", "56", "58", "60", "0", "20", "40", "60", "80", "100"}, ticks)
}

// ticksOf returns the texts of the tick labels, in the order drawn (the
// y axis's, then the x axis's, panel by panel).
func ticksOf(t *testing.T, svg []byte) []string {
	_, _, _, texts := parseSVG(t, svg)
	var ticks []string
	for _, tx := range texts {
		if tx.class == "tick" {
			ticks = append(ticks, tx.content)
		}
	}
	return ticks
}

// A log axis has its ticks at the powers of ten inside the data's range
// (not decades beyond it), evenly spaced; 2 and 5 times them on an axis
// shorter than two decades.
func TestLogAxis(t *testing.T) {
	a := makeLogAxis(0.04, 300, 240, 11, false)
	assert.Equal(t, []string{"0.1", "1", "10", "100"}, a.labels)
	assert.Equal(t, []float64{0.1, 1, 10, 100}, a.ticks)
	assert.InDelta(t, a.pos(10, 240)-a.pos(1, 240), a.pos(100, 240)-a.pos(10, 240), 1e-9)
	assert.InDelta(t, 0, a.pos(0.04, 240), 1e-9)
	assert.InDelta(t, 240, a.pos(300, 240), 1e-9)
	assert.Equal(t, []string{"2", "5", "10", "20"}, makeLogAxis(1.5, 30, 240, 11, false).labels)
	assert.Equal(t, []string{"3", "4"}, makeLogAxis(2.5, 4.5, 240, 11, false).labels)
	assert.Equal(t, []string{"0.02", "0.05"}, makeLogAxis(0.015, 0.06, 240, 11, true).labels)
	// Twelve decades on a short axis: every second or third power.
	long := makeLogAxis(1e-6, 1e6, 100, 11, false)
	assert.Less(t, len(long.ticks), 13)
	assert.GreaterOrEqual(t, len(long.ticks), 3)
	assert.False(t, crowded(long, 100, 11, false))

	lo, hi := autoLogRange([]float64{0.1, 1000})
	assert.InDelta(t, math.Pow(10, -1.2), lo, 1e-12)
	assert.InDelta(t, math.Pow(10, 3.2), hi, 1e-9)

	// In a figure: the data ≤ 300 get no tick at 10000.
	f := &Figure{Panels: []Panel{{LogY: true, Series: []Series{{X: []float64{1, 2, 3}, Y: []float64{0.2, 31, 300}}}}}}
	ticks := ticksOf(t, render(t, f))
	assert.Equal(t, []string{"1", "10", "100"}, ticks[:3])
	assert.NotContains(t, ticks, "1000")
}

// Custom ticks replace the automatic ones, take markup, widen the range
// to hold them, and leave out those outside a fixed range.
func TestCustomTicks(t *testing.T) {
	f := &Figure{Panels: []Panel{{
		XTicks: []Tick{{At: 2, Label: "GAT"}, {At: 0, Label: "MLP"}, {At: 1, Label: "λ_s"}, {At: 3, Label: "SGC"}},
		Series: []Series{{X: []float64{0.9, 1.1}, Y: []float64{5, 6}}},
	}}}
	svg := render(t, f)
	ticks := ticksOf(t, svg)
	assert.Equal(t, []string{"MLP", "λs", "GAT", "SGC"}, ticks[len(ticks)-4:])
	assert.Contains(t, string(svg), `λ<tspan baseline-shift="sub"`)
	f.Panels[0].XRange = Range{Min: 0.5, Max: 2.5}
	ticks = ticksOf(t, render(t, f))
	assert.Equal(t, []string{"λs", "GAT"}, ticks[len(ticks)-2:])
}

// Error bars widen the range and are drawn with their caps; a dashed
// series is dashed in the panel and in the legend; a scatter has no
// line, and its small markers no outline; an extra legend entry is
// drawn once, after the panels' own.
func TestSeriesStyles(t *testing.T) {
	f := &Figure{Legend: Legend{Extra: []Series{{Name: "dashed: soft", Dashed: true, NoMarkers: true}}}, Panels: []Panel{{Series: []Series{
		{Name: "bars", X: []float64{1, 2}, Y: []float64{10, 20}, YLo: []float64{0, 15}, YHi: []float64{12, 40}},
		{X: []float64{1, 2}, Y: []float64{8, 18}, Dashed: true},
		{Name: "dots", X: []float64{1, 1.5, 2}, Y: []float64{5, 6, 7}, NoLine: true, Size: 1.5},
	}}}}
	svg := string(render(t, f))
	ticks := ticksOf(t, []byte(svg))
	assert.Equal(t, "0", ticks[0], "the y axis starts at the lowest bar end")
	assert.Equal(t, []string{"0", "10", "20", "30", "40"}, ticks[:5], "and ends at the highest")
	// Lines: two series lines and 3 per error bar in the panel, two
	// swatches (bars, the extra) in the legend; the scatter has none.
	assert.Equal(t, 2+3*2+2, strings.Count(svg, "<polyline"))
	assert.Equal(t, 2, strings.Count(svg, `stroke-dasharray="5 4"`), "the dashed series and the extra entry")
	assert.Equal(t, 3, strings.Count(svg, `r="1.5" fill="#009E73" stroke="none"`), "the scatter's markers")
	assert.Contains(t, string(svg), `r="3" fill="#009E73" stroke="#FFFFFF"`, "its legend marker, larger")
	legend := svg[strings.Index(svg, `<g class="legend">`):]
	assert.Less(t, strings.Index(legend, ">dots<"), strings.Index(legend, ">dashed: soft<"), "the extra entry after the panels'")
	assert.Equal(t, 2, strings.Count(legend, "<circle"), "markers for bars and dots, none for the extra entry")
	// Without markers: the line only, in the panel and in the legend.
	f.Panels[0].Series[0].NoMarkers = true
	svg = string(render(t, f))
	assert.Equal(t, 2+3+1, strings.Count(svg, "<circle"), "the dashed series' two, the scatter's three and its legend marker")
	assert.Equal(t, 2+3*2+2, strings.Count(svg, "<polyline"))
}

// Columns wrap the panels into rows: the axes of a column share their
// left edge, those of a row their top, and the title lies above them all,
// centred over the panels.
func TestGrid(t *testing.T) {
	f := gridFigure(LegendRight)
	w, _, rects, texts := parseSVG(t, render(t, f))
	plots := rects["plotarea"]
	require.Len(t, plots, 4)
	assert.Equal(t, plots[0].x0, plots[2].x0, "column 1")
	assert.Equal(t, plots[1].x0, plots[3].x0, "column 2")
	assert.Equal(t, plots[0].y0, plots[1].y0, "row 1")
	assert.Equal(t, plots[2].y0, plots[3].y0, "row 2")
	assert.Less(t, plots[0].x1, plots[1].x0)
	assert.Less(t, plots[0].y1, plots[2].y0)
	var title *svgText
	for k := range texts {
		if texts[k].class == "figtitle" {
			title = &texts[k]
		}
	}
	require.NotNil(t, title)
	assert.Equal(t, "a figure title: two rows of λs panels", title.content)
	for _, tx := range texts {
		if tx.class != "figtitle" {
			assert.LessOrEqual(t, title.box.y1, tx.box.y0, "%s %q above the title", tx.class, tx.content)
		}
	}
	assert.InDelta(t, (plots[0].x0+plots[1].x1)/2, (title.box.x0+title.box.x1)/2, 40, "centred over the panels")
	assert.Less(t, title.box.x1, w)
	// One column: the panels stacked.
	f.Columns = 1
	_, _, rects, _ = parseSVG(t, render(t, f))
	for k := 1; k < 4; k++ {
		assert.Equal(t, rects["plotarea"][0].x0, rects["plotarea"][k].x0)
		assert.Less(t, rects["plotarea"][k-1].y1, rects["plotarea"][k].y0)
	}
}

// With KeepLabels the labels of points too close to tell apart are kept,
// farther off with a leader line, clear of the other texts.
func TestKeepLabels(t *testing.T) {
	f := &Figure{Panels: []Panel{{Series: []Series{{
		X: []float64{0, 1, 1.02, 2}, Y: []float64{0, 1, 1.01, 2}, Labels: []string{"a", "b", "c", "d"}, KeepLabels: true,
	}}}}}
	svg := render(t, f)
	_, _, _, texts := parseSVG(t, svg)
	var got []string
	for k, tx := range texts {
		if tx.class == "pointlabel" {
			got = append(got, tx.content)
		}
		for _, o := range texts[k+1:] {
			assert.False(t, tx.box.overlaps(o.box), "%q overlaps %q", tx.content, o.content)
		}
	}
	assert.ElementsMatch(t, []string{"a", "b", "c", "d"}, got)
	assert.Equal(t, 2, strings.Count(string(svg), `stroke="`+leaderColor+`"`), "a leader line for each of b and c")
}

// Two figures inlined in one HTML page share one id namespace: each
// must clip its panels by clip paths of its own (the report's groups
// figure was clipped by the frontier figure's rectangles).
func TestClipIDsDifferBetweenFigures(t *testing.T) {
	ids := func(title string, panels int) []string {
		f := &Figure{Title: title}
		for k := 0; k < panels; k++ {
			f.Panels = append(f.Panels, Panel{Title: fmt.Sprint("p", k), Series: []Series{{X: []float64{0, 1}, Y: []float64{0, 1}}}})
		}
		var b bytes.Buffer
		require.NoError(t, f.WriteSVG(&b))
		return regexp.MustCompile(`clipPath id="([^"]+)"`).FindAllString(b.String(), -1)
	}
	a, b := ids("frontier", 2), ids("groups", 4)
	require.Len(t, a, 2)
	require.Len(t, b, 4)
	for _, x := range a {
		assert.NotContains(t, b, x)
	}
	assert.Equal(t, a, ids("frontier", 2), "the same figure, the same ids")
}
