package score_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	G "gorgonia.org/gorgonia"

	"github.com/fairmp/fairmp/fmp"
	"github.com/fairmp/fairmp/fmp/modelio"
	"github.com/fairmp/fairmp/fmp/score"
	"github.com/fairmp/fairmp/graph/features"
	"github.com/fairmp/fairmp/internal/testutil"
	"github.com/fairmp/fairmp/layers"
	"github.com/fairmp/fairmp/layers/fairness"
	"github.com/fairmp/fairmp/layers/fairtrain"
	"github.com/fairmp/fairmp/layers/train"
)

// TestScoreMethodModels (issue 54, item 2): the models FairGNN, NIFTY
// and FairVGNN train (an Encoder; FairVGNN's with its mask folded in)
// open from their model files and score nodes of a grown graph: their
// scores are the encoder's whole-graph output, layer by layer; on the
// training graph they are train.Predict's (the gorgonia path); and FMP on
// top scores them with its fitted duals. Before, Save refused the
// encoders (no declared kind).
func TestScoreMethodModels(t *testing.T) {
	d := small(t, 300, 4)
	gg, x, sens := grow(t, d, 10)
	x0, err := features.NewDense(d.Features, d.N(), d.NumFeatures)
	require.NoError(t, err)
	nodes := []int{d.N(), 7, d.N() + 9}
	all := make([]int, d.N())
	for i := range all {
		all[i] = i
	}
	vgnn := fairtrain.DefaultFairVGNNConfig()
	vgnn.Masks, vgnn.DiscriminatorSteps, vgnn.ClassifierSteps, vgnn.GeneratorSteps = 2, 1, 2, 1
	for _, method := range []fairness.Method{fairtrain.DefaultFairGNNConfig(), fairtrain.DefaultNIFTYConfig(), vgnn} {
		name := method.Name()
		g := G.NewGraph()
		xn, err := train.FeatureNode(g, G.Float64, d.Features, d.N(), d.NumFeatures, "x")
		require.NoError(t, err)
		task := &train.Task{Graph: g, X: xn, Labels: d.Labels, Train: d.Split.Train, Val: d.Split.Val, Classes: 2, Phase: layers.NewPhase()}
		body := layers.DefaultGCNConfig(d.NumFeatures, 2)
		body.Hidden = 8
		tc := train.DefaultConfig()
		tc.Epochs = 3
		fit, err := fairness.Fit(context.Background(), method, body, fairness.NewSetup(d.Graph, task, d.Sens), tc)
		require.NoError(t, err, name)
		m := fit.Model
		if me, ok := m.(*fairtrain.MaskedEncoder); ok {
			g = G.NewGraph()
			xn, err = train.FeatureNode(g, G.Float64, d.Features, d.N(), d.NumFeatures, "x")
			require.NoError(t, err)
			task = &train.Task{Graph: g, X: xn, Labels: d.Labels, Train: d.Split.Train, Val: d.Split.Val, Classes: 2, Phase: layers.NewPhase()}
			m, err = me.Folded(g, d.Graph, task.Phase)
			require.NoError(t, err, name)
		}
		enc := m.(*fairtrain.Encoder)
		var buf bytes.Buffer
		require.NoError(t, modelio.Save(&buf, enc, modelio.DefaultSaveConfig()), name)
		s, err := score.Open(bytes.NewReader(buf.Bytes()), score.DefaultConfig())
		require.NoError(t, err, name)
		assert.Equal(t, 2, s.Hops(), "%s: a two-layer GCN body and a head", name)

		got, err := s.Score(context.Background(), gg, x, sens, nodes)
		require.NoError(t, err, name)
		a, err := layers.DefaultPropagation().Matrix(gg)
		require.NoError(t, err)
		z, err := layers.LayerwiseLogits(enc, a, x)
		require.NoError(t, err, name)
		testutil.AllClose(t, name, got.Probs, pick(softmaxRows(testutil.ToF64(z), 2), 2, nodes), 1e-13, 1e-12)

		old, err := s.Score(context.Background(), d.Graph, x0, d.Sens, all)
		require.NoError(t, err, name)
		p, err := train.Predict(enc, task, nil)
		require.NoError(t, err, name)
		testutil.AllClose(t, name+" on the training graph", old.Probs, p.Probs, 1e-12, 1e-10)

		oc := fmp.DefaultOnConfig()
		oc.FMP.LambdaF, oc.FMP.K = 4, 3
		fm, err := fmp.On(enc, d.Graph, d.Sens, oc, task.Phase)
		require.NoError(t, err, name)
		require.NoError(t, fm.Record(x0), name)
		buf.Reset()
		require.NoError(t, modelio.Save(&buf, fm, modelio.DefaultSaveConfig()), name)
		fs, err := score.Open(bytes.NewReader(buf.Bytes()), score.DefaultConfig())
		require.NoError(t, err, name)
		assert.True(t, fs.FMP())
		fgot, err := fs.Score(context.Background(), gg, x, sens, nodes)
		require.NoError(t, err, name)
		f, err := fm.Recorded().Apply(a, sens, z)
		require.NoError(t, err)
		testutil.AllClose(t, name+" under FMP", fgot.Probs, pick(softmaxRows(testutil.ToF64(f), 2), 2, nodes), 1e-13, 1e-12)
	}
}
