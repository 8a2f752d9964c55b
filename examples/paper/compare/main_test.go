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

// TestCompareSmoke runs every method on a small generated graph: one row
// per backbone and method in the table, one CSV line per run.
func TestCompareSmoke(t *testing.T) {
	dir := t.TempDir()
	var out, log bytes.Buffer
	err := run([]string{"-synthetic-nodes", "300", "-backbones", "mlp,sgc", "-seeds", "2", "-epochs", "3", "-lr", "0.01", "-out", dir}, &out, &log)
	require.NoError(t, err, log.String())
	for _, row := range []string{"| mlp | backbone |", "| mlp | FMP |", "| mlp | thresholds |", "| sgc | FMP |"} {
		assert.Contains(t, out.String(), row)
	}
	assert.Contains(t, log.String(), "[4/4] sgc seed 2")
	b, err := os.ReadFile(filepath.Join(dir, "runs.csv"))
	require.NoError(t, err)
	assert.Len(t, strings.Split(strings.TrimSpace(string(b)), "\n"), 1+2*2*3)
}

func TestCompareFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-backbones", "mlp,fmp"}, `"fmp" is not a backbone`},
		{[]string{"-seeds", "0"}, "-seeds 0"},
		{[]string{"-max-acc-loss", "0"}, "-max-acc-loss"},
		{[]string{"-dataset", "bail", "-data", ""}, "needs -data"},
		{[]string{"x"}, "unexpected arguments"},
	} {
		var out, log bytes.Buffer
		assert.ErrorContains(t, run(c.args, &out, &log), c.want)
	}
}
