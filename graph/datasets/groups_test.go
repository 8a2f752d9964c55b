package datasets

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestIntersect(t *testing.T) {
	a := []int{0, 1, 1, 0, -1, 1}
	b := []int{1, 1, 0, 0, 1, -1}
	sens, combos, err := Intersect(a, b)
	require.NoError(t, err)
	// Combinations in order: (0,0), (0,1), (1,0), (1,1).
	assert.Equal(t, [][]int{{0, 0}, {0, 1}, {1, 0}, {1, 1}}, combos)
	assert.Equal(t, []int{1, 3, 2, 0, -1, -1}, sens)
	// A combination that does not occur is not a group.
	sens, combos, err = Intersect([]int{0, 0, 1}, []int{0, 1, 0})
	require.NoError(t, err)
	assert.Equal(t, [][]int{{0, 0}, {0, 1}, {1, 0}}, combos)
	assert.Equal(t, []int{0, 1, 2}, sens)
	// One attribute is itself.
	sens, _, err = Intersect([]int{2, 0, 1})
	require.NoError(t, err)
	assert.Equal(t, []int{2, 0, 1}, sens)
	_, _, err = Intersect([]int{0}, []int{0, 1})
	assert.ErrorContains(t, err, "attribute 1 has 2 values")
	_, _, err = Intersect([]int{0, -2})
	assert.ErrorContains(t, err, "node 1: group -2")
}

// TestLoadKeepsGroups: without FoldSens a preset's sensitive column keeps
// every value as a group (0, 1 and 3 here: three groups, named), and
// IntersectSens intersects columns.
func TestLoadKeepsGroups(t *testing.T) {
	dir := writeFiles(t, map[string]string{"toy.csv": fgCSV, "toy_relationship.txt": fgRel})
	c := fgConfig()
	c.Options = DefaultOptions()
	ds, err := LoadFairGNN(dir, c)
	require.NoError(t, err)
	assert.Equal(t, []int{0, 2, 1, 0}, ds.Sens)
	assert.Equal(t, []string{"0", "1", "3"}, ds.GroupNames)
	require.Len(t, ds.Warnings, 1, "only the label is folded: %q", ds.Warnings)

	// S × b: S 0,3,1,0 (ids 0,2,1,0), b 10,20,20,40 (ids 0,1,1,2).
	c.Options.IntersectSens = []string{"b"}
	ds, err = LoadFairGNN(dir, c)
	require.NoError(t, err)
	assert.Equal(t, []string{"S=0 & b=10", "S=0 & b=40", "S=1 & b=20", "S=3 & b=20"}, ds.GroupNames)
	assert.Equal(t, []int{0, 3, 2, 1}, ds.Sens)
	assert.Equal(t, []string{"a"}, ds.FeatureNames, "b is sensitive now, not a feature")

	// With FoldSens, binary values keep their ids and no names.
	c.Options = PaperOptions()
	ds, err = LoadFairGNN(dir, c)
	require.NoError(t, err)
	assert.Equal(t, []int{0, 1, 1, 0}, ds.Sens)
	assert.Nil(t, ds.GroupNames)

	c.Options.IntersectSens = []string{"S"}
	assert.ErrorContains(t, c.Validate(), `SensColumn and Options.IntersectSens[0] are both "S"`)
	c.Options.IntersectSens = []string{"nope"}
	_, err = LoadFairGNN(dir, c)
	assert.ErrorContains(t, err, `missing column "nope"`)
}

// TestLoadFilesIntersections: two text columns make four groups; groups
// below the minimum are refused or merged.
func TestLoadFilesIntersections(t *testing.T) {
	dir := writeFiles(t, map[string]string{"people.csv": userCSV, "links.txt": userEdges})
	c := userConfig(dir)
	c.Drop = nil
	c.Options.IntersectSens = []string{"job"}
	ds, err := LoadFiles(c)
	require.NoError(t, err)
	// region: east 0, north 1, south 2; job: x 0, y 1, z 2.
	// ann (north, x), bob (south, y), cid (east, x), dan (north, z), eve (south, y).
	assert.Equal(t, []string{"region=east & job=x", "region=north & job=x", "region=north & job=z", "region=south & job=y"}, ds.GroupNames)
	assert.Equal(t, []int{1, 3, 0, 2, 3}, ds.Sens)
	assert.Equal(t, []string{"age", "score"}, ds.FeatureNames)

	// Labelled nodes per group: 0 (cid is unlabelled), 1, 1, 2.
	c.Options.MinGroupSize = 2
	_, err = LoadFiles(c)
	var small *SmallGroupError
	require.True(t, errors.As(err, &small), "%v", err)
	assert.Equal(t, []string{"region=east & job=x", "region=north & job=x", "region=north & job=z"}, small.Groups)
	assert.Equal(t, []int{0, 1, 1}, small.Sizes)
	assert.Equal(t, 2, small.Min)
	assert.ErrorContains(t, err, `3 sensitive group(s) with fewer than 2 labelled nodes (Options.MinGroupSize): "region=east & job=x" (0), "region=north & job=x" (1), "region=north & job=z" (1); merge them (Options.MergeSmallGroups) or lower the minimum`)

	c.Options.MergeSmallGroups = true
	ds, err = LoadFiles(c)
	require.NoError(t, err)
	assert.Equal(t, []string{"region=south & job=y", "other"}, ds.GroupNames)
	assert.Equal(t, []int{1, 0, 1, 1, 0}, ds.Sens)
	require.NotEmpty(t, ds.Warnings)
	assert.Contains(t, ds.Warnings[0], `3 sensitive groups with fewer than 2 labelled nodes merged into group "other" (2 labelled nodes)`)

	c.Options.MinGroupSize = 3
	_, err = LoadFiles(c)
	require.True(t, errors.As(err, &small), "%v", err)
	assert.True(t, small.All)
	assert.ErrorContains(t, err, "every sensitive group has fewer than 3 labelled nodes")

	c.Options.MinGroupSize, c.Options.MergeSmallGroups = 0, false
	c.Options.FoldSens = true
	assert.ErrorContains(t, c.Validate(), "FoldSens")
}

func TestMinGroupSizeMerged(t *testing.T) {
	s := sensSpec{cols: []string{"s"}, min: 2, merge: true, warnf: func(string, ...any) {}}
	labels := []int{0, 0, 0, 0, 1}
	sens, names, err := s.minSize([]int{0, 0, 0, 1, 2}, []string{"a", "b", "c"}, labels)
	require.NoError(t, err)
	assert.Equal(t, []int{0, 0, 0, 1, 1}, sens)
	assert.Equal(t, []string{"a", "other"}, names)
	// The small groups' total is still below the minimum.
	_, _, err = s.minSize([]int{0, 0, 0, 1, -1}, []string{"a", "b"}, labels)
	var small *SmallGroupError
	require.True(t, errors.As(err, &small))
	assert.True(t, small.Merged)
	assert.Equal(t, 1, small.Total)
	assert.ErrorContains(t, err, `merged into one group for having fewer than 2 labelled nodes each, still make only 1`)
	// A group named "other" already: the merged one is "(other)".
	_, names, err = s.minSize([]int{0, 0, 1, 2, 0}, []string{"other", "b", "c"}, labels)
	require.NoError(t, err)
	assert.Equal(t, []string{"other", "(other)"}, names)
}
