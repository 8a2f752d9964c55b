package main

import (
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fairmp/fairmp/layers/train"
)

func TestSelectFlag(t *testing.T) {
	base := []string{"-dataset", "synthetic", "-out", "x"}
	o, err := parseFlags(base, io.Discard)
	require.NoError(t, err)
	assert.Equal(t, train.SelectBestVal, o.train.Select, "the default: validation accuracy")
	for word, want := range map[string]train.Selection{"acc": train.SelectBestVal, "auc": train.SelectValAUC, "loss": train.SelectValLoss, "last": train.SelectLast} {
		o, err := parseFlags(append(append([]string{}, base...), "-select", word), io.Discard)
		require.NoError(t, err, word)
		assert.Equal(t, want, o.train.Select, word)
	}
	_, err = parseFlags(append(append([]string{}, base...), "-select", "f1"), io.Discard)
	var ie inputError
	require.ErrorAs(t, err, &ie)
	assert.EqualError(t, err, `-select "f1", want one of acc, auc, loss, last`)
	_, err = parseFlags([]string{"-dataset", "synthetic", "-model", "m.fmp", "-select", "auc", "-out", "x"}, io.Discard)
	require.ErrorAs(t, err, &ie)
	assert.ErrorContains(t, err, "-select would be ignored")
}

// TestSelectAUCRun: -select auc keeps the epoch of the best validation
// AUC, the search compares its candidates (two learning rates) by it, and
// metrics.json says so.
func TestSelectAUCRun(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	code, _, stderr := runCmd("-dataset", "synthetic", "-synthetic-nodes", "300", "-backbone", "mlp", "-epochs", "15",
		"-select", "auc", "-lambda-f", "0,1", "-min-group", "0", "-q", "-out", out)
	require.Contains(t, []int{0, 3, 5, 6}, code, stderr)
	b, err := os.ReadFile(filepath.Join(out, "metrics.json"))
	require.NoError(t, err)
	var doc struct {
		Settings struct {
			Selection string `json:"selection"`
		} `json:"settings"`
		Run struct {
			Search struct {
				Tried  []candidate `json:"tried"`
				Chosen candidate   `json:"chosen"`
			} `json:"search"`
		} `json:"run"`
	}
	require.NoError(t, json.Unmarshal(b, &doc))
	assert.Equal(t, "best validation AUC", doc.Settings.Selection)
	require.Len(t, doc.Run.Search.Tried, 2, "two learning rates")
	for _, c := range doc.Run.Search.Tried {
		assert.LessOrEqual(t, c.ValAUC, doc.Run.Search.Chosen.ValAUC, "lr %g", c.LR)
		assert.Positive(t, c.ValAUC)
	}
}
