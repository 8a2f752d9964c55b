package datasets

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/fairmp/fairmp/graph"
)

// Options are the settings Load applies on top of a preset (and LoadFiles
// on top of a FilesConfig).
type Options struct {
	// IncludeSens adds the sensitive attribute (its group id, −1 unknown,
	// unscaled) back among the features, at its column's position.
	// Default false: as in the FMP paper, features exclude the label and
	// the sensitive column.
	IncludeSens bool
	// FoldSens folds the presets' sensitive attribute to two groups, as
	// the FMP paper, FairGNN and NIFTY do: 0 is group 0, every positive
	// value group 1 (negative values are unknown either way). Default
	// false: every distinct value is a group, in increasing order, named
	// in Dataset.GroupNames unless the values are 0..G−1 themselves. The
	// published benchmarks' attributes are binary, so both give the same
	// groups on them; the lab's experiments fold explicitly
	// ([PaperOptions]). LoadFiles, whose values are any text, refuses it.
	FoldSens bool
	// IntersectSens names further sensitive columns: the groups become the
	// intersections of the sensitive column's values with theirs (see
	// [Intersect]), named "col=value & col=value" in Dataset.GroupNames,
	// and these columns are left out of the features too. Their values
	// follow the sensitive column's rules (FoldSens, Missing). Default
	// none.
	IntersectSens []string
	// MinGroupSize, if > 0, is the fewest labelled nodes a sensitive group
	// may have: a smaller group is an error (*SmallGroupError), or, with
	// MergeSmallGroups, is merged with the other small groups into one
	// group named "other" (with a warning listing them). Default 0: no
	// minimum.
	MinGroupSize int
	// MergeSmallGroups merges the groups below MinGroupSize instead of
	// refusing them. The merged group must itself reach MinGroupSize.
	MergeSmallGroups bool
	// SplitFractions and SplitSeed define the random split (RandomSplit)
	// used when the dataset folder has no split.json, or when
	// IgnoreSplitFile is set. Default 0.5/0.25/0.25, seed 1.
	SplitFractions [3]float64
	SplitSeed      int64
	// StratifySplit draws that split within each sensitive group and
	// label (StratifiedSplit) instead of over all labelled nodes
	// (RandomSplit): every group gets validation and test nodes of its
	// classes in its own proportions, which small and intersectional
	// groups need. Default true; PaperOptions sets it false (the
	// published splits are plain random ones).
	StratifySplit bool
	// IgnoreSplitFile draws the random split even if split.json exists.
	IgnoreSplitFile bool
}

// DefaultOptions returns the default Options: features without the
// sensitive column, every sensitive value its own group, no minimum group
// size, split.json when present, else a 50/25/25 random split of the
// labelled nodes with seed 1, drawn within each group and label.
func DefaultOptions() Options {
	return Options{SplitFractions: [3]float64{0.5, 0.25, 0.25}, SplitSeed: 1, StratifySplit: true}
}

// PaperOptions returns DefaultOptions with FoldSens: the FMP paper's
// protocol, two groups (0 and positive values), which the lab's
// experiments use so that their numbers stay those of the published
// benchmarks whatever the data's attribute holds.
func PaperOptions() Options {
	o := DefaultOptions()
	o.FoldSens = true
	o.StratifySplit = false
	return o
}

// Validate checks the split fractions, the minimum group size and the
// further sensitive columns.
func (o Options) Validate() error {
	if o.MinGroupSize < 0 {
		return fmt.Errorf("datasets: Options.MinGroupSize = %d, want ≥ 0", o.MinGroupSize)
	}
	if o.MergeSmallGroups && o.MinGroupSize == 0 {
		return fmt.Errorf("datasets: Options.MergeSmallGroups is set without Options.MinGroupSize, want a minimum to merge below")
	}
	for k, c := range o.IntersectSens {
		if c == "" {
			return fmt.Errorf("datasets: Options.IntersectSens[%d] is empty, want a column name", k)
		}
		for _, d := range o.IntersectSens[:k] {
			if d == c {
				return fmt.Errorf("datasets: Options.IntersectSens lists %q twice", c)
			}
		}
	}
	return checkFractions("Options.SplitFractions", o.SplitFractions)
}

