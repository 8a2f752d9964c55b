package cli

import (
	"flag"
	"io"
	"strings"
	"testing"

	"github.com/fairmp/fairmp/graph/datasets"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// nodeTableFlags are the flags NodeTable declares.
var nodeTableFlags = []string{"nodes", "edges", "id", "label", "sens", "positive", "split-column", "fold-case", "classes", "drop", "missing"}

func parseNodeTable(t *testing.T, nt *NodeTable, args ...string) *flag.FlagSet {
	t.Helper()
	fs := flag.NewFlagSet("cmd", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	nt.Register(fs, datasets.DefaultFilesConfig())
	require.NoError(t, fs.Parse(args))
	return fs
}

func TestNodeTableRegister(t *testing.T) {
	var nt NodeTable
	fs := parseNodeTable(t, &nt)
	var names []string
	fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
	assert.ElementsMatch(t, nodeTableFlags, names, "the node-table flags, and only them")
	def := datasets.DefaultFilesConfig()
	assert.Equal(t, "2", fs.Lookup("classes").DefValue, "def's Classes")
	assert.Equal(t, strings.Join(def.Missing[1:], ","), fs.Lookup("missing").DefValue, "def's Missing but the empty cell")
	assert.NotContains(t, fs.Lookup("sens").Usage, "several", "one -sens column without SeveralSens")
	assert.NotContains(t, fs.Lookup("label").Usage, "required")

	req := NodeTable{Required: true, SeveralSens: true}
	fs = parseNodeTable(t, &req)
	assert.Equal(t, "label column (required)", fs.Lookup("label").Usage)
	assert.Equal(t, "node table (CSV or TSV with a header line; required)", fs.Lookup("nodes").Usage, "inside the parenthesis")
	assert.Contains(t, fs.Lookup("sens").Usage, "several comma-separated columns")
	assert.Contains(t, fs.Lookup("sens").Usage, "required")
	assert.NotContains(t, fs.Lookup("id").Usage, "required", "only -nodes, -edges, -label, -sens")
}

func TestNodeTableFiles(t *testing.T) {
	nt := NodeTable{SeveralSens: true}
	parseNodeTable(t, &nt, "-nodes", "n.csv", "-edges", "e.csv", "-id", "node", "-label", "y", "-sens", "a, b,c",
		"-positive", "yes", "-split-column", "split", "-fold-case", "-classes", "0", "-drop", "x, z,", "-missing", "NA,-1")
	def := datasets.DefaultFilesConfig()
	def.Split, def.Comma, def.Options.MinGroupSize = "split.json", ';', 7
	c, err := nt.Files(def)
	require.NoError(t, err)
	want := def
	want.Nodes, want.Edges, want.IDColumn, want.LabelColumn, want.SensColumn = "n.csv", "e.csv", "node", "y", "a"
	want.PositiveLabel, want.SplitColumn, want.FoldCase, want.Classes = "yes", "split", true, 0
	want.Drop, want.Missing = []string{"x", "z"}, []string{"", "NA", "-1"}
	want.Options.IntersectSens = []string{"b", "c"}
	assert.Equal(t, want, c, "the flags put in, everything else def's")
	assert.Nil(t, def.Options.IntersectSens, "def is left alone")

	// Defaults: def's Missing, no Drop; one -sens column, no intersections.
	nt = NodeTable{SeveralSens: true}
	parseNodeTable(t, &nt, "-sens", "g")
	c, err = nt.Files(datasets.DefaultFilesConfig())
	require.NoError(t, err)
	assert.Equal(t, datasets.DefaultFilesConfig().Missing, c.Missing)
	assert.Nil(t, c.Drop)
	assert.Equal(t, "g", c.SensColumn)
	assert.Empty(t, c.Options.IntersectSens)

	nt = NodeTable{SeveralSens: true}
	parseNodeTable(t, &nt, "-sens", " , ")
	_, err = nt.Files(datasets.DefaultFilesConfig())
	assert.EqualError(t, err, `-sens " , " names no column`)

	nt = NodeTable{}
	parseNodeTable(t, &nt, "-sens", "a,b")
	_, err = nt.Files(datasets.DefaultFilesConfig())
	assert.EqualError(t, err, `-sens "a,b": cmd takes one sensitive column`, "named by the flag set")
}

func TestFlagWords(t *testing.T) {
	w := FlagWords()
	// Every field a node-table flag sets is told as that flag.
	for field, flag := range map[string]string{"Nodes": "nodes", "Edges": "edges", "IDColumn": "id", "LabelColumn": "label",
		"SensColumn": "sens", "PositiveLabel": "positive", "SplitColumn": "split-column", "FoldCase": "fold-case",
		"Classes": "classes", "Drop": "drop", "Missing": "missing"} {
		assert.Equal(t, "-"+flag+" is bad", w.Replace("FilesConfig."+field+" is bad"), field)
		assert.Contains(t, nodeTableFlags, flag)
	}
	assert.Equal(t, "the input flags are bad", w.Replace("FilesConfig are bad"))

	// A loader error, told in flags.
	c := datasets.DefaultFilesConfig()
	c.Nodes, c.Edges, c.LabelColumn, c.SensColumn = "n.csv", "e.csv", "y", "y"
	err := c.Validate()
	require.Error(t, err)
	assert.Contains(t, w.Replace(err.Error()), `-label and -sens are both "y"`)

	// A command's pairs: a shorter name never eats a longer one, in
	// either order, and a command's pair wins over the shared one.
	for _, extra := range [][]string{
		{"FilesConfig.Split", "-split", "FilesConfig.NodesFormat", "-nodes-format"},
		{"FilesConfig.NodesFormat", "-nodes-format", "FilesConfig.Split", "-split"},
	} {
		w := FlagWords(extra...)
		assert.Equal(t, "-split-column, -split, -nodes-format, -nodes, the input flags",
			w.Replace("FilesConfig.SplitColumn, FilesConfig.Split, FilesConfig.NodesFormat, FilesConfig.Nodes, FilesConfig"))
	}
	assert.Equal(t, "the node table", FlagWords("FilesConfig.Nodes", "the node table").Replace("FilesConfig.Nodes"))
	assert.Panics(t, func() { FlagWords("odd") })
}
