package metrics_test

import (
	"fmt"

	"github.com/fairmp/fairmp/metrics"
)

// Three classes, two groups: each class's selection rate per group, and
// the c-class ΔDP and ΔEOdds, the worst class's one-vs-rest gap.
func ExampleByGroupClasses() {
	sens := []int{0, 0, 0, 0, 0, 0, 1, 1, 1, 1}
	labels := []int{0, 0, 1, 1, 2, 2, 0, 1, 2, 2}
	pred := []int{0, 1, 1, 1, 2, 0, 0, 0, 2, 1}
	b, err := metrics.ByGroupClasses(pred, labels, sens, 3)
	if err != nil {
		fmt.Println(err)
		return
	}
	for k, c := range b.Class {
		fmt.Printf("class %d: P(ŷ=%d | s=0) = %.3f, P(ŷ=%d | s=1) = %.3f\n", k, k, c.Groups[0].SelectionRate, k, c.Groups[1].SelectionRate)
	}
	for _, c := range []metrics.Criterion{metrics.DPDifference, metrics.EOddsDifference} {
		v, class, err := b.Criterion(c)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("%s = %.2f%% (class %d)\n", c.Title(), metrics.Percent(v), class)
	}
	f1, _ := b.MacroF1()
	fmt.Printf("accuracy %.2f%%, macro-F1 %.2f%%\n", metrics.Percent(b.Accuracy()), metrics.Percent(f1))
	// Output:
	// class 0: P(ŷ=0 | s=0) = 0.333, P(ŷ=0 | s=1) = 0.500
	// class 1: P(ŷ=1 | s=0) = 0.500, P(ŷ=1 | s=1) = 0.250
	// class 2: P(ŷ=2 | s=0) = 0.167, P(ŷ=2 | s=1) = 0.250
	// ΔDP = 25.00% (class 1)
	// ΔEOdds = 100.00% (class 1)
	// accuracy 60.00%, macro-F1 60.32%
}