// FairGNNConfig describes a file in FairGNN's format: <File>.csv (one row
// per node, a header line, an integer id column) and
// <File>_relationship.txt (one edge per line: two user ids separated by
// spaces or tabs).
type FairGNNConfig struct {
	// Name is the Dataset's name.
	Name string
	// File is the base name of the two files.
	File string
	// IDColumn names the user id column (integers, parsed exactly; they
	// exceed 2^53 in NBA and Pokec). It is never a feature.
	IDColumn string
	// LabelColumn and SensColumn name the label and the sensitive column.
	// Labels must be integers: negative means unknown (−1), values > 1
	// become 1. Sensitive values: negative means unknown, 0 stays 0,
	// positive becomes 1.
	LabelColumn, SensColumn string
	// Drop lists further columns to leave out of the features.
	Drop []string
	// MinMaxScale maps every feature column to [−1, 1] by its minimum and
	// maximum over all nodes (a constant column becomes 0).
	MinMaxScale bool
	// Options: sensitive column among the features, split.
	Options Options
}

// NIFTYConfig describes a file in NIFTY's format: <File>.csv (one row per
// node, a header line, no id column) and, optionally, <File>_edges.txt
// (one edge per line: two 0-based row indices, possibly written as
// floats such as 8.380000000000000000e+02). Without the edges file the
// graph is built from feature similarity (similarityEdges with
// Threshold) over every column except the label and the Drop columns
// (the sensitive column included, after SensMap, unscaled), as NIFTY does.
type NIFTYConfig struct {
	Name, File              string
	LabelColumn, SensColumn string
	// LabelMap and SensMap translate cell text to values before the rules
	// of FairGNNConfig apply (for German: GoodCustomer −1 → 0, Gender
	// Female → 1, Male → 0). Numeric keys match any spelling of the same
	// number ("-1" matches "-1.0").
	LabelMap, SensMap map[string]int
	// Drop lists columns left out of the features and of the similarity.
	Drop []string
	// Threshold is the similarity threshold used when the edges file is
	// missing; must be in [0, 1].
	Threshold   float64
	MinMaxScale bool
	Options     Options
}

// Validate checks that File and the three column names are set and
// distinct from each other and from the Drop columns, and the Options.
func (c FairGNNConfig) Validate() error {
	if err := checkColumns("FairGNNConfig", c.File, c.Drop, append([][2]string{{"IDColumn", c.IDColumn}, {"LabelColumn", c.LabelColumn}, {"SensColumn", c.SensColumn}}, intersectCols(c.Options)...)); err != nil {
		return err
	}
	return c.Options.Validate()
}

// Validate checks that File and the column names are set and distinct
// from each other and from the Drop columns, the Threshold and the
// Options.
func (c NIFTYConfig) Validate() error {
	if err := checkColumns("NIFTYConfig", c.File, c.Drop, append([][2]string{{"LabelColumn", c.LabelColumn}, {"SensColumn", c.SensColumn}}, intersectCols(c.Options)...)); err != nil {
		return err
	}
	if !(c.Threshold >= 0 && c.Threshold <= 1) {
		return fmt.Errorf("datasets: NIFTYConfig.Threshold = %v, want a value in [0, 1]", c.Threshold)
	}
	return c.Options.Validate()
}

func checkColumns(what, file string, drop []string, cols [][2]string) error {
	if file == "" {
		return fmt.Errorf("datasets: %s.File is empty, want the files' base name", what)
	}
	for k, c := range cols {
		if c[1] == "" {
			return fmt.Errorf("datasets: %s.%s is empty, want a column name", what, c[0])
		}
		for _, o := range cols[:k] {
			if o[1] == c[1] {
				return fmt.Errorf("datasets: %s.%s and %s are both %q, want distinct columns", what, o[0], c[0], c[1])
			}
		}
		if contains(drop, c[1]) {
			return fmt.Errorf("datasets: %s.Drop holds %s %q, want only other columns", what, c[0], c[1])
		}
	}
	return nil
}

