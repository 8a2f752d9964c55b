package main

import (
	"bytes"
	"encoding/json"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/fairmp/fairmp/metrics/diagnose"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fairmp/fairmp/graph/datasets"
	"github.com/fairmp/fairmp/metrics"
)

func TestFmtPct(t *testing.T) {
	assert.Equal(t, "12.34", fmtPct(0.1234))
	assert.Equal(t, "0.00", fmtPct(0))
	for _, v := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		assert.Equal(t, "n/a", fmtPct(v))
	}
	assert.Equal(t, "0.800", fmtCrit(metrics.DPRatio, 0.8))
	assert.Equal(t, "n/a", fmtCrit(metrics.DPRatio, math.NaN()))
	assert.Equal(t, "n/a", fmtInterval(nil, metrics.Interval{Point: math.NaN()}))
	assert.Equal(t, "50.00 [40.00, 60.00]", fmtInterval(nil, metrics.Interval{Point: 0.5, Lo: 0.4, Hi: 0.6}))
}

// marksOf marks a method from its diagnostics (the report says which way
// a selection is trivial): trivial first, then not above the majority
// rate, then a rule not met; other diagnostics mark nothing.
func TestMarksOf(t *testing.T) {
	all := metrics.Report{Classes: 2, Accuracy: 0.7, Overall: metrics.GroupStats{Count: 100, Selected: 100, Positives: 70}}
	none := metrics.Report{Classes: 2, Accuracy: 0.3, Overall: metrics.GroupStats{Count: 100, Selected: 0, Positives: 70}}
	assert.Equal(t, []string{"trivial: selects every node", "not above the majority rate: accuracy 70.00% ≤ 70.00%", "rule not met"}, marksOf([]diagnose.Diagnostic{
		{Code: diagnose.RuleNotMet, Subject: "fmp"},
		{Code: diagnose.BelowMajority, Subject: "fmp"},
		{Code: diagnose.TrivialSelection, Subject: "fmp", Message: "it selects every node (100.00% selected)"},
	}, all, nil))
	assert.Equal(t, []string{"trivial: selects no node"}, marksOf([]diagnose.Diagnostic{{Code: diagnose.TrivialSelection, Subject: "thresholds", Message: "it selects no node (0.00% selected)"}}, none, nil))
	assert.Empty(t, marksOf([]diagnose.Diagnostic{{Code: diagnose.SmallGroup, Subject: "backbone"}}, all, nil))
}

// Issue 53 A7: a row at 70.40% against a 70.00% majority was marked
// "below the majority rate" (a 0.5-point margin). The mark says what the
// rule checked: the accuracy at or below the rate, or its interval
// reaching down to it.
func TestMajorityMarkSaysWhatItChecks(t *testing.T) {
	rep := metrics.Report{Classes: 2, Accuracy: 0.704, Overall: metrics.GroupStats{Count: 500, Selected: 300, Positives: 350}}
	d := []diagnose.Diagnostic{{Code: diagnose.BelowMajority, Subject: "fmp"}}
	assert.Equal(t, []string{"not above the majority rate: accuracy 70.40%, but its 95% interval [67.80, 72.90] reaches 70.00%"},
		marksOf(d, rep, &metrics.Interval{Point: 0.704, Lo: 0.678, Hi: 0.729}))
	rep.Accuracy = 0.69
	assert.Equal(t, []string{"not above the majority rate: accuracy 69.00% ≤ 70.00%"},
		marksOf(d, rep, &metrics.Interval{Point: 0.69, Lo: 0.65, Hi: 0.73}))
}

