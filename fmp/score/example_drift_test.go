package score_test

import (
	"bytes"
	"context"
	"fmt"
	"log"
	"slices"

	"github.com/fairmp/fairmp/fmp/modelio"
	"github.com/fairmp/fairmp/fmp/score"
	"github.com/fairmp/fairmp/graph/datasets"
	"github.com/fairmp/fairmp/graph/features"
	"github.com/fairmp/fairmp/layers"
	"github.com/fairmp/fairmp/layers/train"
	"github.com/fairmp/fairmp/metrics"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// A model saved with its drift baseline, then a node that arrived after
// training: scored on its receptive field, and its scores compared with
// the baseline (the groups' rates and criteria, the group mix, every
// feature), with no labels. (Compiled, not run: it trains for 300 epochs.)
func Example_drift() {
	ctx := context.Background()
	ds, err := datasets.Synthetic(datasets.DefaultSyntheticConfig())
	check(err)
	g, phase := G.NewGraph(), layers.NewPhase()
	x, err := train.FeatureNode(g, tensor.Float64, ds.Features, ds.N(), ds.NumFeatures, "x")
	check(err)
	mlp, err := layers.NewMLP(g, nil, layers.DefaultMLPConfig(ds.NumFeatures, 2), phase)
	check(err)
	task := &train.Task{Graph: g, X: x, Labels: ds.Labels, Train: ds.Split.Train, Val: ds.Split.Val, Classes: 2, Phase: phase}
	_, err = train.Fit(ctx, mlp, task, train.DefaultConfig())
	check(err)
	pred, err := train.Predict(mlp, task, nil)
	check(err)
	// The baseline: decisions on the validation nodes, the groups' names, the training features.
	base, err := metrics.NewBaseline(pred.Probs, 2, ds.Labels, ds.Sens, ds.Split.Val, metrics.DefaultOptions(), metrics.DefaultBootstrapConfig())
	check(err)
	base.GroupNames = ds.GroupNames // from a loaded table: "Female", not "group 1"
	check(base.RecordFeatures(ds.Features, ds.NumFeatures, nil, ds.Split.Train))
	var file bytes.Buffer // or a file
	check(modelio.Save(&file, mlp, modelio.SaveConfig{Baseline: &base}))

	// Later: a new node v, joined to nodes 3 and 7, with node 3's features and group.
	s, err := score.Open(&file, score.DefaultConfig())
	check(err)
	v, d := ds.N(), ds.NumFeatures
	grown, err := ds.Graph.Grow(1, [][2]int{{v, 3}, {v, 7}})
	check(err)
	grownX, err := features.NewDense(slices.Concat(ds.Features, ds.Features[3*d:4*d]), v+1, d)
	check(err)
	sens := append(ds.Sens, ds.Sens[3])
	out, err := s.Score(ctx, grown, grownX, sens, []int{v}) // out.Probs: v's P(class 0), P(class 1)
	check(err)
	drift, err := s.Drift(out, nil, sens, grownX) // nil: no labels known
	check(err)
	fmt.Println(drift) // warnings, then notes
}

// check stops the example on an error.
func check(err error) {
	if err != nil {
		log.Fatal(err)
	}
}
