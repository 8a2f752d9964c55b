package fmp

import (
	"fmt"
	"math/rand"
	"testing"

	"github.com/stretchr/testify/require"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/fairmp/fairmp/graph"
	"github.com/fairmp/fairmp/internal/opkit"
	"github.com/fairmp/fairmp/internal/testutil"
	"github.com/fairmp/fairmp/layers"
)

// stepsCase is one configuration of the fused op's tests.
type stepsCase struct {
	name     string
	cfg      Config
	groups   int
	unknown  float64 // share of nodes of unknown group (−1)
	c        int
	training bool // the phase (InferenceOnly)
}

// stepsCases covers binary (with and without unknown nodes), binary per
// group rows and 3-group attributes, K = 1 and 10, every training mode
// (InferenceOnly in both phases), λs = 0 and > 0, τ = 0.5 and 1, both
// scalings, binding and free projections, c = 2 and 3.
func stepsCases() []stepsCase {
	var out []stepsCase
	type grp struct {
		name     string
		groups   int
		unknown  float64
		perGroup bool
	}
	grps := []grp{{"binary", 2, 0, false}, {"binary-unknown", 2, 0.2, false}, {"binary-rows", 2, 0.1, true}, {"3groups-unknown", 3, 0.15, false}}
	i := 0
	for _, gr := range grps {
		for _, k := range []int{1, 10} {
			for _, mode := range []string{"EndToEnd", "ConstantDual", "InferenceOnly-train", "InferenceOnly-eval"} {
				i++
				cfg := DefaultConfig()
				cfg.K, cfg.PerGroupRows = k, gr.perGroup
				cfg.LambdaS = []float64{0, 1, 3}[i%3]
				cfg.LambdaF = []float64{0.05, 2, 0.3}[i%3]
				cfg.Temperature = []float64{0.5, 1}[i%2]
				if i%4 == 3 {
					cfg.Scaling = Paper
					cfg.LambdaF = 0.002
				}
				tm := EndToEnd
				switch mode {
				case "ConstantDual":
					tm = ConstantDual
				case "InferenceOnly-train", "InferenceOnly-eval":
					tm = InferenceOnly
				}
				cfg.TrainMode = tm
				c := 2 + i%2
				out = append(out, stepsCase{
					name: fmt.Sprintf("%s/K=%d/%s/λs=%v/λf=%v/τ=%v/%v/c=%d", gr.name, k, mode, cfg.LambdaS, cfg.LambdaF, cfg.Temperature, cfg.Scaling, c),
					cfg:  cfg, groups: gr.groups, unknown: gr.unknown, c: c, training: mode == "InferenceOnly-train",
				})
			}
		}
	}
	return out
}

// runLayer builds Forward on x (n × c) and the gradient of Σ W ⊙ F^K
// with respect to x, runs it and returns F^K and dX.
func runLayer(t *testing.T, adj *graph.Matrix, sens []int, cfg Config, training bool, dt tensor.Dtype, xv, wv []float64, c int) (out, dx []float64) {
	t.Helper()
	n := len(sens)
	l, err := New(adj, sens, cfg)
	require.NoError(t, err)
	ph := layers.NewPhase()
	ph.SetTraining(training)
	l.SetPhase(ph)
	g := G.NewGraph()
	x := G.NewMatrix(g, dt, G.WithShape(n, c), G.WithName("X"), G.WithValue(testutil.Tensor(dt, xv, n, c)))
	f, err := l.Forward(x)
	require.NoError(t, err)
	var fv G.Value
	G.Read(f, &fv)
	cost := G.Must(G.Sum(G.Must(G.HadamardProd(f, G.NewConstant(testutil.Tensor(dt, wv, n, c))))))
	grads, err := G.Grad(cost, x)
	require.NoError(t, err)
	testutil.Run(t, g)
	return testutil.ToF64(fv), testutil.ToF64(grads[0].Value())
}

