package graph

import (
	"fmt"
	"math"
	"slices"
)

// Ball returns the nodes within hops edges of the seeds (the seeds
// included), in ascending order: the receptive field of the seeds in a
// model that propagates hops times. The work is proportional to the
// edges of the nodes reached, not to the graph. It returns an error for a
// seed out of range or hops < 0.
func (g *Graph) Ball(seeds []int, hops int) ([]int, error) {
	if hops < 0 {
		return nil, fmt.Errorf("graph: Ball: hops = %d, want ≥ 0", hops)
	}
	seen := make(map[int32]struct{}, len(seeds))
	front := make([]int32, 0, len(seeds))
	for k, s := range seeds {
		if s < 0 || s >= g.n {
			return nil, fmt.Errorf("graph: Ball: seed %d is node %d, want a node in [0, %d)", k, s, g.n)
		}
		if _, ok := seen[int32(s)]; !ok {
			seen[int32(s)] = struct{}{}
			front = append(front, int32(s))
		}
	}
	for h := 0; h < hops && len(front) > 0 && len(seen) < g.n; h++ {
		var next []int32
		for _, i := range front {
			for _, j := range g.Neighbors(int(i)) {
				if _, ok := seen[j]; !ok {
					seen[j] = struct{}{}
					next = append(next, j)
				}
			}
		}
		front = next
	}
	out := make([]int, 0, len(seen))
	for i := range seen {
		out = append(out, int(i))
	}
	slices.Sort(out)
	return out, nil
}

// GCNNormOf returns the rows and columns nodes (ascending, no repeats) of
// GCNNorm(g, opts), without building the whole matrix: row r of the
// result is row nodes[r] of GCNNorm(g, opts) restricted to the columns in
// nodes, its values computed from g's degrees exactly as GCNNorm computes
// them (the same arithmetic, the same order: equal bit for bit). The work
// is proportional to the edges of nodes. With nodes a Ball of radius
// hops + h around some seeds, a model of h hops computes on it the seeds'
// outputs exactly: every node within h − 1 hops of them keeps all its
// neighbours. It returns an error for nodes out of range, out of order or
// repeated, and for the self-loop weight GCNNorm refuses.
func GCNNormOf(g *Graph, nodes []int, opts NormOptions) (*Matrix, error) {
	w := opts.SelfLoopWeight
	if opts.AddSelfLoops && (!(w > 0) || math.IsInf(w, 0)) {
		return nil, fmt.Errorf("graph: GCNNormOf: SelfLoopWeight = %v, want a finite value > 0", w)
	}
	if len(nodes) == 0 {
		return nil, fmt.Errorf("graph: GCNNormOf: no nodes")
	}
	local := make(map[int32]int32, len(nodes))
	for r, i := range nodes {
		if i < 0 || i >= g.n || (r > 0 && i <= nodes[r-1]) {
			return nil, fmt.Errorf("graph: GCNNormOf: nodes[%d] = %d, want nodes in [0, %d), strictly ascending", r, i, g.n)
		}
		local[int32(i)] = int32(r)
	}
	inv := func(i int) float64 {
		d := float64(g.Degree(i))
		if opts.AddSelfLoops {
			d += w
		}
		if d > 0 {
			return 1 / math.Sqrt(d)
		}
		return 0
	}
	invs := make([]float64, len(nodes))
	for r, i := range nodes {
		invs[r] = inv(i)
	}
	indptr := make([]int, len(nodes)+1)
	var indices []int32
	var val []float64
	for r, i := range nodes {
		placed := !opts.AddSelfLoops
		put := func(c int32, a float64) {
			indices = append(indices, c)
			if opts.Normalize {
				a *= invs[r] * invs[c]
			}
			val = append(val, a)
		}
		for _, j := range g.Neighbors(i) {
			if !placed && int(j) > i {
				put(int32(r), w)
				placed = true
			}
			if c, ok := local[j]; ok {
				put(c, 1)
			}
		}
		if !placed {
			put(int32(r), w)
		}
		indptr[r+1] = len(indices)
	}
	return newMatrix(len(nodes), len(nodes), indptr, indices, val, true), nil
}
