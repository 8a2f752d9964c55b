package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The command's errors speak of its flags, not of the library's fields.
func TestErrorsInFlags(t *testing.T) {
	dir := t.TempDir()
	in := userFiles(t, dir, 200, 7)
	nodes := in[1]
	b, err := os.ReadFile(nodes)
	require.NoError(t, err)
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(text), 0o644))
		return p
	}
	with := func(args ...string) []string {
		out := append([]string{}, in...)
		for k := 0; k+1 < len(args); k += 2 {
			found := false
			for j := range out {
				if out[j] == args[k] {
					out[j+1], found = args[k+1], true
				}
			}
			if !found {
				out = append(out, args[k], args[k+1])
			}
		}
		return out
	}
	noID := func(args []string) []string {
		var out []string
		for k := 0; k < len(args); k++ {
			if args[k] == "-id" {
				k++
				continue
			}
			out = append(out, args[k])
		}
		return out
	}
	semicolon := write("semi.csv", strings.ReplaceAll(string(b), ",", ";"))
	textCol := write("text.csv", strings.Replace(strings.Replace(string(b), "node,", "node,purpose,", 1), "\nn", "\nCar,n", -1))
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"forgotten -id", noID(in), `column "node": "n0" is not a number (every column but the id, label, sensitive and split columns is a numeric feature: if "node" names the nodes, make it the id column (-id); leave text columns out with -drop, or one-hot encode categories (-categorical))`},
		{"text column", with("-nodes", textCol), `leave text columns out with -drop`},
		{"semicolon CSV", with("-nodes", semicolon), `is that the delimiter? set -comma)`},
		{"label is sens", with("-sens", "label"), `-label and -sens are both "label", want distinct columns`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := runCmd(append(append([]string{}, tc.args...), "-q", "-out", filepath.Join(dir, "no"))...)
			assert.Equal(t, 2, code, stderr)
			assert.Contains(t, stderr, tc.want)
			for _, field := range []string{"FilesConfig", "Drop)", "IDColumn", "SensColumn", "Env."} {
				assert.NotContains(t, stderr, field)
			}
		})
	}

	// A model saved with another sensitive attribute.
	out := filepath.Join(dir, "res")
	code, _, stderr := runCmd(append(append(append([]string{}, in...), fast...), "-out", out)...)
	require.Equal(t, 0, code, stderr)
	flipped := write("flipped.csv", strings.NewReplacer(",north,", ",SOUTH,", ",south,", ",north,").Replace(string(b)))
	flipped = write("flipped.csv", strings.ReplaceAll(string(mustRead(t, flipped)), ",SOUTH,", ",south,"))
	code, _, stderr = runCmd(append(with("-nodes", flipped), "-q", "-model", filepath.Join(out, "model.fmp"), "-out", filepath.Join(dir, "no2"))...)
	assert.Equal(t, 2, code, stderr)
	assert.Contains(t, stderr, "another sensitive attribute than the -sens column")
}

func mustRead(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	return b
}

func TestThresholdText(t *testing.T) {
	assert.Equal(t, "selects every node", thresholdText(-1))
	assert.Equal(t, "selects no node", thresholdText(1))
	assert.Equal(t, "0.177", thresholdText(0.1774))
	assert.Equal(t, "0.000", thresholdText(0))
}
