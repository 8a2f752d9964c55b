package datasets

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A split column value other than train, val (valid, validation), test or
// a missing value is an error listing the accepted values and the values
// found, at the first unknown one. Before, "vla" left the node out of
// every list without a word.
func TestSplitColumnUnknownValue(t *testing.T) {
	csv := strings.Replace(userCSV, "dan,50,7,z,yes,north,val", "dan,50,7,z,yes,north,vla", 1)
	dir := writeFiles(t, map[string]string{"people.csv": csv, "links.txt": userEdges})
	_, msg := loadErr(t, userConfig(dir), dir)
	assert.Contains(t, msg, `F/people.csv:5:22: column "set": "vla" is not a split: want train, val (or valid, validation) or test, or a missing value (FilesConfig.Missing: "", "NA", "N/A", "NaN", "null", "None", "?") for a node in no list; the column holds "train" (2 rows, first line 2), "" (1 row, first line 4), "vla" (1 row, first line 5), "test" (1 row, first line 6)`)

	// Spellings in any case, and missing values, are accepted.
	csv = strings.NewReplacer("north,train", "north,TRAIN", "east,", "east,NA", "north,val", "north,Validation").Replace(userCSV)
	dir = writeFiles(t, map[string]string{"people.csv": csv, "links.txt": userEdges})
	ds, msg := loadErr(t, userConfig(dir), dir)
	require.Equal(t, "", msg)
	assert.Equal(t, Split{Train: []int{0, 1}, Val: []int{3}, Test: []int{4}}, ds.Split)
}
