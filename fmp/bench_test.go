package fmp

import (
	"math/rand"
	"sync"
	"testing"

	"github.com/fairmp/fairmp/graph"
	"github.com/fairmp/fairmp/graph/datasets"
	"github.com/fairmp/fairmp/internal/opkit"
	"github.com/fairmp/fairmp/internal/testutil"
	"github.com/fairmp/fairmp/layers"
	"github.com/fairmp/fairmp/layers/train"
	"github.com/stretchr/testify/require"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

var (
	pokecOnce sync.Once
	pokec     *datasets.Dataset
	pokecAdj  *graph.Matrix
	pokecErr  error
)

// pokecShaped generates (once) a graph with Pokec-z's shape: 67,796 nodes,
// 276 features, ~618k undirected edges.
func pokecShaped(b *testing.B) (*datasets.Dataset, *graph.Matrix) {
	b.Helper()
	pokecOnce.Do(func() {
		pokec, pokecErr = datasets.Synthetic(datasets.PokecZShape(1))
		if pokecErr == nil {
			pokecAdj = graph.NormalizedAdjacency(pokec.Graph)
		}
	})
	if pokecErr != nil {
		b.Fatal(pokecErr)
	}
	return pokec, pokecAdj
}

// benchTrainStep measures one full-batch forward + backward pass (the
// cross-entropy on the training nodes and its gradient with respect to the
// MLP's parameters, pruned tape as the trainer compiles it) of the MLP
// alone (k = 0) or MLP → FMP with K = k.
func benchTrainStep(b *testing.B, dt tensor.Dtype, k int) {
	d, _ := pokecShaped(b)
	g := G.NewGraph()
	x, err := train.FeatureNode(g, dt, d.Features, d.N(), d.NumFeatures, "X")
	require.NoError(b, err)
	phase := layers.NewPhase()
	phase.SetTraining(true)
	mc := layers.DefaultMLPConfig(d.NumFeatures, 2)
	mc.Dtype = dt
	var model layers.Model
	if k == 0 {
		if model, err = layers.NewMLP(g, nil, mc, phase); err != nil {
			b.Fatal(err)
		}
	} else {
		cfg := DefaultModelConfig(d.NumFeatures, 2)
		cfg.MLP = mc
		cfg.FMP.K, cfg.FMP.TrainMode = k, EndToEnd
		if model, err = NewModel(g, d.Graph, d.Sens, cfg, phase); err != nil {
			b.Fatal(err)
		}
	}
	logits, err := model.Forward(x)
	require.NoError(b, err)
	ce, err := layers.CrossEntropy(logits, d.Labels, d.Split.Train)
	require.NoError(b, err)
	grads, err := G.Grad(ce, model.Learnables()...)
	require.NoError(b, err)
	m := G.NewTapeMachine(g.SubgraphRoots(append(G.Nodes{ce}, grads...)...), G.BindDualValues(model.Learnables()...))
	defer m.Close()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := m.RunAll(); err != nil {
			b.Fatal(err)
		}
		m.Reset()
	}
}

func BenchmarkPokecTrainStepMLP32(b *testing.B)     { benchTrainStep(b, tensor.Float32, 0) }
func BenchmarkPokecTrainStepFMPK2_32(b *testing.B)  { benchTrainStep(b, tensor.Float32, 2) }
func BenchmarkPokecTrainStepFMPK10_32(b *testing.B) { benchTrainStep(b, tensor.Float32, 10) }
func BenchmarkPokecTrainStepMLP64(b *testing.B)     { benchTrainStep(b, tensor.Float64, 0) }
func BenchmarkPokecTrainStepFMPK2_64(b *testing.B)  { benchTrainStep(b, tensor.Float64, 2) }
func BenchmarkPokecTrainStepFMPK10_64(b *testing.B) { benchTrainStep(b, tensor.Float64, 10) }

// BenchmarkFMPOps measures one step of the loop and the groups' sums alone on Pokec's n with
// c = 2 (forward), for comparison with one sparse product.
func BenchmarkFMPOps(b *testing.B) {
	d, adj := pokecShaped(b)
	n, c := d.N(), 2
	ds, err := newDeltaS(d.Sens, false)
	require.NoError(b, err)
	f := make([]float64, n*c)
	for i := range f {
		f[i] = float64(i%7) - 3
	}
	out := make([]float64, n*c)
	gap := make([]float64, c)
	sm := make([]float64, n*c)
	for i := 0; i < n; i++ {
		opkit.SoftmaxRow(f[i*c:(i+1)*c], sm[i*c:(i+1)*c], 1)
	}
	l := newChecked(adj, d.Sens, ds, DefaultConfig())
	p := loopFor(l)
	p.k = 1
	b.Run("Step", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			applyLoop(p, f, out, c)
		}
	})
	b.Run("GroupGap", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			gapKernel(ds.d64, 1, n, gap, c, 1, sm)
		}
	})
	b.Run("SpMM", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			adj.MulDense64(out, f, c)
		}
	})
}

