package minibatch

import (
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"gorgonia.org/tensor"

	"github.com/fairmp/fairmp/graph/datasets"
	"github.com/fairmp/fairmp/layers"
	"github.com/fairmp/fairmp/layers/train"
)

var (
	shapeOnce sync.Once
	shapeData map[string]*datasets.Dataset
	shapeErr  error
)

// shapes generates (once) graphs of the Bail shape (18,876 nodes, mean
// degree 33, 18 features) and the Pokec-z shape (67,796 nodes, 276
// features).
func shapes(b *testing.B) map[string]*datasets.Dataset {
	b.Helper()
	shapeOnce.Do(func() {
		shapeData = map[string]*datasets.Dataset{}
		bail := datasets.DefaultSyntheticConfig()
		bail.N, bail.MeanDegree, bail.NumFeatures = 18876, 33, 18
		if shapeData["bail"], shapeErr = datasets.Synthetic(bail); shapeErr != nil {
			return
		}
		shapeData["pokec-z"], shapeErr = datasets.Synthetic(datasets.PokecZShape(1))
	})
	require.NoError(b, shapeErr)
	return shapeData
}

func benchModel(ds *datasets.Dataset) layers.GCNConfig {
	c := layers.DefaultGCNConfig(ds.NumFeatures, 2)
	c.Dtype = tensor.Float32
	return c
}

// BenchmarkEpoch: one mini-batch training epoch of a float32 GCN (fan-outs
// 10, 10; batches of 1024; no evaluation pass) over the training split.
func BenchmarkEpoch(b *testing.B) {
	for _, name := range []string{"bail", "pokec-z"} {
		b.Run(name, func(b *testing.B) {
			ds := shapes(b)[name]
			cfg := benchModel(ds)
			tk := task(b, ds, cfg)
			tk.Val = nil
			mc := DefaultConfig(cfg)
			mc.Train.Epochs = 1
			mc.Train.Select = train.SelectLast
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := Fit(context.Background(), tk, mc); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkLogits: the whole graph's logits of a float32 GCN, layer by
// layer.
func BenchmarkLogits(b *testing.B) {
	for _, name := range []string{"bail", "pokec-z"} {
		b.Run(name, func(b *testing.B) {
			ds := shapes(b)[name]
			cfg := benchModel(ds)
			tk := task(b, ds, cfg)
			params := initParams(b, cfg)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := Logits(cfg, params, tk.Adj, tk.Features); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
