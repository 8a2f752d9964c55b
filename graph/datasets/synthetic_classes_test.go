package datasets

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// syntheticHash is the SHA-256 of everything a generated data set holds:
// labels, groups, edges, features (their bits) and split.
func syntheticHash(ds *Dataset) string {
	h := sha256.New()
	put := func(v uint64) {
		var b [8]byte
		binary.LittleEndian.PutUint64(b[:], v)
		h.Write(b[:])
	}
	ints := func(xs []int) {
		put(uint64(len(xs)))
		for _, x := range xs {
			put(uint64(x))
		}
	}
	ints(ds.Labels)
	ints(ds.Sens)
	for _, e := range ds.Graph.Edges() {
		put(uint64(e[0]))
		put(uint64(e[1]))
	}
	put(uint64(len(ds.Features)))
	for _, x := range ds.Features {
		put(math.Float64bits(x))
	}
	ints(ds.Split.Train)
	ints(ds.Split.Val)
	ints(ds.Split.Test)
	h.Write([]byte(ds.Name))
	return hex.EncodeToString(h.Sum(nil))
}

// TestSyntheticBinaryUnchanged: the binary generator's output, digit for
// digit, as it was before the class count was added (the hashes were
// recorded on the code before that change): the default config, three
// groups, an empty block, and SyntheticLarge's labels, groups, graph and
// split.
func TestSyntheticBinaryUnchanged(t *testing.T) {
	three := DefaultSyntheticConfig()
	three.GroupFrac, three.GroupFracs, three.N = 0, []float64{0.5, 0.3, 0.2}, 600
	empty := DefaultSyntheticConfig()
	empty.LabelBias, empty.N = 1, 500
	for _, c := range []struct {
		name string
		cfg  SyntheticConfig
		want string
	}{
		{"default", DefaultSyntheticConfig(), "2ba3c0c9291f91f8dc67655e81c9da8f5d960feb87c674d6cc7509e25256b2ea"},
		{"three groups", three, "1b888e859fecd30c7e8a7a35d57d7ad329d4f08108dce7dee07fd0a2dd2a461c"},
		{"empty blocks", empty, "44e5b42446f5dcd9accf4afede388d9d8392012250e8849a126c34d6cd39627d"},
	} {
		ds, err := Synthetic(c.cfg)
		require.NoError(t, err)
		assert.Equal(t, c.want, syntheticHash(ds), c.name)
	}
	cfg := DefaultSyntheticConfig()
	cfg.N = 3000
	ds, err := SyntheticLarge(cfg, t.TempDir()+"/x.feat", nil)
	require.NoError(t, err)
	assert.Equal(t, "a5500c3d5796edaf2b3d04a85052164ba3ab4f6bf17f8f1e5aabcee3528da3e1", syntheticHash(ds), "SyntheticLarge")
}

// classConfig returns a c-class config of n nodes with the given biases.
func classConfig(n, c int, bias []float64) SyntheticConfig {
	cfg := DefaultSyntheticConfig()
	cfg.N, cfg.Classes, cfg.LabelBias, cfg.ClassBias = n, c, 0, bias
	return cfg
}

// TestSyntheticClasses: with c classes the labels are 0..c−1 and each
// group's class rates are 1/c + ClassBias[k]·c_g/2 (with two groups the
// rates of class k differ by ClassBias[k]) within four binomial standard
// deviations; the edge homophilies follow their knobs; the same seed
// gives the same data set bit for bit and another seed another.
func TestSyntheticClasses(t *testing.T) {
	for _, c := range []struct {
		name  string
		cfg   SyntheticConfig
		fracs []float64
	}{
		{"3 classes", classConfig(20000, 3, []float64{0.3, -0.1, -0.2}), nil},
		{"5 classes", classConfig(20000, 5, []float64{0.2, 0.1, 0, -0.1, -0.2}), nil},
		{"4 classes, no bias", classConfig(20000, 4, nil), nil},
		{"3 classes, 3 groups", classConfig(20000, 3, []float64{-0.4, 0.1, 0.3}), []float64{0.5, 0.3, 0.2}},
	} {
		cfg := c.cfg
		if c.fracs != nil {
			cfg.GroupFrac, cfg.GroupFracs = 0, c.fracs
		}
		ds, err := Synthetic(cfg)
		require.NoError(t, err, c.name)
		C, G := cfg.Classes, cfg.groups()
		assert.Equal(t, C, ds.NumClasses(), c.name)
		count := make([][]float64, G)
		for g := range count {
			count[g] = make([]float64, C)
		}
		size := make([]float64, G)
		for i, y := range ds.Labels {
			require.True(t, y >= 0 && y < C, "%s: label %d", c.name, y)
			count[ds.Sens[i]][y]++
			size[ds.Sens[i]]++
		}
		for g := range G {
			for k := range C {
				p := cfg.classRate(k, groupCoef(g, G))
				tol := 4 * math.Sqrt(p*(1-p)/size[g])
				assert.InDelta(t, p, count[g][k]/size[g], tol, "%s: P(y=%d | s=%d)", c.name, k, g)
			}
		}
		if G == 2 && cfg.ClassBias != nil {
			for k, b := range cfg.ClassBias {
				diff := count[1][k]/size[1] - count[0][k]/size[0]
				tol := 4 * math.Sqrt(0.25/size[0]+0.25/size[1])
				assert.InDelta(t, b, diff, tol, "%s: class %d's rate difference between the groups", c.name, k)
			}
		}
		// 100,000 edges: binomial std ≤ 0.0016; allow 4 std.
		hy, _ := ds.Graph.Homophily(ds.Labels)
		hs, _ := ds.Graph.Homophily(ds.Sens)
		assert.InDelta(t, cfg.LabelHomophily, hy, 0.0064, "%s: label homophily", c.name)
		assert.InDelta(t, cfg.SensHomophily, hs, 0.0064, "%s: sensitive homophily", c.name)
		assert.Equal(t, 100000, ds.Graph.NumEdges(), c.name)

		again, err := Synthetic(cfg)
		require.NoError(t, err)
		assert.Equal(t, syntheticHash(ds), syntheticHash(again), "%s: seeded", c.name)
		cfg.Seed = 2
		other, err := Synthetic(cfg)
		require.NoError(t, err)
		assert.NotEqual(t, ds.Labels, other.Labels, "%s: another seed", c.name)
	}
}

