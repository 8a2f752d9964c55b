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

// TestRunSmoke: a few epochs on a small graph print the table of the
// three methods for c = 3 and write the CSV.
func TestRunSmoke(t *testing.T) {
	dir := t.TempDir()
	var out, errb bytes.Buffer
	err := run([]string{"-classes", "3", "-seeds", "1", "-n", "300", "-epochs", "5", "-resamples", "100", "-timing-epochs", "0", "-out", dir}, &out, &errb)
	require.NoError(t, err, errb.String())
	for _, m := range methods {
		assert.Contains(t, out.String(), "| 3 | "+m+" |")
	}
	b, err := os.ReadFile(filepath.Join(dir, "multiclass.csv"))
	require.NoError(t, err)
	assert.Equal(t, 4, strings.Count(string(b), "\n"), "a header and three rows")
}

func TestFlagsRefused(t *testing.T) {
	for _, c := range []struct{ args, want string }{
		{"-classes 2", "-classes: \"2\" is not a class count in 3..8"},
		{"-seeds 0", "-seeds 0"},
		{"-max-acc-loss 60", "-max-acc-loss 60"},
		{"-task nope", `-task "nope": want synthetic or credit-education`},
		{"-task credit-education -data " + t.TempDir(), "-task credit-education: "},
	} {
		_, err := parseFlags(strings.Fields(c.args), &bytes.Buffer{})
		assert.ErrorContains(t, err, c.want, c.args)
	}
}

// TestCreditEducation: the real 4-class task loads from the shipped data
// (FAIRMP_DATA) and runs the three methods.
func TestCreditEducation(t *testing.T) {
	data := os.Getenv("FAIRMP_DATA")
	if data == "" {
		t.Skip("FAIRMP_DATA is not set")
	}
	ds, err := creditEducation(data)
	require.NoError(t, err)
	require.Equal(t, 4, ds.NumClasses())
	require.Equal(t, 30000, ds.N())
	dir := t.TempDir()
	var out, errb bytes.Buffer
	err = run([]string{"-task", "credit-education", "-data", data, "-seeds", "1", "-epochs", "2", "-resamples", "100", "-timing-epochs", "0", "-out", dir}, &out, &errb)
	require.NoError(t, err, errb.String())
	assert.Contains(t, out.String(), "Credit, EducationLevel as the label (4 classes), sensitive Age, 30000 nodes")
	for _, m := range methods {
		assert.Contains(t, out.String(), "| 4 | "+m+" |")
	}
}
