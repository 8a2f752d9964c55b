package datasets

import (
	"bufio"
	"cmp"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/fairmp/fairmp/graph"
	"github.com/fairmp/fairmp/graph/features"
)

// FilesConfig describes a data set of your own in the documented file
// format (see "Your own files" in the package doc): a node table, an edge
// list and, optionally, a split.
type FilesConfig struct {
	// Name is the Dataset's name. Default: the node table's base name
	// without its extension.
	Name string
	// Nodes is the path of the node table: CSV, or TSV when the file name
	// ends in .tsv or .tab or when Comma is '\t'. Required.
	Nodes string
	// Edges is the path of the edge list. Required.
	Edges string
	// NodesFormat and EdgesFormat are the files' formats: "csv" (text:
	// CSV or TSV for the table, lines of fields for the edges) or
	// "parquet". Empty: "parquet" for names ending in .parquet (any
	// case), else "csv".
	NodesFormat, EdgesFormat string
	// Split, if set, is the path of a split file in the format of
	// split.json ({"train": [...], "val": [...], "test": [...]}, 0-based
	// rows of labelled nodes).
	Split string
	// SplitColumn, if set, names a column of the node table holding
	// train, val (or valid, validation) or test per node, in any case; a
	// Missing value (the empty cell, NA, ...) leaves the node in no list,
	// and any other value is an error listing the values found. Split and SplitColumn exclude each other; with
	// neither, the split is drawn with Options.SplitFractions and
	// Options.SplitSeed, within each group and label unless
	// Options.StratifySplit is false (StratifiedSplit, RandomSplit).
	SplitColumn string
	// IDColumn names the node id column; its values are any text, unique,
	// and the edge list names nodes by them. Empty: nodes are the table's
	// rows in order and the edge list names them by 0-based row index.
	IDColumn string
	// LabelColumn and SensColumn name the label and the sensitive column
	// (required). Their values are any text or numbers; see Missing and
	// PositiveLabel for how they become class and group ids.
	LabelColumn, SensColumn string
	// PositiveLabel, if set, is the label value that becomes class 1 of a
	// two-class task (the class whose selection rate ΔDP compares); the
	// other value becomes class 0. Empty: 1, true or yes when the two
	// values are 0/1, false/true or no/yes (any case); any other pair is
	// an error listing the values, for the positive class is never
	// guessed.
	PositiveLabel string
	// Classes is the number of label values wanted: another number of
	// distinct known values is an error listing them and their rows (a
	// third spelling, a stray value). 0 accepts any number from two.
	// Default 2.
	Classes int
	// FoldCase makes values of the label and sensitive columns that
	// differ only in case or spaces ("Yes", "yes ", "YES") one value,
	// named by its most frequent spelling, with a warning. Default false:
	// such values are an error naming them and their rows.
	FoldCase bool
	// Missing lists the cell values that mean "unknown" in the label and
	// sensitive columns (compared after trimming, case-insensitively;
	// numbers in any spelling: "-1" matches "-1.0"). Default: the empty
	// cell, NA, N/A, NaN, null, None and ?.
	Missing []string
	// Drop lists columns left out of the features.
	Drop []string
	// Categorical names columns of categories (text or numbers) to one-hot
	// encode: each distinct known value (a level) becomes a feature column
	// named "column=level", 1 for its rows and 0 otherwise, levels in
	// sorted order (numeric order when all are numbers); a Missing cell
	// is 0 in every level's column. Default none: every feature column
	// must hold numbers, and a text cell is an error naming it.
	Categorical []string
	// MaxLevels caps the levels of a Categorical column: more is an error
	// naming the column and its level count (an id or free-text column
	// would make a column per row). Default 50.
	MaxLevels int
	// Comma is the node table's field delimiter. 0 detects it: a tab for
	// .tsv and .tab files or when the header line holds a tab and no
	// comma, else a comma.
	Comma rune
	// MinMaxScale maps every feature column to [−1, 1] by its minimum and
	// maximum over all nodes (a constant column becomes 0). Default true.
	// A column whose range overflows float64 (values of ±1e308) is an
	// error.
	MinMaxScale bool
	// FeatureLimit is the largest magnitude a feature value may have as
	// the model sees it: as written without MinMaxScale, after the
	// schema's scaling with Schema (min-max scaled values are in [−1, 1]).
	// A larger value is an error naming its place, for the model's
	// arithmetic squares its inputs (losses, Adam's moments, norms) and
	// would overflow to Inf or NaN. 0 means FeatureLimit64; set
	// FeatureLimit32 for a model computing in float32.
	FeatureLimit float64
	// Schema, if set, is the schema of a model trained on other data (a
	// model file's, fmp/modelio): the feature columns must be its
	// names, in any order (they are put in the schema's order; a missing
	// or extra column is an error naming it: leave extra columns out with
	// Drop), and they are scaled with the schema's scaling instead of one
	// fitted on this data (MinMaxScale is then not used).
	Schema *features.Schema
	// Options: the sensitive column among the features (as its group id),
	// the random split's fractions and seed, intersections and the
	// smallest group (Options.MinGroupSize). Whatever the minimum, a
	// single sensitive column that leaves more than half of its nodes
	// alone in their group is refused as not a sensitive attribute (a
	// column of ids, say). IgnoreSplitFile and FoldSens are not used.
	Options Options
}

