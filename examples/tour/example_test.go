package tour_test

import (
	"fmt"
	"log"

	"github.com/fairmp/fairmp/fmp"
	"github.com/fairmp/fairmp/graph/datasets"
	"github.com/fairmp/fairmp/layers"
	"github.com/fairmp/fairmp/layers/train"
	"github.com/fairmp/fairmp/metrics"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

func Example() {
	// 1. A data set: a real one with
	//    datasets.Load(os.Getenv("FAIRMP_DATA"), "nba", datasets.DefaultOptions()),
	//    or, as here, a generated graph whose edges mostly join nodes of the
	//    same sensitive group.
	ds, err := datasets.Synthetic(datasets.DefaultSyntheticConfig())
	if err != nil {
		log.Fatal(err)
	}

	// 2. The features as a gorgonia node, and the model MLP → FMP.
	g := G.NewGraph()
	x, err := train.FeatureNode(g, tensor.Float64, ds.Features, ds.N(), ds.NumFeatures, "x")
	if err != nil {
		log.Fatal(err)
	}
	phase := layers.NewPhase()                       // training/evaluation switch shared by the layers
	cfg := fmp.DefaultModelConfig(ds.NumFeatures, 2) // 2-layer MLP (64 hidden) → FMP (λs, λf, K, τ, ...)
	model, err := fmp.NewModel(g, ds.Graph, ds.Sens, cfg, phase)
	if err != nil {
		log.Fatal(err)
	}

	// 3. Train: full-batch Adam, 300 epochs, lr 1e-3, weight decay 1e-5.
	task := &train.Task{Graph: g, X: x, Labels: ds.Labels, Train: ds.Split.Train, Val: ds.Split.Val, Classes: 2, Phase: phase}
	if _, err := train.Fit(model, task, train.DefaultConfig()); err != nil {
		log.Fatal(err)
	}

	// 4. Evaluate on the test split: accuracy, ΔDP, ΔEO (fractions; printed in %).
	pred, err := train.Predict(model, task, nil)
	if err != nil {
		log.Fatal(err)
	}
	rep, err := metrics.Evaluate(pred.Probs, 2, ds.Labels, ds.Sens, ds.Split.Test, metrics.DefaultOptions())
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("test accuracy %.1f%%, ΔDP %.1f%%, ΔEO %.1f%%\n",
		metrics.Percent(rep.Accuracy), metrics.Percent(rep.DemographicParity), metrics.Percent(rep.EqualOpportunity))

	// 5. Audit: one forward pass of the trained MLP, then FMP with and
	//    without its sensitive-attribute steps. No retraining.
	var logits G.Value
	h, err := model.Backbone().Forward(x) // the same node the model built
	if err != nil {
		log.Fatal(err)
	}
	vm := G.NewTapeMachine(g.SubgraphRoots(G.Read(h, &logits)))
	defer vm.Close()
	if err := vm.RunAll(); err != nil {
		log.Fatal(err)
	}
	audit, err := fmp.Explain(logits.(*tensor.Dense), model.Matrix(), ds.Sens, cfg.FMP)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("gap in mean P(y=1) between groups: %.1f%% without the sensitive steps, %.1f%% with\n",
		metrics.Percent(audit.MaxGapBaseline[1]), metrics.Percent(audit.MaxGap[1]))
	fmt.Printf("group 1's mean P(y=1) moved by %+.1f points; largest logit change %.2f\n",
		metrics.Percent(audit.GroupShift[1][1]), audit.MaxAbsInfluence)
	// Output:
	// test accuracy 85.0%, ΔDP 20.4%, ΔEO 9.4%
	// gap in mean P(y=1) between groups: 27.6% without the sensitive steps, 22.5% with
	// group 1's mean P(y=1) moved by -3.8 points; largest logit change 0.44
}
