package main

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"io"
	"os"
	"strconv"

	"github.com/fairmp/fairmp/internal/svgplot"
)

// figurePoint is one seed and method of runs.csv: ΔDP on the validation
// nodes and on the new nodes, in percent.
type figurePoint struct {
	dataset, method string
	val, new        float64
}

// readFigurePoints reads the columns the figure needs from a runs.csv
// written by this command.
func readFigurePoints(r io.Reader, name string) ([]figurePoint, error) {
	rows, err := csv.NewReader(r).ReadAll()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if len(rows) < 2 {
		return nil, fmt.Errorf("%s: no run rows", name)
	}
	col := map[string]int{}
	for i, h := range rows[0] {
		col[h] = i
	}
	for _, h := range []string{"dataset", "method", "val_dp", "new_dp"} {
		if _, ok := col[h]; !ok {
			return nil, fmt.Errorf("%s: no %q column: not a runs.csv of deploy", name, h)
		}
	}
	var pts []figurePoint
	for k, r := range rows[1:] {
		v, err1 := strconv.ParseFloat(r[col["val_dp"]], 64)
		n, err2 := strconv.ParseFloat(r[col["new_dp"]], 64)
		if err1 != nil || err2 != nil {
			return nil, fmt.Errorf("%s:%d: val_dp %q, new_dp %q: want numbers", name, k+2, r[col["val_dp"]], r[col["new_dp"]])
		}
		pts = append(pts, figurePoint{dataset: r[col["dataset"]], method: r[col["method"]], val: 100 * v, new: 100 * n})
	}
	return pts, nil
}

// writeFigure draws, per data set, each seed's ΔDP on the new nodes
// against its ΔDP on the validation nodes, one marker style per method,
// with the diagonal (the new nodes as fair as validation said).
func writeFigure(path string, pts []figurePoint) error {
	var datasets []string
	for _, p := range pts {
		if !contains(datasets, p.dataset) {
			datasets = append(datasets, p.dataset)
		}
	}
	shapes := map[string]svgplot.Shape{mBackbone: svgplot.Circle, mThresholds: svgplot.Square, mRecompute: svgplot.Diamond, mFitted: svgplot.Cross}
	var panels []svgplot.Panel
	for _, d := range datasets {
		p := svgplot.Panel{Title: svgplot.Escape(d), XLabel: "ΔDP on validation (%)", YLabel: "ΔDP on the new nodes (%)"}
		top := 0.0
		for _, m := range methods {
			se := svgplot.Series{Name: svgplot.Escape(title(m)), Shape: shapes[m], NoLine: true, Color: svgplot.SeriesColor(indexOf(methods, m))}
			for _, pt := range pts {
				if pt.dataset == d && pt.method == m {
					se.X, se.Y = append(se.X, pt.val), append(se.Y, pt.new)
					top = max(top, pt.val, pt.new)
				}
			}
			if len(se.X) > 0 {
				p.Series = append(p.Series, se)
			}
		}
		top *= 1.05
		p.Series = append([]svgplot.Series{{Name: "new = validation", X: []float64{0, top}, Y: []float64{0, top}, Dashed: true, NoMarkers: true, Color: "#999999"}}, p.Series...)
		p.XRange, p.YRange = svgplot.Range{Min: 0, Max: top}, svgplot.Range{Min: 0, Max: top}
		panels = append(panels, p)
	}
	if len(panels) == 0 {
		return fmt.Errorf("figure %s: no points", path)
	}
	fig := svgplot.Figure{Title: "Does each method keep on new nodes the ΔDP it showed on validation? (one marker per seed)",
		Panels: panels, Columns: 2, PlotWidth: 300, PlotHeight: 240}
	var b bytes.Buffer
	if err := fig.WriteSVG(&b); err != nil {
		return fmt.Errorf("figure %s: %w", path, err)
	}
	return os.WriteFile(path, b.Bytes(), 0o644)
}

func indexOf(s []string, x string) int {
	for i, v := range s {
		if v == x {
			return i
		}
	}
	return -1
}
