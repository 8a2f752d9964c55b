package fmpbeam

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/fairmp/fairmp/metrics/selection"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/fairmp/fairmp/fmp"
	"github.com/fairmp/fairmp/fmp/modelio"
	"github.com/fairmp/fairmp/graph"
	"github.com/fairmp/fairmp/graph/datasets"
	"github.com/fairmp/fairmp/graph/features"
	"github.com/fairmp/fairmp/internal/opkit"
	"github.com/fairmp/fairmp/internal/testutil"
	"github.com/fairmp/fairmp/layers"
	"github.com/fairmp/fairmp/layers/minibatch"
	"github.com/fairmp/fairmp/layers/train"
	"github.com/fairmp/fairmp/metrics"
)

// jobData writes the small graph's node and edge files and its feature
// file, trains a GCN on it (full-batch, a few epochs) and saves it; it
// returns the folder, the model's bytes and parameters.
func jobData(t *testing.T, ds *datasets.Dataset) (string, []byte, layers.Config, []*tensor.Dense) {
	t.Helper()
	dir := t.TempDir()
	require.NoError(t, WriteGraph(dir, 3, ds.Graph))
	require.NoError(t, WriteNodes(dir, 2, ds.Labels, ds.Sens, ds.Split))
	require.NoError(t, features.Write(filepath.Join(dir, "features.fmx"), ds.Features, ds.N(), ds.NumFeatures))
	cfg := layers.DefaultGCNConfig(ds.NumFeatures, 2)
	cfg.Hidden = 16
	g := G.NewGraph()
	phase := layers.NewPhase()
	m, err := layers.NewGCN(g, ds.Graph, cfg, phase)
	require.NoError(t, err)
	x, err := train.FeatureNode(g, tensor.Float64, ds.Features, ds.N(), ds.NumFeatures, "x")
	require.NoError(t, err)
	tc := train.DefaultConfig()
	tc.Epochs, tc.Adam.LR = 40, 0.01
	_, err = train.Fit(context.Background(), m, &train.Task{Graph: g, X: x, Labels: ds.Labels, Train: ds.Split.Train, Val: ds.Split.Val, Classes: 2, Phase: phase}, tc)
	require.NoError(t, err)
	var buf bytes.Buffer
	require.NoError(t, modelio.Save(&buf, m, modelio.DefaultSaveConfig()))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "model.fmp"), buf.Bytes(), 0o644))
	var params []*tensor.Dense
	for _, p := range m.Learnables() {
		params = append(params, p.Value().(*tensor.Dense))
	}
	return dir, buf.Bytes(), cfg, params
}

func testJob(dir, out string) Job {
	fc := fmp.DefaultFrontierConfig()
	fc.LambdaF, fc.LambdaS = []float64{0, 0.5, 2, 8}, []float64{0, 1}
	return Job{Nodes: dir + "/nodes-*.txt", Edges: dir + "/edges-*.txt", Features: dir + "/features.fmx",
		Model: dir + "/model.fmp", Out: out, Layout: Layout{Size: 64}, Shards: 3,
		On: fmp.DefaultOnConfig(), Frontier: &fc}
}

func runJob(t *testing.T, j Job, model []byte) beam.PipelineResult {
	t.Helper()
	m, err := ReadModelFile(model)
	require.NoError(t, err)
	p, s := beam.NewPipelineWithRoot()
	require.NoError(t, j.Build(s, m))
	return run(t, p)
}

// predictions reads a job's prediction files into node → fields.
func predictions(t *testing.T, out string, n int) [][]string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(out, "predictions-*-of-00003.txt"))
	require.NoError(t, err)
	require.Len(t, files, 3)
	rows := make([][]string, n)
	for _, f := range files {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			fs := strings.Fields(line)
			id, err := strconv.Atoi(fs[0])
			require.NoError(t, err)
			require.Nil(t, rows[id], "node %d twice", id)
			rows[id] = fs[1:]
		}
	}
	for i, r := range rows {
		require.NotNil(t, r, "node %d has no prediction", i)
	}
	return rows
}

func sameReport(t *testing.T, name string, got, want metrics.Report) {
	t.Helper()
	assert.Equal(t, want.Evaluated, got.Evaluated, name)
	assert.Equal(t, want.Excluded, got.Excluded, name)
	for _, f := range []struct {
		n    string
		g, w float64
	}{{"accuracy", got.Accuracy, want.Accuracy}, {"F1", got.F1, want.F1}, {"AUC", got.AUC, want.AUC},
		{"ΔDP", got.DemographicParity, want.DemographicParity}, {"ΔEO", got.EqualOpportunity, want.EqualOpportunity},
		{"equalized odds", got.EqualizedOdds, want.EqualizedOdds}} {
		assert.InDelta(t, f.w, f.g, 1e-9, "%s: %s", name, f.n)
	}
}

