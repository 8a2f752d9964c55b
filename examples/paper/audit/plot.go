package main

import (
	"bytes"
	"fmt"
	"os"

	"github.com/fairmp/fairmp/fmp"
	"github.com/fairmp/fairmp/internal/svgplot"
)

// groupColors are the groups' colours: s = 0 blue, s = 1 vermillion, then
// the palette's next.
var groupColors = []string{svgplot.Blue, svgplot.Vermillion, svgplot.BluishGreen, svgplot.ReddishPurple}

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
	xmin, ymin := coords(rep.Baseline, 0, rep.C)
	xmax, ymax := xmin, ymin
	for _, pn := range panels {
		for i := 0; i < rep.N; i++ {
			x, y := coords(pn.z, i, rep.C)
			xmin, xmax, ymin, ymax = min(xmin, x), max(xmax, x), min(ymin, y), max(ymax, y)
		}
	}
	dx, dy := 0.03*(xmax-xmin), 0.03*(ymax-ymin)
	fig := svgplot.Figure{PlotWidth: 380, PlotHeight: 300,
		Title: fmt.Sprintf("Each node's two logits, rotated by 45° (%d nodes)", rep.N)}
	for _, pn := range panels {
		p := svgplot.Panel{Title: pn.title, XLabel: "z_1 − z_0 (decision margin)", YLabel: "z_0 + z_1",
			XRange: svgplot.Range{Min: xmin - dx, Max: xmax + dx}, YRange: svgplot.Range{Min: ymin - dy, Max: ymax + dy},
			Lines: []svgplot.RefLine{{Vertical: true, At: 0, Label: "ŷ = 1 →"}}}
		groups := map[int]*svgplot.Series{}
		for i := 0; i < rep.N; i++ {
			g := sens[i]
			if g >= len(groupColors) {
				return fmt.Errorf("plot %s: group %d of node %d: at most %d groups", path, g, i, len(groupColors))
			}
			se, ok := groups[g]
			if !ok {
				se = &svgplot.Series{Name: fmt.Sprintf("s = %d", g), NoLine: true, Size: 1.6}
				if g < 0 {
					se.Name, se.Color = "s unknown", "#999999"
				} else {
					se.Color = groupColors[g]
				}
				groups[g] = se
			}
			x, y := coords(pn.z, i, rep.C)
			se.X, se.Y = append(se.X, x), append(se.Y, y)
		}
		for g := -1; g < len(groupColors); g++ {
			if se, ok := groups[g]; ok {
				p.Series = append(p.Series, *se)
			}
		}
		fig.Panels = append(fig.Panels, p)
	}
	var b bytes.Buffer
	if err := fig.WriteSVG(&b); err != nil {
		return fmt.Errorf("plot %s: %w", path, err)
	}
	return os.WriteFile(path, b.Bytes(), 0o644)
}

// coords returns node i's rotated logits (z₁ − z₀, z₀ + z₁).
func coords(z []float64, i, c int) (x, y float64) {
	return z[i*c+1] - z[i*c], z[i*c] + z[i*c+1]
}
