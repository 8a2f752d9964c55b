package metrics

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestChangeRateHand(t *testing.T) {
	// Five nodes; decisions 1 1 0 0 1 against 1 0 0 1 1 (P > 0.5): nodes 1
	// and 3 change. 0.5 itself is not above the threshold.
	p := binaryRows([]float64{0.9, 0.6, 0.2, 0.5, 0.7})
	q := binaryRows([]float64{0.8, 0.4, 0.1, 0.51, 0.99})
	iv, err := ChangeRate(p, q, 2, nil, DefaultOptions(), DefaultBootstrapConfig())
	require.NoError(t, err)
	assert.Equal(t, 0.4, iv.Point)
	assert.LessOrEqual(t, iv.Lo, iv.Point)
	assert.GreaterOrEqual(t, iv.Hi, iv.Point)
	assert.Equal(t, 1000, iv.Used)

	// On a subset: nodes 0, 2, 4 never change.
	iv, err = ChangeRate(p, q, 2, []int{0, 2, 4}, DefaultOptions(), DefaultBootstrapConfig())
	require.NoError(t, err)
	assert.Equal(t, Interval{Point: 0, Lo: 0, Hi: 0, Used: 1000}, iv)

	// Identical predictions: 0; same seed, same interval.
	a, err := ChangeRate(p, q, 2, []int{1, 3, 4}, DefaultOptions(), DefaultBootstrapConfig())
	require.NoError(t, err)
	b, err := ChangeRate(p, q, 2, []int{1, 3, 4}, DefaultOptions(), DefaultBootstrapConfig())
	require.NoError(t, err)
	assert.Equal(t, a, b)
	assert.InDelta(t, 2.0/3, a.Point, 1e-15)

	// Three classes use the argmax.
	p3 := []float64{0.5, 0.3, 0.2, 0.1, 0.1, 0.8}
	q3 := []float64{0.2, 0.5, 0.3, 0.1, 0.2, 0.7}
	iv, err = ChangeRate(p3, q3, 3, nil, DefaultOptions(), DefaultBootstrapConfig())
	require.NoError(t, err)
	assert.Equal(t, 0.5, iv.Point)
}

func TestChangeRateErrors(t *testing.T) {
	p := binaryRows([]float64{0.9, 0.6})
	_, err := ChangeRate(p, p[:2], 2, nil, DefaultOptions(), DefaultBootstrapConfig())
	assert.True(t, errors.Is(err, ErrLength), "%v", err)
	_, err = ChangeRate(p, p, 2, []int{}, DefaultOptions(), DefaultBootstrapConfig())
	assert.True(t, errors.Is(err, ErrEmpty), "%v", err)
	_, err = ChangeRate(p, p, 2, []int{0, 0}, DefaultOptions(), DefaultBootstrapConfig())
	assert.True(t, errors.Is(err, ErrValue), "%v", err)
	_, err = ChangeRate(p, p, 2, []int{2}, DefaultOptions(), DefaultBootstrapConfig())
	assert.True(t, errors.Is(err, ErrValue), "%v", err)
	bad := binaryRows([]float64{0.9, 1.5})
	_, err = ChangeRate(p, bad, 2, nil, DefaultOptions(), DefaultBootstrapConfig())
	assert.True(t, errors.Is(err, ErrValue), "%v", err)
	_, err = ChangeRate(p, p, 2, nil, DefaultOptions(), BootstrapConfig{Resamples: 5, Level: 0.95})
	assert.True(t, errors.Is(err, ErrValue), "%v", err)
}
