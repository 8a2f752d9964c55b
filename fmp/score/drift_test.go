package score_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	G "gorgonia.org/gorgonia"

	"github.com/fairmp/fairmp/fmp/modelio"
	"github.com/fairmp/fairmp/fmp/score"
	"github.com/fairmp/fairmp/graph/features"
	"github.com/fairmp/fairmp/layers"
	"github.com/fairmp/fairmp/metrics"
)

// TestScorerDrift is issue 53's D2: from a scorer to its drift report in
// one call, against the baseline the model file recorded; new nodes of
// one group whose features are three times the training maximum warn
// without labels, naming the group and the feature.
func TestScorerDrift(t *testing.T) {
	d := small(t, 400, 2)
	m, err := layers.NewMLP(G.NewGraph(), nil, layers.DefaultMLPConfig(d.NumFeatures, 2), nil)
	require.NoError(t, err)
	plain, err := score.Open(bytes.NewReader(save(t, m)), score.DefaultConfig())
	require.NoError(t, err)
	x, err := features.NewDense(d.Features, d.N(), d.NumFeatures)
	require.NoError(t, err)
	all := make([]int, d.N())
	for i := range all {
		all[i] = i
	}
	// A file without a baseline: ErrNoBaseline, saying how to record one.
	out, err := plain.Score(context.Background(), d.Graph, x, d.Sens, all)
	require.NoError(t, err)
	_, err = plain.Drift(out, nil, d.Sens, nil)
	assert.ErrorIs(t, err, score.ErrNoBaseline)
	assert.ErrorContains(t, err, "SaveConfig.Baseline")

	// The baseline: decisions on the validation nodes, the groups'
	// names, the training nodes' features.
	b, err := metrics.NewBaseline(out.Probs, 2, d.Labels, d.Sens, d.Split.Val, metrics.DefaultOptions(), metrics.DefaultBootstrapConfig())
	require.NoError(t, err)
	b.GroupNames = []string{"Male", "Female"}
	require.NoError(t, b.RecordFeatures(d.Features, d.NumFeatures, nil, d.Split.Train))
	var buf bytes.Buffer
	require.NoError(t, modelio.Save(&buf, m, modelio.SaveConfig{Untrained: true, Baseline: &b}))
	s, err := score.Open(&buf, score.DefaultConfig())
	require.NoError(t, err)

	// The validation nodes against themselves, features included: no
	// warning.
	val, err := s.Score(context.Background(), d.Graph, x, d.Sens, d.Split.Val)
	require.NoError(t, err)
	dr, err := s.Drift(val, d.Labels, d.Sens, x)
	require.NoError(t, err)
	require.NotNil(t, dr.Features)
	for _, w := range dr.Warnings {
		assert.NotContains(t, w, "feature", w)
		assert.NotContains(t, w, "share", w)
	}

	// 60 new nodes, all of group 1, features three times the training
	// maximum of column 0, no labels.
	n, f := d.N(), d.NumFeatures
	var edges [][2]int
	xs := append([]float64(nil), d.Features...)
	sens := append([]int(nil), d.Sens...)
	var fresh []int
	src := 0
	for k := range 60 {
		for d.Sens[src] != 1 {
			src++
		}
		row := append([]float64(nil), d.Features[src*f:(src+1)*f]...)
		row[0] = 3 * b.Features[0].Max
		xs, sens = append(xs, row...), append(sens, 1)
		edges = append(edges, [2]int{n + k, src})
		fresh = append(fresh, n+k)
		src++
	}
	grown, err := d.Graph.Grow(60, edges)
	require.NoError(t, err)
	gx, err := features.NewDense(xs, n+60, f)
	require.NoError(t, err)
	got, err := s.Score(context.Background(), grown, gx, sens, fresh)
	require.NoError(t, err)
	dr, err = s.Drift(got, nil, sens, gx)
	require.NoError(t, err)
	all2 := strings.Join(dr.Warnings, "\n")
	assert.Contains(t, all2, `group "Female" is 100.0%`)
	assert.Contains(t, all2, `feature "x0": 100.0% of the 60 scored nodes (60) are above its training maximum`)
	assert.NotRegexp(t, `group \d`, dr.String())

	// Errors: sizes that do not match the graph scored.
	_, err = s.Drift(got, d.Labels, sens, gx)
	assert.ErrorContains(t, err, "labels")
	_, err = s.Drift(got, nil, sens, x)
	assert.ErrorContains(t, err, "features of")
}
