package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// -method edits debiases the graph and features before the backbone
// trains, prints what it changed and EDITS' bias before and after, and
// the run goes on with FMP and the thresholds; it has no weight, and
// needs two groups.
func TestMethodEDITS(t *testing.T) {
	out := filepath.Join(t.TempDir(), "res")
	code, stdout, stderr := runCmd("-dataset", "synthetic", "-synthetic-nodes", "300", "-epochs", "5", "-lambda-f", "0,1", "-method", "edits", "-out", out)
	// Five epochs on 75 test nodes: no row need be shown to beat the
	// majority rate (exit status 6, everything written); EDITS is what
	// this test is about.
	require.Contains(t, []int{0, 6}, code, stderr)
	assert.Contains(t, stderr, "edits: attribute bias")
	assert.Contains(t, stderr, "edges removed")
	assert.Contains(t, stdout, "| fmp |")
	assert.Contains(t, stdout, "| thresholds |")
	assert.NoFileExists(t, filepath.Join(out, "model.fmp"), "a model of EDITS' features cannot score raw ones")
	assert.Contains(t, stdout, "no model.fmp: the backbone learnt the graph and features -method edits made")
	b, err := os.ReadFile(filepath.Join(out, "metrics.json"))
	require.NoError(t, err)
	var doc struct {
		Settings struct {
			Method string `json:"method"`
		} `json:"settings"`
		Run struct {
			Preprocess struct {
				Method         string     `json:"method"`
				EdgesBefore    int        `json:"edges_before"`
				AttributeBias  [2]float64 `json:"attribute_bias"`
				StructuralBias [2]float64 `json:"structural_bias"`
			} `json:"preprocess"`
		} `json:"run"`
	}
	require.NoError(t, json.Unmarshal(b, &doc))
	assert.Equal(t, "edits", doc.Settings.Method)
	assert.Equal(t, "edits", doc.Run.Preprocess.Method)
	assert.Positive(t, doc.Run.Preprocess.EdgesBefore)
	assert.Positive(t, doc.Run.Preprocess.AttributeBias[0])

	code, _, stderr = runCmd("-dataset", "synthetic", "-synthetic-nodes", "300", "-epochs", "5", "-method", "edits", "-method-weight", "2", "-out", out+"2")
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, "-method edits has no weight")

	code, _, stderr = runCmd("-dataset", "synthetic", "-synthetic-nodes", "300", "-epochs", "5", "-method", "edits", "-degree-groups", "3", "-out", out+"3")
	assert.Equal(t, 2, code, stderr)
	assert.Contains(t, stderr, "EDITS compares two groups")
}

func TestHelpOffersEDITS(t *testing.T) {
	_, _, stderr := runCmd("-h")
	assert.Contains(t, stderr, "or debias the graph and features before training: edits")
}
