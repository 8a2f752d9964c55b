package main

import (
	"bytes"
	"encoding/csv"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSmoke runs the study on a small generated graph and checks the table
// and the CSV: one row per seed, ρ and λf; λf = 0 is the same for every ρ
// (no fairness step is built), and its budget never binds.
func TestSmoke(t *testing.T) {
	dir := t.TempDir()
	var out, errb bytes.Buffer
	err := run([]string{"-synthetic-nodes", "300", "-seeds", "2", "-epochs", "20", "-lambda-f", "0,1,4", "-rho", "4,1", "-target", "dp,eo", "-q", "-out", dir}, &out, &errb)
	require.NoError(t, err, errb.String())
	assert.Contains(t, out.String(), "| λf | dp, ρ = 4 | dp, ρ = 1 | eo, ρ = 4 | eo, ρ = 1 |")
	assert.Contains(t, out.String(), "dp, ρ = 4: ")
	f, err := os.Open(filepath.Join(dir, "lambdaf.csv"))
	require.NoError(t, err)
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	require.NoError(t, err)
	require.Len(t, rows, 1+2*2*2*3)
	byKey := map[string][]string{}
	for _, r := range rows[1:] {
		byKey[r[1]+"/"+r[2]+"/"+r[3]+"/"+r[4]] = r
	}
	for _, seed := range []string{"1", "2"} {
		a, b := byKey["dp/"+seed+"/4.000000/0.000000"], byKey["dp/"+seed+"/1.000000/0.000000"]
		e := byKey["eo/"+seed+"/4.000000/0.000000"]
		require.NotNil(t, a)
		require.NotNil(t, b)
		require.NotNil(t, e)
		assert.Equal(t, a[6:10], b[6:10], "λf = 0 does not depend on ρ")
		assert.Equal(t, a[6:10], e[6:10], "λf = 0 does not depend on the fairness term")
		assert.Equal(t, "false", a[10])
	}
	// -from-csv prints the same tables from the CSV.
	var again bytes.Buffer
	require.NoError(t, run([]string{"-from-csv", filepath.Join(dir, "lambdaf.csv")}, &again, &errb))
	assert.Equal(t, out.String(), again.String())
	svg, err := os.ReadFile(filepath.Join(dir, "lambdaf.svg"))
	require.NoError(t, err)
	assert.True(t, strings.Contains(string(svg), "<svg"))
	// One legend entry per target and ρ, and the two line styles.
	for _, want := range []string{">dp, ρ = 4<", ">dp, ρ = 1<", ">eo, ρ = 4<", ">eo, ρ = 1<",
		">gap of the decision rates<", ">gap of the mean P(y = 1)<", ">parity<"} {
		assert.Contains(t, string(svg), want)
	}
	assert.Contains(t, string(svg), `λ<tspan baseline-shift="sub" font-size="8.4">f</tspan>`, "λf typeset")
	assert.NotContains(t, string(svg), "lambda_f")
	// Bad flags are errors.
	assert.Error(t, run([]string{"-lambda-f", "x"}, &out, &errb))
	assert.Error(t, run([]string{"-seeds", "0"}, &out, &errb))
	assert.Error(t, run([]string{"-target", "eq"}, &out, &errb))

	// A λs grid: one backbone per λs, the matrices and the choice.
	out.Reset()
	err = run([]string{"-synthetic-nodes", "300", "-seeds", "1", "-epochs", "10", "-lambda-f", "0,2", "-rho", "4", "-lambda-s", "0,1", "-q"}, &out, &errb)
	require.NoError(t, err, errb.String())
	assert.Contains(t, out.String(), "## λs = 0")
	assert.Contains(t, out.String(), "validation ΔDP % (mean over 1 seeds; rows λs, columns λf")
	assert.Contains(t, out.String(), "- seed 1: λs ")
}