// Presets lists the names Load accepts.
var Presets = []string{"nba", "pokec_z", "pokec_n", "bail", "credit", "german"}

// FairGNNPreset returns the config of a FairGNN-format preset: "nba"
// (file nba, label SALARY, sens country, min-max scaled), "pokec_z" (file
// region_job, label I_am_working_in_field, sens region) or "pokec_n"
// (file region_job_2, same columns), all with id column user_id and
// DefaultOptions.
func FairGNNPreset(name string) (FairGNNConfig, error) {
	c := FairGNNConfig{Name: name, IDColumn: "user_id", Options: DefaultOptions()}
	switch name {
	case "nba":
		c.File, c.LabelColumn, c.SensColumn, c.MinMaxScale = "nba", "SALARY", "country", true
	case "pokec_z":
		c.File, c.LabelColumn, c.SensColumn = "region_job", "I_am_working_in_field", "region"
	case "pokec_n":
		c.File, c.LabelColumn, c.SensColumn = "region_job_2", "I_am_working_in_field", "region"
	default:
		return c, fmt.Errorf("datasets: %q is not a FairGNN preset, want nba, pokec_z or pokec_n", name)
	}
	return c, nil
}

// NIFTYPreset returns the config of a NIFTY-format preset: "bail" (label
// RECID, sens WHITE, threshold 0.6), "credit" (label NoDefaultNextMonth,
// sens Age, drop Single, threshold 0.7) or "german" (label GoodCustomer
// with −1 → 0, sens Gender with Female → 1 and Male → 0, drop the text
// column PurposeOfLoan, threshold 0.8). All are min-max scaled to [−1, 1]
// as in NIFTY's training code, with DefaultOptions.
func NIFTYPreset(name string) (NIFTYConfig, error) {
	c := NIFTYConfig{Name: name, File: name, MinMaxScale: true, Options: DefaultOptions()}
	switch name {
	case "bail":
		c.LabelColumn, c.SensColumn, c.Threshold = "RECID", "WHITE", 0.6
	case "credit":
		c.LabelColumn, c.SensColumn, c.Threshold = "NoDefaultNextMonth", "Age", 0.7
		c.Drop = []string{"Single"}
	case "german":
		c.LabelColumn, c.SensColumn, c.Threshold = "GoodCustomer", "Gender", 0.8
		c.LabelMap = map[string]int{"-1": 0}
		c.SensMap = map[string]int{"Female": 1, "Male": 0}
		c.Drop = []string{"PurposeOfLoan"}
	default:
		return c, fmt.Errorf("datasets: %q is not a NIFTY preset, want bail, credit or german", name)
	}
	return c, nil
}

// Load reads a preset data set (one of Presets) with the given options.
// dir is either the folder holding the data set's files (for example
// $FAIRMP_DATA/nba) or its parent, holding a folder named after the
// preset ($FAIRMP_DATA), or, for pokec_z and pokec_n, a folder named
// pokec (FairGNN's layout, where both Pokec files share one folder).
// Errors name the file, line and column at fault.
func Load(dir, name string, opts Options) (*Dataset, error) {
	if c, err := FairGNNPreset(name); err == nil {
		c.Options = opts
		return LoadFairGNN(dir, c)
	}
	if c, err := NIFTYPreset(name); err == nil {
		c.Options = opts
		return LoadNIFTY(dir, c)
	}
	return nil, fmt.Errorf("datasets: Load: unknown data set %q, want one of %s", name, strings.Join(Presets, ", "))
}

// resolve finds the folder holding file: dir itself, dir/name, or (for
// names starting with "pokec", FairGNN's layout) dir/pokec.
func resolve(dir, name, file string) (string, error) {
	cands := []string{dir, filepath.Join(dir, name)}
	if strings.HasPrefix(name, "pokec") {
		cands = append(cands, filepath.Join(dir, "pokec"))
	}
	for _, c := range cands {
		if _, err := os.Stat(filepath.Join(c, file)); err == nil {
			return c, nil
		}
	}
	var tried []string
	for _, c := range cands[1:] {
		tried = append(tried, filepath.Join(c, file))
	}
	return "", &FileError{File: filepath.Join(dir, file), Msg: fmt.Sprintf("missing file (also tried %s)", strings.Join(tried, ", ")), Err: fs.ErrNotExist}
}

