package score_test

import (
	"bytes"
	"context"
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

// TestScorerDriftThreeClasses (issue 57): a model of three classes saved
// with a baseline of every class (metrics.NewBaseline with 3 classes,
// class names set) comes back from its file, and Scorer.Drift compares
// class by class; a baseline of two classes in a three-class model's file
// is refused in words.
func TestScorerDriftThreeClasses(t *testing.T) {
	d := small(t, 400, 4)
	labels := append([]int(nil), d.Labels...)
	for i := range labels {
		if labels[i] >= 0 && i%4 == 0 {
			labels[i] = 2
		}
	}
	m, err := layers.NewMLP(G.NewGraph(), nil, layers.DefaultMLPConfig(d.NumFeatures, 3), nil)
	require.NoError(t, err)
	plain, err := score.Open(bytes.NewReader(save(t, m)), score.DefaultConfig())
	require.NoError(t, err)
	x, err := features.NewDense(d.Features, d.N(), d.NumFeatures)
	require.NoError(t, err)
	val, err := plain.Score(context.Background(), d.Graph, x, d.Sens, d.Split.Val)
	require.NoError(t, err)
	require.Equal(t, 3, val.Classes)
	probs := make([]float64, d.N()*3)
	for k, i := range val.Nodes {
		copy(probs[i*3:(i+1)*3], val.Probs[k*3:(k+1)*3])
	}
	b, err := metrics.NewBaseline(probs, 3, labels, d.Sens, d.Split.Val, metrics.DefaultOptions(), metrics.DefaultBootstrapConfig())
	require.NoError(t, err)
	b.GroupNames, b.ClassNames = []string{"Male", "Female"}, []string{"low", "mid", "high"}
	var buf bytes.Buffer
	require.NoError(t, modelio.Save(&buf, m, modelio.SaveConfig{Untrained: true, Baseline: &b}))
	s, err := score.Open(&buf, score.DefaultConfig())
	require.NoError(t, err)
	require.NotNil(t, s.Header().Baseline)
	assert.Equal(t, b, *s.Header().Baseline, "the file keeps every class's baseline")

	dr, err := s.Drift(val, labels, d.Sens, nil)
	require.NoError(t, err)
	require.Len(t, dr.Classes, 3)
	assert.Equal(t, "high", dr.Classes[2].Name)
	assert.Empty(t, dr.Groups)
	for _, w := range append(dr.Warnings, dr.Notes...) {
		assert.Contains(t, w, "every scored node is predicted", "the validation nodes against themselves: %s", w)
	}

	// A baseline of class 1 against the rest (two columns), as files had
	// before, in a three-class model's file: an error saying what to do.
	bin := make([]float64, 2*d.N())
	for i := range d.Sens {
		bin[2*i], bin[2*i+1] = 1-probs[3*i+1], probs[3*i+1]
	}
	old, err := metrics.NewBaseline(bin, 2, d.Labels, d.Sens, d.Split.Val, metrics.DefaultOptions(), metrics.DefaultBootstrapConfig())
	require.NoError(t, err)
	buf.Reset()
	require.NoError(t, modelio.Save(&buf, m, modelio.SaveConfig{Untrained: true, Baseline: &old}))
	s, err = score.Open(&buf, score.DefaultConfig())
	require.NoError(t, err)
	_, err = s.Drift(val, labels, d.Sens, nil)
	assert.ErrorIs(t, err, metrics.ErrClasses)
	assert.ErrorContains(t, err, "save the model again to record a baseline of its 3 classes")
}
