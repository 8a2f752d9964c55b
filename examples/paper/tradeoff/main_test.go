package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSmoke runs a tiny sweep end to end: every method on two backbones,
// one seed, a few epochs on a 120-node generated graph; then re-plots
// the CSV it wrote.
func TestSmoke(t *testing.T) {
	dir := t.TempDir()
	var out, errb bytes.Buffer
	args := []string{"-dataset", "synthetic", "-n", "120", "-models", "mlp,gcn", "-seeds", "1", "-epochs", "8",
		"-lr", "0.01", "-reg-alphas", "0,1,10", "-adv-alphas", "5", "-mix-alphas", "2", "-adv-pretrain", "4",
		"-adv-pretrain-steps", "3", "-adv-steps", "2", "-workers", "2", "-hidden", "8", "-out", dir}
	if err := run(args, &out, &errb); err != nil {
		t.Fatalf("run: %v\n%s", err, errb.String())
	}
	csv, err := os.ReadFile(filepath.Join(dir, "synthetic_tradeoff.csv"))
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSpace(string(csv)), "\n")
	// Per model: plain + regularizer {1, 10} + adversary {5} + mixup {2}.
	if len(lines) != 1+2*5 || lines[0] != csvHeader {
		t.Errorf("CSV has %d lines (header %q), want 11:\n%s", len(lines), lines[0], csv)
	}
	if !strings.Contains(string(csv), "gcn,adversary,5,1,") || !strings.Contains(string(csv), "mlp,regularizer,10,1,") {
		t.Errorf("CSV misses runs:\n%s", csv)
	}
	if _, err := os.Stat(filepath.Join(dir, "synthetic_tradeoff.partial.csv")); !os.IsNotExist(err) {
		t.Errorf("partial CSV left behind (%v)", err)
	}
	svg, err := os.ReadFile(filepath.Join(dir, "synthetic_tradeoff.svg"))
	require.NoError(t, err)
	for _, want := range []string{"<svg", "regularizer", "adversary", "mixup", "plain"} {
		if !bytes.Contains(svg, []byte(want)) {
			t.Errorf("SVG lacks %q", want)
		}
	}
	rt, err := os.ReadFile(filepath.Join(dir, "synthetic_tradeoff-runtime.svg"))
	require.NoError(t, err)
	for _, want := range []string{"<svg", "seconds per run", "plain", "regularizer", "adversary", "mixup", "mlp", "gcn"} {
		assert.Contains(t, string(rt), want, "runtime SVG")
	}
	if !strings.Contains(errb.String(), "[10/10]") || !strings.Contains(errb.String(), "ETA") {
		t.Errorf("progress lacks the count or ETA:\n%s", errb.String())
	}
	rows := 0
	for _, l := range strings.Split(out.String(), "\n") {
		for _, m := range []string{"| regularizer |", "| adversary |", "| mixup |"} {
			if strings.HasPrefix(l, m) {
				rows++
			}
		}
	}
	if rows != 6 {
		t.Errorf("summary has %d method rows, want 6:\n%s", rows, out.String())
	}
	// Re-plot from the CSV.
	var out2 bytes.Buffer
	dir2 := t.TempDir()
	args2 := []string{"-from-csv", filepath.Join(dir, "synthetic_tradeoff.csv"), "-dataset", "synthetic", "-out", dir2}
	if err := run(args2, &out2, &errb); err != nil {
		t.Fatal(err)
	}
	if summary := func(s string) string { return s[:strings.Index(s, "wrote")] }; summary(out2.String()) != summary(out.String()) {
		t.Errorf("summary from the CSV differs:\n%s\nvs\n%s", out2.String(), out.String())
	}
	// The fmp backbone adds its λf sweep (method "fmp") to the strategies.
	dir3 := t.TempDir()
	out.Reset()
	args3 := []string{"-dataset", "synthetic", "-n", "120", "-models", "fmp", "-methods", "regularizer", "-reg-alphas", "1",
		"-fmp-lambdas", "0,2", "-seeds", "1", "-epochs", "5", "-hidden", "8", "-out", dir3}
	if err := run(args3, &out, &errb); err != nil {
		t.Fatal(err)
	}
	csv3, err := os.ReadFile(filepath.Join(dir3, "synthetic_tradeoff.csv"))
	require.NoError(t, err)
	for _, want := range []string{"fmp,plain,0,1,", "fmp,regularizer,1,1,", "fmp,fmp,2,1,"} {
		if !strings.Contains(string(csv3), want) {
			t.Errorf("fmp sweep lacks %q:\n%s", want, csv3)
		}
	}
	if n := strings.Count(string(csv3), "\n"); n != 4 {
		t.Errorf("fmp sweep CSV has %d lines, want 4:\n%s", n, csv3)
	}
	if err := run([]string{"-models", "nope"}, &out, &errb); err == nil {
		t.Errorf("unknown model accepted")
	}
}

