package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fairmp/fairmp/graph/datasets"
	"github.com/fairmp/fairmp/internal/cli"
	"github.com/fairmp/fairmp/internal/protocol"
	"github.com/fairmp/fairmp/layers"
	"github.com/fairmp/fairmp/layers/train"
	"github.com/fairmp/fairmp/metrics"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSmoke(t *testing.T) {
	var out, log bytes.Buffer
	dir := t.TempDir()
	require.NoError(t, run([]string{"-n", "200", "-seeds", "1", "-epochs", "10", "-out", dir}, &out, &log))
	for _, m := range []string{"| plain |", "| fmp |", "| thresholds |", "| fairgnn |", "| nifty |"} {
		assert.Contains(t, out.String(), m)
	}
	_, err := os.Stat(filepath.Join(dir, "synthetic_gcn_runs.csv"))
	assert.NoError(t, err)

	out.Reset()
	require.NoError(t, run([]string{"-n", "200", "-seeds", "1", "-epochs", "10", "-estimator-epochs", "5", "-known", "1,0.3"}, &out, &log))
	assert.Equal(t, 2, strings.Count(out.String(), "| fmp-est |"))
}

// EDITS' row is the backbone trained on its debiased data; the log
// gives its CPU time an epoch beside the backbone's and its bias before
// and after.
func TestEDITSRow(t *testing.T) {
	var out, log bytes.Buffer
	require.NoError(t, run([]string{"-n", "200", "-seeds", "1", "-epochs", "5", "-methods", "plain,edits"}, &out, &log))
	assert.Contains(t, out.String(), "| edits |")
	assert.Contains(t, log.String(), "ms an epoch, 100 epochs")
	assert.Contains(t, log.String(), "b_stru")
}

func TestFlags(t *testing.T) {
	var out, log bytes.Buffer
	assert.ErrorContains(t, run([]string{"-methods", "plain,fairgcn"}, &out, &log), `unknown method "fairgcn"`)
	assert.ErrorContains(t, run([]string{"-known", "0"}, &out, &log), "want shares in (0, 1]")
	assert.ErrorContains(t, run([]string{"-dataset", "synthetic", "-include-sens"}, &out, &log), "no sensitive feature column")
}

func TestRealNBA(t *testing.T) {
	if os.Getenv("FAIRMP_DATA") == "" {
		t.Skip("FAIRMP_DATA is not set: the NBA data set is needed")
	}
	var out, log bytes.Buffer
	require.NoError(t, run([]string{"-dataset", "nba", "-seeds", "1", "-epochs", "5", "-methods", "plain,fairgnn,nifty"}, &out, &log))
	assert.Contains(t, out.String(), "| nifty |")
}

func TestProtocolFlags(t *testing.T) {
	var out, log bytes.Buffer
	require.NoError(t, run([]string{"-n", "200", "-seeds", "1", "-epochs", "5", "-methods", "plain", "-train-labels", "20"}, &out, &log))
	assert.Contains(t, out.String(), "20 training nodes")
	out.Reset()
	require.NoError(t, run([]string{"-n", "200", "-seeds", "1", "-epochs", "5", "-estimator-epochs", "5", "-known-nodes", "10"}, &out, &log))
	assert.Contains(t, out.String(), "| 10 nodes (")
	assert.ErrorContains(t, run([]string{"-known", "0.5", "-known-nodes", "10"}, &out, &log), "give one of them")
	assert.ErrorContains(t, run([]string{"-known-nodes", "1"}, &out, &log), "want whole numbers >= 2")
	assert.ErrorContains(t, run([]string{"-n", "200", "-known-nodes", "100000"}, &out, &log), "only")
	assert.ErrorContains(t, run([]string{"-train-labels", "1"}, &out, &log), "-train-labels 1")
}

