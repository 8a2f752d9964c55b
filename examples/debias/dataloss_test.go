package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// snapshot reads every file of a folder (not recursing): what must stay
// as it was.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, name := range entries(t, dir) {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err == nil {
			out[name] = string(b)
		}
	}
	return out
}

// swapArg returns args with the value after flag replaced.
func swapArg(args []string, flag, value string) []string {
	out := append([]string{}, args...)
	for k := range out {
		if out[k] == flag && k+1 < len(out) {
			out[k+1] = value
		}
	}
	return out
}

// Issue 40, defect 1: -overwrite -out through a symlink (or a ".." after
// one) deleted the input folder: -out was compared as written, the inputs
// resolved. Every spelling of the input folder is refused, naming the
// flags, and the input is untouched.
func TestOutThroughSymlink(t *testing.T) {
	base := t.TempDir()
	in := filepath.Join(base, "dd", "IN")
	require.NoError(t, os.MkdirAll(in, 0o755))
	args := userFiles(t, in, 200, 4)
	require.NoError(t, os.Symlink(filepath.Join(base, "dd"), filepath.Join(base, "ddlink")))
	require.NoError(t, os.Mkdir(filepath.Join(base, "other"), 0o755))
	require.NoError(t, os.Symlink(in, filepath.Join(base, "other", "inlink")))
	before := snapshot(t, in)
	for _, out := range []string{
		filepath.Join(base, "ddlink", "IN"),               // a symlinked parent
		filepath.Join(base, "ddlink"),                     // a symlink to the input's parent
		filepath.Join(base, "other", "inlink"),            // a symlink to the input folder
		filepath.Join(base, "other", "inlink") + "/../IN", // ".." after a symlink
	} {
		code, _, stderr := runCmd(append(append(append([]string{}, args...), fast...), "-overwrite", "-out", out)...)
		assert.Equal(t, 2, code, "-out %s: %s", out, stderr)
		assert.Contains(t, stderr, "-out "+out, "names -out as given")
		assert.Regexp(t, `holds the input -(nodes|edges) `, stderr, "names the input's flag")
		assert.Equal(t, before, snapshot(t, in), "-out %s: the input folder is untouched", out)
	}
}

// Issue 40, defect 3: -export truncated and rewrote existing files, the
// input included, without -overwrite. An existing folder is refused
// without -overwrite, a folder holding an input always, and an export is
// swapped in whole like the results.
func TestExportNoClobber(t *testing.T) {
	base := t.TempDir()
	e := filepath.Join(base, "E")
	require.NoError(t, os.Mkdir(e, 0o755))
	args := userFiles(t, e, 200, 4)
	before := snapshot(t, e)
	for _, extra := range [][]string{nil, {"-overwrite"}} {
		code, _, stderr := runCmd(append(append(append([]string{}, args...), "-drop", "x0", "-q", "-export", e), extra...)...)
		assert.Equal(t, 2, code, "%v: %s", extra, stderr)
		assert.Contains(t, stderr, "-export "+e)
		assert.Equal(t, before, snapshot(t, e), "%v: the input folder is untouched", extra)
	}

	// A folder of the user's, even without an input in it.
	mine := filepath.Join(base, "mine")
	require.NoError(t, os.Mkdir(mine, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(mine, "nodes.csv"), []byte("my own\n"), 0o644))
	for _, extra := range [][]string{nil, {"-overwrite"}} {
		code, _, stderr := runCmd(append(append(append([]string{}, args...), "-q", "-export", mine), extra...)...)
		assert.Equal(t, 2, code, "%v: %s", extra, stderr)
		b, err := os.ReadFile(filepath.Join(mine, "nodes.csv"))
		require.NoError(t, err)
		assert.Equal(t, "my own\n", string(b))
	}

	// A new folder: written whole; again only with -overwrite; the files
	// read back.
	f := filepath.Join(base, "F")
	code, stdout, stderr := runCmd(append(append([]string{}, args...), "-q", "-export", f)...)
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "-nodes "+filepath.Join(f, "nodes.csv"))
	assert.Subset(t, entries(t, f), []string{"nodes.csv", "edges.csv"})
	code, _, stderr = runCmd(append(append([]string{}, args...), "-q", "-export", f)...)
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, "exists; choose a new folder or add -overwrite")
	code, _, stderr = runCmd(append(append([]string{}, args...), "-q", "-drop", "x0", "-export", f, "-overwrite")...)
	require.Equal(t, 0, code, stderr)
	assert.NotContains(t, readCSV(t, filepath.Join(f, "nodes.csv"))[0], "x0", "replaced by the new export")
	for _, e := range entries(t, base) {
		assert.False(t, strings.HasPrefix(e, "."), "temporary %s left behind", e)
	}
	code, _, stderr = runCmd("-nodes", filepath.Join(f, "nodes.csv"), "-edges", filepath.Join(f, "edges.csv"), "-id", "node",
		"-label", "label", "-sens", "group", "-split-column", "split", "-no-scale", "-epochs", "2", "-q", "-lambda-f", "0,1",
		"-out", filepath.Join(base, "res"))
	assert.Equal(t, 0, code, stderr)
}

