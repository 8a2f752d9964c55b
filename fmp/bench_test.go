package fmp

import (
	"sync"
	"testing"

	"github.com/fairmp/fairmp/graph"
	"github.com/fairmp/fairmp/graph/datasets"
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
		if model, err = layers.NewMLP(g, mc, phase); err != nil {
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

// BenchmarkFMPOps measures the three fairness ops alone on Pokec's n with
// c = 2 (forward), for comparison with one sparse product.
func BenchmarkFMPOps(b *testing.B) {
	d, adj := pokecShaped(b)
	n, c := d.N(), 2
	ds, err := NewDeltaS(d.Sens, false)
	require.NoError(b, err)
	f := make([]float64, n*c)
	for i := range f {
		f[i] = float64(i%7) - 3
	}
	u := []float64{0.3, -0.3}
	out := make([]float64, n*c)
	gap := make([]float64, c)
	b.Run("FairGrad", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			gradKernel(ds.d64, 1, n, f, u, out, c, 1, 1)
		}
	})
	b.Run("FairGradBackF", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			gradBackKernel(ds.d64, 1, n, f, u, f, out, c, 1, 1)
		}
	})
	b.Run("GroupGap", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			gapKernel(ds.d64, 1, n, f, nil, gap, c, 1, 1)
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