// TestStepsOpMatchesNaive: the fused op's output and final dual (the
// audit's) equal the dense plain-loop FMP's (naiveFMP) to 1e-10 in
// float64 and to float32 rounding in float32, and its gradient with
// respect to X_trans in float32 is the float64 one to float32 rounding,
// on every case of stepsCases on 60 nodes (TestStepsOpFiniteDifferences
// checks the gradients against central differences).
func TestStepsOpMatchesNaive(t *testing.T) {
	rng := rand.New(rand.NewSource(45))
	n := 60
	for _, sc := range stepsCases() {
		gr := randomGraph(t, rng, n, 150)
		adj := graph.NormalizedAdjacency(gr)
		a := naiveNormAdj(gr)
		sens := randSens(rng, n, sc.groups, sc.unknown)
		rows, d := naiveDelta(sens, sc.cfg.PerGroupRows)
		xv := testutil.RandSlice(rng, n*sc.c, -3, 3)
		wv := testutil.RandSlice(rng, n*sc.c, -1, 1)
		var dx64 []float64
		for _, dt := range testutil.Dtypes {
			t.Run(sc.name+"/"+dt.String(), func(t *testing.T) {
				l, err := New(adj, sens, sc.cfg)
				require.NoError(t, err)
				cfg := sc.cfg
				if sc.training {
					cfg.LambdaF = 0 // u ≡ 0 while training
				}
				wantF, us := naiveFMP(a, xv, n, sc.c, d, rows, cfg, l.groupContrast().NormSq(), nil)
				gotF, gotDX := runLayer(t, adj, sens, sc.cfg, sc.training, dt, xv, wv, sc.c)
				atol, rtol := 1e-10, 1e-9
				if dt == tensor.Float32 {
					atol, rtol = testutil.Tol(dt)
					testutil.AllClose(t, "dX f32 vs f64", gotDX, dx64, atol, rtol)
				} else {
					dx64 = gotDX
				}
				testutil.AllClose(t, "F^K", gotF, wantF, atol, rtol)

				ph := layers.NewPhase()
				ph.SetTraining(sc.training)
				l.SetPhase(ph)
				g := G.NewGraph()
				x := G.NewMatrix(g, dt, G.WithShape(n, sc.c), G.WithName("X"), G.WithValue(testutil.Tensor(dt, xv, n, sc.c)))
				au, err := l.forwardAudit(x)
				require.NoError(t, err)
				testutil.Run(t, g)
				rep, err := au.Report()
				require.NoError(t, err)
				testutil.AllClose(t, "u^K", rep.Dual, us[len(us)-1], atol, rtol)
			})
		}
	}
}

// TestStepsOpFiniteDifferences checks the fused op's gradient with
// respect to X_trans against central differences of the dense plain-loop
// FMP (naiveFMP) in float64 and float32: EndToEnd through every step,
// ConstantDual with the duals frozen at their values, InferenceOnly while
// training as the propagation alone (u ≡ 0) and in evaluation as
// ConstantDual.
func TestStepsOpFiniteDifferences(t *testing.T) {
	rng := rand.New(rand.NewSource(46))
	n := 16
	for _, sc := range stepsCases() {
		gr := randomGraph(t, rng, n, 30)
		adj := graph.NormalizedAdjacency(gr)
		a := naiveNormAdj(gr)
		sens := randSens(rng, n, sc.groups, sc.unknown)
		rows, d := naiveDelta(sens, sc.cfg.PerGroupRows)
		xv := testutil.RandSlice(rng, n*sc.c, -2, 2)
		wv := testutil.RandSlice(rng, n*sc.c, -1, 1)
		for _, dt := range testutil.Dtypes {
			t.Run(sc.name+"/"+dt.String(), func(t *testing.T) {
				l, err := New(adj, sens, sc.cfg)
				require.NoError(t, err)
				normSq := l.groupContrast().NormSq()
				cfg := sc.cfg
				var frozen [][]float64
				switch {
				case sc.training:
					cfg.LambdaF = 0 // u ≡ 0 while training
				case cfg.TrainMode != EndToEnd:
					_, frozen = naiveFMP(a, xv, n, sc.c, d, rows, cfg, normSq, nil)
				}
				want, _ := naiveFMP(a, xv, n, sc.c, d, rows, cfg, normSq, nil)
				xp := append([]float64(nil), xv...)
				num := testutil.NumGrad(func() float64 {
					f, _ := naiveFMP(a, xp, n, sc.c, d, rows, cfg, normSq, frozen)
					return dot(f, wv)
				}, xp, 1e-6)
				got, dx := runLayer(t, adj, sens, sc.cfg, sc.training, dt, xv, wv, sc.c)
				atol, rtol := 1e-7, 1e-5
				fa, fr := 1e-10, 1e-9
				if dt == tensor.Float32 {
					atol, rtol = 2e-4, 2e-3
					fa, fr = 1e-4, 1e-4
				}
				testutil.AllClose(t, "F^K", got, want, fa, fr)
				testutil.AllClose(t, "d/dX", dx, num, atol, rtol)
			})
		}
	}
}

