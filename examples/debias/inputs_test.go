package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// rewriteNodes writes a copy of the node table with the cell of column
// col in data row r replaced by v and returns the flags that read it.
func rewriteNodes(t *testing.T, in []string, dir, name, col string, r int, v string) []string {
	t.Helper()
	rows := readCSV(t, in[1])
	k := -1
	for j, h := range rows[0] {
		if h == col {
			k = j
		}
	}
	require.GreaterOrEqual(t, k, 0, "no column %s", col)
	var b strings.Builder
	for i, row := range rows {
		if i == r+1 {
			row[k] = v
		}
		b.WriteString(strings.Join(row, ",") + "\n")
	}
	p := filepath.Join(dir, name)
	require.NoError(t, os.WriteFile(p, []byte(b.String()), 0o644))
	out := append([]string{}, in...)
	out[1] = p
	return out
}

// pqNode is a node table of one feature, as a Parquet file holds it.
type pqNode struct {
	Node  string  `parquet:"node"`
	X     float64 `parquet:"x"`
	Label string  `parquet:"label"`
	Group string  `parquet:"group"`
	Split string  `parquet:"split"`
}

// parquetNodes writes the node table's id, first feature, label, group
// and split columns as a Parquet file, the first feature of data row r
// set to v, and returns the flags that read it.
func parquetNodes(t *testing.T, in []string, dir, name string, r int, v float64) []string {
	t.Helper()
	rows := readCSV(t, in[1])
	ids, x := column(t, rows, "node"), column(t, rows, rows[0][1])
	labels, groups, splits := column(t, rows, "label"), column(t, rows, "group"), column(t, rows, "split")
	nodes := make([]pqNode, len(ids))
	for i := range ids {
		var f float64
		_, err := fmt.Sscan(x[i], &f)
		require.NoError(t, err)
		nodes[i] = pqNode{ids[i], f, labels[i], groups[i], splits[i]}
	}
	nodes[r].X = v
	var b bytes.Buffer
	require.NoError(t, parquet.Write(&b, nodes))
	p := filepath.Join(dir, name)
	require.NoError(t, os.WriteFile(p, b.Bytes(), 0o644))
	out := append([]string{}, in...)
	out[1] = p
	return out
}

// -no-scale with a cell the model's arithmetic cannot hold (1e308 in
// float64, 1e39 in float32) is exit status 2 naming the file, the line
// and the column and saying what to do, with nothing written; in a CSV
// and a Parquet table alike. Before, the run went on, gave NaN and exit
// status 1 with no place.
func TestInputsNoScaleHugeCell(t *testing.T) {
	dir := t.TempDir()
	in := userFiles(t, dir, 300, 4)
	feat := readCSV(t, in[1])[0][1]
	for _, tc := range []struct {
		dtype, cell, want string
	}{
		{"float64", "1e308", `nodes_float64.csv:9:4: column "` + feat + `": 1e308 is beyond ±1.34e+154, the limit for float64 arithmetic (-dtype): its square overflows; leave out -no-scale to min-max scale the features, or rescale the column`},
		{"float32", "1e39", `nodes_float32.csv:9:4: column "` + feat + `": 1e39 is beyond ±1.84e+19, the limit for float32 arithmetic (-dtype): its square overflows; leave out -no-scale to min-max scale the features, or rescale the column`},
		{"float32", "-inf", `nodes_float32.csv:9:4: column "` + feat + `": "-inf" is not finite`},
	} {
		args := rewriteNodes(t, in, dir, "nodes_"+tc.dtype+".csv", feat, 7, tc.cell)
		out := filepath.Join(dir, "out_"+tc.dtype)
		code, _, stderr := runCmd(append(append(args, fast...), "-no-scale", "-dtype", tc.dtype, "-out", out)...)
		assert.Equal(t, 2, code, stderr)
		assert.Contains(t, stderr, tc.want)
		assert.NoDirExists(t, out)
	}
	for _, tc := range []struct {
		dtype string
		v     float64
		want  string
	}{
		{"float64", 1e308, `nodes.parquet: row 8, column 2: column "x": 1e+308 is beyond ±1.34e+154, the limit for float64 arithmetic (-dtype)`},
		{"float32", 1e39, `nodes.parquet: row 8, column 2: column "x": 1e+39 is beyond ±1.84e+19, the limit for float32 arithmetic (-dtype)`},
	} {
		args := parquetNodes(t, in, dir, "nodes.parquet", 7, tc.v)
		out := filepath.Join(dir, "pq_"+tc.dtype)
		code, _, stderr := runCmd(append(append(args, fast...), "-no-scale", "-dtype", tc.dtype, "-out", out)...)
		assert.Equal(t, 2, code, stderr)
		assert.Contains(t, stderr, tc.want)
		assert.NoDirExists(t, out)
	}
}

