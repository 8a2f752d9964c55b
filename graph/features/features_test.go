package features

import (
	"encoding/binary"
	"errors"
	"hash/crc32"
	"io/fs"
	"math"
	"math/rand"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func randomMatrix(seed int64, rows, cols int) []float64 {
	rng := rand.New(rand.NewSource(seed))
	x := make([]float64, rows*cols)
	for k := range x {
		x[k] = rng.NormFloat64() * 100
	}
	return x
}

// writeTestFile writes a small valid file and returns its path.
func writeTestFile(t *testing.T, rows, cols int) (string, []float64) {
	t.Helper()
	x := randomMatrix(1, rows, cols)
	path := filepath.Join(t.TempDir(), "x.fmx")
	require.NoError(t, Write(path, x, rows, cols))
	return path, x
}

func TestWriteOpenRoundTrip(t *testing.T) {
	path, x := writeTestFile(t, 37, 5)
	for name, open := range map[string]func(string) (*Matrix, error){"Open": Open, "openRead": openRead} {
		m, err := open(path)
		require.NoError(t, err, name)
		assert.Equal(t, 37, m.Rows(), name)
		assert.Equal(t, 5, m.Cols(), name)
		require.Len(t, m.Data(), 37*5, name)
		for k, v := range x {
			require.Equal(t, float32(v), m.Data()[k], "%s: value %d", name, k)
		}
		assert.Equal(t, []float32{float32(x[10]), float32(x[11]), float32(x[12]), float32(x[13]), float32(x[14])}, m.Row(2), name)
		require.NoError(t, m.Close(), name)
	}
	tmps, _ := filepath.Glob(path + ".*.tmp")
	assert.Empty(t, tmps, "the temporary file is gone")
}

// TestStreamRoundTrip writes with Create/WriteRow and checks the bytes
// against the documented format independently of the package's decoder.
func TestStreamRoundTrip(t *testing.T) {
	rows, cols := 4, 3
	path := filepath.Join(t.TempDir(), "s.fmx")
	w, err := Create(path, rows, cols)
	require.NoError(t, err)
	for i := 0; i < rows; i++ {
		require.NoError(t, w.WriteRow([]float32{float32(i), -0.5 * float32(i), 1e-3}))
		assert.Equal(t, i+1, w.Written())
		_, err := os.Stat(path)
		require.ErrorIs(t, err, fs.ErrNotExist, "nothing at path before Close")
	}
	require.NoError(t, w.Close())
	assert.NoError(t, w.Abort(), "Abort after Close does nothing")
	assert.ErrorContains(t, w.Close(), "already closed")
	assert.ErrorContains(t, w.WriteRow([]float32{1, 2, 3}), "closed")

	b, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Len(t, b, 68+4*rows*cols)
	le := binary.LittleEndian
	tab := crc32.MakeTable(crc32.Castagnoli)
	assert.Equal(t, "FAIRMPX1", string(b[0:8]))
	assert.Equal(t, uint32(1), le.Uint32(b[8:]))
	assert.Equal(t, uint32(1), le.Uint32(b[12:]))
	assert.Equal(t, uint64(rows), le.Uint64(b[16:]))
	assert.Equal(t, uint64(cols), le.Uint64(b[24:]))
	assert.Equal(t, make([]byte, 28), b[32:60])
	assert.Equal(t, crc32.Checksum(b[:60], tab), le.Uint32(b[60:]))
	assert.Equal(t, float32(-1.5), math.Float32frombits(le.Uint32(b[64+4*(3*cols+1):])), "value (3, 1)")
	end := 64 + 4*rows*cols
	assert.Equal(t, crc32.Checksum(b[64:end], tab), le.Uint32(b[end:]))

	m, err := Open(path)
	require.NoError(t, err)
	defer m.Close()
	assert.Equal(t, []float32{2, -1, 1e-3}, m.Row(2))
}

func TestOpenErrors(t *testing.T) {
	path, _ := writeTestFile(t, 6, 4)
	good, err := os.ReadFile(path)
	require.NoError(t, err)
	size := len(good) // 68 + 96 = 164
	dir := t.TempDir()
	le := binary.LittleEndian
	tab := crc32.MakeTable(crc32.Castagnoli)
	variant := func(name string, edit func([]byte) []byte) string {
		b := edit(append([]byte{}, good...))
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, b, 0o644))
		return p
	}
	resealHeader := func(b []byte) { le.PutUint32(b[60:], crc32.Checksum(b[:60], tab)) }
	for _, c := range []struct {
		name string
		edit func([]byte) []byte
		want string
	}{
		{"truncated", func(b []byte) []byte { return b[:size-5] }, "file is 159 bytes, want 164 (64-byte header + 6 × 4 × 4 data bytes + 4-byte trailer): truncated"},
		{"header-only", func(b []byte) []byte { return b[:64] }, "file is 64 bytes, want 164"},
		{"half-header", func(b []byte) []byte { return b[:30] }, "file is 30 bytes, want at least the 64-byte header: truncated"},
		{"extended", func(b []byte) []byte { return append(b, 0) }, "file is 165 bytes, want 164"},
		{"empty", func(b []byte) []byte { return nil }, `starts with "", want the magic "FAIRMPX1"`},
		{"magic", func(b []byte) []byte { copy(b, "PK\x03\x04"); return b }, `starts with "PK\x03\x04MPX1", want the magic "FAIRMPX1": not a fairmp feature file`},
		{"header-byte", func(b []byte) []byte { b[17] ^= 0x10; return b }, "header checksum mismatch: stored CRC-32C"},
		{"data-byte", func(b []byte) []byte { b[64+4*13+2] ^= 0x01; return b }, "data checksum mismatch: stored CRC-32C"},
		{"trailer-byte", func(b []byte) []byte { b[size-1] ^= 0x80; return b }, "data checksum mismatch"},
		{"version", func(b []byte) []byte { le.PutUint32(b[8:], 2); resealHeader(b); return b }, "format version 2, want 1"},
		{"elem", func(b []byte) []byte { le.PutUint32(b[12:], 2); resealHeader(b); return b }, "element type 2, want 1 (float32)"},
		{"reserved", func(b []byte) []byte { b[40] = 1; resealHeader(b); return b }, "reserved header bytes 32..59 are not zero"},
		{"zero-rows", func(b []byte) []byte { le.PutUint64(b[16:], 0); resealHeader(b); return b }, "header: 0 × 4 values, want rows >= 1"},
		{"huge", func(b []byte) []byte { le.PutUint64(b[16:], 1<<62); resealHeader(b); return b }, "exceed the"},
		{"nan", func(b []byte) []byte {
			le.PutUint32(b[64+4*(2*4+3):], math.Float32bits(float32(math.NaN())))
			le.PutUint32(b[size-4:], crc32.Checksum(b[64:size-4], tab))
			return b
		}, "row 2, column 3 is NaN, want a finite value"},
		{"inf", func(b []byte) []byte {
			le.PutUint32(b[64+4*(5*4+0):], math.Float32bits(float32(math.Inf(-1))))
			le.PutUint32(b[size-4:], crc32.Checksum(b[64:size-4], tab))
			return b
		}, "row 5, column 0 is -Inf, want a finite value"},
	} {
		p := variant(c.name, c.edit)
		for name, open := range map[string]func(string) (*Matrix, error){"Open": Open, "openRead": openRead} {
			m, err := open(p)
			assert.Nil(t, m, "%s %s", name, c.name)
			assert.ErrorContains(t, err, c.want, "%s %s", name, c.name)
		}
		_, err := Open(p)
		assert.ErrorContains(t, err, "features: Open "+p+": ", c.name)
	}
	_, err = Open(filepath.Join(dir, "missing.fmx"))
	assert.ErrorIs(t, err, fs.ErrNotExist)
	_, err = Open(dir)
	assert.Error(t, err, "a directory")
}

