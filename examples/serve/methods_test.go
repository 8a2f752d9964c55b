package main

import (
	"bytes"
	"context"
	"io"
	"math/rand"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/fairmp/fairmp/fmp"
	"github.com/fairmp/fairmp/fmp/modelio"
	"github.com/fairmp/fairmp/graph/features"
	"github.com/fairmp/fairmp/layers"
	"github.com/fairmp/fairmp/layers/fairness"
	"github.com/fairmp/fairmp/layers/fairtrain"
	"github.com/fairmp/fairmp/layers/train"
)

// TestServesMethodModels (issue 54, item 2): FMP on the encoder FairGNN,
// NIFTY or FairVGNN trains (FairVGNN's mask folded in), saved with its
// schema, is served: a new node is answered, with the scorer's
// probability on the whole grown graph. Before, such a model had no
// model file.
func TestServesMethodModels(t *testing.T) {
	f := getFixture(t)
	ds := f.ds
	vgnn := fairtrain.DefaultFairVGNNConfig()
	vgnn.Masks, vgnn.DiscriminatorSteps, vgnn.ClassifierSteps, vgnn.GeneratorSteps = 2, 1, 2, 1
	for _, method := range []fairness.Method{fairtrain.DefaultFairGNNConfig(), fairtrain.DefaultNIFTYConfig(), vgnn} {
		t.Run(method.Name(), func(t *testing.T) {
			newTask := func() *train.Task {
				g := G.NewGraph()
				x, err := train.FeatureNode(g, tensor.Float64, ds.Features, ds.N(), ds.NumFeatures, "x")
				require.NoError(t, err)
				return &train.Task{Graph: g, X: x, Labels: ds.Labels, Train: ds.Split.Train, Val: ds.Split.Val, Classes: 2, Phase: layers.NewPhase()}
			}
			task := newTask()
			gc := layers.DefaultGCNConfig(ds.NumFeatures, 2)
			gc.Hidden = 8
			tc := train.DefaultConfig()
			tc.Epochs = 3
			fit, err := fairness.Fit(context.Background(), method, gc, fairness.NewSetup(ds.Graph, task, ds.Sens), tc)
			require.NoError(t, err)
			m := fit.Model
			if me, ok := m.(*fairtrain.MaskedEncoder); ok {
				task = newTask()
				m, err = me.Folded(task.Graph, ds.Graph, task.Phase)
				require.NoError(t, err)
			}
			on := fmp.DefaultOnConfig()
			on.FMP.K = 2
			fm, err := fmp.On(m, ds.Graph, ds.Sens, on, task.Phase)
			require.NoError(t, err)
			xs, err := features.NewDense(ds.Features, ds.N(), ds.NumFeatures)
			require.NoError(t, err)
			require.NoError(t, fm.Record(xs))
			schema := ds.Schema()
			var buf bytes.Buffer
			require.NoError(t, modelio.Save(&buf, fm, modelio.SaveConfig{Features: &schema}))
			fc := *f
			fc.model, fc.keyFile = filepath.Join(t.TempDir(), "model.fmp"), ""
			require.NoError(t, os.WriteFile(fc.model, buf.Bytes(), 0o644))

			s, srv, _ := fc.open(t, filepath.Join(t.TempDir(), "serve.log"))
			defer stop(t, s, srv)
			assert.Equal(t, "fmp", s.sc.Header().Kind)
			rng := rand.New(rand.NewSource(3))
			status, b, _, err := post(srv.Client(), srv.URL, body(fc.newNode("new", 5, rng, "n1", "n2")))
			require.NoError(t, err)
			require.Equal(t, http.StatusOK, status, string(b))
			var ans answer
			decode(t, b, &ans)
			require.Len(t, ans.Nodes, 1)

			out := scoreLastWhole(t, s)
			assert.InDelta(t, out.Probs[1], ans.Nodes[0].Probability, 1e-12)
		})
	}
}

// TestServesThreeClasses (issue 57, item 5): a three-class model is
// served: the answer carries the class decided and every class's
// probability, the scorer's on the grown graph; probability and decision
// stay class 1's. A binary model's answers have neither field.
func TestServesThreeClasses(t *testing.T) {
	f := getFixture(t)
	ds := f.ds
	labels := make([]int, len(ds.Labels))
	for i, y := range ds.Labels {
		labels[i] = y
		if y >= 0 && i%3 == 0 {
			labels[i] = 2
		}
	}
	g := G.NewGraph()
	x, err := train.FeatureNode(g, tensor.Float64, ds.Features, ds.N(), ds.NumFeatures, "x")
	require.NoError(t, err)
	task := &train.Task{Graph: g, X: x, Labels: labels, Train: ds.Split.Train, Val: ds.Split.Val, Classes: 3, Phase: layers.NewPhase()}
	gc := layers.DefaultGCNConfig(ds.NumFeatures, 3)
	gc.Hidden = 8
	tc := train.DefaultConfig()
	tc.Epochs = 5
	fit, err := fairness.Fit(context.Background(), nil, gc, fairness.NewSetup(ds.Graph, task, ds.Sens), tc)
	require.NoError(t, err)
	schema := ds.Schema()
	var buf bytes.Buffer
	require.NoError(t, modelio.Save(&buf, fit.Model, modelio.SaveConfig{Features: &schema}))
	fc := *f
	fc.model, fc.keyFile = filepath.Join(t.TempDir(), "model.fmp"), ""
	require.NoError(t, os.WriteFile(fc.model, buf.Bytes(), 0o644))

	s, srv, _ := fc.open(t, filepath.Join(t.TempDir(), "serve.log"))
	defer stop(t, s, srv)
	rng := rand.New(rand.NewSource(3))
	status, b, _, err := post(srv.Client(), srv.URL, body(fc.newNode("new", 5, rng, "n1", "n2")))
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, status, string(b))
	var ans struct {
		Nodes []struct {
			Probability   float64   `json:"probability"`
			Decision      int       `json:"decision"`
			Class         *int      `json:"class"`
			Probabilities []float64 `json:"probabilities"`
		} `json:"nodes"`
	}
	decode(t, b, &ans)
	require.Len(t, ans.Nodes, 1)
	a := ans.Nodes[0]
	require.NotNil(t, a.Class)
	require.Len(t, a.Probabilities, 3)

	out := scoreLastWhole(t, s)
	for k := range 3 {
		assert.InDelta(t, out.Probs[k], a.Probabilities[k], 1e-12, "class %d", k)
	}
	assert.Equal(t, argmax(out.Probs), *a.Class)
	assert.Equal(t, a.Probabilities[1], a.Probability)
	assert.Equal(t, map[bool]int{true: 1, false: 0}[*a.Class == 1], a.Decision)
	assert.NotContains(t, string(b), "null")

	// /stats answers for a three-class model.
	resp, err := srv.Client().Get(srv.URL + "/stats")
	require.NoError(t, err)
	sb, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode, string(sb))
	var st3 stats
	decode(t, sb, &st3)
}
