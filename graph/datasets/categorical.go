package datasets

import (
	"sort"
	"strings"
)

// vcol is one feature column of the matrix: a numeric column k of the
// table, or the one-hot column of level of the categorical column k.
type vcol struct {
	k     int
	cat   bool
	level string
	name  string
}

// catSpec says which columns are one-hot encoded and with which levels.
type catSpec struct {
	cols    map[string]bool
	fixed   map[string][]string // a schema's levels, by column
	max     int
	missing map[string]bool
}

// newCatSpec returns the categorical columns of c: its Schema's when it
// has one (the levels are then fixed), else c.Categorical.
func newCatSpec(c FilesConfig) catSpec {
	s := catSpec{cols: map[string]bool{}, max: c.MaxLevels, missing: map[string]bool{}}
	for _, m := range c.Missing {
		s.missing[strings.ToLower(normKey(m))] = true
	}
	if c.Schema != nil {
		s.fixed = map[string][]string{}
		for _, sc := range c.Schema.Categorical {
			s.cols[sc.Column], s.fixed[sc.Column] = true, sc.Levels
		}
		return s
	}
	for _, col := range c.Categorical {
		s.cols[col] = true
	}
	return s
}

// level is the level a cell names ("" for a missing cell): numbers in
// their shortest form ("1.0" is "1"), text as written (trimmed).
func (s catSpec) level(cell string) string {
	k := normKey(cell)
	if s.missing[strings.ToLower(k)] {
		return ""
	}
	return k
}

// levels returns the levels of the categorical column k: the schema's,
// every cell's level being among them, or the distinct known levels in
// sorted order (numeric when all are numbers), at most s.max.
func (t *table) levels(k int, s catSpec) ([]string, error) {
	col := t.header[k]
	if fixed, ok := s.fixed[col]; ok {
		known := make(map[string]bool, len(fixed))
		for _, l := range fixed {
			known[l] = true
		}
		for r, cell := range t.text[k] {
			if l := s.level(cell); l != "" && !known[l] {
				list := make([]string, 0, len(fixed))
				for j, f := range fixed {
					if j == 20 {
						list = append(list, "...")
						break
					}
					list = append(list, quote(f))
				}
				return nil, t.err(t.lines[r], t.cols[k][r], "column %q: level %s is not one the model was trained on (it knows %s): a model cannot encode a level it never saw; mark it unknown (Missing) or retrain", col, quote(l), strings.Join(list, ", "))
			}
		}
		return fixed, nil
	}
	seen := map[string]bool{}
	var levels []string
	allNum := true
	for _, cell := range t.text[k] {
		l := s.level(cell)
		if l == "" || seen[l] {
			continue
		}
		seen[l] = true
		levels = append(levels, l)
		if _, err := parseNumber(l); err != nil {
			allNum = false
		}
	}
	if len(levels) > s.max {
		return nil, t.err(1, k+1, "column %q: %d levels, more than FilesConfig.MaxLevels (%d): is it categorical? an id, free text or a measurement makes a column per value; raise the cap, or leave the column out (FilesConfig.Drop)", col, len(levels), s.max)
	}
	if len(levels) == 0 {
		return nil, t.err(1, k+1, "column %q: no known value to one-hot encode (every cell is missing); leave the column out (FilesConfig.Drop)", col)
	}
	if allNum {
		sort.Slice(levels, func(a, b int) bool {
			x, _ := parseNumber(levels[a])
			y, _ := parseNumber(levels[b])
			return x < y
		})
	} else {
		sort.Strings(levels)
	}
	return levels, nil
}

// sameSet reports whether a and b hold the same strings.
func sameSet(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	m := map[string]int{}
	for _, v := range a {
		m[v]++
	}
	for _, v := range b {
		if m[v] == 0 {
			return false
		}
		m[v]--
	}
	return true
}
