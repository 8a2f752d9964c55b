package datasets

import (
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fairmp/fairmp/graph/features"
)

// loadErr loads c and returns its error's text with dir written F, or ""
// when it loads.
func loadErr(t *testing.T, c FilesConfig, dir string) (*Dataset, string) {
	t.Helper()
	ds, err := LoadFiles(c)
	if err == nil {
		return ds, ""
	}
	assert.True(t, isFileError(err), "%v is not a *FileError", err)
	return nil, strings.ReplaceAll(err.Error(), dir, "F")
}

// Without scaling, a feature value the model's arithmetic cannot hold (its
// square overflows the float type: beyond FeatureLimit64, or
// FeatureLimit32 for float32) is refused at its place, in a CSV and a
// Parquet table alike; so is a value that is not finite, scaled or not.
// Before, 1e308 loaded and training gave NaN; 1e39 became +Inf in
// float32.
func TestFeatureLimit(t *testing.T) {
	cases := []struct {
		cell  string
		limit float64
		scale bool
		want  string
	}{
		{"1e308", 0, false, `F/people.csv:3:5: column "age": 1e308 is beyond ±1.34e+154, the limit for float64 arithmetic (FilesConfig.FeatureLimit)`},
		{"-1e200", FeatureLimit64, false, `F/people.csv:3:5: column "age": -1e200 is beyond ±1.34e+154`},
		{"1e39", FeatureLimit32, false, `F/people.csv:3:5: column "age": 1e39 is beyond ±1.84e+19, the limit for float32 arithmetic (FilesConfig.FeatureLimit): its square overflows; turn on min-max scaling (FilesConfig.MinMaxScale) or rescale the column`},
		{"2e19", FeatureLimit32, false, `F/people.csv:3:5: column "age": 2e19 is beyond ±1.84e+19`},
		{"1e19", FeatureLimit32, false, ""},
		{"1e39", 0, false, ""},
		{"1e308", FeatureLimit32, true, ""}, // scaled to [−1, 1]
		{"1e3", 1e2, false, `F/people.csv:3:5: column "age": 1e3 is beyond ±100, the limit FilesConfig.FeatureLimit`},
		{"inf", 0, false, `F/people.csv:3:5: column "age": "inf" is not finite`},
		{"NaN", FeatureLimit32, true, `F/people.csv:3:5: column "age": "NaN" is not finite`},
		{"+Inf", 0, true, `F/people.csv:3:5: column "age": "+Inf" is not finite`},
		{"-infinity", 0, false, `F/people.csv:3:5: column "age": "-infinity" is not finite`},
		{"1e400", 0, true, `F/people.csv:3:5: column "age": "1e400" is not finite`},
	}
	for _, tc := range cases {
		dir := writeFiles(t, map[string]string{"people.csv": strings.Replace(userCSV, "bob,30,", "bob,"+tc.cell+",", 1), "links.txt": userEdges})
		c := userConfig(dir)
		c.MinMaxScale, c.FeatureLimit = tc.scale, tc.limit
		ds, msg := loadErr(t, c, dir)
		if tc.want == "" {
			assert.Equal(t, "", msg, tc.cell)
			if ds != nil {
				for _, v := range ds.Features {
					assert.False(t, math.IsInf(v, 0) || math.IsNaN(v), "%s: feature %v", tc.cell, v)
				}
			}
			continue
		}
		assert.Contains(t, msg, tc.want, "%s, limit %v, scale %v", tc.cell, tc.limit, tc.scale)
	}

	// Parquet: a double column holding 1e308 or 1e39.
	dir := writeFiles(t, map[string]string{"links.txt": userEdges})
	p := people()
	p[4].Score = 1e308
	writeParquet(t, filepath.Join(dir, "people.parquet"), p)
	c := userConfig(dir)
	c.Nodes, c.MinMaxScale = filepath.Join(dir, "people.parquet"), false
	_, msg := loadErr(t, c, dir)
	assert.Contains(t, msg, `F/people.parquet: row 5, column 3: column "score": 1e+308 is beyond ±1.34e+154, the limit for float64 arithmetic`)
	p[4].Score = 1e39
	writeParquet(t, filepath.Join(dir, "people.parquet"), p)
	c.FeatureLimit = FeatureLimit32
	_, msg = loadErr(t, c, dir)
	assert.Contains(t, msg, `F/people.parquet: row 5, column 3: column "score": 1e+39 is beyond ±1.84e+19, the limit for float32 arithmetic`)
	p[4].Score = math.Inf(-1)
	writeParquet(t, filepath.Join(dir, "people.parquet"), p)
	c.MinMaxScale = true
	_, msg = loadErr(t, c, dir)
	assert.Contains(t, msg, `F/people.parquet: row 5, column 3: column "score": "-Inf" is not finite`)

	c.FeatureLimit = -1
	assert.ErrorContains(t, c.Validate(), "FeatureLimit = -1")
	c.FeatureLimit = math.NaN()
	assert.ErrorContains(t, c.Validate(), "FeatureLimit = NaN")
}

