package layers_test

import (
	"bytes"
	"fmt"
	"math/rand"

	"github.com/fairmp/fairmp/graph"
	"github.com/fairmp/fairmp/layers"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// toyProblem returns n nodes with d features, a label given by the sign
// of the first two features' sum, a graph joining mostly same-label
// nodes, and a 50/25/25 split.
func toyProblem(n, d int, seed int64) (x []float64, y []int, gr *graph.Graph, train, val, test []int) {
	rng := rand.New(rand.NewSource(seed))
	x = make([]float64, n*d)
	y = make([]int, n)
	for i := 0; i < n; i++ {
		for j := 0; j < d; j++ {
			x[i*d+j] = 2*rng.Float64() - 1
		}
		if x[i*d]+x[i*d+1] > 0 {
			y[i] = 1
		}
	}
	var edges [][2]int
	for len(edges) < 4*n {
		i, j := rng.Intn(n), rng.Intn(n)
		if y[i] == y[j] || rng.Float64() < 0.2 {
			edges = append(edges, [2]int{i, j})
		}
	}
	gr, _ = graph.FromEdges(n, edges)
	perm := rng.Perm(n)
	return x, y, gr, perm[:n/2], perm[n/2 : 3*n/4], perm[3*n/4:]
}

// Train a 2-layer MLP on a small generated problem and report the test
// accuracy of the best-validation epoch.
func ExampleTrain() {
	x, y, _, train, val, test := toyProblem(400, 8, 1)
	g := G.NewGraph()
	xn, err := layers.FeatureNode(g, tensor.Float64, x, 400, 8, "x")
	if err != nil {
		panic(err)
	}
	phase := layers.NewPhase()
	cfg := layers.DefaultMLPConfig(8, 2)
	cfg.Hidden = 16
	mlp, err := layers.NewMLP(g, cfg, phase)
	if err != nil {
		panic(err)
	}
	task := &layers.Task{Graph: g, X: xn, Labels: y, Train: train, Val: val, Classes: 2, Phase: phase}
	tc := layers.DefaultTrainConfig()
	tc.Epochs, tc.Adam.LR = 200, 0.01
	res, err := layers.Train(mlp, task, tc)
	if err != nil {
		panic(err)
	}
	pred, err := layers.Predict(mlp, task, test)
	if err != nil {
		panic(err)
	}
	fmt.Printf("training loss fell: %v\n", res.Last.CE < res.History[0].CE/2)
	fmt.Printf("test accuracy: %.2f\n", pred.Accuracy(y))
	// Output:
	// training loss fell: true
	// test accuracy: 0.97
}

// Train a GCN, save it, load it into a new gorgonia graph and check that
// the predictions are unchanged.
func ExampleLoad() {
	x, y, gr, train, val, _ := toyProblem(300, 4, 2)
	newTask := func() *layers.Task {
		g := G.NewGraph()
		xn, _ := layers.FeatureNode(g, tensor.Float32, x, 300, 4, "x")
		return &layers.Task{Graph: g, X: xn, Labels: y, Train: train, Val: val, Classes: 2, Phase: layers.NewPhase()}
	}
	task := newTask()
	cfg := layers.DefaultGCNConfig(4, 2)
	cfg.Hidden, cfg.Dtype = 8, tensor.Float32
	gcn, err := layers.NewGCN(task.Graph, cfg, gr, task.Phase)
	if err != nil {
		panic(err)
	}
	tc := layers.DefaultTrainConfig()
	tc.Epochs, tc.Adam.LR = 50, 0.01
	if _, err := layers.Train(gcn, task, tc); err != nil {
		panic(err)
	}
	var buf bytes.Buffer
	if err := layers.Save(&buf, gcn); err != nil {
		panic(err)
	}
	task2 := newTask()
	loaded, err := layers.Load(&buf, task2.Graph, layers.BuildEnv{Graph: gr, Phase: task2.Phase})
	if err != nil {
		panic(err)
	}
	before, _ := layers.Predict(gcn, task, nil)
	after, _ := layers.Predict(loaded, task2, nil)
	same := true
	for i := range before.Probs {
		same = same && before.Probs[i] == after.Probs[i]
	}
	fmt.Printf("%T, identical predictions: %v\n", loaded, same)
	// Output:
	// *layers.GCN, identical predictions: true
}

// Dropout is the identity in evaluation mode and zeroes about p of the
// elements, scaling the rest by 1/(1−p), in training mode.
func ExampleDropout() {
	g := G.NewGraph()
	ones := tensor.New(tensor.WithShape(2, 4), tensor.WithBacking([]float64{1, 1, 1, 1, 1, 1, 1, 1}))
	x := G.NewMatrix(g, tensor.Float64, G.WithShape(2, 4), G.WithName("x"), G.WithValue(ones))
	phase := layers.NewPhase()
	y, err := layers.Dropout(x, 0.5, 42, phase)
	if err != nil {
		panic(err)
	}
	var v G.Value
	G.Read(y, &v)
	m := G.NewTapeMachine(g)
	defer m.Close()
	for _, training := range []bool{false, true} {
		phase.SetTraining(training)
		if err := m.RunAll(); err != nil {
			panic(err)
		}
		fmt.Println(training, v.Data())
		m.Reset()
	}
	// Output:
	// false [1 1 1 1 1 1 1 1]
	// true [2 2 0 0 2 0 0 2]
}