func TestCurveTableWarnsOfAOneGroupEstimator(t *testing.T) {
	o := &options{dataset: "d", st: protocol.Settings{Backbone: "gcn", Epochs: 1}, seeds: 1}
	p, err := load(&options{dataset: "synthetic", synthN: 200})
	require.NoError(t, err)
	pts := []curvePoint{
		{method: methodPlain, seed: 1, estAcc: math.NaN()},
		{method: "fmp-est", share: 0.1, seed: 1, estAcc: 0.7, estOne: true},
		{method: "fairgnn", share: 0.1, seed: 1, estAcc: 0.7, estOne: true},
		{method: "fmp-est", share: 0.5, seed: 1, estAcc: 0.8},
		{method: "fairgnn", share: 0.5, seed: 1, estAcc: 0.8},
	}
	var out bytes.Buffer
	curveTable(&out, o, p, pts)
	assert.Contains(t, out.String(), "Warning: the estimator put every test node in one group (known 10% in 2 of 2 runs)")
	assert.NotContains(t, out.String(), "50% in")

	out.Reset()
	curveTable(&out, o, p, pts[3:])
	assert.NotContains(t, out.String(), "Warning")
}

func TestTrivialRunsWarn(t *testing.T) {
	labels := []int{1, 1, 1, 0, 1, 0, 1, 1}
	sens := []int{0, 0, 0, 0, 1, 1, 1, 1}
	report := func(p1 []float64) metrics.Report {
		probs := make([]float64, 0, 2*len(p1))
		for _, p := range p1 {
			probs = append(probs, 1-p, p)
		}
		r, err := metrics.Evaluate(probs, 2, labels, sens, nil, metrics.DefaultOptions())
		require.NoError(t, err)
		return r
	}
	constant := report([]float64{.9, .9, .9, .9, .9, .9, .9, .9}) // selects every node: 75% = the majority's rate
	learnt := report([]float64{.9, .9, .9, .1, .9, .1, .9, .9})   // every node right
	o := &options{methods: []string{"plain", "thresholds"}}
	var out bytes.Buffer
	require.NoError(t, trivialRuns(&out, o, [][]outcome{
		{{report: learnt}, {report: constant}},
		{{report: learnt}, {report: learnt}},
	}))
	assert.Contains(t, out.String(), "thresholds: trivial-selection in 1 of 2 runs; thresholds: below-majority in 1 of 2 runs.")
	assert.NotContains(t, out.String(), "plain:")

	out.Reset()
	require.NoError(t, trivialRuns(&out, o, [][]outcome{{{report: learnt}, {report: learnt}}}))
	assert.Empty(t, out.String())
}

func TestSaveSplit(t *testing.T) {
	var out, log bytes.Buffer
	path := filepath.Join(t.TempDir(), "split.json")
	require.NoError(t, run([]string{"-n", "200", "-seeds", "1", "-epochs", "2", "-methods", "plain", "-train-labels", "20", "-save-split", path}, &out, &log))
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	var sp map[string][]int
	require.NoError(t, json.Unmarshal(b, &sp))
	assert.Len(t, sp["train"], 20)
	assert.NotEmpty(t, sp["val"])
	assert.NotEmpty(t, sp["test"])
}

// Seeds run in separate invocations and merged make the table one
// invocation makes, but for the seconds; a seed not run is named.
func TestMergeSavedRuns(t *testing.T) {
	dir := t.TempDir()
	var one, log bytes.Buffer
	args := []string{"-n", "200", "-epochs", "10", "-methods", "plain,fmp,nifty"}
	require.NoError(t, run(append(args, "-seeds", "2"), &one, &log))
	for _, s := range []string{"1", "2"} {
		var out bytes.Buffer
		require.NoError(t, run(append(args, "-out", dir, "-first-seed", s, "-seeds", "1"), &out, &log))
	}
	var merged bytes.Buffer
	require.NoError(t, run(append(args, "-out", dir, "-seeds", "2", "-merge"), &merged, &log))
	noSeconds := func(s string) []string {
		var rows []string
		for _, l := range strings.Split(s, "\n") {
			if c := strings.Split(l, " | "); len(c) == 8 {
				c[6] = "s"
				l = strings.Join(c, " | ")
			}
			rows = append(rows, l)
		}
		return rows
	}
	assert.Equal(t, noSeconds(one.String()), noSeconds(merged.String()))
	assert.Contains(t, merged.String(), "| nifty |")
	_, err := os.Stat(filepath.Join(dir, "synthetic_gcn_runs.csv"))
	assert.NoError(t, err)

	err = run(append(args, "-out", dir, "-seeds", "3", "-merge"), &merged, &log)
	assert.ErrorContains(t, err, "no saved run of plain on seed 3")
	assert.ErrorContains(t, run(append(args, "-merge"), &merged, &log), "-merge: give -out")
	assert.ErrorContains(t, run(append(args, "-out", dir, "-seeds", "2", "-merge", "-hidden", "8"), &merged, &log), "was run with -n 200 -epochs 10 -hidden 64")
}

