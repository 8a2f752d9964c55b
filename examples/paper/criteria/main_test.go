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

// TestCriteriaSecondAttribute: -second intersects the generated
// attribute with another: four groups, named.
func TestCriteriaSecondAttribute(t *testing.T) {
	o, err := parseFlags([]string{"-groups", "2", "-second", "-synthetic-nodes", "400"}, &bytes.Buffer{})
	require.NoError(t, err)
	ds, err := load(o)
	require.NoError(t, err)
	assert.Equal(t, []string{"s=0 & b=0", "s=0 & b=1", "s=1 & b=0", "s=1 & b=1"}, ds.GroupNames)
	for _, s := range ds.Sens {
		assert.True(t, s >= 0 && s < 4)
	}
}

// TestCriteriaSmoke runs every method under every criterion on a small
// generated graph with three groups: a row per criterion and method, a
// comparison per criterion and kind of thresholds, a CSV line per run.
func TestCriteriaSmoke(t *testing.T) {
	dir := t.TempDir()
	var out, log bytes.Buffer
	err := run([]string{"-groups", "3", "-synthetic-nodes", "400", "-backbone", "mlp", "-seeds", "2", "-epochs", "5", "-lr", "0.01",
		"-criteria", "dp,eo,eodds,dp-ratio", "-resamples", "100", "-out", dir}, &out, &log)
	require.NoError(t, err, log.String())
	for _, row := range []string{"| ΔDP | backbone |", "| ΔEO | FMP |", "| ΔEOdds | thresholds (randomised) |", "| DP ratio | thresholds |",
		"| criterion | against |", "3 groups"} {
		assert.Contains(t, out.String(), row)
	}
	assert.Contains(t, log.String(), "[2/2] mlp seed 2")
	b, err := os.ReadFile(filepath.Join(dir, "runs.csv"))
	require.NoError(t, err)
	assert.Len(t, strings.Split(strings.TrimSpace(string(b)), "\n"), 1+2*4*4)
	tb, err := os.ReadFile(filepath.Join(dir, "table.md"))
	require.NoError(t, err)
	assert.Equal(t, out.String(), string(tb))

	// A rerun gives the same runs, bit for bit.
	again := t.TempDir()
	out.Reset()
	err = run([]string{"-groups", "3", "-synthetic-nodes", "400", "-backbone", "mlp", "-seeds", "2", "-epochs", "5", "-lr", "0.01",
		"-criteria", "dp,eo,eodds,dp-ratio", "-resamples", "100", "-out", again, "-q"}, &out, &log)
	require.NoError(t, err)
	b2, err := os.ReadFile(filepath.Join(again, "runs.csv"))
	require.NoError(t, err)
	assert.Equal(t, string(b), string(b2))
}

func TestCriteriaFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-criteria", "parity"}, `criterion "parity"`},
		{[]string{"-backbone", "fmp"}, `-backbone "fmp"`},
		{[]string{"-groups", "5"}, "-groups 5"},
		{[]string{"-intersect", "MALE"}, "-intersect is for a preset"},
		{[]string{"-dataset", "bail", "-data", "x", "-second"}, "-second is for the generated graph"},
		{[]string{"-dataset", "bail", "-data", ""}, "needs -data"},
		{[]string{"-seeds", "0"}, "-seeds 0"},
		{[]string{"x"}, "unexpected arguments"},
	} {
		var out, log bytes.Buffer
		assert.ErrorContains(t, run(c.args, &out, &log), c.want)
	}
}
