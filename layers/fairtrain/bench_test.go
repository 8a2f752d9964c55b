package fairtrain

import (
	"math/rand"
	"testing"

	"github.com/fairmp/fairmp/graph/datasets"
	"github.com/fairmp/fairmp/internal/testutil"
	"github.com/fairmp/fairmp/layers"
	"github.com/fairmp/fairmp/layers/fairness"
	"github.com/fairmp/fairmp/layers/train"
	"github.com/stretchr/testify/require"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// benchTerm times forward and gradient of a fairness term on Bail-sized
// logits (18,876 × 2, half of the nodes in training).
func benchTerm(b *testing.B, f func(z *G.Node, sens, train []int) (*G.Node, error)) {
	n, c := 18876, 2
	rng := rand.New(rand.NewSource(1))
	sens := make([]int, n)
	for i := range sens {
		sens[i] = rng.Intn(2)
	}
	train := rng.Perm(n)[:n/2]
	g := G.NewGraph()
	z := G.NewMatrix(g, tensor.Float64, G.WithShape(n, c), G.WithName("z"), G.WithValue(testutil.Tensor(tensor.Float64, testutil.RandSlice(rng, n*c, -2, 2), n, c)))
	out, err := f(z, sens, train)
	require.NoError(b, err)
	gr, err := G.Grad(out, z)
	require.NoError(b, err)
	m := G.NewTapeMachine(g.SubgraphRoots(append(G.Nodes{out}, gr...)...))
	defer m.Close()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := m.RunAll(); err != nil {
			b.Fatal(err)
		}
		m.Reset()
	}
}

func BenchmarkDPGapBail(b *testing.B) {
	benchTerm(b, func(z *G.Node, sens, train []int) (*G.Node, error) { return dpGap(z, sens, train, 1) })
}

func BenchmarkMixupSlopeBail(b *testing.B) {
	benchTerm(b, func(z *G.Node, sens, train []int) (*G.Node, error) {
		var g0, g1 []int
		for _, i := range train {
			if sens[i] == 0 {
				g0 = append(g0, i)
			} else {
				g1 = append(g1, i)
			}
		}
		s := newMixSampler(g0, g1, min(len(g0), len(g1)), 2, 2, 1)
		return mixupSlope(z, s, len(sens), 1)
	})
}

// BenchmarkEpochBailShaped times one training epoch of a GCN (64 hidden)
// on a generated graph of Bail's size (18,876 nodes, 18 features, mean
// degree 33), plain and with each strategy (the adversary in its
// alternating phase, 5 adversary steps per epoch).
func BenchmarkEpochBailShaped(b *testing.B) {
	c := datasets.DefaultSyntheticConfig()
	c.N, c.NumFeatures, c.MeanDegree = 18876, 18, 33
	ds, err := datasets.Synthetic(c)
	require.NoError(b, err)
	adv := DefaultAdversaryConfig()
	adv.PretrainClassifier, adv.PretrainAdversary = 1, 0
	for _, s := range []fairness.Loss{nil, DefaultRegularizerConfig(), adv, DefaultMixupConfig()} {
		name := "plain"
		if s != nil {
			name = s.Name()
		}
		b.Run(name, func(b *testing.B) {
			g := G.NewGraph()
			x, err := train.FeatureNode(g, tensor.Float64, ds.Features, ds.N(), ds.NumFeatures, "x")
			require.NoError(b, err)
			ph := layers.NewPhase()
			m, err := layers.NewGCN(g, ds.Graph, layers.DefaultGCNConfig(ds.NumFeatures, 2), ph)
			require.NoError(b, err)
			task := &train.Task{Graph: g, X: x, Labels: ds.Labels, Train: ds.Split.Train, Val: ds.Split.Val, Classes: 2, Phase: ph}
			tc := train.DefaultConfig()
			tc.Epochs = 1 << 30
			if s != nil {
				if tc, err = s.Apply(tc, task, ds.Sens); err != nil {
					b.Fatal(err)
				}
			}
			tr, err := train.NewTrainer(m, task, tc)
			require.NoError(b, err)
			defer tr.Close()
			if _, err := tr.Epoch(); err != nil { // the adversary's pre-training
				b.Fatal(err)
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := tr.Epoch(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