// EDITS zeroes the column most correlated with the group, here the group
// itself: the debiased problem then has no sensitive column, so the
// counterfactual does not write the flipped group into the zeros (the
// debiased counterfactual reads them too) and a model that does not read
// the group has no counterfactual unfairness.
func TestPreprocessedDropsAZeroedSensColumn(t *testing.T) {
	c := datasets.DefaultSyntheticConfig()
	c.N = 200
	ds, err := datasets.Synthetic(c)
	require.NoError(t, err)
	d := ds.NumFeatures
	x := make([]float64, 0, ds.N()*(d+1))
	for i := 0; i < ds.N(); i++ {
		x = append(x, ds.Features[i*d:(i+1)*d]...)
		x = append(x, float64(ds.Sens[i]))
	}
	ds.Features, ds.NumFeatures = x, d+1
	ds.FeatureNames = append(append([]string(nil), ds.FeatureNames...), "group")
	o, err := parseFlags([]string{"-n", "200"}, io.Discard)
	require.NoError(t, err)
	var log bytes.Buffer
	pp, _, err := preprocessed(o, &problem{ds: ds, sensCol: d}, "edits", 1, &log)
	require.NoError(t, err)
	require.Contains(t, log.String(), "columns zeroed")
	assert.Equal(t, -1, pp.sensCol, "log: %s", log.String())
}

// -out is resolved before anything is written (a folder reached through
// a symlink gets the files), and a file in the way that baselines did not
// write is left as it was and reported, for the CSV as for a saved run.
func TestOutReplacesOnlyItsOwnFiles(t *testing.T) {
	real := t.TempDir()
	link := filepath.Join(t.TempDir(), "link")
	require.NoError(t, os.Symlink(real, link))
	args := []string{"-n", "200", "-epochs", "5", "-methods", "plain", "-seeds", "1"}
	var out, log bytes.Buffer
	require.NoError(t, run(append(args, "-out", link), &out, &log))
	_, err := os.Stat(filepath.Join(real, "synthetic_gcn_runs.csv"))
	assert.NoError(t, err, "the CSV is in the folder the link points to")
	require.NoError(t, run(append(args, "-out", link), &out, &log), "a second run replaces its own files")

	mine := []byte("a table of the user's\n")
	csv := filepath.Join(real, "synthetic_gcn_runs.csv")
	require.NoError(t, os.WriteFile(csv, mine, 0o644))
	err = run(append(args, "-out", real), &out, &log)
	assert.ErrorIs(t, err, cli.ErrNotOurs)
	b, _ := os.ReadFile(csv)
	assert.Equal(t, mine, b, "the user's file is unchanged")

	gob := filepath.Join(real, "synthetic_gcn_runs", "plain_seed1.gob")
	require.NoError(t, os.WriteFile(gob, mine, 0o644))
	err = run(append(args, "-out", real), &out, &log)
	assert.ErrorIs(t, err, cli.ErrNotOurs)
	b, _ = os.ReadFile(gob)
	assert.Equal(t, mine, b)
	assert.ErrorContains(t, run(append(args, "-out", real, "-merge"), &out, &log), "is not a run saved by baselines -out")
}

