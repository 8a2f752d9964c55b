package fmp_test

import (
	"bytes"
	"context"
	"encoding/xml"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fairmp/fairmp/metrics/selection"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gorgonia.org/tensor"

	"github.com/fairmp/fairmp/fmp"
	"github.com/fairmp/fairmp/metrics"
)

// TestFrontierWriteSVG: the figure is valid XML, draws both panels, one
// line per λs, the chosen point, the rule and the marks, the same bytes
// twice; bad configurations and empty frontiers are errors.
func TestFrontierWriteSVG(t *testing.T) {
	ds := smallSynthetic(t)
	m, task := onBackbone(t, "gcn", ds, tensor.Float64, fmp.DefaultConfig())
	_, err := m.FitTwoStage(context.Background(), task, fastConfig(20))
	require.NoError(t, err)
	fc := fmp.DefaultFrontierConfig()
	fc.LambdaF = []float64{0, 0.5, 2}
	fc.LambdaS = []float64{0, 1}
	fc.Rule = selection.MostAccurateWithin(metrics.DPDifference, 0.3)
	fc.Test = ds.Split.Test
	f, err := fmp.NewFrontier(context.Background(), m, task, fc)
	require.NoError(t, err)
	base := f.Reference
	pc := fmp.PlotConfig{Title: "a<b", Marks: []fmp.PlotMark{{Name: "backbone", Val: &base.Val, Test: &base.Test}, {Name: "val only", Val: &base.Val}}}
	var a, b bytes.Buffer
	require.NoError(t, f.WriteSVG(&a, pc))
	require.NoError(t, f.WriteSVG(&b, pc))
	assert.Equal(t, a.Bytes(), b.Bytes(), "deterministic")
	dec := xml.NewDecoder(bytes.NewReader(a.Bytes()))
	for {
		_, err := dec.Token()
		if err == io.EOF {
			break
		}
		require.NoError(t, err, "valid XML")
	}
	svg := a.String()
	for _, want := range []string{"a&lt;b: validation (choice)", "a&lt;b: test", "FMP chosen", "backbone", "val only", "rule: ΔDP ≤ 30", "FMP, λ"} {
		assert.Contains(t, svg, want)
	}
	assert.Equal(t, 1, strings.Count(svg, ">val only<"), "a mark without test metrics is drawn in the validation panel only (its legend entry)")
	assert.Contains(t, svg, ">ΔDP (%)<")

	// Another criterion: its axis, and its limit for a bound rule.
	fc.Rule = selection.MostAccurateWithin(metrics.DPRatio, 0.05)
	f, err = fmp.NewFrontier(context.Background(), m, task, fc)
	require.NoError(t, err)
	a.Reset()
	require.NoError(t, f.WriteSVG(&a, pc))
	// A ratio in the flags' unit (-bound 0.8), not in percent.
	for _, want := range []string{">DP ratio<", "rule: DP ratio ≥ 0.05", "rule: highest validation accuracy with DP ratio ≥ 0.05"} {
		assert.Contains(t, a.String(), want)
	}

	// No setting meets the rule: the reference is kept, and said so.
	fc.Rule = selection.MostAccurateWithin(metrics.DPDifference, 0)
	f, err = fmp.NewFrontier(context.Background(), m, task, fc)
	require.ErrorIs(t, err, selection.ErrNoCandidate)
	a.Reset()
	require.NoError(t, f.WriteSVG(&a, pc))
	assert.Contains(t, a.String(), "no setting met the rule: λ")
	assert.NotContains(t, a.String(), "FMP chosen")

	assert.ErrorContains(t, f.WriteSVG(&a, fmp.PlotConfig{Marks: []fmp.PlotMark{{}}}), "Marks[0] has no name")
	var empty fmp.Frontier
	assert.ErrorContains(t, empty.WriteSVG(&a, fmp.DefaultPlotConfig()), "no points")
}

