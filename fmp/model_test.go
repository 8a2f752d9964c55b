package fmp_test

import (
	"bytes"
	"context"
	"math"
	"testing"

	"github.com/fairmp/fairmp/fmp"
	"github.com/fairmp/fairmp/graph/features"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fairmp/fairmp/fmp/modelio"
	"github.com/fairmp/fairmp/graph"
	"github.com/fairmp/fairmp/graph/datasets"
	"github.com/fairmp/fairmp/internal/testutil"
	"github.com/fairmp/fairmp/layers"
	"github.com/fairmp/fairmp/layers/train"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

func smallSynthetic(t testing.TB) *datasets.Dataset {
	t.Helper()
	c := datasets.DefaultSyntheticConfig()
	c.N, c.MeanDegree = 300, 6
	d, err := datasets.Synthetic(c)
	require.NoError(t, err)
	return d
}

func evalLogits(t testing.TB, g *G.ExprGraph, nodes ...*G.Node) [][]float64 {
	t.Helper()
	vals := make([]G.Value, len(nodes))
	var reads G.Nodes
	for i, n := range nodes {
		reads = append(reads, G.Read(n, &vals[i]))
	}
	m := G.NewTapeMachine(g.SubgraphRoots(reads...))
	defer m.Close()
	if err := m.RunAll(); err != nil {
		t.Fatal(err)
	}
	out := make([][]float64, len(nodes))
	for i, v := range vals {
		out[i] = testutil.ToF64(v)
	}
	return out
}

// TestModelTrainSaveLoad trains MLP → FMP with the one trainer for a few
// epochs (float32 and float64), checks that the model's output is FMP
// applied to its MLP's output, that training lowered the loss, and that
// modelio.Save / modelio.Load rebuild a model with bit-identical logits.
func TestModelTrainSaveLoad(t *testing.T) {
	d := smallSynthetic(t)
	for _, dt := range testutil.Dtypes {
		g := G.NewGraph()
		x, err := train.FeatureNode(g, dt, d.Features, d.N(), d.NumFeatures, "X")
		require.NoError(t, err)
		phase := layers.NewPhase()
		cfg := fmp.DefaultModelConfig(d.NumFeatures, 2)
		cfg.MLP.Dtype = dt
		cfg.FMP.LambdaF = 2
		m, err := fmp.NewModel(g, d.Graph, d.Sens, cfg, phase)
		require.NoError(t, err)
		task := &train.Task{Graph: g, X: x, Labels: d.Labels, Train: d.Split.Train, Val: d.Split.Val, Classes: 2, Phase: phase}
		tc := train.DefaultConfig()
		tc.Epochs, tc.Adam.LR = 30, 0.01
		res, err := train.Fit(context.Background(), m, task, tc)
		require.NoError(t, err)
		if !(res.History[len(res.History)-1].CE < res.History[0].CE) {
			t.Errorf("%v: cross-entropy %v → %v did not fall", dt, res.History[0].CE, res.History[len(res.History)-1].CE)
		}
		out, err := m.Forward(x)
		require.NoError(t, err)
		h, err := m.Backbone().Forward(x)
		require.NoError(t, err)
		vals := evalLogits(t, g, out, h)
		// The model's output is FMP applied to the MLP's logits.
		rep, err := fmp.Explain(testutil.Tensor(dt, vals[1], d.N(), 2), graph.NormalizedAdjacency(d.Graph), d.Sens, cfg.FMP)
		require.NoError(t, err)
		atol, rtol := testutil.Tol(dt)
		testutil.AllClose(t, "model = FMP(MLP)", vals[0], rep.Output, 10*atol, 10*rtol)

		var buf bytes.Buffer
		assert.ErrorIs(t, modelio.Save(&buf, m, modelio.DefaultSaveConfig()), fmp.ErrNotRecorded, "saving before Record")
		buf.Reset()
		xs, err := features.NewDense(d.Features, d.N(), d.NumFeatures)
		require.NoError(t, err)
		require.NoError(t, m.Record(xs))
		if err := modelio.Save(&buf, m, modelio.DefaultSaveConfig()); err != nil {
			t.Fatal(err)
		}
		g2 := G.NewGraph()
		x2, _ := train.FeatureNode(g2, dt, d.Features, d.N(), d.NumFeatures, "X")
		lm, err := modelio.Load(&buf, g2, modelio.Env{Graph: d.Graph, Sens: d.Sens})
		require.NoError(t, err)
		m2, ok := lm.(*fmp.Model)
		if !ok {
			t.Fatalf("Load returned %T, want *fmp.Model", lm)
		}
		if m2.Config() != cfg.FMP {
			t.Errorf("loaded FMP config %+v, want %+v", m2.Config(), cfg.FMP)
		}
		out2, err := m2.Forward(x2)
		require.NoError(t, err)
		testutil.AllClose(t, "loaded model logits", evalLogits(t, g2, out2)[0], vals[0], 0, 0)
		// Loading without the graph is an error.
		if err := modelio.Save(&buf, m, modelio.DefaultSaveConfig()); err != nil {
			t.Fatal(err)
		}
		if _, err := modelio.Load(&buf, G.NewGraph(), modelio.Env{}); err == nil {
			t.Error("Load without a graph succeeded")
		}
	}
}

// TestModelInferenceOnlyTraining: in InferenceOnly mode the trainer's
// training passes see propagation only, so training equals training the
// λf = 0 model (same seeds, bit-identical parameters), while evaluation
// applies the fairness steps.
func TestModelInferenceOnlyTraining(t *testing.T) {
	d := smallSynthetic(t)
	train := func(mode fmp.TrainMode, lf float64) ([]float64, []float64) {
		g := G.NewGraph()
		x, _ := train.FeatureNode(g, tensor.Float64, d.Features, d.N(), d.NumFeatures, "X")
		phase := layers.NewPhase()
		cfg := fmp.DefaultModelConfig(d.NumFeatures, 2)
		cfg.FMP.TrainMode, cfg.FMP.LambdaF = mode, lf
		m, err := fmp.NewModel(g, d.Graph, d.Sens, cfg, phase)
		require.NoError(t, err)
		task := &train.Task{Graph: g, X: x, Labels: d.Labels, Train: d.Split.Train, Classes: 2, Phase: phase}
		tc := train.DefaultConfig()
		tc.Epochs, tc.Select = 15, train.SelectLast
		if _, err := train.Fit(context.Background(), m, task, tc); err != nil {
			t.Fatal(err)
		}
		var w []float64
		for _, p := range m.Learnables() {
			w = append(w, testutil.ToF64(p.Value())...)
		}
		out, _ := m.Forward(x)
		return w, evalLogits(t, g, out)[0]
	}
	w0, out0 := train(fmp.EndToEnd, 0)
	wi, outi := train(fmp.InferenceOnly, 4)
	we, _ := train(fmp.EndToEnd, 4)
	testutil.AllClose(t, "InferenceOnly weights = λf=0 weights", wi, w0, 0, 0)
	diff, diffE := 0.0, 0.0
	for i := range out0 {
		diff = math.Max(diff, math.Abs(outi[i]-out0[i]))
	}
	for i := range w0 {
		diffE = math.Max(diffE, math.Abs(we[i]-w0[i]))
	}
	if diff < 1e-3 {
		t.Errorf("InferenceOnly evaluation output differs from λf = 0 by only %v", diff)
	}
	if diffE < 1e-6 {
		t.Errorf("EndToEnd λf = 4 weights equal λf = 0 weights (diff %v): the test cannot tell", diffE)
	}
}

func TestModelConfigJSON(t *testing.T) {
	for _, s := range []fmp.Scaling{fmp.Normalized, fmp.Paper} {
		b, err := s.MarshalText()
		require.NoError(t, err)
		var r fmp.Scaling
		if err := r.UnmarshalText(b); err != nil || r != s {
			t.Errorf("Scaling %v round trip: %v, %v", s, r, err)
		}
	}
	for _, m := range []fmp.TrainMode{fmp.EndToEnd, fmp.ConstantDual, fmp.InferenceOnly} {
		b, err := m.MarshalText()
		require.NoError(t, err)
		var r fmp.TrainMode
		if err := r.UnmarshalText(b); err != nil || r != m {
			t.Errorf("TrainMode %v round trip: %v, %v", m, r, err)
		}
	}
	var s fmp.Scaling
	if s.UnmarshalText([]byte("paper")) == nil {
		t.Error("lower-case scaling name accepted")
	}
	if _, err := fmp.Scaling(0).MarshalText(); err == nil {
		t.Error("invalid scaling encoded")
	}
	c := fmp.DefaultModelConfig(3, 2)
	c.MLP.Out = 1
	if c.Validate() == nil {
		t.Error("one class accepted")
	}
}

// TestModelWithFMP: the two-stage model shares the backbone's parameter
// nodes and its output is FMP(cfg) applied to the backbone's logits.
func TestModelWithFMP(t *testing.T) {
	d := smallSynthetic(t)
	g := G.NewGraph()
	x, _ := train.FeatureNode(g, tensor.Float64, d.Features, d.N(), d.NumFeatures, "X")
	cfg := fmp.DefaultModelConfig(d.NumFeatures, 2)
	cfg.FMP.LambdaF = 0
	m, err := fmp.NewModel(g, d.Graph, d.Sens, cfg, nil)
	require.NoError(t, err)
	fc := cfg.FMP
	fc.LambdaF, fc.Temperature = 3, 0.5
	m2, err := m.WithFMP(fc)
	require.NoError(t, err)
	for i, p := range m2.Learnables() {
		if p != m.Learnables()[i] {
			t.Fatalf("learnable %d is a different node", i)
		}
	}
	o1, _ := m.Forward(x)
	o2, _ := m2.Forward(x)
	h, _ := m.Backbone().Forward(x)
	v := evalLogits(t, g, o1, o2, h)
	rep, err := fmp.Explain(testutil.Tensor(tensor.Float64, v[2], d.N(), 2), graph.NormalizedAdjacency(d.Graph), d.Sens, fc)
	require.NoError(t, err)
	testutil.AllClose(t, "WithFMP output", v[1], rep.Output, 1e-10, 1e-9)
	testutil.AllClose(t, "λf = 0 output is the baseline", v[0], rep.Baseline, 1e-10, 1e-9)
	if rep.MaxAbsInfluence < 1e-3 {
		t.Errorf("influence %v: the two outputs barely differ", rep.MaxAbsInfluence)
	}
	bad := fc
	bad.K = 0
	if _, err := m.WithFMP(bad); err == nil {
		t.Error("WithFMP accepted K = 0")
	}
}

// TestOnHonoursPropagation: On builds Ã as its OnConfig says (here
// without self-loops, so that Ã has no diagonal), the model's OnConfig
// returns it, and NewModel is NewMLP followed by On with the same
// OnConfig: the same matrix and the same logits.
func TestOnHonoursPropagation(t *testing.T) {
	d := smallSynthetic(t)
	cfg := fmp.DefaultModelConfig(d.NumFeatures, 2)
	cfg.Propagation = layers.Propagation{AddSelfLoops: false, Normalize: true}
	cfg.FMP.LambdaF = 3

	g1 := G.NewGraph()
	x1, err := train.FeatureNode(g1, tensor.Float64, d.Features, d.N(), d.NumFeatures, "X")
	require.NoError(t, err)
	m1, err := fmp.NewModel(g1, d.Graph, d.Sens, cfg, nil)
	require.NoError(t, err)

	g2 := G.NewGraph()
	x2, err := train.FeatureNode(g2, tensor.Float64, d.Features, d.N(), d.NumFeatures, "X")
	require.NoError(t, err)
	mlp, err := layers.NewMLP(g2, nil, cfg.MLP, nil)
	require.NoError(t, err)
	m2, err := fmp.On(mlp, d.Graph, d.Sens, cfg.OnConfig, nil)
	require.NoError(t, err)

	assert.Equal(t, cfg.OnConfig, m2.OnConfig())
	assert.Equal(t, cfg.OnConfig, m1.OnConfig())
	for _, m := range []*fmp.Model{m1, m2} {
		a := m.Matrix()
		for i := 0; i < d.N(); i++ {
			_, diag := a.At(i, i)
			require.Falsef(t, diag, "Ã has a diagonal entry at node %d: the propagation without self-loops was ignored", i)
		}
		assert.Equal(t, a.NNZ(), 2*d.Graph.NumEdges())
	}
	o1, err := m1.Forward(x1)
	require.NoError(t, err)
	o2, err := m2.Forward(x2)
	require.NoError(t, err)
	v1, v2 := evalLogits(t, g1, o1), evalLogits(t, g2, o2)
	assert.Equal(t, v1[0], v2[0], "NewModel and NewMLP+On give other logits")

	bad := cfg.OnConfig
	bad.Propagation.Improved = true
	_, err = fmp.On(mlp, d.Graph, d.Sens, bad, nil)
	assert.ErrorContains(t, err, "Improved without AddSelfLoops")
}

// TestSecondModelInTheSameGraph: once an FMP model has been trained in a
// gorgonia graph (its backward ops are in it), another model trains in
// the same graph. gorgonia's differentiation analysis walks the whole
// graph and refused ops that are not symbolic-differentiation ops
// ("being unable to differentiate FairGradBackF ... would leave a
// portion of the graph unreachable"); the backward ops now declare that
// no input of theirs is differentiable (a Spec without Grad).
func TestSecondModelInTheSameGraph(t *testing.T) {
	d := smallSynthetic(t)
	g := G.NewGraph()
	x, err := train.FeatureNode(g, tensor.Float64, d.Features, d.N(), d.NumFeatures, "x")
	require.NoError(t, err)
	ph := layers.NewPhase()
	gcn, err := layers.NewGCN(g, d.Graph, layers.DefaultGCNConfig(d.NumFeatures, 2), ph)
	require.NoError(t, err)
	m, err := fmp.On(gcn, d.Graph, d.Sens, fmp.DefaultOnConfig(), ph)
	require.NoError(t, err)
	tc := train.DefaultConfig()
	tc.Epochs = 3
	_, err = train.Fit(context.Background(), m, &train.Task{Graph: g, X: x, Labels: d.Labels, Train: d.Split.Train, Val: d.Split.Val, Classes: 2, Phase: ph}, tc)
	require.NoError(t, err)
	ph2 := layers.NewPhase()
	mc := layers.DefaultMLPConfig(d.NumFeatures, 2)
	mc.Name = "mlp2"
	mlp, err := layers.NewMLP(g, nil, mc, ph2)
	require.NoError(t, err)
	_, err = train.Fit(context.Background(), mlp, &train.Task{Graph: g, X: x, Labels: d.Labels, Train: d.Split.Train, Val: d.Split.Val, Classes: 2, Phase: ph2}, tc)
	assert.NoError(t, err)
}
