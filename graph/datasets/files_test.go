package datasets

import (
	"errors"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A user table: string ids, a text label with a missing value, three
// string groups, a feature to drop, a split column.
const userCSV = `name,age,score,job,outcome,region,set
ann,20,1,x,yes,north,train
bob,30,3,y,no,south,train
cid,40,5,x,,east,
dan,50,7,z,yes,north,val
eve,60,9,y,no,south,test
`

const userEdges = "source,target,weight\nann,bob,0.5\nbob cid 1\n# a comment\n\ncid\tdan\neve,ann\n"

func userConfig(dir string) FilesConfig {
	c := DefaultFilesConfig()
	c.Nodes, c.Edges = filepath.Join(dir, "people.csv"), filepath.Join(dir, "links.txt")
	c.IDColumn, c.LabelColumn, c.SensColumn, c.Drop = "name", "outcome", "region", []string{"job"}
	c.SplitColumn = "set"
	return c
}

func TestLoadFiles(t *testing.T) {
	dir := writeFiles(t, map[string]string{"people.csv": userCSV, "links.txt": userEdges})
	c := userConfig(dir)
	c.SplitColumn = "set"
	ds, err := LoadFiles(c)
	require.NoError(t, err)
	assert.Equal(t, "people", ds.Name)
	assert.Equal(t, []string{"ann", "bob", "cid", "dan", "eve"}, ds.IDs)
	// Labels in sorted order: no → 0, yes → 1; the empty cell unknown.
	assert.Equal(t, []string{"no", "yes"}, ds.ClassNames)
	assert.Equal(t, []int{1, 0, -1, 1, 0}, ds.Labels)
	// Three groups, sorted: east 0, north 1, south 2.
	assert.Equal(t, []string{"east", "north", "south"}, ds.GroupNames)
	assert.Equal(t, []int{1, 2, 0, 1, 2}, ds.Sens)
	// Features: age and score, min-max scaled to [−1, 1].
	assert.Equal(t, []string{"age", "score"}, ds.FeatureNames)
	assert.Equal(t, []float64{-1, -1, -0.5, -0.5, 0, 0, 0.5, 0.5, 1, 1}, ds.Features)
	assert.Equal(t, [][2]int{{0, 1}, {0, 4}, {1, 2}, {2, 3}}, ds.Graph.Edges())
	assert.Equal(t, Split{Train: []int{0, 1}, Val: []int{3}, Test: []int{4}}, ds.Split)
	// The header line is skipped; the weights are ignored, with a warning.
	require.Len(t, ds.Warnings, 1)
	assert.Contains(t, ds.Warnings[0], "2 edges carry a third field")
}

func TestLoadFilesRowsTSVAndPositive(t *testing.T) {
	// No id column: rows in order, edges by row index; a TSV file by its
	// extension; numeric labels with a missing marker given by the user;
	// the positive label chosen explicitly.
	tsv := "f\ty\ts\n1\t-1\t0\n2\t1\t1\n3\t9\t0\n4\t1\t1\n"
	dir := writeFiles(t, map[string]string{"n.tsv": tsv, "e.txt": "0 1\n1 2\n3 2\n"})
	c := DefaultFilesConfig()
	c.Nodes, c.Edges, c.LabelColumn, c.SensColumn = filepath.Join(dir, "n.tsv"), filepath.Join(dir, "e.txt"), "y", "s"
	c.Missing = []string{"-1"}
	c.PositiveLabel = "1"
	c.MinMaxScale = false
	ds, err := LoadFiles(c)
	require.NoError(t, err)
	assert.Nil(t, ds.IDs)
	// Values 1 and 9; 1 is the positive class, so 9 → 0.
	assert.Equal(t, []string{"9", "1"}, ds.ClassNames)
	assert.Equal(t, []int{-1, 1, 0, 1}, ds.Labels)
	assert.Equal(t, []string{"0", "1"}, ds.GroupNames)
	assert.Equal(t, []float64{1, 2, 3, 4}, ds.Features)
	assert.Equal(t, 3, ds.Graph.NumEdges())
	assert.Empty(t, ds.Warnings)
	// The random split uses the labelled nodes only.
	all := append(append(append([]int{}, ds.Split.Train...), ds.Split.Val...), ds.Split.Test...)
	assert.ElementsMatch(t, []int{1, 2, 3}, all)

	// The same table with tabs but a .txt name: detected from the header.
	dir2 := writeFiles(t, map[string]string{"n.txt": tsv, "e.txt": "0 1\n"})
	c.Nodes, c.Edges = filepath.Join(dir2, "n.txt"), filepath.Join(dir2, "e.txt")
	ds2, err := LoadFiles(c)
	require.NoError(t, err)
	assert.Equal(t, ds.Labels, ds2.Labels)
}

func TestLoadFilesSplitFile(t *testing.T) {
	dir := writeFiles(t, map[string]string{"people.csv": userCSV, "links.txt": userEdges,
		"split.json": `{"train": [0, 1], "val": [3], "test": [4]}`})
	c := userConfig(dir)
	c.Drop, c.SplitColumn = append(c.Drop, "set"), ""
	c.Split = filepath.Join(dir, "split.json")
	ds, err := LoadFiles(c)
	require.NoError(t, err)
	assert.Equal(t, Split{Train: []int{0, 1}, Val: []int{3}, Test: []int{4}}, ds.Split)
}

// Every class of bad input is a *FileError naming file:line[:column], or a
// config error naming the field.
func TestLoadFilesErrors(t *testing.T) {
	cases := []struct {
		name  string
		files map[string]string
		edit  func(*FilesConfig)
		want  string
	}{
		{"missing node file", map[string]string{"links.txt": userEdges}, nil, "F/people.csv: open"},
		{"missing edge file", map[string]string{"people.csv": userCSV}, nil, "F/links.txt: missing edge file"},
		{"missing column", nil, func(c *FilesConfig) { c.SensColumn = "gender" }, `F/people.csv:1: missing column "gender"; columns present: name, age`},
		{"text feature", nil, func(c *FilesConfig) { c.Drop = nil }, `F/people.csv:2:10: column "job": "x" is not a number (every column but`},
		{"empty feature", map[string]string{"people.csv": strings.Replace(userCSV, "ann,20,", "ann,,", 1)}, nil, `F/people.csv:2:5: column "age": empty cell, want a number`},
		{"ragged", map[string]string{"people.csv": userCSV + "fay,1\n"}, nil, "F/people.csv:7: ragged row: 2 fields, want 7"},
		{"duplicate id", map[string]string{"people.csv": userCSV + "ann,1,1,x,no,east,\n"}, nil, `F/people.csv:7: column "name" (field 1): node id "ann" repeats line 2`},
		{"empty id", map[string]string{"people.csv": userCSV + ",1,1,x,no,east,\n"}, nil, `F/people.csv:7: column "name" (field 1): empty node id`},
		{"one group", map[string]string{"people.csv": "name,age,outcome,region\na,1,yes,x\nb,2,no,x\n"}, func(c *FilesConfig) { c.Drop, c.SplitColumn = nil, "" }, `F/people.csv: column "region": 1 distinct known value(s) x, want at least two groups`},
		{"one class", map[string]string{"people.csv": "name,age,outcome,region\na,1,yes,x\nb,2,,y\n"}, func(c *FilesConfig) { c.Drop, c.SplitColumn = nil, "" }, `F/people.csv: column "outcome": 1 distinct known value(s) yes, want at least two classes`},
		{"positive not a value", nil, func(c *FilesConfig) { c.PositiveLabel = "maybe" }, `F/people.csv:1:5: column "outcome": positive label "maybe" is not one of exactly two label values (found "no" (2 rows, first line 3), "yes" (2 rows, first line 2))`},
		{"unknown id", map[string]string{"links.txt": "ann bob\nann zed\n"}, nil, `F/links.txt:2:5: node id "zed" is not in the node table's id column`},
		{"bad weight", map[string]string{"links.txt": "ann bob x\n"}, nil, `F/links.txt:1:9: third field "x" is not a finite number`},
		{"four fields", map[string]string{"links.txt": "ann bob 1 2\n"}, nil, "F/links.txt:1: 4 fields, want 2 node references"},
		{"one field", map[string]string{"links.txt": "ann bob\nann\n"}, nil, "F/links.txt:2: 1 fields, want 2 node references"},
		{"no edges", map[string]string{"links.txt": "# nothing\n"}, nil, "F/links.txt: no edges"},
		{"row out of range", nil, func(c *FilesConfig) { c.IDColumn = ""; c.Drop = []string{"job", "name"} }, `F/links.txt:2:1: "ann" is not a row index, want an integer in [0, 5)`},
		{"split column, unlabelled test node", map[string]string{"people.csv": strings.Replace(userCSV, "cid,40,5,x,,east,", "cid,40,5,x,,east,train", 1)}, func(c *FilesConfig) { c.SplitColumn = "set" }, `F/people.csv:4: column "set" (field 7): node in train has an unknown label`},
		{"binary", map[string]string{"people.csv": "name\x00,a\n"}, nil, "F/people.csv:1: binary or not UTF-8 text"},
		{"empty table", map[string]string{"people.csv": ""}, nil, "F/people.csv:1: empty file"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			files := map[string]string{"people.csv": userCSV, "links.txt": userEdges}
			if tc.files != nil {
				files = map[string]string{}
				for k, v := range tc.files {
					files[k] = v
				}
				for k, v := range map[string]string{"people.csv": userCSV, "links.txt": userEdges} {
					if _, ok := tc.files[k]; !ok && !(tc.name == "missing node file" && k == "people.csv") && !(tc.name == "missing edge file" && k == "links.txt") {
						files[k] = v
					}
				}
			}
			dir := writeFiles(t, files)
			c := userConfig(dir)
			if tc.edit != nil {
				tc.edit(&c)
			}
			_, err := LoadFiles(c)
			if tc.want == "" {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.True(t, isFileError(err), "%v is not a *FileError", err)
			assert.Contains(t, strings.ReplaceAll(err.Error(), dir, "F"), tc.want)
		})
	}
	// A missing file wraps fs.ErrNotExist.
	dir := writeFiles(t, map[string]string{"links.txt": userEdges})
	_, err := LoadFiles(userConfig(dir))
	assert.True(t, errors.Is(err, fs.ErrNotExist))
}

func TestFilesConfigValidate(t *testing.T) {
	base := userConfig("d")
	cases := []struct {
		edit func(*FilesConfig)
		want string
	}{
		{func(c *FilesConfig) { c.Nodes = "" }, "FilesConfig.Nodes is empty"},
		{func(c *FilesConfig) { c.Edges = "" }, "FilesConfig.Edges is empty"},
		{func(c *FilesConfig) { c.LabelColumn = "" }, "FilesConfig.LabelColumn is empty"},
		{func(c *FilesConfig) { c.SensColumn = "outcome" }, `FilesConfig.LabelColumn and SensColumn are both "outcome"`},
		{func(c *FilesConfig) { c.Drop = []string{"region"} }, `FilesConfig.Drop holds SensColumn "region"`},
		{func(c *FilesConfig) { c.IDColumn = "outcome" }, `FilesConfig.LabelColumn and IDColumn are both "outcome"`},
		{func(c *FilesConfig) { c.Split = "s.json" }, "Split and SplitColumn are both set"},
		{func(c *FilesConfig) { c.Comma = 'x' }, "FilesConfig.Comma = 'x'"},
		{func(c *FilesConfig) { c.Options.SplitFractions = [3]float64{0.9, 0.9, 0} }, "SplitFractions"},
	}
	require.NoError(t, base.Validate())
	for _, tc := range cases {
		c := base
		tc.edit(&c)
		err := c.Validate()
		require.Error(t, err)
		assert.Contains(t, err.Error(), tc.want)
		_, err = LoadFiles(c)
		assert.Error(t, err, "LoadFiles must validate")
	}
}

// WriteFiles and LoadFiles round-trip a data set exactly.
func TestWriteFilesRoundTrip(t *testing.T) {
	sc := DefaultSyntheticConfig()
	sc.N = 300
	ds, err := Synthetic(sc)
	require.NoError(t, err)
	ds.Labels[7] = -1 // an unlabelled node
	ds.Split = Split{Train: []int{0, 1, 2, 3}, Val: []int{4, 5}, Test: []int{6, 8, 9}}
	dir := t.TempDir()
	c, err := WriteFiles(ds, filepath.Join(dir, "n.csv"), filepath.Join(dir, "e.csv"))
	require.NoError(t, err)
	got, err := LoadFiles(c)
	require.NoError(t, err)
	assert.Equal(t, ds.Features, got.Features)
	assert.Equal(t, ds.FeatureNames, got.FeatureNames)
	assert.Equal(t, ds.Labels, got.Labels)
	assert.Equal(t, ds.Sens, got.Sens)
	assert.Equal(t, ds.Graph.Edges(), got.Graph.Edges())
	assert.Equal(t, ds.Split, got.Split)
	assert.Equal(t, "n0", got.IDs[0])
	assert.Empty(t, got.Warnings)

	ds.FeatureNames[0] = "label"
	_, err = WriteFiles(ds, filepath.Join(dir, "n2.csv"), filepath.Join(dir, "e2.csv"))
	assert.ErrorContains(t, err, `a feature is named "label"`)
}

func TestSplitNames(t *testing.T) {
	s := Split{Train: []int{0, 3}, Val: []int{1, 2}, Test: []int{1, 2, 4}}
	assert.Equal(t, []string{"train", "val", "val", "train", "test", ""}, s.Names(6))
}