// loadTable streams the CSV file path through readTable, with every row
// bounded (see maxLine) and binary files refused.
func loadTable(path string, spec tableSpec) (*table, error) {
	tf, err := openText(path)
	if err != nil {
		return nil, err
	}
	defer tf.Close()
	return readTable(tf.br, tf.cap.markRecord, path, spec)
}

// loadEdges streams the edge file path through parse. A file without any
// edge is an error; a last line without a newline (a file that may have
// been cut mid-number) adds a warning to ds.
func loadEdges(path string, ds *Dataset, parse func(io.Reader) ([][2]int, error)) ([][2]int, error) {
	tf, err := openText(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, &FileError{File: path, Msg: "missing edge file: " + err.(*FileError).Msg, Err: err}
	}
	if err != nil {
		return nil, err
	}
	defer tf.Close()
	tf.cap.uncapped() // scanPairs bounds each line itself
	edges, err := parse(tf.br)
	if err != nil {
		return nil, err
	}
	if len(edges) == 0 {
		return nil, fileErr(path, 0, 0, "no edges: the file holds no pair of nodes, want at least one edge (a graph without edges is almost always a wrong file)")
	}
	if tf.endsWithoutNewline() {
		ds.warnf("%s: the last line has no newline: if the file was cut, its last edge (%d, %d in rows) may be wrong", path, edges[len(edges)-1][0], edges[len(edges)-1][1])
	}
	return edges, nil
}

// LoadFairGNN reads a FairGNN-format data set (see FairGNNConfig and Load
// for dir).
func LoadFairGNN(dir string, c FairGNNConfig) (*Dataset, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	folder, err := resolve(dir, c.Name, c.File+".csv")
	if err != nil {
		return nil, err
	}
	csvPath := filepath.Join(folder, c.File+".csv")
	spec := tableSpec{kinds: map[string]colKind{c.IDColumn: colID}}
	for _, d := range c.Drop {
		spec.kinds[d] = colSkip
	}
	t, err := loadTable(csvPath, spec)
	if err != nil {
		return nil, err
	}
	if err := t.need(append(append([]string{c.IDColumn, c.LabelColumn, c.SensColumn}, c.Drop...), c.Options.IntersectSens...)...); err != nil {
		return nil, err
	}
	ds, err := t.dataset(c.Name, c.LabelColumn, c.SensColumn, append([]string{c.IDColumn}, c.Drop...), c.Options, c.MinMaxScale)
	if err != nil {
		return nil, err
	}
	index := make(map[idKey]int, t.rows)
	for r, id := range t.ids {
		if prev, dup := index[id]; dup {
			return nil, fileErr(csvPath, t.lines[r], 0, "column %q: user id %s repeats line %d, want unique ids", c.IDColumn, id, t.lines[prev])
		}
		index[id] = r
	}
	relPath := filepath.Join(folder, c.File+"_relationship.txt")
	edges, err := loadEdges(relPath, ds, func(r io.Reader) ([][2]int, error) { return parseIDEdges(r, relPath, index) })
	if err != nil {
		return nil, err
	}
	if ds.Graph, err = graph.FromEdges(t.rows, edges); err != nil {
		return nil, fmt.Errorf("datasets: %s: %w", relPath, err)
	}
	if ds.Split, err = loadSplit(folder, ds, c.Options); err != nil {
		return nil, err
	}
	return ds, nil
}

