package datasets

import (
	"fmt"

	"github.com/fairmp/fairmp/graph"
	"github.com/fairmp/fairmp/graph/features"
)

// Dataset is a node-classification data set with a sensitive attribute.
type Dataset struct {
	// Name identifies the data set ("nba", "bail", "synthetic", ...).
	Name string
	// Graph is the undirected graph over the N nodes.
	Graph *graph.Graph
	// Features holds the N × NumFeatures feature matrix, row-major.
	Features []float64
	// NumFeatures is the number of feature columns.
	NumFeatures int
	// FeatureNames names the feature columns, in order.
	FeatureNames []string
	// Scaling, if not nil, is the min-max scaling LoadFiles applied to
	// the raw columns (fitted on this data, or a saved schema's: see
	// FilesConfig.Schema); nil when the features are as read.
	Scaling *features.MinMax
	// Categorical lists the one-hot encoded columns and their levels
	// (FilesConfig.Categorical), in the order of their feature columns;
	// nil when none was.
	Categorical []features.Categorical
	// Labels holds each node's class (0 or 1 for the binary tasks of the
	// paper); −1 means unknown.
	Labels []int
	// Sens holds each node's sensitive group (0, 1, ... ); −1 means unknown.
	Sens []int
	// IDs holds the nodes' ids as written in the node table, when it has
	// an id column (LoadFiles with FilesConfig.IDColumn); nil otherwise:
	// nodes are then known by their 0-based row.
	IDs []string
	// ClassNames and GroupNames hold, when the loader mapped values to ids
	// (LoadFiles), the label value of each class id and the sensitive
	// value of each group id ("col=value & col=value" for intersections,
	// "other" for merged small groups); nil for the presets' classes, and
	// for their groups when the values are the ids (0..G−1).
	ClassNames, GroupNames []string
	// Split holds the train, validation and test node indices.
	Split Split
	// Warnings lists what the loader accepted but a careful user should
	// know: values folded into the binary label or group, a file whose
	// last line has no newline, and the like (see the package doc). The
	// examples print them; nil when there is nothing to say.
	Warnings []string
}

// Schema returns the feature columns' names and scaling: what a model
// trained on this data set must be given again (fmp/modelio records
// it in a model file).
func (d *Dataset) Schema() features.Schema {
	s := features.Schema{Names: append([]string(nil), d.FeatureNames...), Scaling: d.Scaling}
	for _, c := range d.Categorical {
		s.Categorical = append(s.Categorical, features.Categorical{Column: c.Column, Levels: append([]string(nil), c.Levels...)})
	}
	return s
}

// warnf adds a warning.
func (d *Dataset) warnf(format string, args ...any) {
	d.Warnings = append(d.Warnings, fmt.Sprintf(format, args...))
}

// Split is a partition of labelled nodes into train, validation and test
// indices (0-based node ids).
type Split struct {
	Train, Val, Test []int
}

// N returns the number of nodes.
func (d *Dataset) N() int { return len(d.Labels) }

// NumClasses returns 1 + the largest known label (at least 2).
func (d *Dataset) NumClasses() int {
	c := 2
	for _, y := range d.Labels {
		if y+1 > c {
			c = y + 1
		}
	}
	return c
}

// Names returns, for each of n nodes, the list it is in: "train", "val",
// "test", or "" for none. A node listed twice (NBA's validation list is
// its test list) takes the first of train, val, test.
func (s Split) Names(n int) []string {
	out := make([]string, n)
	for _, l := range []struct {
		name string
		idx  []int
	}{{"train", s.Train}, {"val", s.Val}, {"test", s.Test}} {
		for _, i := range l.idx {
			if i >= 0 && i < n && out[i] == "" {
				out[i] = l.name
			}
		}
	}
	return out
}
