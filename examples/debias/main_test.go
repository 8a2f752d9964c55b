package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"encoding/xml"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/fairmp/fairmp/graph/datasets"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// userFiles writes a generated graph in the documented format and
// returns the input flags that read it.
func userFiles(t *testing.T, dir string, n int, seed int64) []string {
	t.Helper()
	sc := datasets.DefaultSyntheticConfig()
	sc.N, sc.Seed = n, seed
	ds, err := datasets.Synthetic(sc)
	require.NoError(t, err)
	ds.GroupNames = []string{"north", "south"}
	ds.ClassNames = []string{"no", "yes"}
	c, err := datasets.WriteFiles(ds, filepath.Join(dir, "nodes.csv"), filepath.Join(dir, "edges.csv"))
	require.NoError(t, err)
	return []string{"-nodes", c.Nodes, "-edges", c.Edges, "-id", c.IDColumn, "-label", c.LabelColumn, "-sens", c.SensColumn, "-split-column", c.SplitColumn}
}

func runCmd(args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := run(context.Background(), args, &out, &errb)
	return code, out.String(), errb.String()
}

func readCSV(t *testing.T, path string) [][]string {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	require.NoError(t, err)
	return rows
}

func column(t *testing.T, rows [][]string, name string) []string {
	t.Helper()
	k := -1
	for j, h := range rows[0] {
		if h == name {
			k = j
		}
	}
	require.GreaterOrEqual(t, k, 0, "no column %s in %v", name, rows[0])
	out := make([]string, 0, len(rows)-1)
	for _, r := range rows[1:] {
		out = append(out, r[k])
	}
	return out
}

var fast = []string{"-epochs", "30", "-lr", "0.01", "-lambda-f", "0,1,4", "-q"}

// TestSmoke runs the command on generated files, checks every output
// against each other, predicts again from the saved model and checks the
// predictions are the same, and reruns to check determinism.
func TestSmoke(t *testing.T) {
	dir := t.TempDir()
	in := userFiles(t, dir, 400, 3)
	out := filepath.Join(dir, "res")
	code, stdout, stderr := runCmd(append(append(append([]string{}, in...), fast...), "-out", out)...)
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "| fmp |")
	for _, f := range []string{"metrics.json", "predictions.csv", "frontier.csv", "frontier.svg", "model.fmp"} {
		require.FileExists(t, filepath.Join(out, f))
	}
	// predictions.csv: one row per node, ids and names as in the input.
	pred := readCSV(t, filepath.Join(out, "predictions.csv"))
	require.Len(t, pred, 401)
	assert.Equal(t, []string{"node", "group", "label", "split", "backbone_p1", "backbone_decision", "fmp_p1", "fmp_decision", "thresholds_p1", "thresholds_decision"}, pred[0])
	assert.Equal(t, "n0", pred[1][0])
	assert.Contains(t, []string{"north", "south"}, pred[1][1])
	assert.Contains(t, []string{"no", "yes"}, pred[1][5])
	// The decisions are the probabilities above 0.5, for backbone and FMP.
	for _, m := range []string{"backbone", "fmp"} {
		p, d := column(t, pred, m+"_p1"), column(t, pred, m+"_decision")
		for i := range p {
			v, err := strconv.ParseFloat(p[i], 64)
			require.NoError(t, err)
			if v != 0.5 && (v > 0.5) != (d[i] == "yes") {
				t.Fatalf("%s node %d: p1 %v, decision %s", m, i, v, d[i])
			}
		}
	}
	// frontier.csv: 2 λs × 3 λf, one chosen, whose test metrics are FMP's
	// in metrics.json.
	fr := readCSV(t, filepath.Join(out, "frontier.csv"))
	require.Len(t, fr, 7)
	chosen := column(t, fr, "chosen")
	assert.Equal(t, 1, strings.Count(strings.Join(chosen, ""), "1"))
	var doc struct {
		Methods map[string]struct {
			Val, Test struct {
				Accuracy float64 `json:"accuracy"`
				DP       float64 `json:"demographic_parity"`
				Groups   []struct {
					Count int `json:"count"`
				} `json:"groups"`
			}
		} `json:"methods"`
		Data struct {
			Groups []string `json:"groups"`
		} `json:"data"`
	}
	b, err := os.ReadFile(filepath.Join(out, "metrics.json"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &doc))
	assert.Equal(t, []string{"north", "south"}, doc.Data.Groups)
	require.Contains(t, doc.Methods, "thresholds")
	for k, c := range chosen {
		if c == "1" {
			acc, _ := strconv.ParseFloat(fr[k+1][4], 64)
			assert.InDelta(t, doc.Methods["fmp"].Test.Accuracy, acc, 1e-6)
		}
	}
	assert.Len(t, doc.Methods["backbone"].Test.Groups, 2)
	svg, err := os.ReadFile(filepath.Join(out, "frontier.svg"))
	require.NoError(t, err)
	assert.Contains(t, string(svg), "<svg")
	// A well-formed SVG with both panels, a typeset line per λs, the
	// baselines and the rule's limit.
	require.NoError(t, xml.Unmarshal(svg, new(struct{})))
	for _, want := range []string{": validation (choice)<", ": test<", `FMP, λ<tspan baseline-shift="sub" font-size="8.4">s</tspan> = 0<`,
		`FMP, λ<tspan baseline-shift="sub" font-size="8.4">s</tspan> = 1<`, ">FMP chosen<", ">backbone<", ">thresholds<", ">rule: accuracy ≥ "} {
		assert.Contains(t, string(svg), want)
	}

	// Predict with the saved model: the FMP probabilities, bit for bit.
	again := filepath.Join(dir, "again")
	code, _, stderr = runCmd(append(append([]string{}, in...), "-q", "-model", filepath.Join(out, "model.fmp"), "-out", again)...)
	require.Equal(t, 0, code, stderr)
	pred2 := readCSV(t, filepath.Join(again, "predictions.csv"))
	assert.Equal(t, column(t, pred, "fmp_p1"), column(t, pred2, "model_p1"))
	assert.NoFileExists(t, filepath.Join(again, "model.fmp"))

	// The same seed again: the same predictions; -overwrite replaces.
	code, _, stderr = runCmd(append(append(append([]string{}, in...), fast...), "-out", out, "-overwrite")...)
	require.Equal(t, 0, code, stderr)
	assert.Equal(t, pred, readCSV(t, filepath.Join(out, "predictions.csv")))
	svg2, err := os.ReadFile(filepath.Join(out, "frontier.svg"))
	require.NoError(t, err)
	assert.Equal(t, string(svg), string(svg2), "frontier.svg differs between two runs")
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	for _, e := range entries {
		assert.False(t, strings.HasPrefix(e.Name(), "."), "temporary %s left behind", e.Name())
	}
}

