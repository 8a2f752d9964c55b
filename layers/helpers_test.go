package layers

import (
	"math"
	"math/rand"
	"testing"

	"github.com/fairmp/fairmp/graph"
	"github.com/fairmp/fairmp/internal/testutil"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// problem is a small generated node-classification task: features x
// (n × d), labels from a random linear teacher, and a graph whose edges
// join same-label nodes with probability homophily.
type problem struct {
	n, d, c    int
	x          []float64
	labels     []int
	train, val []int
	test       []int
	gr         *graph.Graph
}

func newProblem(t testing.TB, seed int64, n, d, c, edges int, homophily float64) *problem {
	t.Helper()
	rng := rand.New(rand.NewSource(seed))
	p := &problem{n: n, d: d, c: c, x: testutil.RandSlice(rng, n*d, -1, 1), labels: make([]int, n)}
	teacher := testutil.RandSlice(rng, d*c, -1, 1)
	byClass := make([][]int, c)
	for i := 0; i < n; i++ {
		best, bv := 0, math.Inf(-1)
		for k := 0; k < c; k++ {
			v := 0.0
			for j := 0; j < d; j++ {
				v += p.x[i*d+j] * teacher[j*c+k]
			}
			if v > bv {
				best, bv = k, v
			}
		}
		p.labels[i] = best
		byClass[best] = append(byClass[best], i)
	}
	perm := rng.Perm(n)
	p.train, p.val, p.test = perm[:n/2], perm[n/2:3*n/4], perm[3*n/4:]
	es := make([][2]int, 0, edges)
	for len(es) < edges {
		i := rng.Intn(n)
		j := rng.Intn(n)
		if rng.Float64() < homophily {
			cl := byClass[p.labels[i]]
			j = cl[rng.Intn(len(cl))]
		}
		if i != j {
			es = append(es, [2]int{i, j})
		}
	}
	var err error
	if p.gr, err = graph.FromEdges(n, es); err != nil {
		t.Fatal(err)
	}
	return p
}

// task builds a gorgonia graph with the problem's features in dtype dt.
func (p *problem) task(t testing.TB, dt tensor.Dtype, phase *Phase) *Task {
	t.Helper()
	g := G.NewGraph()
	x, err := FeatureNode(g, dt, p.x, p.n, p.d, "x")
	if err != nil {
		t.Fatal(err)
	}
	return &Task{Graph: g, X: x, Labels: p.labels, Train: p.train, Val: p.val, Classes: p.c, Phase: phase}
}

// paramValues returns the learnables' values as float64 slices.
func paramValues(m Model) [][]float64 {
	var out [][]float64
	for _, n := range m.Learnables() {
		out = append(out, testutil.ToF64(n.Value()))
	}
	return out
}

// dense helpers for the naive implementations (row-major).
func matmul(a []float64, n, k int, b []float64, m int) []float64 {
	out := make([]float64, n*m)
	for i := 0; i < n; i++ {
		for j := 0; j < k; j++ {
			av := a[i*k+j]
			for q := 0; q < m; q++ {
				out[i*m+q] += av * b[j*m+q]
			}
		}
	}
	return out
}

func addRow(a []float64, b []float64) []float64 {
	m := len(b)
	out := append([]float64(nil), a...)
	for i := range out {
		out[i] += b[i%m]
	}
	return out
}

func applyAct(a Activation, x []float64) []float64 {
	out := make([]float64, len(x))
	for i, v := range x {
		switch {
		case v > 0:
			out[i] = v
		case a.Kind == ActReLU:
			out[i] = 0
		case a.Kind == ActELU:
			out[i] = a.Alpha * (math.Exp(v) - 1)
		case a.Kind == ActLeakyReLU:
			out[i] = a.Alpha * v
		}
	}
	return out
}

// denseNorm returns the GCN propagation matrix of gr as a dense n × n
// matrix, computed directly from the definition.
func denseNorm(gr *graph.Graph, improved, selfLoops, normalize bool) []float64 {
	n := gr.N()
	a := make([]float64, n*n)
	for i := 0; i < n; i++ {
		for _, j := range gr.Neighbors(i) {
			a[i*n+int(j)] = 1
		}
	}
	if selfLoops {
		w := 1.0
		if improved {
			w = 2
		}
		for i := 0; i < n; i++ {
			a[i*n+i] += w
		}
	}
	if !normalize {
		return a
	}
	deg := make([]float64, n)
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			deg[i] += a[i*n+j]
		}
	}
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			if a[i*n+j] != 0 {
				a[i*n+j] /= math.Sqrt(deg[i] * deg[j])
			}
		}
	}
	return a
}
