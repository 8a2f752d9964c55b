package main

import (
	"bytes"
	"context"
	"flag"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/fairmp/fairmp/metrics/selection"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	G "gorgonia.org/gorgonia"

	"github.com/fairmp/fairmp/fmp/fmpbeam"
	"github.com/fairmp/fairmp/fmp/modelio"
	"github.com/fairmp/fairmp/graph/datasets"
	"github.com/fairmp/fairmp/graph/features"
	"github.com/fairmp/fairmp/internal/cli"
	"github.com/fairmp/fairmp/layers"
)

func TestMain(m *testing.M) {
	beam.Init()
	slog.SetDefault(slog.New(slog.NewTextHandler(io.Discard, nil)))
	os.Exit(m.Run())
}

func runArgs(t *testing.T, args ...string) (string, error) {
	t.Helper()
	fs := flag.NewFlagSet("fmpbeam", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	o := define(fs)
	require.NoError(t, fs.Parse(args))
	o.set = visited(fs)
	var out bytes.Buffer
	err := run(context.Background(), o, fs.Args(), &out, io.Discard)
	return out.String(), err
}

// testFiles writes a 200-node graph's files, its features and an
// untrained SGC model file in a new folder, and returns the folder and
// the flags that name them.
func testFiles(t *testing.T) (string, []string) {
	t.Helper()
	c := datasets.DefaultSyntheticConfig()
	c.N = 200
	ds, err := datasets.Synthetic(c)
	require.NoError(t, err)
	dir := t.TempDir()
	require.NoError(t, fmpbeam.WriteGraph(dir, 2, ds.Graph))
	require.NoError(t, fmpbeam.WriteNodes(dir, 2, ds.Labels, ds.Sens, ds.Split))
	require.NoError(t, features.Write(filepath.Join(dir, "x.fmx"), ds.Features, ds.N(), ds.NumFeatures))
	m, err := layers.NewSGC(G.NewGraph(), ds.Graph, layers.DefaultSGCConfig(ds.NumFeatures, 2), nil)
	require.NoError(t, err)
	f, err := os.Create(filepath.Join(dir, "model.fmp"))
	require.NoError(t, err)
	require.NoError(t, modelio.Save(f, m, modelio.SaveConfig{Untrained: true}))
	require.NoError(t, f.Close())

	return dir, []string{"-model", dir + "/model.fmp", "-nodes", dir + "/nodes-*.txt", "-edges", dir + "/edges-*.txt",
		"-features", dir + "/x.fmx", "-block-size", "64", "-shards", "2"}
}

// TestCommand: the command runs the job on Prism from files and prints
// the chosen setting; its errors name the flag or the file's problem,
// without the runner's report.
func TestCommand(t *testing.T) {
	dir, base := testFiles(t)
	out := t.TempDir()
	text, err := runArgs(t, append(base, "-out", out, "-frontier", "0,1,4")...)
	require.NoError(t, err)
	assert.Contains(t, text, "the job on prism")
	assert.Contains(t, text, "| FMP, chosen on validation (λs 1, λf ")
	for _, name := range []string{"metrics.json", "duals.json", "run.json", "predictions-00000-of-00002.txt", "predictions-00001-of-00002.txt"} {
		assert.FileExists(t, filepath.Join(out, name))
	}

	// -out is the command's: a second run with fewer shards leaves none of
	// the first's prediction files; a folder of a user's own is refused
	// and left as it was.
	one := append(append([]string{}, base[:len(base)-2]...), "-shards", "1")
	_, err = runArgs(t, append(one, "-out", out)...)
	require.NoError(t, err)
	assert.FileExists(t, filepath.Join(out, "predictions-00000-of-00001.txt"))
	assert.NoFileExists(t, filepath.Join(out, "predictions-00000-of-00002.txt"))
	assert.NoFileExists(t, filepath.Join(out, "predictions-00001-of-00002.txt"))
	mine := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(mine, "metrics.json"), []byte("a user's\n"), 0o644))
	_, err = runArgs(t, append(one, "-out", mine)...)
	assert.ErrorIs(t, err, cli.ErrNotOurs)
	assert.ErrorContains(t, err, "-out "+mine)
	b, err := os.ReadFile(filepath.Join(mine, "metrics.json"))
	require.NoError(t, err)
	assert.Equal(t, "a user's\n", string(b))

	_, err = runArgs(t, append(base, "-out", out, "-frontier", "0,x")...)
	var ue usageError
	assert.ErrorAs(t, err, &ue)
	assert.ErrorContains(t, err, `-frontier: "x" is not a finite number`)
	_, err = runArgs(t, "-out", out, "-nodes", "a", "-edges", "b")
	assert.ErrorAs(t, err, &ue)
	_, err = runArgs(t, append(base, "-out", out, "-frontier", "0,1", "-bound", "5", "-max-acc-loss", "1")...)
	assert.ErrorAs(t, err, &ue)
	assert.ErrorContains(t, err, "-bound and -max-acc-loss are two rules")

	// A rule no setting meets: every output written, the reference kept,
	// an error wrapping ErrNoCandidate (exit status 3).
	out2 := t.TempDir()
	text, err = runArgs(t, append(base, "-out", out2, "-frontier", "0,1,4", "-bound", "0")...)
	assert.ErrorIs(t, err, selection.ErrNoCandidate)
	assert.ErrorContains(t, err, "loosen the rule")
	assert.Contains(t, text, "| FMP, the reference kept (λs 1, λf 0, ")
	for _, name := range []string{"metrics.json", "duals.json", "run.json", "predictions-00000-of-00002.txt"} {
		assert.FileExists(t, filepath.Join(out2, name))
	}

	// A data error is the DoFn's message alone.
	require.NoError(t, os.WriteFile(filepath.Join(dir, "edges-00009.txt"), []byte("1 2\n3 x\n"), 0o644))
	_, err = runArgs(t, append(base, "-out", t.TempDir())...)
	require.Error(t, err)
	assert.Regexp(t, `^.*edges-00009.txt:2: "x" is not a node id, want an integer ≥ 0 \(-v for the runner's report\)$`, err.Error())
}

