package fmp_test

import (
	"context"
	"fmt"

	"github.com/fairmp/fairmp/fmp"
	"github.com/fairmp/fairmp/graph"
	"github.com/fairmp/fairmp/graph/datasets"
	"github.com/fairmp/fairmp/layers"
	"github.com/fairmp/fairmp/layers/train"
	"github.com/fairmp/fairmp/metrics"
	"github.com/fairmp/fairmp/metrics/selection"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Auditing a backbone's predictions: one forward pass shows how much the
// sensitive attribute moved each prediction and each group, without
// retraining.
func ExampleExplain() {
	// Two communities of 4 nodes joined by one edge; community = group.
	g, _ := graph.FromEdges(8, [][2]int{
		{0, 1}, {1, 2}, {2, 3}, {3, 0}, {4, 5}, {5, 6}, {6, 7}, {7, 4}, {3, 4},
	})
	sens := []int{0, 0, 0, 0, 1, 1, 1, 1}
	// A backbone's logits (class 0, class 1): group 1 leans to class 1.
	logits := tensor.New(tensor.WithShape(8, 2), tensor.WithBacking([]float64{
		0.5, -0.5, 0.8, -0.2, 0.1, 0.0, 0.3, -0.4,
		-0.6, 0.7, -0.2, 0.9, 0.0, 0.4, -0.8, 0.2,
	}))
	cfg := fmp.DefaultConfig() // λs = 1, λf = 2, K = 10, τ = 0.5
	rep, err := fmp.Explain(logits, graph.NormalizedAdjacency(g), sens, cfg)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("gap in P(class 1) between groups: %.3f without the sensitive steps, %.3f with\n",
		rep.MaxGapBaseline[1], rep.MaxGap[1])
	for grp, shift := range rep.GroupShift {
		fmt.Printf("group %d: mean P(class 1) moved by %+.3f\n", grp, shift[1])
	}
	fmt.Printf("node 4 logits moved by %+.3f, %+.3f\n", rep.NodeInfluence(4)[0], rep.NodeInfluence(4)[1])
	fmt.Printf("largest logit change: %.3f; final dual u = %+.2f\n", rep.MaxAbsInfluence, rep.Dual)
	// Output:
	// gap in P(class 1) between groups: 0.347 without the sensitive steps, 0.000 with
	// group 0: mean P(class 1) moved by +0.178
	// group 1: mean P(class 1) moved by -0.169
	// node 4 logits moved by +0.289, -0.289
	// largest logit change: 0.409; final dual u = [-1.72 +1.72]
}

// FMP on a GCN, PyG's FMP(GCN(...)): build the backbone, put FMP on it,
// train it the recommended way (the backbone with λf = 0, then debias at
// inference), and compare with the backbone alone.
func ExampleOn() {
	sc := datasets.DefaultSyntheticConfig() // edges mostly within a sensitive group
	sc.N = 1000
	ds, err := datasets.Synthetic(sc)
	if err != nil {
		panic(err)
	}
	g := G.NewGraph()
	x, err := train.FeatureNode(g, tensor.Float64, ds.Features, ds.N(), ds.NumFeatures, "x")
	if err != nil {
		panic(err)
	}
	phase := layers.NewPhase()
	gcn, err := layers.NewGCN(g, ds.Graph, layers.DefaultGCNConfig(ds.NumFeatures, 2), phase)
	if err != nil {
		panic(err)
	}
	model, err := fmp.On(gcn, ds.Graph, ds.Sens, fmp.DefaultOnConfig(), phase) // FMP(GCN(...))
	if err != nil {
		panic(err)
	}
	task := &train.Task{Graph: g, X: x, Labels: ds.Labels, Train: ds.Split.Train, Val: ds.Split.Val, Classes: 2, Phase: phase}
	tc := train.DefaultConfig()
	tc.Epochs, tc.Adam.LR = 100, 0.01
	if _, err := model.FitTwoStage(context.Background(), task, tc); err != nil {
		panic(err)
	}
	testDP := func(m layers.Model) float64 {
		p, err := train.Predict(m, task, nil)
		if err != nil {
			panic(err)
		}
		r, err := metrics.Evaluate(p.Probs, 2, ds.Labels, ds.Sens, ds.Split.Test, metrics.DefaultOptions())
		if err != nil {
			panic(err)
		}
		return r.DemographicParity
	}
	fmt.Printf("test ΔDP of FMP(GCN) lower than the trained GCN's: %v\n", testDP(model) < testDP(gcn))
	// Output:
	// test ΔDP of FMP(GCN) lower than the trained GCN's: true
}

// The fairness frontier: λf chosen on validation data by a stated rule,
// from one forward pass of a trained backbone (no retraining), then the
// chosen model evaluated on test.
func ExampleNewFrontier() {
	sc := datasets.DefaultSyntheticConfig()
	sc.N = 1000
	ds, err := datasets.Synthetic(sc)
	if err != nil {
		panic(err)
	}
	g := G.NewGraph()
	x, err := train.FeatureNode(g, tensor.Float64, ds.Features, ds.N(), ds.NumFeatures, "x")
	if err != nil {
		panic(err)
	}
	phase := layers.NewPhase()
	cfg := fmp.DefaultModelConfig(ds.NumFeatures, 2) // MLP → FMP, the paper's model
	model, err := fmp.NewModel(g, ds.Graph, ds.Sens, cfg, phase)
	if err != nil {
		panic(err)
	}
	task := &train.Task{Graph: g, X: x, Labels: ds.Labels, Train: ds.Split.Train, Val: ds.Split.Val, Classes: 2, Phase: phase}
	tc := train.DefaultConfig()
	tc.Epochs, tc.Adam.LR = 100, 0.01
	if _, err := model.FitTwoStage(context.Background(), task, tc); err != nil {
		panic(err)
	}
	fc := fmp.DefaultFrontierConfig()               // 20 values of λf
	fc.Rule = selection.Rule{MaxAccuracyLoss: 0.02} // lowest validation ΔDP within 2 points
	fc.Test = ds.Split.Test                         // reported, never used to choose
	frontier, err := fmp.NewFrontier(context.Background(), model, task, fc)
	if err != nil {
		panic(err)
	}
	best, ref := frontier.Best(), frontier.Reference
	fmt.Printf("%d settings evaluated\n", len(frontier.Points))
	fmt.Printf("chosen within 2 points of validation accuracy: %v\n", best.Val.Accuracy >= ref.Val.Accuracy-0.02)
	fmt.Printf("test ΔDP lower than without debiasing: %v\n", best.Test.DemographicParity < ref.Test.DemographicParity)
	// Output:
	// 20 settings evaluated
	// chosen within 2 points of validation accuracy: true
	// test ΔDP lower than without debiasing: true
}
