package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fairmp/fairmp/graph/datasets"
	"github.com/fairmp/fairmp/internal/paired"
	"github.com/fairmp/fairmp/internal/testutil"
	"github.com/fairmp/fairmp/layers"
	"github.com/fairmp/fairmp/layers/train"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Three seeds by hand. Groups 0 (nodes 0–3) and 1 (nodes 4–7), two
// positives in each, the 8 nodes repeated 10 times (so that every
// resample of a group draws a copy of node 5 but in ~0.3% of them); every
// node is a test node. "miss" gets node 5 (a
// positive of group 1) wrong: accuracy 7/8, selection rates 1/2 and 1/4
// (ΔDP 1/4), true-positive rates 1 and 1/2 (ΔEO 1/2), AUC 15/16 (node 5
// ranks below the negative 0.45); "hit" gets every node right: ΔDP 0,
// ΔEO 0, AUC 1. The backbone misses on seeds 1–3; "better" hits on
// seeds 1 and 2 and misses on 3: its effect is 2/3 of hit − miss,
// +1/12 accuracy, +1/24 AUC, −1/6 ΔDP, −1/3 ΔEO; "same" misses on every seed: 0 with the
// interval [0, 0] on every measure, resolved on none.
func TestCompareThreeSeedsByHand(t *testing.T) {
	ds := &datasets.Dataset{Name: "toy"}
	var miss1, hit1 []float64
	for k := range 10 {
		ds.Labels = append(ds.Labels, 1, 1, 0, 0, 1, 1, 0, 0)
		ds.Sens = append(ds.Sens, 0, 0, 0, 0, 1, 1, 1, 1)
		for i := range 8 {
			ds.Split.Test = append(ds.Split.Test, 8*k+i)
		}
		miss1 = append(miss1, .9, .8, .3, .2, .6, .4, .45, .1)
		hit1 = append(hit1, .9, .8, .3, .2, .6, .7, .45, .1)
	}
	miss, hit := testutil.BinaryProbs(miss1), testutil.BinaryProbs(hit1)
	o := &options{compare: []string{"better", "same"}}
	var all [][]compareRun
	for s, better := range [][]float64{hit, hit, miss} {
		all = append(all, []compareRun{{method: compareBackbone, seed: int64(s + 1), probs: miss}, {method: "better", seed: int64(s + 1), probs: better}, {method: "same", seed: int64(s + 1), probs: miss}})
	}
	rows, err := compareRows(o, ds, all)
	require.NoError(t, err)
	require.Len(t, rows, 2)
	want := [paired.NumMeasures]float64{paired.Accuracy: 1.0 / 12, paired.AUC: 1.0 / 24, paired.DP: -1.0 / 6, paired.EO: -1.0 / 3}
	for k := range paired.NumMeasures {
		assert.InDelta(t, want[k], rows[0].Diff[k].Point, 1e-12, paired.Titles[k])
		assert.Equal(t, 0.0, rows[1].Diff[k].Point, paired.Titles[k])
		assert.Equal(t, 0.0, rows[1].Diff[k].Lo, paired.Titles[k])
		assert.Equal(t, 0.0, rows[1].Diff[k].Hi, paired.Titles[k])
		assert.False(t, rows[1].Resolved(k), paired.Titles[k])
	}
	assert.Equal(t, "better", rows[0].Method)
	assert.Equal(t, compareBackbone, rows[0].Against)
	// Accuracy, AUC and ΔEO move with node 5 alone, in every resample
	// that draws a copy of it: resolved. ΔDP is a gap between two
	// selection rates that both move with the resample: its interval
	// reaches past 0, unresolved.
	for k, want := range [paired.NumMeasures]bool{true, true, false, true} {
		assert.Equal(t, want, rows[0].Resolved(k), "%s %+v", paired.Titles[k], rows[0].Diff[k])
	}
	var b bytes.Buffer
	paired.WriteTable(&b, rows)
	assert.Contains(t, b.String(), "| better | backbone | **+8.33** [")
	assert.Contains(t, b.String(), "| -16.67 [")
	assert.Contains(t, b.String(), "| accuracy, AUC, ΔEO |")
	assert.Contains(t, b.String(), "| same | backbone | +0.00 [+0.00, +0.00] | +0.00 [+0.00, +0.00] | +0.00 [+0.00, +0.00] | +0.00 [+0.00, +0.00] | none |")
}

