package main

import (
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

	code, _, errs = runCmd(append(in(grown), "-model", model, "-same-graph", "-out", filepath.Join(dir, "refused"))...)
	assert.Equal(t, 2, code)
	assert.Contains(t, errs, "saved for a graph of 2000 nodes, the graph of -edges has 2100 (-same-graph asks for the graph the model was saved for)")
	assert.NoDirExists(t, filepath.Join(dir, "refused"))
}
