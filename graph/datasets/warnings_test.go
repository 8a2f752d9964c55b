package datasets

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestLoadWarnings: what the loader accepts but reports. fgCSV has a
// label 2 and a sensitive value 3 (folded into 1); an edge file whose
// last line has no newline may have been cut.
func TestLoadWarnings(t *testing.T) {
	dir := writeFiles(t, map[string]string{"toy.csv": fgCSV, "toy_relationship.txt": strings.TrimSuffix(fgRel, "\n")})
	ds, err := LoadFairGNN(dir, fgConfig())
	require.NoError(t, err)
	require.Len(t, ds.Warnings, 3, "warnings: %q", ds.Warnings)
	assert.Contains(t, ds.Warnings[0], `column "LAB": 1 rows with values 2 (1 rows) mapped to label 1`)
	assert.Contains(t, ds.Warnings[1], `column "S": 1 rows with values 3 (1 rows) mapped to group 1`)
	assert.Contains(t, ds.Warnings[2], "toy_relationship.txt: the last line has no newline")
	// The same files, ended by a newline: no warning about the edges.
	dir = writeFiles(t, map[string]string{"toy.csv": fgCSV, "toy_relationship.txt": fgRel})
	ds, err = LoadFairGNN(dir, fgConfig())
	require.NoError(t, err)
	assert.Len(t, ds.Warnings, 2)
}

// TestLoadByteOrderMark: a UTF-8 byte-order mark is accepted at the start
// of the table, the edge file and the split file alike.
func TestLoadByteOrderMark(t *testing.T) {
	const bom = "\ufeff"
	split := `{"train": [0], "val": [3], "test": [1]}`
	plain := writeFiles(t, map[string]string{"toy.csv": fgCSV, "toy_relationship.txt": fgRel, "split.json": split})
	marked := writeFiles(t, map[string]string{"toy.csv": bom + fgCSV, "toy_relationship.txt": bom + fgRel, "split.json": bom + split})
	want, err := LoadFairGNN(plain, fgConfig())
	require.NoError(t, err)
	got, err := LoadFairGNN(marked, fgConfig())
	require.NoError(t, err)
	assert.Equal(t, want.Features, got.Features)
	assert.Equal(t, want.Graph.Edges(), got.Graph.Edges())
	assert.Equal(t, want.Split, got.Split)
}
