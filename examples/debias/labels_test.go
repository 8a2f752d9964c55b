package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// rewriteLabels writes a copy of the node table with the label column's
// values replaced by f(row, value) and returns the flags that read it.
func rewriteLabels(t *testing.T, in []string, dir, name string, f func(r int, v string) string) []string {
	t.Helper()
	rows := readCSV(t, in[1])
	k := -1
	for j, h := range rows[0] {
		if h == "label" {
			k = j
		}
	}
	require.GreaterOrEqual(t, k, 0)
	var b strings.Builder
	for r, row := range rows {
		if r > 0 {
			row[k] = f(r-1, row[k])
		}
		b.WriteString(strings.Join(row, ",") + "\n")
	}
	p := filepath.Join(dir, name)
	require.NoError(t, os.WriteFile(p, []byte(b.String()), 0o644))
	out := append([]string{}, in...)
	out[1] = p
	return out
}

// Labels that disagree: spellings of one value, a third value, a positive
// class that is not 1/true/yes. Each is exit status 2 naming the file, the
// column, the values and the flag to use, with nothing written.
func TestLabelsThatDisagree(t *testing.T) {
	dir := t.TempDir()
	in := userFiles(t, dir, 300, 4)
	variants := rewriteLabels(t, in, dir, "variants.csv", func(r int, v string) string {
		if v == "yes" && r%7 == 0 {
			return "Yes"
		}
		return v
	})
	third := rewriteLabels(t, in, dir, "third.csv", func(r int, v string) string {
		if r == 5 {
			return "maybe"
		}
		return v
	})
	approved := rewriteLabels(t, in, dir, "approved.csv", func(r int, v string) string {
		return map[string]string{"yes": "approved", "no": "denied", "": ""}[v]
	})
	for _, tc := range []struct {
		name string
		args []string
		want []string
	}{
		{"variants", variants, []string{"variants.csv", `column "label": the values "yes"`, `"Yes" (`, "differ only in case or spaces", "-fold-case"}},
		{"a third value", third, []string{"third.csv", `third.csv:7:313: column "label": 3 distinct known values "maybe" (1 row, first line 7)`, "want 2 classes (-classes)", "(-missing)"}},
		{"approved/denied", approved, []string{"approved.csv", `column "label": its two values "approved" (`, `"denied" (`, "which is the positive class", "(-positive)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(dir, "no-"+tc.name)
			code, stdout, stderr := runCmd(append(append(append([]string{}, tc.args...), fast...), "-out", out)...)
			assert.Equal(t, 2, code, stderr)
			assert.Empty(t, stdout)
			for _, w := range tc.want {
				assert.Contains(t, stderr, w)
			}
			assert.NotContains(t, stderr, "FilesConfig")
			assert.NoDirExists(t, out)
		})
	}
	// The fixes: -fold-case (with a warning), -classes 3, -positive.
	for _, args := range [][]string{append(variants, "-fold-case"), append(third, "-classes", "3"), append(approved, "-positive", "approved")} {
		out := filepath.Join(dir, "ok"+strings.ReplaceAll(args[len(args)-1], " ", ""))
		code, _, stderr := runCmd(append(append(append([]string{}, args...), fast...), "-out", out)...)
		require.Equal(t, 0, code, stderr)
		if args[len(args)-1] == "-fold-case" {
			assert.Contains(t, stderr, `are taken as one value, "yes" (-fold-case)`)
		}
	}
	// The label flags are for -nodes/-edges.
	code, _, stderr := runCmd("-dataset", "synthetic", "-positive", "1", "-out", filepath.Join(dir, "no"))
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, "-positive is for -nodes/-edges")
}
