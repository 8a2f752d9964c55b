package main

import (
	"bytes"
	"encoding/csv"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fairmp/fairmp/graph"
	"github.com/fairmp/fairmp/graph/datasets"
	"github.com/fairmp/fairmp/graph/features"
)

// TestDeploySmoke runs the whole protocol on a small generated graph with
// every method of the study (the default -methods all): one row per
// method in each table, one CSV line per seed and method, and every
// model file, opened by the scorer, reproduces its trained model on the
// old graph (FairVGNN's folded mask to rounding; EDITS' on its own
// debiased graph).
func TestDeploySmoke(t *testing.T) {
	dir := t.TempDir()
	var out, log bytes.Buffer
	err := run([]string{"-datasets", "synthetic", "-synthetic-nodes", "300", "-seeds", "2", "-epochs", "5", "-lr", "0.01", "-data", "", "-out", dir}, &out, &log)
	require.NoError(t, err, log.String())
	all := append(append([]string(nil), methods...), studyMethods()...)
	for _, m := range all {
		assert.Equal(t, 2, strings.Count(out.String(), "| "+title(m)+" |"), m)
	}
	for _, m := range []string{"regularizer", "adversary", "mixup", "redress", "fairgnn", "nifty", "fairvgnn", "rawlsgcn", "edits"} {
		assert.Contains(t, studyMethods(), m)
	}
	assert.NotContains(t, studyMethods(), "fmp", "FMP is put on the GCN itself")
	assert.Contains(t, log.String(), "synthetic seed 2/2")
	assert.Equal(t, 2, strings.Count(out.String(), "EDITS' model on the old validation nodes with their raw features and edges"))
	f, err := os.Open(filepath.Join(dir, "runs.csv"))
	require.NoError(t, err)
	lines, err := csv.NewReader(f).ReadAll()
	f.Close()
	require.NoError(t, err)
	assert.Len(t, lines, 1+2*len(all))
	col := map[string]int{}
	for i, h := range lines[0] {
		col[h] = i
	}
	require.Contains(t, col, "check_max_diff")
	require.Contains(t, col, "val_raw_accuracy")
	for _, r := range lines[1:] {
		check, err := strconv.ParseFloat(r[col["check_max_diff"]], 64)
		require.NoError(t, err)
		assert.Less(t, check, 1e-12, "the scorer on the old graph reproduces the trained model: %s seed %s", r[col["method"]], r[col["seed"]])
		assert.Equal(t, r[col["method"]] == "edits", r[col["val_raw_accuracy"]] != "", r[col["method"]])
	}
	summary, err := os.ReadFile(filepath.Join(dir, "summary.md"))
	require.NoError(t, err)
	assert.Equal(t, out.String(), string(summary))

	// The figure is drawn by the run and redrawn from runs.csv alike.
	first, err := os.ReadFile(filepath.Join(dir, "deploy.svg"))
	require.NoError(t, err)
	redraw := t.TempDir()
	require.NoError(t, run([]string{"-figure", filepath.Join(dir, "runs.csv"), "-out", redraw}, &out, &log))
	again, err := os.ReadFile(filepath.Join(redraw, "deploy.svg"))
	require.NoError(t, err)
	assert.Equal(t, string(first), string(again))
}

// TestDeploySkipsMissingData: a real data set without a data folder is
// skipped with a message, not an error.
func TestDeploySkipsMissingData(t *testing.T) {
	var out, log bytes.Buffer
	require.NoError(t, run([]string{"-datasets", "bail", "-data", ""}, &out, &log))
	assert.Contains(t, log.String(), "skipping bail")
}

// TestCostSmoke runs the cost study on a tiny generated graph.
func TestCostSmoke(t *testing.T) {
	dir := t.TempDir()
	var out, log bytes.Buffer
	err := run([]string{"-cost", "-cost-nodes", "3000", "-cost-features", "8", "-cost-degree", "6", "-cost-train-nodes", "1000",
		"-cost-new", "1,50", "-cost-epochs", "2", "-cost-repeats", "1", "-cost-dir", dir, "-out", dir}, &out, &log)
	require.NoError(t, err, log.String())
	// 2 sizes × (backbone + 2 FMP settings × (2 semantics + Frozen)).
	b, err := os.ReadFile(filepath.Join(dir, "cost.csv"))
	require.NoError(t, err)
	assert.Len(t, strings.Split(strings.TrimSpace(string(b)), "\n"), 1+2*7)
	assert.Contains(t, out.String(), "recompute")
	assert.Contains(t, out.String(), "| 1 | GCN alone | 2 |")
	matches, err := filepath.Glob(filepath.Join(dir, "*.fmx"))
	require.NoError(t, err)
	assert.Empty(t, matches, "the feature file is removed")
}