func TestWriteErrors(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "w.fmx")
	w, err := Create(p, 3, 3)
	require.NoError(t, err)
	require.NoError(t, w.WriteRow([]float32{1, 2, 3}))
	assert.ErrorContains(t, w.WriteRow([]float32{1, 2, float32(math.NaN())}), "row 1, column 2 is NaN, want a finite value")
	assert.ErrorContains(t, w.WriteRow([]float32{float32(math.Inf(1)), 2, 3}), "row 1, column 0 is +Inf")
	assert.ErrorContains(t, w.WriteRow([]float32{1, 2}), "row 1 has 2 values, want 3")
	// A refused row is not written: the writer goes on.
	require.NoError(t, w.WriteRow([]float32{4, 5, 6}))
	require.NoError(t, w.WriteRow([]float32{7, 8, 9}))
	assert.ErrorContains(t, w.WriteRow([]float32{1, 2, 3}), "row 3 is beyond the 3 rows given to Create")
	require.NoError(t, w.Close())
	m, err := Open(p)
	require.NoError(t, err)
	assert.Equal(t, []float32{1, 2, 3, 4, 5, 6, 7, 8, 9}, m.Data())
	require.NoError(t, m.Close())

	for _, c := range []struct {
		rows, cols int
		want       string
	}{{0, 3, "0 rows × 3 cols, want rows >= 1"}, {3, -1, "want rows >= 1 and cols >= 1"}, {math.MaxInt / 2, 1 << 20, "exceed the"}} {
		_, err := Create(filepath.Join(dir, "bad.fmx"), c.rows, c.cols)
		assert.ErrorContains(t, err, c.want)
	}
	_, err = Create("", 1, 1)
	assert.ErrorContains(t, err, "empty path")
	_, err = Create(filepath.Join(dir, "no", "such", "dir.fmx"), 1, 1)
	assert.ErrorIs(t, err, fs.ErrNotExist)

	q := filepath.Join(dir, "q.fmx")
	assert.ErrorContains(t, Write(q, []float64{1, 2, 3}, 2, 2), "3 values, want rows × cols = 2 × 2")
	assert.ErrorContains(t, Write(q, []float64{1, 2, math.NaN(), 4}, 2, 2), "row 1, column 0 is NaN")
	assert.ErrorContains(t, Write(q, []float64{1, 2, 3, 1e39}, 2, 2), "row 1, column 1 is 1e+39, outside float32's range")
	assert.ErrorContains(t, Write(q, nil, 0, 2), "want rows >= 1")
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	for _, e := range entries {
		assert.Equal(t, "w.fmx", e.Name(), "only the good file remains")
	}
}

