package datasets

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/fairmp/fairmp/graph/features"
)

// colKind says how a CSV column is parsed.
type colKind int

const (
	colNumber colKind = iota // a finite float64, possibly via a text map
	colID                    // an integer id (int64 or uint64)
	colSkip                  // not parsed at all
	colText                  // kept as trimmed text (user ids, the split, categories)
	colRaw                   // kept as written, untrimmed (labels, groups: spellings are checked)
)

// idKey is a user id parsed exactly: integers beyond 2^53 are common.
type idKey struct {
	mag uint64
	neg bool
}

func (k idKey) String() string {
	if k.neg {
		return "-" + strconv.FormatUint(k.mag, 10)
	}
	return strconv.FormatUint(k.mag, 10)
}

func parseID(s string) (idKey, bool) {
	if s == "" {
		return idKey{}, false
	}
	neg := false
	t := s
	if t[0] == '-' || t[0] == '+' {
		neg = t[0] == '-'
		t = t[1:]
	}
	if t == "" || t[0] == '+' || t[0] == '-' {
		return idKey{}, false
	}
	v, err := strconv.ParseUint(t, 10, 64)
	if err != nil {
		return idKey{}, false
	}
	if v == 0 {
		neg = false
	}
	return idKey{mag: v, neg: neg}, true
}

// tableSpec says which columns to parse and how. Columns not named in
// kinds are numbers. textMaps maps a column to a table from cell text
// (normalised by normKey) to a value, tried before parsing a number.
type tableSpec struct {
	kinds    map[string]colKind
	textMaps map[string]map[string]float64
	// comma is the field delimiter (0: ',').
	comma rune
	// need lists columns that must be present, checked on the header
	// before any row is parsed.
	need []string
	// limit, if > 0, is the largest magnitude a number cell may have as
	// the model sees it (FilesConfig.FeatureLimit), checked on the cell
	// itself, or on its scaling by a model's schema for the columns
	// limitCols names; with limitCols nil, on every number column.
	limit     float64
	limitCols map[string]limitRule
}

// limitRule says how a number column's cells are checked against
// tableSpec.limit: as written, or scaled by min-max ranges lo, hi (a
// model's schema).
type limitRule struct {
	// schema: the column is a model's feature; scaled: by lo, hi.
	schema, scaled bool
	lo, hi         float64
}

// limitName names a feature limit in messages.
func limitName(limit float64) string {
	switch limit {
	case FeatureLimit64:
		return "the limit for float64 arithmetic (FilesConfig.FeatureLimit): its square overflows"
	case FeatureLimit32:
		return "the limit for float32 arithmetic (FilesConfig.FeatureLimit): its square overflows"
	}
	return "the limit FilesConfig.FeatureLimit"
}

// table is a parsed CSV file: numeric cells in row-major data (NaN for
// skipped and id columns), ids of the id column, the line of every row.
type table struct {
	file   string
	header []string
	data   []float64
	ids    []idKey
	// text holds the cells of the colText (trimmed) and colRaw (as
	// written) columns, by column; cols their 1-based byte columns.
	text map[int][]string
	cols map[int][]int
	// rowsFile: lines are the rows of a Parquet file (FileError.Rows).
	rowsFile bool
	lines    []int
	rows     int
}

func (t *table) col(name string) int {
	for k, h := range t.header {
		if h == name {
			return k
		}
	}
	return -1
}

// err is fileErr for t's file, or rowErr when its places are rows.
func (t *table) err(line, col int, format string, args ...any) *FileError {
	if t.rowsFile {
		return rowErr(t.file, line, col, format, args...)
	}
	return fileErr(t.file, line, col, format, args...)
}

// unit names t's places in messages: "line", or "row" for Parquet.
func (t *table) unit() string {
	if t.rowsFile {
		return "row"
	}
	return "line"
}

func (t *table) at(r, c int) float64 { return t.data[r*len(t.header)+c] }

