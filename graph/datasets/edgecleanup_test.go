package datasets

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Self-loops dropped and repeated edges merged are counted in a warning,
// which says the list is read as undirected. Before, 300 self-loops and
// one edge loaded as a one-edge graph without a word.
func TestEdgeCleanupWarning(t *testing.T) {
	edges := "ann bob\nbob ann\nann bob\nann ann\ncid cid\nbob cid\ncid dan\neve ann\ndan cid\n"
	dir := writeFiles(t, map[string]string{"people.csv": userCSV, "links.txt": edges})
	ds, msg := loadErr(t, userConfig(dir), dir)
	require.Equal(t, "", msg)
	assert.Equal(t, [][2]int{{0, 1}, {0, 4}, {1, 2}, {2, 3}}, ds.Graph.Edges())
	require.Len(t, ds.Warnings, 1, "%q", ds.Warnings)
	assert.Equal(t, "F/links.txt: 9 edges make a graph of 4: 2 self-loops (a node joined to itself) dropped; 1 repeated edge (the same pair again) merged; 2 edges listed in both directions merged, for the list is read as undirected ((a, b) and (b, a) are one edge)", strings.ReplaceAll(ds.Warnings[0], dir, "F"))

	// Parquet: the same counts.
	writeParquet(t, filepath.Join(dir, "links.parquet"), []pqEdge{{"ann", "ann", 1}, {"ann", "bob", 1}, {"ann", "bob", 1}, {"bob", "cid", 1}, {"cid", "dan", 1}, {"eve", "ann", 1}})
	c := userConfig(dir)
	c.Edges = filepath.Join(dir, "links.parquet")
	ds, msg = loadErr(t, c, dir)
	require.Equal(t, "", msg)
	assert.Contains(t, strings.ReplaceAll(strings.Join(ds.Warnings, "\n"), dir, "F"), "F/links.parquet: 6 edges make a graph of 4: 1 self-loop (a node joined to itself) dropped; 1 repeated edge (the same pair again) merged")

	// Nothing dropped: no warning.
	dir = writeFiles(t, map[string]string{"people.csv": userCSV, "links.txt": "ann bob\nbob cid\ncid dan\neve ann\n"})
	ds, msg = loadErr(t, userConfig(dir), dir)
	require.Equal(t, "", msg)
	assert.Empty(t, ds.Warnings)

	// No edge left: an error that says so.
	dir = writeFiles(t, map[string]string{"people.csv": userCSV, "links.txt": strings.Repeat("ann ann\nbob bob\n", 150)})
	_, msg = loadErr(t, userConfig(dir), dir)
	assert.Contains(t, msg, "F/links.txt: every one of its 300 edges joins a node to itself: without its self-loops the graph has no edge")
}
