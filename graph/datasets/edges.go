package datasets

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
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

// parseRowEdges reads a NIFTY edge file: pairs of 0-based row indices in
// [0, n), written as integers or as integral floats such as
// 8.380000000000000000e+02.
func parseRowEdges(r io.Reader, file string, n int) ([][2]int, error) {
	var edges [][2]int
	look := func(line int, s string, col int) (int, error) {
		if v, err := strconv.ParseInt(s, 10, 64); err == nil {
			if v < 0 || v >= int64(n) {
				return 0, fileErr(file, line, col, "row index %s out of range, want an integer in [0, %d)", s, n)
			}
			return int(v), nil
		}
		v, err := parseNumber(s)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || v != math.Trunc(v) {
			return 0, fileErr(file, line, col, "%q is not a row index, want an integer in [0, %d)", s, n)
		}
		if v < 0 || v >= float64(n) {
			return 0, fileErr(file, line, col, "row index %s out of range, want an integer in [0, %d)", s, n)
		}
		return int(v), nil
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