// normKey normalises a cell for text-map lookup: numbers are written in
// shortest 'g' form ("-1.0" and "-1" both become "-1"), text is trimmed.
func normKey(s string) string {
	s = strings.TrimSpace(s)
	if v, err := parseNumber(s); err == nil {
		return strconv.FormatFloat(v, 'g', -1, 64)
	}
	return s
}

// errNotDecimal is parseNumber's error for text that is not a plain
// decimal number.
var errNotDecimal = errors.New("not a decimal number")

// parseNumber parses a plain decimal number: an optional sign, digits
// with an optional decimal point (or a point and digits), and an optional
// exponent (1e-3, 2.5E+4). strconv.ParseFloat alone also reads Go's
// syntax (1_000 as 1000, 0x1p3 as 8, Inf, NaN), which a data file does
// not mean. Out-of-range values (1e400) return ±Inf with a nil error.
func parseNumber(s string) (float64, error) {
	i, n := 0, len(s)
	if i < n && (s[i] == '+' || s[i] == '-') {
		i++
	}
	digits := 0
	for i < n && s[i] >= '0' && s[i] <= '9' {
		i++
		digits++
	}
	if i < n && s[i] == '.' {
		i++
		for i < n && s[i] >= '0' && s[i] <= '9' {
			i++
			digits++
		}
	}
	if digits == 0 {
		return 0, errNotDecimal
	}
	if i < n && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < n && (s[i] == '+' || s[i] == '-') {
			i++
		}
		exp := 0
		for i < n && s[i] >= '0' && s[i] <= '9' {
			i++
			exp++
		}
		if exp == 0 {
			return 0, errNotDecimal
		}
	}
	if i != n {
		return 0, errNotDecimal
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return 0, errNotDecimal
	}
	return v, nil
}

// readTable parses a comma-separated file with a header line. Every data
// row must have as many fields as the header; number cells must parse as
// finite floats; id cells as integers. Errors are *FileError values naming
// file:line:column.
//
// mark, if not nil, is called before each record is read (a capReader's
// markRecord, which bounds each record's bytes).
func readTable(r io.Reader, mark func(), file string, spec tableSpec) (*table, error) {
	if mark == nil {
		mark = func() {}
	}
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	cr.LazyQuotes = true
	if spec.comma != 0 {
		cr.Comma = spec.comma
	}
	cr.ReuseRecord = true
	mark()
	rec, err := cr.Read()
	if err == io.EOF {
		return nil, fileErr(file, 1, 0, "empty file, want a header line of column names")
	}
	if err != nil {
		return nil, csvErr(file, err)
	}
	tb, err := newTableBuilder(file, rec, spec, false)
	if err != nil {
		return nil, err
	}
	C := len(tb.t.header)
	for {
		mark()
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, csvErr(file, err)
		}
		line, _ := cr.FieldPos(0)
		if len(rec) == 1 && strings.TrimSpace(rec[0]) == "" && C > 1 {
			continue // a blank line
		}
		if len(rec) != C {
			for k, cell := range rec {
				if strings.Contains(cell, "\n") {
					l, col := cr.FieldPos(k)
					return nil, fileErr(file, l, col, "a quoted field that starts here is never closed: it runs on across %d lines; close the quote (\"\")", strings.Count(cell, "\n"))
				}
			}
		}
		if err := tb.record(rec, line, cr.FieldPos); err != nil {
			return nil, err
		}
	}
	return tb.done()
}

// tableBuilder checks and stores the records of a table, whatever its
// file format: the CSV reader and the Parquet reader feed it the same
// cells, so that both apply the same rules and name the same places.
type tableBuilder struct {
	t     *table
	kinds []colKind
	maps  []map[string]float64
	// limit and limits: tableSpec.limit, and the rule of each column
	// checked against it (nil: not checked).
	limit  float64
	limits []*limitRule
	// rows: the file's places are rows (Parquet), not lines.
	rows bool
}