// Min-max scaling of a column whose range is finite but whose doubled
// distances are not (0 to 1e308): every value lands in [−1, 1]. Before,
// 2·(x − min) overflowed and the largest value became +Inf.
func TestScaleWideRange(t *testing.T) {
	csv := strings.Replace(strings.Replace(userCSV, "ann,20,", "ann,0,", 1), "bob,30,", "bob,1e308,", 1)
	dir := writeFiles(t, map[string]string{"people.csv": csv, "links.txt": userEdges})
	ds, msg := loadErr(t, userConfig(dir), dir)
	require.Equal(t, "", msg)
	age := []float64{ds.Features[0], ds.Features[2], ds.Features[4], ds.Features[6], ds.Features[8]}
	// (x − 0)/1e308 · 2 − 1: 40/1e308 is far below float64's resolution at 1.
	assert.Equal(t, []float64{-1, 1, -1, -1, -1}, age)
}

// A value far outside a model's training range is scaled without
// overflow and refused when the result is beyond the limit, at its place.
// Before, Schema.Scale gave +Inf for 1e308 and the loader passed it on.
func TestSchemaScaleFarOutside(t *testing.T) {
	s := features.Schema{Names: []string{"age", "score"}, Scaling: &features.MinMax{Min: []float64{20, 1}, Max: []float64{60, 9}}}
	dir := writeFiles(t, map[string]string{"people.csv": strings.Replace(userCSV, "bob,30,", "bob,1e308,", 1), "links.txt": userEdges})
	c := userConfig(dir)
	c.Schema = &s
	_, msg := loadErr(t, c, dir)
	assert.Contains(t, msg, `F/people.csv:3:5: column "age": 1e308 becomes 5e+306 with the model's scaling (its training range 20 to 60), beyond ±1.34e+154, the limit for float64 arithmetic`)
	// Within the limit, far outside the range: scaled as the schema says.
	dir = writeFiles(t, map[string]string{"people.csv": strings.Replace(userCSV, "bob,30,", "bob,1e100,", 1), "links.txt": userEdges})
	c = userConfig(dir)
	c.Schema = &s
	ds, msg := loadErr(t, c, dir)
	require.Equal(t, "", msg)
	assert.InDelta(t, 5e98, ds.Features[2], 5e98*1e-15)
}

// A model trained on unscaled features reads them unscaled: a value
// beyond the limit is refused, and the message does not offer scaling.
func TestSchemaUnscaledLimit(t *testing.T) {
	s := features.Schema{Names: []string{"age", "score"}}
	dir := writeFiles(t, map[string]string{"people.csv": strings.Replace(userCSV, "bob,30,", "bob,1e300,", 1), "links.txt": userEdges})
	c := userConfig(dir)
	c.Schema = &s
	_, msg := loadErr(t, c, dir)
	assert.Contains(t, msg, `F/people.csv:3:5: column "age": 1e300 is beyond ±1.34e+154, the limit for float64 arithmetic (FilesConfig.FeatureLimit): its square overflows; the model reads its features unscaled: rescale the column, or leave its node out`)
}
