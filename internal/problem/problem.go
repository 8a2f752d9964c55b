// Package problem generates the small node-classification problems
// fairmp's tests train and check models on.
package problem

import (
	"math"
	"math/rand"

	"github.com/fairmp/fairmp/graph"
	"github.com/fairmp/fairmp/internal/testutil"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Problem is a small generated node-classification task: features X
// (N × D, row-major), labels from a random linear teacher over C classes,
// a half / quarter / quarter split, and a graph whose edges join
// same-label nodes with probability homophily.
type Problem struct {
	N, D, C          int
	X                []float64
	Labels           []int
	Train, Val, Test []int
	Graph            *graph.Graph
}

// New generates a Problem from seed with n nodes, d features, c
// classes and about edges edges.
func New(t testutil.TB, seed int64, n, d, c, edges int, homophily float64) *Problem {
	t.Helper()
	rng := rand.New(rand.NewSource(seed))
	p := &Problem{N: n, D: d, C: c, X: testutil.RandSlice(rng, n*d, -1, 1), Labels: make([]int, n)}
	teacher := testutil.RandSlice(rng, d*c, -1, 1)
	byClass := make([][]int, c)
	for i := 0; i < n; i++ {
		best, bv := 0, math.Inf(-1)
		for k := 0; k < c; k++ {
			v := 0.0
			for j := 0; j < d; j++ {
				v += p.X[i*d+j] * teacher[j*c+k]
			}
			if v > bv {
				best, bv = k, v
			}
		}
		p.Labels[i] = best
		byClass[best] = append(byClass[best], i)
	}
	perm := rng.Perm(n)
	p.Train, p.Val, p.Test = perm[:n/2], perm[n/2:3*n/4], perm[3*n/4:]
	es := make([][2]int, 0, edges)
	for len(es) < edges {
		i := rng.Intn(n)
		j := rng.Intn(n)
		if rng.Float64() < homophily {
			cl := byClass[p.Labels[i]]
			j = cl[rng.Intn(len(cl))]
		}
		if i != j {
			es = append(es, [2]int{i, j})
		}
	}
	var err error
	if p.Graph, err = graph.FromEdges(n, es); err != nil {
		t.Fatalf("problem.New: %v", err)
	}
	return p
}

// Features returns a new gorgonia graph holding the problem's features as
// an N × D input node "x" of dtype dt.
func (p *Problem) Features(t testutil.TB, dt tensor.Dtype) (*G.ExprGraph, *G.Node) {
	t.Helper()
	g := G.NewGraph()
	x := G.NewMatrix(g, dt, G.WithShape(p.N, p.D), G.WithName("x"), G.WithValue(testutil.Tensor(dt, p.X, p.N, p.D)))
	return g, x
}

// Toy returns n nodes with d features, a label given by the sign
// of the first two features' sum, a graph joining mostly same-label
// nodes, and a 50/25/25 split. Examples use it; it panics only on a bug.
func Toy(n, d int, seed int64) (x []float64, y []int, gr *graph.Graph, train, val, test []int) {
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
	var err error
	if gr, err = graph.FromEdges(n, edges); err != nil {
		panic(err)
	}
	perm := rng.Perm(n)
	return x, y, gr, perm[:n/2], perm[n/2 : 3*n/4], perm[3*n/4:]
}
