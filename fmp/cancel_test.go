package fmp_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gorgonia.org/tensor"

	"github.com/fairmp/fairmp/fmp"
	"github.com/fairmp/fairmp/layers"
	"github.com/fairmp/fairmp/layers/fairness"
	"github.com/fairmp/fairmp/layers/train"
)

// TestCancelStopsFMP: a cancelled context stops FitTwoStage, the
// frontier (before its first setting) and FMP as a registered
// architecture, with errors wrapping context.Canceled.
func TestCancelStopsFMP(t *testing.T) {
	ds := smallSynthetic(t)
	m, task := onBackbone(t, "gcn", ds, tensor.Float64, fmp.DefaultConfig())
	done, cancel := context.WithCancel(context.Background())
	cancel()
	tc := train.DefaultConfig()
	tc.Epochs = 5
	_, err := m.FitTwoStage(done, task, tc)
	assert.True(t, errors.Is(err, context.Canceled), "%v", err)

	_, err = m.FitTwoStage(context.Background(), task, tc)
	require.NoError(t, err)
	_, err = fmp.NewFrontier(done, m, task, fmp.DefaultFrontierConfig())
	assert.True(t, errors.Is(err, context.Canceled), "%v", err)
	assert.ErrorContains(t, err, "before setting")

	on, err := fairness.Lookup("fmp")
	require.NoError(t, err)
	bc := layers.DefaultGCNConfig(ds.NumFeatures, 2)
	bc.Name = "gcn2"
	_, err = fairness.Fit(done, on, bc, fairness.NewSetup(ds.Graph, task, ds.Sens), tc)
	assert.True(t, errors.Is(err, context.Canceled), "%v", err)
}
