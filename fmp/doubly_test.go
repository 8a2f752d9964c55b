package fmp_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	G "gorgonia.org/gorgonia"

	"github.com/fairmp/fairmp/fmp"
	"github.com/fairmp/fairmp/layers"
)

// FMP smooths over the GCN matrix only: a doubly stochastic propagation
// of its own is refused with the reason, while a backbone propagating
// over one (RawlsGCN-Graph) takes FMP on top.
func TestOnRefusesDoublyStochastic(t *testing.T) {
	d := smallSynthetic(t)
	cfg := fmp.DefaultOnConfig()
	cfg.Propagation = layers.DoublyStochasticPropagation()
	assert.ErrorContains(t, cfg.Validate(), "fmp: OnConfig.Propagation.DoublyStochastic is on, want it off")

	g := G.NewGraph()
	gc := layers.DefaultGCNConfig(d.NumFeatures, 2)
	gcn, err := layers.NewGCN(g, d.Graph, gc, nil)
	require.NoError(t, err)
	_, err = fmp.On(gcn, d.Graph, d.Sens, cfg, nil)
	assert.ErrorContains(t, err, "fmp: On: Propagation.DoublyStochastic is on")

	gc.Name, gc.Propagation = "rawls", layers.DoublyStochasticPropagation()
	rawls, err := layers.NewGCN(g, d.Graph, gc, nil)
	require.NoError(t, err)
	_, err = fmp.On(rawls, d.Graph, d.Sens, fmp.DefaultOnConfig(), nil)
	assert.NoError(t, err)
}
