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
	seen := newNodeSet(g.n, len(seeds))
	front := make([]int32, 0, len(seeds))
	for k, s := range seeds {
		if s < 0 || s >= g.n {
			return nil, fmt.Errorf("graph: Ball: seed %d is node %d, want a node in [0, %d)", k, s, g.n)
		}
		if seen.add(int32(s)) {
			front = append(front, int32(s))
		}
	}
	for h := 0; h < hops && len(front) > 0 && seen.len() < g.n; h++ {
		var next []int32
		for _, i := range front {
			for _, j := range g.Neighbors(int(i)) {
				if seen.add(j) {
					next = append(next, j)
				}
			}
		}
		front = next
	}
	return seen.sorted(), nil
}

// nodeSet is a set of a graph's nodes: a map while it is small against
// the graph (so that a small ball costs its own size), a table of n flags
// once it is not (so that a ball of most of the graph costs no hashing).
type nodeSet struct {
	n     int
	small map[int32]struct{}
	big   []bool
	count int
}

func newNodeSet(n, hint int) *nodeSet {
	s := &nodeSet{n: n}
	if hint > n/32 {
		s.big = make([]bool, n)
	} else {
		s.small = make(map[int32]struct{}, hint)
	}
	return s
}

// add inserts i and reports whether it was new.
func (s *nodeSet) add(i int32) bool {
	if s.big != nil {
		if s.big[i] {
			return false
		}
		s.big[i] = true
		s.count++
		return true
	}
	if _, ok := s.small[i]; ok {
		return false
	}
	s.small[i] = struct{}{}
	s.count++
	if s.count > s.n/32 {
		s.big = make([]bool, s.n)
		for j := range s.small {
			s.big[j] = true
		}
		s.small = nil
	}
	return true
}

func (s *nodeSet) len() int { return s.count }

// sorted returns the members in ascending order.
func (s *nodeSet) sorted() []int {
	out := make([]int, 0, s.count)
	if s.big != nil {
		for i, ok := range s.big {
			if ok {
				out = append(out, i)
			}
		}
		return out
	}
	for i := range s.small {
		out = append(out, int(i))
	}
	slices.Sort(out)
	return out
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
	if len(nodes) == g.n {
		return gcnNormRows(g, nil, nil, opts), nil // every node: GCNNorm
	}
	for r, i := range nodes {
		if i < 0 || i >= g.n || (r > 0 && i <= nodes[r-1]) {
			return nil, fmt.Errorf("graph: GCNNormOf: nodes[%d] = %d, want nodes in [0, %d), strictly ascending", r, i, g.n)
		}
	}
	// local finds a node's row: a map for a small part of the graph, a
	// table of n entries for a large one.
	var local func(j int32) (int32, bool)
	if len(nodes) > g.n/32 {
		pos := make([]int32, g.n)
		for i := range pos {
			pos[i] = -1
		}
		for r, i := range nodes {
			pos[i] = int32(r)
		}
		local = func(j int32) (int32, bool) { return pos[j], pos[j] >= 0 }
	} else {
		pos := make(map[int32]int32, len(nodes))
		for r, i := range nodes {
			pos[int32(i)] = int32(r)
		}
		local = func(j int32) (int32, bool) { r, ok := pos[j]; return r, ok }
	}
	return gcnNormRows(g, nodes, local, opts), nil
}

// Grow returns g with k new nodes, numbered g.N() .. g.N()+k−1, and the
// given edges added (between new nodes, or new and old ones, or old
// ones); g itself is not changed. Edges already in g, repeated edges and
// self-loops are dropped, as FromEdges drops them (the result's Cleanup
// counts those of edges). It costs O(N + E) for g's N nodes and E edges:
// each row is copied and merged with its new neighbours. It returns an
// error for k < 0 or an edge naming a node outside the grown graph.
func (g *Graph) Grow(k int, edges [][2]int) (*Graph, error) {
	if k < 0 {
		return nil, fmt.Errorf("graph: Grow: k = %d new nodes, want ≥ 0", k)
	}
	n := g.n + k
	if n > 1<<31-1 {
		return nil, fmt.Errorf("graph: Grow: %d nodes exceeds the limit of %d nodes", n, 1<<31-1)
	}
	extra := make([][]int32, n)
	c := Cleanup{Input: len(edges)}
	for e, uv := range edges {
		u, v := uv[0], uv[1]
		if u < 0 || u >= n || v < 0 || v >= n {
			return nil, fmt.Errorf("graph: Grow: edge %d is (%d, %d), want both ends in [0, %d) (%d old nodes, %d new)", e, u, v, n, g.n, k)
		}
		if u == v {
			c.SelfLoops++
			continue
		}
		extra[u] = append(extra[u], int32(v))
		extra[v] = append(extra[v], int32(u))
	}
	indptr := make([]int, n+1)
	indices := make([]int32, 0, len(g.indices)+2*len(edges))
	dup := 0
	for i := 0; i < n; i++ {
		var old []int32
		if i < g.n {
			old = g.Neighbors(i)
		}
		add := extra[i]
		slices.Sort(add)
		a, b := 0, 0
		last := int32(-1)
		for a < len(old) || b < len(add) {
			var v int32
			fromAdd := b < len(add) && (a >= len(old) || add[b] < old[a])
			if fromAdd {
				v = add[b]
				b++
			} else {
				v = old[a]
				a++
			}
			if v == last {
				if fromAdd {
					dup++
				}
				continue
			}
			indices = append(indices, v)
			last = v
		}
		indptr[i+1] = len(indices)
	}
	c.Duplicates = dup / 2
	return &Graph{n: n, indptr: indptr, indices: indices, cleanup: c}, nil
}

// gcnNormRows builds the rows nodes (nil: every node) of GCNNorm(g, opts)
// restricted to those columns, local giving a node's column (nil: the
// node itself). opts is valid.
func gcnNormRows(g *Graph, nodes []int, local func(j int32) (int32, bool), opts NormOptions) *Matrix {
	w := opts.SelfLoopWeight
	m := len(nodes)
	if nodes == nil {
		m = g.n
	}
	node := func(r int) int {
		if nodes == nil {
			return r
		}
		return nodes[r]
	}
	invs := make([]float64, m)
	for r := range invs {
		d := float64(g.Degree(node(r)))
		if opts.AddSelfLoops {
			d += w
		}
		if d > 0 {
			invs[r] = 1 / math.Sqrt(d)
		}
	}
	indptr := make([]int, m+1)
	size := len(g.indices)
	if nodes != nil {
		size = 0
	}
	if opts.AddSelfLoops {
		size += m
	}
	indices := make([]int32, 0, size)
	val := make([]float64, 0, size)
	for r := 0; r < m; r++ {
		i := node(r)
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
			if local == nil {
				put(j, 1)
			} else if c, ok := local(j); ok {
				put(c, 1)
			}
		}
		if !placed {
			put(int32(r), w)
		}
		indptr[r+1] = len(indices)
	}
	return newMatrix(m, m, indptr, indices, val, true)
}
