package datasets

import (
	"fmt"
	"sort"
	"strings"
)

// valueRules says how mapValues turns a label or sensitive column's cells
// into ids.
type valueRules struct {
	// label: the label column (classes and the positive class are
	// checked); else a sensitive column.
	label bool
	// foldCase makes spellings that differ only in case or spaces one
	// value (FilesConfig.FoldCase); without it they are an error.
	foldCase bool
	// positive is FilesConfig.PositiveLabel; classes FilesConfig.Classes.
	positive string
	classes  int
}

// spelling is one way a value is written in a column, its rows and the
// line of the first.
type spelling struct {
	s     string
	rows  int
	first int
}

func listSpellings(sp []spelling, max int, where string) string {
	parts := make([]string, 0, len(sp))
	for k, v := range sp {
		if k == max {
			parts = append(parts, fmt.Sprintf("and %d more", len(sp)-max))
			break
		}
		unit := "rows"
		if v.rows == 1 {
			unit = "row"
		}
		parts = append(parts, fmt.Sprintf("%s (%d %s, first %s %d)", quote(v.s), v.rows, unit, where, v.first))
	}
	return strings.Join(parts, ", ")
}

// foldKey is the key under which spellings of one value meet: numbers in
// their shortest form ("1.0" is "1"), text lower-cased with its runs of
// spaces made one and its ends trimmed.
func foldKey(s string) string {
	k := normKey(s)
	if _, err := parseNumber(k); err == nil {
		return k
	}
	return strings.ToLower(strings.Join(strings.Fields(k), " "))
}

// positivePairs are the two-value labels whose positive class is not a
// guess: 1 of 0/1, true of false/true, yes of no/yes (any case).
var positivePairs = map[[2]string]string{{"0", "1"}: "1", {"false", "true"}: "true", {"no", "yes"}: "yes"}

