package datasets

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strconv"
)

// field is one field of an edge-file line and its 1-based byte column.
type field struct {
	s   string
	col int
}

// scanFields calls f(line, fields) for every non-blank, non-comment ('#')
// line of an edge file, split at whitespace (and at commas when comma is
// set). At most 4 fields are passed; a line with more passes 4 and the
// caller sees len = 4. Columns are 1-based byte offsets.
func scanFields(r io.Reader, file string, comma bool, f func(line int, fields []field) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), maxLine)
	line := 0
	sep := func(c byte) bool { return isSpace(c) || (comma && c == ',') }
	var fields [4]field
	for sc.Scan() {
		line++
		s := sc.Bytes()
		nf := 0
		for i := 0; i < len(s) && nf < len(fields); {
			for i < len(s) && sep(s[i]) {
				i++
			}
			if i >= len(s) {
				break
			}
			j := i
			for j < len(s) && !sep(s[j]) {
				j++
			}
			fields[nf] = field{s: string(s[i:j]), col: i + 1}
			nf++
			i = j
		}
		if nf == 0 || fields[0].s[0] == '#' {
			continue
		}
		if err := f(line, fields[:nf]); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return fileErr(file, line+1, 0, "line longer than %d bytes, want a pair of node ids", maxLine)
		}
		return &FileError{File: file, Line: line + 1, Msg: err.Error(), Err: err}
	}
	return nil
}

// scanPairs calls f(line, a, colA, b, colB) for every non-blank,
// non-comment ('#') line of an edge file, which must hold exactly two
// whitespace-separated fields. Columns are 1-based byte offsets.
func scanPairs(r io.Reader, file string, f func(line int, a string, ca int, b string, cb int) error) error {
	return scanFields(r, file, false, func(line int, fs []field) error {
		if len(fs) != 2 {
			n := fmt.Sprint(len(fs))
			if len(fs) == 4 {
				n = "4 or more"
			}
			return fileErr(file, line, 0, "%s fields, want 2 (a pair of node ids separated by spaces or tabs)", n)
		}
		return f(line, fs[0].s, fs[0].col, fs[1].s, fs[1].col)
	})
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f' }

// parseIDEdges reads a FairGNN relationship file: pairs of user ids
// (integers, exactly), mapped to rows through index.
func parseIDEdges(r io.Reader, file string, index map[idKey]int) ([][2]int, error) {
	var edges [][2]int
	look := func(line int, s string, col int) (int, error) {
		id, ok := parseID(s)
		if !ok {
			return 0, fileErr(file, line, col, "%q is not an integer user id", s)
		}
		row, ok := index[id]
		if !ok {
			return 0, fileErr(file, line, col, "user id %s is not in the node table", id)
		}
		return row, nil
	}
	err := scanPairs(r, file, func(line int, a string, ca int, b string, cb int) error {
		u, err := look(line, a, ca)
		if err != nil {
			return err
		}
		v, err := look(line, b, cb)
		if err != nil {
			return err
		}
		edges = append(edges, [2]int{u, v})
		return nil
	})
	return edges, err
}

// maxExactIndex is 2^53: past it a float64 no longer holds every integer,
// so an index written in floating-point notation could name the wrong
// row.
const maxExactIndex = 1 << 53

// parseIndex parses an integer written in any plain decimal notation, the
// one parser of row indices (edge lists without an id column, split
// files, the presets' NIFTY edge files) and of integral ids written as
// floats: 838, +838, 838.0, 8.38e+02 and 8.380000000000000000e+02
// (numpy.savetxt's default) are all 838. Anything else (838.5, 1_000,
// 0x10, NaN, text) is refused, and so is a non-integer form beyond 2^53,
// where a float64 no longer holds every integer. exact reports the plain
// integer form (digits with an optional sign).
func parseIndex(s string) (v int64, exact, ok bool) {
	if v, err := strconv.ParseInt(s, 10, 64); err == nil {
		return v, true, true
	}
	// The decimal forms, read digit by digit: strconv.ParseFloat takes a
	// slow path on numpy's 19 significant digits, and an integer needs
	// none of it.
	i, n := 0, len(s)
	neg := false
	if i < n && (s[i] == '+' || s[i] == '-') {
		neg = s[i] == '-'
		i++
	}
	var digits []byte
	intEnd := i
	for intEnd < n && s[intEnd] >= '0' && s[intEnd] <= '9' {
		intEnd++
	}
	digits = append(digits, s[i:intEnd]...)
	i = intEnd
	frac := 0
	if i < n && s[i] == '.' {
		i++
		for i < n && s[i] >= '0' && s[i] <= '9' {
			digits = append(digits, s[i])
			frac++
			i++
		}
	}
	if len(digits) == 0 {
		return 0, false, false
	}
	exp := 0
	if i < n && (s[i] == 'e' || s[i] == 'E') {
		i++
		eneg := false
		if i < n && (s[i] == '+' || s[i] == '-') {
			eneg = s[i] == '-'
			i++
		}
		start := i
		for i < n && s[i] >= '0' && s[i] <= '9' {
			if exp < 1000 {
				exp = exp*10 + int(s[i]-'0')
			}
			i++
		}
		if i == start {
			return 0, false, false
		}
		if eneg {
			exp = -exp
		}
	}
	if i != n {
		return 0, false, false
	}
	// value = digits × 10^(exp − frac); drop zeros on both ends.
	e10 := exp - frac
	for len(digits) > 0 && digits[len(digits)-1] == '0' && e10 < 0 {
		digits = digits[:len(digits)-1]
		e10++
	}
	for len(digits) > 0 && digits[0] == '0' {
		digits = digits[1:]
	}
	if len(digits) == 0 {
		return 0, false, true
	}
	if e10 < 0 || len(digits)+e10 > 16 {
		return 0, false, false // a fraction, or beyond 2^53
	}
	u, err := strconv.ParseUint(string(digits), 10, 64)
	if err != nil {
		return 0, false, false
	}
	for ; e10 > 0; e10-- {
		u *= 10
	}
	if u > maxExactIndex {
		return 0, false, false
	}
	if neg {
		return -int64(u), false, true
	}
	return int64(u), false, true
}

// rowIndex returns the row s names in a table of n rows (parseIndex, then
// a range check); the error message names what was wrong and what is
// wanted, for a FileError.
func rowIndex(s string, n int) (int, string) {
	v, _, ok := parseIndex(s)
	if !ok {
		return 0, fmt.Sprintf("%s is not a row index, want an integer in [0, %d)", quote(s), n)
	}
	if v < 0 || v >= int64(n) {
		return 0, fmt.Sprintf("row index %s out of range, want an integer in [0, %d)", s, n)
	}
	return int(v), ""
}

// parseRowEdges reads a NIFTY edge file: pairs of 0-based row indices in
// [0, n), written in any integral notation (parseIndex), such as
// 8.380000000000000000e+02.
func parseRowEdges(r io.Reader, file string, n int) ([][2]int, error) {
	var edges [][2]int
	look := func(line int, s string, col int) (int, error) {
		v, msg := rowIndex(s, n)
		if msg != "" {
			return 0, fileErr(file, line, col, "%s", msg)
		}
		return v, nil
	}
	err := scanPairs(r, file, func(line int, a string, ca int, b string, cb int) error {
		u, err := look(line, a, ca)
		if err != nil {
			return err
		}
		v, err := look(line, b, cb)
		if err != nil {
			return err
		}
		edges = append(edges, [2]int{u, v})
		return nil
	})
	return edges, err
}
