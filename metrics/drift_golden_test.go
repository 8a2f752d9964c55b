package metrics

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// goldenBinary is a binary baseline as model files record it (group names,
// feature references) and its comparison with a more biased, unlabelled
// population: written once by FAIRMP_WRITE_GOLDEN=1 before per-class drift
// existed, so that binary baselines and their drift stay the same byte for
// byte, and a file written before still decodes and compares.
func goldenBinary(t *testing.T) (b Baseline, d Drift) {
	t.Helper()
	p, labels, sens := driftData(1200, 0.2, 11)
	val := make([]int, 600)
	for i := range val {
		val[i] = i
	}
	b, err := NewBaseline(p, 2, labels, sens, val, DefaultOptions(), DefaultBootstrapConfig())
	require.NoError(t, err)
	b.GroupNames = []string{"F", "M"}
	x := make([]float64, len(sens))
	for i := range x {
		x[i] = p[2*i+1]
	}
	require.NoError(t, b.RecordFeatures(x, 1, []string{"score"}, val))
	q, _, qs := driftData(400, 1.5, 12)
	sc := Scored{Probs: q, Classes: 2, Sens: qs, X: make([]float64, len(qs)), D: 1}
	for i := range qs {
		sc.X[i] = q[2*i+1]
	}
	d, err = b.Compare(sc, DefaultOptions(), DefaultBootstrapConfig())
	require.NoError(t, err)
	return b, d
}

func TestBinaryBaselineGolden(t *testing.T) {
	b, d := goldenBinary(t)
	bj, err := json.MarshalIndent(b, "", "\t")
	require.NoError(t, err)
	dj, err := json.MarshalIndent(d, "", "\t")
	require.NoError(t, err)
	bp, dp := filepath.Join("testdata", "baseline_binary.json"), filepath.Join("testdata", "drift_binary.json")
	if os.Getenv("FAIRMP_WRITE_GOLDEN") == "1" {
		require.NoError(t, os.WriteFile(bp, append(bj, '\n'), 0o644))
		require.NoError(t, os.WriteFile(dp, append(dj, '\n'), 0o644))
	}
	wantB, err := os.ReadFile(bp)
	require.NoError(t, err)
	wantD, err := os.ReadFile(dp)
	require.NoError(t, err)
	assert.Equal(t, string(wantB), string(append(bj, '\n')), "a binary baseline is written as before, byte for byte")
	assert.Equal(t, string(wantD), string(append(dj, '\n')), "a binary baseline compares as before")

	// The file decodes strictly, validates, and compares as it did.
	var old Baseline
	dec := json.NewDecoder(bytes.NewReader(wantB))
	dec.DisallowUnknownFields()
	require.NoError(t, dec.Decode(&old))
	require.NoError(t, old.Validate())
	q, _, qs := driftData(400, 1.5, 12)
	sc := Scored{Probs: q, Classes: 2, Sens: qs, X: make([]float64, len(qs)), D: 1}
	for i := range qs {
		sc.X[i] = q[2*i+1]
	}
	again, err := old.Compare(sc, DefaultOptions(), DefaultBootstrapConfig())
	require.NoError(t, err)
	aj, err := json.MarshalIndent(again, "", "\t")
	require.NoError(t, err)
	assert.Equal(t, string(wantD), string(append(aj, '\n')))
	assert.NotEmpty(t, again.Warnings, "the golden comparison does drift")
}
