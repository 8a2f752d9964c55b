package layers

import (
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/fairmp/fairmp/graph"
	"github.com/fairmp/fairmp/graph/features"
	"github.com/fairmp/fairmp/internal/problem"
	"github.com/fairmp/fairmp/internal/testutil"
)

// aggNaive returns, for the dense n × n adjacency a, row i's mean or
// element-wise maximum of the rows j of h (width cols) with a[i, j] ≠ 0,
// by loops; 0 for a row without neighbours.
func aggNaive(a []float64, n int, h []float64, cols int, aggr string) []float64 {
	out := make([]float64, n*cols)
	for i := 0; i < n; i++ {
		for c := 0; c < cols; c++ {
			cnt, sum, best := 0, 0.0, math.Inf(-1)
			for j := 0; j < n; j++ {
				if a[i*n+j] == 0 {
					continue
				}
				cnt++
				sum += h[j*cols+c]
				best = math.Max(best, h[j*cols+c])
			}
			switch {
			case cnt == 0:
			case aggr == aggrMean:
				out[i*cols+c] = sum / float64(cnt)
			case aggr == aggrMax:
				out[i*cols+c] = best
			}
		}
	}
	return out
}

// sageNaive is GraphSAGE by its definition on the dense adjacency a:
// h' = agg(h)·W_l + b + h·W_r per layer.
func sageNaive(cfg SAGEConfig, a []float64) func(p *problem.Problem, params [][]float64) []float64 {
	return func(p *problem.Problem, params [][]float64) []float64 {
		h, width := p.X, p.D
		for l := 0; l < cfg.Layers; l++ {
			wl := params[0]
			out := len(wl) / width
			z := matmul(aggNaive(a, p.N, h, width, cfg.Aggr), p.N, width, wl, out)
			params = params[1:]
			if cfg.Bias {
				z = addRow(z, params[0])
				params = params[1:]
			}
			r := matmul(h, p.N, width, params[0], out)
			params = params[1:]
			for k := range z {
				z[k] += r[k]
			}
			h, width = z, out
			if l < cfg.Layers-1 {
				h = applyAct(cfg.Activation, h)
			}
		}
		return h
	}
}

// ginNaive is GIN by its definition on the dense adjacency a:
// h' = MLP((1+ε)·h + a·h) per layer.
func ginNaive(cfg GINConfig, a []float64) func(p *problem.Problem, params [][]float64) []float64 {
	return func(p *problem.Problem, params [][]float64) []float64 {
		h, width := p.X, p.D
		lin := func(x []float64, w int) ([]float64, int) {
			out := len(params[0]) / w
			z := matmul(x, p.N, w, params[0], out)
			params = params[1:]
			if cfg.Bias {
				z = addRow(z, params[0])
				params = params[1:]
			}
			return z, out
		}
		for l := 0; l < cfg.Layers; l++ {
			nb := 2
			if cfg.Bias {
				nb = 4
			}
			e := params[nb][0] // the layer's ε follows its MLP
			s := matmul(a, p.N, p.N, h, width)
			for k := range s {
				s[k] += (1 + e) * h[k]
			}
			z, w := lin(s, width)
			z = applyAct(cfg.Activation, z)
			z, w = lin(z, w)
			params = params[1:] // ε
			h, width = z, w
			if l < cfg.Layers-1 {
				h = applyAct(cfg.Activation, h)
			}
		}
		return h
	}
}

func TestSAGE(t *testing.T) {
	p := problem.New(t, 21, 25, 4, 3, 30, 0.6) // few edges: some nodes isolated
	a := denseNorm(p.Graph, false, false, false)
	for _, c := range []struct {
		layers, hidden int
		aggr           string
		bias           bool
		act            Activation
	}{
		{2, 5, aggrMean, true, ReLU()},  // layer 0 aggregates first (4 → 5)
		{2, 3, aggrMean, false, ELU(1)}, // layer 0 transforms first (4 → 3)
		{3, 5, aggrMax, true, LeakyReLU(0.2)},
		{1, 5, aggrMax, false, ReLU()},
	} {
		cfg := DefaultSAGEConfig(p.D, p.C)
		cfg.Layers, cfg.Hidden, cfg.Aggr, cfg.Bias, cfg.Activation = c.layers, c.hidden, c.aggr, c.bias, c.act
		checkModel(t, modelCase{
			name: fmt.Sprintf("layers=%d/hidden=%d/%s/bias=%v", c.layers, c.hidden, c.aggr, c.bias),
			build: func(g *G.ExprGraph, p *problem.Problem, dt tensor.Dtype, phase *Phase) (Model, error) {
				cfg := cfg
				cfg.Dtype = dt
				return NewSAGE(g, p.Graph, cfg, phase)
			},
			naive: sageNaive(cfg, a),
		}, p)
	}
}

func TestGIN(t *testing.T) {
	p := problem.New(t, 22, 25, 4, 3, 30, 0.6)
	a := denseNorm(p.Graph, false, false, false)
	for _, c := range []struct {
		layers int
		bias   bool
		act    Activation
	}{{2, true, ReLU()}, {3, false, ELU(1)}, {1, true, LeakyReLU(0.1)}} {
		cfg := DefaultGINConfig(p.D, p.C)
		cfg.Layers, cfg.Hidden, cfg.Bias, cfg.Activation = c.layers, 5, c.bias, c.act
		checkModel(t, modelCase{
			name: fmt.Sprintf("layers=%d/bias=%v/%v", c.layers, c.bias, c.act),
			build: func(g *G.ExprGraph, p *problem.Problem, dt tensor.Dtype, phase *Phase) (Model, error) {
				cfg := cfg
				cfg.Dtype = dt
				m, err := NewGIN(g, p.Graph, cfg, phase)
				if err != nil {
					return nil, err
				}
				for l, e := range m.eps { // ε ≠ 0, as after training
					require.NoError(t, G.Let(e, testutil.Tensor(dt, []float64{0.3 - 0.4*float64(l)}, 1, 1)))
				}
				return m, nil
			},
			naive: ginNaive(cfg, a),
		}, p)
	}
}

