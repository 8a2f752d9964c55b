package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPeersRawlsGCNSmoke runs both methods on a small generated graph:
// the matrices' costs, a row per run and method, and one CSV line each.
func TestPeersRawlsGCNSmoke(t *testing.T) {
	out := filepath.Join(t.TempDir(), "runs.csv")
	var stdout, log bytes.Buffer
	err := run([]string{"-dataset", "synthetic", "-synthetic-nodes", "300", "-epochs", "3", "-seeds", "2", "-out", out}, &stdout, &log)
	require.NoError(t, err, log.String())
	for _, s := range []string{"matrix doubly stochastic: built in", "| GCN | 1 |", "| RawlsGCN-Graph | 2 |", "**RawlsGCN-Graph mean ± std**"} {
		assert.Contains(t, stdout.String(), s)
	}
	b, err := os.ReadFile(out)
	require.NoError(t, err)
	assert.Len(t, strings.Split(strings.TrimSpace(string(b)), "\n"), 1+2*2)
}

func TestPeersRawlsGCNFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-seeds", "0"}, "-seeds 0"},
		{[]string{"-buckets", "1"}, "-buckets 1"},
		{[]string{"-dtype", "int"}, "-dtype"},
		{[]string{"-dataset", "bail", "-data", ""}, "needs -data"},
		{[]string{"x"}, "unexpected arguments"},
	} {
		var stdout, log bytes.Buffer
		err := run(c.args, &stdout, &log)
		assert.ErrorContains(t, err, c.want, "%v", c.args)
	}
}
