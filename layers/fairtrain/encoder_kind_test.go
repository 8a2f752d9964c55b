package fairtrain

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/fairmp/fairmp/graph"
	"github.com/fairmp/fairmp/internal/testutil"
	"github.com/fairmp/fairmp/layers"
	"github.com/fairmp/fairmp/layers/fairness"
	"github.com/fairmp/fairmp/layers/internal/flatkind"
	"github.com/fairmp/fairmp/layers/train"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// TestEncoderParamsMatchBuilt: the encoder kind's Params, read from the
// configuration alone, are the names and shapes of a built encoder's
// learnables, on every backbone kind; and the configuration round-trips
// through the kind's JSON.
func TestEncoderParamsMatchBuilt(t *testing.T) {
	ds := biased(t, 40)
	k, err := layers.LookupKind("encoder")
	require.NoError(t, err)
	assert.True(t, k.Composite())
	assert.NotContains(t, layers.BackboneNames(), "encoder")
	for _, kind := range append(layers.BackboneNames(), flatkind.Name) {
		s, body := setupFor(t, ds, kind, tensor.Float32, 3, false)
		body = bodyConfig(body, 5)
		enc, err := NewEncoder(s.Task.Graph, ds.Graph, body, 2, s.Task.Phase)
		require.NoError(t, err, kind)
		cfg, err := k.ConfigOf(enc)
		require.NoError(t, err, kind)
		want, err := k.Params(cfg)
		require.NoError(t, err, kind)
		got := enc.Learnables()
		require.Len(t, want, len(got), kind)
		for i, p := range got {
			assert.Equal(t, p.Name(), want[i].Name, kind)
			assert.Equal(t, []int(p.Shape()), want[i].Shape, kind)
		}
		raw, err := k.EncodeConfig(enc)
		require.NoError(t, err, kind)
		back, err := k.DecodeConfig(raw, tensor.Float32)
		require.NoError(t, err, kind)
		assert.Equal(t, enc.Config().Body.Kind, back.(EncoderConfig).Body.Kind, kind)
		assert.Equal(t, 2, layers.BaseOf(back).Out, kind)
		assert.Equal(t, layers.BaseOf(body).In, layers.BaseOf(back).In, kind)
	}
}

// TestEncoderConfigRefuses: each field a file can get wrong is named.
func TestEncoderConfigRefuses(t *testing.T) {
	good := DefaultEncoderConfig(4, 2)
	require.NoError(t, good.Validate())
	edit := func(f func(obj map[string]any)) EncoderConfig {
		var body map[string]any
		require.NoError(t, json.Unmarshal(good.Body.Config, &body))
		c := good
		f(body)
		raw, err := json.Marshal(body)
		require.NoError(t, err)
		c.Body.Config = raw
		return c
	}
	c := good
	c.Out = 1
	assert.ErrorContains(t, c.Validate(), "classes = 1")
	c = good
	c.Body.Kind = "nope"
	assert.ErrorIs(t, c.Validate(), layers.ErrUnknownKind)
	c = good
	c.Body.Kind = "fmp"
	assert.ErrorContains(t, c.Validate(), "a wrapper")
	c = good
	c.Body = BodySpec{Kind: "encoder", Config: mustJSON(t, DefaultEncoderConfig(4, 3))}
	assert.ErrorContains(t, c.Validate(), "itself an encoder")
	for _, key := range []string{"name", "in", "classes", "seed"} {
		c = edit(func(b map[string]any) { b[key] = 1 })
		assert.ErrorContains(t, c.Validate(), `has the key "`+key+`": leave it out`)
	}
	c = good
	c.Width = 0
	assert.ErrorContains(t, c.Validate(), "width = 0")
	c = good
	c.Body.Config = json.RawMessage(`[1]`)
	assert.ErrorContains(t, c.Validate(), "not a JSON object")
	c = edit(func(b map[string]any) { delete(b, "hidden") })
	assert.ErrorContains(t, c.Validate(), `no key "hidden"`)
	c = edit(func(b map[string]any) { b["Hidden"] = 3 })
	assert.Error(t, c.Validate(), "a miscased key in the body")
	_, err := NewEncoder(G.NewGraph(), nil, DefaultEncoderConfig(4, 3), 2, nil)
	assert.ErrorContains(t, err, "itself an encoder")
}