// The feature limits (FilesConfig.FeatureLimit) for models computing in
// float64 and in float32: the square roots of the largest finite values,
// about 1.34e154 and 1.84e19, so that a value's square is finite.
var (
	FeatureLimit64 = math.Sqrt(math.MaxFloat64)
	FeatureLimit32 = math.Sqrt(math.MaxFloat32)
)

// defaultMissing is the default FilesConfig.Missing.
var defaultMissing = []string{"", "NA", "N/A", "NaN", "null", "None", "?"}

// DefaultFilesConfig returns a FilesConfig with the defaults: min-max
// scaling, defaultMissing, DefaultOptions. The paths and the label and
// sensitive columns are left for the caller.
func DefaultFilesConfig() FilesConfig {
	return FilesConfig{MinMaxScale: true, Classes: 2, MaxLevels: 50, Missing: append([]string(nil), defaultMissing...), Options: DefaultOptions()}
}

// Validate checks that the paths and the columns are set, the columns
// are distinct from each other and from Drop, Split and SplitColumn are
// not both set, Comma is a valid delimiter and the Options.
func (c FilesConfig) Validate() error {
	if c.Nodes == "" {
		return errors.New("datasets: FilesConfig.Nodes is empty, want the node table's path")
	}
	if c.Edges == "" {
		return errors.New("datasets: FilesConfig.Edges is empty, want the edge list's path")
	}
	cols := [][2]string{{"LabelColumn", c.LabelColumn}, {"SensColumn", c.SensColumn}}
	if c.IDColumn != "" {
		cols = append(cols, [2]string{"IDColumn", c.IDColumn})
	}
	if c.SplitColumn != "" {
		cols = append(cols, [2]string{"SplitColumn", c.SplitColumn})
	}
	for k, cat := range c.Categorical {
		cols = append(cols, [2]string{fmt.Sprintf("Categorical[%d]", k), cat})
	}
	if err := checkColumns("FilesConfig", c.Nodes, c.Drop, append(cols, intersectCols(c.Options)...)); err != nil {
		return err
	}
	if c.MaxLevels < 1 {
		return fmt.Errorf("datasets: FilesConfig.MaxLevels = %d, want ≥ 1 level per categorical column", c.MaxLevels)
	}
	if !(c.FeatureLimit >= 0) || math.IsInf(c.FeatureLimit, 0) {
		return fmt.Errorf("datasets: FilesConfig.FeatureLimit = %v, want a finite limit > 0 (0: FeatureLimit64)", c.FeatureLimit)
	}
	if c.Options.FoldSens {
		return errors.New("datasets: FilesConfig.Options.FoldSens is set, but LoadFiles maps any sensitive values, text included, to groups; fold them in the file (or merge small groups with Options.MinGroupSize and MergeSmallGroups)")
	}
	if c.Split != "" && c.SplitColumn != "" {
		return errors.New("datasets: FilesConfig.Split and SplitColumn are both set, want at most one")
	}
	if c.Classes < 0 || c.Classes == 1 {
		return fmt.Errorf("datasets: FilesConfig.Classes = %d, want 0 (any number) or at least 2", c.Classes)
	}
	if c.PositiveLabel != "" && c.Classes > 2 {
		return fmt.Errorf("datasets: FilesConfig.PositiveLabel is set for %d classes, want a positive class of a two-class task only", c.Classes)
	}
	for _, f := range [][2]string{{"NodesFormat", c.NodesFormat}, {"EdgesFormat", c.EdgesFormat}} {
		switch f[1] {
		case "", "csv", "parquet":
		default:
			return fmt.Errorf("datasets: FilesConfig.%s = %q, want \"\" (by the file's extension), \"csv\" or \"parquet\"", f[0], f[1])
		}
	}
	switch c.Comma {
	case 0, ',', '\t', ';', '|':
	default:
		return fmt.Errorf("datasets: FilesConfig.Comma = %q, want 0 (detect), ',', '\\t', ';' or '|'", c.Comma)
	}
	if c.Schema != nil {
		if err := c.Schema.Validate(); err != nil {
			return fmt.Errorf("datasets: FilesConfig.Schema: %w", err)
		}
		if c.Categorical != nil {
			var schemaCats []string
			for _, sc := range c.Schema.Categorical {
				schemaCats = append(schemaCats, sc.Column)
			}
			if !sameSet(c.Categorical, schemaCats) {
				return fmt.Errorf("datasets: FilesConfig.Categorical is %v, the schema's categorical columns are %v: the schema decides how columns are encoded; leave Categorical empty", c.Categorical, schemaCats)
			}
		}
	}
	return c.Options.Validate()
}

