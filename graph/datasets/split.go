package datasets

import (
	"fmt"
	"math"
	"math/rand"
	"sort"
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

// StratifiedSplit is RandomSplit drawn within each stratum of the
// labelled nodes, a stratum being one sensitive group (sens, −1 included)
// and one label: every stratum is split in the fractions, so that each
// group's validation and test nodes hold its classes in the proportions
// of its labelled nodes, and a small group still gets validation and
// test nodes. For each stratum of s nodes, taken in ascending id order
// and shuffled (strata in order of group, then label; one math/rand
// source seeded by seed):
//
//   - validation and test get ⌊f·s + ½⌋ nodes each, at least one when
//     their fraction is above 0 and s ≥ 2; training gets the rest when
//     the fractions sum to 1 (else ⌊f0·s + ½⌋, the rest left out), at
//     least one when s ≥ 3 and f0 > 0 (taken from the larger of the two
//     others);
//   - a stratum of one node goes to validation or test, alternately
//     within its group (validation first), so that a group of several
//     one-node strata has both; with a zero fraction, to the other.
//
// The fractions then hold for each stratum up to rounding, so overall
// within one node per stratum. The same inputs always give the same
// split; each list is in stratum order. Errors are RandomSplit's, and a
// length mismatch of labels and sens.
func StratifiedSplit(labels, sens []int, fracs [3]float64, seed int64) (Split, error) {
	if err := checkFractions("StratifiedSplit fractions", fracs); err != nil {
		return Split{}, err
	}
	if len(sens) != len(labels) {
		return Split{}, fmt.Errorf("datasets: StratifiedSplit: %d sensitive values for %d labels, want one per node", len(sens), len(labels))
	}
	type key struct{ s, y int }
	strata := map[key][]int{}
	var keys []key
	for i, y := range labels {
		if y < 0 {
			continue
		}
		k := key{sens[i], y}
		if _, ok := strata[k]; !ok {
			keys = append(keys, k)
		}
		strata[k] = append(strata[k], i)
	}
	sort.Slice(keys, func(a, b int) bool {
		if keys[a].s != keys[b].s {
			return keys[a].s < keys[b].s
		}
		return keys[a].y < keys[b].y
	})
	rng := rand.New(rand.NewSource(seed))
	round := func(f float64, s int) int { return int(math.Floor(f*float64(s) + 0.5 + 1e-9)) }
	all := fracs[0]+fracs[1]+fracs[2] >= 1-1e-9
	var sp Split
	toVal := map[int]bool{} // per group: the next one-node stratum goes to validation
	for _, k := range keys {
		idx := strata[k]
		rng.Shuffle(len(idx), func(a, b int) { idx[a], idx[b] = idx[b], idx[a] })
		s := len(idx)
		var nv, nt, ntr int
		if s == 1 {
			v, seen := toVal[k.s]
			if !seen {
				v = true
			}
			if fracs[1] == 0 {
				v = false
			}
			if fracs[2] == 0 && fracs[1] > 0 {
				v = true
			}
			toVal[k.s] = !v
			switch {
			case fracs[1] == 0 && fracs[2] == 0:
				if fracs[0] > 0 {
					ntr = 1
				}
			case v:
				nv = 1
			default:
				nt = 1
			}
		} else {
			nv, nt = round(fracs[1], s), round(fracs[2], s)
			if fracs[1] > 0 {
				nv = max(nv, 1)
			}
			if fracs[2] > 0 {
				nt = max(nt, 1)
			}
			want := 0
			if fracs[0] > 0 && s >= 3 {
				want = 1
			}
			for nv+nt > s-want {
				if nv >= nt {
					nv--
				} else {
					nt--
				}
			}
			ntr = s - nv - nt
			if !all {
				ntr = min(ntr, max(round(fracs[0], s), want))
				if fracs[0] == 0 {
					ntr = 0
				}
			}
		}
		sp.Val = append(sp.Val, idx[:nv]...)
		sp.Test = append(sp.Test, idx[nv:nv+nt]...)
		sp.Train = append(sp.Train, idx[nv+nt:nv+nt+ntr]...)
	}
	return sp, nil
}