// TestEncoderConfigBase: the encoder's Base is the body's, so what sets
// a kind's Base by name sets the body's too: Configure's seed and dtype,
// a name given at loading (found by layers/train's
// TestKeptBuffersChangeNothing, which Configure's seed 5 failed while the
// body kept its own seed 1).
func TestEncoderConfigBase(t *testing.T) {
	k, err := layers.LookupKind("encoder")
	require.NoError(t, err)
	cfg, err := k.Configure(4, 3, layers.Options{Dtype: tensor.Float32, Seed: 5})
	require.NoError(t, err)
	b := cfg.(EncoderConfig)
	b.Name = "renamed"
	body, err := b.BodyConfig()
	require.NoError(t, err)
	assert.Equal(t, layers.Base{Name: "renamed", In: 4, Out: 16, Dtype: tensor.Float32, Seed: 5}, layers.BaseOf(body))
	one, err := graph.FromEdges(1, nil)
	require.NoError(t, err)
	m, err := k.Build(G.NewGraph(), one, b, nil)
	require.NoError(t, err)
	assert.Equal(t, "renamed.head.W", m.Learnables()[len(m.Learnables())-2].Name())
}

func mustJSON(t *testing.T, v any) json.RawMessage {
	t.Helper()
	raw, err := json.Marshal(v)
	require.NoError(t, err)
	return raw
}

// TestNIFTYModelIsEncoderAlone: the projector and predictor leave the
// model when training ends, so its learnables are what its kind's
// configuration builds (before, they were 8 more and the model had no
// file form).
func TestNIFTYModelIsEncoderAlone(t *testing.T) {
	ds := biased(t, 60)
	s, cfg := setupFor(t, ds, "gcn", tensor.Float64, 2, false)
	tc := train.DefaultConfig()
	tc.Epochs = 2
	fit, err := fairness.Fit(context.Background(), DefaultNIFTYConfig(), cfg, s, tc)
	require.NoError(t, err)
	enc := fit.Model.(*Encoder)
	assert.Len(t, enc.Learnables(), len(enc.Body().Learnables())+2)
	trained, err := train.Trained(enc)
	require.NoError(t, err)
	assert.True(t, trained)
}

// TestFairVGNNFoldedKeepsPredictions: the folded encoder computes what
// the masked encoder does, to rounding, on every library kind, and is of
// the encoder kind; the masked encoder is left as it was.
func TestFairVGNNFoldedKeepsPredictions(t *testing.T) {
	ds := biased(t, 60)
	for _, kind := range []string{"mlp", "gcn", "sgc", "appnp", "gat", "jknet"} {
		for _, dt := range testutil.Dtypes {
			s, cfg := setupFor(t, ds, kind, dt, 2, false)
			tc := train.DefaultConfig()
			tc.Epochs = 2
			c := quickVGNN()
			c.GeneratorAdam.LR = 0.2 // a mask far from 1 on some channels
			fit, err := fairness.Fit(context.Background(), c, cfg, s, tc)
			require.NoError(t, err, "%s %v", kind, dt)
			m := fit.Model.(*MaskedEncoder)
			before, err := train.Logits(m, s.Task)
			require.NoError(t, err)
			keep := m.Keep()
			require.NotNil(t, keep)
			t2 := *s.Task
			t2.Graph = G.NewGraph()
			t2.X, err = train.FeatureNode(t2.Graph, dt, ds.Features, ds.N(), ds.NumFeatures, "x")
			require.NoError(t, err)
			t2.Phase = layers.NewPhase()
			enc, err := m.Folded(t2.Graph, ds.Graph, t2.Phase)
			require.NoError(t, err, "%s %v", kind, dt)
			assert.Equal(t, keep, m.Keep(), "m keeps its mask")
			after, err := train.Logits(enc, &t2)
			require.NoError(t, err)
			again, err := train.Logits(m, s.Task)
			require.NoError(t, err)
			assert.Equal(t, testutil.ToF64(before), testutil.ToF64(again), "m is unchanged")
			tol := 1e-10
			if dt == tensor.Float32 {
				tol = 1e-4
			}
			b, a := testutil.ToF64(before), testutil.ToF64(after)
			differs := false
			for i := range b {
				require.InDelta(t, b[i], a[i], tol, "%s %v logit %d", kind, dt, i)
			}
			for _, p := range keep {
				differs = differs || p < 0.9
			}
			assert.True(t, differs, "%s %v: a mask of ones would fold trivially", kind, dt)
			k, err := layers.KindOf(enc)
			require.NoError(t, err)
			assert.Equal(t, "encoder", k.Name())
		}
	}
}

