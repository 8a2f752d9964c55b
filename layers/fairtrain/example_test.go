package fairtrain_test

import (
	"context"
	"fmt"

	"github.com/fairmp/fairmp/graph/datasets"
	"github.com/fairmp/fairmp/layers"
	"github.com/fairmp/fairmp/layers/fairness"
	"github.com/fairmp/fairmp/layers/fairtrain"
	"github.com/fairmp/fairmp/layers/train"
	"github.com/fairmp/fairmp/metrics"
	G "gorgonia.org/gorgonia"
)

// A GCN on a generated graph whose edges mostly join nodes of the same
// group, trained plainly and with the demographic-parity regulariser.
func Example() {
	sc := datasets.DefaultSyntheticConfig()
	sc.N = 600
	ds, err := datasets.Synthetic(sc)
	if err != nil {
		panic(err)
	}
	var acc, dp [2]float64
	for k, alpha := range []float64{0, 2} {
		g := G.NewGraph()
		x, err := train.FeatureNode(g, G.Float64, ds.Features, ds.N(), ds.NumFeatures, "x")
		if err != nil {
			panic(err)
		}
		phase := layers.NewPhase()
		mc := layers.DefaultGCNConfig(ds.NumFeatures, 2)
		mc.Hidden = 16
		model, err := layers.NewGCN(g, ds.Graph, mc, phase)
		if err != nil {
			panic(err)
		}
		task := &train.Task{Graph: g, X: x, Labels: ds.Labels, Train: ds.Split.Train, Val: ds.Split.Val, Classes: 2, Phase: phase}
		tc := train.DefaultConfig()
		tc.Epochs, tc.Adam.LR, tc.Select = 100, 0.01, train.SelectLast
		rc := fairtrain.DefaultRegularizerConfig()
		rc.Alpha = alpha
		if tc, err = rc.Apply(tc, task, ds.Sens); err != nil {
			panic(err)
		}
		if _, err := train.Fit(context.Background(), model, task, tc); err != nil {
			panic(err)
		}
		p, err := train.Predict(model, task, nil)
		if err != nil {
			panic(err)
		}
		r, err := metrics.Evaluate(p.Probs, 2, ds.Labels, ds.Sens, ds.Split.Test, metrics.DefaultOptions())
		if err != nil {
			panic(err)
		}
		acc[k], dp[k] = r.Accuracy, r.DemographicParity
	}
	// A run: α = 0 gave accuracy 86%, ΔDP 61%; α = 2 accuracy 71%, ΔDP 3%.
	fmt.Printf("α = 2 cuts ΔDP to less than a fifth: %v\n", dp[1] < dp[0]/5)
	fmt.Printf("for less than 25 points of accuracy: %v\n", acc[0]-acc[1] < 0.25)
	// Output:
	// α = 2 cuts ΔDP to less than a fifth: true
	// for less than 25 points of accuracy: true
}

// FairGNN on a GCN, with the group known for a quarter of the nodes:
// methods are looked up by name, and Fit builds the model on the
// backbone's configuration.
func ExampleFit() {
	sc := datasets.DefaultSyntheticConfig()
	sc.N = 300
	ds, err := datasets.Synthetic(sc)
	if err != nil {
		panic(err)
	}
	sens := make([]int, ds.N())
	for i := range sens {
		sens[i] = -1 // unknown
		if i%4 == 0 {
			sens[i] = ds.Sens[i]
		}
	}
	g := G.NewGraph()
	x, err := train.FeatureNode(g, G.Float64, ds.Features, ds.N(), ds.NumFeatures, "x")
	if err != nil {
		panic(err)
	}
	task := &train.Task{Graph: g, X: x, Labels: ds.Labels, Train: ds.Split.Train, Val: ds.Split.Val, Classes: 2, Phase: layers.NewPhase()}
	m, err := fairness.Lookup("fairgnn")
	if err != nil {
		panic(err)
	}
	tc := train.DefaultConfig()
	tc.Epochs = 20
	fit, err := fairness.Fit(context.Background(), fairness.WithSeed(m.(fairness.Weighted).WithWeight(1), 7), layers.DefaultGCNConfig(ds.NumFeatures, 2), fairness.NewSetup(ds.Graph, task, sens), tc)
	if err != nil {
		panic(err)
	}
	known := 0
	for i, s := range fit.SensScore {
		if s == float64(sens[i]) {
			known++
		}
	}
	fmt.Printf("%s: a %T trained %d epochs; %d of %d nodes entered with their known group\n", m.Name(), fit.Model, fit.Result.Epochs, known, ds.N())
	fmt.Println(fairness.Names(fairness.StageLoss, fairness.StageArchitecture))
	// Output:
	// fairgnn: a *fairtrain.Encoder trained 20 epochs; 75 of 300 nodes entered with their known group
	// [regularizer adversary mixup redress fmp fairgnn nifty fairvgnn rawlsgcn]
}
