package datasets

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/parquet-go/parquet-go"
)

// Limits of the Parquet reader, the counterparts of the text readers'
// byte caps: the footer (the file's schema and row-group index), what a
// row group says its columns take uncompressed (a row group is read whole
// before its rows are parsed), and a cell (as a CSV row).
const (
	maxParquetFooter   = 64 << 20
	maxParquetRowGroup = 1 << 30
	maxParquetColumns  = 1 << 16
	parquetBatch       = 1024
)

// isParquet reports whether path is read as Parquet: format "parquet", or
// format "" and a name ending in .parquet (any case).
func isParquet(path, format string) bool {
	if format != "" {
		return format == "parquet"
	}
	return strings.EqualFold(filepath.Ext(path), ".parquet")
}

// parquetFile is an open Parquet file whose footer and row groups were
// checked against the limits.
type parquetFile struct {
	path    string
	f       *os.File
	pf      *parquet.File
	columns []string
}

// openParquet opens path and checks, before the library reads it, the
// magic bytes and the footer's size (at most maxParquetFooter, within the
// file), then the schema (flat: one value per column per row, no nested
// or repeated column, at most maxParquetColumns) and the row groups' sizes
// (at most maxParquetRowGroup uncompressed each).
func openParquet(path string) (*parquetFile, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, &FileError{File: path, Msg: err.Error(), Err: err}
	}
	fail := func(err error) (*parquetFile, error) {
		f.Close()
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		return fail(&FileError{File: path, Msg: err.Error(), Err: err})
	}
	size := st.Size()
	var head, tail [8]byte
	if size < 12 {
		return fail(rowErr(path, 0, 0, "%d bytes: not a Parquet file (want the PAR1 magic bytes at both ends); a text file is read with the csv format", size))
	}
	if _, err := f.ReadAt(head[:4], 0); err != nil {
		return fail(&FileError{File: path, Msg: err.Error(), Err: err})
	}
	if _, err := f.ReadAt(tail[:], size-8); err != nil {
		return fail(&FileError{File: path, Msg: err.Error(), Err: err})
	}
	if string(head[:4]) != "PAR1" || string(tail[4:]) != "PAR1" {
		return fail(rowErr(path, 0, 0, "not a Parquet file: no PAR1 magic bytes at both ends (an encrypted or cut file, or text: a text file is read with the csv format)"))
	}
	footer := int64(binary.LittleEndian.Uint32(tail[:4]))
	if footer > size-12 || footer > maxParquetFooter {
		return fail(rowErr(path, 0, 0, "its footer claims %d bytes, more than the file's %d or the limit of %d: a cut or damaged file", footer, size, maxParquetFooter))
	}
	pf, err := parquet.OpenFile(f, size, parquet.SkipBloomFilters(true), parquet.SkipPageIndex(true))
	if err != nil {
		return fail(&FileError{File: path, Msg: "not a readable Parquet file: " + err.Error(), Err: err})
	}
	p := &parquetFile{path: path, f: f, pf: pf}
	fields := pf.Schema().Fields()
	if len(fields) > maxParquetColumns {
		return fail(rowErr(path, 0, 0, "%d columns, more than the limit of %d", len(fields), maxParquetColumns))
	}
	for k, fd := range fields {
		if !fd.Leaf() || fd.Repeated() {
			return fail(rowErr(path, 0, k+1, "column %s is nested or repeated (a list, a map or a group), want flat columns of numbers, text or booleans", quote(fd.Name())))
		}
		p.columns = append(p.columns, fd.Name())
	}
	if len(pf.Schema().Columns()) != len(fields) {
		return fail(rowErr(path, 0, 0, "nested columns, want flat columns of numbers, text or booleans"))
	}
	for g, rg := range pf.Metadata().RowGroups {
		if rg.TotalByteSize < 0 || rg.TotalByteSize > maxParquetRowGroup {
			return fail(rowErr(path, 0, 0, "row group %d holds %d bytes uncompressed, more than the limit of %d: write the file with smaller row groups", g+1, rg.TotalByteSize, maxParquetRowGroup))
		}
	}
	return p, nil
}

func (p *parquetFile) Close() error { return p.f.Close() }

