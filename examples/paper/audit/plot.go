package main

import (
	"fmt"
	"image/color"
	"os"

	"github.com/fairmp/fairmp/fmp"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"
)

var groupColors = []color.Color{
	color.NRGBA{R: 0x1f, G: 0x77, B: 0xb4, A: 0x90}, // s=0: blue
	color.NRGBA{R: 0xd6, G: 0x27, B: 0x28, A: 0x90}, // s=1: red
	color.NRGBA{R: 0x2c, G: 0xa0, B: 0x2c, A: 0x90},
	color.NRGBA{R: 0x94, G: 0x67, B: 0xbd, A: 0x90},
}

// plotLogits writes two scatter plots side by side: each node's logits
// without and with the sensitive steps, coloured by group (nodes with an
// unknown group in grey), on shared axes. The two logits (z₀, z₁) are
// shown rotated by 45°: x = z₁ − z₀, the decision margin (ŷ = 1 right of
// the dashed line x = 0), and y = z₀ + z₁, the direction the softmax
// ignores; without the rotation the points of a binary classifier lie
// along a diagonal.
func plotLogits(path string, rep *fmp.AuditReport, sens []int) error {
	panels := []struct {
		title string
		z     []float64
	}{{"without the sensitive steps (u ≡ 0)", rep.Baseline}, {"FMP (with the sensitive steps)", rep.Output}}
	var plots [1][2]*plot.Plot
	xmin, ymin := coords(rep.Baseline, 0, rep.C)
	xmax, ymax := xmin, ymin
	for _, pn := range panels {
		for i := 0; i < rep.N; i++ {
			x, y := coords(pn.z, i, rep.C)
			xmin, xmax, ymin, ymax = min(xmin, x), max(xmax, x), min(ymin, y), max(ymax, y)
		}
	}
	for k, pn := range panels {
		p := plot.New()
		p.Title.Text = pn.title
		p.X.Label.Text = "z₁ − z₀ (decision margin)"
		p.Y.Label.Text = "z₀ + z₁"
		p.X.Min, p.X.Max, p.Y.Min, p.Y.Max = xmin, xmax, ymin, ymax
		groups := map[int]plotter.XYs{}
		for i := 0; i < rep.N; i++ {
			x, y := coords(pn.z, i, rep.C)
			groups[sens[i]] = append(groups[sens[i]], plotter.XY{X: x, Y: y})
		}
		for g := -1; g < len(groupColors); g++ {
			xy, ok := groups[g]
			if !ok {
				continue
			}
			s, err := plotter.NewScatter(xy)
			if err != nil {
				return err
			}
			s.GlyphStyle.Radius = vg.Points(1.2)
			s.GlyphStyle.Shape = draw.CircleGlyph{}
			if g < 0 {
				s.GlyphStyle.Color = color.Gray{Y: 0x99}
				p.Legend.Add("s unknown", s)
			} else {
				s.GlyphStyle.Color = groupColors[g]
				p.Legend.Add(fmt.Sprintf("s=%d", g), s)
			}
			p.Add(s)
		}
		boundary, err := plotter.NewLine(plotter.XYs{{X: 0, Y: ymin}, {X: 0, Y: ymax}})
		if err != nil {
			return err
		}
		boundary.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
		boundary.Color = color.Gray{Y: 0x40}
		p.Add(boundary)
		p.Legend.Top = true
		plots[0][k] = p
	}
	img := vgsvg.New(12*vg.Inch, 5*vg.Inch)
	dc := draw.New(img)
	t := draw.Tiles{Rows: 1, Cols: 2, PadX: 4 * vg.Millimeter, PadY: 2 * vg.Millimeter,
		PadTop: 2 * vg.Millimeter, PadBottom: 2 * vg.Millimeter, PadLeft: 2 * vg.Millimeter, PadRight: 2 * vg.Millimeter}
	grid := [][]*plot.Plot{plots[0][:]}
	canvases := plot.Align(grid, t, dc)
	for j, p := range grid[0] {
		p.Draw(canvases[0][j])
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := img.WriteTo(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// coords returns node i's rotated logits (z₁ − z₀, z₀ + z₁).
func coords(z []float64, i, c int) (x, y float64) {
	return z[i*c+1] - z[i*c], z[i*c] + z[i*c+1]
}
