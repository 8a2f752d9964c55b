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
