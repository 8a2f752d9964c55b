package layers_test

import (
	"fmt"
	"log"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/fairmp/fairmp/graph/datasets"
	"github.com/fairmp/fairmp/layers"
	"github.com/fairmp/fairmp/layers/train"
)

// smallGraph is a generated biased graph of 400 nodes: the data of the
// examples below.
func smallGraph() *datasets.Dataset {
	c := datasets.DefaultSyntheticConfig()
	c.N = 400
	ds, err := datasets.Synthetic(c)
	if err != nil {
		log.Fatal(err)
	}
	return ds
}

// A two-layer MLP (16 features → 64 → 2 classes, ReLU, dropout 0.5)
// trained on the features alone, the structure-free baseline.
func ExampleNewMLP() {
	ds := smallGraph()
	g := G.NewGraph()
	x, err := train.FeatureNode(g, tensor.Float64, ds.Features, ds.N(), ds.NumFeatures, "x")
	if err != nil {
		log.Fatal(err)
	}
	phase := layers.NewPhase() // the trainer switches dropout with it
	mlp, err := layers.NewMLP(g, nil, layers.DefaultMLPConfig(ds.NumFeatures, 2), phase)
	if err != nil {
		log.Fatal(err)
	}
	task := &train.Task{Graph: g, X: x, Labels: ds.Labels, Train: ds.Split.Train, Val: ds.Split.Val, Classes: 2, Phase: phase}
	tc := train.DefaultConfig()
	tc.Epochs, tc.Adam.LR = 100, 0.01
	if _, err := train.Fit(mlp, task, tc); err != nil {
		log.Fatal(err)
	}
	pred, err := train.Predict(mlp, task, ds.Split.Test)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("parameters:", len(mlp.Learnables())) // W and b of two layers
	fmt.Println("test accuracy above 70%:", pred.Accuracy(ds.Labels) > 0.70)
	// Output:
	// parameters: 4
	// test accuracy above 70%: true
}

// A two-layer GCN on the same data: each layer averages a node's
// neighbourhood (Ã = D̂^-½(A+I)D̂^-½, built once from the graph), which
// on this graph, whose edges mostly join nodes of the same label, beats
// the MLP.
func ExampleNewGCN() {
	ds := smallGraph()
	g := G.NewGraph()
	x, err := train.FeatureNode(g, tensor.Float64, ds.Features, ds.N(), ds.NumFeatures, "x")
	if err != nil {
		log.Fatal(err)
	}
	phase := layers.NewPhase()
	cfg := layers.DefaultGCNConfig(ds.NumFeatures, 2)
	cfg.Hidden = 32
	gcn, err := layers.NewGCN(g, ds.Graph, cfg, phase)
	if err != nil {
		log.Fatal(err)
	}
	task := &train.Task{Graph: g, X: x, Labels: ds.Labels, Train: ds.Split.Train, Val: ds.Split.Val, Classes: 2, Phase: phase}
	tc := train.DefaultConfig()
	tc.Epochs, tc.Adam.LR = 100, 0.01
	if _, err := train.Fit(gcn, task, tc); err != nil {
		log.Fatal(err)
	}
	pred, err := train.Predict(gcn, task, ds.Split.Test)
	if err != nil {
		log.Fatal(err)
	}
	r, c := gcn.Matrix().Dims()
	fmt.Printf("Ã: %d × %d\n", r, c)
	fmt.Println("test accuracy above 80%:", pred.Accuracy(ds.Labels) > 0.80)
	// Output:
	// Ã: 400 × 400
	// test accuracy above 80%: true
}

// Any declared kind is built by name, with the settings every kind takes:
// what the commands' -backbone, -hidden, -dtype and -seed do.
func ExampleLookupKind() {
	ds := smallGraph()
	k, err := layers.LookupKind("appnp")
	if err != nil {
		log.Fatal(err)
	}
	cfg, err := k.Configure(ds.NumFeatures, 2, layers.Options{Hidden: 32, Dtype: tensor.Float32, Seed: 7})
	if err != nil {
		log.Fatal(err)
	}
	m, err := k.Build(G.NewGraph(), ds.Graph, cfg, layers.NewPhase())
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s (%s): %T, %d parameters, runs in mini-batches: %v\n", k.Title(), k.Summary(), m, len(m.Learnables()), k.Blocks())
	// Output:
	// APPNP (an MLP, then K steps of personalised-PageRank propagation (Gasteiger et al.)): *layers.APPNP, 4 parameters, runs in mini-batches: true
}
