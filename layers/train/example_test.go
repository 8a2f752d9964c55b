package train_test

import (
	"context"
	"fmt"

	"github.com/fairmp/fairmp/internal/problem"
	"github.com/fairmp/fairmp/layers"
	"github.com/fairmp/fairmp/layers/train"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Train a 2-layer MLP on a small generated problem and report the test
// accuracy of the best-validation epoch.
func ExampleFit() {
	x, y, _, trainIdx, val, test := problem.Toy(400, 8, 1)
	g := G.NewGraph()
	xn, err := train.FeatureNode(g, tensor.Float64, x, 400, 8, "x")
	if err != nil {
		panic(err)
	}
	phase := layers.NewPhase()
	cfg := layers.DefaultMLPConfig(8, 2)
	cfg.Hidden = 16
	mlp, err := layers.NewMLP(g, nil, cfg, phase)
	if err != nil {
		panic(err)
	}
	task := &train.Task{Graph: g, X: xn, Labels: y, Train: trainIdx, Val: val, Classes: 2, Phase: phase}
	tc := train.DefaultConfig()
	tc.Epochs, tc.Adam.LR = 200, 0.01
	res, err := train.Fit(context.Background(), mlp, task, tc)
	if err != nil {
		panic(err)
	}
	pred, err := train.Predict(mlp, task, test)
	if err != nil {
		panic(err)
	}
	fmt.Printf("training loss fell: %v\n", res.Last.CE < res.History[0].CE/2)
	fmt.Printf("test accuracy above 0.9: %v\n", pred.Accuracy(y) > 0.9)
	// Output:
	// training loss fell: true
	// test accuracy above 0.9: true
}