// crowdedFrontier is a hand-made frontier of two λs lines of 20 λf
// settings each, most of them a fraction of a point apart: more labels
// than there is room for beside the points.
func crowdedFrontier() *fmp.Frontier {
	lf := []float64{0, 0.25, 0.5, 0.75, 1, 1.25, 1.5, 2, 2.5, 3, 3.5, 4, 5, 6, 7, 8, 10, 12, 14, 16}
	f := &fmp.Frontier{Rule: selection.FairestWithin(metrics.DPDifference, 0.01), Chosen: 3}
	for k, ls := range []float64{0, 1} {
		for i, v := range lf {
			rep := func(shift float64) metrics.Report {
				dp := 0.40 - 0.012*float64(i)/(1+0.5*float64(k)) + shift
				return metrics.Report{Accuracy: 0.89 - 0.002*float64(i)/(1+float64(k)) + shift, DemographicParity: dp,
					Groups: []metrics.GroupStats{{Group: 0, Count: 50, Positives: 25, Negatives: 25, SelectionRate: 0.5 + dp},
						{Group: 1, Count: 50, Positives: 25, Negatives: 25, SelectionRate: 0.5}}}
			}
			f.Points = append(f.Points, fmp.FrontierPoint{Config: fmp.Config{LambdaS: ls, LambdaF: v}, Val: rep(0), Test: rep(0.003)})
		}
	}
	f.Reference = f.Points[0]
	return f
}

// TestFrontierWriteSVGMajorityAndLabels: the majority-class accuracy is a
// line in each panel (or, far below the frontier, named in the legend
// only), the rule is the figure's title, and every λf label is drawn in
// both panels even when the points crowd.
func TestFrontierWriteSVGMajorityAndLabels(t *testing.T) {
	f := crowdedFrontier()
	var b bytes.Buffer
	require.NoError(t, f.WriteSVG(&b, fmp.PlotConfig{MajorityVal: 0.875, MajorityTest: 0.88}))
	svg := b.String()
	if dir := os.Getenv("FMP_PLOT_OUT"); dir != "" { // to look at
		require.NoError(t, os.WriteFile(filepath.Join(dir, "crowded-frontier.svg"), b.Bytes(), 0o644))
	}
	for _, want := range []string{">majority class 87.50<", ">majority class 88.00<", "majority class: val 87.50, test 88.00<",
		">rule: lowest validation ΔDP within 1 accuracy point of the reference<"} {
		assert.True(t, strings.Contains(svg, want), "the figure has no %q", want)
	}
	for _, lf := range []string{"0", "0.25", "0.5", "0.75", "1", "1.25", "1.5", "2", "2.5", "3", "3.5", "4", "5", "6", "7", "8", "10", "12", "14", "16"} {
		n := strings.Count(svg, `paint-order="stroke">`+lf+`</text>`)
		assert.Equal(t, 4, n, "λf %s: want a label at each of its 4 points (2 λs × 2 panels)", lf)
	}

	// Far below the frontier: no line, the legend names it.
	b.Reset()
	require.NoError(t, f.WriteSVG(&b, fmp.PlotConfig{MajorityVal: 0.5, MajorityTest: 0.52}))
	svg = b.String()
	assert.False(t, strings.Contains(svg, ">majority class 50.00<"), "a line far below the frontier squashes it")
	assert.True(t, strings.Contains(svg, "majority class (below the axes): val 50.00, test 52.00<"))

	// Without a majority rate: neither.
	b.Reset()
	require.NoError(t, f.WriteSVG(&b, fmp.DefaultPlotConfig()))
	assert.False(t, strings.Contains(b.String(), "majority"))

	for _, bad := range []fmp.PlotConfig{{MajorityVal: 1.5}, {MajorityTest: -0.1}} {
		assert.ErrorContains(t, f.WriteSVG(&b, bad), "want an accuracy in [0, 1]")
	}
}
