package datasets

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
)

// Intersect combines several sensitive attributes of the same nodes into
// one whose groups are their intersections: the combinations of values
// that occur. attrs[k][i] is node i's group in attribute k (0, 1, ...; −1
// unknown). A node is in a group when all its values are known, unknown
// (−1) otherwise. The groups are numbered 0, 1, ... in the order of their
// combinations, compared attribute by attribute (the first attribute
// varies slowest); combos[g] holds group g's value in each attribute.
//
// Intersect returns an error when the attributes have different lengths
// or a value is below −1.
func Intersect(attrs ...[]int) (sens []int, combos [][]int, err error) {
	if len(attrs) == 0 {
		return nil, nil, errors.New("datasets: Intersect: no attribute")
	}
	n := len(attrs[0])
	for k, a := range attrs {
		if len(a) != n {
			return nil, nil, fmt.Errorf("datasets: Intersect: attribute %d has %d values, attribute 0 has %d", k, len(a), n)
		}
		for i, v := range a {
			if v < -1 {
				return nil, nil, fmt.Errorf("datasets: Intersect: attribute %d, node %d: group %d, want ≥ 0 or −1 (unknown)", k, i, v)
			}
		}
	}
	key := func(i int) string {
		var b strings.Builder
		for _, a := range attrs {
			b.WriteString(strconv.Itoa(a[i]))
			b.WriteByte(',')
		}
		return b.String()
	}
	seen := map[string][]int{}
	known := func(i int) bool {
		for _, a := range attrs {
			if a[i] < 0 {
				return false
			}
		}
		return true
	}
	for i := 0; i < n; i++ {
		if !known(i) {
			continue
		}
		if k := key(i); seen[k] == nil {
			c := make([]int, len(attrs))
			for j, a := range attrs {
				c[j] = a[i]
			}
			seen[k] = c
		}
	}
	for _, c := range seen {
		combos = append(combos, c)
	}
	sort.Slice(combos, func(a, b int) bool {
		for j := range combos[a] {
			if combos[a][j] != combos[b][j] {
				return combos[a][j] < combos[b][j]
			}
		}
		return false
	})
	id := make(map[string]int, len(combos))
	for g, c := range combos {
		var b strings.Builder
		for _, v := range c {
			b.WriteString(strconv.Itoa(v))
			b.WriteByte(',')
		}
		id[b.String()] = g
	}
	sens = make([]int, n)
	for i := range sens {
		sens[i] = -1
		if known(i) {
			sens[i] = id[key(i)]
		}
	}
	return sens, combos, nil
}

// SmallGroupError reports sensitive groups with fewer labelled nodes than
// Options.MinGroupSize. Callers branch on it with errors.As to say, in
// their own words, how to merge the groups or lower the minimum.
type SmallGroupError struct {
	// File is the node table (empty for a generated data set).
	File string
	// Groups and Sizes are the small groups' names and labelled nodes.
	Groups []string
	Sizes  []int
	// Min is Options.MinGroupSize.
	Min int
	// Merged is true when the groups below Min were merged
	// (Options.MergeSmallGroups) and the merged group is still below it:
	// Groups then holds the groups merged, Sizes their sizes, and Total
	// the merged group's size.
	Merged bool
	Total  int
	// All is true when every group is below Min and MergeSmallGroups was
	// asked: merged, they would make a single group.
	All bool
	// Labelled is the number of labelled nodes with a known group. When
	// the small groups hold more than half of them, the message asks
	// whether the column is a sensitive attribute at all (a column of
	// ids makes a group per node).
	Labelled int
}

// listMax is how many small groups List names before "and N more".
const listMax = 10

// List returns the small groups with their labelled nodes, for messages:
// "a" (3), "b" (0); past ten groups it ends with "and N more".
func (e *SmallGroupError) List() string {
	var parts []string
	for k, g := range e.Groups {
		if k == listMax {
			parts = append(parts, fmt.Sprintf("and %d more", len(e.Groups)-listMax))
			break
		}
		parts = append(parts, fmt.Sprintf("%s (%d)", quote(g), e.Sizes[k]))
	}
	return strings.Join(parts, ", ")
}