// A rate undefined for a group (no negative test node: no FPR) is drawn
// as nothing, its tick reads n/a, and the defined ones are drawn.
func TestGroupsFigureNA(t *testing.T) {
	ds := &datasets.Dataset{Name: "toy", Sens: []int{0, 1}, Labels: []int{0, 1}, GroupNames: []string{"north", "south"}, ClassNames: []string{"no", "yes"}}
	iv := metrics.Interval{Point: 0.5, Lo: 0.3, Hi: 0.7}
	rates := []methodRates{{name: "backbone", rates: []*metrics.GroupRates{
		{Group: 0, Selection: iv, TPR: &iv, FPR: &iv},
		{Group: 1, Selection: iv, TPR: &iv}, // no negative test node
	}}}
	fig, err := groupsFigure(&result{ds: ds}, rates)
	require.NoError(t, err)
	var b bytes.Buffer
	require.NoError(t, fig.WriteSVG(&b))
	svg := b.String()
	assert.Equal(t, 1, strings.Count(svg, ">south: n/a<"), "the FPR panel's tick")
	assert.Equal(t, 0, strings.Count(svg, ">north: n/a<"))
	assert.Contains(t, svg, "selection rate P(ŷ = yes)")
	// 2 + 2 + 1 points with error bars: a vertical bar and two caps each.
	assert.Equal(t, 5, len(fig.Panels[0].Series[0].X)+len(fig.Panels[1].Series[0].X)+len(fig.Panels[2].Series[0].X))
	assert.Equal(t, []float64{0}, fig.Panels[2].Series[0].X[:1], "north's FPR drawn")
}

