package main

import (
	"bytes"
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
