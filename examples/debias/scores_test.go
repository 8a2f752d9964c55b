package main

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// writeNPY writes an n × c float64 matrix as numpy.save would.
func writeNPY(t *testing.T, path string, n, c int, data []float64) {
	t.Helper()
	h := fmt.Sprintf("{'descr': '<f8', 'fortran_order': False, 'shape': (%d, %d), }", n, c)
	for (10+len(h)+1)%64 != 0 {
		h += " "
	}
	h += "\n"
	var b bytes.Buffer
	b.WriteString("\x93NUMPY\x01\x00")
	binary.Write(&b, binary.LittleEndian, uint16(len(h)))
	b.WriteString(h)
	for _, v := range data {
		binary.Write(&b, binary.LittleEndian, v)
	}
	require.NoError(t, os.WriteFile(path, b.Bytes(), 0o644))
}

// Scores from anywhere: a run's backbone probabilities, given back as a
// CSV of probabilities by id in another order, or as .npy logits by row,
// are debiased as if trained here: the same backbone column, a frontier,
// the thresholds, and no model file.
func TestScores(t *testing.T) {
	dir := t.TempDir()
	in := userFiles(t, dir, 300, 9)
	out := filepath.Join(dir, "res")
	code, _, stderr := runCmd(append(append(append([]string{}, in...), fast...), "-out", out)...)
	require.Equal(t, 0, code, stderr)
	pred := readCSV(t, filepath.Join(out, "predictions.csv"))
	ids, p1 := column(t, pred, "node"), column(t, pred, "backbone_p1")
	var csvText strings.Builder
	csvText.WriteString("p1,node\n")
	logits := make([]float64, 0, 2*len(ids))
	for i := len(ids) - 1; i >= 0; i-- {
		csvText.WriteString(p1[i] + "," + ids[i] + "\n")
	}
	for i := range ids {
		p, err := strconv.ParseFloat(p1[i], 64)
		require.NoError(t, err)
		p = math.Min(math.Max(p, 1e-9), 1-1e-9)
		logits = append(logits, 0, math.Log(p/(1-p)))
	}
	csvPath := filepath.Join(dir, "scores.csv")
	require.NoError(t, os.WriteFile(csvPath, []byte(csvText.String()), 0o644))
	npyPath := filepath.Join(dir, "logits.npy")
	writeNPY(t, npyPath, len(ids), 2, logits)
	rule := []string{"-lambda-f", "0,1,4", "-q"}
	for _, args := range [][]string{
		{"-scores", csvPath, "-scores-kind", "probs", "-scores-id", "node"},
		{"-scores", npyPath, "-scores-kind", "logits"},
	} {
		res := filepath.Join(dir, "s"+filepath.Ext(args[1]))
		code, stdout, stderr := runCmd(append(append(append(append([]string{}, in...), rule...), args...), "-out", res)...)
		require.Equal(t, 0, code, stderr)
		assert.Contains(t, stdout, "backbone: the "+args[3]+" of ")
		assert.Contains(t, stdout, "| fmp |")
		assert.Contains(t, stdout, "| thresholds |")
		for _, f := range []string{"metrics.json", "predictions.csv", "frontier.csv", "frontier.svg"} {
			assert.FileExists(t, filepath.Join(res, f))
		}
		assert.NoFileExists(t, filepath.Join(res, "model.fmp"))
		got := column(t, readCSV(t, filepath.Join(res, "predictions.csv")), "backbone_p1")
		for i := range got {
			a, _ := strconv.ParseFloat(got[i], 64)
			b, _ := strconv.ParseFloat(p1[i], 64)
			assert.InDelta(t, b, a, 2e-6, "node %s", ids[i])
		}
		m := string(mustRead(t, filepath.Join(res, "metrics.json")))
		assert.Contains(t, m, `"scores_kind": "`+args[3]+`"`)
		assert.NotContains(t, m, `"epochs"`)
	}

	// A rule nothing meets: as when training, every output is written
	// with the scores kept as FMP's answer, and the exit status is 3.
	strict := filepath.Join(dir, "strict")
	code, _, stderr = runCmd(append(append(append([]string{}, in...), "-lambda-f", "0,1", "-q", "-criterion", "dp", "-bound", "0", "-scores", npyPath, "-scores-kind", "logits"), "-out", strict)...)
	require.Equal(t, 3, code, stderr)
	assert.Contains(t, stderr, "warning: fmp [rule-not-met]")
	for _, f := range []string{"metrics.json", "predictions.csv", "frontier.csv", "frontier.svg"} {
		assert.FileExists(t, filepath.Join(strict, f))
	}
	assert.NoFileExists(t, filepath.Join(strict, "model.fmp"))

	// Bad scores: exit status 2, one line naming the file and place and
	// the flag, nothing written.
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(text), 0o644))
		return p
	}
	short := filepath.Join(dir, "short.npy")
	writeNPY(t, short, 10, 2, make([]float64, 20))
	outside := strings.Replace(csvText.String(), "\n"+p1[len(p1)-1]+",", "\n1.5,", 1)
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no kind", []string{"-scores", csvPath}, "say what the scores are with -scores-kind logits"},
		{"with training flags", []string{"-scores", csvPath, "-scores-kind", "probs", "-epochs", "5"}, "-epochs would be ignored"},
		{"not probabilities", []string{"-scores", write("out.csv", outside), "-scores-kind", "probs", "-scores-id", "node"}, "row 300, column 1: 1.5 is not a probability; are these logits (-scores-kind logits)?"},
		{"a node without a row", []string{"-scores", write("few.csv", strings.Join(strings.Split(csvText.String(), "\n")[:100], "\n")+"\n"), "-scores-kind", "probs", "-scores-id", "node"}, `99 rows for 300 nodes: node "n0" has no row`},
		{"unknown node", []string{"-scores", write("unknown.csv", "p1,node\n0.5,zed\n"), "-scores-kind", "probs", "-scores-id", "node"}, `unknown.csv:2:5: node "zed" (-scores-id node) is not a node of the node table`},
		{"no id column", []string{"-scores", csvPath, "-scores-kind", "probs", "-scores-id", "id"}, `scores.csv:1: no column "id" (-scores-id)`},
		{"bad cell", []string{"-scores", write("cell.csv", "0.5\nx\n"), "-scores-kind", "probs"}, `cell.csv:2:1: "x" is not a finite number, want a score`},
		{"npy rows", []string{"-scores", short, "-scores-kind", "logits"}, "10 rows, the node table has 300 nodes"},
		{"npy id", []string{"-scores", short, "-scores-kind", "logits", "-scores-id", "node"}, "a .npy file has none"},
		{"npy text", []string{"-scores", write("text.npy", "0.5,0.5\n0.1,0.9\n"), "-scores-kind", "logits"}, `no \x93NUMPY magic string`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			no := filepath.Join(dir, "no")
			code, stdout, stderr := runCmd(append(append(append(append([]string{}, in...), rule...), tc.args...), "-out", no)...)
			assert.Equal(t, 2, code, stderr)
			assert.Empty(t, stdout)
			assert.Contains(t, stderr, tc.want)
			assert.NoDirExists(t, no)
		})
	}
}