// TestSyntheticClassFeatures: class k's mean feature vector lies at
// LabelSignal·c_k·a, c_k = −1 + 2k/(C−1), so the distance between the
// means of classes k and 0 is LabelSignal·2k/(C−1).
func TestSyntheticClassFeatures(t *testing.T) {
	cfg := classConfig(20000, 5, nil)
	cfg.NumFeatures, cfg.LabelSignal, cfg.GroupSignal, cfg.Noise = 4, 2, 0, 1
	ds, err := Synthetic(cfg)
	require.NoError(t, err)
	d := ds.NumFeatures
	mean := make([][]float64, cfg.Classes)
	cnt := make([]float64, cfg.Classes)
	for k := range mean {
		mean[k] = make([]float64, d)
	}
	for i, y := range ds.Labels {
		cnt[y]++
		for j := range d {
			mean[y][j] += ds.Features[i*d+j]
		}
	}
	for k := range mean {
		for j := range d {
			mean[k][j] /= cnt[k]
		}
	}
	for k := 1; k < cfg.Classes; k++ {
		dist := 0.0
		for j := range d {
			dist += (mean[k][j] - mean[0][j]) * (mean[k][j] - mean[0][j])
		}
		// Each mean has noise of std 1/√4000 per coordinate.
		assert.InDelta(t, cfg.LabelSignal*2*float64(k)/float64(cfg.Classes-1), math.Sqrt(dist), 0.06, "class %d", k)
	}
}

// TestSyntheticClassesErrors: the class knobs are validated, naming the
// field and what it should be, and SyntheticLarge refuses more than two
// classes.
func TestSyntheticClassesErrors(t *testing.T) {
	for _, c := range []struct {
		mod  func(*SyntheticConfig)
		want string
	}{
		{func(c *SyntheticConfig) { c.Classes = 1 }, "SyntheticConfig.Classes = 1, want a number of classes in [2, 2000]"},
		{func(c *SyntheticConfig) { c.Classes = 2001 }, "Classes = 2001"},
		{func(c *SyntheticConfig) { c.Classes = 3 }, "LabelBias = 0.4, want 0 when Classes = 3 > 2"},
		{func(c *SyntheticConfig) { c.ClassBias = []float64{0.1, -0.1} }, "ClassBias = [0.1 -0.1], want nil when Classes = 2"},
		{func(c *SyntheticConfig) { c.Classes, c.LabelBias, c.ClassBias = 3, 0, []float64{0.1, -0.1} }, "one value per class (3), not 2"},
		{func(c *SyntheticConfig) { c.Classes, c.LabelBias, c.ClassBias = 3, 0, []float64{0.7, -0.3, -0.4} }, "ClassBias[0] = 0.7"},
		{func(c *SyntheticConfig) { c.Classes, c.LabelBias, c.ClassBias = 3, 0, []float64{0.1, 0.1, 0} }, "summing to 0 (they sum to 0.2"},
		{func(c *SyntheticConfig) { c.Classes, c.LabelBias, c.ClassBias = 3, 0, []float64{math.NaN(), 0, 0} }, "ClassBias[0] = NaN"},
	} {
		cfg := DefaultSyntheticConfig()
		c.mod(&cfg)
		_, err := Synthetic(cfg)
		assert.ErrorContains(t, err, c.want)
	}
	_, err := SyntheticLarge(classConfig(1000, 3, nil), t.TempDir()+"/x.feat", nil)
	assert.ErrorContains(t, err, "SyntheticLarge draws two classes")
	// Class 0 absent from group 1 (rate 1/3 − (2/3)/2 = 0): with every
	// edge inside its label and across the groups, nodes of class 0 can get
	// no edge; the reachability check counts the three labels.
	cfg := classConfig(400, 3, []float64{-2.0 / 3, 1.0 / 3, 1.0 / 3})
	cfg.LabelHomophily, cfg.SensHomophily = 1, 0
	_, err = Synthetic(cfg)
	assert.ErrorContains(t, err, "nodes with label 0 and group 0 can get no edge")
	cfg.SensHomophily = 0.5
	ds, err := Synthetic(cfg)
	require.NoError(t, err)
	for i, y := range ds.Labels {
		assert.False(t, y == 0 && ds.Sens[i] == 1, "node %d: class 0 in group 1", i)
	}
}
