package cli

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestResolvePath(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	require.NoError(t, os.MkdirAll(filepath.Join(root, "a", "b"), 0o755))
	require.NoError(t, os.Symlink(filepath.Join(root, "a", "b"), filepath.Join(root, "link")))

	for in, want := range map[string]string{
		filepath.Join(root, "link", "new", "f"): filepath.Join(root, "a", "b", "new", "f"), // link followed, missing tail kept
		root + "/link/../x":                     filepath.Join(root, "a", "x"),             // ".." after a link: the target's parent (not filepath.Join: it would clean it away)
		root + "/a/./b":                         filepath.Join(root, "a", "b"),
	} {
		got, err := ResolvePath(in)
		require.NoError(t, err, in)
		assert.Equal(t, want, got, in)
	}
	_, err = ResolvePath("")
	assert.Error(t, err)

	assert.True(t, Within(root, filepath.Join(root, "a")))
	assert.True(t, Within(root, root))
	assert.False(t, Within(filepath.Join(root, "a"), root))
	assert.False(t, Within(filepath.Join(root, "a"), filepath.Join(root, "ab")), "a prefix of the name is not a parent")
}

func TestReplaceFile(t *testing.T) {
	dir := t.TempDir()
	mark := []byte("method,seed")
	p := filepath.Join(dir, "runs.csv")

	require.NoError(t, ReplaceFile(p, []byte("method,seed\n1\n"), mark), "a new file")
	require.NoError(t, ReplaceFile(p, []byte("method,seed\n2\n"), mark), "our own file is replaced")
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	assert.Equal(t, "method,seed\n2\n", string(b))
	require.NoError(t, os.Chmod(p, 0o600))
	require.NoError(t, ReplaceFile(p, []byte("method,seed\n2\n"), mark))
	fi, err := os.Stat(p)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm(), "a replaced file keeps its permissions")

	mine := filepath.Join(dir, "mine.csv")
	require.NoError(t, os.WriteFile(mine, []byte("a user's table\n"), 0o644))
	err = ReplaceFile(mine, []byte("method,seed\n"), mark)
	assert.ErrorIs(t, err, ErrNotOurs)
	b, err = os.ReadFile(mine)
	require.NoError(t, err)
	assert.Equal(t, "a user's table\n", string(b), "a file not ours is left as it was")

	link := filepath.Join(dir, "link.csv")
	require.NoError(t, os.Symlink(p, link))
	assert.ErrorIs(t, ReplaceFile(link, []byte("method,seed\n3\n"), mark), ErrNotOurs, "a symlink in the way is not replaced")

	es, err := os.ReadDir(dir)
	require.NoError(t, err)
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	assert.ElementsMatch(t, []string{"runs.csv", "mine.csv", "link.csv"}, names, "no temporary file left behind")
}
