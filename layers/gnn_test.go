package layers

import (
	"fmt"
	"math"
	"math/rand"
	"runtime"
	"strings"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/fairmp/fairmp/graph"
	"github.com/fairmp/fairmp/internal/problem"
	"github.com/fairmp/fairmp/internal/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// gcnLayerNaive returns Ã·(h·W) + b.
func gcnLayerNaive(a []float64, n int, h []float64, width int, params [][]float64, bias bool) ([]float64, int, [][]float64) {
	w := params[0]
	out := len(w) / width
	z := matmul(a, n, n, matmul(h, n, width, w, out), out)
	params = params[1:]
	if bias {
		z = addRow(z, params[0])
		params = params[1:]
	}
	return z, out, params
}

func TestGCN(t *testing.T) {
	p := problem.New(t, 11, 25, 4, 3, 40, 0.6)
	cases := []struct {
		layers int
		prop   Propagation
		bias   bool
		act    Activation
	}{
		{2, DefaultPropagation(), true, ReLU()},
		{3, Propagation{Improved: true, AddSelfLoops: true, Normalize: true}, true, ELU(1)},
		{2, Propagation{AddSelfLoops: false, Normalize: true}, false, LeakyReLU(0.2)},
		{1, Propagation{AddSelfLoops: true, Normalize: false}, true, ReLU()},
	}
	for _, c := range cases {
		cfg := DefaultGCNConfig(p.D, p.C)
		cfg.Hidden, cfg.Layers, cfg.Propagation, cfg.Bias, cfg.Activation = 5, c.layers, c.prop, c.bias, c.act
		a := denseNorm(p.Graph, c.prop.Improved, c.prop.AddSelfLoops, c.prop.Normalize)
		checkModel(t, modelCase{
			name: fmt.Sprintf("layers=%d/%+v/bias=%v", c.layers, c.prop, c.bias),
			build: func(g *G.ExprGraph, p *problem.Problem, dt tensor.Dtype, phase *Phase) (Model, error) {
				cfg := cfg
				cfg.Dtype = dt
				return NewGCN(g, p.Graph, cfg, phase)
			},
			naive: func(p *problem.Problem, params [][]float64) []float64 {
				h, width := p.X, p.D
				for l := 0; l < cfg.Layers; l++ {
					h, width, params = gcnLayerNaive(a, p.N, h, width, params, cfg.Bias)
					if l < cfg.Layers-1 {
						h = applyAct(cfg.Activation, h)
					}
				}
				return h
			},
		}, p)
	}
}

// TestGCNConv checks a single graph convolution (linear, propagate,
// bias, PyG's GCNConv order), a one-layer GCN, against its naive version.
func TestGCNConv(t *testing.T) {
	p := problem.New(t, 12, 15, 3, 2, 20, 0.5)
	a := denseNorm(p.Graph, false, true, true)
	checkModel(t, modelCase{
		name: "conv",
		build: func(g *G.ExprGraph, p *problem.Problem, dt tensor.Dtype, phase *Phase) (Model, error) {
			cfg := DefaultGCNConfig(p.D, p.C)
			cfg.Layers, cfg.Dtype = 1, dt
			return NewGCN(g, p.Graph, cfg, nil)
		},
		naive: func(p *problem.Problem, params [][]float64) []float64 {
			z, _, _ := gcnLayerNaive(a, p.N, p.X, p.D, params, true)
			return z
		},
	}, p)
}

func TestSGC(t *testing.T) {
	p := problem.New(t, 13, 25, 4, 3, 40, 0.6)
	for _, k := range []int{0, 1, 3} {
		a := denseNorm(p.Graph, false, true, true)
		checkModel(t, modelCase{
			name: fmt.Sprintf("K=%d", k),
			build: func(g *G.ExprGraph, p *problem.Problem, dt tensor.Dtype, phase *Phase) (Model, error) {
				cfg := DefaultSGCConfig(p.D, p.C)
				cfg.K, cfg.Dtype = k, dt
				return NewSGC(g, p.Graph, cfg, nil)
			},
			naive: func(p *problem.Problem, params [][]float64) []float64 {
				h := p.X
				for s := 0; s < k; s++ {
					h = matmul(a, p.N, p.N, h, p.D)
				}
				return addRow(matmul(h, p.N, p.D, params[0], p.C), params[1])
			},
		}, p)
	}
	// On an input node holding the features, Ã²X is computed once, when
	// the graph is built: the linear layer's input is a constant equal to
	// Ã²X, and a second Forward computes it again in a node of its own.
	g, x := p.Features(t, tensor.Float64)
	cfg := DefaultSGCConfig(p.D, p.C)
	cfg.K = 2
	m, err := NewSGC(g, p.Graph, cfg, nil)
	require.NoError(t, err)
	folded := func(g *G.ExprGraph) (ns G.Nodes) {
		for _, n := range g.AllNodes() {
			if strings.HasPrefix(n.Name(), "propagated.") {
				ns = append(ns, n)
			}
		}
		return ns
	}
	_, err = m.Forward(x)
	require.NoError(t, err)
	require.Len(t, folded(g), 1, "Ã²X is a constant of the graph")
	pre := folded(g)[0]
	assert.Nil(t, pre.Op())
	a := denseNorm(p.Graph, false, true, true)
	want := matmul(a, p.N, p.N, matmul(a, p.N, p.N, p.X, p.D), p.D)
	testutil.AllClose(t, "Ã²X", testutil.ToF64(pre.Value()), want, 1e-12, 1e-10)
	_, err = m.Forward(x)
	require.NoError(t, err)
	assert.Len(t, folded(g), 2)
	// On a computed node, the products are ops of the graph (gradients
	// reach the input).
	g2 := G.NewGraph()
	m2, err := NewSGC(g2, p.Graph, cfg, nil)
	require.NoError(t, err)
	u := G.NewMatrix(g2, tensor.Float64, G.WithShape(p.N, p.D), G.WithName("u"), G.WithInit(G.Zeroes()))
	derived := G.Must(G.Mul(u, G.NewConstant(2.0)))
	_, err = m2.Forward(derived)
	require.NoError(t, err)
	assert.Empty(t, folded(g2), "Ã²(2u) is computed in the graph")
}

func TestAPPNP(t *testing.T) {
	p := problem.New(t, 14, 25, 4, 3, 40, 0.6)
	for _, c := range []struct {
		k     int
		alpha float64
	}{{10, 0.1}, {3, 0.5}, {0, 0.1}, {2, 1}} {
		cfg := DefaultAPPNPConfig(p.D, p.C)
		cfg.Hidden, cfg.K, cfg.Alpha = 5, c.k, c.alpha
		a := denseNorm(p.Graph, false, true, true)
		checkModel(t, modelCase{
			name: fmt.Sprintf("K=%d/alpha=%v", c.k, c.alpha),
			build: func(g *G.ExprGraph, p *problem.Problem, dt tensor.Dtype, phase *Phase) (Model, error) {
				cfg := cfg
				cfg.Dtype = dt
				return NewAPPNP(g, p.Graph, cfg, phase)
			},
			naive: func(p *problem.Problem, params [][]float64) []float64 {
				h := mlpNaive(MLPConfig{Layers: cfg.Layers, Bias: cfg.Bias, Activation: cfg.Activation})(p, params)
				z := h
				for s := 0; s < cfg.K; s++ {
					az := matmul(a, p.N, p.N, z, p.C)
					z = make([]float64, len(h))
					for i := range z {
						z[i] = (1-cfg.Alpha)*az[i] + cfg.Alpha*h[i]
					}
				}
				return z
			},
		}, p)
	}
}

func TestJKNet(t *testing.T) {
	p := problem.New(t, 15, 25, 4, 3, 40, 0.6)
	for _, mode := range []JKMode{JKConcat, JKMax} {
		for _, layers := range []int{1, 3} {
			cfg := DefaultJKNetConfig(p.D, p.C)
			cfg.Hidden, cfg.Layers, cfg.Mode = 5, layers, mode
			a := denseNorm(p.Graph, false, true, true)
			checkModel(t, modelCase{
				name: fmt.Sprintf("%s/layers=%d", mode, layers),
				build: func(g *G.ExprGraph, p *problem.Problem, dt tensor.Dtype, phase *Phase) (Model, error) {
					cfg := cfg
					cfg.Dtype = dt
					return NewJKNet(g, p.Graph, cfg, phase)
				},
				naive: func(p *problem.Problem, params [][]float64) []float64 {
					h, width := p.X, p.D
					var hs [][]float64
					for l := 0; l < cfg.Layers; l++ {
						h, width, params = gcnLayerNaive(a, p.N, h, width, params, true)
						h = applyAct(cfg.Activation, h)
						hs = append(hs, h)
					}
					var jk []float64
					w := cfg.Hidden
					if mode == JKMax {
						jk = append([]float64(nil), hs[0]...)
						for _, o := range hs[1:] {
							for i := range jk {
								jk[i] = math.Max(jk[i], o[i])
							}
						}
					} else {
						w = cfg.Hidden * cfg.Layers
						jk = make([]float64, p.N*w)
						for l, o := range hs {
							for i := 0; i < p.N; i++ {
								copy(jk[i*w+l*cfg.Hidden:i*w+(l+1)*cfg.Hidden], o[i*cfg.Hidden:(i+1)*cfg.Hidden])
							}
						}
					}
					return addRow(matmul(jk, p.N, w, params[0], p.C), params[1])
				},
			}, p)
		}
	}
}

// TestEdgeDropout recovers A ⊙ M by multiplying the identity, and checks
// the mask's structure, the scaling, the gradient (A ⊙ M)ᵀ·W and the
// evaluation mode.
func TestEdgeDropout(t *testing.T) {
	rng := rand.New(rand.NewSource(16))
	n, pdrop := 40, 0.3
	gr := randomGraph(t, rng, n, 200)
	a := graph.NormalizedAdjacency(gr)
	ad := a.Dense()
	eye := make([]float64, n*n)
	for i := 0; i < n; i++ {
		eye[i*n+i] = 1
	}
	wv := testutil.RandSlice(rng, n*n, -1, 1)
	for _, dt := range testutil.Dtypes {
		for _, training := range []bool{true, false} {
			phase := NewPhase()
			phase.SetTraining(training)
			g := G.NewGraph()
			x := G.NewMatrix(g, dt, G.WithShape(n, n), G.WithName("x"), G.WithValue(testutil.Tensor(dt, eye, n, n)))
			w := G.NewMatrix(g, dt, G.WithShape(n, n), G.WithName("w"), G.WithValue(testutil.Tensor(dt, wv, n, n)))
			y, err := EdgeDropoutSpMM(a, x, pdrop, 3, phase)
			require.NoError(t, err)
			var yv, gv G.Value
			G.Read(y, &yv)
			gr, err := G.Grad(G.Must(G.Sum(G.Must(G.HadamardProd(y, w)))), x)
			require.NoError(t, err)
			G.Read(gr[0], &gv)
			testutil.Run(t, g)
			am := testutil.ToF64(yv) // A ⊙ M
			atol, rtol := testutil.Tol(dt)
			if !training {
				testutil.AllClose(t, "eval", am, ad, atol, rtol)
			}
			dropped, stored := 0, 0
			for i, v := range ad {
				if v == 0 {
					if am[i] != 0 {
						t.Fatalf("entry %d not in A became %v", i, am[i])
					}
					continue
				}
				stored++
				if am[i] == 0 {
					dropped++
				} else if !testutil.Close(am[i], v/(1-pdrop), atol, rtol) && training {
					t.Fatalf("kept entry %d = %v, want %v", i, am[i], v/(1-pdrop))
				}
			}
			frac := float64(dropped) / float64(stored)
			if training && math.Abs(frac-pdrop) > 0.07 {
				t.Errorf("%v: dropped %.3f of %d entries, want about %v", dt, frac, stored, pdrop)
			}
			// d/dX sum(W ⊙ (A⊙M)X) = (A⊙M)ᵀ W.
			amt := make([]float64, n*n)
			for i := 0; i < n; i++ {
				for j := 0; j < n; j++ {
					amt[j*n+i] = am[i*n+j]
				}
			}
			testutil.AllClose(t, "gradient", testutil.ToF64(gv), matmul(amt, n, n, wv, n), atol, rtol)
		}
	}
}

func TestGNNConfigErrors(t *testing.T) {
	p := problem.New(t, 17, 10, 3, 2, 10, 0.5)
	g := G.NewGraph()
	gcn := DefaultGCNConfig(3, 2)
	gcn.Propagation = Propagation{Improved: true}
	if _, err := NewGCN(g, p.Graph, gcn, nil); err == nil {
		t.Error("Improved without self-loops accepted")
	}
	if _, err := NewGCN(g, nil, DefaultGCNConfig(3, 2), nil); err == nil {
		t.Error("nil graph accepted")
	}
	ap := DefaultAPPNPConfig(3, 2)
	for _, mut := range []func(c *APPNPConfig){
		func(c *APPNPConfig) { c.K = -1 },
		func(c *APPNPConfig) { c.Alpha = 1.5 },
		func(c *APPNPConfig) { c.Alpha = math.NaN() },
		func(c *APPNPConfig) { c.EdgeDropout = 1 },
	} {
		c := ap
		mut(&c)
		if _, err := NewAPPNP(g, p.Graph, c, nil); err == nil {
			t.Errorf("APPNP config %+v accepted", c)
		}
	}
	jk := DefaultJKNetConfig(3, 2)
	jk.Mode = "lstm"
	if _, err := NewJKNet(g, p.Graph, jk, nil); err == nil {
		t.Error("JK mode lstm accepted")
	}
	sgc := DefaultSGCConfig(3, 2)
	sgc.K = -1
	if _, err := NewSGC(g, p.Graph, sgc, nil); err == nil {
		t.Error("SGC K = -1 accepted")
	}
	x := G.NewMatrix(g, tensor.Float64, G.WithShape(11, 3), G.WithName("x11"), G.WithInit(G.Zeroes()))
	m, err := NewGCN(g, p.Graph, DefaultGCNConfig(3, 2), nil)
	require.NoError(t, err)
	if _, err := m.Forward(x); err == nil {
		t.Error("GCN accepted 11 rows for a 10-node graph")
	}
}

// TestEdgeDropoutAdjoint checks, on a graph large enough for the parallel
// row blocks, that the gradient is the adjoint of the forward product
// under the same mask: <w, (A⊙M)x> = <(A⊙M)ᵀw, x>, with 1 and 2 threads
// giving identical results.
func TestEdgeDropoutAdjoint(t *testing.T) {
	rng := rand.New(rand.NewSource(17))
	n, c := 5000, 3
	a := graph.NormalizedAdjacency(randomGraph(t, rng, n, 30000))
	xv := testutil.RandSlice(rng, n*c, -1, 1)
	wv := testutil.RandSlice(rng, n*c, -1, 1)
	var prev [2][]float64
	for r, procs := range []int{1, 2} {
		old := runtime.GOMAXPROCS(procs)
		phase := NewPhase()
		phase.SetTraining(true)
		g := G.NewGraph()
		x := G.NewMatrix(g, tensor.Float64, G.WithShape(n, c), G.WithName("x"), G.WithValue(testutil.Tensor(tensor.Float64, xv, n, c)))
		w := G.NewMatrix(g, tensor.Float64, G.WithShape(n, c), G.WithName("w"), G.WithValue(testutil.Tensor(tensor.Float64, wv, n, c)))
		y, err := EdgeDropoutSpMM(a, x, 0.4, 5, phase)
		require.NoError(t, err)
		var yv, gv G.Value
		G.Read(y, &yv)
		gr, err := G.Grad(G.Must(G.Sum(G.Must(G.HadamardProd(y, w)))), x)
		require.NoError(t, err)
		G.Read(gr[0], &gv)
		testutil.Run(t, g)
		runtime.GOMAXPROCS(old)
		yy, gg := testutil.ToF64(yv), testutil.ToF64(gv)
		lhs, rhs := 0.0, 0.0
		for i := range yy {
			lhs += wv[i] * yy[i]
			rhs += gg[i] * xv[i]
		}
		if !testutil.Close(lhs, rhs, 1e-9, 1e-9) {
			t.Errorf("GOMAXPROCS %d: <w, y> = %v, <dX, x> = %v", procs, lhs, rhs)
		}
		if r == 1 && (!equalSlices(prev[0], yy) || !equalSlices(prev[1], gg)) {
			t.Error("results differ between 1 and 2 threads")
		}
		prev = [2][]float64{yy, gg}
	}
}