// TestPost: -post adds, for every plain run, FMP on the trained backbone
// (λs 0 and 1 over the λf grid) and the thresholds (one point per
// budget), and refuses FMP on the fmp backbone.
func TestPost(t *testing.T) {
	dir := t.TempDir()
	var out, errb bytes.Buffer
	args := []string{"-dataset", "synthetic", "-n", "200", "-models", "gcn", "-methods", "", "-seeds", "2", "-epochs", "10",
		"-lr", "0.01", "-hidden", "8", "-post", "fmp-post,thresholds", "-post-lambda-f", "1,4", "-post-losses", "1,5", "-out", dir}
	require.NoError(t, run(args, &out, &errb), errb.String())
	csv, err := os.ReadFile(filepath.Join(dir, "synthetic_tradeoff.csv"))
	require.NoError(t, err)
	text := string(csv)
	// Per seed: plain, fmp-post-s0 {1, 4}, fmp-post-s1 {0, 1, 4}, thresholds {1, 5}.
	require.Equal(t, 1+2*(1+2+3+2), strings.Count(text, "\n"), text)
	for _, want := range []string{"gcn,fmp-post-s0,1,1,", "gcn,fmp-post-s1,0,2,", "gcn,fmp-post-s1,4,1,", "gcn,thresholds,5,2,"} {
		assert.Contains(t, text, want)
	}
	assert.NotContains(t, text, "gcn,fmp-post-s0,0,", "λs 0, λf 0 is the plain run itself")
	// Every run carries its bootstrap intervals: nonempty, and the
	// accuracy's around its point.
	rs, err := readCSV(filepath.Join(dir, "synthetic_tradeoff.csv"))
	require.NoError(t, err)
	for _, r := range rs {
		require.NotNil(t, r.iv, "%s %s α=%g seed %d: no intervals", r.model, r.method, r.alpha, r.seed)
		assert.Less(t, r.iv.DemographicParity.Lo, r.iv.DemographicParity.Hi, "%s %s α=%g", r.model, r.method, r.alpha)
		assert.Less(t, r.iv.Accuracy.Lo, r.iv.Accuracy.Hi, "%s %s α=%g", r.model, r.method, r.alpha)
		assert.LessOrEqual(t, r.iv.Accuracy.Lo, r.report.Accuracy+1e-6)
		assert.GreaterOrEqual(t, r.iv.Accuracy.Hi, r.report.Accuracy-1e-6)
	}
	assert.Contains(t, out.String(), "ΔDP [lo, hi]: the mean over seeds")
	// A CSV from before the intervals is still read; its summary has
	// none, and mixing it with new runs leaves those settings without.
	old := filepath.Join(dir, "old.csv")
	var b strings.Builder
	b.WriteString(csvHeaderV1 + "\n")
	for _, l := range strings.Split(strings.TrimSpace(text), "\n")[1:] {
		f := strings.Split(l, ",")
		b.WriteString(strings.Join(f[:10], ",") + "\n")
	}
	require.NoError(t, os.WriteFile(old, []byte(b.String()), 0o644))
	out.Reset()
	require.NoError(t, run([]string{"-from-csv", old, "-dataset", "synthetic", "-out", t.TempDir()}, &out, &errb))
	assert.NotContains(t, out.String(), "ΔDP [lo, hi]")
	assert.NotContains(t, out.String(), "[")
	// Merged with the CSV that has them, every run gets its intervals
	// back and nothing is counted twice: the summary is the original's.
	summary := func(s string) string { return s[:strings.Index(s, "wrote")] }
	var merged bytes.Buffer
	newCSV := filepath.Join(dir, "synthetic_tradeoff.csv")
	require.NoError(t, run([]string{"-from-csv", old + "," + newCSV, "-dataset", "synthetic", "-out", t.TempDir()}, &merged, &errb))
	var again bytes.Buffer
	require.NoError(t, run([]string{"-from-csv", newCSV, "-dataset", "synthetic", "-out", t.TempDir()}, &again, &errb))
	assert.Equal(t, summary(again.String()), summary(merged.String()))
	assert.Regexp(t, `plain \(mean of 2 seeds\): accuracy [0-9.]+, ΔDP [0-9.]+ \[`, merged.String())
	// A run whose copies disagree is refused.
	bad := filepath.Join(dir, "bad.csv")
	lines := strings.Split(b.String(), "\n")
	f := strings.Split(lines[1], ",")
	f[4] = "12.3456"
	lines[1] = strings.Join(f, ",")
	require.NoError(t, os.WriteFile(bad, []byte(strings.Join(lines, "\n")), 0o644))
	err = run([]string{"-from-csv", newCSV + "," + bad, "-dataset", "synthetic", "-out", t.TempDir()}, &out, &errb)
	assert.ErrorContains(t, err, "appears twice with different metrics")
	svg, err := os.ReadFile(filepath.Join(dir, "synthetic_tradeoff.svg"))
	require.NoError(t, err)
	assert.Contains(t, string(svg), "thresholds")
	assert.Error(t, run([]string{"-models", "fmp", "-post", "fmp-post"}, &out, &errb))
	assert.Error(t, run([]string{"-post", "calibrate"}, &out, &errb))
}

