package modelio_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	G "gorgonia.org/gorgonia"

	"github.com/fairmp/fairmp/fmp/modelio"
	"github.com/fairmp/fairmp/graph"
	"github.com/fairmp/fairmp/graph/features"
	"github.com/fairmp/fairmp/internal/problem"
	"github.com/fairmp/fairmp/internal/testutil"
	"github.com/fairmp/fairmp/layers"
	"github.com/fairmp/fairmp/metrics"
)

// TestBaselineRoundTrip: a baseline given to Save comes back from
// ReadHeader and Read as it was; a file whose baseline is not as Save
// writes it is refused.
func TestBaselineRoundTrip(t *testing.T) {
	p := problem.New(t, 1, 60, 4, 2, 150, 0.8)
	m, err := layers.NewMLP(G.NewGraph(), nil, layers.DefaultMLPConfig(p.D, p.C), nil)
	require.NoError(t, err)
	probs := make([]float64, 2*p.N)
	sens := make([]int, p.N)
	for i := 0; i < p.N; i++ {
		probs[2*i+1] = float64(i%5) / 5
		probs[2*i] = 1 - probs[2*i+1]
		sens[i] = i % 2
	}
	b, err := metrics.NewBaseline(probs, 2, p.Labels, sens, nil, metrics.DefaultOptions(), metrics.DefaultBootstrapConfig())
	require.NoError(t, err)
	var buf bytes.Buffer
	require.NoError(t, modelio.Save(&buf, m, modelio.SaveConfig{Baseline: &b, Untrained: true}))
	h, err := modelio.ReadHeader(bytes.NewReader(buf.Bytes()))
	require.NoError(t, err)
	require.NotNil(t, h.Baseline)
	assert.Equal(t, b, *h.Baseline)
	f, err := modelio.Read(bytes.NewReader(buf.Bytes()))
	require.NoError(t, err)
	assert.Equal(t, b, *f.Header.Baseline)

	// Miscase one key of the baseline: the header no longer reads.
	line := buf.String()
	cut := strings.Index(line, "\n")
	bad := strings.Replace(line[:cut], `"selection_rate"`, `"Selection_rate"`, 1) + line[cut:]
	_, err = modelio.ReadHeader(strings.NewReader(bad))
	assert.ErrorIs(t, err, modelio.ErrFormat)

	b.Level = 0
	assert.ErrorContains(t, modelio.Save(&buf, m, modelio.SaveConfig{Baseline: &b, Untrained: true}), "SaveConfig.Baseline")
}

// TestFileBackbone: the backbone a File builds on a one-node graph gives,
// layer by layer on the whole graph, the logits of the model Load builds
// on that graph.
func TestFileBackbone(t *testing.T) {
	p := problem.New(t, 2, 80, 5, 2, 240, 0.8)
	for _, kind := range []string{"gcn", "gat", "appnp", "jknet", "sgc", "mlp", "sage", "gin", "fmp"} {
		g := G.NewGraph()
		m, err := roundTripModels[kind](g, p, testutil.Dtypes[0], nil)
		require.NoError(t, err, kind)
		var buf bytes.Buffer
		require.NoError(t, modelio.Save(&buf, m, modelio.SaveConfig{Untrained: true}), kind)
		f, err := modelio.Read(bytes.NewReader(buf.Bytes()))
		require.NoError(t, err, kind)
		one, err := graph.FromEdges(1, nil)
		require.NoError(t, err)
		bb, err := f.Backbone(G.NewGraph(), one, nil)
		require.NoError(t, err, kind)
		bm, ok := bb.(layers.BlockModel)
		require.True(t, ok, kind)
		x, err := features.NewDense(p.X, p.N, p.D)
		require.NoError(t, err)
		want := m
		if w, ok := m.(interface{ Backbone() layers.Model }); ok {
			want = w.Backbone()
		}
		wm := want.(layers.BlockModel)
		adj := wm.Matrix()
		got, err := layers.LayerwiseLogits(bm, adj, x)
		require.NoError(t, err, kind)
		ref, err := layers.LayerwiseLogits(wm, adj, x)
		require.NoError(t, err, kind)
		assert.Equal(t, testutil.ToF64(ref), testutil.ToF64(got), kind)
	}
	_, err := (&modelio.File{}).Backbone(G.NewGraph(), nil, nil)
	assert.ErrorContains(t, err, "no file")
}
