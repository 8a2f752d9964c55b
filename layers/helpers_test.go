package layers

import (
	"math"

	"github.com/fairmp/fairmp/graph"
	"github.com/fairmp/fairmp/internal/testutil"
)

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
