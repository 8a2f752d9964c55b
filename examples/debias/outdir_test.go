package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMain lets the kill test run the command as a process of its own:
// the test binary runs main when FAIRMP_DEBIAS_MAIN is set.
func TestMain(m *testing.M) {
	if os.Getenv("FAIRMP_DEBIAS_MAIN") == "1" {
		main()
		return
	}
	os.Exit(m.Run())
}

// outputs are the files a training run writes to -out.
var outputs = []string{"metrics.json", "predictions.csv", "frontier.csv", "frontier.svg", "model.fmp"}

// entries lists a folder's names.
func entries(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	require.NoError(t, err)
	var out []string
	for _, e := range es {
		out = append(out, e.Name())
	}
	return out
}

func nothing(io.Writer) error { return nil }

// If -out appears while the command runs, the results stay where the
// message says (df69dad printed a folder it had already deleted).
func TestOutAppeared(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "res")
	od, err := prepareOut("-out", out, false, nil)
	require.NoError(t, err)
	require.NoError(t, writeFile(od.path("metrics.json"), nothing))
	require.NoError(t, os.Mkdir(out, 0o755)) // someone else's run
	err = od.commit()
	require.Error(t, err)
	assert.Equal(t, filepath.Join(dir, "res.kept-1"), od.kept)
	assert.Contains(t, err.Error(), "the results were written to "+od.kept)
	od.abort()
	_, statErr := os.Stat(filepath.Join(od.kept, "metrics.json"))
	assert.NoError(t, statErr, "the folder the message names exists")
}

// commitFile writes one file through an outDir for out and commits it.
func commitFile(t *testing.T, out, name, text string) error {
	t.Helper()
	od, err := prepareOut("-out", out, true, nil)
	require.NoError(t, err)
	require.NoError(t, writeFile(od.path(name), func(w io.Writer) error { _, err := w.Write([]byte(text)); return err }))
	err = od.commit()
	if err != nil {
		od.abort()
	}
	return err
}

// -overwrite replaces -out (earlier results: a folder with the marker) in
// one step and leaves nothing beside it.
func TestOverwriteSwap(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "res")
	require.NoError(t, commitFile(t, out, "old.txt", "old"))
	assert.Equal(t, []string{marker, "old.txt"}, entries(t, out))
	require.NoError(t, commitFile(t, out, "new.txt", "new"))
	assert.Equal(t, []string{marker, "new.txt"}, entries(t, out))
	assert.Equal(t, []string{"res"}, entries(t, dir), "no temporary or old folder left")
}

// Temporary folders of runs that were killed are removed by the next
// run, and the old results a completed swap set aside; a live process's,
// kept results, and anything else are left alone.
func TestCleanStale(t *testing.T) {
	dir := t.TempDir()
	dead := 1 << 22 // above Linux's pid_max default: no such process
	require.NoError(t, commitFile(t, filepath.Join(dir, "res"), "metrics.json", "{}"))
	kept := filepath.Join(dir, fmt.Sprintf(".res.tmp-%d-1", dead))
	require.NoError(t, os.Mkdir(kept, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(kept, keptMark), nil, 0o644))
	for _, name := range []string{
		fmt.Sprintf(".res.tmp-%d-0", dead), fmt.Sprintf(".res.old-%d-3", dead), // a killed run's
		".res.tmp-1-0",                       // pid 1 runs
		fmt.Sprintf(".other.tmp-%d-0", dead), // another -out's
		".res.tmp-notapid-0", "keep",
	} {
		require.NoError(t, os.Mkdir(filepath.Join(dir, name), 0o755))
	}
	od, err := prepareOut("-out", filepath.Join(dir, "res"), true, nil)
	require.NoError(t, err)
	defer od.abort()
	got := entries(t, dir)
	assert.NotContains(t, got, fmt.Sprintf(".res.tmp-%d-0", dead))
	assert.NotContains(t, got, fmt.Sprintf(".res.old-%d-3", dead))
	for _, kept := range []string{filepath.Base(kept), ".res.tmp-1-0", fmt.Sprintf(".other.tmp-%d-0", dead), ".res.tmp-notapid-0", "keep", filepath.Base(od.tmp)} {
		assert.Contains(t, got, kept)
	}
}