// Issue 40, defect 4: -overwrite replaced any folder (-out . deleted the
// current folder's thesis.tex). It replaces only this command's results
// (or an empty folder); the current folder and its parents never.
func TestOverwriteOnlyResults(t *testing.T) {
	base := t.TempDir()
	data := filepath.Join(base, "data")
	require.NoError(t, os.Mkdir(data, 0o755))
	args := append(append([]string{}, userFiles(t, data, 200, 4)...), fast...)
	s := filepath.Join(base, "s")
	require.NoError(t, os.Mkdir(s, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(s, "thesis.tex"), []byte("\\documentclass{book}"), 0o644))
	t.Chdir(s)
	for _, out := range []string{".", s, base, "sub/.."} {
		code, _, stderr := runCmd(append(append([]string{}, args...), "-overwrite", "-out", out)...)
		assert.Equal(t, 2, code, "-out %s: %s", out, stderr)
		assert.Contains(t, stderr, "-out "+out)
		assert.FileExists(t, filepath.Join(s, "thesis.tex"), "-out %s", out)
	}

	// A folder of the user's: refused, saying why and what to do.
	mine := filepath.Join(base, "mine")
	require.NoError(t, os.Mkdir(mine, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(mine, "notes.txt"), []byte("mine"), 0o644))
	code, _, stderr := runCmd(append(append([]string{}, args...), "-overwrite", "-out", mine)...)
	assert.Equal(t, 2, code, stderr)
	assert.Contains(t, stderr, "-out "+mine)
	assert.Contains(t, stderr, "not a results folder of this command")
	assert.FileExists(t, filepath.Join(mine, "notes.txt"))

	// Earlier results with a file of the user's added: refused too.
	res := filepath.Join(base, "res")
	code, _, stderr = runCmd(append(append([]string{}, args...), "-out", res)...)
	require.Equal(t, 0, code, stderr)
	require.NoError(t, os.WriteFile(filepath.Join(res, "notes.txt"), []byte("mine"), 0o644))
	code, _, stderr = runCmd(append(append([]string{}, args...), "-overwrite", "-out", res)...)
	assert.Equal(t, 2, code, stderr)
	assert.Contains(t, stderr, "notes.txt")
	assert.FileExists(t, filepath.Join(res, "notes.txt"))
	require.NoError(t, os.Remove(filepath.Join(res, "notes.txt")))
	// Earlier results alone, and an empty folder: replaced.
	code, _, stderr = runCmd(append(append([]string{}, args...), "-overwrite", "-out", res)...)
	assert.Equal(t, 0, code, stderr)
	empty := filepath.Join(base, "empty")
	require.NoError(t, os.Mkdir(empty, 0o755))
	code, _, stderr = runCmd(append(append([]string{}, args...), "-overwrite", "-out", empty)...)
	assert.Equal(t, 0, code, stderr)
	assert.FileExists(t, filepath.Join(empty, "metrics.json"))
}

// deadPID is above Linux's pid_max default: no such process.
const deadPID = 1 << 22

// Issue 40, defect 6: results kept because -out appeared meanwhile were
// deleted by the next run with the same -out (cleanStale took them for a
// killed run's), even a run that failed; and the keeping run said "bad
// input", whose status promises nothing written.
func TestKeptSurvives(t *testing.T) {
	dir := t.TempDir()
	args := userFiles(t, dir, 200, 4)
	out := filepath.Join(dir, "res")
	od, err := prepareOut("-out", out, false, nil)
	require.NoError(t, err)
	require.NoError(t, writeFile(od.path("metrics.json"), nothing))
	require.NoError(t, os.Mkdir(out, 0o755)) // someone else's run
	err = od.commit()
	require.Error(t, err)
	od.abort()
	var ie inputError
	assert.False(t, errors.As(err, &ie), "not reported as bad input (exit status 2: nothing written): %v", err)
	assert.Contains(t, err.Error(), "written to")
	// As if the keeping run had ended: its process id is a dead one's.
	me := strconv.Itoa(os.Getpid())
	for _, e := range entries(t, dir) {
		if strings.Contains(e, me) {
			require.NoError(t, os.Rename(filepath.Join(dir, e), filepath.Join(dir, strings.Replace(e, me, strconv.Itoa(deadPID), 1))))
		}
	}
	// The next run with the same -out, failing on a typo.
	code, _, stderr := runCmd(append(append(swapArg(args, "-label", "lable"), fast...), "-out", filepath.Join(dir, "res2"))...)
	require.Equal(t, 2, code, stderr)
	require.NoError(t, os.Remove(out))
	code, _, stderr = runCmd(append(append(swapArg(args, "-label", "lable"), fast...), "-out", out)...)
	require.Equal(t, 2, code, stderr)
	found := ""
	for _, e := range entries(t, dir) {
		if _, err := os.Stat(filepath.Join(dir, e, "metrics.json")); err == nil {
			found = e
		}
	}
	assert.NotEmpty(t, found, "the kept results are still there: %v", entries(t, dir))
}

