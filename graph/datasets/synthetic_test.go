package datasets

import (
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSyntheticHomophilyMatchesKnobs generates graphs for several knob
// settings and checks the measured edge homophilies, the edge count, the
// group ratio and the label/group coupling.
func TestSyntheticHomophilyMatchesKnobs(t *testing.T) {
	for _, k := range []struct{ hy, hs, bias float64 }{
		{0.7, 0.9, 0.4}, {0.5, 0.5, 0}, {0.2, 0.95, 0.6}, {0.9, 0.1, 0.2},
	} {
		cfg := DefaultSyntheticConfig()
		cfg.N = 20000
		cfg.LabelHomophily, cfg.SensHomophily, cfg.LabelBias = k.hy, k.hs, k.bias
		ds, err := Synthetic(cfg)
		require.NoError(t, err)
		g := ds.Graph
		if want := 100000; g.NumEdges() != want {
			t.Errorf("%+v: %d edges, want %d", k, g.NumEdges(), want)
		}
		hy, _ := g.Homophily(ds.Labels)
		hs, _ := g.Homophily(ds.Sens)
		// 100,000 edges: binomial std <= 0.0016; allow 4 std.
		if math.Abs(hy-k.hy) > 0.0064 || math.Abs(hs-k.hs) > 0.0064 {
			t.Errorf("%+v: measured label homophily %.4f, sensitive %.4f", k, hy, hs)
		}
		frac, p1, p0 := groupRates(ds)
		assert.InDelta(t, cfg.GroupFrac, frac, 0.015, "%+v group-1 fraction", k)
		assert.InDelta(t, (1+k.bias)/2, p1, 0.03, "%+v P(y=1|s=1)", k)
		assert.InDelta(t, (1-k.bias)/2, p0, 0.03, "%+v P(y=1|s=0)", k)
	}
}

// groupRates returns the fraction of nodes in group 1 and P(y = 1 | s = 1)
// and P(y = 1 | s = 0) over all nodes of a generated data set.
func groupRates(ds *Dataset) (frac, p1, p0 float64) {
	var n1, y1s1, y1s0 int
	for i, s := range ds.Sens {
		if s == 1 {
			n1++
			y1s1 += ds.Labels[i]
		} else {
			y1s0 += ds.Labels[i]
		}
	}
	n := len(ds.Sens)
	return float64(n1) / float64(n), float64(y1s1) / float64(n1), float64(y1s0) / float64(n-n1)
}

// TestSyntheticFeatures checks the feature model: the mean feature vector
// difference between classes is 2·LabelSignal·a, between groups (within a
// class) 2·GroupSignal·b, and the residual variance is Noise².
func TestSyntheticFeatures(t *testing.T) {
	cfg := DefaultSyntheticConfig()
	cfg.N, cfg.NumFeatures, cfg.LabelBias = 20000, 4, 0
	cfg.LabelSignal, cfg.GroupSignal, cfg.Noise = 2, 1, 0.5
	ds, err := Synthetic(cfg)
	require.NoError(t, err)
	d := ds.NumFeatures
	var mean [2][2][]float64
	var cnt [2][2]int
	for y := 0; y < 2; y++ {
		for s := 0; s < 2; s++ {
			mean[y][s] = make([]float64, d)
		}
	}
	for i := 0; i < ds.N(); i++ {
		y, s := ds.Labels[i], ds.Sens[i]
		cnt[y][s]++
		for k := 0; k < d; k++ {
			mean[y][s][k] += ds.Features[i*d+k]
		}
	}
	norm := func(v []float64) float64 {
		s := 0.0
		for _, x := range v {
			s += x * x
		}
		return math.Sqrt(s)
	}
	diffY := make([]float64, d)
	diffS := make([]float64, d)
	for k := 0; k < d; k++ {
		for y := 0; y < 2; y++ {
			for s := 0; s < 2; s++ {
				mean[y][s][k] /= float64(cnt[y][s])
			}
		}
		diffY[k] = mean[1][0][k] - mean[0][0][k]
		diffS[k] = mean[0][1][k] - mean[0][0][k]
	}
	if got := norm(diffY); math.Abs(got-4) > 0.1 {
		t.Errorf("class mean distance %.3f, want 4 (2·LabelSignal)", got)
	}
	if got := norm(diffS); math.Abs(got-2) > 0.1 {
		t.Errorf("group mean distance %.3f, want 2 (2·GroupSignal)", got)
	}
	res := 0.0
	for i := 0; i < ds.N(); i++ {
		m := mean[ds.Labels[i]][ds.Sens[i]]
		for k := 0; k < d; k++ {
			r := ds.Features[i*d+k] - m[k]
			res += r * r
		}
	}
	if v := res / float64(ds.N()*d); math.Abs(v-0.25) > 0.01 {
		t.Errorf("residual variance %.4f, want 0.25 (Noise²)", v)
	}
}

func TestSyntheticDeterministicAndSplit(t *testing.T) {
	cfg := DefaultSyntheticConfig()
	a, err := Synthetic(cfg)
	require.NoError(t, err)
	b, _ := Synthetic(cfg)
	if !reflect.DeepEqual(a.Features, b.Features) || !reflect.DeepEqual(a.Graph.Edges(), b.Graph.Edges()) ||
		!reflect.DeepEqual(a.Split, b.Split) || !reflect.DeepEqual(a.Labels, b.Labels) {
		t.Error("same seed gave different data sets")
	}
	cfg.Seed = 2
	c, _ := Synthetic(cfg)
	if reflect.DeepEqual(a.Labels, c.Labels) {
		t.Error("seeds 1 and 2 gave the same labels")
	}
	if len(a.Split.Train) != 1000 || len(a.Split.Val) != 500 || len(a.Split.Test) != 500 {
		t.Errorf("split %d/%d/%d, want 1000/500/500", len(a.Split.Train), len(a.Split.Val), len(a.Split.Test))
	}
	seen := make([]bool, a.N())
	for _, l := range [][]int{a.Split.Train, a.Split.Val, a.Split.Test} {
		for _, i := range l {
			if seen[i] {
				t.Fatalf("node %d in two splits", i)
			}
			seen[i] = true
		}
	}
	if a.NumClasses() != 2 {
		t.Errorf("%d classes, want 2", a.NumClasses())
	}
	if a.NumFeatures != 16 || len(a.Features) != 2000*16 || len(a.FeatureNames) != 16 || a.Graph.NumEdges() != 10000 {
		t.Errorf("shape: %d features, %d values, %d names, %d edges", a.NumFeatures, len(a.Features), len(a.FeatureNames), a.Graph.NumEdges())
	}
}

func TestPokecZShape(t *testing.T) {
	start := time.Now()
	ds, err := Synthetic(PokecZShape(1))
	require.NoError(t, err)
	el := time.Since(start)
	if ds.N() != 67796 || ds.NumFeatures != 276 || ds.Graph.NumEdges() != 617958 {
		t.Errorf("shape %d nodes, %d features, %d edges; want 67796, 276, 617958", ds.N(), ds.NumFeatures, ds.Graph.NumEdges())
	}
	t.Logf("PokecZShape generated in %v (speed: BenchmarkSyntheticPokecZ)", el)
}

func TestSyntheticConfigErrors(t *testing.T) {
	for _, c := range []struct {
		mod  func(*SyntheticConfig)
		want string
	}{
		{func(c *SyntheticConfig) { c.N = 3 }, "SyntheticConfig.N = 3"},
		{func(c *SyntheticConfig) { c.NumFeatures = 0 }, "NumFeatures = 0"},
		{func(c *SyntheticConfig) { c.GroupFrac = 1 }, "GroupFrac = 1"},
		{func(c *SyntheticConfig) { c.LabelBias = -0.1 }, "LabelBias = -0.1"},
		{func(c *SyntheticConfig) { c.MeanDegree = 1000 }, "MeanDegree = 1000"},
		{func(c *SyntheticConfig) { c.LabelHomophily = math.NaN() }, "LabelHomophily = NaN"},
		{func(c *SyntheticConfig) { c.SensHomophily = 1.5 }, "SensHomophily = 1.5"},
		{func(c *SyntheticConfig) { c.LabelSignal = math.Inf(1) }, "LabelSignal = +Inf"},
		{func(c *SyntheticConfig) { c.GroupSignal = -1 }, "GroupSignal = -1"},
		{func(c *SyntheticConfig) { c.Noise = -1 }, "Noise = -1"},
		{func(c *SyntheticConfig) { c.SplitFractions = [3]float64{0.6, 0.3, 0.3} }, "sum to 1.2"},
		{func(c *SyntheticConfig) { c.SplitFractions[1] = -0.1 }, "SplitFractions[1] = -0.1"},
		{func(c *SyntheticConfig) { c.GroupFracs = []float64{0.5, 0.5} }, "GroupFrac = 0.3, want 0 when GroupFracs is set"},
		{func(c *SyntheticConfig) { c.GroupFrac, c.GroupFracs = 0, []float64{1} }, "at least two fractions"},
		{func(c *SyntheticConfig) { c.GroupFrac, c.GroupFracs = 0, []float64{0.5, 0.4} }, "sum to 0.9"},
		{func(c *SyntheticConfig) { c.GroupFrac, c.GroupFracs = 0, []float64{0, 1} }, "GroupFracs[0] = 0"},
	} {
		cfg := DefaultSyntheticConfig()
		c.mod(&cfg)
		_, err := Synthetic(cfg)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("error %v, want one containing %q", err, c.want)
		}
	}
	// Label = group, and every edge must join the same label but the
	// other group: no such block exists.
	cfg0 := DefaultSyntheticConfig()
	cfg0.LabelBias, cfg0.LabelHomophily, cfg0.SensHomophily = 1, 1, 0
	if _, err := Synthetic(cfg0); err == nil || !strings.Contains(err.Error(), "can get no edge") {
		t.Errorf("error %v, want a 'can get no edge' error", err)
	}
	// A block structure that cannot hold the requested edges.
	cfg := DefaultSyntheticConfig()
	cfg.N, cfg.MeanDegree, cfg.LabelHomophily, cfg.SensHomophily, cfg.LabelBias = 8, 3.5, 1, 1, 1
	if _, err := Synthetic(cfg); err == nil {
		t.Error("no error for 14 edges inside blocks of 8 nodes split in two groups")
	}
}

