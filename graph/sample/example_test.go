package sample_test

import (
	"fmt"

	"github.com/fairmp/fairmp/graph"
	"github.com/fairmp/fairmp/graph/sample"
)

func ExampleSampler_Sample() {
	// Path 0-1-2-3-4 with GCN normalisation; a 2-layer model needs, for
	// target 2, its neighbours (hop 1) and theirs (hop 2).
	g, _ := graph.FromEdges(5, [][2]int{{0, 1}, {1, 2}, {2, 3}, {3, 4}})
	a, _ := graph.GCNNorm(g, graph.DefaultNormOptions())

	cfg := sample.DefaultConfig()
	cfg.Fanouts = []int{-1, 1} // every neighbour of the target, then one each
	s, err := sample.NewSampler(a, cfg)
	if err != nil {
		fmt.Println(err)
		return
	}
	b, _ := s.Sample([]int{2}, 7)
	fmt.Println("nodes:", b.Nodes, "sizes:", b.Sizes)
	for l, blk := range b.Blocks {
		r, c := blk.Dims()
		fmt.Printf("Blocks[%d] %d × %d:\n", l, r, c)
		d := blk.Dense()
		for i := 0; i < r; i++ {
			fmt.Printf("  %.3f\n", d[i*c:(i+1)*c])
		}
	}
	// Node 1 drew the target 2 and node 3 drew node 4 (one of their two
	// neighbours each), so those entries are a's rescaled by 2/1: 2·(1/3)
	// and 2·(1/√6). Blocks[1], the output layer, holds row 2 of a exactly.

	// Output:
	// nodes: [2 1 3 4] sizes: [1 3 4]
	// Blocks[0] 3 × 4:
	//   [0.333 0.333 0.333 0.000]
	//   [0.667 0.333 0.000 0.000]
	//   [0.000 0.000 0.333 0.816]
	// Blocks[1] 1 × 3:
	//   [0.333 0.333 0.333]
}
