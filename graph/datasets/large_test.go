package datasets

import (
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/fairmp/fairmp/graph/features"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// largeTestConfig has 20,000 nodes and 140,000 edges: three edge chunks
// and twenty feature blocks, so the parallel paths are exercised.
func largeTestConfig() SyntheticConfig {
	cfg := DefaultSyntheticConfig()
	cfg.N = 20000
	cfg.MeanDegree = 14
	cfg.NumFeatures = 8
	cfg.Seed = 5
	return cfg
}

// TestSyntheticLargeDeterministic: the same config gives the same graph,
// labels, split and features file bytes, with 1 or 2 procs.
func TestSyntheticLargeDeterministic(t *testing.T) {
	cfg := largeTestConfig()
	dir := t.TempDir()
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	var first *Dataset
	var firstBytes []byte
	for run, procs := range []int{1, 2, 2} {
		runtime.GOMAXPROCS(procs)
		path := filepath.Join(dir, "x.fmx")
		ds, err := SyntheticLarge(cfg, path, nil)
		require.NoError(t, err, "run %d", run)
		b, err := os.ReadFile(path)
		require.NoError(t, err)
		if first == nil {
			first, firstBytes = ds, b
			continue
		}
		assert.Equal(t, first.Graph.Fingerprint(), ds.Graph.Fingerprint(), "run %d (GOMAXPROCS %d)", run, procs)
		assert.Equal(t, first.Labels, ds.Labels, "run %d", run)
		assert.Equal(t, first.Sens, ds.Sens, "run %d", run)
		assert.Equal(t, first.Split, ds.Split, "run %d", run)
		assert.Equal(t, first.Warnings, ds.Warnings, "run %d", run)
		assert.True(t, string(firstBytes) == string(b), "run %d: features file differs", run)
	}
	cfg.Seed++
	other, err := SyntheticLarge(cfg, filepath.Join(dir, "y.fmx"), nil)
	require.NoError(t, err)
	assert.NotEqual(t, first.Graph.Fingerprint(), other.Graph.Fingerprint(), "another seed, another graph")
}

// TestSyntheticLargeModel checks the graph against the knobs: edge count,
// homophilies, group and label rates, the split and the warning.
func TestSyntheticLargeModel(t *testing.T) {
	for _, k := range []struct{ hy, hs, bias float64 }{{0.7, 0.9, 0.4}, {0.2, 0.95, 0}, {0.9, 0.1, 0.2}} {
		cfg := largeTestConfig()
		cfg.LabelHomophily, cfg.SensHomophily, cfg.LabelBias = k.hy, k.hs, k.bias
		path := filepath.Join(t.TempDir(), "x.fmx")
		ds, err := SyntheticLarge(cfg, path, nil)
		require.NoError(t, err)
		g := ds.Graph
		assert.Equal(t, "synthetic-large", ds.Name)
		assert.Nil(t, ds.Features)
		assert.Equal(t, cfg.NumFeatures, ds.NumFeatures)
		assert.Equal(t, []string{"x0", "x1", "x2", "x3", "x4", "x5", "x6", "x7"}, ds.FeatureNames)
		assert.Equal(t, cfg.N, g.N())
		// 140,000 edges drawn; the drops are about MeanDegree/(2·block)
		// of them (blocks of ~3,000-7,000 nodes): well under 1%.
		m := 140000
		assert.LessOrEqual(t, g.NumEdges(), m, "%+v", k)
		assert.Greater(t, g.NumEdges(), m*99/100, "%+v", k)
		meanDeg := 2 * float64(g.NumEdges()) / float64(cfg.N)
		assert.InDelta(t, cfg.MeanDegree, meanDeg, 0.15, "%+v mean degree", k)
		if assert.Len(t, ds.Warnings, 1) {
			assert.Contains(t, ds.Warnings[0], "of the 140000 edges drawn were dropped")
		}
		hy, err := g.Homophily(ds.Labels)
		require.NoError(t, err)
		hs, err := g.Homophily(ds.Sens)
		require.NoError(t, err)
		// Binomial std <= 0.0014 at 140,000 edges; duplicates shift a
		// little more. Allow 1 point.
		assert.InDelta(t, k.hy, hy, 0.01, "%+v label homophily", k)
		assert.InDelta(t, k.hs, hs, 0.01, "%+v sensitive homophily", k)
		frac, p1, p0 := groupRates(ds)
		assert.InDelta(t, cfg.GroupFrac, frac, 0.015, "%+v group fraction", k)
		assert.InDelta(t, (1+k.bias)/2, p1, 0.03, "%+v P(y=1|s=1)", k)
		assert.InDelta(t, (1-k.bias)/2, p0, 0.03, "%+v P(y=1|s=0)", k)
		assert.Len(t, ds.Split.Train, 10000)
		assert.Len(t, ds.Split.Val, 5000)
		assert.Len(t, ds.Split.Test, 5000)
		seen := make([]bool, cfg.N)
		for _, l := range [][]int{ds.Split.Train, ds.Split.Val, ds.Split.Test} {
			for _, i := range l {
				require.False(t, seen[i], "node %d in two lists", i)
				seen[i] = true
			}
		}
		tmps, _ := filepath.Glob(path + ".*.tmp")
		assert.Empty(t, tmps, "no temporary file is left")
	}
}

// TestSyntheticLargeFeatures checks the feature model in the file: the
// class mean difference is 2·LabelSignal·a, the within-class group mean
// difference 2·GroupSignal·b, and the residual variance Noise².
func TestSyntheticLargeFeatures(t *testing.T) {
	cfg := largeTestConfig()
	cfg.NumFeatures, cfg.LabelBias = 4, 0
	cfg.LabelSignal, cfg.GroupSignal, cfg.Noise = 2, 1, 0.5
	path := filepath.Join(t.TempDir(), "x.fmx")
	ds, err := SyntheticLarge(cfg, path, nil)
	require.NoError(t, err)
	m, err := features.Open(path)
	require.NoError(t, err)
	defer m.Close()
	require.Equal(t, cfg.N, m.Rows())
	require.Equal(t, cfg.NumFeatures, m.Cols())
	d := cfg.NumFeatures
	rng := largeRNG(cfg.Seed, 3, 0)
	a, b := unitVector(rng.NormFloat64, d), unitVector(rng.NormFloat64, d)

	// Means per (label, group) block.
	var sum [4][]float64
	var cnt [4]float64
	for q := range sum {
		sum[q] = make([]float64, d)
	}
	for i := 0; i < cfg.N; i++ {
		q := 2*ds.Labels[i] + ds.Sens[i]
		cnt[q]++
		for c, v := range m.Row(i) {
			sum[q][c] += float64(v)
		}
	}
	var dy, ds0 float64 // projections on a and on b
	for c := 0; c < d; c++ {
		mean := func(q int) float64 { return sum[q][c] / cnt[q] }
		// label 1 minus label 0, averaged over the groups
		dy += a[c] * ((mean(2)+mean(3))/2 - (mean(0)+mean(1))/2)
		// group 1 minus group 0, averaged over the labels
		ds0 += b[c] * ((mean(1)+mean(3))/2 - (mean(0)+mean(2))/2)
	}
	// a and b are not orthogonal, but the other term's projection cancels
	// in each difference; the noise of a block mean is 0.5/sqrt(2000).
	assert.InDelta(t, 2*cfg.LabelSignal, dy, 0.05, "label direction")
	assert.InDelta(t, 2*cfg.GroupSignal, ds0, 0.05, "group direction")

	// Residual variance.
	ss := 0.0
	for i := 0; i < cfg.N; i++ {
		ly := cfg.LabelSignal * float64(2*ds.Labels[i]-1)
		gs := cfg.GroupSignal * float64(2*ds.Sens[i]-1)
		for c, v := range m.Row(i) {
			r := float64(v) - ly*a[c] - gs*b[c]
			ss += r * r
		}
	}
	assert.InDelta(t, cfg.Noise*cfg.Noise, ss/float64(cfg.N*d), 0.01, "residual variance")
}

func TestSyntheticLargeErrors(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "x.fmx")
	cfg := largeTestConfig()
	cfg.N = 3
	_, err := SyntheticLarge(cfg, path, nil)
	assert.ErrorContains(t, err, "SyntheticConfig.N = 3, want >= 4")
	cfg = largeTestConfig()
	cfg.SensHomophily = math.NaN()
	_, err = SyntheticLarge(cfg, path, nil)
	assert.ErrorContains(t, err, "SyntheticConfig.SensHomophily")

	// Labels equal groups and edges must cross groups but keep the label:
	// no block can be reached.
	cfg = largeTestConfig()
	cfg.LabelBias, cfg.LabelHomophily, cfg.SensHomophily = 1, 1, 0
	_, err = SyntheticLarge(cfg, path, nil)
	assert.ErrorContains(t, err, "datasets: SyntheticLarge: nodes with label 0 and group 0 can get no edge")

	bad := filepath.Join(dir, "no", "such", "dir", "x.fmx")
	_, err = SyntheticLarge(largeTestConfig(), bad, nil)
	assert.ErrorIs(t, err, fs.ErrNotExist)
	assert.ErrorContains(t, err, "datasets: SyntheticLarge: features file: features: Create "+bad)
	_, err = SyntheticLarge(largeTestConfig(), "", nil)
	assert.ErrorContains(t, err, "empty path")

	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Empty(t, entries, "no file left behind")
}

