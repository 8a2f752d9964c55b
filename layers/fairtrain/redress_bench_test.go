package fairtrain

import (
	"math/rand"
	"os"
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

// BenchmarkRankingLossBail times forward and gradient of REDRESS's
// ranking loss on Bail-sized logits (18,876 × 2, 18 features) over half
// of the nodes (Bail's training split, 9,438 nodes: 89 million output
// similarities a run).
func BenchmarkRankingLossBail(b *testing.B) {
	n, d := 18876, 18
	rng := rand.New(rand.NewSource(1))
	x := testutil.RandSlice(rng, n*d, -1, 1)
	train := rng.Perm(n)[:n/2]
	benchTerm(b, func(z *G.Node, _, _ []int) (*G.Node, error) { return rankingLoss(z, x, d, train, 10, 1) })
}

// BenchmarkREDRESSEpoch times one training epoch (forward, backward, Adam
// step) of a GCN (64 hidden, float64), plain and with REDRESS, on Bail:
// the real data set when FAIRMP_DATA is set (its split: 9,438 training
// nodes; /100: the reference's 100 training labels), otherwise a
// generated graph of Bail's size.
func BenchmarkREDRESSEpoch(b *testing.B) {
	var ds *datasets.Dataset
	var err error
	if dir := os.Getenv("FAIRMP_DATA"); dir != "" {
		ds, err = datasets.Load(dir, "bail", datasets.DefaultOptions())
	} else {
		c := datasets.DefaultSyntheticConfig()
		c.N, c.NumFeatures, c.MeanDegree = 18876, 18, 33
		ds, err = datasets.Synthetic(c)
	}
	require.NoError(b, err)
	full := ds.Split.Train
	for _, tr := range []struct {
		name  string
		nodes []int
	}{{"train-all", full}, {"train-100", full[:100]}} {
		for _, m := range []fairness.Loss{nil, DefaultREDRESSConfig()} {
			name := tr.name + "/plain"
			if m != nil {
				name = tr.name + "/" + m.Name()
			}
			b.Run(name, func(b *testing.B) {
				g := G.NewGraph()
				x, err := train.FeatureNode(g, tensor.Float64, ds.Features, ds.N(), ds.NumFeatures, "x")
				require.NoError(b, err)
				ph := layers.NewPhase()
				c := layers.DefaultGCNConfig(ds.NumFeatures, 2)
				c.Hidden = 64
				model, err := layers.NewGCN(g, ds.Graph, c, ph)
				require.NoError(b, err)
				task := &train.Task{Graph: g, X: x, Labels: ds.Labels, Train: tr.nodes, Val: ds.Split.Val, Classes: 2, Phase: ph}
				tc := train.DefaultConfig()
				tc.Epochs = 1 << 30
				if m != nil {
					tc, err = m.Apply(tc, task, ds.Sens)
					require.NoError(b, err)
				}
				t, err := train.NewTrainer(model, task, tc)
				require.NoError(b, err)
				defer t.Close()
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					if _, err := t.Epoch(); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