// TestJobMatchesInMemory: the whole job on Prism (a GCN model file, a
// feature file, a frontier of 8 settings) gives the in-memory library's
// logits (minibatch.Logits), frontier (fmp.NewLogitsFrontier: every
// point's validation and test metrics, the reference and the choice),
// backbone metrics (metrics.Evaluate) and FMP output (Layer.Apply of the
// chosen setting) within 1e-9; a rerun writes the same bytes; and the
// job run stage by stage, four pipelines, writes the same bytes again.
func TestJobMatchesInMemory(t *testing.T) {
	ds := smallData(t)
	dir, model, cfg, params := jobData(t, ds)
	out := t.TempDir()
	j := testJob(dir, out)
	r := runJob(t, j, model)

	// The in-memory path on the same files.
	z, adj, fr, err := inMemory(t, ds, dir, cfg, params, j)
	require.NoError(t, err)

	b, err := os.ReadFile(filepath.Join(out, "metrics.json"))
	require.NoError(t, err)
	var rep Report
	require.NoError(t, json.Unmarshal(b, &rep))
	assert.Equal(t, int64(ds.N()), rep.Graph.Nodes)
	assert.Equal(t, int64(ds.Graph.NumEdges()), rep.Graph.Edges)
	res := rep.Result
	require.Len(t, res.Points, len(fr.Points))
	for k, p := range fr.Points {
		require.NotNil(t, res.Points[k].Config)
		assert.Equal(t, p.Config, *res.Points[k].Config)
		sameReport(t, fmt.Sprintf("point %d val", k), res.Points[k].Val, p.Val)
		sameReport(t, fmt.Sprintf("point %d test", k), res.Points[k].Test, p.Test)
	}
	require.NotNil(t, res.Reference)
	sameReport(t, "reference val", res.Reference.Val, fr.Reference.Val)
	assert.Equal(t, fr.Chosen, res.Chosen, "the rule's choice")
	zp := make([]float64, len(testutil.ToF64(z)))
	zv := testutil.ToF64(z)
	for i := 0; i < ds.N(); i++ {
		opkit.SoftmaxRow(zv[2*i:2*i+2], zp[2*i:2*i+2], 1)
	}
	bv, err := metrics.Evaluate(zp, 2, ds.Labels, ds.Sens, ds.Split.Val, metrics.DefaultOptions())
	require.NoError(t, err)
	sameReport(t, "backbone val", res.Backbone.Val, bv)

	l, err := fmp.New(adj, ds.Sens, fr.Best().Config)
	require.NoError(t, err)
	f, err := l.Apply(z)
	require.NoError(t, err)
	fv := testutil.ToF64(f)
	pred := predictions(t, out, ds.N())
	p := make([]float64, 2)
	for i, row := range pred {
		opkit.SoftmaxRow(fv[2*i:2*i+2], p, 1)
		for c := 0; c < 2; c++ {
			got, err := strconv.ParseFloat(row[c], 64)
			require.NoError(t, err)
			assert.InDelta(t, p[c], got, 1e-9, "node %d P(%d)", i, c)
		}
		assert.Equal(t, strconv.Itoa(decide(p, metrics.DefaultOptions())), row[2], "node %d class", i)
	}

	// The byte counters name every shuffle of the job.
	counters := map[string]int64{}
	for _, c := range r.Metrics().AllMetrics().Counters() {
		counters[c.Key.Name] += c.Committed
	}
	for _, name := range []string{"graph.edges", "graph.scales", "infer.gcn.0.join", "infer.gcn.0.sum", "infer.gcn.1.sum", "fmp.k00.join", "fmp.k09.sum", "fmp.k09.state", "evaluate.gather"} {
		assert.Positive(t, counters[name], name)
	}

	// Reruns write the same bytes: every sum of the pipeline has a fixed
	// order or is exact.
	out2 := t.TempDir()
	runJob(t, testJob(dir, out2), model)
	sameFiles(t, out, out2)

	// So does the job run stage by stage.
	out3, work := t.TempDir(), t.TempDir()
	for _, st := range Stages {
		js := testJob(dir, out3)
		js.Stage, js.Work = st, work
		runJob(t, js, model)
	}
	sameFiles(t, out, out3)
}

