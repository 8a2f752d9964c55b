package train_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fairmp/fairmp/layers"
	"github.com/fairmp/fairmp/layers/train"
	"github.com/fairmp/fairmp/metrics"
)

// Trained tells a model that was trained (or given parameters) from one
// still at its initialisation, for every kind, through FMP too.
func TestTrained(t *testing.T) {
	m, task, _ := served(t, 120)
	for _, model := range []layers.Model{m, m.Backbone()} {
		tr, err := train.Trained(model)
		require.NoError(t, err)
		assert.False(t, tr, "%T before training", model)
	}
	tc := train.DefaultConfig()
	tc.Epochs = 2
	_, err := m.FitTwoStage(context.Background(), task, tc)
	require.NoError(t, err)
	tr, err := train.Trained(m)
	require.NoError(t, err)
	assert.True(t, tr, "after training")
	type unknown struct{ layers.Model }
	_, err = train.Trained(unknown{m})
	assert.ErrorIs(t, err, layers.ErrUnknownKind)
}

// Prediction.Report evaluates the predicted nodes: a subset's report is
// the full prediction's report on that subset (metrics.Evaluate failed
// with a length mismatch on a subset on df69dad).
func TestPredictionReport(t *testing.T) {
	m, task, ds := served(t, 200)
	all, err := train.Predict(m, task, nil)
	require.NoError(t, err)
	want, err := metrics.Evaluate(all.Probs, 2, ds.Labels, ds.Sens, ds.Split.Test, metrics.DefaultOptions())
	require.NoError(t, err)
	sub, err := train.Predict(m, task, ds.Split.Test)
	require.NoError(t, err)
	got, err := sub.Report(ds.Labels, ds.Sens, metrics.DefaultOptions())
	require.NoError(t, err)
	assert.Equal(t, want, got)
	_, err = sub.Report(ds.Labels[:3], ds.Sens, metrics.DefaultOptions())
	assert.ErrorIs(t, err, metrics.ErrLength)
}
