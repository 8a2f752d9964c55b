package main

import (
	"github.com/fairmp/fairmp/examples/paper/internal/exp"
	"github.com/fairmp/fairmp/metrics"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
)

// plotDP draws ΔDP (percent, mean over seeds, with ±std error bars)
// against the measured sensitive homophily, one line per model, as SVG.
func plotDP(path string, pts []point, models []string) error {
	p := plot.New()
	p.Title.Text = "Demographic parity gap vs sensitive homophily"
	p.X.Label.Text = "sensitive homophily of the graph"
	p.Y.Label.Text = "ΔDP (%)"
	p.Legend.Top = true
	p.Legend.Left = true
	p.Add(plotter.NewGrid())
	for i, m := range models {
		var xys plotter.XYs
		var errs plotter.YErrors
		for _, pt := range pts {
			if pt.Model != m {
				continue
			}
			xys = append(xys, plotter.XY{X: pt.Measured, Y: metrics.Percent(pt.Summary.DemographicParity.Mean)})
			sd := metrics.Percent(pt.Summary.DemographicParity.Std)
			errs = append(errs, struct{ Low, High float64 }{sd, sd})
		}
		line, points, err := plotter.NewLinePoints(xys)
		if err != nil {
			return err
		}
		c := plotutil.Color(i)
		line.Color, points.Color = c, c
		line.Width = vg.Points(1.5)
		points.Shape = plotutil.Shape(i)
		eb, err := plotter.NewYErrorBars(struct {
			plotter.XYer
			plotter.YErrorer
		}{xys, errs})
		if err != nil {
			return err
		}
		eb.Color = c
		p.Add(line, points, eb)
		p.Legend.Add(exp.DisplayName(m), line, points)
	}
	p.Y.Min = 0
	return p.Save(6*vg.Inch, 4*vg.Inch, path)
}
