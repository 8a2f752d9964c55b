package fmpbeam

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/runners/prism"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fairmp/fairmp/fmp"
	"github.com/fairmp/fairmp/layers"
)

// TestJobErrors: what a user's files or settings can get wrong fails the
// job with an error saying what and where: at construction for the
// settings, from the pipeline for the data.
func TestJobErrors(t *testing.T) {
	ds := smallData(t)
	dir, model, _, _ := jobData(t, ds)
	m, err := ReadModelFile(model)
	require.NoError(t, err)
	fail := func(t *testing.T, j Job, want string) {
		t.Helper()
		p, s := beam.NewPipelineWithRoot()
		if err := j.Build(s, m); err != nil {
			assert.ErrorContains(t, err, want)
			return
		}
		_, err := prism.Execute(context.Background(), p)
		require.Error(t, err)
		assert.Contains(t, err.Error(), want)
	}
	// A copy of the data folder with one file replaced.
	with := func(t *testing.T, name, content string) string {
		t.Helper()
		d := t.TempDir()
		es, err := os.ReadDir(dir)
		require.NoError(t, err)
		for _, e := range es {
			b, err := os.ReadFile(filepath.Join(dir, e.Name()))
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(filepath.Join(d, e.Name()), b, 0o644))
		}
		require.NoError(t, os.WriteFile(filepath.Join(d, name), []byte(content), 0o644))
		return d
	}
	t.Run("settings", func(t *testing.T) {
		j := testJob(dir, t.TempDir())
		j.Shards = 0
		fail(t, j, "0 prediction shards")
		j = testJob(dir, t.TempDir())
		j.On.FMP.K = 0
		fail(t, j, "Config.K = 0")
		j = testJob(dir, t.TempDir())
		j.Logits = "x"
		fail(t, j, "a model file or logits rows, not both")
		j = testJob(dir, t.TempDir())
		j.On.Propagation = layers.Propagation{AddSelfLoops: true}
		fail(t, j, "FMP's propagation must be normalised")
		j = testJob(dir, t.TempDir())
		j.Stage = "train"
		fail(t, j, `stage "train"`)
		j = testJob(dir, t.TempDir())
		fc := fmp.DefaultFrontierConfig()
		fc.LambdaF = nil
		j.Frontier = &fc
		fail(t, j, "LambdaF is empty")
	})
	t.Run("no files", func(t *testing.T) {
		j := testJob(dir, t.TempDir())
		j.Edges = dir + "/none-*.txt"
		fail(t, j, `edges "`+dir+`/none-*.txt" matches no file`)
	})
	t.Run("bad line", func(t *testing.T) {
		fail(t, testJob(with(t, "nodes-00001.txt", "299 1 0 train\n7 2 x val\n"), t.TempDir()), `nodes-00001.txt:2: group "x", want an integer ≥ 0 or −1 (unknown)`)
	})
	t.Run("node twice", func(t *testing.T) {
		fail(t, testJob(with(t, "nodes-00009.txt", "5 1 0 -\n"), t.TempDir()), "node 5 has two lines in the node files")
	})
	t.Run("missing nodes", func(t *testing.T) {
		d := with(t, "nodes-00000.txt", "")
		fail(t, testJob(d, t.TempDir()), "the node files do not number the nodes 0..n−1")
	})
	t.Run("nodes cut short", func(t *testing.T) {
		fail(t, testJob(with(t, "nodes-00001.txt", ""), t.TempDir()), "which no node file lists (the node files give nodes 0..149)")
	})
	t.Run("edge beyond the nodes", func(t *testing.T) {
		fail(t, testJob(with(t, "edges-00009.txt", "3 300\n"), t.TempDir()), "an edge names node 300, which no node file lists (the node files give nodes 0..299)")
	})
	t.Run("another graph", func(t *testing.T) {
		j := testJob(with(t, "edges-00009.txt", "0 299\n"), t.TempDir())
		j.SameGraph = true
		fail(t, j, "the model was saved for a graph of 300 nodes and")
	})
}

// TestSameGraphRefusesAFileWithoutGraph is issue 53's C2 in the
// pipeline: with SameGraph, a graph model's file that records no graph
// (its "graph" key removed, resealed: an older or edited file) ran on
// any node and edge files on 8baef3f; it is refused, naming the flag.
// Without SameGraph it runs on any graph, as before.
func TestSameGraphRefusesAFileWithoutGraph(t *testing.T) {
	ds := smallData(t)
	dir, model, _, _ := jobData(t, ds)
	nl := bytes.IndexByte(model, '\n')
	require.Positive(t, nl)
	var h map[string]any
	require.NoError(t, json.Unmarshal(model[:nl], &h))
	require.Contains(t, h, "graph")
	delete(h, "graph")
	hdr, err := json.Marshal(h)
	require.NoError(t, err)
	out := append(append(hdr, '\n'), model[nl+1:len(model)-sha256.Size]...)
	sum := sha256.Sum256(out)
	m, err := ReadModelFile(append(out, sum[:]...))
	require.NoError(t, err)
	require.Nil(t, m.Graph)

	j := testJob(dir, t.TempDir())
	require.NoError(t, j.Validate(m), "without SameGraph: any graph")
	j.SameGraph = true
	err = j.Validate(m)
	require.Error(t, err)
	assert.ErrorContains(t, err, "the gcn model is built on a graph, but its file records no graph")
	assert.ErrorContains(t, err, "-same-graph")
}