// LoadFiles reads a data set in the documented file format (see the
// package doc, "Your own files"). The label and sensitive values are
// mapped to class and group ids in sorted order (numeric order when
// every known value is a number), recorded in Dataset.ClassNames and
// Dataset.GroupNames; the node ids (IDColumn) in Dataset.IDs. Errors
// name file:line:column; warnings (edge weights ignored, a header line in
// the edge list, a last line without a newline) go to Dataset.Warnings.
func LoadFiles(c FilesConfig) (*Dataset, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	comma := c.Comma
	nodesParquet := isParquet(c.Nodes, c.NodesFormat)
	if comma == 0 && !nodesParquet {
		var err error
		if comma, err = detectComma(c.Nodes); err != nil {
			return nil, err
		}
	}
	spec := tableSpec{kinds: map[string]colKind{c.LabelColumn: colRaw, c.SensColumn: colRaw}, comma: comma}
	// The values the model sees must be within FeatureLimit: checked as
	// the cells are read, where their places are known, unless min-max
	// scaling (fitted on this data) puts them in [−1, 1].
	spec.limit = c.FeatureLimit
	if spec.limit == 0 {
		spec.limit = FeatureLimit64
	}
	switch {
	case c.Schema != nil:
		spec.limitCols = map[string]limitRule{}
		for j, name := range c.Schema.Names {
			r := limitRule{schema: true}
			if sc := c.Schema.Scaling; sc != nil {
				r = limitRule{schema: true, scaled: true, lo: sc.Min[j], hi: sc.Max[j]}
			}
			spec.limitCols[name] = r
		}
	case c.MinMaxScale:
		spec.limit = 0
	}
	for _, s := range c.Options.IntersectSens {
		spec.kinds[s] = colRaw
	}
	for _, d := range c.Drop {
		spec.kinds[d] = colSkip
	}
	if c.IDColumn != "" {
		spec.kinds[c.IDColumn] = colText
	}
	if c.SplitColumn != "" {
		spec.kinds[c.SplitColumn] = colText
	}
	cats := newCatSpec(c)
	for col := range cats.cols {
		spec.kinds[col] = colText
	}
	spec.need = append(append([]string{c.LabelColumn, c.SensColumn}, c.Drop...), c.Options.IntersectSens...)
	for col := range cats.cols {
		spec.need = append(spec.need, col)
	}
	sort.Strings(spec.need[len(spec.need)-len(cats.cols):])
	if c.IDColumn != "" {
		spec.need = append(spec.need, c.IDColumn)
	}
	if c.SplitColumn != "" {
		spec.need = append(spec.need, c.SplitColumn)
	}
	var t *table
	var err error
	if nodesParquet {
		t, err = readParquetTable(c.Nodes, spec)
	} else {
		t, err = loadTable(c.Nodes, spec)
	}
	if err != nil {
		return nil, featureHint(err, c.IDColumn)
	}
	name := c.Name
	if name == "" {
		name = strings.TrimSuffix(filepath.Base(c.Nodes), filepath.Ext(c.Nodes))
	}
	missing := map[string]bool{}
	for _, m := range c.Missing {
		missing[strings.ToLower(normKey(m))] = true
	}
	lc, sc := t.col(c.LabelColumn), t.col(c.SensColumn)
	labels, classNames, warnings, err := mapValues(t, lc, missing, valueRules{label: true, foldCase: c.FoldCase, positive: c.PositiveLabel, classes: c.Classes})
	if err != nil {
		return nil, err
	}
	sens, groupNames, sensWarnings, err := textGroups(t, append([]string{c.SensColumn}, c.Options.IntersectSens...), missing, labels, c.FoldCase, c.Options)
	if err != nil {
		return nil, err
	}
	warnings = append(warnings, sensWarnings...)
	if len(classNames) < 2 {
		return nil, t.err(0, 0, "column %q: %d distinct known value(s) %s, want at least two classes", c.LabelColumn, len(classNames), strings.Join(classNames, ", "))
	}
	if len(c.Options.IntersectSens) == 0 {
		// (An intersection's small groups are Options.MinGroupSize's.)
		if err := checkNotIDs(t.file, c.SensColumn, sens, len(groupNames)); err != nil {
			return nil, err
		}
	}
	exclude := append(append([]string{}, c.Drop...), c.Options.IntersectSens...)
	var ids []string
	var index map[string]int
	if c.IDColumn != "" {
		exclude = append(exclude, c.IDColumn)
		ids = t.text[t.col(c.IDColumn)]
		index = make(map[string]int, t.rows)
		for r, id := range ids {
			if id == "" {
				return nil, t.err(t.lines[r], 0, "column %q (field %d): empty node id, want a unique id per row", c.IDColumn, t.col(c.IDColumn)+1)
			}
			if prev, dup := index[id]; dup {
				return nil, t.err(t.lines[r], 0, "column %q (field %d): node id %s repeats %s %d, want unique ids", c.IDColumn, t.col(c.IDColumn)+1, quote(id), t.unit(), t.lines[prev])
			}
			index[id] = r
		}
	}
	if c.SplitColumn != "" {
		exclude = append(exclude, c.SplitColumn)
	}
	ds, err := t.features(name, lc, sc, exclude, c.Options.IncludeSens, c.MinMaxScale, c.Schema, sens, cats)
	if err != nil {
		return nil, err
	}
	ds.Labels, ds.Sens = labels, sens
	ds.ClassNames, ds.GroupNames, ds.IDs, ds.Warnings = classNames, groupNames, ids, warnings
	var edges [][2]int
	if isParquet(c.Edges, c.EdgesFormat) {
		edges, err = parquetEdges(c.Edges, t.rows, index, ds)
	} else {
		edges, err = loadEdges(c.Edges, ds, func(r io.Reader) ([][2]int, error) {
			return parseUserEdges(r, c.Edges, t.rows, index, ds)
		})
	}
	if err != nil {
		return nil, err
	}
	if ds.Graph, err = graph.FromEdges(t.rows, edges); err != nil {
		return nil, fmt.Errorf("datasets: %s: %w", c.Edges, err)
	}
	if ds.Graph.NumEdges() == 0 {
		return nil, fileErr(c.Edges, 0, 0, "every one of its %d edges joins a node to itself: without its self-loops the graph has no edge and every node is isolated (a graph model would be an MLP); want edges between distinct nodes", len(edges))
	}
	warnCleanup(ds, c.Edges, edges)
	switch {
	case c.SplitColumn != "":
		ds.Split, err = splitFromColumn(t, t.col(c.SplitColumn), labels, missing, c.Missing)
	case c.Split != "":
		var b []byte
		if b, err = readSplitFile(c.Split, ds.N()); err == nil {
			ds.Split, err = parseSplitFile(b, c.Split, ds.N(), labels)
		}
	default:
		ds.Split, err = c.Options.randomSplit(labels, ds.Sens)
	}
	if err != nil {
		return nil, err
	}
	return ds, nil
}