// rows calls f with every row's cells as text (cellText), row numbers
// counting from 1, reading one row group at a time in batches.
func (p *parquetFile) rows(f func(row int, cells []string) error) error {
	buf := make([]parquet.Row, parquetBatch)
	cells := make([]string, len(p.columns))
	row := 0
	for _, rg := range p.pf.RowGroups() {
		rs := rg.Rows()
		for {
			n, err := rs.ReadRows(buf)
			for _, r := range buf[:n] {
				row++
				if len(r) != len(cells) {
					rs.Close()
					return rowErr(p.path, row, 0, "%d values, want one per column (%d)", len(r), len(cells))
				}
				for _, v := range r {
					k := v.Column()
					if k < 0 || k >= len(cells) {
						rs.Close()
						return rowErr(p.path, row, 0, "a value of column %d, the file has %d", k+1, len(cells))
					}
					s, msg := cellText(v)
					if msg != "" {
						rs.Close()
						return rowErr(p.path, row, k+1, "column %s: %s", quote(p.columns[k]), msg)
					}
					cells[k] = s
				}
				if err := f(row, cells); err != nil {
					rs.Close()
					return err
				}
			}
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				rs.Close()
				return &FileError{File: p.path, Line: row + 1, Rows: true, Msg: "reading the rows: " + err.Error(), Err: err}
			}
		}
		rs.Close()
	}
	return nil
}

// cellText writes a Parquet value as the text cell the CSV reader would
// have read: a null is the empty cell, numbers in their shortest exact
// form, booleans true and false, byte arrays as UTF-8 text of at most
// maxLine bytes. It returns a message for a value that is none of these.
func cellText(v parquet.Value) (string, string) {
	if v.IsNull() {
		return "", ""
	}
	switch v.Kind() {
	case parquet.Boolean:
		return strconv.FormatBool(v.Boolean()), ""
	case parquet.Int32:
		return strconv.FormatInt(int64(v.Int32()), 10), ""
	case parquet.Int64:
		return strconv.FormatInt(v.Int64(), 10), ""
	case parquet.Float:
		return strconv.FormatFloat(float64(v.Float()), 'g', -1, 32), ""
	case parquet.Double:
		return strconv.FormatFloat(v.Double(), 'g', -1, 64), ""
	case parquet.ByteArray, parquet.FixedLenByteArray:
		b := v.ByteArray()
		if len(b) > maxLine {
			return "", fmt.Sprintf("a value of %d bytes, want at most %d", len(b), maxLine)
		}
		if !utf8.Valid(b) {
			return "", fmt.Sprintf("%s is not valid UTF-8 text", quote(strings.ToValidUTF8(string(b), "\ufffd")))
		}
		return string(b), ""
	}
	return "", fmt.Sprintf("a value of type %v, want numbers, text or booleans", v.Kind())
}

// readParquetTable reads a node table from a Parquet file: its columns by
// name, every row's cells through the same checks as a CSV row
// (tableBuilder); errors name the row and the column.
func readParquetTable(path string, spec tableSpec) (*table, error) {
	p, err := openParquet(path)
	if err != nil {
		return nil, err
	}
	defer p.Close()
	tb, err := newTableBuilder(path, p.columns, spec, true)
	if err != nil {
		return nil, err
	}
	err = p.rows(func(row int, cells []string) error {
		return tb.record(cells, row, func(k int) (int, int) { return row, k + 1 })
	})
	if err != nil {
		return nil, err
	}
	return tb.done()
}

// parquetEdges reads an edge list from a Parquet file: its first two
// columns name the nodes (ids, or rows without an id column, integral
// numbers in any type), an optional third numeric column is a weight
// (ignored, with a warning), as in a text edge list.
func parquetEdges(path string, n int, index map[string]int, ds *Dataset) ([][2]int, error) {
	p, err := openParquet(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, &FileError{File: path, Msg: "missing edge file: " + err.(*FileError).Msg, Err: err}
	}
	if err != nil {
		return nil, err
	}
	defer p.Close()
	if c := len(p.columns); c != 2 && c != 3 {
		return nil, rowErr(path, 0, 0, "%d columns (%s), want 2 node references (and optionally a weight)", c, strings.Join(p.columns, ", "))
	}
	fields := make([]field, len(p.columns))
	edges, err := scanUserEdges(path, n, index, ds, rowErr, false, func(f func(int, []field) error) error {
		return p.rows(func(row int, cells []string) error {
			for k, c := range cells {
				fields[k] = field{s: c, col: k + 1}
			}
			return f(row, fields)
		})
	})
	if err != nil {
		return nil, err
	}
	if len(edges) == 0 {
		return nil, rowErr(path, 0, 0, "no edges: the file holds no pair of nodes, want at least one edge (a graph without edges is almost always a wrong file)")
	}
	return edges, nil
}
