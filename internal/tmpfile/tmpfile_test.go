package tmpfile

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCreateGivesNewNames(t *testing.T) {
	dir := t.TempDir()
	names := map[string]bool{}
	for i := 0; i < 50; i++ {
		f, err := Create(dir, "x", "")
		require.NoError(t, err)
		assert.False(t, names[f.Name()], "a name given twice")
		names[f.Name()] = true
		require.NoError(t, f.Close())
	}
	_, err := Create(filepath.Join(dir, "missing"), "x", "")
	assert.Error(t, err, "a folder that does not exist")
}
