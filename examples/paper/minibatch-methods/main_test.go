package main

import (
	"bytes"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRunSmall trains every default method both ways for a few epochs on
// a small generated graph and checks the table has a row per run.
func TestRunSmall(t *testing.T) {
	var out, log bytes.Buffer
	err := run([]string{"-dataset", "synthetic", "-n", "600", "-full-epochs", "8", "-mini-epochs", "2", "-batch", "128"}, &out, &log)
	require.NoError(t, err, log.String())
	for _, m := range []string{"none", "regularizer", "adversary", "redress"} {
		assert.Contains(t, out.String(), "| "+m+" | full batch |")
		assert.Contains(t, out.String(), "| "+m+" | mini-batch |")
	}
}

func TestRunRefusesUnbatched(t *testing.T) {
	err := run([]string{"-dataset", "synthetic", "-n", "300", "-methods", "fairgnn"}, &bytes.Buffer{}, &bytes.Buffer{})
	var ue usageError
	require.ErrorAs(t, err, &ue)
	assert.ErrorContains(t, err, "fairgnn has no mini-batch form")
}

// TestRunLarge runs the generated graph of datasets.SyntheticLarge (the
// 1,000,000-node run's generator, here 2,000 nodes) in mini-batches only:
// a row per method, no full-batch row, per-epoch progress on stderr, and
// the features file removed.
func TestRunLarge(t *testing.T) {
	dir := t.TempDir()
	var out, log bytes.Buffer
	err := run([]string{"-dataset", "synthetic-large", "-n", "2000", "-trainings", "mini", "-mini-epochs", "2", "-batch", "256", "-dir", dir}, &out, &log)
	require.NoError(t, err, log.String())
	for _, m := range []string{"none", "regularizer", "adversary", "redress"} {
		assert.Contains(t, out.String(), "| "+m+" | mini-batch |")
	}
	assert.NotContains(t, out.String(), "full batch |")
	assert.Contains(t, out.String(), "full batch: not run; mini-batch: 2 epochs of batches of 256")
	assert.Contains(t, log.String(), "epoch 2/2")
	left, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Empty(t, left, "the features file is removed")
}

func TestRunRefusesUnknownTraining(t *testing.T) {
	err := run([]string{"-trainings", "stream"}, &bytes.Buffer{}, &bytes.Buffer{})
	var ue usageError
	require.ErrorAs(t, err, &ue)
	assert.ErrorContains(t, err, `-trainings: "stream"`)
}