// TestSummaryMatchesSeeds: a method run on fewer seeds than the plain runs
// (merged with -from-csv) is compared with the plain runs of its own seeds.
// Over both seeds the plain mean (85 / 20) would put the regulariser's
// seed-1 run (86 / 15) within one point and below; against seed 1's plain
// run (90 / 10) it is neither.
func TestSummaryMatchesSeeds(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "runs.csv")
	rows := csvHeaderV1 + "\n" +
		"gcn,plain,0,1,90,10,5,80,90,1.0\n" +
		"gcn,plain,0,2,80,30,5,80,90,1.0\n" +
		"gcn,regularizer,1,1,86,15,5,80,90,1.0\n" +
		"gcn,thresholds,1,1,89.5,4,5,80,90,0.1\n" +
		"gcn,thresholds,1,2,79.5,20,5,80,90,0.1\n"
	require.NoError(t, os.WriteFile(path, []byte(rows), 0o644))
	var out, errb bytes.Buffer
	require.NoError(t, run([]string{"-from-csv", path, "-dataset", "synthetic", "-out", dir}, &out, &errb))
	text := out.String()
	assert.Contains(t, text, "gcn, plain (mean of 2 seeds): accuracy 85.00, ΔDP 20.00")
	assert.Contains(t, text, "| regularizer (seeds 1 only; plain on them: 90.00 / 10.00) | none below plain | none below plain | 1, 86.00 / 15.00 |")
	// Thresholds ran on both seeds: compared with the two-seed mean.
	assert.Contains(t, text, "| thresholds | 1, 84.50 / 12.00 / 5.00 |")
	// The plot's panel says which methods have fewer seeds.
	svg, err := os.ReadFile(filepath.Join(dir, "synthetic_tradeoff.svg"))
	require.NoError(t, err)
	assert.Contains(t, string(svg), "gcn (mean of 2 seeds; regularizer: one seed)")
	// A method run on a seed without a plain run has no reference: an
	// error, not a comparison with the seeds that happen to be there.
	orphan := filepath.Join(dir, "orphan.csv")
	require.NoError(t, os.WriteFile(orphan, []byte(rows+"gcn,regularizer,1,3,86,15,5,80,90,1.0\n"), 0o644))
	err = run([]string{"-from-csv", orphan, "-dataset", "synthetic", "-out", dir}, &out, &errb)
	assert.ErrorContains(t, err, "runs on seeds 1, 3 but the plain runs of only 1 of them")
}

// TestFrontLabels: FMP's settings carry their λf, settings with the
// metrics of the previous λf (past saturation) are one point labelled
// with the range, the plain point comes first and unlabelled, and the
// front holds the settings no other beats on both axes.
func TestFrontLabels(t *testing.T) {
	ps := []point{
		{model: "gcn", method: "plain", dp: 10, acc: 90},
		{model: "gcn", method: "fmp-post-s0", alpha: 4, dp: 3, acc: 88},
		{model: "gcn", method: "fmp-post-s0", alpha: 0.5, dp: 6, acc: 89.5},
		{model: "gcn", method: "fmp-post-s0", alpha: 1, dp: 3, acc: 88},
		{model: "gcn", method: "fmp-post-s0", alpha: 2, dp: 3, acc: 88},
		{model: "gcn", method: "fmp-post-s0", alpha: 0.25, dp: 7, acc: 89},
		{model: "gcn", method: "regularizer", alpha: 1, dp: 5, acc: 80},
		{model: "mlp", method: "fmp-post-s0", alpha: 1, dp: 1, acc: 1},
	}
	got := settings(ps, "gcn", "fmp-post-s0")
	var texts []string
	for _, q := range got {
		texts = append(texts, q.text)
	}
	assert.Equal(t, []string{"", "0.25", "0.5", "1–4"}, texts)
	on, off := frontOf(got)
	var front, rest []string
	for _, q := range on {
		front = append(front, q.text)
	}
	for _, q := range off {
		rest = append(rest, q.text)
	}
	assert.Equal(t, []string{"1–4", "0.5", ""}, front, "ΔDP rising")
	assert.Equal(t, []string{"0.25"}, rest)
	reg := settings(ps, "gcn", "regularizer")
	require.Len(t, reg, 2)
	assert.Equal(t, "", reg[1].text, "only FMP's α is λf")

	dir := t.TempDir()
	path := filepath.Join(dir, "fronts.svg")
	o := &options{models: []string{"gcn"}, methods: []string{"regularizer", "fmp-post-s0"}}
	require.NoError(t, plotFronts(path, "test_set", o, nil, ps))
	svg, err := os.ReadFile(path)
	require.NoError(t, err)
	text := string(svg)
	assert.Contains(t, text, ">1–4<")
	assert.Contains(t, text, "numbers at points: λ<tspan")
	assert.Contains(t, text, ">test_set<", "plain text escaped, not a subscript")
	assert.Less(t, strings.Index(text, ">regularizer<"), strings.Index(text, ">FMP on it, λ<tspan"), "legend: training before post-processing")
}

