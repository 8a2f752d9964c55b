package fmp_test

import (
	"fmt"

	"github.com/fairmp/fairmp/fmp"
	"github.com/fairmp/fairmp/graph"
	"gorgonia.org/tensor"
)

// Auditing a backbone's predictions: one forward pass shows how much the
// sensitive attribute moved each prediction and each group, without
// retraining.
func ExampleExplain() {
	// Two communities of 4 nodes joined by one edge; community = group.
	g, _ := graph.FromEdges(8, [][2]int{
		{0, 1}, {1, 2}, {2, 3}, {3, 0}, {4, 5}, {5, 6}, {6, 7}, {7, 4}, {3, 4},
	})
	sens := []int{0, 0, 0, 0, 1, 1, 1, 1}
	// A backbone's logits (class 0, class 1): group 1 leans to class 1.
	logits := tensor.New(tensor.WithShape(8, 2), tensor.WithBacking([]float64{
		0.5, -0.5, 0.8, -0.2, 0.1, 0.0, 0.3, -0.4,
		-0.6, 0.7, -0.2, 0.9, 0.0, 0.4, -0.8, 0.2,
	}))
	cfg := fmp.DefaultConfig() // λs = 1, λf = 2, K = 10, τ = 0.5
	rep, err := fmp.Explain(logits, graph.NormalizedAdjacency(g), sens, cfg)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("gap in P(class 1) between groups: %.3f without the sensitive steps, %.3f with\n",
		rep.MaxGapBaseline[1], rep.MaxGap[1])
	for grp, shift := range rep.GroupShift {
		fmt.Printf("group %d: mean P(class 1) moved by %+.3f\n", grp, shift[1])
	}
	fmt.Printf("node 4 logits moved by %+.3f, %+.3f\n", rep.NodeInfluence(4)[0], rep.NodeInfluence(4)[1])
	fmt.Printf("largest logit change: %.3f; final dual u = %+.2f\n", rep.MaxAbsInfluence, rep.Dual)
	// Output:
	// gap in P(class 1) between groups: 0.347 without the sensitive steps, 0.000 with
	// group 0: mean P(class 1) moved by +0.178
	// group 1: mean P(class 1) moved by -0.169
	// node 4 logits moved by +0.289, -0.289
	// largest logit change: 0.409; final dual u = [-1.72 +1.72]
}