// An -out that is or holds an input is refused before anything is read
// or written (with -overwrite df69dad deleted the input files); an -out
// that cannot be created is refused before training, not after; the
// results folder follows the umask (df69dad made it 0700).
func TestOutChecks(t *testing.T) {
	dir := t.TempDir()
	in := userFiles(t, dir, 200, 4)
	before := entries(t, dir)
	for _, out := range []string{dir, filepath.Dir(dir)} {
		code, _, stderr := runCmd(append(append(append([]string{}, in...), fast...), "-out", out, "-overwrite")...)
		assert.Equal(t, 2, code, stderr)
		assert.Contains(t, stderr, "holds the input -")
	}
	assert.Equal(t, before, entries(t, dir), "the input folder is untouched")

	file := filepath.Join(dir, "nodes.csv")
	start := time.Now()
	code, _, stderr := runCmd(append(append(append([]string{}, in...), fast...), "-out", filepath.Join(file, "res"))...)
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, "-out "+filepath.Join(file, "res"))
	assert.NotContains(t, stderr, "epoch", "refused before training")
	assert.Less(t, time.Since(start), 2*time.Second)

	old := syscall.Umask(0o022)
	defer syscall.Umask(old)
	out := filepath.Join(t.TempDir(), "res")
	code, _, stderr = runCmd(append(append(append([]string{}, in...), fast...), "-out", out)...)
	require.Equal(t, 0, code, stderr)
	fi, err := os.Stat(out)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o755), fi.Mode().Perm(), "the results folder under umask 022")
	fi, err = os.Stat(filepath.Join(out, "metrics.json"))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o644), fi.Mode().Perm())
}

// killRuns runs the command with -overwrite on one -out n times, killing
// it with SIGKILL at a random moment of most runs, and checks after each
// that -out is either absent (before the first complete run) or complete:
// every file there, metrics.json whole. It returns how many runs were
// killed, how many ended by themselves, and how many temporary folders
// were left after a final complete run (0: each run cleaned up the
// previous one's).
func killRuns(t *testing.T, n int, seed int64) (killed, finished, stale int) {
	t.Helper()
	dir := t.TempDir()
	in := userFiles(t, dir, 200, 5)
	out := filepath.Join(dir, "res")
	args := append(append(append([]string{}, in...), "-backbone", "gcn", "-epochs", "40", "-lr", "0.01", "-lambda-f", "0,1,4", "-q"), "-out", out, "-overwrite")
	rng := rand.New(rand.NewSource(seed))
	start := time.Now()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "FAIRMP_DEBIAS_MAIN=1")
	require.NoError(t, cmd.Run(), "a complete run")
	full := time.Since(start)
	check := func(k int) {
		for _, f := range outputs {
			fi, err := os.Stat(filepath.Join(out, f))
			require.NoError(t, err, "run %d: %s missing from -out", k, f)
			require.Positive(t, fi.Size(), "run %d: %s empty", k, f)
		}
		b, err := os.ReadFile(filepath.Join(out, "metrics.json"))
		require.NoError(t, err)
		require.True(t, json.Valid(b), "run %d: metrics.json is not whole", k)
	}
	check(0)
	for k := 1; k <= n; k++ {
		cmd := exec.Command(os.Args[0], args...)
		cmd.Env = append(os.Environ(), "FAIRMP_DEBIAS_MAIN=1")
		require.NoError(t, cmd.Start())
		// Most kills land while results are written and swapped: the
		// last fifth of a run, with every third anywhere in its first
		// half (so that some runs are killed even when the first run,
		// timed on a busy machine, was slower than the rest).
		at := time.Duration(float64(full) * (0.8 + 0.3*rng.Float64()))
		if k%3 == 0 {
			at = time.Duration(rng.Int63n(int64(full) / 2))
		}
		timer := time.AfterFunc(at, func() { cmd.Process.Signal(syscall.SIGKILL) })
		err := cmd.Wait()
		timer.Stop()
		if err == nil {
			finished++
		} else {
			killed++
		}
		check(k)
	}
	cmd = exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "FAIRMP_DEBIAS_MAIN=1")
	require.NoError(t, cmd.Run(), "a last complete run")
	for _, e := range entries(t, dir) {
		if strings.HasPrefix(e, ".res.") {
			stale++
		}
	}
	return killed, finished, stale
}

// TestKillNine kills the command at random points while it writes its
// results: -out is never half written, and killed runs' folders are
// cleaned up. FAIRMP_KILL_RUNS sets the number of runs (default 12; the
// closing note reports a run of 300).
func TestKillNine(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the command as processes; skipped with -short")
	}
	n := 12
	if s := os.Getenv("FAIRMP_KILL_RUNS"); s != "" {
		var err error
		n, err = strconv.Atoi(s)
		require.NoError(t, err)
	}
	killed, finished, stale := killRuns(t, n, 1)
	t.Logf("%d runs: %d killed, %d finished; -out complete after each; %d temporary folders left", n, killed, finished, stale)
	assert.Equal(t, 0, stale)
	assert.Positive(t, killed)
}
