package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// withBand adds a second sensitive column "band" (a, b or c by row) to
// the node table of the input flags in.
func withBand(t *testing.T, in []string) {
	t.Helper()
	b, err := os.ReadFile(in[1])
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	for k := range lines {
		v := "band"
		if k > 0 {
			v = string(rune('a' + (k-1)%3))
		}
		lines[k] += "," + v
	}
	require.NoError(t, os.WriteFile(in[1], []byte(strings.Join(lines, "\n")+"\n"), 0o644))
}

func sensFlag(in []string) int {
	for k, a := range in {
		if a == "-sens" {
			return k + 1
		}
	}
	return -1
}

// TestIntersectingGroups: -sens a,b makes the six intersections the
// groups, and every method runs on them, on every criterion and both
// kinds of thresholds.
func TestIntersectingGroups(t *testing.T) {
	dir := t.TempDir()
	in := userFiles(t, dir, 600, 7)
	withBand(t, in)
	sens := in[sensFlag(in)]
	in[sensFlag(in)] = sens + ",band"
	for _, c := range []struct {
		name  string
		flags []string
		rule  string
	}{
		{"eo", []string{"-criterion", "eo", "-randomize", "-objective", "balanced-accuracy", "-max-acc-loss", "3"}, "lowest validation ΔEO within 3 accuracy points"},
		{"dp-ratio", []string{"-criterion", "dp-ratio", "-bound", "0.5"}, "highest validation accuracy with DP ratio ≥ 0.5"},
		{"eodds", []string{"-criterion", "eodds", "-bound", "60", "-randomize"}, "highest validation accuracy with ΔEOdds ≤ 60%"},
	} {
		t.Run(c.name, func(t *testing.T) {
			out := filepath.Join(dir, "res-"+c.name)
			code, stdout, stderr := runCmd(append(append(append(append([]string{}, in...), fast...), c.flags...), "-out", out)...)
			require.Equal(t, 0, code, stderr)
			assert.Contains(t, stdout, "6 groups")
			assert.Contains(t, stdout, c.rule)
			assert.Contains(t, stdout, "| thresholds |", "thresholds on six groups")
			var doc struct {
				Data struct {
					Groups []string `json:"groups"`
				} `json:"data"`
				Settings map[string]any `json:"settings"`
				Methods  map[string]struct {
					TestCriterion *float64       `json:"test_criterion"`
					Setting       map[string]any `json:"setting"`
				} `json:"methods"`
			}
			b, err := os.ReadFile(filepath.Join(out, "metrics.json"))
			require.NoError(t, err)
			require.NoError(t, json.Unmarshal(b, &doc))
			want := []string{}
			for _, g := range []string{"north", "south"} {
				for _, band := range []string{"a", "b", "c"} {
					want = append(want, fmt.Sprintf("%s=%s & band=%s", sens, g, band))
				}
			}
			assert.Equal(t, want, doc.Data.Groups)
			assert.Equal(t, c.name, doc.Settings["criterion"])
			require.Contains(t, doc.Methods, "thresholds")
			assert.Contains(t, doc.Methods["thresholds"].Setting, "threshold_group5")
			fr := readCSV(t, filepath.Join(out, "frontier.csv"))
			assert.Equal(t, "test_criterion", fr[0][len(fr[0])-1])
		})
	}
}

