package datasets

import (
	"math"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/stretchr/testify/require"
)

// dataDir returns $FAIRMP_DATA or skips the test.
func dataDir(t *testing.T) string {
	t.Helper()
	d := os.Getenv("FAIRMP_DATA")
	if d == "" {
		t.Skip("FAIRMP_DATA is not set: skipping the real-data test (set it to the folder holding nba/, bail/ and credit/)")
	}
	return d
}

func count(xs []int) map[int]int {
	m := map[int]int{}
	for _, x := range xs {
		m[x]++
	}
	return m
}

// TestRealNBA checks the statistics of the NBA data set stated in the
// data README, loading it both from $FAIRMP_DATA and from
// $FAIRMP_DATA/nba.
func TestRealNBA(t *testing.T) {
	dir := dataDir(t)
	ds, err := Load(dir, "nba", DefaultOptions())
	require.NoError(t, err)
	g := ds.Graph
	if ds.N() != 403 || ds.NumFeatures != 95 || len(ds.Features) != 403*95 || len(ds.FeatureNames) != 95 {
		t.Errorf("%d nodes, %d features (%d values, %d names), want 403 and 95", ds.N(), ds.NumFeatures, len(ds.Features), len(ds.FeatureNames))
	}
	if g.NumEdges() != 10621 || g.Isolated() != 3 {
		t.Errorf("%d edges, %d isolated, want 10621 and 3", g.NumEdges(), g.Isolated())
	}
	if c := count(ds.Labels); !reflect.DeepEqual(c, map[int]int{-1: 90, 0: 154, 1: 159}) {
		t.Errorf("labels %v, want -1:90 0:154 1:159", c)
	}
	if c := count(ds.Sens); !reflect.DeepEqual(c, map[int]int{0: 296, 1: 107}) {
		t.Errorf("sens %v, want 0:296 1:107", c)
	}
	if len(ds.Split.Train) != 250 || len(ds.Split.Test) != 63 || !reflect.DeepEqual(ds.Split.Val, ds.Split.Test) {
		t.Errorf("split %d/%d/%d, want 250 train, 63 test, val = test", len(ds.Split.Train), len(ds.Split.Val), len(ds.Split.Test))
	}
	for _, name := range []string{"user_id", "SALARY", "country"} {
		if contains(ds.FeatureNames, name) {
			t.Errorf("feature %q present", name)
		}
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, v := range ds.Features {
		lo, hi = math.Min(lo, v), math.Max(hi, v)
	}
	if lo != -1 || hi != 1 {
		t.Errorf("features span [%v, %v], want [-1, 1] (min-max scaled)", lo, hi)
	}
	hy, _ := g.Homophily(ds.Labels)
	hs, _ := g.Homophily(ds.Sens)
	t.Logf("nba: label homophily %.4f, sensitive homophily %.4f", hy, hs)

	ds2, err := Load(filepath.Join(dir, "nba"), "nba", DefaultOptions())
	require.NoError(t, err)
	if !reflect.DeepEqual(ds.Features, ds2.Features) || !reflect.DeepEqual(g.Edges(), ds2.Graph.Edges()) {
		t.Error("loading from the dataset folder and from its parent differ")
	}
	o := DefaultOptions()
	o.IncludeSens = true
	ds3, err := Load(dir, "nba", o)
	require.NoError(t, err)
	if ds3.NumFeatures != 96 || !contains(ds3.FeatureNames, "country") {
		t.Errorf("IncludeSens: %d features, want 96 with country", ds3.NumFeatures)
	}
}

// TestRealNIFTY checks the node and edge counts of Bail and Credit.
func TestRealNIFTY(t *testing.T) {
	dir := dataDir(t)
	for _, c := range []struct {
		name             string
		nodes, edges, d  int
		train, val, test int
	}{
		{"bail", 18876, 311870, 17, 9438, 4719, 4719},
		{"credit", 30000, 137377, 12, 15000, 7500, 7500},
	} {
		ds, err := Load(dir, c.name, DefaultOptions())
		require.NoError(t, err)
		g := ds.Graph
		if ds.N() != c.nodes || g.NumEdges() != c.edges || ds.NumFeatures != c.d {
			t.Errorf("%s: %d nodes, %d edges, %d features; want %d, %d, %d", c.name, ds.N(), g.NumEdges(), ds.NumFeatures, c.nodes, c.edges, c.d)
		}
		if len(ds.Split.Train) != c.train || len(ds.Split.Val) != c.val || len(ds.Split.Test) != c.test {
			t.Errorf("%s: split %d/%d/%d, want %d/%d/%d", c.name, len(ds.Split.Train), len(ds.Split.Val), len(ds.Split.Test), c.train, c.val, c.test)
		}
		hy, _ := g.Homophily(ds.Labels)
		hs, _ := g.Homophily(ds.Sens)
		t.Logf("%s: label homophily %.4f, sensitive homophily %.4f", c.name, hy, hs)
	}
}
