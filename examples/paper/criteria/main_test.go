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
		{[]string{"-dataset", "bail", "-data", ""}, "needs -data"},
		{[]string{"-seeds", "0"}, "-seeds 0"},
		{[]string{"x"}, "unexpected arguments"},
	} {
		var out, log bytes.Buffer
		assert.ErrorContains(t, run(c.args, &out, &log), c.want)
	}
}
