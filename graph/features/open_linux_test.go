//go:build linux

package features

import (
	"encoding/binary"
	"math"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestOpenMaps checks that Open maps the file rather than copying it: a
// change written to the file after Open shows through Data (a shared
// mapping of the page cache).
func TestOpenMaps(t *testing.T) {
	path, x := writeTestFile(t, 5, 2)
	m, err := Open(path)
	require.NoError(t, err)
	defer m.Close()
	assert.Equal(t, float32(x[7]), m.Data()[7])
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	require.NoError(t, err)
	var b [4]byte
	binary.LittleEndian.PutUint32(b[:], math.Float32bits(42.5))
	_, err = f.WriteAt(b[:], headerSize+4*7)
	require.NoError(t, err)
	require.NoError(t, f.Close())
	assert.Equal(t, float32(42.5), m.Data()[7], "Data is a view of the file")
}
