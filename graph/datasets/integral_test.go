package datasets

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseIndex(t *testing.T) {
	for s, want := range map[string]int64{
		"838": 838, "+838": 838, "-3": -3, "838.0": 838, "838.": 838, "8.38e+02": 838, "8.380000000000000000e+02": 838,
		"0.000000000000000000e+00": 0, "9007199254740992.0": 1 << 53, "9223372036854775807": 1<<63 - 1,
		".5e1": 5, "-0.0": 0, "1.5e1": 15, "1e15": 1e15, "00012.000": 12, "-8.38E2": -838,
	} {
		v, _, ok := parseIndex(s)
		assert.True(t, ok, s)
		assert.Equal(t, want, v, s)
	}
	for _, s := range []string{"838.5", "8.385e+02", "1_000", "0x10", "NaN", "inf", "", "a", "1e400", "9007199254740994.0", "1e19"} {
		_, _, ok := parseIndex(s)
		assert.False(t, ok, s)
	}
	// numpy.savetxt's form of every integer reads back as that integer.
	for _, v := range []int64{0, 1, 7, 838, 18875, 123456789, 1 << 40, 1<<53 - 1} {
		got, _, ok := parseIndex(fmt.Sprintf("%.18e", float64(v)))
		assert.True(t, ok, v)
		assert.Equal(t, v, got)
	}
	_, exact, _ := parseIndex("838")
	assert.True(t, exact)
	_, exact, _ = parseIndex("838.0")
	assert.False(t, exact)
}

// numpy.savetxt's edge lists (%.18e) and floats in split files read as
// the rows they name; without an id column, in every notation.
func TestIntegralRows(t *testing.T) {
	nodes := "y,s,f\n0,a,1\n1,b,2\n0,a,3\n1,b,4\n"
	edges := "0.000000000000000000e+00 1.000000000000000000e+00\n1.0 2\n3 2.000e+00\n"
	dir := writeFiles(t, map[string]string{"n.csv": nodes, "e.txt": edges,
		"split.json": `{"train": [0.0, 1e0], "val": [2.000000000000000000e+00], "test": [3]}`})
	c := DefaultFilesConfig()
	c.Nodes, c.Edges, c.LabelColumn, c.SensColumn = filepath.Join(dir, "n.csv"), filepath.Join(dir, "e.txt"), "y", "s"
	c.Split = filepath.Join(dir, "split.json")
	ds, err := LoadFiles(c)
	require.NoError(t, err)
	assert.Equal(t, [][2]int{{0, 1}, {1, 2}, {2, 3}}, ds.Graph.Edges())
	assert.Equal(t, Split{Train: []int{0, 1}, Val: []int{2}, Test: []int{3}}, ds.Split)
	assert.Empty(t, ds.Warnings)

	for _, tc := range []struct{ file, content, want string }{
		{"e.txt", "0 1\n1 2.5\n", `F/e.txt:2:3: "2.5" is not a row index, want an integer in [0, 4) (the node table has no id column)`},
		{"e.txt", "0 1\n1 4.0e+00\n", `F/e.txt:2:3: row index 4.0e+00 out of range, want an integer in [0, 4)`},
		{"split.json", `{"train": [0, 1.5], "val": [], "test": [3]}`, `F/split.json:1:15: train[1] = 1.5, want an integer row index`},
	} {
		files := map[string]string{"n.csv": nodes, "e.txt": edges, "split.json": `{"train": [0], "val": [], "test": [3]}`}
		files[tc.file] = tc.content
		d := writeFiles(t, files)
		c.Nodes, c.Edges, c.Split = filepath.Join(d, "n.csv"), filepath.Join(d, "e.txt"), filepath.Join(d, "split.json")
		_, err := LoadFiles(c)
		require.Error(t, err, tc.content)
		assert.Contains(t, strings.ReplaceAll(err.Error(), d, "F"), tc.want)
	}
}

// An integer id column and an edge list of the ids written as floats
// (numpy.savetxt of the ids): each float names the id of its integer
// value, with a warning; an id found verbatim wins.
func TestFloatIDs(t *testing.T) {
	nodes := "id,y,s\n838,0,a\n17,1,b\n5.0,0,a\n2,1,b\n"
	edges := "8.380000000000000000e+02 1.700000000000000000e+01\n5.0 2\n"
	dir := writeFiles(t, map[string]string{"n.csv": nodes, "e.txt": edges})
	c := DefaultFilesConfig()
	c.Nodes, c.Edges, c.IDColumn, c.LabelColumn, c.SensColumn = filepath.Join(dir, "n.csv"), filepath.Join(dir, "e.txt"), "id", "y", "s"
	ds, err := LoadFiles(c)
	require.NoError(t, err)
	assert.Equal(t, [][2]int{{0, 1}, {2, 3}}, ds.Graph.Edges())
	require.Len(t, ds.Warnings, 1)
	assert.Contains(t, ds.Warnings[0], "2 node references written as floats (such as 8.38e+02) matched the ids of their integer value")

	// A float that is not integral, or whose integer is no id, is refused.
	for _, e := range []string{"838.5 17\n", "8.39e+02 17\n"} {
		d := writeFiles(t, map[string]string{"n.csv": nodes, "e.txt": e})
		c.Nodes, c.Edges = filepath.Join(d, "n.csv"), filepath.Join(d, "e.txt")
		_, err := LoadFiles(c)
		require.Error(t, err)
		assert.Contains(t, err.Error(), "is not in the node table's id column")
	}
}
