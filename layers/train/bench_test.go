package train

import (
	"math/rand"
	"sync"
	"testing"

	"github.com/fairmp/fairmp/internal/testutil"
	"github.com/fairmp/fairmp/layers"
	"github.com/stretchr/testify/require"

	"github.com/fairmp/fairmp/graph"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Pokec-z's shape (the paper's largest data set, not available here):
// 67,796 nodes, 276 features, about 617,958 undirected edges, 2 classes.
const (
	pokecN     = 67796
	pokecD     = 276
	pokecEdges = 617958
)

var (
	pokecOnce sync.Once
	pokecG    *graph.Graph
	pokecX    []float32
	pokecY    []int
	pokecTr   []int
	pokecVa   []int
)

// pokecShaped generates (once) a random graph of Pokec-z's shape: edges
// between uniformly random node pairs (seed 1; self-loops and the rare
// duplicates dropped, so slightly fewer than pokecEdges remain), features
// uniform in [−1, 1], random binary labels, a 50/25 % train/val split. Only
// the sizes matter for timing; the degree distribution is Poisson, not
// Pokec's heavy tail.
func pokecShaped(b *testing.B) {
	pokecOnce.Do(func() {
		rng := rand.New(rand.NewSource(1))
		es := make([][2]int, pokecEdges)
		for k := range es {
			es[k] = [2]int{rng.Intn(pokecN), rng.Intn(pokecN)}
		}
		var err error
		if pokecG, err = graph.FromEdges(pokecN, es); err != nil {
			panic(err)
		}
		pokecX = make([]float32, pokecN*pokecD)
		for i := range pokecX {
			pokecX[i] = float32(2*rng.Float64() - 1)
		}
		pokecY = make([]int, pokecN)
		for i := range pokecY {
			pokecY[i] = rng.Intn(2)
		}
		perm := rng.Perm(pokecN)
		pokecTr, pokecVa = perm[:pokecN/2], perm[pokecN/2:3*pokecN/4]
	})
	b.Logf("generated graph: %d nodes, %d undirected edges, %d features", pokecG.N(), pokecG.NumEdges(), pokecD)
}

func pokecTask(b *testing.B) *Task {
	pokecShaped(b)
	g := G.NewGraph()
	t := tensor.New(tensor.WithShape(pokecN, pokecD), tensor.WithBacking(append([]float32(nil), pokecX...)))
	x := G.NewMatrix(g, tensor.Float32, G.WithShape(pokecN, pokecD), G.WithName("x"), G.WithValue(t))
	return &Task{Graph: g, X: x, Labels: pokecY, Train: pokecTr, Val: pokecVa, Classes: 2, Phase: layers.NewPhase()}
}

// BenchmarkEpochPokec times one training epoch (Trainer.Epoch: forward,
// backward and Adam update in training mode, then one evaluation forward)
// of each model, float32, hidden 64, on the Pokec-shaped graph. Run with
// -benchtime=3x: one epoch takes about a second. cpu-ms/op is the
// process CPU time per epoch, summed over threads.
func BenchmarkEpochPokec(b *testing.B) {
	models := []struct {
		name  string
		build func(task *Task) (layers.Model, error)
	}{
		{"MLP", func(task *Task) (layers.Model, error) {
			c := layers.DefaultMLPConfig(pokecD, 2)
			c.Dtype = tensor.Float32
			return layers.NewMLP(task.Graph, nil, c, task.Phase)
		}},
		{"GCN", func(task *Task) (layers.Model, error) {
			c := layers.DefaultGCNConfig(pokecD, 2)
			c.Dtype = tensor.Float32
			return layers.NewGCN(task.Graph, pokecG, c, task.Phase)
		}},
		{"SGC_K2", func(task *Task) (layers.Model, error) {
			c := layers.DefaultSGCConfig(pokecD, 2)
			c.K, c.Dtype = 2, tensor.Float32
			return layers.NewSGC(task.Graph, pokecG, c, nil)
		}},
		{"APPNP_K10", func(task *Task) (layers.Model, error) {
			c := layers.DefaultAPPNPConfig(pokecD, 2)
			c.Dtype = tensor.Float32
			return layers.NewAPPNP(task.Graph, pokecG, c, task.Phase)
		}},
		{"APPNP_K10_edgedrop", func(task *Task) (layers.Model, error) {
			c := layers.DefaultAPPNPConfig(pokecD, 2)
			c.Dtype, c.EdgeDropout = tensor.Float32, 0.5
			return layers.NewAPPNP(task.Graph, pokecG, c, task.Phase)
		}},
		{"JKNet_cat", func(task *Task) (layers.Model, error) {
			c := layers.DefaultJKNetConfig(pokecD, 2)
			c.Dtype = tensor.Float32
			return layers.NewJKNet(task.Graph, pokecG, c, task.Phase)
		}},
	}
	for _, m := range models {
		b.Run(m.name, func(b *testing.B) {
			task := pokecTask(b)
			model, err := m.build(task)
			require.NoError(b, err)
			tr, err := NewTrainer(model, task, DefaultConfig())
			require.NoError(b, err)
			defer tr.Close()
			if _, err := tr.Epoch(); err != nil { // warm-up: first allocations
				b.Fatal(err)
			}
			b.ResetTimer()
			cpu0 := testutil.CPUTime()
			for i := 0; i < b.N; i++ {
				if _, err := tr.Epoch(); err != nil {
					b.Fatal(err)
				}
			}
			// Process CPU time (all threads; 0 where unsupported): less
			// sensitive than wall time to other processes on a shared machine.
			b.ReportMetric(float64((testutil.CPUTime()-cpu0).Milliseconds())/float64(b.N), "cpu-ms/op")
		})
	}
}
