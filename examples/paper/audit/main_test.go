package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestAuditSmoke(t *testing.T) {
	dir := t.TempDir()
	o, err := parseFlags([]string{"-epochs", "5", "-out", dir, "-lambda-f", "3"}, &bytes.Buffer{})
	require.NoError(t, err)
	o.synth.N, o.synth.MeanDegree = 300, 6
	var out, errOut bytes.Buffer
	ds, err := datasetFor(o)
	require.NoError(t, err)
	if err := audit(o, ds, &out, &errOut); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	for _, want := range []string{"without the sensitive steps", "| s=0 |", "| s=1 |", "Dual direction u (1 × 2", "Decisions flipped"} {
		if !strings.Contains(text, want) {
			t.Errorf("output lacks %q:\n%s", want, text)
		}
	}
	b, err := os.ReadFile(filepath.Join(dir, "audit.svg"))
	require.NoError(t, err)
	// A marker per node in each panel, and one per group in the legend.
	if !bytes.Contains(b, []byte("<svg")) || bytes.Count(b, []byte("<circle")) != 2*300+2 {
		t.Errorf("audit.svg does not look like a scatter of 300 nodes × 2 panels (%d circles)", bytes.Count(b, []byte("<circle")))
	}
	for _, want := range []string{">s = 0<", ">s = 1<", `z<tspan baseline-shift="sub" font-size="8.4">1</tspan> − z`} {
		if !bytes.Contains(b, []byte(want)) {
			t.Errorf("audit.svg lacks %q", want)
		}
	}
}

func TestAuditFlagErrors(t *testing.T) {
	t.Setenv("FAIRMP_DATA", "")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-dataset", "nba"}, "pass -data DIR"},
		{[]string{"-dataset", "cora"}, `-dataset "cora"`},
		{[]string{"-epochs", "0"}, "-epochs 0"},
		{[]string{"-lambda-f", "-2"}, "LambdaF"},
		{[]string{"-out", "/nonexistent/dir"}, "not an existing directory"},
		{[]string{"-data", t.TempDir(), "-dataset", "nba", "-out", t.TempDir()}, "nba.csv"},
	} {
		err := run(c.args, &bytes.Buffer{}, &bytes.Buffer{})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("run(%q): err = %v, want it to contain %q", c.args, err, c.want)
		}
	}
}
