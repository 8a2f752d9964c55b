package minibatch_test

import (
	"context"
	"fmt"

	"gorgonia.org/tensor"

	"github.com/fairmp/fairmp/fmp"
	"github.com/fairmp/fairmp/graph/datasets"
	"github.com/fairmp/fairmp/graph/features"
	"github.com/fairmp/fairmp/layers"
	"github.com/fairmp/fairmp/layers/minibatch"
)

// Train a GCN in mini-batches of 256 target nodes with 5 sampled
// neighbours per hop, compute the whole graph's logits layer by layer, and
// debias them with FMP over the whole graph.
func ExampleFit() {
	ds, err := datasets.Synthetic(datasets.DefaultSyntheticConfig()) // 2,000 nodes
	if err != nil {
		panic(err)
	}
	gcn := layers.DefaultGCNConfig(ds.NumFeatures, 2)
	gcn.Dtype = tensor.Float32
	adj, err := minibatch.Matrix(gcn, ds.Graph) // the whole graph's Ã
	if err != nil {
		panic(err)
	}
	x, err := features.NewDense(ds.Features, ds.N(), ds.NumFeatures) // or features.Open(path)
	if err != nil {
		panic(err)
	}
	cfg := minibatch.DefaultConfig(gcn)
	cfg.Train.Epochs = 5
	cfg.Sampler.BatchSize, cfg.Sampler.Fanouts = 256, []int{5, 5}
	res, err := minibatch.Fit(context.Background(), &minibatch.Task{Adj: adj, Features: x, Labels: ds.Labels,
		Train: ds.Split.Train, Val: ds.Split.Val, Classes: 2, Sens: ds.Sens}, cfg)
	if err != nil {
		panic(err)
	}
	z, err := minibatch.Logits(gcn, res.Params, adj, x)
	if err != nil {
		panic(err)
	}
	l, err := fmp.New(adj, ds.Sens, fmp.DefaultConfig())
	if err != nil {
		panic(err)
	}
	f, err := l.Apply(z)
	if err != nil {
		panic(err)
	}
	fmt.Printf("%d epochs of %d batches; %d parameter tensors\n", res.Epochs, (len(ds.Split.Train)+255)/256, len(res.Params))
	fmt.Println("logits", z.Shape(), "debiased", f.Shape())
	// Output:
	// 5 epochs of 4 batches; 4 parameter tensors
	// logits (2000, 2) debiased (2000, 2)
}