func TestRandomSplit(t *testing.T) {
	labels := []int{0, 1, -1, 1, 0, 0, 1, -1, 1, 0}
	s, err := RandomSplit(labels, [3]float64{0.5, 0.25, 0.25}, 3)
	require.NoError(t, err)
	if len(s.Train) != 4 || len(s.Val) != 2 || len(s.Test) != 2 {
		t.Fatalf("sizes %d/%d/%d, want 4/2/2 of 8 labelled", len(s.Train), len(s.Val), len(s.Test))
	}
	seen := map[int]bool{}
	for _, l := range [][]int{s.Train, s.Val, s.Test} {
		for _, i := range l {
			if labels[i] < 0 || seen[i] {
				t.Errorf("node %d: label %d, seen %v", i, labels[i], seen[i])
			}
			seen[i] = true
		}
	}
	s2, _ := RandomSplit(labels, [3]float64{0.5, 0.25, 0.25}, 3)
	if !reflect.DeepEqual(s, s2) {
		t.Error("same seed, different split")
	}
	s3, _ := RandomSplit(labels, [3]float64{0.5, 0.25, 0}, 3)
	if !reflect.DeepEqual(s3.Train, s.Train) || len(s3.Test) != 0 {
		t.Errorf("fractions summing to 0.75: %+v", s3)
	}
	if _, err := RandomSplit(labels, [3]float64{0.5, 0.5, 0.5}, 3); err == nil {
		t.Error("no error for fractions summing to 1.5")
	}
}

