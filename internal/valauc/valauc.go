// Package valauc computes the validation AUC that fairmp's training loops
// (layers/train, layers/minibatch, layers/fairtrain's FairVGNN) select
// epochs by, from a model's logits.
package valauc

import (
	"math"

	"github.com/fairmp/fairmp/metrics"
	"gorgonia.org/tensor"
)

// Of returns the ROC AUC of the n × c logits z on the nodes idx
// (metrics.AUC: ties count one half). Two classes: the AUC of class 1's
// score. More: the macro one-vs-rest AUC, the mean over the classes k of
// the AUC of class k's score against the other classes (sklearn's
// roc_auc_score with multi_class="ovr", average="macro"). Class k's score
// is its log-odds z_k − log Σ_{j≠k} exp(z_j), which ranks the nodes as
// P(k) does without rounding to 0 or 1 (for two classes, z_1 − z_0).
//
// The AUC is undefined when a class has no node in idx (or every node):
// Of then returns 0 and ok false.
func Of(z *tensor.Dense, labels, idx []int, c int) (auc float64, ok bool) {
	present := make([]int, c)
	for _, i := range idx {
		if y := labels[i]; y >= 0 && y < c {
			present[y]++
		}
	}
	for _, n := range present {
		if n == 0 || n == len(idx) {
			return 0, false
		}
	}
	scores := make([]float64, len(idx))
	bin := make([]int, len(idx))
	classes := []int{1}
	if c > 2 {
		classes = make([]int, c)
		for k := range classes {
			classes[k] = k
		}
	}
	row := make([]float64, c)
	for _, k := range classes {
		for j, i := range idx {
			switch s := z.Data().(type) {
			case []float64:
				copy(row, s[i*c:(i+1)*c])
			case []float32:
				for m := range row {
					row[m] = float64(s[i*c+m])
				}
			}
			scores[j] = logOdds(row, k)
			bin[j] = 0
			if labels[i] == k {
				bin[j] = 1
			}
		}
		a, err := metrics.AUC(scores, bin)
		if err != nil {
			return 0, false // a non-finite logit
		}
		auc += a
	}
	return auc / float64(len(classes)), true
}

// logOdds returns z_k − log Σ_{j≠k} exp(z_j).
func logOdds(z []float64, k int) float64 {
	m := math.Inf(-1)
	for j, v := range z {
		if j != k {
			m = math.Max(m, v)
		}
	}
	var s float64
	for j, v := range z {
		if j != k {
			s += math.Exp(v - m)
		}
	}
	return z[k] - m - math.Log(s)
}