// sameFiles checks that two folders hold the same files, byte for byte.
func sameFiles(t *testing.T, a, b string) {
	t.Helper()
	list := func(dir string) []string {
		es, err := os.ReadDir(dir)
		require.NoError(t, err)
		var names []string
		for _, e := range es {
			names = append(names, e.Name())
		}
		return names
	}
	names := list(a)
	require.Equal(t, names, list(b))
	require.NotEmpty(t, names)
	for _, n := range names {
		x, err := os.ReadFile(filepath.Join(a, n))
		require.NoError(t, err)
		y, err := os.ReadFile(filepath.Join(b, n))
		require.NoError(t, err)
		assert.True(t, bytes.Equal(x, y), "%s differs", n)
	}
}

// TestJobRuleNotMet: when no setting meets the rule the job, like
// fmp.NewLogitsFrontier, chooses nothing (Chosen −1) and writes the
// reference's predictions (λf 0).
func TestJobRuleNotMet(t *testing.T) {
	ds := smallData(t)
	dir, model, cfg, params := jobData(t, ds)
	out := t.TempDir()
	j := testJob(dir, out)
	j.Frontier.Rule = selection.MostAccurateWithin(metrics.DPDifference, 0)
	runJob(t, j, model)

	z, adj, fr, err := inMemory(t, ds, dir, cfg, params, j)
	require.ErrorIs(t, err, selection.ErrNoCandidate, "the test's rule must be one no setting meets")

	b, err := os.ReadFile(filepath.Join(out, "metrics.json"))
	require.NoError(t, err)
	var rep Report
	require.NoError(t, json.Unmarshal(b, &rep))
	assert.Equal(t, -1, rep.Result.Chosen)
	assert.Equal(t, fr.Chosen, rep.Result.Chosen)
	l, err := fmp.New(adj, ds.Sens, fr.Best().Config)
	require.NoError(t, err)
	f, err := l.Apply(z)
	require.NoError(t, err)
	fv := testutil.ToF64(f)
	p := make([]float64, 2)
	for i, row := range predictions(t, out, ds.N()) {
		opkit.SoftmaxRow(fv[2*i:2*i+2], p, 1)
		got, err := strconv.ParseFloat(row[1], 64)
		require.NoError(t, err)
		assert.InDelta(t, p[1], got, 1e-9, "node %d", i)
	}
}

// inMemory runs job j's frontier with the in-memory library on the same
// files: the logits, the matrix, and NewLogitsFrontier's frontier and
// error.
func inMemory(t *testing.T, ds *datasets.Dataset, dir string, cfg layers.Config, params []*tensor.Dense, j Job) (*tensor.Dense, *graph.Matrix, *fmp.Frontier, error) {
	t.Helper()
	fx, err := features.Open(filepath.Join(dir, "features.fmx"))
	require.NoError(t, err)
	defer fx.Close()
	adj, err := minibatch.Matrix(cfg, ds.Graph)
	require.NoError(t, err)
	z, err := minibatch.Logits(cfg, params, adj, fx)
	require.NoError(t, err)
	fc := *j.Frontier
	fc.Test = ds.Split.Test
	fr, err := fmp.NewLogitsFrontier(context.Background(), z, adj, ds.Sens, ds.Labels, ds.Split.Val, j.On.FMP, fc)
	return z, adj, fr, err
}

func TestCounterStage(t *testing.T) {
	for name, stage := range map[string]string{"read.nodes": "graph", "graph.edges": "graph", "read.logits": "infer",
		"read.features": "infer", "infer.gcn.0.sum": "infer", "fmp.k03.join": "fmp", "evaluate.gather": "evaluate"} {
		assert.Equal(t, stage, CounterStage(name), name)
	}
}

// TestOutFilesAreOutKinds: every file a job or stage writes in Out is of
// a kind OutKind claims, and a stage claims none of another's; StaleWork
// clears a stage's own blocks and the later stages', not the earlier.
func TestOutFilesAreOutKinds(t *testing.T) {
	for _, st := range append([]string{""}, Stages...) {
		j := Job{Stage: st, Shards: 3}
		for _, n := range j.OutFiles() {
			assert.True(t, j.OutKind(n), "stage %q: %s", st, n)
		}
	}
	assert.False(t, (&Job{Stage: "fmp"}).OutKind("metrics.json"))
	assert.False(t, (&Job{Stage: "evaluate"}).OutKind("duals.json"))
	assert.False(t, (&Job{Stage: "graph"}).OutKind("metrics.json"))
	assert.True(t, (&Job{}).OutKind("predictions-00007-of-00016.txt"), "any shard count")

	infer := &Job{Stage: "infer"}
	assert.True(t, infer.StaleWork("logits-00000003.blk"))
	assert.True(t, infer.StaleWork("fmp-00000003.blk"))
	assert.False(t, infer.StaleWork("nodes-00000003.blk"))
	assert.False(t, infer.StaleWork("stats.json"))
	assert.True(t, (&Job{Stage: "graph"}).StaleWork("adj-fmp-00000000.blk"))
	assert.True(t, (&Job{Stage: "graph"}).StaleWork("stats.json"))
	assert.False(t, (&Job{Stage: "evaluate"}).StaleWork("fmp-00000000.blk"))
}