// TestAggrHandComputed: on the path 0 – 1 – 2 and the isolated node 3,
// the mean and the maximum of each node's neighbours, by hand, on every
// flow (gorgonia on the whole graph, plain Go, gorgonia on blocks).
func TestAggrHandComputed(t *testing.T) {
	gr, err := graph.FromEdges(4, [][2]int{{0, 1}, {1, 2}})
	require.NoError(t, err)
	x := []float64{1, -2, 3, 4, -5, 6, 7, 8}   // 4 × 2
	mean := []float64{3, 4, -2, 2, 3, 4, 0, 0} // 1: (row 0 + row 2)/2
	maxs := []float64{3, 4, 1, 6, 3, 4, 0, 0}  // 1: max of rows 0 and 2
	for _, c := range []struct {
		aggr string
		want []float64
	}{{aggrMean, mean}, {aggrMax, maxs}} {
		for _, dt := range testutil.Dtypes {
			cfg := DefaultSAGEConfig(2, 2)
			cfg.Layers, cfg.Aggr, cfg.Dtype = 1, c.aggr, dt
			m, err := NewSAGE(G.NewGraph(), gr, cfg, nil)
			require.NoError(t, err)
			// W_l = I, W_r = 0, b = 0: the logits are the aggregation.
			require.NoError(t, G.Let(m.lins[0].W, testutil.Tensor(dt, []float64{1, 0, 0, 1}, 2, 2)))
			require.NoError(t, G.Let(m.roots[0].W, testutil.Tensor(dt, []float64{0, 0, 0, 0}, 2, 2)))

			g := G.NewGraph()
			xn := G.NewMatrix(g, dt, G.WithShape(4, 2), G.WithName("x"), G.WithValue(testutil.Tensor(dt, x, 4, 2)))
			// A model in another graph reads its parameters' values only
			// through the flows; rebuild it in g for gorgonia.
			mg, err := NewSAGE(g, gr, cfg, nil)
			require.NoError(t, err)
			require.NoError(t, G.Let(mg.lins[0].W, m.lins[0].W.Value()))
			require.NoError(t, G.Let(mg.roots[0].W, m.roots[0].W.Value()))
			z, err := mg.Forward(xn)
			require.NoError(t, err)
			var zv G.Value
			G.Read(z, &zv)
			testutil.Run(t, g)
			assert.Equal(t, c.want, testutil.ToF64(zv), "%s %v: Forward", c.aggr, dt)

			src, err := features.NewDense(x, 4, 2)
			require.NoError(t, err)
			lw, err := LayerwiseLogits(m, m.Matrix(), src)
			require.NoError(t, err)
			assert.Equal(t, c.want, testutil.ToF64(lw), "%s %v: LayerwiseLogits", c.aggr, dt)
		}
	}
}

// TestMaxAggAndScaleGradRunTwice: maxAggSpec's and scaleSpec's outputs
// and gradients, by hand, on the path 0 – 1 – 2 and the isolated node 3,
// on a first run and again on a second run of the same machine (the ops
// keep their outputs between runs; maxAggGradSpec's output, which it
// adds into, must start from 0 on every run).
func TestMaxAggAndScaleGradRunTwice(t *testing.T) {
	a, err := graph.NewMatrixCSR(4, 4, []int{0, 1, 3, 4, 4}, []int32{1, 0, 2, 1}, []float64{1, 1, 1, 1})
	require.NoError(t, err)
	x := []float64{1, -2, 3, 4, -5, 6, 7, 8} // 4 × 2
	for _, dt := range testutil.Dtypes {
		g := G.NewGraph()
		xn := G.NewMatrix(g, dt, G.WithShape(4, 2), G.WithName("x"), G.WithValue(testutil.Tensor(dt, x, 4, 2)))
		sn := G.NewMatrix(g, dt, G.WithShape(1, 1), G.WithName("s"), G.WithValue(testutil.Tensor(dt, []float64{0.5}, 1, 1)))
		m, err := maxAgg(a, xn)
		require.NoError(t, err)
		y, err := scale(m, sn)
		require.NoError(t, err)
		cost, err := G.Sum(y)
		require.NoError(t, err)
		grads, err := G.Grad(cost, xn, sn)
		require.NoError(t, err)
		tm := G.NewTapeMachine(g)
		for run := 0; run < 2; run++ {
			tm.Reset()
			require.NoError(t, tm.RunAll(), "%v run %d", dt, run)
			// max over rows: (3,4), max((1,-2),(-5,6)) = (1,6), (3,4), 0.
			assert.Equal(t, []float64{3, 4, 1, 6, 3, 4, 0, 0}, testutil.ToF64(m.Value()), "%v run %d: max", dt, run)
			assert.Equal(t, []float64{1.5, 2, 0.5, 3, 1.5, 2, 0, 0}, testutil.ToF64(y.Value()), "%v run %d: scaled", dt, run)
			// d/dx: 0.5 to each row's arg max (row 1: x0 in column 0, x2 in column 1).
			assert.Equal(t, []float64{0.5, 0, 1, 1, 0, 0.5, 0, 0}, testutil.ToF64(grads[0].Value()), "%v run %d: d/dx", dt, run)
			// d/ds = Σ max = 3+4+1+6+3+4.
			assert.Equal(t, []float64{21}, testutil.ToF64(grads[1].Value()), "%v run %d: d/ds", dt, run)
		}
		require.NoError(t, tm.Close())
	}
}
