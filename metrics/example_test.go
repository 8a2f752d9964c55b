package metrics_test

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/fairmp/fairmp/metrics"
)

func ExampleDemographicParity() {
	// Group 0 has 4 nodes, 3 selected; group 1 has 2 nodes, 1 selected;
	// the node with group −1 (unknown) is excluded.
	pred := []int{1, 1, 1, 0, 1, 0, 1}
	sens := []int{0, 0, 0, 0, 1, 1, -1}
	dp, err := metrics.DemographicParity(pred, sens)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("ΔDP = %.4f = %.2f%%\n", dp, metrics.Percent(dp))
	// Output:
	// ΔDP = 0.2500 = 25.00%
}

func ExampleEqualOpportunity() {
	pred := []int{1, 0, 1, 1, 0, 1}
	labels := []int{1, 1, 0, 1, 1, 0}
	sens := []int{0, 0, 0, 1, 1, 1}
	// TPR: group 0 = 1/2, group 1 = 1/2.
	eo, err := metrics.EqualOpportunity(pred, labels, sens)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("ΔEO = %.2f%%\n", metrics.Percent(eo))

	// Without positives in group 1 the TPR gap is undefined: an error, not NaN.
	_, err = metrics.EqualOpportunity(pred, []int{1, 1, 0, 0, 0, 0}, sens)
	fmt.Println(errors.Is(err, metrics.ErrNoPositives))
	fmt.Println(err)
	// Output:
	// ΔEO = 0.00%
	// true
	// metrics: no positive nodes: group 1 has 3 evaluated nodes, none positive; its true-positive rate is undefined
}

func ExampleAUC() {
	// Positives score 0.4, 0.8 and 0.4, negatives 0.1 and 0.4: of the six
	// (positive, negative) pairs four are ordered and two tied → 5/6.
	auc, err := metrics.AUC([]float64{0.1, 0.4, 0.4, 0.8, 0.4}, []int{0, 0, 1, 1, 1})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("AUC = %.4f\n", auc)
	// Output:
	// AUC = 0.8333
}

func ExampleByGroup() {
	pred := []int{1, 1, 0, 0, 1, 0, 1, 0, 0}
	labels := []int{1, 0, 1, 0, 1, 0, 1, 1, 0}
	sens := []int{0, 0, 0, 0, 0, 0, 1, 1, 2}
	b, err := metrics.ByGroup(pred, labels, sens)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("group count   sel%   TPR%   FPR%   acc%")
	for _, g := range append(b.Groups, b.Overall) {
		name := fmt.Sprint(g.Group)
		if g.Group == -1 {
			name = "all"
		}
		fmt.Printf("%5s %5d %6.2f %6.2f %6.2f %6.2f\n", name, g.Count,
			metrics.Percent(g.SelectionRate), metrics.Percent(g.TPR),
			metrics.Percent(g.FPR), metrics.Percent(g.Accuracy))
	}
	fmt.Printf("ΔDP %.2f%%\n", metrics.Percent(b.DemographicParity()))
	if _, err := b.EqualOpportunity(); err != nil {
		fmt.Println(err) // group 2 has no positive node
	}
	// Output:
	// group count   sel%   TPR%   FPR%   acc%
	//     0     6  50.00  66.67  33.33  66.67
	//     1     2  50.00  50.00   0.00  50.00
	//     2     1   0.00   0.00   0.00 100.00
	//   all     9  44.44  60.00  25.00  66.67
	// ΔDP 50.00%
	// metrics: no positive nodes: group 2 has 1 evaluated nodes, none positive; its true-positive rate is undefined
}

func ExampleEvaluateBinary() {
	// P(y = 1) for 10 nodes; node 8 has an unknown label, node 9 an unknown
	// group. Evaluate the test nodes 0..9 (node 10 is not in the subset).
	p := []float64{0.9, 0.6, 0.5, 0.1, 0.7, 0.2, 0.51, 0.3, 0.8, 0.4, 0.99}
	labels := []int{1, 0, 1, 0, 1, 0, 1, 0, -1, 1, 1}
	sens := []int{0, 0, 0, 0, 1, 1, 1, 1, 0, -1, 1}
	test := []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}
	r, err := metrics.EvaluateBinary(p, labels, sens, test, metrics.DefaultOptions())
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(metrics.ReportHeader())
	fmt.Println(r)
	// Output:
	//    acc%     f1%    auc%    ΔDP%    ΔEO% ΔEOdds%       n   excl
	//   75.00   75.00   87.50    0.00   50.00   50.00       8      2
}