// TestWriteShardsNeverThroughALink: a symlink left at a shard's old
// temporary name (path + ".tmp") is not written through; the shard is
// written and no temporary file stays.
func TestWriteShardsNeverThroughALink(t *testing.T) {
	dir, other := t.TempDir(), t.TempDir()
	victim := filepath.Join(other, "mine.txt")
	require.NoError(t, os.WriteFile(victim, []byte("a user's\n"), 0o644))
	require.NoError(t, os.Symlink(victim, filepath.Join(dir, "nodes-00000.txt.tmp")))
	require.NoError(t, WriteRows(dir, "nodes", 1, 3, 1, func(i int, dst []float64) error { dst[0] = float64(i); return nil }))
	b, err := os.ReadFile(victim)
	require.NoError(t, err)
	assert.Equal(t, "a user's\n", string(b))
	assert.FileExists(t, filepath.Join(dir, "nodes-00000.txt"))
	tmps, _ := filepath.Glob(filepath.Join(dir, "nodes-00000.txt.*.tmp"))
	assert.Empty(t, tmps)
}

// TestJobNeverWritesThroughALink is issue 53's C1: symlinks placed in
// -out and -work at every temporary name a run used to write (name +
// ".tmp": predictions-*.txt.tmp, metrics.json.tmp, duals.json.tmp, the
// blocks' and stats.json's), pointing at files outside both, as another
// user could place them while a run goes on (after the command claimed
// the folders). The job, whole and stage by stage, writes its outputs as
// regular files and leaves every target as it was, and no temporary
// file of its own behind.
func TestJobNeverWritesThroughALink(t *testing.T) {
	ds := smallData(t)
	dir, model, _, _ := jobData(t, ds)
	victims := t.TempDir()
	var links []string
	plant := func(folder string, names ...string) {
		for _, n := range names {
			v := filepath.Join(victims, fmt.Sprintf("victim-%d", len(links)))
			require.NoError(t, os.WriteFile(v, []byte("a user's file\n"), 0o644))
			l := filepath.Join(folder, n+".tmp")
			require.NoError(t, os.Symlink(v, l))
			links = append(links, l)
		}
	}
	outNames := func() []string {
		names := []string{"metrics.json", "duals.json"}
		for k := 0; k < 3; k++ {
			names = append(names, shardName("predictions", k, 3, ".txt"))
		}
		return names
	}
	check := func(folders ...string) {
		t.Helper()
		for k, l := range links {
			b, err := os.ReadFile(filepath.Join(victims, fmt.Sprintf("victim-%d", k)))
			require.NoError(t, err)
			assert.Equal(t, "a user's file\n", string(b), "written through %s", l)
			fi, err := os.Lstat(l)
			require.NoError(t, err)
			assert.Equal(t, os.ModeSymlink, fi.Mode().Type(), "%s: the link itself stays", l)
		}
		for _, f := range folders {
			tmps, err := filepath.Glob(filepath.Join(f, "*.*.tmp"))
			require.NoError(t, err)
			for _, tmp := range tmps {
				assert.Contains(t, links, tmp, "a temporary file left behind")
			}
		}
	}

	// The whole job.
	out := t.TempDir()
	plant(out, outNames()...)
	runJob(t, testJob(dir, out), model)
	check(out)
	for _, n := range outNames() {
		fi, err := os.Lstat(filepath.Join(out, n))
		require.NoError(t, err, n)
		assert.True(t, fi.Mode().IsRegular(), "%s is a regular file", n)
	}
	assert.Len(t, predictions(t, out, ds.N()), ds.N())

	// Stage by stage: the blocks in -work too (300 nodes in blocks of 64:
	// blocks 0 to 4).
	out2, work := t.TempDir(), t.TempDir()
	plant(out2, outNames()...)
	plant(work, "stats.json")
	for _, kind := range []string{"nodes", "adj-fmp", "adj-model", "logits", "fmp"} {
		for b := 0; b < 5; b++ {
			plant(work, fmt.Sprintf("%s-%08d.blk", kind, b))
		}
	}
	for _, st := range Stages {
		js := testJob(dir, out2)
		js.Stage, js.Work = st, work
		runJob(t, js, model)
	}
	check(out2, work)
	blocks, err := filepath.Glob(filepath.Join(work, "fmp-*.blk"))
	require.NoError(t, err)
	assert.Len(t, blocks, 5)
	sameFiles(t, out, out2)
}
