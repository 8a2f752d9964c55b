package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/fairmp/fairmp/metrics"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestThreeClassesTableIsClassCriteria (issue 57): with -classes 3 the
// table's ΔDP and ΔEO are the c-class criteria (the largest gap between
// the groups over the classes, metrics.EvaluateClasses), computed here
// again from predictions.csv's decisions, and metrics.json keeps the
// c-class reports. Before, they were the one-vs-rest values of class 1
// alone, while the frontier chose by the c-class criterion.
func TestThreeClassesTableIsClassCriteria(t *testing.T) {
	dir := t.TempDir()
	third := threeClassFiles(t, dir)
	out := filepath.Join(dir, "out")
	code, stdout, stderr := runCmd(append(append(append([]string{}, third...), "-classes", "3"), append(fast, "-out", out)...)...)
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "3 classes: each criterion is the largest gap between the groups over the classes")

	rows := readCSV(t, filepath.Join(out, "predictions.csv"))
	split, label, group := column(t, rows, "split"), column(t, rows, "label"), column(t, rows, "group")
	classOf := map[string]int{"maybe": 0, "no": 1, "yes": 2} // sorted order, as the loader maps values
	groupOf := map[string]int{"north": 0, "south": 1}
	var doc struct {
		Methods map[string]struct {
			TestCriterion *float64 `json:"test_criterion"`
			TestClasses   *struct {
				Accuracy float64 `json:"accuracy"`
			} `json:"test_classes"`
		} `json:"methods"`
	}
	raw, err := os.ReadFile(filepath.Join(out, "metrics.json"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(raw, &doc))
	// With three classes the post-processing row is the per-group class
	// offsets (the thresholds need two classes), judged like the others.
	assert.Contains(t, stdout, "| offsets |")
	assert.NotContains(t, stdout, "per-group thresholds need two classes")
	// The figures: the frontier drawn at the c-class criterion, and
	// each class's selection rate per group.
	svg, err := os.ReadFile(filepath.Join(out, "frontier.svg"))
	require.NoError(t, err)
	assert.Contains(t, string(svg), "ΔDP, c classes (%)")
	svg, err = os.ReadFile(filepath.Join(out, "groups.svg"))
	require.NoError(t, err)
	for _, k := range []string{"maybe", "no", "yes"} {
		assert.Contains(t, string(svg), "selection rate P(ŷ = "+k+")")
	}
	page, err := os.ReadFile(filepath.Join(out, "report.html"))
	require.NoError(t, err)
	assert.Contains(t, string(page), "each class's share % of the labelled")
	assert.NotContains(t, string(page), "randomized false", "the thresholds' settings, with no thresholds row")
	for _, name := range []string{"backbone", "fmp", "offsets"} {
		dec := column(t, rows, name+"_decision")
		var pred, lab, sens []int
		for i := range split {
			if split[i] != "test" {
				continue
			}
			pred, lab, sens = append(pred, classOf[dec[i]]), append(lab, classOf[label[i]]), append(sens, groupOf[group[i]])
		}
		b, err := metrics.ByGroupClasses(pred, lab, sens, 3)
		require.NoError(t, err)
		want, _, err := b.Criterion(metrics.DPDifference)
		require.NoError(t, err)
		me := doc.Methods[name]
		require.NotNil(t, me.TestCriterion, name)
		assert.InDelta(t, want, *me.TestCriterion, 1e-12, "%s: the table's ΔDP is the 3-class one", name)
		require.NotNil(t, me.TestClasses, name)
	}
}

// threeClassFiles writes the generated 400-node table of userFiles with a
// third label, "maybe" for every third "yes", and returns the flags that
// read it.
func threeClassFiles(t *testing.T, dir string) []string {
	t.Helper()
	in := userFiles(t, dir, 400, 6)
	return rewriteLabels(t, in, dir, "three.csv", func(r int, v string) string {
		if v == "yes" && r%3 == 0 {
			return "maybe"
		}
		return v
	})
}
