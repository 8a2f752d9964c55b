package layers_test

import (
	"context"
	"fmt"
	"log"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/fairmp/fairmp/graph/datasets"
	"github.com/fairmp/fairmp/graph/features"
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
	if _, err := train.Fit(context.Background(), mlp, task, tc); err != nil {
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
	if _, err := train.Fit(context.Background(), gcn, task, tc); err != nil {
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

// A GCN trained on one graph scores another with the same feature
// schema: LayerwiseLogits runs the model's one declaration (Compute)
// over any graph's propagation matrix, as the kind declares it, in plain
// Go. Here the second graph is a larger draw of the same generator.
func ExampleLayerwiseLogits() {
	ds := smallGraph()
	g := G.NewGraph()
	x, err := train.FeatureNode(g, tensor.Float64, ds.Features, ds.N(), ds.NumFeatures, "x")
	if err != nil {
		log.Fatal(err)
	}
	phase := layers.NewPhase()
	cfg := layers.DefaultGCNConfig(ds.NumFeatures, 2)
	gcn, err := layers.NewGCN(g, ds.Graph, cfg, phase)
	if err != nil {
		log.Fatal(err)
	}
	task := &train.Task{Graph: g, X: x, Labels: ds.Labels, Train: ds.Split.Train, Val: ds.Split.Val, Classes: 2, Phase: phase}
	tc := train.DefaultConfig()
	tc.Epochs, tc.Adam.LR = 100, 0.01
	if _, err := train.Fit(context.Background(), gcn, task, tc); err != nil {
		log.Fatal(err)
	}

	// Another graph: 1,000 nodes drawn by the same generator.
	c := datasets.DefaultSyntheticConfig()
	c.N = 1000
	other, err := datasets.Synthetic(c)
	if err != nil {
		log.Fatal(err)
	}
	k, err := layers.KindOfConfig(cfg)
	if err != nil {
		log.Fatal(err)
	}
	prop, _, err := k.Propagation(cfg)
	if err != nil {
		log.Fatal(err)
	}
	adj, err := prop.Matrix(other.Graph)
	if err != nil {
		log.Fatal(err)
	}
	xs, err := features.NewDense(other.Features, other.N(), other.NumFeatures)
	if err != nil {
		log.Fatal(err)
	}
	z, err := layers.LayerwiseLogits(gcn, adj, xs)
	if err != nil {
		log.Fatal(err)
	}
	right := 0
	for i := 0; i < other.N(); i++ {
		if (z.Data().([]float64)[2*i+1] > z.Data().([]float64)[2*i]) == (other.Labels[i] == 1) {
			right++
		}
	}
	hops, _ := layers.Hops(gcn)
	fmt.Println("logits:", z.Shape(), "hops:", hops)
	fmt.Println("accuracy on the other graph above 70%:", float64(right)/float64(other.N()) > 0.70)
	// Output:
	// logits: (1000, 2) hops: 2
	// accuracy on the other graph above 70%: true
}