// warnCleanup adds a warning counting what graph.FromEdges dropped from
// the edges of file: self-loops, repeats of a pair as written, and pairs
// listed in both directions ((a, b) and (b, a): the list is read as
// undirected). It sorts edges.
func warnCleanup(ds *Dataset, file string, edges [][2]int) {
	c := ds.Graph.Cleanup()
	if c.SelfLoops == 0 && c.Duplicates == 0 {
		return
	}
	slices.SortFunc(edges, func(a, b [2]int) int {
		if a[0] != b[0] {
			return cmp.Compare(a[0], b[0])
		}
		return cmp.Compare(a[1], b[1])
	})
	repeats := 0
	for k := 1; k < len(edges); k++ {
		if e := edges[k]; e[0] != e[1] && e == edges[k-1] {
			repeats++
		}
	}
	plural := func(n int, one, many string) string {
		if n == 1 {
			return "1 " + one
		}
		return fmt.Sprintf("%d %s", n, many)
	}
	var parts []string
	if c.SelfLoops > 0 {
		parts = append(parts, plural(c.SelfLoops, "self-loop", "self-loops")+" (a node joined to itself) dropped")
	}
	if repeats > 0 {
		parts = append(parts, plural(repeats, "repeated edge", "repeated edges")+" (the same pair again) merged")
	}
	if r := c.Duplicates - repeats; r > 0 {
		parts = append(parts, plural(r, "edge", "edges")+" listed in both directions merged, for the list is read as undirected ((a, b) and (b, a) are one edge)")
	}
	ds.warnf("%s: %d edges make a graph of %d: %s", file, len(edges), ds.Graph.NumEdges(), strings.Join(parts, "; "))
}

