package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func all(string) bool { return true }

func ls(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	require.NoError(t, err)
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}

func touch(t *testing.T, dir string, names ...string) {
	t.Helper()
	for _, n := range names {
		require.NoError(t, os.WriteFile(filepath.Join(dir, n), []byte(n), 0o644))
	}
}

func TestClaimDirRemovesOnlyItsOwnStaleFiles(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "a", "out")
	got, err := ClaimDir("-out", dir, "prep", []string{"nodes-00000.txt", "nodes-00001.txt", "reference.json"}, all)
	require.NoError(t, err)
	assert.Equal(t, dir, got, "a missing folder is created")
	touch(t, dir, "nodes-00000.txt", "nodes-00001.txt", "reference.json", "nodes-00001.txt.tmp")

	// Fewer shards and no reference: the last run's others go, with the
	// temporary file a killed run left.
	_, err = ClaimDir("-out", dir, "prep", []string{"nodes-00000.txt"}, all)
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{ManifestName("prep"), "nodes-00000.txt"}, ls(t, dir))
	b, err := os.ReadFile(filepath.Join(dir, ManifestName("prep")))
	require.NoError(t, err)
	assert.Equal(t, manifestMagic+"prep\nnodes-00000.txt\n", string(b))

	// A stage that keeps the others' files: stale says which are its own.
	touch(t, dir, "run-graph.json")
	_, err = ClaimDir("-out", dir, "prep", []string{"run-graph.json"}, func(n string) bool { return n == "run-graph.json" })
	assert.ErrorIs(t, err, ErrNotOurs, "run-graph.json was written before any manifest listed it")
	require.NoError(t, os.Remove(filepath.Join(dir, "run-graph.json")))
	_, err = ClaimDir("-out", dir, "prep", []string{"run-graph.json"}, func(n string) bool { return strings.HasPrefix(n, "run-") })
	require.NoError(t, err)
	touch(t, dir, "run-graph.json")
	_, err = ClaimDir("-out", dir, "prep", []string{"run-infer.json"}, func(n string) bool { return n == "run-infer.json" })
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{ManifestName("prep"), "nodes-00000.txt", "run-graph.json"}, ls(t, dir), "other stages' files are kept")
	b, err = os.ReadFile(filepath.Join(dir, ManifestName("prep")))
	require.NoError(t, err)
	assert.Equal(t, manifestMagic+"prep\nnodes-00000.txt\nrun-graph.json\nrun-infer.json\n", string(b))
}

