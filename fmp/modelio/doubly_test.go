package modelio_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gorgonia.org/tensor"

	"github.com/fairmp/fairmp/fmp/modelio"
	"github.com/fairmp/fairmp/internal/problem"
	"github.com/fairmp/fairmp/layers"
	"github.com/fairmp/fairmp/layers/train"
)

// TestDoublyStochasticRoundTrip: a model propagating over RawlsGCN's
// doubly stochastic matrix records it (and its Sinkhorn options) in its
// file and loads to the same predictions, bit for bit; the file of a
// model with the default propagation has no trace of the option, as
// files written before it existed.
func TestDoublyStochasticRoundTrip(t *testing.T) {
	p := problem.New(t, 31, 50, 4, 2, 100, 0.7)
	for _, name := range []string{"gcn", "sgc", "appnp", "jknet"} {
		k, err := layers.LookupKind(name)
		require.NoError(t, err)
		cfg, err := k.Configure(p.D, p.C, layers.Options{Hidden: 8, Dtype: tensor.Float64, Seed: 2})
		if name == "sgc" {
			cfg, err = k.Configure(p.D, p.C, layers.Options{Dtype: tensor.Float64, Seed: 2})
		}
		require.NoError(t, err)

		var plain bytes.Buffer
		task := newTask(t, p, tensor.Float64, layers.NewPhase())
		m, err := k.Build(task.Graph, p.Graph, cfg, task.Phase)
		require.NoError(t, err)
		_, err = train.Fit(context.Background(), m, task, fastTrain(2))
		require.NoError(t, err)
		require.NoError(t, modelio.Save(&plain, m, modelio.DefaultSaveConfig()))
		assert.NotContains(t, plain.String(), "doubly_stochastic", name)
		assert.NotContains(t, plain.String(), "sinkhorn", name)

		cfg, err = k.Override(cfg, map[string]any{"propagation": layers.DoublyStochasticPropagation()})
		require.NoError(t, err)
		task = newTask(t, p, tensor.Float64, layers.NewPhase())
		m, err = k.Build(task.Graph, p.Graph, cfg, task.Phase)
		require.NoError(t, err)
		_, err = train.Fit(context.Background(), m, task, fastTrain(10))
		require.NoError(t, err)
		want, err := train.Predict(m, task, nil)
		require.NoError(t, err)
		var buf bytes.Buffer
		require.NoError(t, modelio.Save(&buf, m, modelio.DefaultSaveConfig()))
		assert.Contains(t, buf.String(), `"doubly_stochastic":true,"sinkhorn":{"tol":0.000001,"max_iter":1000}`, name)

		task2 := newTask(t, p, tensor.Float64, layers.NewPhase())
		m2, err := modelio.Load(bytes.NewReader(buf.Bytes()), task2.Graph, modelio.Env{Graph: p.Graph, Phase: task2.Phase})
		require.NoError(t, err, name)
		got, err := train.Predict(m2, task2, nil)
		require.NoError(t, err)
		assert.Equal(t, want.Probs, got.Probs, name)
		assert.Equal(t, m.(layers.BlockModel).Matrix().Values64(), m2.(layers.BlockModel).Matrix().Values64(), name)
	}
}