// TestInduced: the subgraph of a path keeps the edges between kept nodes
// and renumbers the split.
func TestInduced(t *testing.T) {
	g, err := graph.FromEdges(5, [][2]int{{0, 1}, {1, 2}, {2, 3}, {3, 4}, {0, 4}})
	require.NoError(t, err)
	ds := &datasets.Dataset{Name: "path", Graph: g, NumFeatures: 1, Features: []float64{0, 10, 20, 30, 40},
		Labels: []int{0, 1, 0, 1, 0}, Sens: []int{1, 1, 0, 0, -1},
		Split: datasets.Split{Train: []int{0, 1}, Val: []int{2}, Test: []int{3, 4}}}
	x, err := features.NewDense(ds.Features, 5, 1)
	require.NoError(t, err)
	sub, err := induced(ds, x, []int{0, 1, 3, 4})
	require.NoError(t, err)
	assert.Equal(t, [][2]int{{0, 1}, {0, 3}, {2, 3}}, sub.Graph.Edges())
	assert.Equal(t, []float64{0, 10, 30, 40}, sub.Features)
	assert.Equal(t, []int{0, 1, 1, 0}, sub.Labels)
	assert.Equal(t, []int{1, 1, 0, -1}, sub.Sens)
	assert.Equal(t, datasets.Split{Train: []int{0, 1}, Test: []int{2, 3}}, sub.Split)
	_, err = induced(ds, x, []int{3, 1})
	assert.ErrorContains(t, err, "ascending")

	w, err := draw(ds, 0.6, 7)
	require.NoError(t, err)
	assert.Len(t, w.oldIDs, 3)
	assert.Len(t, w.newIDs, 2)
	_, err = draw(ds, 0.01, 7)
	assert.ErrorContains(t, err, "at least one old and one new node")
}

func TestDeployFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-datasets", "pokec_z"}, `"pokec_z" is not a data set`},
		{[]string{"-datasets", "bail,bail"}, "listed twice"},
		{[]string{"-seeds", "0"}, "-seeds 0"},
		{[]string{"-new", "1"}, "-new 1"},
		{[]string{"-cost", "-cost-new", "x"}, "-cost-new"},
		{[]string{"-cost", "-cost-nodes", "1000", "-cost-train-nodes", "900", "-cost-new", "500"}, "only 100 nodes"},
		{[]string{"x"}, "unexpected arguments"},
		{[]string{"-methods", "fmp"}, `"fmp" is not a method of this study`},
		{[]string{"-methods", "nifty,nifty"}, "listed twice"},
		{[]string{"-figure", "runs.csv"}, "needs -out"},
	} {
		var out, log bytes.Buffer
		assert.ErrorContains(t, run(c.args, &out, &log), c.want, c.args)
	}
}

// TestDeployMethodsSubset runs the study with two of the methods: the
// table has their rows and no other method's.
func TestDeployMethodsSubset(t *testing.T) {
	var out, log bytes.Buffer
	err := run([]string{"-datasets", "synthetic", "-synthetic-nodes", "200", "-seeds", "1", "-epochs", "3", "-lr", "0.01", "-data", "", "-methods", "fairvgnn,edits"}, &out, &log)
	require.NoError(t, err, log.String())
	assert.Equal(t, 2, strings.Count(out.String(), "| FairVGNN (GCN body, mask folded) |"))
	assert.Equal(t, 2, strings.Count(out.String(), "| EDITS, new nodes unprocessed |"))
	assert.NotContains(t, out.String(), "NIFTY")
	assert.Equal(t, 2, strings.Count(out.String(), "| GCN alone |"))
}
