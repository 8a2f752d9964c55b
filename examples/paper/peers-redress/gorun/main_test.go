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

func TestRunSynthetic(t *testing.T) {
	var out, log bytes.Buffer
	csv := filepath.Join(t.TempDir(), "runs.csv")
	require.NoError(t, run([]string{"-dataset", "synthetic", "-n", "150", "-seeds", "2", "-epochs", "3", "-select", "last", "-out", csv}, &out, &log))
	assert.Contains(t, out.String(), "redress ")
	assert.Contains(t, out.String(), "InFoRM")
	b, err := os.ReadFile(csv)
	require.NoError(t, err)
	assert.Equal(t, 5, strings.Count(string(b), "\n"), "a header and 4 runs")
}

func TestRunErrors(t *testing.T) {
	var out, log bytes.Buffer
	assert.ErrorContains(t, run([]string{"-methods", "fairgnn"}, &out, &log), "want gcn or redress")
	assert.ErrorContains(t, run([]string{"-select", "first"}, &out, &log), "want best or last")
	assert.ErrorContains(t, run([]string{"-gamma", "-1"}, &out, &log), "Gamma")
	assert.ErrorContains(t, run([]string{"-dataset", "bail", "-data", ""}, &out, &log), "no data folder")
}
