package datasets

import (
	"fmt"
	"math"
	"math/rand"
)

// RandomSplit partitions the labelled nodes (labels[i] >= 0) into train,
// validation and test sets. The labelled node ids are taken in ascending
// order, shuffled with math/rand seeded by seed, and cut at
// ⌊f0·L⌋, ⌊(f0+f1)·L⌋ and ⌊(f0+f1+f2)·L⌋ (L = number of labelled nodes;
// fracs = {f0, f1, f2}), so fractions summing to 1 use every labelled node
// and fractions summing to less leave the remainder out. The same inputs
// always give the same split. Each list is in shuffled order.
//
// It returns an error if a fraction is negative or not finite, or if they
// sum to more than 1.
func RandomSplit(labels []int, fracs [3]float64, seed int64) (Split, error) {
	if err := checkFractions("RandomSplit fractions", fracs); err != nil {
		return Split{}, err
	}
	var idx []int
	for i, y := range labels {
		if y >= 0 {
			idx = append(idx, i)
		}
	}
	rng := rand.New(rand.NewSource(seed))
	rng.Shuffle(len(idx), func(a, b int) { idx[a], idx[b] = idx[b], idx[a] })
	L := float64(len(idx))
	cut := func(f float64) int {
		c := int(math.Floor(f*L + 1e-9))
		if c > len(idx) {
			c = len(idx)
		}
		return c
	}
	c1 := cut(fracs[0])
	c2 := cut(fracs[0] + fracs[1])
	c3 := cut(fracs[0] + fracs[1] + fracs[2])
	cp := func(s []int) []int { return append([]int{}, s...) }
	return Split{Train: cp(idx[:c1]), Val: cp(idx[c1:c2]), Test: cp(idx[c2:c3])}, nil
}

func checkFractions(what string, f [3]float64) error {
	sum := 0.0
	for k, x := range f {
		if !(x >= 0) || math.IsInf(x, 0) {
			return fmt.Errorf("datasets: %s[%d] = %v, want a finite value >= 0", what, k, x)
		}
		sum += x
	}
	if sum > 1+1e-9 {
		return fmt.Errorf("datasets: %s = %v sum to %v, want a sum <= 1", what, f, sum)
	}
	return nil
}
