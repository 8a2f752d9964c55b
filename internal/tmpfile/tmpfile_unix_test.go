//go:build unix

package tmpfile

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCreateNewFileWithUmaskPermissions(t *testing.T) {
	old := syscall.Umask(0o027)
	defer syscall.Umask(old)
	dir := t.TempDir()
	f, err := Create(dir, ".out.", ".tmp")
	require.NoError(t, err)
	defer f.Close()
	base := filepath.Base(f.Name())
	assert.True(t, strings.HasPrefix(base, ".out.") && strings.HasSuffix(base, ".tmp"), base)
	fi, err := os.Stat(f.Name())
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o640), fi.Mode().Perm(), "0666 less the umask 027")
}
