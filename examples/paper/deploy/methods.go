package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"gorgonia.org/tensor"

	"github.com/fairmp/fairmp/examples/paper/internal/exp"
	"github.com/fairmp/fairmp/graph/datasets"
	"github.com/fairmp/fairmp/layers"
	"github.com/fairmp/fairmp/layers/fairness"
	"github.com/fairmp/fairmp/layers/fairtrain"
	"github.com/fairmp/fairmp/layers/preprocess"
	"github.com/fairmp/fairmp/layers/train"
)

// studyMethods are the registry's methods this study can run besides the
// GCN, FMP and the thresholds, in table order: the in-training and
// architecture methods (FMP aside, which the study puts on the GCN
// itself) and the pre-processing ones.
func studyMethods() []string {
	var out []string
	for _, n := range fairness.Names(fairness.StageLoss, fairness.StageArchitecture, fairness.StagePre) {
		if n != "fmp" {
			out = append(out, n)
		}
	}
	return out
}

// trainedMethod is a method's model trained on the old graph.
type trainedMethod struct {
	model layers.Model
	// pred is the model's output for every node of in, the data it
	// trained on.
	pred *train.Prediction
	// in is the old graph for every method but a pre-processing one,
	// whose debiased copy of it it is.
	in      *datasets.Dataset
	took    time.Duration
	setting string
}

// trainMethod trains the method name on the old graph with the study's
// GCN and protocol (fairness.Fit, seeded by seed): an in-training method
// trains the GCN with its terms, an architecture method its own model on
// the GCN (FairVGNN's mask then folded into a copy, the model its file
// holds). A pre-processing method debiases the old graph and features
// from the training nodes' groups (as debias does), and the GCN trains
// plainly on its output.
func trainMethod(name string, old *datasets.Dataset, seed int64, so studyOptions) (*trainedMethod, error) {
	m, err := fairness.Lookup(name)
	if err != nil {
		return nil, err
	}
	m = fairness.WithSeed(m, seed)
	if a, ok := m.(fairtrain.AdversaryConfig); ok {
		// The classifier's pre-training must end before the run does
		// (the default, 70 of 300 epochs, elsewhere).
		a.PretrainClassifier = max(1, min(a.PretrainClassifier, so.train.Epochs/4))
		m = a
	}
	begin := time.Now()
	in, setting := old, ""
	if pre, ok := m.(fairness.Pre); ok {
		if e, ok := pre.(preprocess.EDITSConfig); ok {
			e.Dtype = tensor.Float64
			pre = e
		}
		sens := make([]int, old.N())
		for i := range sens {
			sens[i] = -1
		}
		for _, i := range old.Split.Train {
			sens[i] = old.Sens[i]
		}
		out, err := pre.Debias(context.Background(), old.Graph, old.Features, old.NumFeatures, sens)
		if err != nil {
			return nil, err
		}
		cp := *old
		cp.Graph, cp.Features = out.Graph, out.Features
		in = &cp
		setting = fmt.Sprintf("%d edges removed, %d added, columns zeroed %v", out.Removed, out.Added, out.Masked)
		m = nil // the GCN trains plainly on the debiased data
	}
	p, err := exp.NewProblem(in, tensor.Float64)
	if err != nil {
		return nil, err
	}
	k, err := layers.LookupKind("gcn")
	if err != nil {
		return nil, err
	}
	spec := exp.DefaultSpec("gcn")
	cfg, err := k.Configure(in.NumFeatures, p.Task.Classes, layers.Options{Dtype: spec.Dtype, Seed: seed, Hidden: spec.Hidden})
	if err != nil {
		return nil, err
	}
	tc := train.DefaultConfig()
	tc.Epochs, tc.Select, tc.Adam = so.train.Epochs, so.train.Select, so.train.Adam
	// The sensitive attribute is not among the study's features
	// (datasets.PaperOptions): NIFTY's counterfactual view flips nothing.
	fit, err := fairness.Fit(context.Background(), m, cfg, fairness.NewSetup(in.Graph, p.Task, in.Sens), tc)
	if err != nil {
		return nil, err
	}
	took := time.Since(begin)
	// The validation figures are the trained model's own output.
	pred, err := train.Predict(fit.Model, p.Task, nil)
	if err != nil {
		return nil, err
	}
	model := fit.Model
	if me, ok := model.(*fairtrain.MaskedEncoder); ok {
		// FairVGNN: its model file holds the encoder with the mask
		// folded into its input weights, built in a graph of its own.
		q, err := exp.NewProblem(in, tensor.Float64)
		if err != nil {
			return nil, err
		}
		if model, err = me.Folded(q.Task.Graph, in.Graph, q.Task.Phase); err != nil {
			return nil, fmt.Errorf("folding the mask: %w", err)
		}
	}
	if w, ok := m.(fairness.Weighted); ok {
		setting = strings.TrimSpace(fmt.Sprintf("weight %g %s", w.Weight(), setting))
	}
	return &trainedMethod{model: model, pred: pred, in: in, took: took, setting: setting}, nil
}