// activatesInput is a BlockModel that applies an activation to the
// features before its weight: a mask does not fold into it.
type activatesInput struct{ w *G.Node }

func (m activatesInput) Forward(x *G.Node) (*G.Node, error) { return layers.Forward(m, x) }
func (m activatesInput) Learnables() G.Nodes                { return G.Nodes{m.w} }
func (m activatesInput) Matrix() *graph.Matrix              { return nil }
func (m activatesInput) Compute(f layers.Flow, x layers.Value) (layers.Value, error) {
	h, err := f.Activate(x, layers.ELU(1))
	if err != nil {
		return layers.Value{}, err
	}
	return f.Dense(h, m.w, nil, layers.Activation{})
}

// concatsInput jumps the features and their propagation side by side.
type concatsInput struct{ activatesInput }

func (m concatsInput) Compute(f layers.Flow, x layers.Value) (layers.Value, error) {
	ax, err := f.Propagate(x, layers.Hop{})
	if err != nil {
		return layers.Value{}, err
	}
	h, err := f.Jump(layers.JKConcat, x, ax)
	if err != nil {
		return layers.Value{}, err
	}
	return f.Dense(h, m.w, nil, layers.Activation{})
}

// TestFairVGNNFoldRefuses: a body the mask does not fold into is named,
// with the reason, and nothing changes; the twoReaders body (GraphSAGE's
// x·Ws + (Ãx)·Wn) folds into both readers.
func TestFairVGNNFoldRefuses(t *testing.T) {
	g := G.NewGraph()
	w := G.NewMatrix(g, tensor.Float64, G.WithShape(3, 2), G.WithName("w"), G.WithInit(G.Ones()))
	w6 := G.NewMatrix(g, tensor.Float64, G.WithShape(6, 2), G.WithName("w6"), G.WithInit(G.Ones()))
	_, err := maskWeights(activatesInput{w}, 3)
	assert.ErrorContains(t, err, "an activation reads the features")
	_, err = maskWeights(concatsInput{activatesInput{w6}}, 3)
	assert.ErrorContains(t, err, "cat aggregation reads the features")
	_, err = maskWeights(fakeBody{w}, 3)
	assert.ErrorContains(t, err, "not declared in a Flow's primitives")
	ws := G.NewMatrix(g, tensor.Float64, G.WithShape(3, 2), G.WithName("ws"), G.WithInit(G.Ones()))
	wn := G.NewMatrix(g, tensor.Float64, G.WithShape(3, 2), G.WithName("wn"), G.WithInit(G.Ones()))
	wh := G.NewMatrix(g, tensor.Float64, G.WithShape(2, 2), G.WithName("wh"), G.WithInit(G.Ones()))
	got, err := maskWeights(twoReaders{ws, wn, wh}, 3)
	require.NoError(t, err)
	assert.Equal(t, G.Nodes{ws, wn}, got)

	// On a trained model: Folded refuses, in m's terms.
	ds := biased(t, 40)
	s, cfg := setupFor(t, ds, flatkind.Name, tensor.Float64, 2, false)
	tc := train.DefaultConfig()
	tc.Epochs = 1
	c := quickVGNN()
	c.Clip = 0
	fit, err := fairness.Fit(context.Background(), c, cfg, s, tc)
	require.NoError(t, err)
	m := fit.Model.(*MaskedEncoder)
	_, err = m.Folded(G.NewGraph(), ds.Graph, nil)
	assert.ErrorContains(t, err, "not declared in a Flow's primitives")
	assert.False(t, errors.Is(err, layers.ErrUnknownKind))
}