// TestSyntheticEmptyBlocks: with LabelBias 1 the label equals the group,
// two blocks are empty and block choices are redrawn; generation still
// reaches the edge count, and both homophilies are equal.
func TestSyntheticEmptyBlocks(t *testing.T) {
	cfg := DefaultSyntheticConfig()
	cfg.LabelBias = 1
	ds, err := Synthetic(cfg)
	require.NoError(t, err)
	if !reflect.DeepEqual(ds.Labels, ds.Sens) || ds.Graph.NumEdges() != 10000 {
		t.Errorf("labels differ from groups or %d edges", ds.Graph.NumEdges())
	}
	hy, _ := ds.Graph.Homophily(ds.Labels)
	hs, _ := ds.Graph.Homophily(ds.Sens)
	// P(same) = P(both same | accepted) = 0.7·0.9 / (0.7·0.9 + 0.3·0.1).
	want := 0.63 / 0.66
	if hy != hs || math.Abs(hy-want) > 0.01 {
		t.Errorf("homophily %.4f / %.4f, want both %.4f", hy, hs, want)
	}
}

// TestSyntheticGroups: with GroupFracs, G groups in the given fractions,
// label rates (1 + LabelBias·c_g)/2 with c_g spread over [−1, 1], the
// sensitive homophily of the knob, deterministic.
func TestSyntheticGroups(t *testing.T) {
	for _, fracs := range [][]float64{{0.5, 0.3, 0.2}, {0.4, 0.3, 0.2, 0.1}} {
		cfg := DefaultSyntheticConfig()
		cfg.N, cfg.GroupFrac, cfg.GroupFracs = 20000, 0, fracs
		ds, err := Synthetic(cfg)
		require.NoError(t, err)
		G := len(fracs)
		n := make([]float64, G)
		pos := make([]float64, G)
		for i, s := range ds.Sens {
			require.True(t, s >= 0 && s < G)
			n[s]++
			pos[s] += float64(ds.Labels[i])
		}
		for g := range fracs {
			c := -1 + 2*float64(g)/float64(G-1)
			assert.InDelta(t, fracs[g], n[g]/float64(cfg.N), 0.015, "%d groups: group %d fraction", G, g)
			assert.InDelta(t, (1+cfg.LabelBias*c)/2, pos[g]/n[g], 0.04, "%d groups: group %d label rate", G, g)
		}
		hs, _ := ds.Graph.Homophily(ds.Sens)
		assert.InDelta(t, cfg.SensHomophily, hs, 0.0064, "%d groups: sensitive homophily", G)
		again, err := Synthetic(cfg)
		require.NoError(t, err)
		assert.Equal(t, ds.Sens, again.Sens)
		assert.Equal(t, ds.Features, again.Features)
		assert.Equal(t, ds.Graph.Edges(), again.Graph.Edges())
	}
	cfg := DefaultSyntheticConfig()
	cfg.GroupFrac, cfg.GroupFracs = 0, []float64{0.5, 0.5}
	_, err := SyntheticLarge(cfg, t.TempDir()+"/x.feat", nil)
	assert.ErrorContains(t, err, "SyntheticLarge draws two groups")
}