func ExampleEvaluate() {
	// Three classes, n × 3 probabilities row-major; class 2 is the positive
	// class of the fairness metrics (one-vs-rest).
	probs := []float64{
		0.2, 0.3, 0.5,
		0.1, 0.1, 0.8,
		0.6, 0.2, 0.2,
		0.4, 0.2, 0.4,
		0.1, 0.7, 0.2,
		0.3, 0.1, 0.6,
	}
	labels := []int{2, 1, 0, 2, 1, 2}
	sens := []int{0, 0, 0, 1, 1, 1}
	opt := metrics.DefaultOptions()
	opt.Positive = 2
	r, err := metrics.Evaluate(probs, 3, labels, sens, nil, opt)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(metrics.ReportHeader())
	fmt.Println(r)
	out, err := json.Marshal(r.Overall)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(string(out))
	// Output:
	//    acc%     f1%    auc%    ΔDP%    ΔEO% ΔEOdds%       n   excl
	//   66.67   66.67   66.67   33.33   50.00   50.00       6      0
	// {"group":-1,"count":6,"positives":3,"negatives":3,"selected":3,"true_positives":2,"false_positives":1,"correct":4,"selection_rate":0.5,"tpr":0.6666666666666666,"fpr":0.3333333333333333,"accuracy":0.6666666666666666}
}

func ExampleSummarize() {
	// Two runs (seeds) of a model on the same four test nodes.
	labels := []int{1, 0, 1, 0}
	sens := []int{0, 0, 1, 1}
	var reports []metrics.Report
	for _, p := range [][]float64{{0.9, 0.2, 0.8, 0.1}, {0.9, 0.6, 0.4, 0.1}} {
		r, err := metrics.EvaluateBinary(p, labels, sens, nil, metrics.DefaultOptions())
		if err != nil {
			fmt.Println(err)
			return
		}
		reports = append(reports, r)
	}
	s, err := metrics.Summarize(reports)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(metrics.SummaryHeader())
	fmt.Println(s)
	fmt.Println("ΔDP", s.DemographicParity)
	// Output:
	//          acc%           f1%          auc%          ΔDP%          ΔEO%       ΔEOdds% runs
	//   75.00±25.00   75.00±25.00   87.50±12.50   50.00±50.00   50.00±50.00   50.00±50.00    2
	// ΔDP 50.00±50.00
}

func ExampleBootstrap() {
	// A perfect classifier on 12 test nodes in two groups: group 0 has 4
	// positives of 6, group 1 has 2 of 6.
	labels := []int{1, 1, 1, 1, 0, 0, 1, 1, 0, 0, 0, 0}
	sens := []int{0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1}
	probs := make([]float64, 0, 2*len(labels))
	for _, y := range labels {
		p := 0.1 // P(y = 1)
		if y == 1 {
			p = 0.9
		}
		probs = append(probs, 1-p, p)
	}
	iv, err := metrics.Bootstrap(probs, 2, labels, sens, nil, metrics.DefaultOptions(), metrics.DefaultBootstrapConfig())
	if err != nil {
		fmt.Println(err)
		return
	}
	// Every resample is classified perfectly; ΔDP is the gap in positive
	// rates, 4/6 − 2/6, which 6 nodes per group pin down poorly.
	fmt.Printf("%.0f%% intervals, %d resamples of %d nodes\n", 100*iv.Level, iv.Resamples, iv.Evaluated)
	fmt.Println("accuracy%", iv.Accuracy)
	fmt.Println("ΔDP%     ", iv.DemographicParity)
	fmt.Println("ΔEO%     ", iv.EqualOpportunity)
	// ΔEO is undefined, and skipped, on resamples where group 1 drew
	// neither of its 2 positives (probability (4/6)⁶ ≈ 9%).
	fmt.Printf("ΔEO defined on %d of %d resamples\n", iv.EqualOpportunity.Used, iv.Resamples)
	// Output:
	// 95% intervals, 1000 resamples of 12 nodes
	// accuracy% 100.00 [100.00, 100.00]
	// ΔDP%      33.33 [0.00, 66.67]
	// ΔEO%      0.00 [0.00, 0.00]
	// ΔEO defined on 909 of 1000 resamples
}