// newTableBuilder checks the header (UTF-8, non-empty, unique names, the
// needed columns present) and returns a builder for its rows.
func newTableBuilder(file string, rec []string, spec tableSpec, rows bool) (*tableBuilder, error) {
	errAt := func(k int, format string, args ...any) error {
		if rows {
			return rowErr(file, 0, k+1, format, args...)
		}
		return fileErr(file, 1, k+1, format, args...)
	}
	header := make([]string, len(rec))
	seen := map[string]int{}
	for k, h := range rec {
		if !utf8.ValidString(h) {
			return nil, errAt(k, "column %d's name is not valid UTF-8 text; want a UTF-8 file", k+1)
		}
		h = strings.TrimSpace(h)
		if k == 0 {
			h = strings.TrimPrefix(h, "\ufeff")
		}
		if h == "" {
			return nil, errAt(k, "column %d has an empty name", k+1)
		}
		if j, ok := seen[h]; ok {
			return nil, errAt(k, "column name %s repeats column %d", quote(h), j+1)
		}
		seen[h] = k
		header[k] = h
	}
	if err := (&table{file: file, header: header}).need(spec.need...); err != nil {
		if fe, ok := err.(*FileError); ok && rows {
			fe.Line, fe.Rows = 0, true
		}
		return nil, err
	}
	tb := &tableBuilder{t: &table{file: file, header: header, text: map[int][]string{}, cols: map[int][]int{}, rowsFile: rows},
		kinds: make([]colKind, len(header)), maps: make([]map[string]float64, len(header)), rows: rows,
		limit: spec.limit, limits: make([]*limitRule, len(header))}
	for k, h := range header {
		tb.kinds[k] = spec.kinds[h]
		tb.maps[k] = spec.textMaps[h]
		if spec.limit > 0 {
			if r, ok := spec.limitCols[h]; ok || spec.limitCols == nil {
				tb.limits[k] = &r
			}
		}
	}
	return tb, nil
}

// record checks and stores one data row: its cells, the line (or, for
// Parquet, the row) where it starts, and pos giving each cell's line and
// 1-based column.
func (tb *tableBuilder) record(rec []string, line int, pos func(k int) (int, int)) error {
	t := tb.t
	file, header := t.file, t.header
	C := len(header)
	errAt := func(l, col int, format string, args ...any) error {
		if tb.rows {
			return rowErr(file, l, col, format, args...)
		}
		return fileErr(file, l, col, format, args...)
	}
	for k, cell := range rec {
		if !utf8.ValidString(cell) {
			l, col := pos(k)
			return errAt(l, col, "field %d is not valid UTF-8 text (%s); want a UTF-8 file", k+1, quote(strings.ToValidUTF8(cell, "\ufffd")))
		}
	}
	if len(rec) != C {
		return errAt(line, 0, "ragged row: %d fields, want %d (as many as the header)", len(rec), C)
	}
	for k, cell := range rec {
		switch tb.kinds[k] {
		case colSkip:
			t.data = append(t.data, math.NaN())
		case colText, colRaw:
			if tb.kinds[k] == colText {
				cell = strings.TrimSpace(cell)
			}
			_, col := pos(k)
			t.text[k] = append(t.text[k], cell)
			t.cols[k] = append(t.cols[k], col)
			t.data = append(t.data, math.NaN())
		case colID:
			id, ok := parseID(strings.TrimSpace(cell))
			if !ok {
				_, col := pos(k)
				return errAt(line, col, "column %s: %s is not an integer id", quote(header[k]), quote(cell))
			}
			t.ids = append(t.ids, id)
			t.data = append(t.data, math.NaN())
		default:
			if m := tb.maps[k]; m != nil {
				if v, ok := m[normKey(cell)]; ok {
					t.data = append(t.data, v)
					continue
				}
			}
			s := strings.TrimSpace(cell)
			v, err := parseNumber(s)
			if err != nil {
				_, col := pos(k)
				if s == "" {
					return errAt(line, col, "column %s: empty cell, want a number", quote(header[k]))
				}
				if m := tb.maps[k]; m != nil {
					keys := make([]string, 0, len(m))
					for key := range m {
						keys = append(keys, strconv.Quote(key))
					}
					sort.Strings(keys)
					return errAt(line, col, "column %s: %s is not a number nor one of the mapped values %s", quote(header[k]), quote(cell), strings.Join(keys, ", "))
				}
				if g, gerr := strconv.ParseFloat(s, 64); gerr == nil || errors.Is(gerr, strconv.ErrRange) {
					if math.IsNaN(g) || math.IsInf(g, 0) {
						return errAt(line, col, "column %s: %s is not finite, want a finite number", quote(header[k]), quote(cell))
					}
					return errAt(line, col, "column %s: %s is not a plain decimal number (Go's syntax, such as 1_000 or 0x1p3, is not read)", quote(header[k]), quote(cell))
				}
				return errAt(line, col, "column %s: %s is not a number", quote(header[k]), quote(cell))
			}
			if math.IsNaN(v) || math.IsInf(v, 0) {
				_, col := pos(k)
				return errAt(line, col, "column %s: %s is not finite, want a finite number", quote(header[k]), quote(cell))
			}
			if lr := tb.limits[k]; lr != nil {
				if err := tb.checkLimit(lr, k, s, v, line, pos); err != nil {
					return err
				}
			}
			t.data = append(t.data, v)
		}
	}
	t.lines = append(t.lines, line)
	t.rows++
	return nil
}

