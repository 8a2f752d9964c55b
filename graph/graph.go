package graph

import (
	"fmt"
	"runtime"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
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

// Cleanup reports what FromEdges removed from its input (FromCSR removes
// nothing: its Cleanup holds only Input).
type Cleanup struct {
	// Input is the number of edges given to FromEdges (for FromCSR, the
	// number of undirected edges, len(indices)/2).
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
		for k, v := range row {
			if k > 0 && v == row[k-1] {
				removedDirected++
				continue
			}
			raw[w] = v
			w++
		}
		indptr[i+1] = w
	}
	c.Duplicates = removedDirected / 2
	indices := make([]int32, w)
	copy(indices, raw[:w])
	return &Graph{n: n, indptr: indptr, indices: indices, cleanup: c}, nil
}

// FromCSR builds a graph directly from its compressed sparse row arrays,
// without an edge list: the neighbours of node i are
// indices[indptr[i]:indptr[i+1]], and n = len(indptr) − 1. It takes
// ownership of both slices (they are not copied; the caller must not
// modify them afterwards), so that a graph of 10 million nodes and 200
// million stored entries costs only its own 880 MB.
//
// The arrays must already describe a simple undirected graph; nothing is
// repaired. FromCSR checks, in O(len(indices)) time plus one binary search
// per stored entry (u, v) with u < v (run in parallel over ranges of
// rows), and no extra memory: n >= 1 (as
// FromEdges) and n <= 2³¹−1; indptr[0] = 0; indptr non-decreasing;
// indptr[n] = len(indices); every index in [0, n); every row strictly
// ascending (no duplicates); no self-loop; symmetry (v in row u exactly
// when u in row v). An error names the row and the position in the row
// (and the offset in indices) of the first violation found.
//
// Cleanup of the result reports Input = len(indices)/2 and nothing
// removed.
func FromCSR(indptr []int, indices []int32) (*Graph, error) {
	if len(indptr) < 2 {
		return nil, fmt.Errorf("graph: FromCSR: len(indptr) = %d, want >= 2 (n+1 entries for n >= 1 nodes)", len(indptr))
	}
	n := len(indptr) - 1
	if n > 1<<31-1 {
		return nil, fmt.Errorf("graph: FromCSR: n = %d exceeds the limit of %d nodes", n, 1<<31-1)
	}
	if indptr[0] != 0 {
		return nil, fmt.Errorf("graph: FromCSR: indptr[0] = %d, want 0", indptr[0])
	}
	for i := 0; i < n; i++ {
		if indptr[i+1] < indptr[i] {
			return nil, fmt.Errorf("graph: FromCSR: indptr[%d] = %d < indptr[%d] = %d, want indptr non-decreasing (row %d has a negative length)", i+1, indptr[i+1], i, indptr[i], i)
		}
	}
	if indptr[n] != len(indices) {
		return nil, fmt.Errorf("graph: FromCSR: indptr[%d] = %d, want len(indices) = %d", n, indptr[n], len(indices))
	}
	// Rows: range, order, self-loops; count the entries above and below
	// the diagonal.
	upper := 0
	for u := 0; u < n; u++ {
		start := indptr[u]
		row := indices[start:indptr[u+1]]
		for k, v := range row {
			switch {
			case v < 0 || int(v) >= n:
				return nil, fmt.Errorf("graph: FromCSR: row %d, position %d (indices[%d]) is %d, want a node in [0, %d)", u, k, start+k, v, n)
			case int(v) == u:
				return nil, fmt.Errorf("graph: FromCSR: row %d, position %d (indices[%d]) is a self-loop (%d, %d), want none", u, k, start+k, u, u)
			case k > 0 && v <= row[k-1]:
				return nil, fmt.Errorf("graph: FromCSR: row %d, position %d (indices[%d]) is %d after %d, want strictly ascending rows (no duplicates)", u, k, start+k, v, row[k-1])
			}
			if int(v) > u {
				upper++
			}
		}
	}
	// Symmetry: every upper entry (u, v) must have its mirror (v, u).
	// Mirrors of distinct upper entries are distinct lower entries, so if
	// all exist and there are as many lower entries as upper ones, every
	// lower entry is a mirror too; otherwise a second scan finds a lower
	// entry without one.
	if err := csrMirrors(indptr, indices, func(u int, v int32) bool { return int(v) > u }); err != nil {
		return nil, err
	}
	if len(indices)-upper != upper {
		if err := csrMirrors(indptr, indices, func(u int, v int32) bool { return int(v) < u }); err != nil {
			return nil, err
		}
		// Unreachable: more lower than upper entries means some lower
		// entry has no mirror.
		return nil, fmt.Errorf("graph: FromCSR: %d entries above the diagonal and %d below, want equal counts (a symmetric graph)", upper, len(indices)-upper)
	}
	return &Graph{n: n, indptr: indptr, indices: indices, cleanup: Cleanup{Input: len(indices) / 2}}, nil
}

// csrMirrors checks that every entry (u, v) of the CSR arrays selected by
// want has its mirror (v, u), by binary search in row v. Ranges of rows
// are checked in parallel (the searches are random reads, bound by memory
// latency); the error is that of the first bad row, whatever the number
// of procs.
func csrMirrors(indptr []int, indices []int32, want func(u int, v int32) bool) error {
	n := len(indptr) - 1
	ranges := 1
	if len(indices) >= 1<<16 {
		ranges = min(n, 16*runtime.GOMAXPROCS(0))
	}
	errs := make([]error, ranges)
	check := func(r int) {
		lo, hi := int(int64(n)*int64(r)/int64(ranges)), int(int64(n)*int64(r+1)/int64(ranges))
		for u := lo; u < hi; u++ {
			start := indptr[u]
			row := indices[start:indptr[u+1]]
			for k, v := range row {
				if !want(u, v) {
					continue
				}
				if _, ok := slices.BinarySearch(indices[indptr[v]:indptr[v+1]], int32(u)); !ok {
					errs[r] = fmt.Errorf("graph: FromCSR: row %d, position %d (indices[%d]) holds %d, but row %d does not hold %d: want a symmetric graph (each undirected edge stored in both rows)", u, k, start+k, v, v, u)
					return
				}
			}
		}
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(ranges, runtime.GOMAXPROCS(0)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := int(next.Add(1) - 1); r < ranges; r = int(next.Add(1) - 1) {
				check(r)
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// N returns the number of nodes.
func (g *Graph) N() int { return g.n }

// NumEdges returns the number of undirected edges (each counted once).
func (g *Graph) NumEdges() int { return len(g.indices) / 2 }

// Cleanup returns what FromEdges removed from its input (see Cleanup).
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
// same node numbering; fmp/modelio records it in model files.
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
