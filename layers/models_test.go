package layers

import (
	"fmt"
	"math/rand"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/fairmp/fairmp/internal/problem"
	"github.com/fairmp/fairmp/internal/testutil"
	"github.com/stretchr/testify/require"
)

// modelCase describes a model for the shared forward/gradient checks.
type modelCase struct {
	name string
	// build makes the model for problem p in dtype dt.
	build func(g *G.ExprGraph, p *problem.Problem, dt tensor.Dtype, phase *Phase) (Model, error)
	// naive computes the evaluation-mode logits (n × c) from the
	// learnables' values (Learnables() order) in plain Go.
	naive func(p *problem.Problem, params [][]float64) []float64
}

// checkModel checks a model's evaluation-mode forward against its naive
// implementation in float64 and float32, float32 against float64, and the
// gradient of the training cross-entropy with respect to every learnable
// against central differences of the naive loss (float64).
func checkModel(t *testing.T, mc modelCase, p *problem.Problem) {
	t.Helper()
	var logits64 []float64
	for _, dt := range testutil.Dtypes {
		t.Run(fmt.Sprintf("%s/%v", mc.name, dt), func(t *testing.T) {
			g, x := p.Features(t, dt)
			m, err := mc.build(g, p, dt, NewPhase())
			require.NoError(t, err)
			logits, err := m.Forward(x)
			require.NoError(t, err)
			var zv G.Value
			G.Read(logits, &zv)
			ce, err := CrossEntropy(logits, p.Labels, p.Train)
			require.NoError(t, err)
			params := m.Learnables()
			grads, err := G.Grad(ce, params...)
			require.NoError(t, err)
			gvs := make([]G.Value, len(grads))
			for i := range grads {
				G.Read(grads[i], &gvs[i])
			}
			testutil.Run(t, g)
			pv := paramValues(m)
			want := mc.naive(p, pv)
			got := testutil.ToF64(zv)
			atol, rtol := testutil.Tol(dt)
			testutil.AllClose(t, "logits", got, want, atol, rtol)
			if dt == tensor.Float64 {
				logits64 = got
				for i := range params {
					num := testutil.NumGrad(func() float64 {
						return naiveCE(mc.naive(p, pv), p.C, p.Labels, p.Train)
					}, pv[i], 1e-6)
					testutil.AllClose(t, "d/d"+params[i].Name(), testutil.ToF64(gvs[i]), num, 1e-7, 1e-5)
				}
			} else if logits64 != nil {
				testutil.AllClose(t, "float32 vs float64", got, logits64, 1e-4, 1e-3)
			}
		})
	}
}

func mlpNaive(cfg MLPConfig) func(p *problem.Problem, params [][]float64) []float64 {
	return func(p *problem.Problem, params [][]float64) []float64 {
		h, width := p.X, p.D
		for l := 0; l < cfg.Layers; l++ {
			w := params[0]
			out := len(w) / width
			h = matmul(h, p.N, width, w, out)
			params = params[1:]
			if cfg.Bias {
				h = addRow(h, params[0])
				params = params[1:]
			}
			width = out
			if l < cfg.Layers-1 {
				h = applyAct(cfg.Activation, h)
			}
		}
		return h
	}
}

func TestMLP(t *testing.T) {
	p := problem.New(t, 1, 30, 5, 3, 60, 0.5)
	for _, c := range []struct {
		layers int
		act    Activation
		bias   bool
	}{{2, ReLU(), true}, {3, ELU(1), true}, {2, LeakyReLU(0.1), false}, {1, ReLU(), true}} {
		cfg := DefaultMLPConfig(p.D, p.C)
		cfg.Hidden, cfg.Layers, cfg.Activation, cfg.Bias = 4, c.layers, c.act, c.bias
		checkModel(t, modelCase{
			name: fmt.Sprintf("layers=%d/%v/bias=%v", c.layers, c.act, c.bias),
			build: func(g *G.ExprGraph, p *problem.Problem, dt tensor.Dtype, phase *Phase) (Model, error) {
				cfg := cfg
				cfg.Dtype = dt
				return NewMLP(g, nil, cfg, phase)
			},
			naive: mlpNaive(cfg),
		}, p)
	}
}

