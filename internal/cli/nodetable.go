package cli

import (
	"cmp"
	"flag"
	"fmt"
	"slices"
	"strings"

	"github.com/fairmp/fairmp/graph/datasets"
)

// NodeTable is the flags that describe a graph of your own, shared by
// the commands that read one (debias, serve): the node table and edge
// list (-nodes, -edges), its columns (-id, -label, -sens, -split-column,
// -drop) and how their values are read (-positive, -fold-case, -classes,
// -missing). Register declares them on a flag.FlagSet, whose Parse sets
// the fields below; Files then puts them into a datasets.FilesConfig.
// A command adds its own flags beside them (debias's -split, -comma,
// -categorical, ...) and fills the rest of the FilesConfig itself.
//
//	t := cli.NodeTable{Required: true}
//	t.Register(fs, datasets.DefaultFilesConfig())
//	... fs.Parse(args) ...
//	files, err := t.Files(datasets.DefaultFilesConfig())
type NodeTable struct {
	// SeveralSens lets -sens name several comma-separated columns, whose
	// intersections are the groups (Options.IntersectSens); without it
	// -sens names one column and a comma in it is an error.
	SeveralSens bool
	// Required marks -nodes, -edges, -label and -sens as required in
	// their help texts. The command still checks that they are given:
	// only it knows what else may stand in for them (debias's -dataset).
	Required bool

	// The flags' values, as parsed.
	Nodes, Edges string // -nodes, -edges: the node table's and the edge list's paths
	ID, Label    string // -id, -label
	Sens         string // -sens: one column, or several comma-separated with SeveralSens
	Positive     string // -positive
	SplitColumn  string // -split-column
	FoldCase     bool   // -fold-case
	Classes      int    // -classes
	Drop         string // -drop: comma-separated columns
	Missing      string // -missing: comma-separated values, besides the empty cell

	command string // the flag set's name, for errors
}

// Register declares the node-table flags on fs, each with its help
// text; def gives the defaults of -classes and -missing (whose first
// value, the empty cell, always means unknown and is not shown). After
// fs.Parse, the fields hold the flags' values.
func (t *NodeTable) Register(fs *flag.FlagSet, def datasets.FilesConfig) {
	t.command = fs.Name()
	req := func(help string) string {
		if !t.Required {
			return help
		}
		if s, ok := strings.CutSuffix(help, ")"); ok {
			return s + "; required)"
		}
		return help + " (required)"
	}
	sens := "sensitive attribute column (any number of groups)"
	if t.SeveralSens {
		sens += "; several comma-separated columns (-sens a,b) make their intersections the groups"
	}
	missing := def.Missing
	if len(missing) > 0 && missing[0] == "" {
		missing = missing[1:]
	}
	fs.StringVar(&t.Nodes, "nodes", "", req("node table (CSV or TSV with a header line)"))
	fs.StringVar(&t.Edges, "edges", "", req("edge list (two node ids per line, spaces, tabs or a comma)"))
	fs.StringVar(&t.ID, "id", "", "node id column (default: none, nodes are rows and edges name 0-based rows)")
	fs.StringVar(&t.Label, "label", "", req("label column"))
	fs.StringVar(&t.Sens, "sens", "", req(sens))
	fs.StringVar(&t.Positive, "positive", "", "label value that is the positive class (class 1, whose selection rate ΔDP compares); needed unless the two values are 0/1, false/true or no/yes")
	fs.StringVar(&t.SplitColumn, "split-column", "", "column holding train, val or test per node (optional)")
	fs.BoolVar(&t.FoldCase, "fold-case", false, "label and sensitive values that differ only in case or spaces (Yes, yes , YES) are one value, named by its most frequent spelling (default: an error naming them)")
	fs.IntVar(&t.Classes, "classes", def.Classes, "number of label values wanted (0: any number from two); another number is an error listing the values")
	fs.StringVar(&t.Drop, "drop", "", "comma-separated columns of the node table to leave out of the features")
	fs.StringVar(&t.Missing, "missing", strings.Join(missing, ","), "comma-separated label/sensitive values meaning unknown, and split-column values meaning in no split (the empty cell always does)")
}