// A float64 cell that float32 cannot hold is fine in float64, and a
// column spanning 0 to 1e308 is min-max scaled without overflow (before:
// +Inf, exit status 1).
func TestInputsWideValues(t *testing.T) {
	dir := t.TempDir()
	in := userFiles(t, dir, 300, 4)
	feat := readCSV(t, in[1])[0][1]
	args := rewriteNodes(t, in, dir, "wide.csv", feat, 7, "1e39")
	code, _, stderr := runCmd(append(append(args, fast...), "-no-scale", "-dtype", "float64", "-out", filepath.Join(dir, "a"))...)
	assert.Equal(t, 0, code, stderr)
	args = rewriteNodes(t, in, dir, "span.csv", feat, 7, "1e308")
	args = rewriteNodes(t, args, dir, "span.csv", feat, 8, "-1e300")
	code, _, stderr = runCmd(append(append(args, fast...), "-out", filepath.Join(dir, "b"))...)
	assert.Equal(t, 0, code, stderr)
}

// An unknown split value is exit status 2 listing the accepted values and
// the values found, at the first unknown one. Before, the node was left
// out of every list without a word.
func TestInputsSplitValueUnknown(t *testing.T) {
	dir := t.TempDir()
	in := userFiles(t, dir, 300, 4)
	args := rewriteNodes(t, in, dir, "vla.csv", "split", 7, "vla")
	out := filepath.Join(dir, "out")
	code, _, stderr := runCmd(append(append(args, fast...), "-out", out)...)
	assert.Equal(t, 2, code, stderr)
	assert.Contains(t, stderr, `vla.csv:9:325: `)
	assert.Contains(t, stderr, `column "split": "vla" is not a split: want train, val (or valid, validation) or test, or a missing value (-missing: "", "NA", "N/A", "NaN", "null", "None", "?") for a node in no list; the column holds "test" (75 rows, first line 2), "train" (150 rows, first line 3), "vla" (1 row, first line 9), "val" (74 rows, first line 10)`)
	assert.NoDirExists(t, out)
}

// Self-loops dropped and repeated edges merged are a warning on stderr
// with their counts; an edge list of self-loops only is exit status 2
// saying the graph would have no edge. Before, 300 self-loops and one
// edge loaded as a one-edge graph without a word.
func TestInputsEdgeCleanupWarned(t *testing.T) {
	dir := t.TempDir()
	in := userFiles(t, dir, 300, 4)
	edges := readCSV(t, in[3])
	var b strings.Builder
	b.WriteString("source,target\n")
	for i := 0; i < 300; i++ {
		fmt.Fprintf(&b, "n%d,n%d\n", i, i)
	}
	for _, e := range edges[1:] {
		fmt.Fprintf(&b, "%s,%s\n%s,%s\n", e[0], e[1], e[1], e[0])
	}
	fmt.Fprintf(&b, "%s,%s\n", edges[1][0], edges[1][1])
	p := filepath.Join(dir, "loops.csv")
	require.NoError(t, os.WriteFile(p, []byte(b.String()), 0o644))
	args := append([]string{}, in...)
	args[3] = p
	code, _, stderr := runCmd(append(append(args, fast...), "-out", filepath.Join(dir, "out"))...)
	assert.Equal(t, 0, code, stderr)
	m := len(edges) - 1
	assert.Contains(t, stderr, fmt.Sprintf("warning: %s: %d edges make a graph of %d: 300 self-loops (a node joined to itself) dropped; 1 repeated edge (the same pair again) merged; %d edges listed in both directions merged, for the list is read as undirected ((a, b) and (b, a) are one edge)\n", p, 300+2*m+1, m, m))

	require.NoError(t, os.WriteFile(p, []byte(strings.Repeat("n1,n1\n", 300)), 0o644))
	out := filepath.Join(dir, "none")
	code, _, stderr = runCmd(append(append(args, fast...), "-out", out)...)
	assert.Equal(t, 2, code, stderr)
	assert.Contains(t, stderr, "loops.csv: every one of its 300 edges joins a node to itself: without its self-loops the graph has no edge and every node is isolated (a graph model would be an MLP)")
	assert.NoDirExists(t, out)
}