// LoadNIFTY reads a NIFTY-format data set (see NIFTYConfig and Load for
// dir).
func LoadNIFTY(dir string, c NIFTYConfig) (*Dataset, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	folder, err := resolve(dir, c.Name, c.File+".csv")
	if err != nil {
		return nil, err
	}
	csvPath := filepath.Join(folder, c.File+".csv")
	spec := tableSpec{kinds: map[string]colKind{}, textMaps: map[string]map[string]float64{}}
	for _, d := range c.Drop {
		spec.kinds[d] = colSkip
	}
	toMap := func(m map[string]int) map[string]float64 {
		if m == nil {
			return nil
		}
		o := make(map[string]float64, len(m))
		for k, v := range m {
			o[normKey(k)] = float64(v)
		}
		return o
	}
	spec.textMaps[c.LabelColumn] = toMap(c.LabelMap)
	spec.textMaps[c.SensColumn] = toMap(c.SensMap)
	t, err := loadTable(csvPath, spec)
	if err != nil {
		return nil, err
	}
	if err := t.need(append(append([]string{c.LabelColumn, c.SensColumn}, c.Drop...), c.Options.IntersectSens...)...); err != nil {
		return nil, err
	}
	ds, err := t.dataset(c.Name, c.LabelColumn, c.SensColumn, c.Drop, c.Options, c.MinMaxScale)
	if err != nil {
		return nil, err
	}
	edgePath := filepath.Join(folder, c.File+"_edges.txt")
	var edges [][2]int
	if _, err := os.Stat(edgePath); err == nil {
		edges, err = loadEdges(edgePath, ds, func(r io.Reader) ([][2]int, error) { return parseRowEdges(r, edgePath, t.rows) })
		if err != nil {
			return nil, err
		}
	} else if errors.Is(err, fs.ErrNotExist) {
		// NIFTY's similarity graph on the raw columns minus label and drops.
		var cols []int
		for k, h := range t.header {
			if h != c.LabelColumn && !contains(c.Drop, h) {
				cols = append(cols, k)
			}
		}
		x := make([]float64, t.rows*len(cols))
		for r := 0; r < t.rows; r++ {
			for q, k := range cols {
				x[r*len(cols)+q] = t.at(r, k)
			}
		}
		if t.rows < 2 {
			return nil, fileErr(csvPath, 0, 0, "1 row and no edge file %s: want at least 2 rows to build a similarity graph", edgePath)
		}
		if edges, err = similarityEdges(x, t.rows, len(cols), c.Threshold); err != nil {
			return nil, err
		}
	} else {
		return nil, &FileError{File: edgePath, Msg: err.Error(), Err: err}
	}
	if ds.Graph, err = graph.FromEdges(t.rows, edges); err != nil {
		return nil, fmt.Errorf("datasets: %s: %w", edgePath, err)
	}
	if ds.Split, err = loadSplit(folder, ds, c.Options); err != nil {
		return nil, err
	}
	return ds, nil
}

func contains(s []string, x string) bool {
	for _, v := range s {
		if v == x {
			return true
		}
	}
	return false
}

// need returns an error naming the first missing column and listing the
// columns present.
func (t *table) need(cols ...string) error {
	for _, c := range cols {
		if t.col(c) < 0 {
			hint := ""
			if len(t.header) == 1 {
				for _, d := range []string{";", "|", "\t"} {
					if strings.Contains(t.header[0], d) {
						hint = fmt.Sprintf(" (the header is one field holding %q: is that the delimiter? set Comma)", d)
						break
					}
				}
			}
			return t.err(1, 0, "missing column %q; columns present: %s%s", c, strings.Join(t.header, ", "), hint)
		}
	}
	return nil
}

