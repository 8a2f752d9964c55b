package datasets

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fairmp/fairmp/graph/features"
)

// Data that is wrong is an error before training, naming the file and,
// where there is one, the position. Each case loaded without a word (or
// failed only after training, with an internal message) before these
// checks.
func TestLoadFilesWrongData(t *testing.T) {
	long := strings.Repeat("x", 9000) // past the 8 KiB the text sniffing reads
	cases := []struct {
		name  string
		files map[string]string
		edit  func(*FilesConfig)
		want  string
	}{
		{"self-loops only", map[string]string{"links.txt": "ann ann\nbob bob\n"}, nil,
			"F/links.txt: every one of its 2 edges joins a node to itself"},
		{"scaling overflow", map[string]string{"people.csv": strings.Replace(strings.Replace(userCSV, "ann,20,", "ann,1e308,", 1), "bob,30,", "bob,-1e308,", 1)}, nil,
			`F/people.csv:2:2: column "age": its values span -1e+308 (line 3) to 1e+308: the range overflows`},
		{"a group of one node, without a minimum", map[string]string{"people.csv": strings.NewReplacer(",north,", ",n1,", ",south,", ",s1,", ",east,", ",e1,").Replace(userCSV) + ""}, func(c *FilesConfig) {},
			""}, // n1 (2: ann, dan), s1 (2), e1 (1)
		{"a group of one node, with a minimum", map[string]string{"people.csv": strings.NewReplacer(",north,", ",n1,", ",south,", ",s1,", ",east,", ",e1,").Replace(userCSV) + ""}, func(c *FilesConfig) { c.Options.MinGroupSize = 2 },
			`F/people.csv: 1 sensitive group(s) with fewer than 2 labelled nodes (Options.MinGroupSize): "e1" (0); merge them (Options.MergeSmallGroups) or lower the minimum`},
		{"ids as the sensitive column", nil, func(c *FilesConfig) { c.SensColumn, c.IDColumn = "name", ""; c.Drop = []string{"job", "region"} },
			`F/people.csv: column "name": 5 of its 5 nodes with a known value are alone in their group (5 groups): a sensitive attribute puts many nodes in each group; is this the right column?`},
		{"ids as the sensitive column, with a minimum", nil, func(c *FilesConfig) {
			c.SensColumn, c.IDColumn = "name", ""
			c.Drop = []string{"job", "region"}
			c.Options.MinGroupSize = 2
		},
			`(4 of the 4 labelled nodes are in such groups: a sensitive attribute puts many nodes in each group; is this the right column?)`},
		{"invalid UTF-8 late in a text field", map[string]string{"people.csv": strings.Replace(userCSV, "ann,20,1,x,yes,north", "ann,20,1,x,yes,"+long+"caf\xe9", 1) + "fay,70,2,x,no," + long + "caf\xe8,\n"}, nil,
			`F/people.csv:2:16: field 6 is not valid UTF-8 text`},
		{"Go number syntax: underscore", map[string]string{"people.csv": strings.Replace(userCSV, "ann,20,", "ann,1_000,", 1)}, nil,
			`F/people.csv:2:5: column "age": "1_000" is not a plain decimal number (Go's syntax`},
		{"Go number syntax: hex float", map[string]string{"people.csv": strings.Replace(userCSV, "bob,30,", "bob,0x1p3,", 1)}, nil,
			`F/people.csv:3:5: column "age": "0x1p3" is not a plain decimal number`},
		{"unclosed quote", map[string]string{"people.csv": strings.Replace(userCSV, "bob,30,3,y", `bob,30,3,"y`, 1)}, nil,
			`F/people.csv:3:10: a quoted field that starts here is never closed`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			files := map[string]string{"people.csv": userCSV, "links.txt": userEdges}
			for k, v := range tc.files {
				files[k] = v
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
			var small *SmallGroupError
			assert.True(t, isFileError(err) || errors.As(err, &small), "%v is not a *FileError or a *SmallGroupError", err)
			assert.Contains(t, strings.ReplaceAll(err.Error(), dir, "F"), tc.want)
		})
	}
}

// parseNumber reads plain decimal numbers only.
func TestParseNumber(t *testing.T) {
	for _, s := range []string{"0", "-1", "+2.5", ".5", "5.", "1e3", "2.5E-4", "-0.0"} {
		_, err := parseNumber(s)
		assert.NoError(t, err, s)
	}
	v, err := parseNumber("1e400")
	require.NoError(t, err)
	assert.True(t, math.IsInf(v, 1), "out of range is ±Inf, for the caller's finiteness check")
	for _, s := range []string{"", "1_000", "0x1p3", "0x10", "Inf", "NaN", "inf", "1e", "e3", ".", "-", "1.2.3", " 1", "1 ", "0b101", "1e+"} {
		_, err := parseNumber(s)
		assert.Error(t, err, "%q", s)
	}
}

// A saved schema puts a table's columns in the model's order, by name,
// and scales them with the model's ranges; missing or extra columns are
// errors naming them.
func TestLoadFilesSchema(t *testing.T) {
	dir := writeFiles(t, map[string]string{"people.csv": userCSV, "links.txt": userEdges})
	c := userConfig(dir)
	ds, err := LoadFiles(c)
	require.NoError(t, err)
	s := ds.Schema()
	require.NotNil(t, s.Scaling)
	assert.Equal(t, features.Schema{Names: []string{"age", "score"}, Scaling: &features.MinMax{Min: []float64{20, 1}, Max: []float64{60, 9}}}, s)

	// The same columns swapped, and new values: reordered, scaled with the
	// saved ranges (age 80 is beyond the fitted 60: 2).
	swapped := "name,score,age,job,outcome,region,set\nann,1,80,x,yes,north,train\nbob,9,20,y,no,south,train\ncid,5,40,x,,east,\ndan,5,40,z,yes,north,val\neve,1,60,y,no,south,test\n"
	dir2 := writeFiles(t, map[string]string{"people.csv": swapped, "links.txt": userEdges})
	c2 := userConfig(dir2)
	c2.Schema = &s
	got, err := LoadFiles(c2)
	require.NoError(t, err)
	assert.Equal(t, []string{"age", "score"}, got.FeatureNames)
	assert.Equal(t, []float64{2, -1, -1, 1, 0, 0, 0, 0, 1, -1}, got.Features)
	assert.True(t, got.Schema().Equal(s), "the loaded data carries the model's schema")

	// A missing and an extra column.
	renamed := strings.Replace(swapped, "name,score,age", "name,points,age", 1)
	dir3 := writeFiles(t, map[string]string{"people.csv": renamed, "links.txt": userEdges})
	c3 := userConfig(dir3)
	c3.Schema = &s
	_, err = LoadFiles(c3)
	assert.ErrorContains(t, err, `the model's feature columns "score" are missing, and the columns "points" are not the model's`)
	c3.Drop = append(c3.Drop, "points")
	_, err = LoadFiles(c3)
	assert.ErrorContains(t, err, `the model's feature columns "score" are missing from the table`)

	bad := s
	bad.Names = []string{"age", "age"}
	c.Schema = &bad
	_, err = LoadFiles(c)
	assert.ErrorContains(t, err, `repeats the name "age"`)
}
