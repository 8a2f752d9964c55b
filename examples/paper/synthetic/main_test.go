package main

import (
	"bytes"
	"encoding/csv"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestSyntheticSmoke(t *testing.T) {
	dir := t.TempDir()
	var out, errOut bytes.Buffer
	err := run([]string{"-n", "200", "-epochs", "3", "-seeds", "2", "-homophily", "0.5,0.9", "-models", "mlp,gcn,fmp", "-out", dir}, &out, &errOut)
	require.NoError(t, err)
	f, err := os.Open(filepath.Join(dir, "synthetic.csv"))
	require.NoError(t, err)
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	require.NoError(t, err)
	if len(rows) != 1+2*3 {
		t.Fatalf("%d CSV rows, want a header and 6 (2 homophily values × 3 models)", len(rows))
	}
	if rows[1][0] != "0.50" || rows[1][2] != "mlp" || rows[6][0] != "0.90" || rows[6][2] != "fmp" || rows[1][3] != "2" {
		t.Errorf("unexpected rows: %v", rows)
	}
	svg, err := os.ReadFile(filepath.Join(dir, "synthetic.svg"))
	require.NoError(t, err)
	for _, want := range []string{"<svg", "MLP", "GCN", "FMP", "sensitive homophily"} {
		if !bytes.Contains(svg, []byte(want)) {
			t.Errorf("synthetic.svg lacks %q", want)
		}
	}
	if !strings.Contains(out.String(), "| 0.90 (") {
		t.Errorf("table lacks the 0.90 row:\n%s", out.String())
	}
	// Redrawn from the CSV: the same table, the figure, no training.
	dir2 := t.TempDir()
	var again bytes.Buffer
	require.NoError(t, run([]string{"-n", "200", "-epochs", "3", "-from-csv", filepath.Join(dir, "synthetic.csv"), "-out", dir2}, &again, &errOut))
	table, _, _ := strings.Cut(out.String(), "\nwrote ")
	table2, _, _ := strings.Cut(again.String(), "\nwrote ")
	require.Equal(t, table, table2)
	svg2, err := os.ReadFile(filepath.Join(dir2, "synthetic.svg"))
	require.NoError(t, err)
	for _, want := range []string{"<svg", ">MLP<", ">GCN<", ">FMP<", "sensitive homophily", "mean ± std over 2 seeds"} {
		require.Contains(t, string(svg2), want, "the figure drawn from the CSV (its metrics rounded to hundredths of a percent)")
	}
	_, err = os.Stat(filepath.Join(dir2, "synthetic.csv"))
	require.True(t, os.IsNotExist(err), "-from-csv writes no CSV")
	bad := filepath.Join(dir2, "bad.csv")
	require.NoError(t, os.WriteFile(bad, []byte("a,b\n1,2\n"), 0o644))
	require.ErrorContains(t, run([]string{"-from-csv", bad, "-out", dir2}, &again, &errOut), "not a synthetic.csv")
}

func TestSyntheticFlagErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-homophily", "0.5,1.2"}, `"1.2" is not a number in [0, 1]`},
		{[]string{"-homophily", "x"}, `"x"`},
		{[]string{"-models", "mlp,none"}, `unknown model "none"`},
		{[]string{"-seeds", "0"}, "-seeds 0"},
		{[]string{"-n", "2"}, "-n"},
		{[]string{"-epochs", "0"}, "-epochs 0"},
		{[]string{"-lambda-f", "-1"}, "LambdaF"},
		{[]string{"-out", "/nonexistent/x"}, "not an existing directory"},
	} {
		err := run(c.args, &bytes.Buffer{}, &bytes.Buffer{})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("run(%q): err = %v, want it to contain %q", c.args, err, c.want)
		}
	}
}
