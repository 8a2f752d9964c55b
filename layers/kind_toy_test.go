package layers_test

// This file is the proof that a model kind is declared in one place: a
// toy model (a self term plus a mean-aggregation term, as GraphSAGE's
// layer) is declared here, in a test, and no other file of the library
// knows of it. It then trains full-batch (train.Fit) and in mini-batches
// (minibatch.Fit), is saved and loaded alone and under FMP
// (modelio), and is built by name (layers.LookupKind), like the
// library's own kinds.

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"math/rand"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/fairmp/fairmp/fmp"
	"github.com/fairmp/fairmp/fmp/modelio"
	"github.com/fairmp/fairmp/graph"
	"github.com/fairmp/fairmp/graph/datasets"
	"github.com/fairmp/fairmp/graph/features"
	"github.com/fairmp/fairmp/layers"
	"github.com/fairmp/fairmp/layers/minibatch"
	"github.com/fairmp/fairmp/layers/train"
)

// toyConfig configures the toy: logits = X·Wself + (ÃX)·Wnbr, float64.
type toyConfig struct {
	layers.Base
	Propagation layers.Propagation `json:"propagation"`
}

func defaultToyConfig(in, classes int) toyConfig {
	return toyConfig{Base: layers.DefaultBase("toy", in, classes), Propagation: layers.DefaultPropagation()}
}

func (c toyConfig) Validate() error {
	if err := c.Base.Validate(); err != nil {
		return err
	}
	if c.Dtype != tensor.Float64 {
		return fmt.Errorf("Dtype %v: the toy is float64 only", c.Dtype)
	}
	return c.Propagation.Validate()
}

// toy is the model.
type toy struct {
	cfg      toyConfig
	a        *graph.Matrix
	self, nb *G.Node
}

// kindToy is the toy's declaration: the one line of the library's
// machinery a new model needs.
var kindToy = layers.MustDeclare(layers.KindSpec[toyConfig, *toy]{
	Name:        "toy",
	Title:       "Toy",
	Summary:     "a self term plus a mean-aggregation term (a test's model)",
	Default:     defaultToyConfig,
	New:         newToy,
	Config:      func(m *toy) toyConfig { return m.cfg },
	Propagation: func(c toyConfig) layers.Propagation { return c.Propagation },
	Params: func(c toyConfig) []layers.Param {
		return []layers.Param{{Name: c.Name + ".self", Shape: []int{c.In, c.Out}}, {Name: c.Name + ".nbr", Shape: []int{c.In, c.Out}}}
	},
})

func newToy(g *G.ExprGraph, gr *graph.Graph, cfg toyConfig, _ *layers.Phase) (*toy, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	a, err := cfg.Propagation.Matrix(gr)
	if err != nil {
		return nil, err
	}
	rng := rand.New(rand.NewSource(cfg.Seed))
	w := func(suffix string) *G.Node {
		v := layers.GlorotUniform(rng, cfg.Dtype, cfg.In, cfg.Out)
		return G.NewMatrix(g, cfg.Dtype, G.WithShape(cfg.In, cfg.Out), G.WithName(cfg.Name+suffix), G.WithValue(v))
	}
	return &toy{cfg: cfg, a: a, self: w(".self"), nb: w(".nbr")}, nil
}

func (m *toy) Learnables() G.Nodes   { return G.Nodes{m.self, m.nb} }
func (m *toy) Matrix() *graph.Matrix { return m.a }

func (m *toy) Forward(x *G.Node) (*G.Node, error) { return layers.Forward(m, x) }

// Compute is the toy's one declaration: X·Wself + (ÃX)·Wnbr in the
// primitives every execution path implements.
func (m *toy) Compute(f layers.Flow, x layers.Value) (layers.Value, error) {
	ax, err := f.Propagate(x, layers.Hop{})
	if err != nil {
		return layers.Value{}, err
	}
	self, err := f.Dense(x, m.self, nil, layers.Activation{})
	if err != nil {
		return layers.Value{}, err
	}
	nbr, err := f.Dense(ax, m.nb, nil, layers.Activation{})
	if err != nil {
		return layers.Value{}, err
	}
	return f.Combine([]float64{1, 1}, self, nbr)
}

func toyData(t *testing.T) *datasets.Dataset {
	t.Helper()
	c := datasets.DefaultSyntheticConfig()
	c.N, c.MeanDegree = 300, 6
	ds, err := datasets.Synthetic(c)
	require.NoError(t, err)
	return ds
}