// dataset builds labels, sens and features from a parsed table: the
// sensitive groups from sensCol and o.IntersectSens by numericGroups and
// sensSpec (o.FoldSens, o.MinGroupSize, o.MergeSmallGroups).
func (t *table) dataset(name, labelCol, sensCol string, exclude []string, o Options, scale bool) (*Dataset, error) {
	lc, sc := t.col(labelCol), t.col(sensCol)
	n := t.rows
	labels := make([]int, n)
	foldedY := map[float64]int{}
	for r := 0; r < n; r++ {
		y := t.at(r, lc)
		switch {
		case y != math.Trunc(y):
			return nil, t.err(t.lines[r], 0, "column %q (field %d): label %v is not an integer", labelCol, lc+1, y)
		case y < 0:
			labels[r] = -1
		case y > 1:
			labels[r] = 1
			foldedY[y]++
		default:
			labels[r] = int(y)
		}
	}
	d0 := &Dataset{}
	if len(foldedY) > 0 {
		d0.warnf("%s: column %q: %s mapped to label 1 (labels above 1 count as 1)", t.file, labelCol, describeFolded(foldedY))
	}
	cols := append([]string{sensCol}, o.IntersectSens...)
	ids := make([][]int, len(cols))
	names := make([][]string, len(cols))
	identity := true
	for k, c := range cols {
		ci := t.col(c)
		vals := make([]float64, n)
		for r := range vals {
			vals[r] = t.at(r, ci)
		}
		var id bool
		ids[k], names[k], id = numericGroups(vals, o.FoldSens, d0.warnf, fmt.Sprintf("%s: column %q", t.file, c))
		identity = identity && id
		if o.FoldSens && len(names[k]) < 2 {
			var groups [2]int
			for _, g := range ids[k] {
				if g >= 0 {
					groups[g]++
				}
			}
			return nil, t.err(0, 0, "column %q: every node with a known value is in one group (%d with value <= 0 → group 0, %d with value > 0 → group 1); want two groups", c, groups[0], groups[1])
		}
	}
	spec := sensSpec{file: t.file, cols: cols, min: o.MinGroupSize, merge: o.MergeSmallGroups, warnf: d0.warnf, noNames: identity}
	sens, groupNames, err := spec.groups(ids, names, labels)
	if err != nil {
		return nil, err
	}
	ds, err := t.features(name, lc, sc, append(append([]string(nil), exclude...), o.IntersectSens...), o.IncludeSens, scale, nil, sens, catSpec{})
	if err != nil {
		return nil, err
	}
	ds.Labels, ds.Sens, ds.GroupNames, ds.Warnings = labels, sens, groupNames, d0.Warnings
	return ds, nil
}

// describeFolded lists folded values and their counts, smallest value
// first, at most five.
func describeFolded(m map[float64]int) string {
	vals := make([]float64, 0, len(m))
	total := 0
	for v, c := range m {
		vals = append(vals, v)
		total += c
	}
	sort.Float64s(vals)
	var parts []string
	for k, v := range vals {
		if k == 5 {
			parts = append(parts, fmt.Sprintf("and %d more values", len(vals)-5))
			break
		}
		parts = append(parts, fmt.Sprintf("%v (%d rows)", v, m[v]))
	}
	return fmt.Sprintf("%d rows with values %s", total, strings.Join(parts, ", "))
}

// loadSplit reads folder/split.json or draws a random split.
func loadSplit(folder string, ds *Dataset, o Options) (Split, error) {
	p := filepath.Join(folder, "split.json")
	if !o.IgnoreSplitFile {
		b, err := readSplitFile(p, ds.N())
		if err == nil {
			return parseSplitFile(b, p, ds.N(), ds.Labels)
		}
		if isFileError(err) && !errors.Is(err, fs.ErrNotExist) {
			return Split{}, err
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return Split{}, &FileError{File: p, Msg: err.Error(), Err: err}
		}
	}
	return o.randomSplit(ds.Labels, ds.Sens)
}

// randomSplit draws the split o asks for: StratifiedSplit or RandomSplit.
func (o Options) randomSplit(labels, sens []int) (Split, error) {
	if o.StratifySplit {
		return StratifiedSplit(labels, sens, o.SplitFractions, o.SplitSeed)
	}
	return RandomSplit(labels, o.SplitFractions, o.SplitSeed)
}

// readSplitFile reads a split file of a data set of n nodes: at most
// maxSplitPerNode bytes per node plus maxLine, UTF-8 text (a byte-order
// mark is dropped).
func readSplitFile(path string, n int) ([]byte, error) {
	tf, err := openText(path)
	if err != nil {
		return nil, err
	}
	defer tf.Close()
	tf.cap.uncapped()
	limit := int64(maxSplitPerNode)*int64(n) + maxLine
	b, err := io.ReadAll(io.LimitReader(tf.br, limit+1))
	if err != nil {
		return nil, &FileError{File: path, Msg: err.Error(), Err: err}
	}
	if int64(len(b)) > limit {
		return nil, fileErr(path, 0, 0, "larger than %d bytes, more than any split of %d nodes needs", limit, n)
	}
	return b, nil
}