// -protocol fills the flags not given from the preset, explicit flags
// win, and the run's table and CSV record the protocol.
func TestProtocolPreset(t *testing.T) {
	var log bytes.Buffer
	o, err := parseFlags([]string{"-protocol", "nifty", "-dataset", "bail", "-epochs", "7"}, &log)
	require.NoError(t, err)
	assert.Equal(t, "jknet", o.st.Backbone)
	assert.Equal(t, 16, o.st.Hidden)
	assert.Equal(t, 7, o.st.Epochs, "-epochs given")
	assert.Equal(t, 100, o.st.TrainLabels)
	assert.True(t, o.st.IncludeSens)
	assert.Equal(t, train.SelectValLoss, trainConfig(o).Select)
	assert.Equal(t, 1e-5, trainConfig(o).Adam.WeightDecay)
	assert.Contains(t, runName(o), "_protocol-nifty")
	assert.Contains(t, runProtocol(o), "-dropout 0")
	cfg, err := backbone(o, &problem{ds: &datasets.Dataset{NumFeatures: 3, Labels: []int{0, 1}}}, 1)
	require.NoError(t, err)
	jk, ok := cfg.(layers.JKNetConfig)
	require.True(t, ok, "%T", cfg)
	assert.Equal(t, 1, jk.Layers)

	o, err = parseFlags([]string{"-protocol", "fmp", "-lr", "0.01"}, &log)
	require.NoError(t, err)
	assert.Equal(t, "mlp", o.st.Backbone)
	assert.Equal(t, 0.01, trainConfig(o).Adam.LR)
	assert.Equal(t, train.SelectLast, trainConfig(o).Select)

	for name, args := range map[string][]string{
		"unknown":      {"-protocol", "pyg"},
		"dropout":      {"-dropout", "1.5"},
		"sgc dropout":  {"-backbone", "sgc", "-dropout", "0.2"},
		"lr":           {"-lr", "0"},
		"include-sens": {"-protocol", "nifty", "-n", "100"},
	} {
		assert.Error(t, run(args, io.Discard, io.Discard), name)
	}
	assert.ErrorContains(t, run([]string{"-protocol", "pyg"}, io.Discard, io.Discard), `-protocol: protocol "pyg", want one of nifty, fairgnn, fairvgnn, edits, fmp`)
	assert.ErrorContains(t, run([]string{"-backbone", "sgc", "-dropout", "0.2"}, io.Discard, io.Discard), "-dropout 0.2: the sgc backbone has no dropout")
	assert.ErrorContains(t, run([]string{"-protocol", "nifty", "-n", "100"}, io.Discard, io.Discard), "-protocol nifty sets -include-sens")
	assert.ErrorContains(t, run([]string{"-no-scale", "-n", "100"}, io.Discard, io.Discard), "-no-scale: the generated graph")

	// The table and the CSV say which protocol ran.
	dir := t.TempDir()
	var out bytes.Buffer
	require.NoError(t, run([]string{"-n", "200", "-seeds", "1", "-methods", "plain", "-protocol", "fmp", "-epochs", "5", "-out", dir}, &out, &log))
	assert.Contains(t, out.String(), "Protocol: -protocol fmp: -backbone mlp -hidden 64 -epochs 5 -lr 0.001 -weight-decay 0 -dropout 0 -select last")
	b, err := os.ReadFile(filepath.Join(dir, "synthetic_mlp_protocol-fmp_runs.csv"))
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(string(b), csvHeader+"\n"), string(b))
	assert.Contains(t, string(b), `"-protocol fmp: -backbone mlp`)
}

// -h lists every preset and what it sets.
func TestHelpListsPresets(t *testing.T) {
	var log bytes.Buffer
	_, err := parseFlags([]string{"-h"}, &log)
	require.ErrorIs(t, err, flag.ErrHelp)
	for _, n := range protocol.Names() {
		assert.Contains(t, log.String(), "\n  "+n+" (")
	}
	assert.Contains(t, log.String(), "-protocol string")
}
