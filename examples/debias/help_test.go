package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// flagHelp returns each flag's help text in `debias -h`, by name.
func flagHelp(t *testing.T) map[string]string {
	t.Helper()
	code, _, stderr := runCmd("-h")
	require.Equal(t, 0, code)
	help := map[string]string{}
	name := ""
	for _, line := range strings.Split(stderr, "\n") {
		if m := regexp.MustCompile(`^  -([a-z0-9-]+)`).FindStringSubmatch(line); m != nil {
			name = m[1]
			continue
		}
		if name != "" {
			help[name] += strings.TrimSpace(line) + " "
		}
	}
	return help
}

// Issue 53 D3: `debias -h` showed two defaults for -backbone, -lr and
// -epochs ("(default: chosen on validation ...) (default "gcn")"): one
// each now, saying what applies with and without the search.
func TestHelpOneDefaultEach(t *testing.T) {
	help := flagHelp(t)
	want := map[string]string{
		"backbone": `(default: chosen on validation among gcn, sgc, mlp; gcn with -search-budget 0)`,
		"lr":       `(default: chosen on validation among 0.01 and 0.001; 0.001 with -search-budget 0)`,
		"epochs":   `(default: up to 1000, stopped after 1/lr epochs without a better one by -select; 300 with -search-budget 0)`,
	}
	for name, w := range want {
		assert.Equal(t, 1, strings.Count(help[name], "(default"), "-%s: %s", name, help[name])
		assert.Contains(t, help[name], w, name)
	}
	// Left out, they are the library's defaults when nothing is searched.
	o, err := parseFlags([]string{"-dataset", "synthetic", "-search-budget", "0", "-out", "x"}, os.Stderr)
	require.NoError(t, err)
	assert.Equal(t, "gcn", o.backbone)
	assert.Equal(t, 0.001, o.train.Adam.LR)
	assert.Equal(t, 300, o.train.Epochs)
	for _, bad := range [][]string{{"-lr", "0"}, {"-epochs", "0"}, {"-backbone", ""}} {
		_, err := parseFlags(append([]string{"-dataset", "synthetic", "-out", "x"}, bad...), os.Stderr)
		assert.Error(t, err, "%v: given, a zero is refused", bad)
	}
}

// readmeCommand returns the flags of the README's command that reads
// -export's files back: the line after the export, with its
// continuations.
func readmeCommand(t *testing.T, readme, after string) []string {
	t.Helper()
	b, err := os.ReadFile(readme)
	require.NoError(t, err)
	text := string(b)
	k := strings.Index(text, after)
	require.GreaterOrEqual(t, k, 0, "%s has no %q", readme, after)
	lines := strings.Split(text[k+len(after):], "\n")[1:]
	cmd := ""
	for _, l := range lines {
		cmd += strings.TrimSuffix(strings.TrimSpace(l), "\\") + " "
		if !strings.HasSuffix(strings.TrimSpace(l), "\\") {
			break
		}
	}
	return strings.Fields(cmd)
}

// Issue 53 D3: -export printed a command with -no-scale that the README
// did not use (different results: the generated graph's features min-max
// scaled again). Both READMEs' commands are the printed one, -out added.
func TestExportCommandIsTheREADMEs(t *testing.T) {
	readmes := []string{"../../README.md", "README.md"}
	for k, r := range readmes {
		abs, err := filepath.Abs(r)
		require.NoError(t, err)
		readmes[k] = abs
	}
	t.Chdir(t.TempDir())
	code, stdout, stderr := runCmd("-dataset", "synthetic", "-synthetic-nodes", "200", "-export", "mydata")
	require.Equal(t, 0, code, stderr)
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	printed := strings.Fields(lines[len(lines)-1])
	require.Contains(t, printed, "-no-scale", "the exported features are the data set's, as it uses them")
	for _, r := range readmes {
		cmd := readmeCommand(t, r, "go run ./examples/debias -dataset synthetic -export mydata")
		require.Greater(t, len(cmd), 3, r)
		assert.Equal(t, []string{"go", "run", "./examples/debias"}, cmd[:3], r)
		assert.Equal(t, append(append([]string{}, printed...), "-out", "myresults"), cmd[3:], r)
	}
}
