package main

import (
	"context"
	"fmt"
	"io"
	"slices"

	"github.com/fairmp/fairmp/internal/testutil"
	"github.com/fairmp/fairmp/layers"
	"github.com/fairmp/fairmp/layers/fairness"
	"github.com/fairmp/fairmp/layers/preprocess"
	"github.com/fairmp/fairmp/layers/train"
)

// isPre reports whether name is a pre-processing method (package
// layers/preprocess): its row is the plain backbone trained on the
// method's debiased graph and features.
func isPre(name string) bool { return slices.Contains(fairness.Names(fairness.StagePre), name) }

// preprocessed returns p with its graph and features debiased by the
// named method (EDITS with -edits-threshold), seeded by seed, from the training nodes' groups (the
// EDITS authors' protocol), and the table's setting: the edges removed
// and added and EDITS' attribute and structural bias before → after over
// every node (×10⁻³). It logs the method's CPU time, per epoch for
// EDITS.
func preprocessed(o *options, p *problem, name string, seed int64, log io.Writer) (*problem, string, error) {
	m, err := fairness.Lookup(name)
	if err != nil {
		return nil, "", err
	}
	m = fairness.WithSeed(m, seed)
	if e, ok := m.(preprocess.EDITSConfig); ok {
		e.Threshold = o.editsThreshold
		m = e
	}
	ds := p.ds
	sens := make([]int, ds.N())
	for i := range sens {
		sens[i] = -1
	}
	for _, i := range ds.Split.Train {
		sens[i] = ds.Sens[i]
	}
	cpu := testutil.CPUTime()
	pm, ok := m.(fairness.Pre)
	if !ok {
		return nil, "", fmt.Errorf("%s is not a pre-processing method", name)
	}
	out, err := pm.Debias(context.Background(), ds.Graph, ds.Features, ds.NumFeatures, sens)
	if err != nil {
		return nil, "", fmt.Errorf("%s: %w", name, err)
	}
	cpu = testutil.CPUTime() - cpu
	bc := preprocess.DefaultBiasConfig()
	before, err := preprocess.Bias(ds.Graph, ds.Features, ds.NumFeatures, ds.Sens, bc)
	if err != nil {
		return nil, "", fmt.Errorf("%s: bias before: %w", name, err)
	}
	after, err := preprocess.Bias(out.Graph, out.Features, ds.NumFeatures, ds.Sens, bc)
	if err != nil {
		return nil, "", fmt.Errorf("%s: bias after: %w", name, err)
	}
	per := ""
	if e, ok := m.(preprocess.EDITSConfig); ok {
		per = fmt.Sprintf(" (%.2f ms an epoch, %d epochs)", 1e3*cpu.Seconds()/float64(e.Epochs), e.Epochs)
	}
	fmt.Fprintf(log, "seed %d %s: %.2f s CPU%s; edges −%d +%d of %d; columns zeroed %v; b_attr %.3f → %.3f, b_stru %.3f → %.3f (×10⁻³)\n",
		seed, name, cpu.Seconds(), per, out.Removed, out.Added, ds.Graph.NumEdges(), out.Masked,
		1e3*before.Attribute, 1e3*after.Attribute, 1e3*before.Structural, 1e3*after.Structural)
	cp := *ds
	cp.Graph, cp.Features = out.Graph, out.Features
	setting := fmt.Sprintf("−%d +%d edges; b_attr %.2f→%.2f, b_stru %.2f→%.2f", out.Removed, out.Added,
		1e3*before.Attribute, 1e3*after.Attribute, 1e3*before.Structural, 1e3*after.Structural)
	// A sensitive column the method zeroed no longer holds the attribute:
	// the counterfactual of a node (its group flipped, then debiased as
	// the method debiases) reads the same zeros, so perturb must not
	// write the flipped group into it (an input the model never saw,
	// which gave EDITS a counterfactual unfairness of 26% on Credit).
	sensCol := p.sensCol
	if slices.Contains(out.Masked, sensCol) {
		sensCol = -1
	}
	return &problem{ds: &cp, sensCol: sensCol}, setting, nil
}

// trainOn trains the plain backbone on p and logs its CPU time an epoch
// (to set beside the pre-processing's).
func trainOn(o *options, p *problem, seed int64, name string, log io.Writer) (layers.Model, *train.Task, error) {
	t, err := task(p)
	if err != nil {
		return nil, nil, err
	}
	cfg, err := backbone(o, p, seed)
	if err != nil {
		return nil, nil, err
	}
	cpu := testutil.CPUTime()
	fit, err := fairness.Fit(context.Background(), nil, cfg, setup(p, t, p.ds.Sens), trainConfig(o))
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", name, err)
	}
	cpu = testutil.CPUTime() - cpu
	fmt.Fprintf(log, "seed %d %s: the backbone on its data, %.2f s CPU (%.2f ms an epoch, %d epochs)\n",
		seed, name, cpu.Seconds(), 1e3*cpu.Seconds()/float64(fit.Result.Epochs), fit.Result.Epochs)
	return fit.Model, t, nil
}
