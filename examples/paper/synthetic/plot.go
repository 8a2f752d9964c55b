package main

import (
	"bytes"
	"fmt"
	"os"

	"github.com/fairmp/fairmp/examples/paper/internal/exp"
	"github.com/fairmp/fairmp/internal/svgplot"
	"github.com/fairmp/fairmp/metrics"
)

// plotDP draws ΔDP (percent, mean over seeds, with ± one standard
// deviation as error bars) against the measured sensitive homophily, one
// line per model, as SVG. The models' points are set apart by dodge
// along x (a hundredth of the axis between neighbours), so that their
// error bars do not hide each other. The y axis starts at 0.
func plotDP(path string, pts []point, models []string) error {
	runs := 0
	for _, pt := range pts {
		runs = max(runs, pt.Summary.Runs)
	}
	p := svgplot.Panel{
		Title:  fmt.Sprintf("ΔDP against sensitive homophily (mean ± std over %s)", seedsText(runs)),
		XLabel: "sensitive homophily of the graph (measured)",
		YLabel: "ΔDP (%)",
	}
	shapes := []svgplot.Shape{svgplot.Circle, svgplot.Square, svgplot.Diamond, svgplot.Triangle, svgplot.TriangleDown}
	top := 0.0
	const dodge = 0.005
	for i, m := range models {
		dx := dodge * (float64(i) - float64(len(models)-1)/2)
		se := svgplot.Series{Name: svgplot.Escape(exp.DisplayName(m)), Shape: shapes[i%len(shapes)]}
		for _, pt := range pts {
			if pt.Model != m {
				continue
			}
			mean, sd := metrics.Percent(pt.Summary.DemographicParity.Mean), metrics.Percent(pt.Summary.DemographicParity.Std)
			se.X, se.Y = append(se.X, pt.Measured+dx), append(se.Y, mean)
			se.YLo, se.YHi = append(se.YLo, mean-sd), append(se.YHi, mean+sd)
			top = max(top, mean+sd)
		}
		if len(se.X) > 0 {
			p.Series = append(p.Series, se)
		}
	}
	if len(p.Series) == 0 {
		return fmt.Errorf("plot %s: no points", path)
	}
	p.YRange = svgplot.Range{Min: 0, Max: 1.05 * top}
	fig := svgplot.Figure{Panels: []svgplot.Panel{p}, PlotWidth: 420, PlotHeight: 280}
	var b bytes.Buffer
	if err := fig.WriteSVG(&b); err != nil {
		return fmt.Errorf("plot %s: %w", path, err)
	}
	return os.WriteFile(path, b.Bytes(), 0o644)
}

// seedsText says how many seeds a mean is over.
func seedsText(n int) string {
	if n == 1 {
		return "one seed"
	}
	return fmt.Sprintf("%d seeds", n)
}