// TestStagesWork: a job run stage by stage leaves its blocks in -work; a
// stage run again removes its own and the later stages' blocks first
// (here the graph stage with a smaller -block-size, whose more blocks
// the old ones must not mix with), and a folder of a user's own is
// refused as -work.
func TestStagesWork(t *testing.T) {
	_, base := testFiles(t)
	out, work := t.TempDir(), filepath.Join(t.TempDir(), "work")
	stages := func(block string) {
		for _, st := range fmpbeam.Stages {
			_, err := runArgs(t, append(append([]string{}, base...), "-block-size", block, "-out", out, "-stage", st, "-work", work)...)
			require.NoError(t, err, st)
		}
	}
	stages("64")
	blocks, _ := filepath.Glob(filepath.Join(work, "logits-*.blk"))
	assert.Len(t, blocks, 4, "200 nodes in blocks of 64")
	_, err := runArgs(t, append(append([]string{}, base...), "-block-size", "32", "-out", out, "-stage", "graph", "-work", work)...)
	require.NoError(t, err)
	for _, g := range []string{"logits-*.blk", "fmp-*.blk"} {
		blocks, _ = filepath.Glob(filepath.Join(work, g))
		assert.Empty(t, blocks, "%s: made stale by the graph stage", g)
	}
	blocks, _ = filepath.Glob(filepath.Join(work, "nodes-*.blk"))
	assert.Len(t, blocks, 7, "the new blocks only")
	stages("32")
	assert.FileExists(t, filepath.Join(out, "metrics.json"))

	mine := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(mine, "notes.txt"), []byte("mine\n"), 0o644))
	_, err = runArgs(t, append(append([]string{}, base...), "-out", out, "-stage", "graph", "-work", mine)...)
	assert.ErrorIs(t, err, cli.ErrNotOurs)
	assert.FileExists(t, filepath.Join(mine, "notes.txt"))
}
