package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/parquet-go/parquet-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type pqEdge struct {
	Source string `parquet:"source"`
	Target string `parquet:"target"`
}

// A Parquet edge list gives the run the CSV one gives; a bad row is exit
// status 2 naming the file, the row and the column, with nothing written.
func TestParquetEdges(t *testing.T) {
	dir := t.TempDir()
	in := userFiles(t, dir, 300, 8)
	rows := readCSV(t, in[3])
	var edges []pqEdge
	for _, r := range rows[1:] {
		edges = append(edges, pqEdge{r[0], r[1]})
	}
	write := func(name string, e []pqEdge) string {
		var b bytes.Buffer
		require.NoError(t, parquet.Write(&b, e))
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, b.Bytes(), 0o644))
		return p
	}
	args := append([]string{}, in...)
	args[3] = write("edges.parquet", edges)
	csvOut, pqOut := filepath.Join(dir, "csv"), filepath.Join(dir, "pq")
	code, _, stderr := runCmd(append(append(append([]string{}, in...), fast...), "-out", csvOut)...)
	require.Equal(t, 0, code, stderr)
	code, _, stderr = runCmd(append(append(append([]string{}, args...), fast...), "-out", pqOut)...)
	require.Equal(t, 0, code, stderr)
	assert.Equal(t, readCSV(t, filepath.Join(csvOut, "predictions.csv")), readCSV(t, filepath.Join(pqOut, "predictions.csv")))

	edges[6].Target = "nobody"
	args[3] = write("bad.parquet", edges)
	no := filepath.Join(dir, "no")
	code, _, stderr = runCmd(append(append(append([]string{}, args...), fast...), "-out", no)...)
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, "bad.parquet: row 7, column 2: node id \"nobody\" is not in the node table's id column")
	assert.NoDirExists(t, no)
	// A Parquet file named otherwise is read with -edges-format.
	args[3] = write("edges.bin", edges[:5])
	code, _, stderr = runCmd(append(append(append([]string{}, args...), fast...), "-out", no)...)
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, "read it with -nodes-format or -edges-format parquet")
}
