package modelio_test

import (
	"bytes"
	"fmt"

	"github.com/fairmp/fairmp/layers"
	"github.com/fairmp/fairmp/layers/internal/problem"
	"github.com/fairmp/fairmp/layers/modelio"
	"github.com/fairmp/fairmp/layers/train"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Train a GCN, save it, load it into a new gorgonia graph and check that
// the predictions are unchanged.
func ExampleLoad() {
	x, y, gr, trainIdx, val, _ := problem.Toy(300, 4, 2)
	newTask := func() *train.Task {
		g := G.NewGraph()
		xn, _ := train.FeatureNode(g, tensor.Float32, x, 300, 4, "x")
		return &train.Task{Graph: g, X: xn, Labels: y, Train: trainIdx, Val: val, Classes: 2, Phase: layers.NewPhase()}
	}
	task := newTask()
	cfg := layers.DefaultGCNConfig(4, 2)
	cfg.Hidden, cfg.Dtype = 8, tensor.Float32
	gcn, err := layers.NewGCN(task.Graph, gr, cfg, task.Phase)
	if err != nil {
		panic(err)
	}
	tc := train.DefaultConfig()
	tc.Epochs, tc.Adam.LR = 50, 0.01
	if _, err := train.Fit(gcn, task, tc); err != nil {
		panic(err)
	}
	var buf bytes.Buffer
	if err := modelio.Save(&buf, gcn); err != nil {
		panic(err)
	}
	task2 := newTask()
	loaded, err := modelio.Load(&buf, task2.Graph, modelio.Env{Graph: gr, Phase: task2.Phase})
	if err != nil {
		panic(err)
	}
	before, _ := train.Predict(gcn, task, nil)
	after, _ := train.Predict(loaded, task2, nil)
	same := true
	for i := range before.Probs {
		same = same && before.Probs[i] == after.Probs[i]
	}
	fmt.Printf("%T, identical predictions: %v\n", loaded, same)
	// Output:
	// *layers.GCN, identical predictions: true
}