// featureHint adds, to a "not a number" error in a feature column, how to
// leave the column out.
func featureHint(err error, idColumn string) error {
	var fe *FileError
	if errors.As(err, &fe) && strings.Contains(fe.Msg, "is not a number") {
		hint := " (every column but the id, label, sensitive and split columns is a numeric feature: "
		if col, ok := strings.CutPrefix(fe.Msg, "column "); ok && idColumn == "" {
			if name, _, ok := strings.Cut(col, ":"); ok {
				hint += "if " + name + " names the nodes, make it the id column (IDColumn); "
			}
		}
		fe.Msg += hint + "list text columns in Drop, or one-hot encode categories (FilesConfig.Categorical))"
	}
	return err
}

// detectComma returns '\t' for .tsv and .tab files and for a header line
// with a tab and no comma, else ','.
func detectComma(path string) (rune, error) {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".tsv", ".tab":
		return '\t', nil
	}
	tf, err := openText(path)
	if err != nil {
		return 0, err
	}
	defer tf.Close()
	head, _ := tf.br.Peek(sniffBytes)
	if i := strings.IndexByte(string(head), '\n'); i >= 0 {
		head = head[:i]
	}
	if strings.ContainsRune(string(head), '\t') && !strings.ContainsRune(string(head), ',') {
		return '\t', nil
	}
	return ',', nil
}