// BenchmarkApply: FMP's K = 10 evaluation steps outside gorgonia
// (Layer.Apply) on 2-column logits, the whole-graph FMP of mini-batch
// training, on the Pokec-z shape and the Bail shape (generated: 18,876
// nodes, mean degree 33).
func BenchmarkApply(b *testing.B) {
	bail := datasets.DefaultSyntheticConfig()
	bail.N, bail.MeanDegree = 18876, 33
	bailDS, err := datasets.Synthetic(bail)
	require.NoError(b, err)
	shapes := []struct {
		name string
		get  func() (*datasets.Dataset, *graph.Matrix)
	}{
		{"bail", func() (*datasets.Dataset, *graph.Matrix) { return bailDS, graph.NormalizedAdjacency(bailDS.Graph) }},
		{"pokec-z", func() (*datasets.Dataset, *graph.Matrix) { return pokecShaped(b) }},
	}
	for _, sh := range shapes {
		for _, dt := range []tensor.Dtype{tensor.Float32, tensor.Float64} {
			b.Run(sh.name+"/"+dt.String(), func(b *testing.B) {
				d, adj := sh.get()
				l, err := New(adj, d.Sens, DefaultConfig())
				require.NoError(b, err)
				x := tensor.New(tensor.WithShape(d.N(), 2), tensor.Of(dt))
				for i := 0; i < d.N(); i++ {
					v := float64(d.Labels[i]) - 0.5
					if dt == tensor.Float32 {
						x.Data().([]float32)[2*i+1] = float32(v)
					} else {
						x.Data().([]float64)[2*i+1] = v
					}
				}
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					if _, err := l.Apply(x); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// realShapes are the real data sets' sizes: nodes, features, undirected
// edges (the bench command's -shape).
var realShapes = []struct {
	name    string
	n, d, e int
}{{"nba", 403, 95, 10621}, {"bail", 18876, 18, 311870}, {"credit", 30000, 13, 137377}, {"pokec_z", 67796, 276, 617958}}

// uniformShaped returns a seeded graph of n nodes with about e uniform
// random undirected edges, standard-normal-like features, random binary
// labels and groups, and a 50/25 % train/validation split (the PyTorch
// peer's data; only the sizes matter for timing).
func uniformShaped(b *testing.B, n, d, e int) (*graph.Graph, []float64, []int, []int, []int, []int) {
	b.Helper()
	rng := rand.New(rand.NewSource(1))
	es := make([][2]int, 0, e)
	for len(es) < e {
		u, v := rng.Intn(n), rng.Intn(n)
		if u != v {
			es = append(es, [2]int{u, v})
		}
	}
	gr, err := graph.FromEdges(n, es)
	require.NoError(b, err)
	x := make([]float64, n*d)
	for i := range x {
		x[i] = rng.NormFloat64()
	}
	y, s := make([]int, n), make([]int, n)
	for i := range y {
		y[i], s[i] = rng.Intn(2), rng.Intn(2)
	}
	perm := rng.Perm(n)
	return gr, x, y, s, perm[:n/2], perm[n/2 : 3*n/4]
}

// BenchmarkEpochShapes times train.Fit's epoch (Trainer.Epoch: the
// training step and the evaluation pass), float32, hidden 64, no dropout
// (the bench command's protocol), on uniform random graphs of the real
// data sets' shapes: the MLP, FMP at the defaults as FitTwoStage
// trains it (K = 10, λf = 0 in training and evaluation), and FMP at the
// defaults trained by train.Fit (FMPFair: InferenceOnly, so the training
// step propagates only and the evaluation pass runs the fairness steps
// at λf = 2). The target is FMP ≤ 1.5 × the MLP's epoch (cpu-ms/op:
// process CPU time per epoch, all threads, steadier than wall time on a
// shared machine).
func BenchmarkEpochShapes(b *testing.B) {
	for _, sh := range realShapes {
		for _, model := range []string{"MLP", "FMPDefault", "FMPFair"} {
			b.Run(sh.name+"/"+model, func(b *testing.B) {
				gr, feats, labels, sens, tr, va := uniformShaped(b, sh.n, sh.d, sh.e)
				g := G.NewGraph()
				x, err := train.FeatureNode(g, tensor.Float32, feats, sh.n, sh.d, "X")
				require.NoError(b, err)
				phase := layers.NewPhase()
				cfg := DefaultModelConfig(sh.d, 2)
				cfg.MLP.Dtype, cfg.MLP.Dropout = tensor.Float32, 0
				var m layers.Model
				if model == "MLP" {
					m, err = layers.NewMLP(g, nil, cfg.MLP, phase)
				} else {
					if model == "FMPDefault" {
						cfg.FMP.LambdaF = 0 // FitTwoStage's training model
					}
					m, err = NewModel(g, gr, sens, cfg, phase)
				}
				require.NoError(b, err)
				task := &train.Task{Graph: g, X: x, Labels: labels, Train: tr, Val: va, Classes: 2, Phase: phase}
				t, err := train.NewTrainer(m, task, train.DefaultConfig())
				require.NoError(b, err)
				defer t.Close()
				for i := 0; i < 3; i++ { // warm-up
					_, err := t.Epoch()
					require.NoError(b, err)
				}
				b.ResetTimer()
				cpu0 := testutil.CPUTime()
				for i := 0; i < b.N; i++ {
					if _, err := t.Epoch(); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64((testutil.CPUTime()-cpu0).Microseconds())/1e3/float64(b.N), "cpu-ms/op")
			})
		}
	}
}