// FMP's row comes with its decomposition: propagation alone against the
// backbone, and the fairness step against propagation alone.
func TestCompareRowsDecomposeFMP(t *testing.T) {
	ds := &datasets.Dataset{Name: "toy", Labels: []int{1, 1, 0, 0, 1, 1, 0, 0}, Sens: []int{0, 0, 0, 0, 1, 1, 1, 1},
		Split: datasets.Split{Test: []int{0, 1, 2, 3, 4, 5, 6, 7}}}
	miss := testutil.BinaryProbs([]float64{.9, .8, .3, .2, .6, .4, .45, .1})
	hit := testutil.BinaryProbs([]float64{.9, .8, .3, .2, .6, .7, .45, .1})
	o := &options{compare: []string{compareFMP}}
	all := [][]compareRun{{{method: compareBackbone, probs: miss}, {method: compareFMP, probs: hit, prop: miss}}}
	rows, err := compareRows(o, ds, all)
	require.NoError(t, err)
	require.Len(t, rows, 3)
	assert.Equal(t, [3]string{compareFMP, paired.RowPropagation, paired.RowFairStep}, [3]string{rows[0].Method, rows[1].Method, rows[2].Method})
	assert.Equal(t, paired.RowPropagation, rows[2].Against)
	assert.InDelta(t, 1.0/8, rows[0].Diff[paired.Accuracy].Point, 1e-12)
	assert.Equal(t, 0.0, rows[1].Diff[paired.Accuracy].Point, "propagation alone is the backbone here")
	assert.InDelta(t, 1.0/8, rows[2].Diff[paired.Accuracy].Point, 1e-12, "so the fairness step is all of FMP's effect")
}

// The command end to end on a small generated graph: the tables on
// stdout and in -out, one run line per method and seed.
func TestCompareRun(t *testing.T) {
	out := filepath.Join(t.TempDir(), "cmp")
	code, stdout, stderr := runCmd("-dataset", "synthetic", "-synthetic-nodes", "200", "-epochs", "10", "-compare", "fmp,regularizer", "-seeds", "2", "-q", "-out", out)
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, paired.Header)
	for _, row := range []string{"| fmp | backbone | ", "| " + paired.RowPropagation + " | backbone | ", "| " + paired.RowFairStep + " | " + paired.RowPropagation + " | ", "| regularizer | backbone | "} {
		assert.Contains(t, stdout, row)
	}
	assert.Contains(t, stdout, "Protocol: -backbone gcn -hidden 64 -epochs 10")
	md, err := os.ReadFile(filepath.Join(out, "compare.md"))
	require.NoError(t, err)
	assert.Equal(t, stdout, string(md))
	csv := readCSV(t, filepath.Join(out, "compare.csv"))
	assert.Equal(t, strings.Split(paired.CSVHeader, ","), csv[0])
	assert.Len(t, csv, 1+4*paired.NumMeasures) // fmp, its two parts, regularizer
	runs := readCSV(t, filepath.Join(out, "compare_runs.csv"))
	assert.Len(t, runs, 1+2*3) // backbone, fmp, regularizer on 2 seeds
	assert.Equal(t, "backbone", runs[1][0])
	assert.Equal(t, "2", runs[4][1])
}

func TestCompareFlagErrors(t *testing.T) {
	base := []string{"-dataset", "synthetic", "-out", filepath.Join(t.TempDir(), "x")}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-compare", "fmp,magic"}, `-compare: unknown method "magic", want some of fmp, thresholds,`},
		{[]string{"-compare", "fmp,fmp"}, "-compare: fmp given twice"},
		{[]string{"-compare", "backbone"}, "-compare backbone: the backbone runs on every seed"},
		{[]string{"-compare", ","}, "names no method"},
		{[]string{"-compare", "fmp", "-model", "m.fmp"}, "-compare trains each method and its backbone, and -model m.fmp predicts"},
		{[]string{"-compare", "fmp", "-method", "nifty"}, "-method and -method-weight are for one run"},
		{[]string{"-compare", "fmp", "-search-budget", "1m"}, "-search-budget would be ignored"},
		{[]string{"-compare", "fmp", "-seeds", "0"}, "-seeds 0, want ≥ 1"},
		{[]string{"-seeds", "3"}, "-seeds 3 is the number of seeds -compare runs"},
	} {
		_, err := parseFlags(append(append([]string{}, base...), c.args...), &bytes.Buffer{})
		assert.ErrorContains(t, err, c.want, "%v", c.args)
	}
	code, _, stderr := runCmd("-nodes", "n.csv", "-edges", "e.csv", "-label", "y", "-sens", "s", "-scores", "s.csv", "-scores-kind", "probs", "-compare", "fmp", "-out", filepath.Join(t.TempDir(), "y"))
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, "-compare trains each method and its backbone, and -scores s.csv")
	// Without -backbone, -lr and -epochs nothing is searched: the
	// defaults train.
	o, err := parseFlags(append(append([]string{}, base...), "-compare", "fmp"), &bytes.Buffer{})
	require.NoError(t, err)
	assert.False(t, o.search.active())
	assert.Equal(t, []string{"fmp"}, o.compare)
	assert.Equal(t, 5, o.seeds)
}