// features builds the feature matrix from every column of t but the label
// (lc), the excluded ones and, unless includeSens, the sensitive one (sc),
// whose group ids (sens) are used when it is included; the categorical
// columns of cats become one column per level.
func (t *table) features(name string, lc, sc int, exclude []string, includeSens, scale bool, schema *features.Schema, sens []int, cats catSpec) (*Dataset, error) {
	var cols []vcol
	var encoded []features.Categorical
	for k, h := range t.header {
		if k == lc || contains(exclude, h) || (k == sc && !includeSens) {
			continue
		}
		if !cats.cols[h] {
			cols = append(cols, vcol{k: k, name: h})
			continue
		}
		levels, err := t.levels(k, cats)
		if err != nil {
			return nil, err
		}
		encoded = append(encoded, features.Categorical{Column: h, Levels: levels})
		for _, l := range levels {
			cols = append(cols, vcol{k: k, cat: true, level: l, name: features.OneHotName(h, l)})
		}
	}
	seen := make(map[string]bool, len(cols))
	for _, v := range cols {
		if v.cat && seen[v.name] {
			return nil, t.err(1, v.k+1, "column %q: its level %s makes a feature column %s, a name another column has", t.header[v.k], quote(v.level), quote(v.name))
		}
		seen[v.name] = true
	}
	if schema != nil {
		var err error
		if cols, err = t.schemaColumns(cols, schema); err != nil {
			return nil, err
		}
	}
	n, d := t.rows, len(cols)
	feats := make([]float64, n*d)
	names := make([]string, d)
	var mm *features.MinMax
	if scale && schema == nil {
		mm = &features.MinMax{Min: make([]float64, d), Max: make([]float64, d)}
	}
	for q, v := range cols {
		k := v.k
		names[q] = v.name
		if k == sc || v.cat {
			for r := 0; r < n; r++ {
				if v.cat {
					if cats.level(t.text[k][r]) == v.level {
						feats[r*d+q] = 1
					}
				} else {
					feats[r*d+q] = float64(sens[r])
				}
			}
			if mm != nil {
				mm.Min[q], mm.Max[q] = -1, 1 // group ids and one-hot columns are kept as they are
			}
			continue
		}
		lo, hi := math.Inf(1), math.Inf(-1)
		rlo, rhi := 0, 0
		for r := 0; r < n; r++ {
			v := t.at(r, k)
			feats[r*d+q] = v
			if v < lo {
				lo, rlo = v, r
			}
			if v > hi {
				hi, rhi = v, r
			}
		}
		switch {
		case schema != nil:
			for r := 0; r < n; r++ {
				feats[r*d+q] = schema.Scale(q, feats[r*d+q])
			}
		case scale:
			if math.IsInf(hi-lo, 0) {
				return nil, t.err(t.lines[rhi], k+1, "column %q: its values span %v (%s %d) to %v: the range overflows, so min-max scaling cannot map them to [−1, 1]; rescale the column or turn scaling off (-no-scale)", t.header[k], lo, t.unit(), t.lines[rlo], hi)
			}
			mm.Min[q], mm.Max[q] = lo, hi
			for r := 0; r < n; r++ {
				feats[r*d+q] = features.ScaleMinMax(feats[r*d+q], lo, hi)
			}
		}
		// The reader refused values beyond FeatureLimit as it met them;
		// this is the last guard of the promise of finite features.
		for r := 0; r < n; r++ {
			if v := feats[r*d+q]; math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, t.err(t.lines[r], k+1, "column %q (field %d): %v becomes %v when scaled, want finite features", t.header[k], k+1, t.at(r, k), v)
			}
		}
	}
	ds := &Dataset{Name: name, Features: feats, NumFeatures: d, FeatureNames: names, Scaling: mm, Categorical: encoded}
	if schema != nil {
		ds.Scaling = schema.Scaling
		ds.Categorical = schema.Categorical
	}
	return ds, nil
}

// schemaColumns returns the columns of the schema's names, in the
// schema's order, from the candidate feature columns cols. A name the
// table lacks, or a feature column the schema lacks, is an error naming
// them.
func (t *table) schemaColumns(cols []vcol, schema *features.Schema) ([]vcol, error) {
	byName := make(map[string]vcol, len(cols))
	for _, v := range cols {
		byName[v.name] = v
	}
	out := make([]vcol, 0, len(schema.Names))
	var missing []string
	for _, nm := range schema.Names {
		v, ok := byName[nm]
		if !ok {
			missing = append(missing, quote(nm))
			continue
		}
		out = append(out, v)
		delete(byName, nm)
	}
	var extra []string
	for _, v := range cols {
		if _, ok := byName[v.name]; ok {
			extra = append(extra, quote(v.name))
		}
	}
	switch {
	case len(missing) > 0 && len(extra) > 0:
		return nil, t.err(1, 0, "the model's feature columns %s are missing, and the columns %s are not the model's: the table does not match the model's schema", strings.Join(missing, ", "), strings.Join(extra, ", "))
	case len(missing) > 0:
		return nil, t.err(1, 0, "the model's feature columns %s are missing from the table", strings.Join(missing, ", "))
	case len(extra) > 0:
		return nil, t.err(1, 0, "the columns %s are not among the model's features: leave them out (Drop)", strings.Join(extra, ", "))
	}
	return out, nil
}

