package layers_test

import (
	"fmt"
	"log"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/fairmp/fairmp/graph"
	"github.com/fairmp/fairmp/layers"
)

// A two-head GATConv layer on a path 0–1–2–3: each node attends to its
// neighbours and itself, and each head's attention over a node's in-edges
// sums to 1.
func ExampleGATConv() {
	gr, err := graph.FromEdges(4, [][2]int{{0, 1}, {1, 2}, {2, 3}})
	if err != nil {
		log.Fatal(err)
	}
	g := G.NewGraph()
	x := G.NewMatrix(g, tensor.Float64, G.WithShape(4, 2), G.WithName("x"),
		G.WithValue(tensor.New(tensor.WithShape(4, 2), tensor.WithBacking([]float64{1, 0, 0, 1, 1, 1, -1, 2}))))
	cfg := layers.DefaultGATConvConfig(2, 3) // 2 features in, 3 out per head
	cfg.Heads = 2
	l, err := layers.NewGATConv(g, gr, cfg, nil)
	if err != nil {
		log.Fatal(err)
	}
	y, err := l.Forward(x)
	if err != nil {
		log.Fatal(err)
	}
	var alpha G.Value
	G.Read(l.Attention(), &alpha)
	m := G.NewTapeMachine(g)
	defer m.Close()
	if err := m.RunAll(); err != nil {
		log.Fatal(err)
	}
	fmt.Println("output shape:", y.Shape())
	a := alpha.Data().([]float64)
	for p, e := range l.AttentionEdges() {
		if e[1] == 1 {
			fmt.Printf("α(%d→1) = %.3f (head 0), %.3f (head 1)\n", e[0], a[2*p], a[2*p+1])
		}
	}
	// Output:
	// output shape: (4, 6)
	// α(0→1) = 0.138 (head 0), 0.378 (head 1)
	// α(1→1) = 0.522 (head 0), 0.323 (head 1)
	// α(2→1) = 0.341 (head 0), 0.299 (head 1)
}

// The two-layer GAT node classifier: 4 heads × 16 hidden features,
// ELU, then one head producing the class logits.
func ExampleNewGAT() {
	gr, err := graph.FromEdges(5, [][2]int{{0, 1}, {1, 2}, {2, 0}, {3, 4}})
	if err != nil {
		log.Fatal(err)
	}
	g := G.NewGraph()
	x := G.NewMatrix(g, tensor.Float32, G.WithShape(5, 3), G.WithName("x"),
		G.WithValue(tensor.New(tensor.WithShape(5, 3), tensor.WithBacking([]float32{
			1, 0, 0, 0, 1, 0, 0, 0, 1, 1, 1, 0, 0, 1, 1}))))
	cfg := layers.DefaultGATConfig(3, 2) // 3 features, 2 classes
	cfg.Dtype = tensor.Float32
	model, err := layers.NewGAT(g, gr, cfg, nil) // nil phase: evaluation mode
	if err != nil {
		log.Fatal(err)
	}
	logits, err := model.Forward(x)
	if err != nil {
		log.Fatal(err)
	}
	m := G.NewTapeMachine(g)
	defer m.Close()
	if err := m.RunAll(); err != nil {
		log.Fatal(err)
	}
	fmt.Println("learnables:", len(model.Learnables()))
	fmt.Println("logits shape:", logits.Shape())
	v := logits.Value().Data().([]float32)
	fmt.Printf("node 0 logits: %.3f %.3f\n", v[0], v[1])
	// Output:
	// learnables: 8
	// logits shape: (5, 2)
	// node 0 logits: -0.008 0.252
}
