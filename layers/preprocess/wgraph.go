package preprocess

import (
	"math"

	"github.com/fairmp/fairmp/graph"
)

// float is the element type of EDITS' learning: float32 or float64.
type float interface{ ~float32 | ~float64 }

// wgraph is a graph whose undirected pairs carry weights: the input
// graph's edges, then candidate pairs. Each pair is stored twice in a
// CSR (nbr, pid), so that propagation and gradients cost O(pairs).
type wgraph[T float] struct {
	n      int
	rowptr []int
	nbr    []int32 // the neighbour of each stored entry
	pid    []int32 // the pair of each stored entry
	pu, pv []int32 // pair p joins pu[p] < pv[p]
	edges  int     // pairs 0..edges−1 are the input graph's edges
}

// newWGraph returns g's edges as pairs 0..E−1, then the candidate pairs
// cand (u < v, none an edge of g, no duplicates).
func newWGraph[T float](g *graph.Graph, cand [][2]int32) *wgraph[T] {
	n := g.N()
	wg := &wgraph[T]{n: n, rowptr: make([]int, n+1)}
	for u := 0; u < n; u++ {
		for _, v := range g.Neighbors(u) {
			if int(v) > u {
				wg.pu = append(wg.pu, int32(u))
				wg.pv = append(wg.pv, v)
			}
		}
	}
	wg.edges = len(wg.pu)
	for _, c := range cand {
		wg.pu = append(wg.pu, c[0])
		wg.pv = append(wg.pv, c[1])
	}
	for p := range wg.pu {
		wg.rowptr[wg.pu[p]+1]++
		wg.rowptr[wg.pv[p]+1]++
	}
	for i := 0; i < n; i++ {
		wg.rowptr[i+1] += wg.rowptr[i]
	}
	wg.nbr = make([]int32, wg.rowptr[n])
	wg.pid = make([]int32, wg.rowptr[n])
	fill := make([]int, n)
	copy(fill, wg.rowptr[:n])
	for p := range wg.pu {
		u, v := wg.pu[p], wg.pv[p]
		wg.nbr[fill[u]], wg.pid[fill[u]] = v, int32(p)
		fill[u]++
		wg.nbr[fill[v]], wg.pid[fill[v]] = u, int32(p)
		fill[v]++
	}
	return wg
}

// ones returns the input graph's weights: 1 on its edges, 0 on the
// candidates.
func (wg *wgraph[T]) ones() []T {
	w := make([]T, len(wg.pu))
	for p := 0; p < wg.edges; p++ {
		w[p] = 1
	}
	return w
}

// scales sets deg_i = 1 + Σ_j w_ij (the self-loop's 1 included) and
// s_i = deg_i^−1/2.
func (wg *wgraph[T]) scales(w, deg, s []T) {
	for i := 0; i < wg.n; i++ {
		var d T = 1
		for k := wg.rowptr[i]; k < wg.rowptr[i+1]; k++ {
			d += w[wg.pid[k]]
		}
		deg[i] = d
		s[i] = T(1 / math.Sqrt(float64(d)))
	}
}

// apply sets out = P in for a vector: P = α·S(W + I)S + (1 − α)·I,
// S = diag(s).
func (wg *wgraph[T]) apply(w, s []T, alpha T, in, out []T) {
	for i := 0; i < wg.n; i++ {
		var acc T = s[i] * in[i]
		for k := wg.rowptr[i]; k < wg.rowptr[i+1]; k++ {
			j := wg.nbr[k]
			acc += w[wg.pid[k]] * s[j] * in[j]
		}
		out[i] = alpha*s[i]*acc + (1-alpha)*in[i]
	}
}

// applyRows sets out = P in for an n × d row-major matrix.
func (wg *wgraph[T]) applyRows(w, s []T, alpha T, in, out []T, d int) {
	for i := 0; i < wg.n; i++ {
		o := out[i*d : (i+1)*d]
		for m, v := range in[i*d : (i+1)*d] {
			o[m] = s[i] * v
		}
		for k := wg.rowptr[i]; k < wg.rowptr[i+1]; k++ {
			j := int(wg.nbr[k])
			c := w[wg.pid[k]] * s[j]
			if c == 0 {
				continue
			}
			for m, v := range in[j*d : (j+1)*d] {
				o[m] += c * v
			}
		}
		for m := range o {
			o[m] = alpha*s[i]*o[m] + (1-alpha)*in[i*d+m]
		}
	}
}
