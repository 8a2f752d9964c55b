package main

import (
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// grow writes to dst the node table and edge list of src (files
// -export wrote) with k new nodes: each a copy of a random node's
// features with a little noise, no label and no split, joined to 5
// random old nodes. It returns the new nodes' ids.
func grow(t *testing.T, src, dst string, k int, seed int64) []string {
	t.Helper()
	rng := rand.New(rand.NewSource(seed))
	rows := readCSV(t, filepath.Join(src, "nodes.csv"))
	hdr, body := rows[0], rows[1:]
	var b strings.Builder
	b.WriteString(strings.Join(hdr, ",") + "\n")
	for _, r := range body {
		b.WriteString(strings.Join(r, ",") + "\n")
	}
	ids := make([]string, k)
	for j := range ids {
		r := append([]string(nil), body[rng.Intn(len(body))]...)
		for c, name := range hdr {
			switch {
			case name == "node":
				r[c] = fmt.Sprintf("new%d", j)
			case name == "label" || name == "split":
				r[c] = ""
			case strings.HasPrefix(name, "x"):
				var v float64
				_, err := fmt.Sscan(r[c], &v)
				require.NoError(t, err)
				r[c] = fmt.Sprint(v + 0.1*rng.NormFloat64())
			}
		}
		ids[j] = r[0]
		b.WriteString(strings.Join(r, ",") + "\n")
	}
	require.NoError(t, os.MkdirAll(dst, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dst, "nodes.csv"), []byte(b.String()), 0o644))
	edges, err := os.ReadFile(filepath.Join(src, "edges.csv"))
	require.NoError(t, err)
	e := string(edges)
	for _, id := range ids {
		for _, v := range rng.Perm(len(body))[:5] {
			e += fmt.Sprintf("%s,%s\n", id, body[v][0])
		}
	}
	require.NoError(t, os.WriteFile(filepath.Join(dst, "edges.csv"), []byte(e), 0o644))
	return ids
}

