package features

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestSchema(t *testing.T) {
	s := Schema{Names: []string{"a", "b"}, Scaling: &MinMax{Min: []float64{0, 5}, Max: []float64{10, 5}}}
	assert.NoError(t, s.Validate())
	assert.Equal(t, -1.0, s.Scale(0, 0))
	assert.Equal(t, 1.0, s.Scale(0, 10))
	assert.Equal(t, 3.0, s.Scale(0, 20), "beyond the fitted range: beyond [−1, 1]")
	assert.Equal(t, 0.0, s.Scale(1, 7), "a constant column maps to 0")
	assert.Equal(t, 7.0, Schema{Names: []string{"a"}}.Scale(0, 7), "no scaling")
	assert.True(t, s.Equal(s))
	assert.False(t, s.Equal(Schema{Names: []string{"b", "a"}, Scaling: s.Scaling}))
	assert.False(t, s.Equal(Schema{Names: s.Names}))
	for name, bad := range map[string]Schema{
		"empty name":  {Names: []string{"a", ""}},
		"repeat":      {Names: []string{"a", "a"}},
		"short":       {Names: []string{"a", "b"}, Scaling: &MinMax{Min: []float64{0}, Max: []float64{1}}},
		"reversed":    {Names: []string{"a"}, Scaling: &MinMax{Min: []float64{2}, Max: []float64{1}}},
		"NaN":         {Names: []string{"a"}, Scaling: &MinMax{Min: []float64{math.NaN()}, Max: []float64{1}}},
		"overflowing": {Names: []string{"a"}, Scaling: &MinMax{Min: []float64{-1e308}, Max: []float64{1e308}}},
	} {
		assert.Error(t, bad.Validate(), name)
	}
}

func TestSchemaCategorical(t *testing.T) {
	s := Schema{Names: []string{"a", "job=x", "job=y"}, Categorical: []Categorical{{Column: "job", Levels: []string{"x", "y"}}}}
	assert.NoError(t, s.Validate())
	assert.True(t, s.Equal(s))
	o := s
	o.Categorical = []Categorical{{Column: "job", Levels: []string{"y", "x"}}}
	assert.False(t, s.Equal(o))
	for name, c := range map[string][]Categorical{
		"empty column": {{Column: "", Levels: []string{"x"}}},
		"no level":     {{Column: "job"}},
		"twice":        {{Column: "job", Levels: []string{"x", "x"}}},
		"no column":    {{Column: "job", Levels: []string{"x", "z"}}},
		"column twice": {{Column: "job", Levels: []string{"x"}}, {Column: "job", Levels: []string{"y"}}},
	} {
		bad := s
		bad.Categorical = c
		assert.Error(t, bad.Validate(), name)
	}
}