func (e *SmallGroupError) Error() string {
	list := e.List()
	where := ""
	if e.File != "" {
		where = e.File + ": "
	}
	if e.All {
		return fmt.Sprintf("datasets: %severy sensitive group has fewer than %d labelled nodes (%s): merged they would make one group; lower Options.MinGroupSize", where, e.Min, list)
	}
	if e.Merged {
		return fmt.Sprintf("datasets: %ssensitive groups %s, merged into one group for having fewer than %d labelled nodes each, still make only %d labelled nodes; lower Options.MinGroupSize", where, list, e.Min, e.Total)
	}
	msg := fmt.Sprintf("datasets: %s%d sensitive group(s) with fewer than %d labelled nodes (Options.MinGroupSize): %s; merge them (Options.MergeSmallGroups) or lower the minimum", where, len(e.Groups), e.Min, list)
	if e.Mostly() {
		msg += fmt.Sprintf(" (%d of the %d labelled nodes are in such groups: a sensitive attribute puts many nodes in each group; is this the right column?)", e.Total, e.Labelled)
	}
	return msg
}

// Mostly reports whether the small groups hold more than half of the
// labelled nodes: the column is likely not a sensitive attribute (ids,
// free text) rather than a few rare values.
func (e *SmallGroupError) Mostly() bool { return 2*e.Total > e.Labelled }

// otherGroup is the name of the group that Options.MergeSmallGroups makes
// of the small groups.
const otherGroup = "other"

// sensSpec is how a loader turns sensitive columns into groups.
type sensSpec struct {
	file    string
	cols    []string // the sensitive column, then Options.IntersectSens
	min     int
	merge   bool
	warnf   func(format string, args ...any)
	noNames bool // single column whose values are the ids: GroupNames nil
}

// groups combines the per-column groups (ids and names, one entry per
// column) into the data set's groups: their intersection when there are
// several columns, then the minimum size. labels says which nodes are
// labelled. It returns the groups, their names, and errors for fewer than
// two groups or small groups.
func (s sensSpec) groups(ids [][]int, names [][]string, labels []int) ([]int, []string, error) {
	sens, gnames := ids[0], names[0]
	if len(ids) > 1 {
		var combos [][]int
		var err error
		if sens, combos, err = Intersect(ids...); err != nil {
			return nil, nil, err
		}
		gnames = make([]string, len(combos))
		for g, c := range combos {
			parts := make([]string, len(c))
			for k, v := range c {
				parts[k] = s.cols[k] + "=" + names[k][v]
			}
			gnames[g] = strings.Join(parts, " & ")
		}
	}
	if len(gnames) < 2 {
		return nil, nil, fileErr(s.file, 0, 0, "%s: %d group(s) with a known value (%s), want at least two", s.what(), len(gnames), strings.Join(gnames, ", "))
	}
	if s.min > 0 {
		var err error
		if sens, gnames, err = s.minSize(sens, gnames, labels); err != nil {
			return nil, nil, err
		}

	}
	if s.noNames && len(ids) == 1 && len(gnames) == len(names[0]) {
		gnames = nil
	}
	return sens, gnames, nil
}

func (s sensSpec) what() string {
	if len(s.cols) == 1 {
		return fmt.Sprintf("column %q", s.cols[0])
	}
	return fmt.Sprintf("the intersection of columns %s", strings.Join(s.cols, ", "))
}

// minSize refuses or merges the groups with fewer than s.min labelled
// nodes.
func (s sensSpec) minSize(sens []int, names []string, labels []int) ([]int, []string, error) {
	size := make([]int, len(names))
	for i, g := range sens {
		if g >= 0 && labels[i] >= 0 {
			size[g]++
		}
	}
	small := &SmallGroupError{File: s.file, Min: s.min}
	for _, n := range size {
		small.Labelled += n
	}
	keep := make([]int, len(names)) // new id, or −2: merged
	next := 0
	for g, n := range size {
		if n < s.min {
			small.Groups, small.Sizes = append(small.Groups, names[g]), append(small.Sizes, n)
			small.Total += n
			keep[g] = -2
			continue
		}
		keep[g] = next
		next++
	}
	if len(small.Groups) == 0 {
		return sens, names, nil
	}
	if !s.merge {
		return nil, nil, small
	}
	if next == 0 {
		small.All = true
		return nil, nil, small
	}
	if small.Total < s.min {
		small.Merged = true
		return nil, nil, small
	}
	var out []string
	for g, k := range keep {
		if k >= 0 {
			out = append(out, names[g])
		}
	}
	other := otherGroup
	for _, v := range out {
		if v == other {
			other = "(" + otherGroup + ")"
		}
	}
	out = append(out, other)
	res := make([]int, len(sens))
	for i, g := range sens {
		switch {
		case g < 0:
			res[i] = -1
		case keep[g] == -2:
			res[i] = next
		default:
			res[i] = keep[g]
		}
	}
	s.warnf("%s: %d sensitive groups with fewer than %d labelled nodes merged into group %q (%d labelled nodes): %s", s.what(), len(small.Groups), s.min, other, small.Total, small.List())
	return res, out, nil
}