// mapValues maps the label or sensitive column k (kept as written) to ids
// 0.. in sorted order of its distinct known values (numeric order when
// all are numbers), −1 for the missing ones. Numbers in any spelling are
// one value ("1", "1.0"); text spellings that differ only in case or
// spaces ("Yes", "yes ", "YES") are an error naming them and their rows,
// unless r.foldCase makes them one value, named by its most frequent
// spelling (with a warning). For the label, r.classes (if > 0) is the
// number of values wanted, and of two values the positive class (id 1) is
// r.positive, or 1, true or yes when the values are 0/1, false/true or
// no/yes; any other pair without r.positive is an error listing them. It
// returns the ids, the values' names and the warnings.
func mapValues(t *table, k int, missing map[string]bool, r valueRules) ([]int, []string, []string, error) {
	cells := t.text[k]
	col := t.header[k]
	rows := map[string]int{}       // spelling (numbers normalised, text as written) → rows
	first := map[string]int{}      // spelling → its first row
	byKey := map[string][]string{} // fold key → its spellings
	known := make([]bool, len(cells))
	spell := make([]string, len(cells))
	for i, s := range cells {
		key := normKey(s)
		if missing[strings.ToLower(key)] {
			continue
		}
		sp := s
		if _, err := parseNumber(key); err == nil {
			sp = key
		}
		known[i], spell[i] = true, sp
		if rows[sp] == 0 {
			first[sp] = i
			fk := foldKey(sp)
			byKey[fk] = append(byKey[fk], sp)
		}
		rows[sp]++
	}
	var warnings []string
	name := map[string]string{} // spelling → the value's name
	keys := make([]string, 0, len(byKey))
	for fk := range byKey {
		keys = append(keys, fk)
	}
	sort.Strings(keys)
	for _, fk := range keys {
		sps := byKey[fk]
		sort.Slice(sps, func(a, b int) bool {
			if rows[sps[a]] != rows[sps[b]] {
				return rows[sps[a]] > rows[sps[b]]
			}
			return sps[a] < sps[b]
		})
		canon := strings.TrimSpace(sps[0])
		if len(sps) > 1 {
			list := make([]spelling, len(sps))
			for j, v := range sps {
				list[j] = spelling{v, rows[v], t.lines[first[v]]}
			}
			if !r.foldCase {
				rare := first[sps[len(sps)-1]]
				return nil, nil, nil, t.err(t.lines[rare], t.cols[k][rare], "column %q: the values %s differ only in case or spaces: one value written several ways? make them one value (FilesConfig.FoldCase), or correct the file", col, listSpellings(list, 10, t.unit()))
			}
			warnings = append(warnings, fmt.Sprintf("%s: column %q: the values %s are taken as one value, %s (FilesConfig.FoldCase)", t.file, col, listSpellings(list, 10, t.unit()), quote(canon)))
		}
		for _, v := range sps {
			name[v] = canon
		}
	}
	counts := map[string]int{}
	firstOf := map[string]int{} // value → its first row
	for v, n := range rows {
		c := name[v]
		if f, ok := firstOf[c]; !ok || first[v] < f {
			firstOf[c] = first[v]
		}
		counts[c] += n
	}
	names := make([]string, 0, len(counts))
	allNum := true
	for v := range counts {
		names = append(names, v)
		if _, err := parseNumber(v); err != nil {
			allNum = false
		}
	}
	if allNum {
		sort.Slice(names, func(a, b int) bool {
			x, _ := parseNumber(names[a])
			y, _ := parseNumber(names[b])
			return x < y
		})
	} else {
		sort.Strings(names)
	}
	values := func() string {
		list := make([]spelling, len(names))
		for j, v := range names {
			list[j] = spelling{v, counts[v], t.lines[firstOf[v]]}
		}
		return listSpellings(list, 10, t.unit())
	}
	// rarest is the first row of the value with the fewest rows: where a
	// stray value is most likely.
	rarest := func() (int, int) {
		best := names[0]
		for _, v := range names {
			if counts[v] < counts[best] {
				best = v
			}
		}
		return t.lines[firstOf[best]], t.cols[k][firstOf[best]]
	}
	if r.label {
		if r.classes > 0 && len(names) >= 2 && len(names) != r.classes {
			line, c := rarest()
			return nil, nil, nil, t.err(line, c, "column %q: %d distinct known values %s, want %d classes (FilesConfig.Classes): mark values that mean unknown as missing (FilesConfig.Missing), or set the number of classes", col, len(names), values(), r.classes)
		}
		if r.positive != "" {
			p := foldKey(r.positive)
			found := -1
			for j, v := range names {
				if v == normKey(r.positive) || (r.foldCase && foldKey(v) == p) {
					found = j
				}
			}
			if len(names) != 2 || found < 0 {
				return nil, nil, nil, t.err(1, k+1, "column %q: positive label %s is not one of exactly two label values (found %s)", col, quote(r.positive), values())
			}
			if found == 0 {
				names[0], names[1] = names[1], names[0]
			}
		} else if len(names) == 2 {
			pair := [2]string{foldKey(names[0]), foldKey(names[1])}
			if pair[0] > pair[1] {
				pair[0], pair[1] = pair[1], pair[0]
			}
			pos, ok := positivePairs[pair]
			if !ok {
				line, c := rarest()
				return nil, nil, nil, t.err(line, c, "column %q: its two values %s: which is the positive class (class 1, whose selection rate ΔDP compares)? name it (FilesConfig.PositiveLabel); only 0/1, false/true and no/yes are read without", col, values())
			}
			if foldKey(names[1]) != pos {
				names[0], names[1] = names[1], names[0]
			}
		}
	}
	id := make(map[string]int, len(names))
	for j, v := range names {
		id[v] = j
	}
	out := make([]int, len(cells))
	for i := range cells {
		out[i] = -1
		if known[i] {
			out[i] = id[name[spell[i]]]
		}
	}
	return out, names, warnings, nil
}
