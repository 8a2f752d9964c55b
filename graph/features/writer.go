package features

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"os"
	"path/filepath"

	"github.com/fairmp/fairmp/internal/tmpfile"
)

// Writer streams the rows of a feature matrix into a new file. It writes
// to a temporary file beside path (path.NNNN.tmp, unique to the Writer)
// and renames that file to path on a successful Close, so
// a crash, an error or an Abort never leaves a file at path that looks
// complete. A Writer is not safe for concurrent use.
//
// The usual pattern defers Abort, which does nothing once Close has
// succeeded:
//
//	w, err := features.Create(path, n, d)
//	if err != nil { ... }
//	defer w.Abort()
//	... w.WriteRow(x) for every row ...
//	return w.Close()
type Writer struct {
	path, tmp  string
	f          *os.File
	bw         *bufio.Writer
	rows, cols int
	written    int
	crc        uint32
	buf        []byte
	err        error // sticky I/O error
	done       bool  // closed or aborted
}

// Create starts a feature file of rows × cols float32 values at path
// (written to a temporary file of its own beside path until Close). It returns an error if rows or cols is < 1, if the file
// would exceed what this machine can address, or if the temporary file
// cannot be created (wrapping the os error).
func Create(path string, rows, cols int) (*Writer, error) {
	if path == "" {
		return nil, fmt.Errorf("features: Create: empty path, want a file name")
	}
	if rows < 1 || cols < 1 {
		return nil, fmt.Errorf("features: Create %s: %d rows × %d cols, want rows >= 1 and cols >= 1", path, rows, cols)
	}
	if _, err := fileSize(uint64(rows), uint64(cols)); err != nil {
		return nil, fmt.Errorf("features: Create %s: %w", path, err)
	}
	// A temporary name of its own, so that two writers of one path never
	// write into the same file.
	// (os.Create's permissions, 0666 less the umask: the file is the
	// user's to read once renamed.)
	f, err := tmpfile.Create(filepath.Dir(path), filepath.Base(path)+".", ".tmp")
	if err != nil {
		return nil, fmt.Errorf("features: Create %s: %w", path, err)
	}
	tmp := f.Name()
	w := &Writer{path: path, tmp: tmp, f: f, bw: bufio.NewWriterSize(f, 1<<20), rows: rows, cols: cols, buf: make([]byte, 4*cols)}
	if _, err := w.bw.Write(encodeHeader(rows, cols)); err != nil {
		_ = w.Abort()
		return nil, fmt.Errorf("features: Create %s: %w", path, err)
	}
	return w, nil
}

// WriteRow appends the next row: exactly Cols values, all finite. A row
// of the wrong length, a non-finite value (the error names the row and
// column) or a row beyond the count given to Create is refused without
// writing anything, so the caller may correct it and retry or Abort. An
// I/O error is returned again by every later call, and Close then
// removes the temporary file.
func (w *Writer) WriteRow(x []float32) error {
	switch {
	case w.done:
		return fmt.Errorf("features: WriteRow %s: the Writer is closed", w.path)
	case w.err != nil:
		return w.err
	case w.written >= w.rows:
		return fmt.Errorf("features: WriteRow %s: row %d is beyond the %d rows given to Create", w.path, w.written, w.rows)
	case len(x) != w.cols:
		return fmt.Errorf("features: WriteRow %s: row %d has %d values, want %d (the cols given to Create)", w.path, w.written, len(x), w.cols)
	}
	for j, v := range x {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			return fmt.Errorf("features: WriteRow %s: row %d, column %d is %v, want a finite value", w.path, w.written, j, v)
		}
		binary.LittleEndian.PutUint32(w.buf[4*j:], math.Float32bits(v))
	}
	w.crc = crc32.Update(w.crc, castagnoli, w.buf)
	if _, err := w.bw.Write(w.buf); err != nil {
		w.err = fmt.Errorf("features: WriteRow %s: row %d: %w", w.path, w.written, err)
		return w.err
	}
	w.written++
	return nil
}

// Rows returns the number of rows given to Create; Cols the number of
// columns; Written the number of rows written so far.
func (w *Writer) Rows() int { return w.rows }

// Cols returns the number of columns given to Create.
func (w *Writer) Cols() int { return w.cols }

// Written returns the number of rows written so far.
func (w *Writer) Written() int { return w.written }

// Close completes the file: it writes the trailer, syncs the file to disk
// and renames it to the path given to Create. If fewer rows than declared
// were written, or an I/O error occurred, it removes the temporary file
// and returns an error; no file is then created at path. Calling Close
// again returns an error.
func (w *Writer) Close() error {
	if w.done {
		return fmt.Errorf("features: Close %s: the Writer is already closed", w.path)
	}
	if w.err != nil {
		err := w.err
		_ = w.Abort()
		return err
	}
	if w.written < w.rows {
		_ = w.Abort()
		return fmt.Errorf("features: Close %s: %d of the %d rows given to Create were written; the file was not created (temporary file removed)", w.path, w.written, w.rows)
	}
	var t [trailerSize]byte
	binary.LittleEndian.PutUint32(t[:], w.crc)
	_, err := w.bw.Write(t[:])
	if err == nil {
		err = w.bw.Flush()
	}
	if err == nil {
		err = w.f.Sync()
	}
	if cerr := w.f.Close(); err == nil {
		err = cerr
	}
	w.done = true
	if err == nil {
		err = os.Rename(w.tmp, w.path)
	}
	if err != nil {
		_ = os.Remove(w.tmp)
		return fmt.Errorf("features: Close %s: %w", w.path, err)
	}
	return nil
}

// Abort discards the file: it closes and removes the temporary file. It
// does nothing and returns nil after Close or Abort, so it can be
// deferred.
func (w *Writer) Abort() error {
	if w.done {
		return nil
	}
	w.done = true
	_ = w.f.Close()
	if err := os.Remove(w.tmp); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("features: Abort %s: %w", w.path, err)
	}
	return nil
}

// Write writes a whole rows × cols matrix held in memory (row-major, for
// example a datasets.Dataset's Features) to a feature file at path,
// converting the values to float32. It returns an error, and leaves no
// file, if len(x) != rows·cols, or if a value is not finite or outside
// float32's range (±3.4e38), naming its row and column.
func Write(path string, x []float64, rows, cols int) error {
	if rows < 1 || cols < 1 {
		return fmt.Errorf("features: Write %s: %d rows × %d cols, want rows >= 1 and cols >= 1", path, rows, cols)
	}
	if rows > math.MaxInt/cols || len(x) != rows*cols {
		return fmt.Errorf("features: Write %s: %d values, want rows × cols = %d × %d", path, len(x), rows, cols)
	}
	w, err := Create(path, rows, cols)
	if err != nil {
		return err
	}
	defer w.Abort()
	row := make([]float32, cols)
	for i := 0; i < rows; i++ {
		for j, v := range x[i*cols : (i+1)*cols] {
			f := float32(v)
			if !math.IsNaN(v) && !math.IsInf(v, 0) && math.IsInf(float64(f), 0) {
				return fmt.Errorf("features: Write %s: row %d, column %d is %g, outside float32's range (±3.4e38)", path, i, j, v)
			}
			row[j] = f
		}
		if err := w.WriteRow(row); err != nil {
			return err
		}
	}
	return w.Close()
}
