package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestScaleRunSmall runs every phase on a small generated graph and
// checks the report: one row per phase, the metrics of both models, FMP
// lowering ΔDP, and the JSON written beside the Markdown.
func TestScaleRunSmall(t *testing.T) {
	dir := t.TempDir()
	var out, log bytes.Buffer
	err := run([]string{"-n", "3000", "-features", "8", "-split", "0.2,0.1,0.7", "-batch", "128", "-epochs", "3", "-dir", dir, "-out", dir, "-log-every", "5", "-frontier", "0.5,2,8"}, &out, &log)
	require.NoError(t, err, log.String())
	s := out.String()
	for _, p := range []string{"generate", "open features", "propagation matrix", "mini-batch training", "whole-graph inference", "FMP frontier on validation", "FMP over the whole graph", "test metrics"} {
		assert.Contains(t, s, "| "+p+" |")
	}
	assert.Contains(t, log.String(), "epoch 3: batch 5/5")
	var r scaleResult
	b, err := os.ReadFile(filepath.Join(dir, "scale-3000-frontier.json"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &r))
	assert.Equal(t, 3000, r.Nodes)
	assert.Equal(t, 600, r.Train)
	assert.Equal(t, 5, r.Batches)
	assert.Len(t, r.History, 3)
	require.Len(t, r.Frontier, 4, "λf = 0 is added to the grid")
	assert.Contains(t, []float64{0, 0.5, 2, 8}, r.FMPConfig.LambdaF, "the chosen λf is one of the grid's")
	assert.Contains(t, s, "(chosen)")
	assert.Less(t, r.FMP.DemographicParity, r.Backbone.DemographicParity)
	assert.Greater(t, r.Backbone.Accuracy, 0.6)
	_, err = os.Stat(filepath.Join(dir, "scale-3000-frontier.md"))
	assert.NoError(t, err)
	matches, _ := filepath.Glob(filepath.Join(dir, "*.fmx"))
	assert.Empty(t, matches, "the features file is removed without -keep")
}

// TestCompareSmall: both trainings run on each seed, the table has one
// row per training, and the CSV one line per run.
func TestCompareSmall(t *testing.T) {
	dir := t.TempDir()
	var out bytes.Buffer
	err := run([]string{"-compare", "synthetic", "-synthetic-n", "600", "-seeds", "2", "-full-epochs", "20", "-mini-epochs", "10", "-out", dir, "-q"}, &out, &bytes.Buffer{})
	require.NoError(t, err)
	assert.Contains(t, out.String(), "| synthetic | full-batch |")
	assert.Contains(t, out.String(), "| synthetic | mini-batch |")
	b, err := os.ReadFile(filepath.Join(dir, "compare.csv"))
	require.NoError(t, err)
	assert.Len(t, strings.Split(strings.TrimSpace(string(b)), "\n"), 5)
}

func TestBadFlags(t *testing.T) {
	for _, args := range [][]string{{"-n", "2"}, {"-fanouts", "a"}, {"-split", "0.5,0.5"}, {"-seeds", "0"}, {"extra"}, {"-fanouts", "10"}} {
		err := run(args, &bytes.Buffer{}, &bytes.Buffer{})
		var ue usageError
		assert.True(t, errors.As(err, &ue), "%v: %v", args, err)
	}
}
