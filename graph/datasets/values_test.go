package datasets

import (
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// labelFiles writes a node table of the given labels and groups (one row
// each, a feature f) with a path graph, and returns the config.
func labelFiles(t *testing.T, labels, groups []string) (FilesConfig, string) {
	t.Helper()
	var b strings.Builder
	b.WriteString("f,y,s\n")
	var e strings.Builder
	for i := range labels {
		b.WriteString(strings.Join([]string{"1", labels[i], groups[i]}, ",") + "\n")
		if i > 0 {
			e.WriteString(strings.Join([]string{strconv.Itoa(i - 1), strconv.Itoa(i)}, " ") + "\n")
		}
	}
	dir := writeFiles(t, map[string]string{"n.csv": b.String(), "e.txt": e.String()})
	c := DefaultFilesConfig()
	c.Nodes, c.Edges, c.LabelColumn, c.SensColumn = filepath.Join(dir, "n.csv"), filepath.Join(dir, "e.txt"), "y", "s"
	return c, dir
}

func rep(v []string, n int) []string {
	var out []string
	for i := 0; i < n; i++ {
		out = append(out, v...)
	}
	return out
}

func TestLabelValues(t *testing.T) {
	groups := rep([]string{"a", "b"}, 4)
	load := func(t *testing.T, labels []string, edit func(*FilesConfig)) (*Dataset, error) {
		c, dir := labelFiles(t, labels, groups)
		if edit != nil {
			edit(&c)
		}
		ds, err := LoadFiles(c)
		if err != nil {
			return nil, &FileError{Msg: strings.ReplaceAll(err.Error(), dir, "F")}
		}
		return ds, nil
	}
	// The recognised pairs: 1, true, yes are positive, in any case.
	for _, pair := range [][2]string{{"0", "1"}, {"1.0", "0"}, {"False", "True"}, {"yes", "no"}, {"NO", "YES"}} {
		ds, err := load(t, rep([]string{pair[0], pair[1]}, 4), nil)
		require.NoError(t, err, pair)
		pos := pair[1]
		if pair[0] == "1.0" || pair[0] == "yes" {
			pos = pair[0]
		}
		assert.Equal(t, normKey(pos), ds.ClassNames[1], pair)
	}
	// Any other pair is never guessed.
	_, err := load(t, rep([]string{"approved", "denied"}, 4), nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `F/n.csv:2:3: column "y": its two values "approved" (4 rows, first line 2), "denied" (4 rows, first line 3): which is the positive class`)
	assert.Contains(t, err.Error(), "FilesConfig.PositiveLabel")
	ds, err := load(t, rep([]string{"approved", "denied"}, 4), func(c *FilesConfig) { c.PositiveLabel = "approved" })
	require.NoError(t, err)
	assert.Equal(t, []string{"denied", "approved"}, ds.ClassNames)
	assert.Equal(t, 1, ds.Labels[0])

	// Spellings of one value: an error naming them and their rows, unless
	// folded (the most frequent spelling names the value).
	variants := []string{"Yes", "no", "yes ", "no", "YES", "no", "Yes", "no"}
	_, err = load(t, variants, nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `F/n.csv:4:3: column "y": the values "Yes" (2 rows, first line 2), "YES" (1 row, first line 6), "yes " (1 row, first line 4) differ only in case or spaces`)
	assert.Contains(t, err.Error(), "FilesConfig.FoldCase")
	ds, err = load(t, variants, func(c *FilesConfig) { c.FoldCase = true })
	require.NoError(t, err)
	assert.Equal(t, []string{"no", "Yes"}, ds.ClassNames)
	assert.Equal(t, []int{1, 0, 1, 0, 1, 0, 1, 0}, ds.Labels)
	require.Len(t, ds.Warnings, 1)
	assert.Contains(t, ds.Warnings[0], `are taken as one value, "Yes" (FilesConfig.FoldCase)`)
	// Numbers in any spelling are one value, without a word.
	ds, err = load(t, rep([]string{"1", "0.0", "1.0", "0"}, 2), nil)
	require.NoError(t, err)
	assert.Equal(t, []string{"0", "1"}, ds.ClassNames)
	assert.Empty(t, ds.Warnings)

	// Three values where two classes are wanted: an error listing them.
	_, err = load(t, rep([]string{"yes", "no", "yes", "maybe"}, 2), nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `F/n.csv:5:3: column "y": 3 distinct known values "maybe" (2 rows, first line 5), "no" (2 rows, first line 3), "yes" (4 rows, first line 2), want 2 classes (FilesConfig.Classes)`)
	ds, err = load(t, rep([]string{"yes", "no", "yes", "maybe"}, 2), func(c *FilesConfig) { c.Classes = 3 })
	require.NoError(t, err)
	assert.Equal(t, []string{"maybe", "no", "yes"}, ds.ClassNames)
	ds, err = load(t, rep([]string{"yes", "no", "yes", "maybe"}, 2), func(c *FilesConfig) { c.Missing = append(c.Missing, "maybe") })
	require.NoError(t, err)
	assert.Equal(t, -1, ds.Labels[3])
}

func TestSensVariants(t *testing.T) {
	labels := rep([]string{"0", "1"}, 4)
	c, dir := labelFiles(t, labels, []string{"North", "south", "north", "South", "North", "south", "north", "south"})
	_, err := LoadFiles(c)
	require.Error(t, err)
	assert.Contains(t, strings.ReplaceAll(err.Error(), dir, "F"), `F/n.csv:4:5: column "s": the values "North" (2 rows, first line 2), "north" (2 rows, first line 4) differ only in case or spaces`)
	c.FoldCase = true
	ds, err := LoadFiles(c)
	require.NoError(t, err)
	assert.Equal(t, []string{"North", "south"}, ds.GroupNames, "ties: the first spelling in sorted order")
	assert.Len(t, ds.Warnings, 2)
}