// splitFromColumn reads train, val (valid, validation) or test, in any
// case, from the text column k; a missing value (missingList, the
// FilesConfig.Missing values, keyed in missing) leaves the node out. Any
// other value is an error at its first cell listing the accepted values
// and every value found with its rows and first line. A listed node must
// have a known label.
func splitFromColumn(t *table, k int, labels []int, missing map[string]bool, missingList []string) (Split, error) {
	var s Split
	bad := -1
	var found []string
	count := map[string]int{}
	first := map[string]int{}
	for r, v := range t.text[k] {
		if _, seen := count[v]; !seen {
			found = append(found, v)
			first[v] = r
		}
		count[v]++
		var list *[]int
		switch strings.ToLower(v) {
		case "train":
			list = &s.Train
		case "val", "valid", "validation":
			list = &s.Val
		case "test":
			list = &s.Test
		default:
			if !missing[strings.ToLower(normKey(v))] && bad < 0 {
				bad = r
			}
			continue
		}
		if labels[r] < 0 {
			return Split{}, t.err(t.lines[r], 0, "column %q (field %d): node in %s has an unknown label, want labelled nodes only in the split", t.header[k], k+1, v)
		}
		*list = append(*list, r)
	}
	if bad >= 0 {
		list := make([]spelling, len(found))
		for j, v := range found {
			list[j] = spelling{v, count[v], t.lines[first[v]]}
		}
		miss := make([]string, len(missingList))
		for j, m := range missingList {
			miss[j] = quote(m)
		}
		return Split{}, t.err(t.lines[bad], t.cols[k][bad], "column %q: %s is not a split: want train, val (or valid, validation) or test, or a missing value (FilesConfig.Missing: %s) for a node in no list; the column holds %s", t.header[k], quote(t.text[k][bad]), strings.Join(miss, ", "), listSpellings(list, 10, t.unit()))
	}
	if len(s.Train) == 0 || len(s.Test) == 0 {
		return Split{}, t.err(0, 0, "column %q: %d train and %d test nodes, want at least one of each (values train, val, test)", t.header[k], len(s.Train), len(s.Test))
	}
	return s, nil
}

// parseUserEdges reads an edge list of the user format: two node
// references per line (ids through index, or 0-based rows when index is
// nil) separated by whitespace or a comma, optionally a numeric third
// field (a weight, ignored with a warning). A first line naming no node in
// both fields (with rows: holding no integer) is a header and skipped.
//
// Rows may be written in any integral notation (parseIndex: 838.0,
// 8.38e+02). An id not found verbatim that is an integral number in
// another notation (numpy.savetxt writes the id 838 as
// 8.380000000000000000e+02) names the node whose id is its plain integer
// form, with a warning counting such references: the id column has no
// other entry it could mean, and refusing would make users rewrite
// numpy's files by hand.
func parseUserEdges(r io.Reader, file string, n int, index map[string]int, ds *Dataset) ([][2]int, error) {
	return scanUserEdges(file, n, index, ds, fileErr, true, func(f func(int, []field) error) error { return scanFields(r, file, true, f) })
}

// scanUserEdges is parseUserEdges over the lines (or rows) scan gives, errors
// made by errf; header says the first line may be a header (not in a
// Parquet file, whose schema names its columns).
func scanUserEdges(file string, n int, index map[string]int, ds *Dataset, errf func(string, int, int, string, ...any) *FileError, header bool, scan func(func(int, []field) error) error) ([][2]int, error) {
	fileErr := errf
	var edges [][2]int
	viaInteger := 0
	look := func(s string) (int, bool) {
		if index != nil {
			r, ok := index[s]
			if !ok {
				if v, exact, isInt := parseIndex(s); isInt && !exact {
					if r, ok = index[strconv.FormatInt(v, 10)]; ok {
						viaInteger++
					}
				}
			}
			return r, ok
		}
		v, msg := rowIndex(s, n)
		return v, msg == ""
	}
	bad := func(line, col int, s string) error {
		if index != nil {
			return fileErr(file, line, col, "node id %s is not in the node table's id column", quote(s))
		}
		_, msg := rowIndex(s, n)
		return fileErr(file, line, col, "%s (the node table has no id column)", msg)
	}
	first := header
	weighted := 0
	err := scan(func(line int, f []field) error {
		if len(f) != 2 && len(f) != 3 {
			return fileErr(file, line, 0, "%d fields, want 2 node references (and optionally a weight) separated by spaces, tabs or a comma", len(f))
		}
		u, okU := look(f[0].s)
		v, okV := look(f[1].s)
		if first {
			first = false
			if !okU && !okV && (index != nil || (!isInteger(f[0].s) && !isInteger(f[1].s))) {
				return nil // a header line
			}
		}
		if !okU {
			return bad(line, f[0].col, f[0].s)
		}
		if !okV {
			return bad(line, f[1].col, f[1].s)
		}
		if len(f) == 3 {
			w, err := parseNumber(f[2].s)
			if err != nil || math.IsNaN(w) || math.IsInf(w, 0) {
				return fileErr(file, line, f[2].col, "third field %s is not a finite number, want an edge weight (ignored) or no third field", quote(f[2].s))
			}
			weighted++
		}
		edges = append(edges, [2]int{u, v})
		return nil
	})
	if weighted > 0 {
		ds.warnf("%s: %d edges carry a third field (a weight): ignored, the graph is unweighted", file, weighted)
	}
	if viaInteger > 0 && err == nil {
		ds.warnf("%s: %d node references written as floats (such as 8.38e+02) matched the ids of their integer value", file, viaInteger)
	}
	return edges, err
}

