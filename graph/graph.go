package graph

import (
	"fmt"
	"sort"
)

// Graph is an undirected simple graph on nodes 0..N()-1 stored in compressed
// sparse row (CSR) form: the neighbours of node i are
// indices[indptr[i]:indptr[i+1]], sorted ascending. Every undirected edge
// {u, v} is stored twice (u→v and v→u). A Graph never holds self-loops or
// duplicate edges. It is immutable after construction and safe for
// concurrent use.
type Graph struct {
	n       int
	indptr  []int
	indices []int32
	cleanup Cleanup
}

// Cleanup reports what FromEdges removed from its input.
type Cleanup struct {
	// Input is the number of edges given to FromEdges.
	Input int
	// SelfLoops is the number of input edges (i, i) that were dropped.
	SelfLoops int
	// Duplicates is the number of input edges dropped because the same
	// undirected edge was already present (in either direction).
	Duplicates int
}

// FromEdges builds an undirected graph on n nodes from a list of edges.
// Edge direction is ignored (each edge is symmetrised), duplicate edges and
// self-loops are removed; Cleanup reports how many. It returns an error if
// n <= 0 or if an edge names a node outside [0, n), naming the offending
// edge by its index in edges.
func FromEdges(n int, edges [][2]int) (*Graph, error) {
	if n <= 0 {
		return nil, fmt.Errorf("graph: FromEdges: n = %d, want n > 0", n)
	}
	if n > 1<<31-1 {
		return nil, fmt.Errorf("graph: FromEdges: n = %d exceeds the limit of %d nodes", n, 1<<31-1)
	}
	c := Cleanup{Input: len(edges)}
	deg := make([]int, n+1)
	for k, e := range edges {
		u, v := e[0], e[1]
		if u < 0 || u >= n || v < 0 || v >= n {
			return nil, fmt.Errorf("graph: FromEdges: edge %d is (%d, %d), want both ends in [0, %d)", k, u, v, n)
		}
		if u == v {
			c.SelfLoops++
			continue
		}
		deg[u+1]++
		deg[v+1]++
	}
	for i := 0; i < n; i++ {
		deg[i+1] += deg[i]
	}
	raw := make([]int32, deg[n])
	fill := make([]int, n)
	copy(fill, deg[:n])
	for _, e := range edges {
		u, v := e[0], e[1]
		if u == v {
			continue
		}
		raw[fill[u]] = int32(v)
		fill[u]++
		raw[fill[v]] = int32(u)
		fill[v]++
	}
	// Sort and deduplicate each row in place, compacting as we go.
	indptr := make([]int, n+1)
	w := 0
	removedDirected := 0
	for i := 0; i < n; i++ {
		row := raw[deg[i]:deg[i+1]]
		sort.Slice(row, func(a, b int) bool { return row[a] < row[b] })
		start := w
		for k, v := range row {
			if k > 0 && v == row[k-1] {
				removedDirected++
				continue
			}
			raw[w] = v
			w++
		}
		_ = start
		indptr[i+1] = w
	}
	c.Duplicates = removedDirected / 2
	indices := make([]int32, w)
	copy(indices, raw[:w])
	return &Graph{n: n, indptr: indptr, indices: indices, cleanup: c}, nil
}

// N returns the number of nodes.
func (g *Graph) N() int { return g.n }

// NumEdges returns the number of undirected edges (each counted once).
func (g *Graph) NumEdges() int { return len(g.indices) / 2 }

// Cleanup returns what FromEdges removed from its input.
func (g *Graph) Cleanup() Cleanup { return g.cleanup }

// Degree returns the number of neighbours of node i. It panics if i is out
// of range (a programmer error).
func (g *Graph) Degree(i int) int { return g.indptr[i+1] - g.indptr[i] }

// Degrees returns a new slice holding every node's degree.
func (g *Graph) Degrees() []int {
	d := make([]int, g.n)
	for i := range d {
		d[i] = g.indptr[i+1] - g.indptr[i]
	}
	return d
}

// Neighbors returns the sorted neighbours of node i. The returned slice
// aliases the graph's storage and must not be modified. It panics if i is
// out of range (a programmer error).
func (g *Graph) Neighbors(i int) []int32 { return g.indices[g.indptr[i]:g.indptr[i+1]] }

// Isolated returns the number of nodes with no neighbour.
func (g *Graph) Isolated() int {
	k := 0
	for i := 0; i < g.n; i++ {
		if g.indptr[i+1] == g.indptr[i] {
			k++
		}
	}
	return k
}

// Edges returns every undirected edge once, as (u, v) with u < v, in
// ascending order.
func (g *Graph) Edges() [][2]int {
	out := make([][2]int, 0, g.NumEdges())
	for u := 0; u < g.n; u++ {
		for _, v := range g.Neighbors(u) {
			if int(v) > u {
				out = append(out, [2]int{u, int(v)})
			}
		}
	}
	return out
}

// Homophily returns the edge homophily of a node labelling: the fraction
// of undirected edges whose two ends carry the same label, over the edges
// whose two ends both have a known label (label >= 0; negative labels mean
// unknown). It is the statistic the FMP paper reports as label homophily
// (for class labels) and sensitive homophily (for the sensitive
// attribute). It returns an error if len(labels) != N() or if no edge has
// two known ends.
func (g *Graph) Homophily(labels []int) (float64, error) {
	if len(labels) != g.n {
		return 0, fmt.Errorf("graph: Homophily: %d labels for %d nodes", len(labels), g.n)
	}
	same, total := 0, 0
	for u := 0; u < g.n; u++ {
		if labels[u] < 0 {
			continue
		}
		for _, v := range g.Neighbors(u) {
			if int(v) <= u || labels[v] < 0 {
				continue
			}
			total++
			if labels[u] == labels[v] {
				same++
			}
		}
	}
	if total == 0 {
		return 0, fmt.Errorf("graph: Homophily: no edge has two labelled ends")
	}
	return float64(same) / float64(total), nil
}

// Fingerprint returns a 64-bit FNV-1a hash of the graph's structure: the
// node count and every node's sorted neighbour list. Two graphs with the
// same fingerprint are, barring a hash collision, the same graph with the
// same node numbering; layers/modelio records it in model files.
func (g *Graph) Fingerprint() uint64 {
	const prime = 1099511628211
	h := uint64(14695981039346656037)
	mix := func(v uint64) {
		for k := 0; k < 8; k++ {
			h ^= v & 0xff
			h *= prime
			v >>= 8
		}
	}
	mix(uint64(g.n))
	for i := 0; i < g.n; i++ {
		nb := g.Neighbors(i)
		mix(uint64(len(nb)))
		for _, j := range nb {
			mix(uint64(j))
		}
	}
	return h
}