func toyTask(t *testing.T, ds *datasets.Dataset) *train.Task {
	t.Helper()
	g := G.NewGraph()
	x, err := train.FeatureNode(g, tensor.Float64, ds.Features, ds.N(), ds.NumFeatures, "x")
	require.NoError(t, err)
	return &train.Task{Graph: g, X: x, Labels: ds.Labels, Train: ds.Split.Train, Val: ds.Split.Val, Classes: 2, Phase: layers.NewPhase()}
}

func TestToyKind(t *testing.T) {
	ds := toyData(t)
	k, err := layers.LookupKind("toy")
	require.NoError(t, err)
	assert.Same(t, kindToy, k)
	assert.True(t, k.Blocks(), "the toy implements BlockModel")
	assert.False(t, k.HasHidden())

	// Built by name and trained full-batch.
	cfg, err := k.Configure(ds.NumFeatures, 2, layers.DefaultOptions())
	require.NoError(t, err)
	task := toyTask(t, ds)
	m, err := k.Build(task.Graph, ds.Graph, cfg, task.Phase)
	require.NoError(t, err)
	hops, err := layers.Hops(m.(layers.BlockModel))
	require.NoError(t, err)
	assert.Equal(t, 1, hops, "read from Compute")
	tc := train.DefaultConfig()
	tc.Epochs, tc.Adam.LR = 60, 0.05
	res, err := train.Fit(context.Background(), m, task, tc)
	require.NoError(t, err)
	assert.Less(t, res.Last.CE, res.History[0].CE, "full-batch training lowers the loss")
	want, err := train.Predict(m, task, nil)
	require.NoError(t, err)

	// Saved and loaded, alone and as FMP's backbone.
	for _, wrap := range []bool{false, true} {
		saved := m
		if wrap {
			fm, err := fmp.On(m, ds.Graph, ds.Sens, fmp.DefaultOnConfig(), task.Phase)
			require.NoError(t, err)
			xs, err := features.NewDense(ds.Features, ds.N(), ds.NumFeatures)
			require.NoError(t, err)
			require.NoError(t, fm.Record(xs), "a model file keeps FMP's recorded duals")
			saved = fm
		}
		var buf bytes.Buffer
		require.NoError(t, modelio.Save(&buf, saved, modelio.DefaultSaveConfig()))
		task2 := toyTask(t, ds)
		loaded, err := modelio.Load(&buf, task2.Graph, modelio.Env{Graph: ds.Graph, Phase: task2.Phase, Sens: ds.Sens})
		require.NoError(t, err, "wrapped in FMP: %v", wrap)
		lk, err := layers.KindOf(loaded)
		require.NoError(t, err)
		ref, err := train.Predict(saved, task, nil)
		require.NoError(t, err)
		got, err := train.Predict(loaded, task2, nil)
		require.NoError(t, err)
		assert.Equal(t, ref.Probs, got.Probs, "predictions after a save and load (FMP: %v)", wrap)
		if wrap {
			assert.Equal(t, "fmp", lk.Name())
		} else {
			assert.Equal(t, "toy", lk.Name())
			assert.Equal(t, want.Probs, got.Probs)
		}
	}

	// Trained in mini-batches: with every neighbour, the whole-graph
	// layer-wise logits equal the full-batch model's with the same
	// parameters.
	adj, err := minibatch.Matrix(cfg, ds.Graph)
	require.NoError(t, err)
	x, err := features.NewDense(ds.Features, ds.N(), ds.NumFeatures)
	require.NoError(t, err)
	mc := minibatch.DefaultConfig(cfg)
	mc.Train.Epochs, mc.Train.Adam.LR = 5, 0.05
	mc.Sampler.BatchSize, mc.Sampler.Fanouts = 64, []int{-1}
	mres, err := minibatch.Fit(context.Background(), &minibatch.Task{Adj: adj, Features: x, Labels: ds.Labels,
		Train: ds.Split.Train, Val: ds.Split.Val, Classes: 2}, mc)
	require.NoError(t, err)
	assert.Equal(t, 5, mres.Epochs)
	z, err := minibatch.Logits(cfg, mres.Params, adj, x)
	require.NoError(t, err)
	task3 := toyTask(t, ds)
	full, err := minibatch.NewModel(task3.Graph, ds.Graph, cfg, nil, mres.Params)
	require.NoError(t, err)
	logits, err := train.Logits(full, task3)
	require.NoError(t, err)
	zf, lf := z.Data().([]float64), logits.Data().([]float64)
	require.Len(t, zf, len(lf))
	for i := range zf {
		if math.Abs(zf[i]-lf[i]) > 1e-10 {
			t.Fatalf("layer-wise logit %d = %v, full-batch %v", i, zf[i], lf[i])
		}
	}
}
