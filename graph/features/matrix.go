package features

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
)

// Matrix is an open, read-only feature file: rows × cols float32 values,
// row-major. On unix systems the values are a memory mapping of the file,
// not a copy. Its methods are safe for concurrent use, except Close,
// which must not run concurrently with any other method.
type Matrix struct {
	path       string
	rows, cols int
	data       []float32
	unmap      func() error // nil when the data are in memory
	closed     bool
}

// Open opens and checks a feature file: the magic, version, element type
// and header checksum, the exact file size (a truncated file is an error
// giving the expected and actual sizes), the data checksum and that every
// value is finite. The check is one streaming pass over the file. On unix
// systems the file is memory-mapped, not copied; elsewhere (and on
// big-endian machines) it is read into memory.
func Open(path string) (*Matrix, error) {
	m, err := open(path)
	if err != nil {
		return nil, fmt.Errorf("features: Open %s: %w", path, err)
	}
	return m, nil
}

// readHeader reads the first bytes of f and checks the header against the
// file's size.
func readHeader(f *os.File) (rows, cols int, size int64, err error) {
	st, err := f.Stat()
	if err != nil {
		return 0, 0, 0, err
	}
	size = st.Size()
	if !st.Mode().IsRegular() {
		return 0, 0, 0, fmt.Errorf("not a regular file (mode %v)", st.Mode())
	}
	h := make([]byte, min(size, headerSize))
	if _, err := f.ReadAt(h, 0); err != nil {
		return 0, 0, 0, err
	}
	rows, cols, err = decodeHeader(h, size)
	return rows, cols, size, err
}

// openRead reads a checked file into memory, decoding the values
// explicitly (correct on any byte order).
func openRead(path string) (*Matrix, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	rows, cols, _, err := readHeader(f)
	if err != nil {
		return nil, err
	}
	data := make([]float32, rows*cols)
	c := newChecker()
	buf := make([]byte, 1<<16)
	off := int64(headerSize)
	for pos := 0; pos < len(data); {
		b := buf[:4*min(len(buf)/4, len(data)-pos)]
		if _, err := f.ReadAt(b, off); err != nil {
			return nil, fmt.Errorf("reading values at byte %d: %w", off, err)
		}
		c.update(b)
		for k := range len(b) / 4 {
			data[pos+k] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*k:]))
		}
		pos += len(b) / 4
		off += int64(len(b))
	}
	var t [trailerSize]byte
	if _, err := f.ReadAt(t[:], off); err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("reading the trailer at byte %d: %w", off, err)
	}
	if err := c.finish(t[:], cols); err != nil {
		return nil, err
	}
	return &Matrix{path: path, rows: rows, cols: cols, data: data}, nil
}

// Rows returns the number of rows.
func (m *Matrix) Rows() int { return m.rows }

// Cols returns the number of columns.
func (m *Matrix) Cols() int { return m.cols }

// Path returns the file's path as given to Open.
func (m *Matrix) Path() string { return m.path }

// Data returns all Rows × Cols values, row-major: value (i, j) is
// Data()[i*Cols()+j]. On unix systems it is a view of the mapping, not a
// copy: it must not be modified (the mapping is read-only; writing to it
// crashes the program), and it is invalid after Close (reading it then
// crashes the program). Data returns nil after Close.
func (m *Matrix) Data() []float32 { return m.data }

// Row returns row i as a view of Data (same rules). It panics if i is
// out of range or the Matrix is closed (programmer errors).
func (m *Matrix) Row(i int) []float32 {
	if m.closed {
		panic(fmt.Sprintf("features: Row(%d) of a closed Matrix (%s)", i, m.path))
	}
	if i < 0 || i >= m.rows {
		panic(fmt.Sprintf("features: Row(%d) out of range [0, %d)", i, m.rows))
	}
	return m.data[i*m.cols : (i+1)*m.cols : (i+1)*m.cols]
}

// Gather copies the given rows, in order, into dst, which must hold
// len(rows)·Cols() values; rows may repeat. It returns an error, before
// copying anything, if len(dst) is wrong, if a row id is out of range
// (naming its position in rows) or if the Matrix is closed.
func (m *Matrix) Gather(dst []float32, rows []int) error {
	if m.closed {
		return fmt.Errorf("features: Gather: %s is closed", m.path)
	}
	if len(dst) != len(rows)*m.cols {
		return fmt.Errorf("features: Gather: len(dst) = %d, want len(rows) × Cols = %d × %d = %d", len(dst), len(rows), m.cols, len(rows)*m.cols)
	}
	for k, i := range rows {
		if i < 0 || i >= m.rows {
			return fmt.Errorf("features: Gather: rows[%d] = %d, want a row in [0, %d)", k, i, m.rows)
		}
	}
	for k, i := range rows {
		copy(dst[k*m.cols:(k+1)*m.cols], m.data[i*m.cols:(i+1)*m.cols])
	}
	return nil
}

// Close releases the Matrix (unmaps the file). Slices returned by Data
// and Row must not be used afterwards. Closing an already closed Matrix
// returns an error wrapping os.ErrClosed and does nothing else.
func (m *Matrix) Close() error {
	if m.closed {
		return fmt.Errorf("features: Close %s: %w", m.path, os.ErrClosed)
	}
	m.closed = true
	m.data = nil
	if m.unmap != nil {
		u := m.unmap
		m.unmap = nil
		if err := u(); err != nil {
			return fmt.Errorf("features: Close %s: %w", m.path, err)
		}
	}
	return nil
}