// TestSyntheticLargeNoEdges: MeanDegree 0 gives an edgeless graph.
func TestSyntheticLargeNoEdges(t *testing.T) {
	cfg := largeTestConfig()
	cfg.N, cfg.MeanDegree = 10, 0
	var progress strings.Builder
	ds, err := SyntheticLarge(cfg, filepath.Join(t.TempDir(), "x.fmx"), &progress)
	require.NoError(t, err)
	assert.Equal(t, 0, ds.Graph.NumEdges())
	assert.Empty(t, ds.Warnings)
	lines := strings.Split(strings.TrimSpace(progress.String()), "\n")
	require.Len(t, lines, 5, "one progress line per stage")
	assert.Contains(t, lines[0], "SyntheticLarge: 10 nodes: groups and labels drawn (")
	assert.Contains(t, lines[3], "graph checked (0 edges)")
	assert.Contains(t, lines[4], "10 × 8 features written")
}

// BenchmarkSyntheticLarge1M generates 1,000,000 nodes of mean degree 20
// (10 million edges) with 64 features. For peak memory:
//
//	go test -c -o /tmp/datasets.test ./graph/datasets
//	/usr/bin/time -v /tmp/datasets.test -test.run '^$' -test.bench SyntheticLarge1M -test.benchtime 1x
func BenchmarkSyntheticLarge1M(b *testing.B) {
	cfg := DefaultSyntheticConfig()
	cfg.N, cfg.MeanDegree, cfg.NumFeatures = 1000000, 20, 64
	path := filepath.Join(b.TempDir(), "x.fmx")
	for i := 0; i < b.N; i++ {
		ds, err := SyntheticLarge(cfg, path, nil)
		require.NoError(b, err)
		b.ReportMetric(float64(ds.Graph.NumEdges()), "edges")
	}
}