// -protocol fills the flags not given, with no search; explicit flags
// win; its errors name the flags.
func TestProtocolFlag(t *testing.T) {
	base := []string{"-dataset", "synthetic", "-out", filepath.Join(t.TempDir(), "x")}
	o, err := parseFlags(append(append([]string{}, base...), "-protocol", "nifty", "-epochs", "40"), &bytes.Buffer{})
	require.NoError(t, err)
	assert.Equal(t, "jknet", o.backbone)
	assert.Equal(t, 16, o.model.Hidden)
	assert.Equal(t, 40, o.train.Epochs, "-epochs given")
	assert.Equal(t, 1e-5, o.train.Adam.WeightDecay)
	assert.Equal(t, train.SelectValLoss, o.train.Select)
	assert.Equal(t, 0.0, o.dropout)
	assert.True(t, o.files.Options.IncludeSens)
	assert.False(t, o.search.active(), "the preset fixes the backbone: nothing searched")
	assert.Contains(t, o.protocolLine(), "-protocol nifty: -backbone jknet (activation leaky_relu(1), layers 1, mode cat) -hidden 16 -epochs 40")
	cfg, err := o.settings(o.kind).Configure(4, 2, o.model)
	require.NoError(t, err)
	assert.Equal(t, 1, cfg.(layers.JKNetConfig).Layers)

	o, err = parseFlags(append(append([]string{}, base...), "-protocol", "edits", "-backbone", "gcn"), &bytes.Buffer{})
	require.NoError(t, err)
	assert.Equal(t, "gcn", o.backbone, "-backbone given")
	assert.Nil(t, o.settings(o.kind).Overrides, "the preset's fields go with its own backbone")
	assert.Equal(t, 15, o.train.SelectAfter)
	assert.Equal(t, 1000, o.train.Epochs)
	_, err = parseFlags(append(append([]string{}, base...), "-protocol", "nifty", "-backbone", "sgc"), &bytes.Buffer{})
	assert.NoError(t, err, "the preset's -hidden and -dropout are not forced on a kind without them")

	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-protocol", "pyg"}, `-protocol: protocol "pyg", want one of nifty, fairgnn, fairvgnn, edits, fmp`},
		{[]string{"-protocol", "nifty", "-model", "m.fmp"}, "-protocol nifty is a training protocol, and -model and -scores train nothing"},
		{[]string{"-dropout", "x"}, `-dropout "x", want a probability in [0, 1)`},
		{[]string{"-backbone", "sgc", "-dropout", "0.1"}, "-dropout 0.1: the sgc backbone has no dropout"},
		{[]string{"-train-labels", "1"}, "-train-labels 1, want 0 (all) or at least 2"},
		{[]string{"-model", "m.fmp", "-train-labels", "10"}, "-train-labels would be ignored"},
	} {
		_, err := parseFlags(append(append([]string{}, base...), c.args...), &bytes.Buffer{})
		assert.ErrorContains(t, err, c.want, "%v", c.args)
	}
}

// -h names -compare, -seeds and -protocol, and lists every preset with
// what it sets.
func TestHelpProtocolAndCompare(t *testing.T) {
	code, _, stderr := runCmd("-h")
	require.Equal(t, 0, code)
	for _, s := range []string{"-compare METHODS trains the backbone and each method", "\n  -compare string", "\n  -seeds int", "\n  -protocol string", "\n  -train-labels int", "\n  -dropout string",
		"-protocol presets (every flag they set can be given to override it):", "\n  nifty (chirag126/nifty)", "\n  fairgnn (EnyanDai/FairGNN)", "\n  fairvgnn (yuwvandy/FairVGNN)", "\n  edits (yushundong/EDITS)", "\n  fmp (zhimengj0326/FMP)"} {
		assert.Contains(t, stderr, s)
	}
}

// -train-labels keeps that many training nodes, half of each class, for
// every run.
func TestTrainLabelsFlag(t *testing.T) {
	out := filepath.Join(t.TempDir(), "tl")
	code, stdout, stderr := runCmd("-dataset", "synthetic", "-synthetic-nodes", "200", "-epochs", "3", "-train-labels", "20", "-compare", "thresholds", "-seeds", "1", "-q", "-out", out)
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, ", 20 training nodes, ")
	assert.Contains(t, stdout, "-train-labels 20")
}
