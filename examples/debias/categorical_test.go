package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// withColumn writes a copy of the node table with a column added after
// the id, cell f(row) (header name), and returns the flags that read it.
func withColumn(t *testing.T, in []string, dir, file, name string, f func(r int) string) []string {
	t.Helper()
	rows := readCSV(t, in[1])
	var b strings.Builder
	for r, row := range rows {
		cell := name
		if r > 0 {
			cell = f(r - 1)
		}
		b.WriteString(strings.Join(append([]string{row[0], cell}, row[1:]...), ",") + "\n")
	}
	p := filepath.Join(dir, file)
	require.NoError(t, os.WriteFile(p, []byte(b.String()), 0o644))
	out := append([]string{}, in...)
	out[1] = p
	return out
}

// A categorical column is one-hot encoded, recorded in metrics.json and
// in the model file, and encodes new rows the same way; an unseen level
// or too many levels is exit status 2 naming file:line:column, the level
// or count and the flag, with nothing written.
func TestCategoricalColumn(t *testing.T) {
	dir := t.TempDir()
	in := userFiles(t, dir, 300, 5)
	colours := []string{"red", "green", "blue"}
	args := withColumn(t, in, dir, "cat.csv", "colour", func(r int) string { return colours[r%3] })
	out := filepath.Join(dir, "res")
	code, _, stderr := runCmd(append(append(append([]string{}, args...), fast...), "-categorical", "colour", "-out", out)...)
	require.Equal(t, 0, code, stderr)
	var m struct {
		Data struct {
			Features    int `json:"features"`
			Categorical []struct {
				Column string   `json:"column"`
				Levels []string `json:"levels"`
			} `json:"categorical"`
		} `json:"data"`
	}
	b, err := os.ReadFile(filepath.Join(out, "metrics.json"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &m))
	require.Len(t, m.Data.Categorical, 1)
	assert.Equal(t, "colour", m.Data.Categorical[0].Column)
	assert.Equal(t, []string{"blue", "green", "red"}, m.Data.Categorical[0].Levels)
	want := column(t, readCSV(t, filepath.Join(out, "predictions.csv")), "fmp_p1")

	// -model: the same rows give the same predictions (the levels come
	// from the model file, no -categorical needed).
	again := filepath.Join(dir, "again")
	code, _, stderr = runCmd(append(append([]string{}, args...), "-q", "-model", filepath.Join(out, "model.fmp"), "-out", again)...)
	require.Equal(t, 0, code, stderr)
	assert.Equal(t, want, column(t, readCSV(t, filepath.Join(again, "predictions.csv")), "model_p1"))

	// An unseen level.
	unseen := withColumn(t, in, dir, "unseen.csv", "colour", func(r int) string {
		if r == 10 {
			return "purple"
		}
		return colours[r%3]
	})
	no := filepath.Join(dir, "no")
	code, _, stderr = runCmd(append(append([]string{}, unseen...), "-q", "-model", filepath.Join(out, "model.fmp"), "-out", no)...)
	assert.Equal(t, 2, code, stderr)
	assert.Contains(t, stderr, `unseen.csv:12:5: column "colour": level "purple" is not one the model was trained on (it knows "blue", "green", "red")`)
	assert.Contains(t, stderr, "(-missing)")
	assert.NoDirExists(t, no)

	// Too many levels: a column of ids.
	many := withColumn(t, in, dir, "many.csv", "ref", func(r int) string { return "r" + strconv.Itoa(r) })
	code, _, stderr = runCmd(append(append(append([]string{}, many...), fast...), "-categorical", "ref", "-out", no)...)
	assert.Equal(t, 2, code, stderr)
	assert.Contains(t, stderr, `many.csv:1:2: column "ref": 300 levels, more than -max-levels (50)`)
	assert.Contains(t, stderr, "leave the column out (-drop)")
	assert.NotContains(t, stderr, "FilesConfig")
	assert.NoDirExists(t, no)
}