// TestStepsOpRunsInAnyOrder: the backward op reads the state of the
// forward run on its input; when another run came between (another
// input, or the other phase), it recomputes it, and the memo of the last
// run never serves a run of the other phase.
func TestStepsOpRunsInAnyOrder(t *testing.T) {
	rng := rand.New(rand.NewSource(47))
	n, c := 40, 2
	gr := randomGraph(t, rng, n, 100)
	adj := graph.NormalizedAdjacency(gr)
	sens := randSens(rng, n, 2, 0.1)
	for _, mode := range []TrainMode{EndToEnd, ConstantDual, InferenceOnly} {
		for _, keep := range []bool{true, false} {
			t.Run(fmt.Sprintf("%v/keep=%v", mode, keep), func(t *testing.T) {
				cfg := DefaultConfig()
				cfg.TrainMode, cfg.K = mode, 3
				l, err := New(adj, sens, cfg)
				require.NoError(t, err)
				ph := layers.NewPhase()
				l.SetPhase(ph)
				op := newStepsOp(l, mode != EndToEnd, ph)
				back := opkit.New(stepsBackSpec, stepsBack{fwd: op.P, at: adj.Transpose()})
				op.KeepBuffers(keep)
				back.KeepBuffers(keep)
				x1 := testutil.Tensor(tensor.Float64, testutil.RandSlice(rng, n*c, -2, 2), n, c)
				x2 := testutil.Tensor(tensor.Float64, testutil.RandSlice(rng, n*c, -2, 2), n, c)
				dy := testutil.Tensor(tensor.Float64, testutil.RandSlice(rng, n*c, -1, 1), n, c)
				run := func(x *tensor.Dense, training bool) ([]float64, []float64) {
					ph.SetTraining(training)
					f, err := op.Do(x)
					require.NoError(t, err)
					fv := testutil.ToF64(f)
					dx, err := back.Do(x, dy)
					require.NoError(t, err)
					return fv, testutil.ToF64(dx)
				}
				for _, training := range []bool{true, false} {
					f1, d1 := run(x1, training)
					// x2's forward run, then x1's backward: the state is redone.
					ph.SetTraining(training)
					_, err := op.Do(x2)
					require.NoError(t, err)
					d, err := back.Do(x1, dy)
					require.NoError(t, err)
					require.Equal(t, d1, testutil.ToF64(d), "backward after another input's forward")
					// The other phase's run, then this one's: no stale memo.
					run(x1, !training)
					f, d2 := run(x1, training)
					require.Equal(t, f1, f, "forward after the other phase's")
					require.Equal(t, d1, d2, "backward after the other phase's")
				}
			})
		}
	}
}