// TestShortWrite: Close before every row is written creates nothing.
func TestShortWrite(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "short.fmx")
	w, err := Create(p, 5, 2)
	require.NoError(t, err)
	require.NoError(t, w.WriteRow([]float32{1, 2}))
	require.NoError(t, w.WriteRow([]float32{3, 4}))
	tmps, _ := filepath.Glob(p + ".*.tmp")
	require.Len(t, tmps, 1, "the temporary file exists while writing")
	assert.ErrorContains(t, w.Close(), "features: Close "+p+": 2 of the 5 rows given to Create were written; the file was not created")
	for _, q := range []string{p, tmps[0]} {
		_, err := os.Stat(q)
		assert.ErrorIs(t, err, fs.ErrNotExist, q)
	}
	// Abort removes the temporary file too.
	w, err = Create(p, 5, 2)
	require.NoError(t, err)
	require.NoError(t, w.WriteRow([]float32{1, 2}))
	require.NoError(t, w.Abort())
	require.NoError(t, w.Abort())
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Empty(t, entries)
}

func TestGather(t *testing.T) {
	path, x := writeTestFile(t, 10, 3)
	m, err := Open(path)
	require.NoError(t, err)
	dst := make([]float32, 4*3)
	require.NoError(t, m.Gather(dst, []int{9, 0, 4, 9}))
	for k, i := range []int{9, 0, 4, 9} {
		for j := 0; j < 3; j++ {
			assert.Equal(t, float32(x[i*3+j]), dst[k*3+j], "gathered row %d (node %d), column %d", k, i, j)
		}
	}
	before := append([]float32{}, dst...)
	assert.ErrorContains(t, m.Gather(dst, []int{1, 10, 2, 3}), "rows[1] = 10, want a row in [0, 10)")
	assert.ErrorContains(t, m.Gather(dst, []int{1, 2, 3, -1}), "rows[3] = -1")
	assert.Equal(t, before, dst, "nothing copied on error")
	assert.ErrorContains(t, m.Gather(dst, []int{1}), "len(dst) = 12, want len(rows) × Cols = 1 × 3 = 3")
	require.NoError(t, m.Gather(nil, nil))
	assert.Panics(t, func() { m.Row(10) })
	assert.Panics(t, func() { m.Row(-1) })
	require.NoError(t, m.Close())
}

func TestClose(t *testing.T) {
	path, _ := writeTestFile(t, 3, 2)
	m, err := Open(path)
	require.NoError(t, err)
	require.NoError(t, m.Close())
	assert.Nil(t, m.Data())
	err = m.Close()
	assert.ErrorIs(t, err, os.ErrClosed)
	assert.ErrorContains(t, err, "features: Close "+path)
	assert.ErrorContains(t, m.Gather(make([]float32, 2), []int{0}), "closed")
	assert.Panics(t, func() { m.Row(0) })
	assert.Equal(t, 3, m.Rows())
	var e *fs.PathError
	assert.False(t, errors.As(err, &e))
}

// FuzzOpen: no file makes Open panic, and what it opens is consistent
// with its header.
func FuzzOpen(f *testing.F) {
	dir := f.TempDir()
	good := filepath.Join(dir, "good.fmx")
	if err := Write(good, []float64{1, 2, 3, 4, 5, 6}, 3, 2); err != nil {
		f.Fatal(err)
	}
	b, err := os.ReadFile(good)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	f.Add(b[:len(b)/2])
	f.Add([]byte(magic))
	f.Fuzz(func(t *testing.T, data []byte) {
		p := filepath.Join(t.TempDir(), "x.fmx")
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		m, err := Open(p)
		if err != nil {
			return
		}
		defer m.Close()
		if m.Rows()*m.Cols() != len(m.Data()) {
			t.Fatalf("%d × %d matrix with %d values", m.Rows(), m.Cols(), len(m.Data()))
		}
		for i, v := range m.Data() {
			if v != v || v > 3.4e38 || v < -3.4e38 {
				t.Fatalf("value %d is %v: Open must refuse non-finite values", i, v)
			}
		}
	})
}
