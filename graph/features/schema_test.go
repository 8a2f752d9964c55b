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

// Scale maps the range to [−1, 1] without overflow where the range is
// finite: a value 1e308 with the range −1 to 1 is 1e308 (before: +Inf,
// from 2·(x − lo)), and 0 to 1e308 maps 1e308 to 1; a constant column is
// 0. Against the naive formula where it does not overflow.
func TestScaleNoOverflow(t *testing.T) {
	s := Schema{Names: []string{"a", "b", "c"}, Scaling: &MinMax{Min: []float64{-1, 0, 5}, Max: []float64{1, 1e308, 5}}}
	assert.Equal(t, 1e308, s.Scale(0, 1e308))
	assert.Equal(t, 1.0, s.Scale(1, 1e308))
	assert.Equal(t, -1.0, s.Scale(1, 0))
	assert.Equal(t, 0.0, s.Scale(2, 1e308))
	for _, x := range []float64{-3, -1, -0.25, 0, 0.3, 1, 7.5} {
		for _, r := range [][2]float64{{-1, 1}, {2, 9}, {-1e5, 3}} {
			naive := 2*(x-r[0])/(r[1]-r[0]) - 1
			assert.Equal(t, naive, ScaleMinMax(x, r[0], r[1]), "x %v range %v", x, r)
		}
	}
}