// numericGroups maps a numeric sensitive column (the presets') to groups:
// negative values are unknown (−1); with fold, 0 is group 0 and every
// positive value group 1 (the FMP paper's protocol, with a warning
// counting values other than 1); without, each distinct value is a group,
// in increasing order. It returns the groups, their names (the values),
// and whether the names are the ids themselves (values 0..G−1).
func numericGroups(vals []float64, fold bool, warnf func(string, ...any), where string) ([]int, []string, bool) {
	sens := make([]int, len(vals))
	if fold {
		folded := map[float64]int{}
		var present [2]bool
		for r, v := range vals {
			switch {
			case v < 0:
				sens[r] = -1
				continue
			case v > 0:
				sens[r] = 1
				if v != 1 {
					folded[v]++
				}
			}
			present[sens[r]] = true
		}
		if len(folded) > 0 {
			warnf("%s: %s mapped to group 1 (values above 0 count as group 1)", where, describeFolded(folded))
		}
		var names []string
		for g, p := range present {
			if p {
				names = append(names, strconv.Itoa(g))
			}
		}
		if len(names) < 2 {
			// Keep the ids as they are: the caller reports one group.
			return sens, names, false
		}
		return sens, names, true
	}
	var distinct []float64
	seen := map[float64]bool{}
	for _, v := range vals {
		if v >= 0 && !seen[v] {
			seen[v] = true
			distinct = append(distinct, v)
		}
	}
	sort.Float64s(distinct)
	id := make(map[float64]int, len(distinct))
	names := make([]string, len(distinct))
	identity := true
	for g, v := range distinct {
		id[v] = g
		names[g] = strconv.FormatFloat(v, 'g', -1, 64)
		identity = identity && v == float64(g) && !math.Signbit(v)
	}
	for r, v := range vals {
		sens[r] = -1
		if v >= 0 {
			sens[r] = id[v]
		}
	}
	return sens, names, identity
}

// intersectCols lists Options.IntersectSens for checkColumns.
func intersectCols(o Options) [][2]string {
	var out [][2]string
	for k, c := range o.IntersectSens {
		out = append(out, [2]string{fmt.Sprintf("Options.IntersectSens[%d]", k), c})
	}
	return out
}

// textGroups maps LoadFiles' sensitive columns (text, Missing values
// unknown) to groups: each column's values in sorted order (mapValues),
// then their intersection and the minimum size (sensSpec). It returns the
// groups, their names and the warnings for the data set.
func textGroups(t *table, cols []string, missing map[string]bool, labels []int, foldCase bool, o Options) ([]int, []string, []string, error) {
	ids := make([][]int, len(cols))
	names := make([][]string, len(cols))
	var warnings []string
	for k, c := range cols {
		var err error
		var w []string
		if ids[k], names[k], w, err = mapValues(t, t.col(c), missing, valueRules{foldCase: foldCase}); err != nil {
			return nil, nil, nil, err
		}
		warnings = append(warnings, w...)
		if len(cols) == 1 && len(names[k]) < 2 {
			return nil, nil, nil, t.err(0, 0, "column %q: %d distinct known value(s) %s, want at least two groups", c, len(names[k]), strings.Join(names[k], ", "))
		}
	}
	spec := sensSpec{file: t.file, cols: cols, min: o.MinGroupSize, merge: o.MergeSmallGroups,
		warnf: func(f string, a ...any) { warnings = append(warnings, fmt.Sprintf(f, a...)) }}
	sens, gnames, err := spec.groups(ids, names, labels)
	if err != nil {
		return nil, nil, nil, err
	}
	return sens, gnames, warnings, nil
}
