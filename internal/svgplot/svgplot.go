package svgplot

import (
	"bytes"
	"fmt"
	"io"
	"math"
)

// Figure is a row (or a grid) of panels and their shared legend.
type Figure struct {
	// Title, if not empty, is drawn above the panels (markup).
	Title string
	// Panels are drawn left to right; a figure needs at least one.
	Panels []Panel
	// Columns is the number of panels in a row (0: all in one row); the
	// panels fill the rows left to right, top to bottom.
	Columns int
	// Legend says where the legend goes and its title.
	Legend Legend
	// PlotWidth and PlotHeight are the size of each panel's axes in
	// pixels (0: 320 × 240); the titles, labels and ticks lie around it.
	PlotWidth, PlotHeight float64
	// FontSize is the size of labels and legend text in pixels (0: 12);
	// titles are a little larger, ticks and point labels a little smaller.
	FontSize float64
}

// Panel is one pair of axes and what is drawn in them.
type Panel struct {
	// Title, XLabel and YLabel are markup (see the package documentation);
	// empty ones are left out.
	Title, XLabel, YLabel string
	// Series are drawn in order, each over the previous ones.
	Series []Series
	// Marks are drawn over the series.
	Marks []Mark
	// Lines are drawn under the series.
	Lines []RefLine
	// XRange and YRange fix an axis's range; their zero values take it
	// from the panel's data, reference lines and XTicks or YTicks
	// included.
	XRange, YRange Range
	// XTicks and YTicks, if not empty, replace an axis's automatic ticks:
	// a labelled tick at each value, such as categories at 0, 1, 2. Ticks
	// outside a fixed range are left out.
	XTicks, YTicks []Tick
	// LogX and LogY draw an axis on a log scale, with ticks at the powers
	// of ten (and at 2 and 5 times them when the axis spans less than a
	// decade or two). Every value on a log axis must be positive.
	LogX, LogY bool
}

// Tick is a labelled tick of an axis.
type Tick struct {
	// At is where the tick is on its axis.
	At float64
	// Label is drawn beside the tick (markup).
	Label string
}

// Series is a line through points, a marker at each point; optionally
// dashed, without the line (a scatter), or with an error bar at each
// point.
type Series struct {
	// Name is the legend label (markup); an empty name has no entry.
	Name string
	// X and Y are the points' coordinates, of the same length (≥ 1).
	X, Y []float64
	// Labels, if not nil, has one text per point (markup), drawn beside
	// it where it fits; "" draws none.
	Labels []string
	// Color is an SVG colour; "" is SeriesColor(j) for the panel's j-th
	// series.
	Color string
	// Shape is the points' marker (Circle by default).
	Shape Shape
	// Size is the markers' radius in pixels (0: 4). Markers smaller than
	// 3 pixels have no white outline, so that a dense scatter stays
	// readable; the legend draws them with a radius of at least 3.
	Size float64
	// Dashed draws the line dashed.
	Dashed bool
	// NoLine draws the markers only: a scatter.
	NoLine bool
	// NoMarkers draws the line only (the points still keep their labels
	// clear of each other). A series with neither is an error.
	NoMarkers bool
	// KeepLabels draws every label: one that fits nowhere beside its
	// point, or whose point touches another point, is placed farther
	// off in free room, joined to its point by a thin grey leader line
	// (after every label that fits beside its point is placed). Only
	// when the axes have no free room left is such a label drawn where
	// it overlaps. Without KeepLabels those labels are left out.
	KeepLabels bool
	// YLo and YHi, if not nil, are the ends of an error bar at each point
	// (such as mean ± one standard deviation or an interval's bounds),
	// with YLo[k] ≤ Y[k] ≤ YHi[k]; both or neither are set.
	YLo, YHi []float64
}