// Issue 40, defect 15: a run killed between the fallback swap's two
// renames leaves the old results, their only copy, in ".<out>.old-…";
// the next run deleted that folder. It puts them back and says so.
func TestOrphanOldRestored(t *testing.T) {
	dir := t.TempDir()
	old := filepath.Join(dir, fmt.Sprintf(".res.old-%d-0", deadPID))
	require.NoError(t, os.Mkdir(old, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(old, "metrics.json"), []byte("{}"), 0o644))
	_, err := prepareOut("-out", filepath.Join(dir, "res"), true, nil)
	require.Error(t, err, "the run stops to say what it found")
	assert.Contains(t, err.Error(), old)
	assert.FileExists(t, filepath.Join(dir, "res", "metrics.json"), "the old results are back in -out")
}

// fallback makes commit take the two-rename swap of systems without an
// atomic exchange, with rename as its renames, until the test ends.
func fallback(t *testing.T, rename func(a, b string) error) {
	t.Helper()
	ex, rn := exchangeFn, renameFn
	t.Cleanup(func() { exchangeFn, renameFn = ex, rn })
	exchangeFn = func(a, b string) (bool, error) { return false, nil }
	if rename != nil {
		renameFn = rename
	}
}

// Issue 40, defect 15: the fallback swap replaces earlier results and
// leaves nothing beside them.
func TestFallbackSwap(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "res")
	require.NoError(t, commitFile(t, out, "old.txt", "old"))
	fallback(t, nil)
	require.NoError(t, commitFile(t, out, "new.txt", "new"))
	assert.Equal(t, []string{marker, "new.txt"}, entries(t, out))
	assert.Equal(t, []string{"res"}, entries(t, dir), "no temporary or old folder left")
}

// Issue 40, defect 15: when the fallback swap cannot put the new folder
// in place, the old one is put back; when that fails too, the error says
// where both are and the next run puts the old one back.
func TestFallbackRenameFails(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "res")
	require.NoError(t, commitFile(t, out, "old.txt", "old"))
	fail := errors.New("injected failure")
	// The new folder's rename fails: the old results are back.
	fallback(t, func(a, b string) error {
		if b == out && strings.Contains(a, ".tmp-") {
			return fail
		}
		return os.Rename(a, b)
	})
	err := commitFile(t, out, "new.txt", "new")
	require.ErrorIs(t, err, fail)
	assert.Contains(t, err.Error(), "the earlier ones are back")
	assert.Equal(t, []string{marker, "old.txt"}, entries(t, out))
	assert.Equal(t, []string{"res"}, entries(t, dir))

	// Both that and putting the old one back fail.
	renameFn = func(a, b string) error {
		if b == out {
			return fail
		}
		return os.Rename(a, b)
	}
	err = commitFile(t, out, "new.txt", "new")
	require.Error(t, err)
	var old string
	for _, e := range entries(t, dir) {
		if strings.HasPrefix(e, ".res.old-") {
			old = filepath.Join(dir, e)
		}
	}
	require.NotEmpty(t, old, "the old results are set aside: %v", entries(t, dir))
	assert.Contains(t, err.Error(), "the earlier results are in "+old)
	assert.FileExists(t, filepath.Join(old, "old.txt"))
	// The next run (another process: the folder's pid is dead) puts them back.
	renameFn = os.Rename
	orphan := filepath.Join(dir, strings.Replace(filepath.Base(old), strconv.Itoa(os.Getpid()), strconv.Itoa(deadPID), 1))
	require.NoError(t, os.Rename(old, orphan))
	_, err = prepareOut("-out", out, true, nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "they are back in "+out)
	assert.Equal(t, []string{marker, "old.txt"}, entries(t, out))
}

// A results folder that gains a file of the user's while the command
// runs is not replaced: the check is repeated at commit, and the new
// results are kept beside it.
func TestOverwriteChangedMeanwhile(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "res")
	require.NoError(t, commitFile(t, out, "old.txt", "old"))
	od, err := prepareOut("-out", out, true, nil)
	require.NoError(t, err)
	require.NoError(t, writeFile(od.path("new.txt"), nothing))
	require.NoError(t, os.WriteFile(filepath.Join(out, "notes.txt"), []byte("mine"), 0o644))
	err = od.commit()
	od.abort()
	require.ErrorAs(t, err, &keptError{})
	assert.Contains(t, err.Error(), "notes.txt")
	assert.Contains(t, err.Error(), "written to "+filepath.Join(dir, "res.kept-1"))
	assert.Equal(t, []string{marker, "notes.txt", "old.txt"}, entries(t, out))
	assert.FileExists(t, filepath.Join(dir, "res.kept-1", "new.txt"))
}
