package main

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fairmp/fairmp/internal/cli"
)

// TestOutIsTheCommands: -out is created; a second run with fewer shards
// removes the first's extra shards instead of leaving them to be read
// with the new ones; a folder holding a user's file is refused and left
// as it was.
func TestOutIsTheCommands(t *testing.T) {
	out := filepath.Join(t.TempDir(), "data")
	args := []string{"-n", "200", "-features", "4", "-hidden", "4", "-batch", "16", "-split", "0.5,0.25,0.25", "-out", out}
	require.NoError(t, run(context.Background(), append(args, "-shards", "2"), io.Discard, io.Discard))
	for _, n := range []string{"nodes-00001.txt", "edges-00001.txt", "model.fmp", "features.fmx"} {
		assert.FileExists(t, filepath.Join(out, n))
	}
	require.NoError(t, run(context.Background(), append(args, "-shards", "1"), io.Discard, io.Discard))
	assert.FileExists(t, filepath.Join(out, "nodes-00000.txt"))
	assert.NoFileExists(t, filepath.Join(out, "nodes-00001.txt"))
	assert.NoFileExists(t, filepath.Join(out, "edges-00001.txt"))

	mine := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(mine, "nodes-00000.txt"), []byte("0 1 0 train\n"), 0o644))
	err := run(context.Background(), []string{"-n", "64", "-features", "4", "-out", mine}, io.Discard, io.Discard)
	assert.ErrorIs(t, err, cli.ErrNotOurs)
	b, err := os.ReadFile(filepath.Join(mine, "nodes-00000.txt"))
	require.NoError(t, err)
	assert.Equal(t, "0 1 0 train\n", string(b))
}