// Files returns def with the node-table flags put in: the paths, the
// columns, Drop and Missing (the empty cell first, then -missing's
// values), PositiveLabel, FoldCase and Classes. With SeveralSens, the
// first -sens column is SensColumn and the others are
// Options.IntersectSens. Everything else (Split, Comma, Categorical,
// Options but IntersectSens, ...) is def's. Its error names -sens: one
// that names no column, or several without SeveralSens. It does not
// validate the result: call its Validate and tell the error with
// FlagWords.
func (t *NodeTable) Files(def datasets.FilesConfig) (datasets.FilesConfig, error) {
	c := def
	c.Nodes, c.Edges, c.SplitColumn = t.Nodes, t.Edges, t.SplitColumn
	c.IDColumn, c.LabelColumn, c.SensColumn, c.PositiveLabel = t.ID, t.Label, t.Sens, t.Positive
	c.FoldCase, c.Classes = t.FoldCase, t.Classes
	c.Drop = SplitList(t.Drop)
	c.Missing = append([]string{""}, SplitList(t.Missing)...)
	if !t.SeveralSens {
		if strings.Contains(t.Sens, ",") {
			return datasets.FilesConfig{}, fmt.Errorf("-sens %q: %s takes one sensitive column", t.Sens, t.name())
		}
		return c, nil
	}
	sens := SplitList(t.Sens)
	if len(sens) == 0 {
		return datasets.FilesConfig{}, fmt.Errorf("-sens %q names no column", t.Sens)
	}
	c.SensColumn = sens[0]
	c.Options.IntersectSens = sens[1:]
	return c, nil
}

// name is the command's name for errors.
func (t *NodeTable) name() string {
	if t.command == "" {
		return "the command"
	}
	return t.command
}

// nodeTableWords are the pairs of FlagWords for the node-table flags:
// the loader's names of the FilesConfig fields they set, alone or in the
// phrases its messages use, and the flag that sets each.
var nodeTableWords = []string{
	"FilesConfig.Nodes", "-nodes",
	"FilesConfig.Edges", "-edges",
	"FilesConfig.IDColumn", "-id",
	"FilesConfig.LabelColumn", "-label",
	"FilesConfig.SensColumn", "-sens",
	"FilesConfig.SplitColumn", "-split-column",
	"FilesConfig.Drop", "-drop",
	"FilesConfig.PositiveLabel", "-positive",
	"FilesConfig.FoldCase", "-fold-case",
	"FilesConfig.Classes", "-classes",
	"FilesConfig.Missing", "-missing",
	"FilesConfig", "the input flags",
	"and LabelColumn", "and -label",
	"and SensColumn", "and -sens",
	"and SplitColumn", "and -split-column",
	"(IDColumn)", "(-id)",
	"unknown (Missing)", "unknown (-missing)",
	"list text columns in Drop", "leave text columns out with -drop",
	"leave them out (Drop)", "leave them out with -drop",
	"out of the features (Drop)", "out of the features (-drop)",
}

// FlagWords returns a replacer that tells the library's messages in a
// command's words: the FilesConfig fields the NodeTable flags set become
// those flags ("FilesConfig.SensColumn" → "-sens", a bare "FilesConfig"
// → "the input flags"), and extra adds the command's own old, new pairs
// (its other flags), winning over a shared pair for the same old text.
//
// Where one old text is the start of another ("FilesConfig.Split" of
// "FilesConfig.SplitColumn", "FilesConfig" of every field), the longer
// is tried first, whatever the order given: a pair never eats the start
// of a longer name. Like strings.NewReplacer, it panics on an odd number
// of extra strings, a mistake in the command's code.
func FlagWords(extra ...string) *strings.Replacer {
	if len(extra)%2 == 1 {
		panic("cli.FlagWords: odd number of extra strings, want old, new pairs")
	}
	var pairs [][2]string
	for _, words := range [][]string{extra, nodeTableWords} {
		for k := 0; k < len(words); k += 2 {
			pairs = append(pairs, [2]string{words[k], words[k+1]})
		}
	}
	// Stable: for one old text, the command's pair (given first) wins.
	slices.SortStableFunc(pairs, func(a, b [2]string) int { return cmp.Compare(len(b[0]), len(a[0])) })
	var flat []string
	for _, p := range pairs {
		flat = append(flat, p[0], p[1])
	}
	return strings.NewReplacer(flat...)
}
