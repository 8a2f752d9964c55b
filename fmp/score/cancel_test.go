package score_test

import (
	"bytes"
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fairmp/fairmp/fmp/score"
	"github.com/fairmp/fairmp/graph/features"
)

// TestCancelStopsScoring: Score, Freeze and Frozen.Add refuse a cancelled
// context with an error wrapping context.Canceled, and Add then adds
// nothing.
func TestCancelStopsScoring(t *testing.T) {
	d := small(t, 200, 3)
	x0, err := features.NewDense(d.Features, d.N(), d.NumFeatures)
	require.NoError(t, err)
	s, err := score.Open(bytes.NewReader(save(t, frozenModel(t, d, 1))), score.DefaultConfig())
	require.NoError(t, err)
	done, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = s.Score(done, d.Graph, x0, d.Sens, []int{0, 1})
	assert.True(t, errors.Is(err, context.Canceled), "%v", err)
	_, err = s.Freeze(done, d.Graph, x0, d.Sens)
	assert.True(t, errors.Is(err, context.Canceled), "%v", err)

	fz, err := s.Freeze(context.Background(), d.Graph, x0, d.Sens)
	require.NoError(t, err)
	gg, x, sens := grow(t, d, 5)
	_, err = fz.Add(done, gg, x, sens)
	assert.True(t, errors.Is(err, context.Canceled), "%v", err)
	assert.Equal(t, d.N(), fz.N(), "nothing added")
}
