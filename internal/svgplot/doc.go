// Package svgplot draws small 2-D charts as standalone SVG, with the
// standard library only.
//
// # Model
//
// A [Figure] is a row of [Panel]s drawn side by side (or a grid of them,
// Figure.Columns a row, the axes of a row and of a column aligned),
// an optional title above them, and one legend shared by all of them. A
// panel is one pair of axes with a title, an x and a y label, and what
// is drawn in it:
//
//   - [Series]: points joined by a line, each point drawn as a marker,
//     optionally with a short text label beside it; the line may be
//     dashed (Series.Dashed) or left out for a scatter
//     (Series.NoLine, with small markers: Series.Size), the markers
//     may be left out (Series.NoMarkers), and each
//     point may carry a vertical error bar (Series.YLo, Series.YHi);
//   - [Mark]s: single markers of a [Shape] (circle, ring, cross, triangle,
//     square, diamond, triangle pointing down);
//   - [RefLine]s: dashed vertical or horizontal lines with a label, such
//     as a rule's limit.
//
// An axis runs over the panel's data (series and their error bars, marks
// and reference lines) plus a margin, or over the [Range] the caller
// fixes. Its ticks are "nice" numbers (steps of 1, 2 or 5 times a power
// of ten) printed with the same number of decimals along the axis. An
// axis may instead be logarithmic (Panel.LogX, Panel.LogY): its range
// is the data's in powers of ten plus a margin, not whole decades, and
// its ticks the powers of ten inside it (every second or third on a long
// axis; 1, 2 and 5 times them on a short one), printed as short as they
// go ("0.1", "1", "100"). Or the caller gives the ticks (Panel.XTicks,
// Panel.YTicks: a value and a label each, such as categories at 0, 1,
// 2); labels too long to sit side by side are an error, not a clash.
//
// Every series and every mark with a legend label gets a legend entry;
// entries with the same label and style in several panels are shown
// once. Legend.Extra adds entries for a style several series share
// (such as "dashed: mean P(y = 1)"). The legend lies outside the axes, to
// the right of the last panel or below the panels.
//
// No font metrics are available, so the layout estimates text widths
// generously (about 0.65 em per character, more for wide glyphs) and
// places every text, the legend and the axes so that they lie inside the
// canvas and do not overlap each other's boxes. A point label that would
// overlap a line or another label, or come within a few pixels of another
// point, wherever it is tried beside its point is left out: points too
// close to tell apart keep no label; a series with KeepLabels keeps them,
// farther off with a leader line, and where no place beside or around the
// point is free, at the nearest place in the axes that overlaps no other
// text (left out only when there is none: texts are never drawn over
// each other). Error bars count as lines. A
// reference line's label goes in the first of four places along the line
// that is clear of the data, or in the first place when none is.
//
// The output depends only on the input: the same Figure gives the same
// bytes.
//
// # Text markup
//
// The figure's and the panels' titles, axis labels, tick labels given by
// the caller, legend labels and point and line labels may hold
// any Unicode text (λ, Δ, ≤) and subscripts:
//
//	λ_s       the one character after "_" is a subscript: λ with s below
//	λ_{max}   a braced group is a subscript: λ with "max" below
//	a\_b      a backslash makes the next character literal: "a_b"
//	a\\b      a literal backslash
//
// A subscript is drawn as <tspan baseline-shift="sub"> in a smaller font.
// Subscripts do not nest. Text that is not markup (a file name, a data
// set's name) should go through [Escape] first. Malformed markup (a
// trailing "_" or "\", an unclosed "_{") is an error.
package svgplot
