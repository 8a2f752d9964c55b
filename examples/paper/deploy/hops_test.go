package main

import (
	"bytes"
	"context"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gorgonia.org/tensor"

	"github.com/fairmp/fairmp/examples/paper/internal/exp"
	"github.com/fairmp/fairmp/fmp"
	"github.com/fairmp/fairmp/fmp/modelio"
	"github.com/fairmp/fairmp/fmp/score"
	"github.com/fairmp/fairmp/graph/datasets"
	"github.com/fairmp/fairmp/graph/features"
	"github.com/fairmp/fairmp/internal/opkit"
	"github.com/fairmp/fairmp/layers"
)

// TestRecordedLambdaS0NeedsBackboneHopsOnly is the evidence for the cost
// finding of the README: with λs = 0 FMP does not propagate, so the
// fitted scores of new nodes computed on the backbone's 2-hop ball alone
// are score.Scorer.Score's. When the study found it, Score computed on a
// (2 + K)-hop ball (here the whole graph); fmp/score now uses the
// backbone's hops at λs 0, so Score's field is that ball.
func TestRecordedLambdaS0NeedsBackboneHopsOnly(t *testing.T) {
	full, err := datasets.Synthetic(datasets.DefaultSyntheticConfig())
	require.NoError(t, err)
	w, err := draw(full, 0.8, 1)
	require.NoError(t, err)
	p, err := exp.NewProblem(w.old, tensor.Float64)
	require.NoError(t, err)
	tc := exp.DefaultTrainOptions()
	tc.Epochs, tc.Adam.LR = 5, 0.01
	out, err := exp.Run(p, exp.DefaultSpec("gcn"), tc)
	require.NoError(t, err)
	oc := fmp.DefaultOnConfig()
	oc.FMP.LambdaS, oc.FMP.LambdaF = 0, 1
	m, err := fmp.On(out.Model, w.old.Graph, w.old.Sens, oc, p.Task.Phase)
	require.NoError(t, err)
	xOld, err := features.NewDense(w.old.Features, w.old.N(), w.old.NumFeatures)
	require.NoError(t, err)
	require.NoError(t, m.Record(xOld))
	require.NotEmpty(t, m.Recorded().Duals)
	var buf bytes.Buffer
	require.NoError(t, modelio.Save(&buf, m, modelio.DefaultSaveConfig()))
	s, err := score.Open(bytes.NewReader(buf.Bytes()), score.DefaultConfig())
	require.NoError(t, err)
	x, err := features.NewDense(full.Features, full.N(), full.NumFeatures)
	require.NoError(t, err)
	nodes := w.newIDs[:5]
	got, err := s.Score(context.Background(), full.Graph, x, full.Sens, nodes)
	require.NoError(t, err)

	// The same scores on the backbone's ball.
	ball, err := full.Graph.Ball(nodes, 2)
	require.NoError(t, err)
	adj, err := layers.DefaultPropagation().MatrixOf(full.Graph, ball)
	require.NoError(t, err)
	v := make([]float64, len(ball)*full.NumFeatures)
	require.NoError(t, features.Gather(x, ball, v))
	xb, err := features.NewDense(v, len(ball), full.NumFeatures)
	require.NoError(t, err)
	z, err := layers.LayerwiseLogits(m.Backbone().(layers.BlockModel), adj, xb)
	require.NoError(t, err)
	sb := make([]int, len(ball))
	row := map[int]int{}
	for r, i := range ball {
		sb[r], row[i] = full.Sens[i], r
	}
	f, err := m.Recorded().Apply(adj, sb, z)
	require.NoError(t, err)
	d := f.Data().([]float64)
	for k, i := range nodes {
		pr := make([]float64, 2)
		opkit.SoftmaxRow(d[2*row[i]:2*row[i]+2], pr, 1)
		for c := range pr {
			assert.LessOrEqual(t, math.Abs(pr[c]-got.Probs[2*k+c]), 1e-12, "node %d class %d", i, c)
		}
	}
	assert.Equal(t, 2, s.Hops(), "λs 0: the backbone's hops")
	assert.Equal(t, len(ball), got.Field, "Score computes on the 2-hop ball")
}