func TestLinear(t *testing.T) {
	p := problem.New(t, 2, 20, 4, 3, 10, 0)
	for _, bias := range []bool{true, false} {
		checkModel(t, modelCase{
			name: fmt.Sprintf("bias=%v", bias),
			build: func(g *G.ExprGraph, p *problem.Problem, dt tensor.Dtype, phase *Phase) (Model, error) {
				cfg := DefaultLinearConfig(p.D, p.C)
				cfg.Bias, cfg.Dtype = bias, dt
				return NewLinear(g, nil, cfg, nil)
			},
			naive: func(p *problem.Problem, params [][]float64) []float64 {
				z := matmul(p.X, p.N, p.D, params[0], p.C)
				if bias {
					z = addRow(z, params[1])
				}
				return z
			},
		}, p)
	}
}

func TestActivationGradient(t *testing.T) {
	rng := rand.New(rand.NewSource(9))
	xv := testutil.RandSlice(rng, 40, -2, 2)
	wv := testutil.RandSlice(rng, 40, -1, 1)
	for _, act := range []Activation{ReLU(), ELU(1.5), LeakyReLU(0.2)} {
		for _, dt := range testutil.Dtypes {
			g := G.NewGraph()
			x := G.NewMatrix(g, dt, G.WithShape(8, 5), G.WithName("x"), G.WithValue(testutil.Tensor(dt, xv, 8, 5)))
			w := G.NewMatrix(g, dt, G.WithShape(8, 5), G.WithName("w"), G.WithValue(testutil.Tensor(dt, wv, 8, 5)))
			y, err := Activate(x, act)
			require.NoError(t, err)
			var yv G.Value
			G.Read(y, &yv)
			gr, err := G.Grad(G.Must(G.Sum(G.Must(G.HadamardProd(y, w)))), x)
			require.NoError(t, err)
			testutil.Run(t, g)
			atol, rtol := testutil.Tol(dt)
			testutil.AllClose(t, act.String(), testutil.ToF64(yv), applyAct(act, xv), atol, rtol)
			num := testutil.NumGrad(func() float64 {
				s := 0.0
				for i, v := range applyAct(act, xv) {
					s += v * wv[i]
				}
				return s
			}, xv, 1e-6)
			testutil.AllClose(t, "d"+act.String(), testutil.ToF64(gr[0].Value()), num, 1e-6+atol, 1e-5+rtol)
		}
	}
	bad := []Activation{{Kind: "tanh"}, {Kind: ActReLU, Alpha: 1}, ELU(-1), LeakyReLU(0).withAlpha(-0.5)}
	for _, a := range bad {
		if a.Validate() == nil {
			t.Errorf("activation %+v accepted", a)
		}
	}
}

func (a Activation) withAlpha(v float64) Activation { a.Alpha = v; return a }

func TestConfigErrors(t *testing.T) {
	g := G.NewGraph()
	base := DefaultMLPConfig(4, 2)
	muts := map[string]func(c *MLPConfig){
		"no name":     func(c *MLPConfig) { c.Name = "" },
		"In 0":        func(c *MLPConfig) { c.In = 0 },
		"Hidden -1":   func(c *MLPConfig) { c.Hidden = -1 },
		"Layers 0":    func(c *MLPConfig) { c.Layers = 0 },
		"Dropout 1":   func(c *MLPConfig) { c.Dropout = 1 },
		"InDrop -0.1": func(c *MLPConfig) { c.InputDropout = -0.1 },
		"int dtype":   func(c *MLPConfig) { c.Dtype = tensor.Int },
		"bad act":     func(c *MLPConfig) { c.Activation = Activation{Kind: "x"} },
	}
	for name, mut := range muts {
		c := base
		mut(&c)
		if _, err := NewMLP(g, nil, c, nil); err == nil {
			t.Errorf("%s: NewMLP accepted the config", name)
		}
	}
	if _, err := NewMLP(g, nil, base, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := NewMLP(g, nil, base, nil); err == nil {
		t.Error("a second model with the same Name in one graph was accepted")
	}
	m, _ := NewMLP(g, nil, func() MLPConfig { c := base; c.Name = "other"; return c }(), nil)
	x := G.NewMatrix(g, tensor.Float64, G.WithShape(3, 5), G.WithName("x5"))
	if _, err := m.Forward(x); err == nil {
		t.Error("Forward accepted 5 input columns for In = 4")
	}
	x32 := G.NewMatrix(g, tensor.Float32, G.WithShape(3, 4), G.WithName("x32"))
	if _, err := m.Forward(x32); err == nil {
		t.Error("Forward accepted a float32 input for a float64 model")
	}
	other := G.NewGraph()
	xo := G.NewMatrix(other, tensor.Float64, G.WithShape(3, 4), G.WithName("xo"))
	if _, err := m.Forward(xo); err == nil {
		t.Error("Forward accepted an input from another graph")
	}
}
