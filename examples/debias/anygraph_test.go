package main

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// grow writes to dst the node table and edge list of src (files
// -export wrote) with k new nodes: each a copy of a random node's
// features with a little noise, no split, and no label (labelled: the
// copied node's), joined to 5 random old nodes. It returns the new
// nodes' ids.
func grow(t *testing.T, src, dst string, k int, seed int64, labelled bool) []string {
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
			case name == "label" && labelled:
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
	ids := grow(t, syn, grown, 100, 3, false)
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

	// An edge added between two old nodes: the nodes the model saw are
	// still known, by id (before the node record, the first rows had to
	// be the training graph bit for bit, and were not).
	e, err := os.ReadFile(filepath.Join(grown, "edges.csv"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(grown, "edges.csv"), append(e, []byte(nodes[0]+","+nodes[1999]+"\n")...), 0o644))
	code, _, errs = runCmd(append(in(grown), "-model", model, "-out", filepath.Join(dir, "rewired"))...)
	require.Equal(t, 0, code, errs)
	assert.Equal(t, seen, column(t, readCSV(t, filepath.Join(dir, "rewired", "predictions.csv")), "seen"))

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

// shuffleRows rewrites the node table of dir with its rows (after the
// header) in a seeded random order.
func shuffleRows(t *testing.T, dir string, seed int64) {
	t.Helper()
	path := filepath.Join(dir, "nodes.csv")
	rows := readCSV(t, path)
	body := rows[1:]
	rand.New(rand.NewSource(seed)).Shuffle(len(body), func(i, j int) { body[i], body[j] = body[j], body[i] })
	var b strings.Builder
	for _, r := range rows {
		b.WriteString(strings.Join(r, ",") + "\n")
	}
	require.NoError(t, os.WriteFile(path, []byte(b.String()), 0o644))
}

// TestModelHeldOutByID (issue 53, A1 and A2): scoring a grown graph
// whose new nodes carry labels, with the rows shuffled, reports accuracy
// only on nodes the model never trained or chose on (the new nodes and
// the saved test split), marks the nodes it saw by id, and measures
// drift on the new nodes. Before, a fresh split of all nodes was drawn
// (87 of 250 "test" nodes were training nodes), and shuffled rows left
// "seen" empty and drift measured on every node.
func TestModelHeldOutByID(t *testing.T) {
	dir := t.TempDir()
	syn, grown := filepath.Join(dir, "syn"), filepath.Join(dir, "grown")
	code, _, errs := runCmd("-dataset", "synthetic", "-export", syn, "-q")
	require.Equal(t, 0, code, errs)
	rows := readCSV(t, filepath.Join(syn, "nodes.csv"))
	origSplit := map[string]string{}
	for i, id := range column(t, rows, "node") {
		origSplit[id] = column(t, rows, "split")[i]
	}
	ids := grow(t, syn, grown, 150, 5, true)
	shuffleRows(t, grown, 9)
	in := func(d string, split bool) []string {
		a := []string{"-nodes", filepath.Join(d, "nodes.csv"), "-edges", filepath.Join(d, "edges.csv"),
			"-id", "node", "-label", "label", "-sens", "group", "-no-scale"}
		if split {
			return append(a, "-split-column", "split")
		}
		return append(a, "-drop", "split")
	}
	trained := filepath.Join(dir, "trained")
	code, _, errs = runCmd(append(in(syn, true), "-epochs", "20", "-lambda-f", "0,1", "-lambda-s", "0", "-q", "-out", trained)...)
	require.Equal(t, 0, code, errs)
	model := filepath.Join(trained, "model.fmp")

	scored := filepath.Join(dir, "scored")
	code, stdout, errs := runCmd(append(in(grown, false), "-model", model, "-out", scored)...)
	require.Equal(t, 0, code, errs)
	out := readCSV(t, filepath.Join(scored, "predictions.csv"))
	nodes, seen, split := column(t, out, "node"), column(t, out, "seen"), column(t, out, "split")
	labels, decisions := column(t, out, "label"), column(t, out, "model_decision")
	isNew := map[string]bool{}
	for _, id := range ids {
		isNew[id] = true
	}
	var heldOut, right, newCount, testCount int
	for i, id := range nodes {
		require.Equal(t, map[bool]string{true: "no", false: "yes"}[isNew[id]], seen[i], "node %s: seen by id, whatever its row", id)
		if split[i] != "test" {
			continue
		}
		// No node the model trained or chose on is a test node.
		require.True(t, isNew[id] || origSplit[id] == "test", "node %s (saved split %q) among the held-out nodes", id, origSplit[id])
		heldOut++
		if isNew[id] {
			newCount++
		} else {
			testCount++
		}
		if labels[i] == decisions[i] {
			right++
		}
	}
	require.Equal(t, 150, newCount, "every labelled new node is held out")
	wantTest := 0
	for _, s := range origSplit {
		if s == "test" {
			wantTest++
		}
	}
	require.Equal(t, wantTest, testCount, "and every saved test node")

	var doc struct {
		Run     map[string]any `json:"run"`
		Methods map[string]struct {
			Test struct {
				Accuracy float64 `json:"accuracy"`
			} `json:"test"`
		} `json:"methods"`
		Drift struct {
			Scored string `json:"scored"`
			Nodes  int    `json:"nodes"`
		} `json:"drift"`
	}
	raw, err := os.ReadFile(filepath.Join(scored, "metrics.json"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(raw, &doc))
	assert.InDelta(t, float64(right)/float64(heldOut), doc.Methods["model"].Test.Accuracy, 1e-12, "the test accuracy is the held-out nodes' own")
	ho := doc.Run["held_out"].(map[string]any)
	assert.Equal(t, 150.0, ho["new"])
	assert.Equal(t, float64(wantTest), ho["saved_test"])
	assert.Equal(t, "by id (-id)", doc.Run["nodes_known"])
	assert.Equal(t, "the new nodes", doc.Drift.Scored)
	assert.Equal(t, 150, doc.Drift.Nodes)
	assert.Contains(t, stdout, fmt.Sprintf("held out: 150 labelled new nodes and %d of the saved graph whose labels the model never used", wantTest))

	// Without -id the rows could only be matched by position: refused.
	code, _, errs = runCmd("-nodes", filepath.Join(grown, "nodes.csv"), "-edges", filepath.Join(grown, "edges.csv"),
		"-label", "label", "-sens", "group", "-no-scale", "-drop", "node,split", "-model", model, "-q", "-out", filepath.Join(dir, "noid"))
	assert.Equal(t, 2, code, errs)
	assert.Contains(t, errs, "give the node table's id column with -id")
}

// TestModelDriftWithoutLabels (issue 53, A4): unlabelled new nodes of
// which 90% are one group, where validation had about half, raise a
// drift warning naming the group by its value; new nodes with a feature
// at three times its training maximum raise one naming the feature.
// Before, drift compared decisions only: neither was seen.
func TestModelDriftWithoutLabels(t *testing.T) {
	dir := t.TempDir()
	syn := filepath.Join(dir, "syn")
	code, _, errs := runCmd("-dataset", "synthetic", "-export", syn, "-q")
	require.Equal(t, 0, code, errs)
	in := func(d string) []string {
		return []string{"-nodes", filepath.Join(d, "nodes.csv"), "-edges", filepath.Join(d, "edges.csv"),
			"-id", "node", "-label", "label", "-sens", "group", "-split-column", "split", "-no-scale"}
	}
	trained := filepath.Join(dir, "trained")
	code, _, errs = runCmd(append(in(syn), "-epochs", "20", "-lambda-f", "0,1", "-lambda-s", "0", "-q", "-out", trained)...)
	require.Equal(t, 0, code, errs)
	model := filepath.Join(trained, "model.fmp")
	rows := readCSV(t, filepath.Join(syn, "nodes.csv"))
	hdr, body := rows[0], rows[1:]
	col := func(name string) int {
		for j, h := range hdr {
			if h == name {
				return j
			}
		}
		t.Fatalf("no column %s", name)
		return -1
	}
	gc, x0, lc, sc := col("group"), col("x0"), col("label"), col("split")
	groupsSeen := map[string]bool{}
	max0 := math.Inf(-1)
	for _, r := range body {
		groupsSeen[r[gc]] = true
		v, err := strconv.ParseFloat(r[x0], 64)
		require.NoError(t, err)
		max0 = math.Max(max0, v)
	}
	require.Len(t, groupsSeen, 2)
	// newNodes writes syn grown by 200 unlabelled nodes copied from
	// random old ones, with group g for a share of them and edit applied.
	newNodes := func(name string, share float64, g string, edit func(r []string)) string {
		rng := rand.New(rand.NewSource(11))
		dst := filepath.Join(dir, name)
		require.NoError(t, os.MkdirAll(dst, 0o755))
		var b strings.Builder
		for _, r := range rows {
			b.WriteString(strings.Join(r, ",") + "\n")
		}
		edges, err := os.ReadFile(filepath.Join(syn, "edges.csv"))
		require.NoError(t, err)
		e := string(edges)
		for j := 0; j < 200; j++ {
			r := append([]string(nil), body[rng.Intn(len(body))]...)
			r[0], r[lc], r[sc] = fmt.Sprintf("new%d", j), "", ""
			if rng.Float64() < share {
				r[gc] = g
			}
			if edit != nil {
				edit(r)
			}
			b.WriteString(strings.Join(r, ",") + "\n")
			for _, v := range rng.Perm(len(body))[:3] {
				e += fmt.Sprintf("%s,%s\n", r[0], body[v][0])
			}
		}
		require.NoError(t, os.WriteFile(filepath.Join(dst, "nodes.csv"), []byte(b.String()), 0o644))
		require.NoError(t, os.WriteFile(filepath.Join(dst, "edges.csv"), []byte(e), 0o644))
		return dst
	}
	drift := func(d string) (map[string]any, string) {
		out := filepath.Join(dir, "out-"+filepath.Base(d))
		code, _, errs := runCmd(append(in(d), "-model", model, "-q", "-out", out)...)
		require.Equal(t, 0, code, errs)
		var doc struct {
			Drift map[string]any `json:"drift"`
		}
		raw, err := os.ReadFile(filepath.Join(out, "metrics.json"))
		require.NoError(t, err)
		require.NoError(t, json.Unmarshal(raw, &doc))
		return doc.Drift, errs
	}
	// Same population: no warning about the group mix or the features.
	_, errs = drift(newNodes("same", 0, "", nil))
	assert.NotContains(t, errs, "share")
	assert.NotContains(t, errs, `feature "x0"`)

	// 90% one group (the synthetic export names groups 0 and 1).
	d, errs := drift(newNodes("mix", 0.9, "1", nil))
	assert.Contains(t, errs, `warning: drift on the new nodes: group "1"`)
	assert.Contains(t, errs, "share")
	assert.NotEmpty(t, d["group_mix"])

	// x0 at three times its training maximum.
	_, errs = drift(newNodes("beyond", 0, "", func(r []string) { r[x0] = fmt.Sprint(3 * max0) }))
	assert.Contains(t, errs, `warning: drift on the new nodes: feature "x0"`)
}

// TestModelReport (issue 53, A3): a -model run's report.html shows the
// scored nodes' held-out figures, the scoring semantics, the drift with
// its warnings, and every warning stderr printed; never "None." while
// stderr warns. Before, it said "Warnings: None." and showed the old
// labelled nodes.
func TestModelReport(t *testing.T) {
	dir := t.TempDir()
	syn, grown := filepath.Join(dir, "syn"), filepath.Join(dir, "grown")
	code, _, errs := runCmd("-dataset", "synthetic", "-export", syn, "-q")
	require.Equal(t, 0, code, errs)
	grow(t, syn, grown, 150, 5, true)
	in := func(d string) []string {
		return []string{"-nodes", filepath.Join(d, "nodes.csv"), "-edges", filepath.Join(d, "edges.csv"),
			"-id", "node", "-label", "label", "-sens", "group", "-split-column", "split", "-no-scale"}
	}
	trained := filepath.Join(dir, "trained")
	code, _, errs = runCmd(append(in(syn), "-epochs", "20", "-lambda-f", "0,1", "-lambda-s", "0", "-q", "-out", trained)...)
	require.Equal(t, 0, code, errs)
	scored := filepath.Join(dir, "scored")
	code, _, errs = runCmd(append(in(grown), "-model", filepath.Join(trained, "model.fmp"), "-out", scored)...)
	require.Equal(t, 0, code, errs)
	page, err := os.ReadFile(filepath.Join(scored, "report.html"))
	require.NoError(t, err)
	html := string(page)
	text := strings.NewReplacer("&#34;", `"`, "&#39;", "'", "&amp;", "&", "&lt;", "<", "&gt;", ">").Replace(html)
	warned := 0
	for _, line := range strings.Split(errs, "\n") {
		if w, ok := strings.CutPrefix(line, "warning: "); ok {
			warned++
			assert.Contains(t, text, w, "a stderr warning missing from report.html")
		}
	}
	require.Positive(t, warned, "the grown graph's new nodes drift (labelled copies of old nodes, noisy features)")
	assert.NotContains(t, html, "<p>None.</p>")
	assert.Contains(t, html, "<h2>Scoring</h2>")
	assert.Contains(t, html, "<h2>Drift</h2>")
	assert.Contains(t, html, `id="group-mix"`)
	assert.Contains(t, text, "held out: 150 labelled new nodes")
	assert.Contains(t, text, "-fmp-scoring fitted")
	assert.Contains(t, text, "labelled nodes it never trained or chose on")
}

// TestMethodModelsScoreGrownGraph (issue 54, item 2): -method nifty,
// fairgnn and fairvgnn write model.fmp, FMP on their encoder (before, no
// file: "a backbone trained with -method fairgnn (a *fairtrain.Encoder)
// has no model-file kind yet"), and -model scores a grown graph with it:
// a prediction for every node, the new ones included. On the training
// graph, -model gives back the run's own FMP probabilities.
func TestMethodModelsScoreGrownGraph(t *testing.T) {
	dir := t.TempDir()
	syn, grown := filepath.Join(dir, "syn"), filepath.Join(dir, "grown")
	code, _, errs := runCmd("-dataset", "synthetic", "-synthetic-nodes", "300", "-export", syn, "-q")
	require.Equal(t, 0, code, errs)
	ids := grow(t, syn, grown, 30, 4, false)
	in := func(d string) []string {
		return []string{"-nodes", filepath.Join(d, "nodes.csv"), "-edges", filepath.Join(d, "edges.csv"),
			"-id", "node", "-label", "label", "-sens", "group", "-split-column", "split", "-no-scale"}
	}
	for _, m := range []string{"nifty", "fairgnn", "fairvgnn"} {
		t.Run(m, func(t *testing.T) {
			trained := filepath.Join(dir, m)
			code, stdout, errs := runCmd(append(in(syn), "-method", m, "-epochs", "3", "-lambda-f", "0,1", "-lambda-s", "0", "-out", trained)...)
			require.Equal(t, 0, code, errs)
			assert.NotContains(t, stdout+errs, "no model.fmp")
			model := filepath.Join(trained, "model.fmp")
			data, err := os.ReadFile(model)
			require.NoError(t, err)
			var h struct {
				Kind     string `json:"kind"`
				Backbone struct {
					Kind   string `json:"kind"`
					Config struct {
						Body struct {
							Kind string `json:"kind"`
						} `json:"body"`
					} `json:"config"`
				} `json:"backbone"`
			}
			require.NoError(t, json.Unmarshal(data[:strings.IndexByte(string(data), '\n')], &h))
			assert.Equal(t, "fmp", h.Kind)
			assert.Equal(t, "encoder", h.Backbone.Kind)
			assert.Equal(t, "gcn", h.Backbone.Config.Body.Kind)

			code, _, errs = runCmd(append(in(grown), "-model", model, "-q", "-out", filepath.Join(dir, m+"-grown"))...)
			require.Equal(t, 0, code, errs)
			rows := readCSV(t, filepath.Join(dir, m+"-grown", "predictions.csv"))
			require.Len(t, rows, 331, "a header and a prediction for each of the 330 nodes")
			nodes, p1 := column(t, rows, "node"), column(t, rows, "model_p1")
			for i, id := range nodes {
				require.NotEmpty(t, p1[i], "node %s has no prediction", id)
			}
			assert.Equal(t, ids, nodes[300:], "the new nodes, in the table's order")

			code, _, errs = runCmd(append(in(syn), "-model", model, "-q", "-out", filepath.Join(dir, m+"-same"))...)
			require.Equal(t, 0, code, errs)
			want := column(t, readCSV(t, filepath.Join(trained, "predictions.csv")), "fmp_p1")
			got := column(t, readCSV(t, filepath.Join(dir, m+"-same", "predictions.csv")), "model_p1")
			require.Len(t, got, len(want))
			for i := range want {
				a, err := strconv.ParseFloat(want[i], 64)
				require.NoError(t, err)
				b, err := strconv.ParseFloat(got[i], 64)
				require.NoError(t, err)
				require.InDelta(t, a, b, 1e-9, "node %d", i)
			}
		})
	}
}