func TestClaimDirRefusesWhatItDidNotWriteInItsWay(t *testing.T) {
	root := t.TempDir()
	names := []string{"model.fmp"}

	user := filepath.Join(root, "user")
	require.NoError(t, os.Mkdir(user, 0o755))
	touch(t, user, "model.fmp")
	_, err := ClaimDir("-out", user, "prep", names, all)
	assert.ErrorIs(t, err, ErrNotOurs, "files and no manifest")
	assert.Contains(t, err.Error(), "-out "+user)
	assert.Equal(t, []string{"model.fmp"}, ls(t, user), "left as it was")

	mixed := filepath.Join(root, "mixed")
	_, err = ClaimDir("-out", mixed, "prep", names, all)
	require.NoError(t, err)
	touch(t, mixed, "model.fmp", "notes.txt")
	_, err = ClaimDir("-out", mixed, "prep", names, all)
	assert.ErrorIs(t, err, ErrNotOurs)
	assert.Contains(t, err.Error(), "notes.txt")
	assert.ElementsMatch(t, []string{ManifestName("prep"), "model.fmp", "notes.txt"}, ls(t, mixed))
	_, err = ClaimDir("-out", mixed, "prep", names, func(n string) bool { return n == "model.fmp" })
	require.NoError(t, err, "a file of no family of the run's is not in the way")
	assert.ElementsMatch(t, []string{ManifestName("prep"), "model.fmp", "notes.txt"}, ls(t, mixed), "and is left alone")

	other := filepath.Join(root, "other")
	_, err = ClaimDir("-out", other, "other-command", []string{"x.json"}, all)
	require.NoError(t, err)
	touch(t, other, "x.json")
	_, err = ClaimDir("-out", other, "prep", names, func(n string) bool { return n == "model.fmp" })
	require.NoError(t, err, "two commands write one folder, each its own files")
	assert.ElementsMatch(t, []string{ManifestName("prep"), ManifestName("other-command"), "x.json"}, ls(t, other))
	require.NoError(t, os.WriteFile(filepath.Join(other, ManifestName("prep")), []byte(manifestMagic+"other-command\n"), 0o644))
	_, err = ClaimDir("-out", other, "prep", names, all)
	assert.ErrorIs(t, err, ErrNotOurs, "a list that names another command")

	link := filepath.Join(root, "link")
	_, err = ClaimDir("-out", link, "prep", names, all)
	require.NoError(t, err)
	require.NoError(t, os.Symlink(filepath.Join(user, "model.fmp"), filepath.Join(link, "model.fmp")))
	_, err = ClaimDir("-out", link, "prep", names, all)
	assert.ErrorIs(t, err, ErrNotOurs, "a symlink with a listed name")
	b, err := os.ReadFile(filepath.Join(user, "model.fmp"))
	require.NoError(t, err)
	assert.Equal(t, "model.fmp", string(b))

	tmpLink := filepath.Join(root, "tmplink")
	require.NoError(t, os.Mkdir(tmpLink, 0o755))
	require.NoError(t, os.Symlink(filepath.Join(user, "model.fmp"), filepath.Join(tmpLink, "model.fmp.tmp")))
	_, err = ClaimDir("-out", tmpLink, "prep", names, func(n string) bool { return n == "model.fmp" })
	assert.ErrorIs(t, err, ErrNotOurs, "a link at a writer's temporary name of a file the run writes")
	assert.Contains(t, err.Error(), "model.fmp.tmp")

	damaged := filepath.Join(root, "damaged")
	require.NoError(t, os.Mkdir(damaged, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(damaged, ManifestName("prep")), []byte(manifestMagic+"prep\n../user/model.fmp\n"), 0o644))
	_, err = ClaimDir("-out", damaged, "prep", names, all)
	require.Error(t, err)
	assert.Contains(t, err.Error(), ManifestName("prep")+":2:")
	assert.Equal(t, []string{"model.fmp"}, ls(t, user), "nothing outside the folder is touched")

	file := filepath.Join(root, "file")
	touch(t, root, "file")
	_, err = ClaimDir("-out", file, "prep", names, all)
	assert.ErrorContains(t, err, "is a file, want a folder")

	_, err = ClaimDir("-out", filepath.Join(root, "bad"), "prep", []string{"../x"}, all)
	assert.Error(t, err, "a name with a folder is the caller's mistake")
}

func TestClaimWorkDirClearsTheStaleStagesOnly(t *testing.T) {
	root := t.TempDir()
	work := filepath.Join(root, "work")
	blk := func(n string) bool { return strings.HasSuffix(n, ".blk") }
	logits := func(n string) bool { return strings.HasPrefix(n, "logits-") }

	got, err := ClaimWorkDir("-work", work, "job", blk)
	require.NoError(t, err)
	assert.Equal(t, work, got)
	touch(t, work, "nodes-00000000.blk", "nodes-00000001.blk", "logits-00000000.blk", "logits-00000001.blk.tmp", "stats.json")
	_, err = ClaimWorkDir("-work", work, "job", logits)
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{".job.work", "nodes-00000000.blk", "nodes-00000001.blk", "stats.json"}, ls(t, work),
		"a later stage's files go, the earlier stages' stay")
	_, err = ClaimWorkDir("-work", work, "job", blk)
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{".job.work", "stats.json"}, ls(t, work))
	_, err = ClaimDir("-out", work, "job", []string{"x.json"}, all)
	assert.ErrorIs(t, err, ErrNotOurs, "a work folder is not an output folder (stats.json is in the way)")
	_, err = ClaimDir("-out", work, "job", []string{"x.json"}, func(n string) bool { return n == "x.json" })
	require.NoError(t, err, "but the two markers do not collide")
	_, err = ClaimWorkDir("-work", work, "job", blk)
	require.NoError(t, err)

	user := filepath.Join(root, "user")
	require.NoError(t, os.Mkdir(user, 0o755))
	touch(t, user, "nodes-00000000.blk")
	_, err = ClaimWorkDir("-work", user, "job", blk)
	assert.ErrorIs(t, err, ErrNotOurs, "a folder with files and no marker")
	assert.Equal(t, []string{"nodes-00000000.blk"}, ls(t, user), "left as it was")
	_, err = ClaimWorkDir("-work", work, "other", blk)
	assert.ErrorIs(t, err, ErrNotOurs, "another command's work folder")

	require.NoError(t, os.Symlink(filepath.Join(user, "nodes-00000000.blk"), filepath.Join(work, "fmp-00000000.blk")))
	_, err = ClaimWorkDir("-work", work, "job", blk)
	assert.ErrorIs(t, err, ErrNotOurs, "a link is not removed")
	assert.FileExists(t, filepath.Join(user, "nodes-00000000.blk"))
}