// TestRuntimeBars checks the running-time figure's numbers: a dot per
// backbone and method at the summary's mean seconds, labelled with it,
// training before post-processing, and an error when there is nothing
// to draw.
func TestRuntimeBars(t *testing.T) {
	ps := []point{
		{model: "mlp", method: "plain", seconds: 30},
		{model: "mlp", method: "thresholds", alpha: 1, seconds: 0.2},
		{model: "mlp", method: "regularizer", alpha: 1, seconds: 20},
		{model: "mlp", method: "regularizer", alpha: 2, seconds: 40},
		{model: "gcn", method: "plain", seconds: 150},
	}
	s, ok := meanSeconds(ps, "mlp", "regularizer")
	require.True(t, ok)
	assert.InDelta(t, 30.0, s, 1e-12, "mean over the regulariser's two settings")
	_, ok = meanSeconds(ps, "gcn", "regularizer")
	assert.False(t, ok, "gcn has no regulariser run")
	dir := t.TempDir()
	o := &options{models: []string{"mlp", "gcn"}, methods: []string{"thresholds", "regularizer"}}
	path := filepath.Join(dir, "rt.svg")
	require.NoError(t, plotRuntime(path, "test", o, ps))
	svg, err := os.ReadFile(path)
	require.NoError(t, err)
	text := string(svg)
	for _, want := range []string{">30<", ">0.2<", ">150<"} {
		assert.Contains(t, text, want, "dot label")
	}
	assert.Less(t, strings.Index(text, ">regularizer<"), strings.Index(text, ">thresholds<"), "legend: training before post-processing")
	assert.Equal(t, "<0.1", secondsText(0.01))
	assert.Equal(t, "2.5", secondsText(2.5))
	assert.Error(t, plotRuntime(filepath.Join(dir, "none.svg"), "test", &options{models: []string{"sgc"}}, ps), "no runs for the backbones asked")
}

// TestFairGNNAndNIFTY sweeps the two methods that build their own model on
// the backbone, listed by fairtrain's names; the fmp backbone skips them.
func TestFairGNNAndNIFTY(t *testing.T) {
	dir := t.TempDir()
	var out, errb bytes.Buffer
	args := []string{"-dataset", "synthetic", "-n", "120", "-models", "gcn,fmp", "-methods", "fairgnn,nifty", "-seeds", "1",
		"-epochs", "6", "-fairgnn-betas", "0.1,1", "-nifty-lambdas", "0.5", "-fmp-lambdas", "1", "-hidden", "8", "-out", dir}
	if err := run(args, &out, &errb); err != nil {
		t.Fatalf("run: %v\n%s", err, errb.String())
	}
	csv, err := os.ReadFile(filepath.Join(dir, "synthetic_tradeoff.csv"))
	require.NoError(t, err)
	for _, want := range []string{"gcn,fairgnn,0.1,1,", "gcn,fairgnn,1,1,", "gcn,nifty,0.5,1,", "fmp,fmp,1,1,"} {
		assert.Contains(t, string(csv), want)
	}
	assert.NotContains(t, string(csv), "fmp,fairgnn")
	assert.Contains(t, out.String(), "| fairgnn |")
	err = run([]string{"-dataset", "synthetic", "-methods", "fairgcn"}, &out, &errb)
	assert.ErrorContains(t, err, "regularizer, adversary, mixup, redress, fmp, fairgnn, nifty, fairvgnn, rawlsgcn")
}
