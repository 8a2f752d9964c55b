package main

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestStudySmoke runs the sweep and the modes on the generated graph with
// one seed and two epochs: the tables come out with a row per setting.
func TestStudySmoke(t *testing.T) {
	if testing.Short() {
		t.Skip("trains models; skipped with -short")
	}
	var out, log bytes.Buffer
	err := run([]string{"-datasets", "synthetic", "-seeds", "1", "-epochs", "2", "-k", "2", "-temps", "1"}, &out, &log)
	require.NoError(t, err, log.String())
	assert.Contains(t, out.String(), "Normalized")
	assert.Contains(t, out.String(), "oracle")
	out.Reset()
	err = run([]string{"-datasets", "synthetic", "-seeds", "1", "-epochs", "2", "-part", "modes", "-modes", "2:1:1"}, &out, &log)
	require.NoError(t, err, log.String())
	assert.Contains(t, out.String(), "InferenceOnly")
}

// TestStudyFlags: bad flags are errors naming the flag; a data set whose
// files are missing is skipped with a note.
func TestStudyFlags(t *testing.T) {
	var out, log bytes.Buffer
	assert.ErrorContains(t, run([]string{"-seeds", "0"}, &out, &log), "-seeds")
	assert.ErrorContains(t, run([]string{"-part", "nope", "-datasets", "synthetic", "-epochs", "1", "-seeds", "1"}, &out, &log), "unknown -part")
	assert.ErrorContains(t, run([]string{"extra"}, &out, &log), "unexpected arguments")
	// The sweep's lists are checked, not read as zeros.
	quick := []string{"-datasets", "synthetic", "-epochs", "1", "-seeds", "1"}
	assert.ErrorContains(t, run(append(quick, "-k", "2,x"), &out, &log), `-k: "x" is not an integer`)
	assert.ErrorContains(t, run(append(quick, "-k", "0"), &out, &log), `-k: "0" is below 1`)
	assert.ErrorContains(t, run(append(quick, "-ls", "-1"), &out, &log), `-ls: "-1" is below 0`)
	assert.ErrorContains(t, run(append(quick, "-temps", "0.5,y"), &out, &log), `-temps: "y" is not a finite number`)
	log.Reset()
	require.NoError(t, run([]string{"-datasets", "bail", "-data", "", "-seeds", "1", "-epochs", "1"}, &out, &log))
	assert.Contains(t, log.String(), "bail: skipped")
}
