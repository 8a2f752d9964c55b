package fmp_test

import (
	"bytes"
	"encoding/xml"
	"io"
	"strings"
	"testing"

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
	_, err := fmp.FitTwoStage(m, task, fastConfig(20))
	require.NoError(t, err)
	fc := fmp.DefaultFrontierConfig()
	fc.LambdaF = []float64{0, 0.5, 2}
	fc.LambdaS = []float64{0, 1}
	fc.Rule = metrics.MostAccurateWithin(metrics.DPDifference, 0.3)
	fc.Test = ds.Split.Test
	f, err := fmp.NewFrontier(m, task, fc)
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
	fc.Rule = metrics.MostAccurateWithin(metrics.DPRatio, 0.05)
	f, err = fmp.NewFrontier(m, task, fc)
	require.NoError(t, err)
	a.Reset()
	require.NoError(t, f.WriteSVG(&a, pc))
	for _, want := range []string{">DP ratio (%)<", "rule: DP ratio ≥ 5"} {
		assert.Contains(t, a.String(), want)
	}

	// No setting meets the rule: the reference is kept, and said so.
	fc.Rule = metrics.MostAccurateWithin(metrics.DPDifference, 0)
	f, err = fmp.NewFrontier(m, task, fc)
	require.ErrorIs(t, err, metrics.ErrNoCandidate)
	a.Reset()
	require.NoError(t, f.WriteSVG(&a, pc))
	assert.Contains(t, a.String(), "no setting met the rule: λ")
	assert.NotContains(t, a.String(), "FMP chosen")

	assert.ErrorContains(t, f.WriteSVG(&a, fmp.PlotConfig{Marks: []fmp.PlotMark{{}}}), "Marks[0] has no name")
	var empty fmp.Frontier
	assert.ErrorContains(t, empty.WriteSVG(&a, fmp.DefaultPlotConfig()), "no points")
}
