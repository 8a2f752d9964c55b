package datasets

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCategorical(t *testing.T) {
	dir := writeFiles(t, map[string]string{"people.csv": userCSV, "links.txt": userEdges})
	c := userConfig(dir)
	c.Drop, c.Categorical = nil, []string{"job"}
	ds, err := LoadFiles(c)
	require.NoError(t, err)
	assert.Equal(t, []string{"age", "score", "job=x", "job=y", "job=z"}, ds.FeatureNames)
	// One-hot columns are 0/1, whatever the scaling.
	job := [][]float64{{1, 0, 0}, {0, 1, 0}, {1, 0, 0}, {0, 0, 1}, {0, 1, 0}}
	for r, want := range job {
		assert.Equal(t, want, ds.Features[r*5+2:r*5+5], "row %d", r)
	}
	assert.Equal(t, []float64{-1, -1, -1}, ds.Scaling.Min[2:])
	schema := ds.Schema()
	require.NoError(t, schema.Validate())
	require.Len(t, schema.Categorical, 1)
	assert.Equal(t, []string{"x", "y", "z"}, schema.Categorical[0].Levels)

	// New rows with the model's schema: the same levels, whatever this
	// table holds; a missing cell is no level; an unseen level is refused,
	// naming file:line:column, the level and the known ones.
	newCSV := "name,age,score,job,outcome,region,set\nann,20,1,z,yes,north,train\nbob,30,3,NA,no,south,train\ndan,50,7,x,yes,north,val\neve,60,9,x,no,south,test\n"
	d2 := writeFiles(t, map[string]string{"people.csv": newCSV, "links.txt": "ann bob\ndan eve\n"})
	c2 := userConfig(d2)
	c2.Drop, c2.Schema = nil, &schema
	got, err := LoadFiles(c2)
	require.NoError(t, err)
	assert.Equal(t, ds.FeatureNames, got.FeatureNames)
	assert.Equal(t, []float64{0, 0, 1}, got.Features[2:5])
	assert.Equal(t, []float64{0, 0, 0}, got.Features[7:10], "a missing cell")
	assert.True(t, schema.Equal(got.Schema()))
	d3 := writeFiles(t, map[string]string{"people.csv": strings.Replace(newCSV, "dan,50,7,x", "dan,50,7,boat", 1), "links.txt": "ann bob\ndan eve\n"})
	c3 := userConfig(d3)
	c3.Drop, c3.Schema = nil, &schema
	_, err = LoadFiles(c3)
	require.Error(t, err)
	assert.Contains(t, strings.ReplaceAll(err.Error(), d3, "F"), `F/people.csv:4:10: column "job": level "boat" is not one the model was trained on (it knows "x", "y", "z")`)
	c3.Categorical = []string{"age"}
	assert.ErrorContains(t, c3.Validate(), "the schema decides how columns are encoded")

	// The cap on levels names the column, its count and the field.
	c.MaxLevels = 2
	_, err = LoadFiles(c)
	require.Error(t, err)
	assert.Contains(t, strings.ReplaceAll(err.Error(), dir, "F"), `F/people.csv:1:4: column "job": 3 levels, more than FilesConfig.MaxLevels (2)`)
	// A categorical column must exist and be no other role.
	c.MaxLevels, c.Categorical = 50, []string{"jobs"}
	_, err = LoadFiles(c)
	assert.ErrorContains(t, err, `missing column "jobs"`)
	c.Categorical = []string{"region"}
	assert.ErrorContains(t, c.Validate(), `FilesConfig.SensColumn and Categorical[0] are both "region"`)
	// Without it, the text column's error says how to encode it.
	c.Categorical = nil
	_, err = LoadFiles(c)
	assert.ErrorContains(t, err, "one-hot encode categories (FilesConfig.Categorical)")
}
