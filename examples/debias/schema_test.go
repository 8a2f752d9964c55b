package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The saved model knows its features: predicting with -model reads a node
// table's columns by name and scales them with the model's ranges. With
// two columns swapped df69dad loaded the table and changed 34 of 300
// decisions without a word, and -no-scale on a model trained with scaling
// changed 6.
func TestModelKnowsItsFeatures(t *testing.T) {
	dir := t.TempDir()
	in := userFiles(t, dir, 300, 6)
	out := filepath.Join(dir, "res")
	code, _, stderr := runCmd(append(append(append([]string{}, in...), fast...), "-out", out)...)
	require.Equal(t, 0, code, stderr)
	model := filepath.Join(out, "model.fmp")
	want := column(t, readCSV(t, filepath.Join(out, "predictions.csv")), "fmp_p1")

	// Columns x0 and x5 swapped in the table: the same predictions.
	b, err := os.ReadFile(filepath.Join(dir, "nodes.csv"))
	require.NoError(t, err)
	lines := strings.Split(string(b), "\n")
	swap := func(line string) string {
		f := strings.Split(line, ",")
		if len(f) > 6 {
			f[1], f[6] = f[6], f[1]
		}
		return strings.Join(f, ",")
	}
	for k := range lines {
		lines[k] = swap(lines[k])
	}
	require.True(t, strings.HasPrefix(lines[0], "node,x5,x1,x2,x3,x4,x0,"), lines[0])
	swapped := filepath.Join(dir, "swapped.csv")
	require.NoError(t, os.WriteFile(swapped, []byte(strings.Join(lines, "\n")), 0o644))
	flags := append([]string{}, in...)
	flags[1] = swapped
	again := filepath.Join(dir, "again")
	code, _, stderr = runCmd(append(append([]string{}, flags...), "-q", "-model", model, "-out", again)...)
	require.Equal(t, 0, code, stderr)
	assert.Equal(t, want, column(t, readCSV(t, filepath.Join(again, "predictions.csv")), "model_p1"), "columns matched by name")

	// -no-scale does not undo the model's scaling.
	again2 := filepath.Join(dir, "again2")
	code, _, stderr = runCmd(append(append([]string{}, in...), "-q", "-no-scale", "-model", model, "-out", again2)...)
	require.Equal(t, 0, code, stderr)
	assert.Equal(t, want, column(t, readCSV(t, filepath.Join(again2, "predictions.csv")), "model_p1"), "the model's scaling")

	// A renamed column is refused, naming it.
	renamed := filepath.Join(dir, "renamed.csv")
	require.NoError(t, os.WriteFile(renamed, []byte(strings.Replace(string(b), "node,x0,", "node,width,", 1)), 0o644))
	flags[1] = renamed
	code, _, stderr = runCmd(append(append([]string{}, flags...), "-q", "-model", model, "-out", filepath.Join(dir, "no"))...)
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, `the model's feature columns "x0" are missing, and the columns "width" are not the model's`)
	code, _, stderr = runCmd(append(append([]string{}, flags...), "-q", "-drop", "width", "-model", model, "-out", filepath.Join(dir, "no"))...)
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, `the model's feature columns "x0" are missing from the table`)
	assert.NoDirExists(t, filepath.Join(dir, "no"))
}