// TestBadInput: every class of bad input exits with status 2, one line
// naming the flag or file:line:column, and nothing written to -out.
func TestBadInput(t *testing.T) {
	dir := t.TempDir()
	in := userFiles(t, dir, 200, 4)
	other := filepath.Join(dir, "other")
	require.NoError(t, os.Mkdir(other, 0o755))
	otherIn := userFiles(t, other, 200, 5)
	// A model trained on the other graph.
	code, _, stderr := runCmd(append(append(append([]string{}, otherIn...), fast...), "-out", filepath.Join(other, "res"))...)
	require.Equal(t, 0, code, stderr)
	otherModel := filepath.Join(other, "res", "model.fmp")
	mb, err := os.ReadFile(otherModel)
	require.NoError(t, err)
	corrupt := filepath.Join(dir, "corrupt.fmp")
	require.NoError(t, os.WriteFile(corrupt, mb[:len(mb)-10], 0o644))
	badCell := filepath.Join(dir, "bad.csv")
	nodes, err := os.ReadFile(in[1])
	require.NoError(t, err)
	lines := strings.SplitN(string(nodes), "\n", 4)
	fields := strings.Split(lines[2], ",")
	fields[2] = "abc"
	lines[2] = strings.Join(fields, ",")
	require.NoError(t, os.WriteFile(badCell, []byte(strings.Join(lines, "\n")), 0o644))
	badEdges := filepath.Join(dir, "bad_edges.csv")
	require.NoError(t, os.WriteFile(badEdges, []byte("source,target\nn0,n1\nn1,zz9\n"), 0o644))
	existing := filepath.Join(dir, "exists")
	require.NoError(t, os.Mkdir(existing, 0o755))

	with := func(flag, value string) []string {
		a := append([]string{}, in...)
		for k := range a {
			if a[k] == flag {
				a[k+1] = value
				return a
			}
		}
		return append(a, flag, value)
	}
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"unknown flag", append(append([]string{}, in...), "-bogus"), "flag provided but not defined: -bogus"},
		{"no input", []string{"-q"}, "no input: give -nodes and -edges"},
		{"no label", []string{"-nodes", in[1], "-edges", in[3], "-sens", "group"}, "-label and -sens"},
		{"backbone", with("-backbone", "resnet"), `-backbone "resnet", want one of appnp, gat, gcn, gin, jknet, mlp, sage, sgc`},
		{"backbone fmp", with("-backbone", "fmp"), `-backbone "fmp", want one of`},
		{"hidden without one", append(with("-backbone", "sgc"), "-hidden", "32"), `-hidden 32: the sgc backbone has no hidden layer`},
		{"gat hidden", append(with("-backbone", "gat"), "-hidden", "30"), `not a multiple of its 4 heads`},
		{"dtype", with("-dtype", "float16"), `-dtype "float16"`},
		{"lambda-f", with("-lambda-f", "1,x"), `-lambda-f "1,x": "x" is not a finite number`},
		{"lambda-f negative", with("-lambda-f", "-1"), `-lambda-f "-1": "-1" is below 0`},
		{"rule", with("-max-acc-loss", "0"), "-max-acc-loss 0, want accuracy points in (0, 50): 1 is one point"},
		{"epochs", with("-epochs", "0"), "-epochs 0, want ≥ 1"},
		{"comma", with("-comma", "x"), `-comma "x"`},
		{"missing file", with("-nodes", filepath.Join(dir, "nope.csv")), "nope.csv: open"},
		{"missing column", with("-sens", "gender"), `nodes.csv:1: missing column "gender"`},
		{"bad cell", with("-nodes", badCell), `bad.csv:3:`},
		{"unknown edge id", with("-edges", badEdges), `bad_edges.csv:3:4: node id "zz9" is not in the node table's id column`},
		{"model for another graph, -same-graph", append(with("-model", otherModel), "-same-graph"), "(-same-graph asks for the graph the model was saved for)"},
		{"corrupt model", with("-model", corrupt), "corrupt.fmp: modelio:"},
		{"trust-column-order without -model", append(append([]string{}, in...), "-trust-column-order"), "-trust-column-order vouches for the columns of a -model file without a feature schema; give -model"},
		{"out exists", with("-out", existing), "exists; choose a new folder or add -overwrite"},
		{"two rules", append(with("-bound", "5"), "-max-acc-loss", "2"), "-bound and -max-acc-loss are two rules, want one"},
		{"model and backbone", append(with("-model", otherModel), "-backbone", "gat"), "which trains and chooses nothing: -backbone would be ignored"},
		{"method", with("-method", "fairness"), `-method "fairness", want one of edits, regularizer, adversary, mixup, redress, fairgnn, nifty, fairvgnn, rawlsgcn`},
		{"method post", with("-method", "thresholds"), "-method thresholds: a post-processing method, which every run fits on the trained model"},
		{"method fmp", with("-method", "fmp"), "-method fmp: every run puts FMP on the backbone"},
		{"method weight", append(with("-method", "edits"), "-method-weight", "1"), "-method-weight 1: -method edits has no weight"},
		{"method weight alone", with("-method-weight", "2"), "-method-weight 2 without -method"},
		{"degree groups", with("-degree-groups", "1"), "-degree-groups 1, want ≥ 2 degree groups"},
		{"rawlsgcn weight", append(with("-method", "rawlsgcn"), "-method-weight", "0.5"), "want 1 (the doubly stochastic matrix) or 0"},
		{"method weight", append(with("-method", "regularizer"), "-method-weight", "-1"), "-method regularizer -method-weight -1:"},
		{"model and method", append(with("-model", otherModel), "-method", "nifty"), "which trains and chooses nothing: -method would be ignored"},
		{"no out", in, "-out is required"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(dir, "out-"+strings.ReplaceAll(tc.name, " ", "-"))
			args := append(append([]string{}, tc.args...), "-q")
			if !containsArg(tc.args, "-model") {
				args = append(args, "-epochs", "2")
			}
			if tc.name != "no out" && !containsArg(tc.args, "-out") {
				args = append(args, "-out", out)
			}
			if tc.name == "epochs" {
				args = append(tc.args, "-q", "-out", out)
			}
			code, _, stderr := runCmd(args...)
			assert.Equal(t, 2, code, stderr)
			assert.Contains(t, stderr, tc.want)
			assert.NoDirExists(t, out)
		})
	}
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	for _, e := range entries {
		assert.False(t, strings.HasPrefix(e.Name(), "."), "temporary %s left behind", e.Name())
	}
	// -h explains itself and exits 0.
	code, _, stderr = runCmd("-h")
	assert.Equal(t, 0, code)
	assert.Contains(t, stderr, "debias trains a GNN on a graph")
	assert.Contains(t, stderr, "-max-acc-loss")
}

func containsArg(args []string, a string) bool {
	for _, x := range args {
		if x == a {
			return true
		}
	}
	return false
}

// TestInterruptStops: a cancelled context (the command's Ctrl-C) stops
// the run with exit status 1, a message that says so, and no output
// folder.
func TestInterruptStops(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	done, cancel := context.WithCancel(context.Background())
	cancel()
	var stdout, stderr bytes.Buffer
	code := run(done, append(append(userFiles(t, dir, 200, 3), fast...), "-out", out), &stdout, &stderr)
	assert.Equal(t, 1, code, stderr.String())
	assert.Contains(t, stderr.String(), "context canceled")
	assert.NoDirExists(t, out)
}