// TestGroupFlags: small groups are refused with the flags that help, or
// merged; bad criterion, bound and objective flags exit with status 2.
func TestGroupFlags(t *testing.T) {
	dir := t.TempDir()
	in := userFiles(t, dir, 300, 8)
	withBand(t, in)
	in[sensFlag(in)] += ",band"
	run2 := func(args ...string) (int, string, string) {
		out := filepath.Join(dir, "out")
		os.RemoveAll(out)
		return runCmd(append(append(append(append([]string{}, in...), fast...), args...), "-out", out)...)
	}
	code, _, stderr := run2("-min-group", "40")
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, "with fewer than -min-group 40 labelled nodes")
	assert.Contains(t, stderr, "add -merge-small")
	code, stdout, stderr := run2("-min-group", "40", "-merge-small")
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "groups;")
	var doc struct {
		Data struct {
			Groups   []string `json:"groups"`
			Warnings []string `json:"warnings"`
		} `json:"data"`
	}
	b, err := os.ReadFile(filepath.Join(dir, "out", "metrics.json"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &doc))
	assert.Equal(t, "other", doc.Data.Groups[len(doc.Data.Groups)-1])
	assert.Contains(t, strings.Join(doc.Data.Warnings, "\n"), `merged into group "other"`)
	code, _, stderr = run2("-min-group", "200", "-merge-small")
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, "lower -min-group")

	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-criterion", "parity"}, `-criterion "parity", want one of dp, dp-ratio, eo, eo-ratio, eodds, eodds-ratio, fpr, fpr-ratio`},
		{[]string{"-criterion", "dp-ratio", "-bound", "80"}, "-bound 80 for -criterion dp-ratio, want the smallest allowed ratio in (0, 1]"},
		{[]string{"-criterion", "eo", "-bound", "-1"}, "-bound -1 for -criterion eo, want the largest allowed difference in points"},
		{[]string{"-bound", "5", "-max-acc-loss", "2"}, "-bound and -max-acc-loss are two rules"},
		{[]string{"-objective", "f1"}, `-objective "f1"`},
		{[]string{"-merge-small", "-min-group", "0"}, "-merge-small needs -min-group above 0"},
		{[]string{"-min-group", "-3"}, "-min-group -3"},
	} {
		code, _, stderr := run2(c.args...)
		assert.Equal(t, 2, code, "%v: %s", c.args, stderr)
		assert.Contains(t, stderr, c.want, "%v", c.args)
	}
	code, _, stderr = runCmd("-dataset", "synthetic", "-sens", "x", "-q", "-out", filepath.Join(dir, "o2"))
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, "-sens x is for -nodes/-edges")
}

// TestSmallIntersectionRuns: an intersection of 7 nodes, all negative,
// with the advice followed (-min-group below its size) runs to the end:
// the split, drawn within each group and label, gives it validation and
// test nodes, and the rates it leaves undefined (its true-positive rate,
// so ΔEO and ΔEOdds) are reported as n/a and null with a warning naming
// the group, never as a number and never as an abort.
func TestSmallIntersectionRuns(t *testing.T) {
	dir := t.TempDir()
	in := userFiles(t, dir, 600, 7)
	b, err := os.ReadFile(in[1])
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	head := strings.Split(lines[0], ",")
	col := func(name string) int {
		for k, h := range head {
			if h == name {
				return k
			}
		}
		t.Fatalf("no column %s", name)
		return -1
	}
	lab, sen := col(in[sensFlag(in)-2]), col(in[sensFlag(in)])
	rare := 0
	for k := range lines {
		v := "common"
		if k == 0 {
			v = "rare"
		} else if f := strings.Split(lines[k], ","); rare < 7 && f[sen] == "north" && f[lab] == "no" {
			v, rare = "x", rare+1
		}
		lines[k] += "," + v
	}
	require.Equal(t, 7, rare)
	require.NoError(t, os.WriteFile(in[1], []byte(strings.Join(lines, "\n")+"\n"), 0o644))
	split := in[len(in)-1]
	in = append(in[:len(in)-2], "-drop", split)
	in[sensFlag(in)] += ",rare"
	out := filepath.Join(dir, "res")
	code, stdout, stderr := runCmd(append(append(append([]string{}, in...), fast...), "-min-group", "5", "-criterion", "dp", "-out", out)...)
	require.Contains(t, []int{0, 3, 5}, code, "the run ends with its outputs\n%s", stderr)
	assert.FileExists(t, filepath.Join(out, "metrics.json"))
	assert.Contains(t, stderr, "[undefined-metric]: ΔEO is undefined on these nodes: group \"group=north & rare=x\" has 2 evaluated nodes, none positive")
	assert.Contains(t, stderr, "[undefined-metric]: ΔEOdds is undefined on these nodes: group \"group=north & rare=x\"")
	assert.NotContains(t, stderr, "{LambdaS", "no Go value in a message")
	assert.Contains(t, stdout, "| n/a |", "the table's ΔEO column")
	var doc struct {
		Methods map[string]struct {
			Test map[string]any `json:"test"`
		} `json:"methods"`
	}
	b, err = os.ReadFile(filepath.Join(out, "metrics.json"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &doc))
	for _, m := range []string{"backbone", "fmp", "thresholds"} {
		require.Contains(t, doc.Methods, m)
		for _, c := range []string{"equal_opportunity", "equalized_odds"} {
			assert.Contains(t, doc.Methods[m].Test, c, m)
			assert.Nil(t, doc.Methods[m].Test[c], "%s %s: undefined is null", m, c)
		}
		assert.NotNil(t, doc.Methods[m].Test["demographic_parity"], m)
	}
}