// checkLimit refuses the number cell s (value v) of column k when it, or
// its scaling by lr, is beyond tb.limit.
func (tb *tableBuilder) checkLimit(lr *limitRule, k int, s string, v float64, line int, pos func(int) (int, int)) error {
	m := v
	if lr.scaled {
		m = features.ScaleMinMax(v, lr.lo, lr.hi)
	}
	if math.Abs(m) <= tb.limit {
		return nil
	}
	_, col := pos(k)
	err := tb.t.err(line, col, "column %s: %s is beyond ±%.3g, %s; turn on min-max scaling (FilesConfig.MinMaxScale) or rescale the column", quote(tb.t.header[k]), s, tb.limit, limitName(tb.limit))
	if lr.schema && !lr.scaled {
		err = tb.t.err(line, col, "column %s: %s is beyond ±%.3g, %s; the model reads its features unscaled: rescale the column, or leave its node out", quote(tb.t.header[k]), s, tb.limit, limitName(tb.limit))
	}
	if lr.scaled {
		err = tb.t.err(line, col, "column %s: %s becomes %.3g with the model's scaling (its training range %g to %g), beyond ±%.3g, %s: the value is far outside the data the model was trained on; correct it, or leave its node out", quote(tb.t.header[k]), s, m, lr.lo, lr.hi, tb.limit, limitName(tb.limit))
	}
	return err
}

// done returns the table, or an error when it has no data row.
func (tb *tableBuilder) done() (*table, error) {
	if tb.t.rows == 0 {
		if tb.rows {
			return nil, rowErr(tb.t.file, 0, 0, "no data rows")
		}
		return nil, fileErr(tb.t.file, 2, 0, "no data rows after the header")
	}
	return tb.t, nil
}

func csvErr(file string, err error) error {
	if errors.Is(err, errTooLong) {
		return &FileError{File: file, Msg: fmt.Sprintf("a row longer than %d bytes (a huge cell, a missing newline or an unclosed quote?); want rows of at most %d bytes", maxLine, maxLine), Err: err}
	}
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return &FileError{File: file, Line: pe.Line, Column: pe.Column, Msg: pe.Err.Error(), Err: err}
	}
	return &FileError{File: file, Msg: err.Error(), Err: err}
}
