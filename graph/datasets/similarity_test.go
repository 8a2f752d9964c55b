package datasets

import (
	"math"
	"math/rand"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"testing"
	"time"

	"github.com/fairmp/fairmp/graph"
	"github.com/stretchr/testify/require"
)

// naiveSimilarity is NIFTY's build_relationship written plainly: the full
// similarity matrix, the second-largest value of each row (the largest
// being the self-similarity 1), and every j != i above threshold × it.
func naiveSimilarity(x []float64, n, d int, th float64) [][2]int {
	sim := make([][]float64, n)
	for i := range sim {
		sim[i] = make([]float64, n)
		for j := 0; j < n; j++ {
			ss := 0.0
			for k := 0; k < d; k++ {
				ss += (x[i*d+k] - x[j*d+k]) * (x[i*d+k] - x[j*d+k])
			}
			sim[i][j] = 1 / (1 + math.Sqrt(ss))
		}
	}
	var out [][2]int
	for i := 0; i < n; i++ {
		row := append([]float64(nil), sim[i]...)
		sort.Float64s(row)
		max := row[n-2]
		for j := 0; j < n; j++ {
			if j != i && sim[i][j] > th*max {
				out = append(out, [2]int{i, j})
			}
		}
	}
	return out
}

func TestSimilarityEdgesMatchesNaive(t *testing.T) {
	rng := rand.New(rand.NewSource(5))
	for _, c := range []struct {
		n, d int
		th   float64
		ints bool
	}{{300, 5, 0.6, true}, {257, 3, 0.8, false}, {130, 1, 0.7, true}, {2, 2, 0.5, false}} {
		x := make([]float64, c.n*c.d)
		for k := range x {
			if c.ints {
				x[k] = float64(rng.Intn(4)) // many ties and duplicate rows
			} else {
				x[k] = rng.NormFloat64()
			}
		}
		got, err := similarityEdges(x, c.n, c.d, c.th)
		require.NoError(t, err)
		want := naiveSimilarity(x, c.n, c.d, c.th)
		if len(want) == 0 || !reflect.DeepEqual(got, want) {
			t.Errorf("%+v: %d pairs, naive %d", c, len(got), len(want))
		}
	}
	// The graph over the edges symmetrises: on 1-d points 0, 1, 3 with
	// threshold 0.9, 0 → {1}, 1 → {0}, 3 → {1}: edges {0,1}, {1,2}.
	e, err := similarityEdges([]float64{0, 1, 3}, 3, 1, 0.9)
	require.NoError(t, err)
	g, err := graph.FromEdges(3, e)
	if err != nil || !reflect.DeepEqual(g.Edges(), [][2]int{{0, 1}, {1, 2}}) {
		t.Errorf("graph over similarityEdges: %v, %v", g, err)
	}
	if _, err := similarityEdges([]float64{0}, 1, 1, 0.9); err == nil {
		t.Error("no error for a single row")
	}
	if _, err := similarityEdges([]float64{1, math.NaN()}, 2, 1, 0.5); err == nil {
		t.Error("no error for NaN")
	}
	if _, err := similarityEdges([]float64{1, 2}, 2, 1, 1.5); err == nil {
		t.Error("no error for threshold 1.5")
	}
	if _, err := similarityEdges([]float64{1, 2, 3}, 2, 1, 0.5); err == nil {
		t.Error("no error for 3 values for 2 × 1")
	}
}

// TestRealNIFTYSimilarity rebuilds the Bail and Credit graphs from their
// features and compares them with bail_edges.txt and credit_edges.txt
// (built by NIFTY's recipe): they must be identical.
func TestRealNIFTYSimilarity(t *testing.T) {
	dir := dataDir(t)
	if testing.Short() {
		t.Skip("-short: skipping the O(n²) similarity rebuilds")
	}
	for _, name := range []string{"bail", "credit"} {
		c, _ := NIFTYPreset(name)
		raw, err := os.ReadFile(filepath.Join(dir, name, name+".csv"))
		require.NoError(t, err)
		tmp := t.TempDir()
		if err := os.WriteFile(filepath.Join(tmp, name+".csv"), raw, 0o644); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		built, err := LoadNIFTY(tmp, c) // no edges file: similarity graph
		require.NoError(t, err)
		el := time.Since(start)
		t.Logf("%s similarity graph (%d nodes) built in %v", name, built.N(), el)
		ref, err := LoadNIFTY(dir, c)
		require.NoError(t, err)
		if !reflect.DeepEqual(built.Graph.Edges(), ref.Graph.Edges()) {
			t.Errorf("%s: similarity graph has %d edges, the edges file %d", name, built.Graph.NumEdges(), ref.Graph.NumEdges())
		}
	}
}
