package modelio_test

import (
	"bytes"
	"context"
	"fmt"
	"log"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/fairmp/fairmp/fmp/modelio"
	"github.com/fairmp/fairmp/graph/datasets"
	"github.com/fairmp/fairmp/layers"
	"github.com/fairmp/fairmp/layers/train"
)

// Train a GCN, save it with its feature schema, read the file's header,
// load the model into a new gorgonia graph and check that the
// predictions are unchanged.
func ExampleLoad() {
	sc := datasets.DefaultSyntheticConfig()
	sc.N = 300
	ds, err := datasets.Synthetic(sc)
	if err != nil {
		log.Fatal(err)
	}
	newTask := func() *train.Task {
		g := G.NewGraph()
		x, err := train.FeatureNode(g, tensor.Float32, ds.Features, ds.N(), ds.NumFeatures, "x")
		if err != nil {
			log.Fatal(err)
		}
		return &train.Task{Graph: g, X: x, Labels: ds.Labels, Train: ds.Split.Train, Val: ds.Split.Val, Classes: 2, Phase: layers.NewPhase()}
	}
	task := newTask()
	cfg := layers.DefaultGCNConfig(ds.NumFeatures, 2)
	cfg.Hidden, cfg.Dtype = 8, tensor.Float32
	gcn, err := layers.NewGCN(task.Graph, ds.Graph, cfg, task.Phase)
	if err != nil {
		log.Fatal(err)
	}
	tc := train.DefaultConfig()
	tc.Epochs, tc.Adam.LR = 50, 0.01
	if _, err := train.Fit(context.Background(), gcn, task, tc); err != nil {
		log.Fatal(err)
	}
	var file bytes.Buffer
	schema := ds.Schema()
	if err := modelio.Save(&file, gcn, modelio.SaveConfig{Features: &schema}); err != nil {
		log.Fatal(err)
	}

	h, err := modelio.ReadHeader(bytes.NewReader(file.Bytes())) // the header alone
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s, %v, %d features (%s, ...), a graph of %d nodes\n", h.Kind, h.Dtype, len(h.Features.Names), h.Features.Names[0], h.Graph.Nodes)

	task2 := newTask()
	loaded, err := modelio.Load(&file, task2.Graph, modelio.Env{Graph: ds.Graph, Phase: task2.Phase})
	if err != nil {
		log.Fatal(err)
	}
	before, err := train.Predict(gcn, task, nil)
	if err != nil {
		log.Fatal(err)
	}
	after, err := train.Predict(loaded, task2, nil)
	if err != nil {
		log.Fatal(err)
	}
	same := true
	for i := range before.Probs {
		same = same && before.Probs[i] == after.Probs[i]
	}
	fmt.Printf("%T, identical predictions: %v\n", loaded, same)
	// Output:
	// gcn, float32, 16 features (x0, ...), a graph of 300 nodes
	// *layers.GCN, identical predictions: true
}
