package npy

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The files in testdata were written by numpy 1.24 (numpy.save, and
// numpy.lib.format.write_array for version 2.0).
func TestReadNumpyFiles(t *testing.T) {
	m, err := ReadFile("testdata/f8_2d.npy")
	require.NoError(t, err)
	assert.Equal(t, &Matrix{Rows: 3, Cols: 2, Dtype: "<f8", Data: []float64{0.5, -1.25, 2, 3, 0, 1e-3}}, m)
	m, err = ReadFile("testdata/f4_1d.npy")
	require.NoError(t, err)
	assert.Equal(t, 4, m.Rows)
	assert.Equal(t, 1, m.Cols)
	assert.Equal(t, []float64{float64(float32(0.1)), float64(float32(0.9)), 0.5, 1}, m.Data)
	m, err = ReadFile("testdata/v2.npy")
	require.NoError(t, err)
	assert.Equal(t, []float64{1, 2}, m.Data)

	for file, want := range map[string]string{
		"fortran.npy": "Fortran (column-major) order, want C order",
		"int.npy":     `dtype "<i8", want little-endian float32 ('<f4') or float64 ('<f8') (integers`,
		"big.npy":     `dtype ">f8", want little-endian float32 ('<f4') or float64 ('<f8') (big-endian`,
		"3d.npy":      "shape [2 2 2], want (nodes,) or (nodes, classes)",
		"nan.npy":     "row 2, column 1: NaN, want finite scores",
	} {
		_, err := ReadFile(filepath.Join("testdata", file))
		require.Error(t, err, file)
		assert.ErrorIs(t, err, ErrFormat)
		assert.Contains(t, err.Error(), want, file)
	}
}

// Cut, padded and lying files are refused before anything is allocated
// for what they claim.
func TestReadBounded(t *testing.T) {
	b, err := os.ReadFile("testdata/f8_2d.npy")
	require.NoError(t, err)
	read := func(b []byte) error {
		_, err := Read(bytes.NewReader(b), int64(len(b)))
		return err
	}
	assert.ErrorContains(t, read(b[:len(b)-3]), "shape [3 2] of <f8 takes 48 bytes, the file holds 45")
	assert.ErrorContains(t, read(append(append([]byte{}, b...), 0)), "the file holds 49")
	assert.ErrorContains(t, read(b[:5]), "shorter than the magic string")
	assert.ErrorContains(t, read([]byte("0,1\n1,0\n2,2\n")), "no \\x93NUMPY magic string")
	huge := append([]byte{}, b...)
	binary.LittleEndian.PutUint16(huge[8:], 0xffff)
	assert.ErrorContains(t, read(huge), "the header claims 65535 bytes")
	v2 := append([]byte("\x93NUMPY\x02\x00"), 0xff, 0xff, 0xff, 0x7f)
	assert.ErrorContains(t, read(v2), "the header claims 2147483647 bytes")
	big := bytes.Replace(b, []byte("'shape': (3, 2), }"), []byte("'shape': (999999999999,), }"), 1)
	assert.ErrorContains(t, read(big), "takes 7999999999992 bytes")
	for _, h := range []string{
		"{'descr': '<f8', 'fortran_order': False}",
		"{'descr': '<f8', 'fortran_order': Maybe, 'shape': (1,)}",
		"{'descr': '<f8', 'fortran_order': False, 'shape': (1,), 'extra': 1}",
		"{'descr': '<f8', 'descr': '<f8', 'fortran_order': False, 'shape': (1,)}",
		"['descr']",
		"{'descr': [('a', '<f8')], 'fortran_order': False, 'shape': (1,)}",
	} {
		_, err := parseHeader(h)
		assert.ErrorIs(t, err, ErrFormat, h)
	}
}

// FuzzRead: no input panics.
func FuzzRead(f *testing.F) {
	for _, name := range []string{"f8_2d.npy", "f4_1d.npy", "v2.npy", "nan.npy"} {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		require.NoError(f, err)
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := Read(bytes.NewReader(b), int64(len(b)))
		if err == nil && len(m.Data) != m.Rows*m.Cols {
			t.Fatalf("%d values for %d × %d", len(m.Data), m.Rows, m.Cols)
		}
	})
}