// report.html: self-contained (no script, nothing fetched), group names
// escaped, the table's numbers those of metrics.json, groups.svg beside.
func TestReportHTML(t *testing.T) {
	dir := t.TempDir()
	sc := datasets.DefaultSyntheticConfig()
	sc.N, sc.Seed = 400, 3
	ds, err := datasets.Synthetic(sc)
	require.NoError(t, err)
	ds.GroupNames = []string{"<b>north</b>", "s&uth"}
	ds.ClassNames = []string{"no", "yes"}
	c, err := datasets.WriteFiles(ds, filepath.Join(dir, "nodes.csv"), filepath.Join(dir, "edges.csv"))
	require.NoError(t, err)
	out := filepath.Join(dir, "res")
	args := []string{"-nodes", c.Nodes, "-edges", c.Edges, "-id", c.IDColumn, "-label", c.LabelColumn, "-sens", c.SensColumn, "-split-column", c.SplitColumn, "-out", out}
	code, _, stderr := runCmd(append(args, fast...)...)
	require.Equal(t, 0, code, stderr)
	require.FileExists(t, filepath.Join(out, "groups.svg"))
	b, err := os.ReadFile(filepath.Join(out, "report.html"))
	require.NoError(t, err)
	page := string(b)
	for _, bad := range []string{"<script", "<link", "src=", "<iframe", "@import"} {
		assert.False(t, strings.Contains(page, bad), "report.html has %q", bad)
	}
	for _, u := range regexp.MustCompile(`https?://[^"' )<]+`).FindAllString(page, -1) {
		assert.Equal(t, "http://www.w3.org/2000/svg", u, "report.html refers to another address")
	}
	assert.NotContains(t, page, "<b>north</b>")
	assert.Contains(t, page, "&lt;b&gt;north&lt;/b&gt;")
	assert.Contains(t, page, "s&amp;uth")
	assert.Equal(t, 2, strings.Count(page, "<svg"))
	assert.NotContains(t, page, "<?xml", "an XML declaration inside HTML")
	assert.Contains(t, page, "-lambda-f</code>", "the flags given")

	var m struct {
		Methods map[string]struct {
			Val struct{ Accuracy float64 } `json:"val"`
		} `json:"methods"`
	}
	mj, err := os.ReadFile(filepath.Join(out, "metrics.json"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(mj, &m))
	require.NotEmpty(t, m.Methods)
	for name, me := range m.Methods {
		want := "<tr><td>" + name + "</td><td class=\"num\">" + fmtPct(me.Val.Accuracy) + "</td>"
		assert.True(t, strings.Contains(page, want), "report.html has no row %q", want)
	}
}

// Issue 53 D4: report.html opens with a verdict in words (what each
// debiased method bought and cost, with the intervals the run has, said
// to be separate intervals), has a glossary, a title naming the data
// (the node file) and the majority rate in the table.
func TestReportVerdictGlossaryTitleMajority(t *testing.T) {
	dir := t.TempDir()
	in := userFiles(t, dir, 400, 3)
	out := filepath.Join(dir, "res")
	code, _, stderr := runCmd(append(append(append([]string{}, in...), fast...), "-out", out)...)
	require.Contains(t, []int{0, 6}, code, stderr)
	b, err := os.ReadFile(filepath.Join(out, "report.html"))
	require.NoError(t, err)
	page := string(b)
	var doc struct {
		Methods map[string]struct {
			Test    struct{ Accuracy float64 } `json:"test"`
			Setting map[string]float64         `json:"setting"`
			TestCI  struct {
				Accuracy          metrics.Interval `json:"accuracy"`
				DemographicParity metrics.Interval `json:"demographic_parity"`
			} `json:"test_interval_95"`
		} `json:"methods"`
	}
	mj, err := os.ReadFile(filepath.Join(out, "metrics.json"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(mj, &doc))

	nodes := in[1]
	require.True(t, strings.HasSuffix(nodes, ".csv"), nodes)
	assert.Contains(t, page, "<title>debias report: "+nodes+" with ", "the title names the node file")
	verdictAt, resultsAt := strings.Index(page, `id="verdict"`), strings.Index(page, `id="results"`)
	require.Positive(t, verdictAt, "a verdict")
	assert.Less(t, verdictAt, resultsAt, "the page opens with the verdict")
	assert.Less(t, verdictAt, strings.Index(page, "<h2>Data</h2>"))
	bb, fm := doc.Methods["backbone"], doc.Methods["fmp"]
	dp := metrics.DPDifference
	iv := func(i metrics.Interval) string { return fmtInterval(&dp, i) }
	acc := func(i metrics.Interval) string {
		return fmtPct(i.Point) + "% [" + fmtPct(i.Lo) + ", " + fmtPct(i.Hi) + "]"
	}
	verdict := page[verdictAt:resultsAt]
	assert.Contains(t, verdict, "FMP (λs ", "FMP's sentence names its setting")
	assert.Regexp(t, "(lowered|raised|left) the test ΔDP", verdict)
	assert.Contains(t, verdict, iv(bb.TestCI.DemographicParity), "the backbone's ΔDP with its interval")
	assert.Contains(t, verdict, iv(fm.TestCI.DemographicParity), "FMP's ΔDP with its interval")
	assert.Contains(t, verdict, acc(bb.TestCI.Accuracy)+" → "+acc(fm.TestCI.Accuracy), "both accuracies with their intervals")
	assert.Regexp(t, `(at a cost of|and gained) [0-9.]+ accuracy points|at no cost in accuracy`, verdict)
	assert.Contains(t, verdict, "The per-group thresholds ")
	assert.Contains(t, verdict, "not intervals of the differences")

	for _, term := range []string{"<dt>ΔDP</dt>", "<dt>ΔEO</dt>", "<dt>λs</dt>", "<dt>λf</dt>", "<dt>thresholds</dt>", "<dt>marks</dt>", "<dt>majority rate</dt>"} {
		assert.Contains(t, page, term, "the glossary")
	}

	// The majority rate's row: the accuracy of a constant prediction on
	// the validation and test nodes.
	o, err := parseFlags(append(append([]string{}, in...), "-out", filepath.Join(dir, "unused")), io.Discard)
	require.NoError(t, err)
	ds, err := loadData(o)
	require.NoError(t, err)
	row := `<tr class="reference"><td>majority rate</td><td class="num">` + fmtPct(majorityRate(ds, ds.Split.Val)) +
		`</td><td class="num">–</td><td class="num">` + fmtPct(majorityRate(ds, ds.Split.Test)) + `</td>`
	assert.Contains(t, page, row)
}
