package datasets

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The rows of userCSV, as a Parquet file would hold them: typed columns,
// a null for the missing label.
type pqPerson struct {
	Name    string  `parquet:"name"`
	Age     int64   `parquet:"age"`
	Score   float64 `parquet:"score"`
	Job     string  `parquet:"job"`
	Outcome *string `parquet:"outcome,optional"`
	Region  string  `parquet:"region"`
	Set     string  `parquet:"set"`
}

type pqEdge struct {
	Source string  `parquet:"source"`
	Target string  `parquet:"target"`
	Weight float64 `parquet:"weight"`
}

type pqRowEdge struct {
	U int64 `parquet:"u"`
	V int32 `parquet:"v"`
}

func people() []pqPerson {
	s := func(v string) *string { return &v }
	return []pqPerson{
		{"ann", 20, 1, "x", s("yes"), "north", "train"},
		{"bob", 30, 3, "y", s("no"), "south", "train"},
		{"cid", 40, 5, "x", nil, "east", ""},
		{"dan", 50, 7, "z", s("yes"), "north", "val"},
		{"eve", 60, 9, "y", s("no"), "south", "test"},
	}
}

func writeParquet[T any](t *testing.T, path string, rows []T) {
	t.Helper()
	var b bytes.Buffer
	require.NoError(t, parquet.Write(&b, rows))
	require.NoError(t, os.WriteFile(path, b.Bytes(), 0o644))
}

// A node table and an edge list written by the Parquet library read as the
// same data set as their CSV twins, the format chosen by the extension.
func TestParquet(t *testing.T) {
	dir := writeFiles(t, map[string]string{"people.csv": userCSV, "links.txt": userEdges})
	writeParquet(t, filepath.Join(dir, "people.parquet"), people())
	writeParquet(t, filepath.Join(dir, "links.parquet"), []pqEdge{{"ann", "bob", 0.5}, {"bob", "cid", 1}, {"cid", "dan", 1}, {"eve", "ann", 1}})
	want, err := LoadFiles(userConfig(dir))
	require.NoError(t, err)
	c := userConfig(dir)
	c.Nodes, c.Edges = filepath.Join(dir, "people.parquet"), filepath.Join(dir, "links.parquet")
	got, err := LoadFiles(c)
	require.NoError(t, err)
	assert.Equal(t, want.Features, got.Features)
	assert.Equal(t, want.FeatureNames, got.FeatureNames)
	assert.Equal(t, want.Labels, got.Labels)
	assert.Equal(t, want.Sens, got.Sens)
	assert.Equal(t, want.IDs, got.IDs)
	assert.Equal(t, want.Split, got.Split)
	assert.Equal(t, want.Graph.Edges(), got.Graph.Edges())
	require.Len(t, got.Warnings, 1)
	assert.Contains(t, got.Warnings[0], "links.parquet: 4 edges carry a third field (a weight): ignored")

	// Rows as integers of any width, no id column; a Parquet edge list
	// with a CSV table, and the format forced for another extension.
	c2 := DefaultFilesConfig()
	c2.Nodes, c2.LabelColumn, c2.SensColumn, c2.SplitColumn, c2.Drop = c.Nodes, "outcome", "region", "set", []string{"name", "job"}
	c2.Edges = filepath.Join(dir, "rows.bin")
	writeParquet(t, c2.Edges, []pqRowEdge{{0, 1}, {1, 2}, {3, 4}})
	c2.EdgesFormat = "parquet"
	ds, err := LoadFiles(c2)
	require.NoError(t, err)
	assert.Equal(t, [][2]int{{0, 1}, {1, 2}, {3, 4}}, ds.Graph.Edges())
}

// Bad Parquet input: the same checks as CSV, errors naming the row and the
// column; files that are not Parquet, or claim more than they hold, are
// refused before anything is allocated for them.
func TestParquetErrors(t *testing.T) {
	dir := writeFiles(t, map[string]string{"links.txt": userEdges, "text.parquet": userCSV})
	nodes := filepath.Join(dir, "people.parquet")
	writeParquet(t, nodes, people())
	bad := people()
	bad[3].Region = "North"
	bad[1].Region = "north"
	writeParquet(t, filepath.Join(dir, "variants.parquet"), bad)
	writeParquet(t, filepath.Join(dir, "unknown.parquet"), []pqEdge{{"ann", "bob", 1}, {"bob", "zed", 1}})
	writeParquet(t, filepath.Join(dir, "range.parquet"), []pqRowEdge{{0, 1}, {1, 9}})
	b, err := os.ReadFile(nodes)
	require.NoError(t, err)
	huge := append([]byte{}, b...)
	binary.LittleEndian.PutUint32(huge[len(huge)-8:], 1<<31)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "huge.parquet"), huge, 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "cut.parquet"), b[:len(b)/2], 0o644))

	for _, tc := range []struct {
		name string
		edit func(*FilesConfig)
		want string
	}{
		{"text feature", func(c *FilesConfig) { c.Drop = nil }, `F/people.parquet: row 1, column 4: column "job": "x" is not a number`},
		{"variants", func(c *FilesConfig) { c.Nodes = filepath.Join(dir, "variants.parquet") }, `F/variants.parquet: row 4, column 6: column "region": the values "north" (2 rows, first row 1), "North" (1 row, first row 4) differ only in case or spaces`},
		{"unknown id", func(c *FilesConfig) { c.Edges = filepath.Join(dir, "unknown.parquet") }, `F/unknown.parquet: row 2, column 2: node id "zed" is not in the node table's id column`},
		{"row out of range", func(c *FilesConfig) {
			c.IDColumn, c.Drop, c.Edges = "", []string{"job", "name"}, filepath.Join(dir, "range.parquet")
		}, `F/range.parquet: row 2, column 2: row index 9 out of range, want an integer in [0, 5)`},
		{"missing column", func(c *FilesConfig) { c.SensColumn = "gender" }, `F/people.parquet: missing column "gender"; columns present: name, age, score, job, outcome, region, set`},
		{"text as parquet", func(c *FilesConfig) { c.Nodes = filepath.Join(dir, "text.parquet") }, "F/text.parquet: not a Parquet file: no PAR1 magic bytes"},
		{"huge footer", func(c *FilesConfig) { c.Nodes = filepath.Join(dir, "huge.parquet") }, "F/huge.parquet: its footer claims 2147483648 bytes, more than the file's"},
		{"cut", func(c *FilesConfig) { c.Nodes = filepath.Join(dir, "cut.parquet") }, "F/cut.parquet: not a Parquet file"},
		{"parquet read as csv", func(c *FilesConfig) { c.NodesFormat = "csv" }, "F/people.parquet:2: binary or not UTF-8 text: NUL byte at byte 21; want a text file (this is a Parquet file: read it with the parquet format)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := userConfig(dir)
			c.Nodes = nodes
			tc.edit(&c)
			_, err := LoadFiles(c)
			require.Error(t, err)
			assert.True(t, isFileError(err), "%v", err)
			assert.Contains(t, strings.ReplaceAll(err.Error(), dir, "F"), tc.want)
		})
	}
	c := userConfig(dir)
	c.NodesFormat = "xlsx"
	assert.ErrorContains(t, c.Validate(), `FilesConfig.NodesFormat = "xlsx"`)
}