// WriteFiles writes ds in the format LoadFiles reads: nodesPath, a CSV
// node table with the columns node (ds.IDs, or "n" and the row), the
// features (ds.FeatureNames, values as parsed, shortest exact form),
// label and group (ds.ClassNames and ds.GroupNames when set, else the
// ids; empty when unknown) and split (train, val, test or empty); and
// edgesPath, a CSV edge list (source,target by node id, each undirected
// edge once). It returns the FilesConfig that reads them back: with it,
// LoadFiles gives ds's features, labels, groups, graph and split (the
// split as lists in ascending order). It is an error for a feature to be
// named node, label, group or split.
func WriteFiles(ds *Dataset, nodesPath, edgesPath string) (FilesConfig, error) {
	c := DefaultFilesConfig()
	c.Name, c.Nodes, c.Edges, c.IDColumn, c.LabelColumn, c.SensColumn, c.SplitColumn = ds.Name, nodesPath, edgesPath, "node", "label", "group", "split"
	c.MinMaxScale = false
	for _, f := range ds.FeatureNames {
		switch f {
		case "node", "label", "group", "split":
			return c, fmt.Errorf("datasets: WriteFiles: a feature is named %q, a column name the format reserves", f)
		}
	}
	id := func(i int) string {
		if ds.IDs != nil {
			return ds.IDs[i]
		}
		return "n" + strconv.Itoa(i)
	}
	name := func(names []string, k int) string {
		switch {
		case k < 0:
			return ""
		case k < len(names):
			return names[k]
		}
		return strconv.Itoa(k)
	}
	split := ds.Split.Names(ds.N())
	err := writeCSV(nodesPath, func(w *csv.Writer) error {
		head := append(append([]string{"node"}, ds.FeatureNames...), "label", "group", "split")
		if err := w.Write(head); err != nil {
			return err
		}
		row := make([]string, len(head))
		d := ds.NumFeatures
		for i := 0; i < ds.N(); i++ {
			row[0] = id(i)
			for q := 0; q < d; q++ {
				row[1+q] = strconv.FormatFloat(ds.Features[i*d+q], 'g', -1, 64)
			}
			row[d+1], row[d+2], row[d+3] = name(ds.ClassNames, ds.Labels[i]), name(ds.GroupNames, ds.Sens[i]), split[i]
			if err := w.Write(row); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return c, err
	}
	err = writeCSV(edgesPath, func(w *csv.Writer) error {
		if err := w.Write([]string{"source", "target"}); err != nil {
			return err
		}
		for _, e := range ds.Graph.Edges() {
			if err := w.Write([]string{id(e[0]), id(e[1])}); err != nil {
				return err
			}
		}
		return nil
	})
	return c, err
}

func writeCSV(path string, fill func(*csv.Writer) error) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("datasets: WriteFiles: %w", err)
	}
	bw := bufio.NewWriter(f)
	w := csv.NewWriter(bw)
	err = fill(w)
	if err == nil {
		w.Flush()
		err = w.Error()
	}
	if err == nil {
		err = bw.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("datasets: WriteFiles: %s: %w", path, err)
	}
	return nil
}

// isInteger reports whether s is an integer in any notation (parseIndex).
func isInteger(s string) bool {
	_, _, ok := parseIndex(s)
	return ok
}

// checkNotIDs refuses a sensitive column that leaves more than half of
// the nodes with a known group alone in their group, whatever
// Options.MinGroupSize: such a column (ids, free text) is not a
// sensitive attribute, and every fairness number on it would be
// meaningless.
func checkNotIDs(file, col string, sens []int, groups int) error {
	size := make([]int, groups)
	known := 0
	for _, g := range sens {
		if g >= 0 {
			size[g]++
			known++
		}
	}
	alone := 0
	for _, n := range size {
		if n == 1 {
			alone++
		}
	}
	if 2*alone > known {
		return fileErr(file, 0, 0, "column %q: %d of its %d nodes with a known value are alone in their group (%d groups): a sensitive attribute puts many nodes in each group; is this the right column?", col, alone, known, groups)
	}
	return nil
}
