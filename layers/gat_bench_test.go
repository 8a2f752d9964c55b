package layers

import (
	"math/rand"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/fairmp/fairmp/graph"
	"github.com/fairmp/fairmp/internal/testutil"
	"github.com/stretchr/testify/require"
)

// Pokec-z's shape (the FMP paper's largest data set).
const (
	gatPokecNodes    = 67796
	gatPokecFeatures = 276
	gatPokecEdges    = 617958
)

// gatPokecGraph returns a seeded random graph with Pokec-z's node count and
// about its number of undirected edges (uniform random pairs; self-loops
// and duplicates, a few hundred, are dropped by graph.FromEdges).
func gatPokecGraph(tb testing.TB, seed int64) *graph.Graph {
	tb.Helper()
	rng := rand.New(rand.NewSource(seed))
	edges := make([][2]int, gatPokecEdges)
	for k := range edges {
		edges[k] = [2]int{rng.Intn(gatPokecNodes), rng.Intn(gatPokecNodes)}
	}
	gr, err := graph.FromEdges(gatPokecNodes, edges)
	require.NoError(tb, err)
	return gr
}

// BenchmarkGATPokec measures forward + backward (the gradients of all
// learnables, on a pruned tape) of the default two-layer GAT (4 heads × 16
// hidden, 2 classes) on a Pokec-shaped random graph, float32. The cost is
// sum(R ⊙ logits), standing in for the loss.
func BenchmarkGATPokec(b *testing.B) {
	gr := gatPokecGraph(b, 1)
	n, d, classes := gatPokecNodes, gatPokecFeatures, 2
	rng := rand.New(rand.NewSource(2))
	dt := tensor.Float32
	g := G.NewGraph()
	x := G.NewMatrix(g, dt, G.WithShape(n, d), G.WithName("x"), G.WithValue(testutil.Tensor(dt, testutil.RandSlice(rng, n*d, -1, 1), n, d)))
	r := G.NewMatrix(g, dt, G.WithShape(n, classes), G.WithName("r"), G.WithValue(testutil.Tensor(dt, testutil.RandSlice(rng, n*classes, -1, 1), n, classes)))
	cfg := DefaultGATConfig(d, classes)
	cfg.Dtype = dt
	m, err := NewGAT(g, gr, cfg, nil)
	require.NoError(b, err)
	y, err := m.Forward(x)
	require.NoError(b, err)
	cost := G.Must(G.Mean(G.Must(G.HadamardProd(y, r))))
	grads, err := G.Grad(cost, m.Learnables()...)
	require.NoError(b, err)
	vm := G.NewTapeMachine(g.SubgraphRoots(append(G.Nodes{cost}, grads...)...))
	defer vm.Close()
	b.ReportMetric(float64(gr.NumEdges()), "edges")
	cpu0 := testutil.CPUTime()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := vm.RunAll(); err != nil {
			b.Fatal(err)
		}
		vm.Reset()
	}
	b.StopTimer()
	// CPU time (all threads) per op: on a shared machine it is less
	// affected by other processes than the wall time.
	b.ReportMetric(float64((testutil.CPUTime()-cpu0).Milliseconds())/float64(b.N), "cpu-ms/op")
}