// TestModelScoresGrownGraph: a model trained on the synthetic export
// scores that graph grown by 100 nodes (new rows, 5 edges each): a
// prediction for every node, the new ones included, and a line saying
// the graph is another; -same-graph refuses it.
func TestModelScoresGrownGraph(t *testing.T) {
	dir := t.TempDir()
	syn, grown := filepath.Join(dir, "syn"), filepath.Join(dir, "grown")
	code, _, errs := runCmd("-dataset", "synthetic", "-export", syn, "-q")
	require.Equal(t, 0, code, errs)
	ids := grow(t, syn, grown, 100, 3)
	in := func(d string) []string {
		return []string{"-nodes", filepath.Join(d, "nodes.csv"), "-edges", filepath.Join(d, "edges.csv"),
			"-id", "node", "-label", "label", "-sens", "group", "-split-column", "split", "-no-scale"}
	}
	trained := filepath.Join(dir, "trained")
	code, _, errs = runCmd(append(in(syn), "-epochs", "20", "-lambda-f", "0,1", "-lambda-s", "0", "-q", "-out", trained)...)
	require.Equal(t, 0, code, errs)

	scored := filepath.Join(dir, "scored")
	model := filepath.Join(trained, "model.fmp")
	code, _, errs = runCmd(append(in(grown), "-model", model, "-out", scored)...)
	require.Equal(t, 0, code, errs)
	assert.Contains(t, errs, "was trained on a graph of 2000 nodes and 10000 edges; scoring this one of 2100 nodes and 10500 edges")
	rows := readCSV(t, filepath.Join(scored, "predictions.csv"))
	require.Len(t, rows, 2101, "a header and a prediction for each of the 2100 nodes")
	nodes := column(t, rows, "node")
	p1 := column(t, rows, "model_p1")
	for i, id := range nodes {
		assert.NotEmpty(t, p1[i], "node %s has no prediction", id)
	}
	assert.Equal(t, ids, nodes[2000:], "the new nodes, in the table's order")
	seen := column(t, rows, "seen")
	for i, v := range seen {
		want := map[bool]string{true: "yes", false: "no"}[i < 2000]
		require.Equal(t, want, v, "node %s", nodes[i])
	}
	var doc struct {
		Run   map[string]any `json:"run"`
		Drift struct {
			Scored   string           `json:"scored"`
			Nodes    int              `json:"nodes"`
			Groups   []map[string]any `json:"groups"`
			Criteria []map[string]any `json:"criteria"`
			Warnings []string         `json:"warnings"`
		} `json:"drift"`
	}
	raw, err := os.ReadFile(filepath.Join(scored, "metrics.json"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(raw, &doc))
	assert.Equal(t, "fitted", doc.Run["fmp_scoring"])
	assert.Equal(t, "the new nodes", doc.Drift.Scored)
	assert.Equal(t, 100, doc.Drift.Nodes)
	assert.Len(t, doc.Drift.Groups, 2)
	assert.NotEmpty(t, doc.Drift.Criteria, "ΔDP at least is compared on unlabelled new nodes")
	for _, w := range doc.Drift.Warnings {
		assert.Contains(t, errs, "warning: drift on the new nodes: "+w)
	}

	// Recomputing FMP over the grown graph: every node scored, said so.
	code, _, errs = runCmd(append(in(grown), "-model", model, "-fmp-scoring", "recompute", "-q", "-out", filepath.Join(dir, "recomputed"))...)
	require.Equal(t, 0, code, errs)
	raw, err = os.ReadFile(filepath.Join(dir, "recomputed", "metrics.json"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(raw, &doc))
	assert.Equal(t, "recompute", doc.Run["fmp_scoring"])

	// An edge added between two old nodes: the table's first rows are no
	// longer the training graph, so which nodes the model saw cannot be
	// told; said, and the column left empty.
	e, err := os.ReadFile(filepath.Join(grown, "edges.csv"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(grown, "edges.csv"), append(e, []byte(nodes[0]+","+nodes[1999]+"\n")...), 0o644))
	code, _, errs = runCmd(append(in(grown), "-model", model, "-out", filepath.Join(dir, "rewired"))...)
	require.Equal(t, 0, code, errs)
	assert.Contains(t, errs, "are not the graph the model was trained on")
	for _, v := range column(t, readCSV(t, filepath.Join(dir, "rewired", "predictions.csv")), "seen") {
		require.Empty(t, v)
	}

	code, _, errs = runCmd(append(in(grown), "-model", model, "-same-graph", "-out", filepath.Join(dir, "refused"))...)
	assert.Equal(t, 2, code)
	assert.Contains(t, errs, "saved for a graph of 2000 nodes, the graph of -edges has 2100 (-same-graph asks for the graph the model was saved for)")
	assert.NoDirExists(t, filepath.Join(dir, "refused"))
}

// TestSplitOverlapWarns: test nodes that are also validation (or
// training) nodes are said, with how to draw an honest split (issue 43:
// NBA's preset makes validation the test set without a word).
func TestSplitOverlapWarns(t *testing.T) {
	dir := t.TempDir()
	syn := filepath.Join(dir, "syn")
	code, _, errs := runCmd("-dataset", "synthetic", "-export", syn, "-q")
	require.Equal(t, 0, code, errs)
	rows := readCSV(t, filepath.Join(syn, "nodes.csv"))
	split := column(t, rows, "split")
	var val []int
	for i, s := range split {
		if s == "val" {
			val = append(val, i)
		}
	}
	var train []int
	for i, s := range split {
		if s == "train" {
			train = append(train, i)
		}
	}
	js, err := json.Marshal(map[string][]int{"train": train, "val": val, "test": val})
	require.NoError(t, err)
	sf := filepath.Join(dir, "split.json")
	require.NoError(t, os.WriteFile(sf, js, 0o644))
	code, _, errs = runCmd("-nodes", filepath.Join(syn, "nodes.csv"), "-edges", filepath.Join(syn, "edges.csv"), "-id", "node",
		"-label", "label", "-sens", "group", "-split", sf, "-drop", "split", "-no-scale", "-epochs", "100", "-lr", "0.01", "-q", "-out", filepath.Join(dir, "out"))
	require.Equal(t, 0, code, errs)
	assert.Contains(t, errs, fmt.Sprintf("%d of the %d test nodes are validation nodes too, so the test metrics are not held out", len(val), len(val)))
	assert.Contains(t, errs, "give -split or -split-column with disjoint lists")
}