// Mark is a single marker.
type Mark struct {
	// X and Y are the marker's centre.
	X, Y float64
	// Shape is the marker's shape (Circle by default).
	Shape Shape
	// Color is an SVG colour; "" is Black.
	Color string
	// Size is the marker's radius in pixels (0: 6).
	Size float64
	// Label is the legend label (markup); an empty label has no entry.
	Label string
}

// RefLine is a dashed line across the axes at one value, with a label
// beside it, such as a limit.
type RefLine struct {
	// Vertical draws the line at x = At; otherwise at y = At.
	Vertical bool
	// At is where the line crosses its axis.
	At float64
	// Label is drawn beside the line (markup).
	Label string
	// Color is an SVG colour; "" is a dark grey.
	Color string
}

// Range is an axis's range from Min to Max. The zero value takes the
// range from the data: their extent plus 5% each side.
type Range struct {
	Min, Max float64
}

// Legend places the figure's legend.
type Legend struct {
	// Position is where the legend goes.
	Position LegendPosition
	// Title, if not empty, is drawn above the entries (markup).
	Title string
	// Extra are entries drawn after the panels' own, for a style that
	// several series share (a dashed line meaning one quantity, small
	// markers meaning other settings): each is drawn as a series of that
	// Name, Color ("" is Black), Shape, Size, Dashed, NoLine and NoMarkers
	// would be.
	// Their X, Y, Labels, YLo and YHi must be empty.
	Extra []Series
}

// LegendPosition is where the legend goes, always outside the axes.
type LegendPosition int

const (
	// LegendRight puts the legend to the right of the last panel, at the
	// height of the axes.
	LegendRight LegendPosition = iota
	// LegendBelow puts the legend below the panels, its entries in rows.
	LegendBelow
	// LegendNone draws no legend.
	LegendNone
)

// Shape is a marker's shape.
type Shape int

const (
	// Circle is a filled disc.
	Circle Shape = iota
	// Ring is a circle's outline, to circle another marker.
	Ring
	// Cross is an X of two strokes.
	Cross
	// Triangle is a filled triangle, point up.
	Triangle
	// Square is a filled square.
	Square
	// Diamond is a filled square standing on a corner.
	Diamond
	// TriangleDown is a filled triangle, point down.
	TriangleDown
)

// String returns the shape's name.
func (s Shape) String() string {
	if s >= Circle && s <= TriangleDown {
		return [...]string{"circle", "ring", "cross", "triangle", "square", "diamond", "triangle-down"}[s]
	}
	return fmt.Sprintf("Shape(%d)", int(s))
}

// The Okabe–Ito colours, distinguishable with the common kinds of colour
// blindness.
const (
	Black         = "#000000"
	Orange        = "#E69F00"
	SkyBlue       = "#56B4E9"
	BluishGreen   = "#009E73"
	Yellow        = "#F0E442"
	Blue          = "#0072B2"
	Vermillion    = "#D55E00"
	ReddishPurple = "#CC79A7"
)

// SeriesColor returns the k-th colour of the series palette: the
// Okabe–Ito colours without black (left to marks), yellow last, cycling.
func SeriesColor(k int) string {
	p := [...]string{Blue, Orange, BluishGreen, ReddishPurple, SkyBlue, Vermillion, Yellow}
	return p[((k%len(p))+len(p))%len(p)]
}

// WriteSVG draws the figure as a standalone SVG document on w. It writes
// nothing when the figure is invalid: no panels, a panel with nothing
// to set its range, a non-finite coordinate, lengths that differ, an
// error bar that does not hold its point, a value ≤ 0 on a log axis, an
// empty or reversed range, an unknown shape, a negative size, tick
// labels too long to fit side by side, malformed markup; the error names
// the panel and the series, mark, line or tick.
func (f *Figure) WriteSVG(w io.Writer) error {
	var b bytes.Buffer
	if err := f.render(&b); err != nil {
		return err
	}
	_, err := w.Write(b.Bytes())
	return err
}

// finite reports whether v is neither NaN nor infinite.
func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
