package metrics

import (
	"fmt"
	"math"
	"sort"
)

// AUC returns the area under the ROC curve of scores for binary labels
// (positive class 1): the probability that a random positive node scores
// higher than a random negative one, ties counting one half. This equals
// the trapezoidal area under the ROC curve whose points are the distinct
// score thresholds, and sklearn's roc_auc_score. It is computed from
// average ranks (Mann–Whitney U) in O(n log n).
//
// Scores may be any finite numbers (probabilities, logits); labels must be
// 0, 1 or −1 (unknown, excluded). AUC returns an error wrapping ErrLength,
// ErrValue (a label outside the set or a NaN or infinite score), ErrEmpty,
// ErrNoPositives or ErrNoNegatives (the curve needs both classes).
func AUC(scores []float64, labels []int) (float64, error) {
	if err := sameLength("scores", len(scores), "labels", len(labels)); err != nil {
		return 0, err
	}
	idx := make([]int, 0, len(scores))
	for i, s := range scores {
		y := labels[i]
		if y < -1 || y > 1 {
			return 0, fmt.Errorf("%w: labels[%d] = %d, want 0 or 1 (or −1, unknown)", ErrValue, i, y)
		}
		if math.IsNaN(s) || math.IsInf(s, 0) {
			return 0, fmt.Errorf("%w: scores[%d] = %v, want a finite number", ErrValue, i, s)
		}
		if y != -1 {
			idx = append(idx, i)
		}
	}
	if len(idx) == 0 {
		return 0, emptyErr(len(scores), "label")
	}
	return aucOf(scores, labels, idx, 1)
}

// aucOf computes the AUC over the nodes idx (labels known, scores finite),
// a node being positive when its label is pos.
func aucOf(scores []float64, labels []int, idx []int, pos int) (float64, error) {
	idx = append([]int(nil), idx...)
	sort.Slice(idx, func(a, b int) bool { return scores[idx[a]] < scores[idx[b]] })
	var rankSum float64 // sum of 1-based average ranks of the positives
	nPos := 0
	for lo := 0; lo < len(idx); {
		hi := lo + 1
		for hi < len(idx) && scores[idx[hi]] == scores[idx[lo]] {
			hi++
		}
		// Ranks lo+1..hi share their average (lo+1+hi)/2.
		avg := float64(lo+1+hi) / 2
		for _, i := range idx[lo:hi] {
			if labels[i] == pos {
				rankSum += avg
				nPos++
			}
		}
		lo = hi
	}
	nNeg := len(idx) - nPos
	if nPos == 0 {
		return 0, fmt.Errorf("%w: all %d evaluated nodes are negative; AUC is undefined", ErrNoPositives, len(idx))
	}
	if nNeg == 0 {
		return 0, fmt.Errorf("%w: all %d evaluated nodes are positive; AUC is undefined", ErrNoNegatives, len(idx))
	}
	p, q := float64(nPos), float64(nNeg)
	u := rankSum - p*(p+1)/2
	return u / (p * q), nil
}
