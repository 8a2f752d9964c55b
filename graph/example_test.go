package graph_test

import (
	"fmt"

	"github.com/fairmp/fairmp/graph"
)

func ExampleFromEdges() {
	// A duplicate (1, 0), a self-loop (2, 2); node 3 has no edge.
	g, err := graph.FromEdges(4, [][2]int{{0, 1}, {1, 0}, {1, 2}, {2, 2}})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("edges:", g.NumEdges(), g.Edges())
	fmt.Println("degrees:", g.Degrees(), "isolated:", g.Isolated())
	fmt.Printf("cleanup: %+v\n", g.Cleanup())

	_, err = graph.FromEdges(4, [][2]int{{0, 1}, {3, 4}})
	fmt.Println(err)
	// Output:
	// edges: 2 [[0 1] [1 2]]
	// degrees: [1 2 1 0] isolated: 1
	// cleanup: {Input:4 SelfLoops:1 Duplicates:1}
	// graph: FromEdges: edge 1 is (3, 4), want both ends in [0, 4)
}

func ExampleGraph_Homophily() {
	// A path 0-1-2-3; node 3's group is unknown (-1).
	g, _ := graph.FromEdges(4, [][2]int{{0, 1}, {1, 2}, {2, 3}})
	h, _ := g.Homophily([]int{0, 0, 1, -1})
	fmt.Printf("%.3f\n", h) // 0-1 same, 1-2 differ, 2-3 not counted
	// Output: 0.500
}

func ExampleNormalizedAdjacency() {
	// Path 0-1-2 and an isolated node 3.
	g, _ := graph.FromEdges(4, [][2]int{{0, 1}, {1, 2}})
	a := graph.NormalizedAdjacency(g)
	d := a.Dense()
	for i := 0; i < 4; i++ {
		fmt.Printf("%.3f\n", d[i*4:(i+1)*4])
	}
	// Propagate two feature columns: y = Ã x.
	x := []float64{1, 0, 0, 0, 0, 0, 0, 1}
	y := make([]float64, 8)
	a.MulDense64(y, x, 2)
	fmt.Printf("%.3f\n", y)
	// Output:
	// [0.500 0.408 0.000 0.000]
	// [0.408 0.333 0.408 0.000]
	// [0.000 0.408 0.500 0.000]
	// [0.000 0.000 0.000 1.000]
	// [0.500 0.000 0.408 0.000 0.000 0.000 0.000 1.000]
}

func ExampleGCNNorm() {
	g, _ := graph.FromEdges(2, [][2]int{{0, 1}})
	opts := graph.DefaultNormOptions()
	opts.SelfLoopWeight = 2 // PyG's improved GCN
	a, _ := graph.GCNNorm(g, opts)
	fmt.Printf("%.3f\n", a.Dense())
	// Output: [0.667 0.333 0.333 0.667]
}
