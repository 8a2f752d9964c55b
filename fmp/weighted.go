package fmp

import (
	"fmt"
	"math"

	"github.com/fairmp/fairmp/graph"
)

// NewWeightedDeltaS builds a weighted group contrast: node i of group g
// counts with weight w_i ≥ 0 in its group's mean, so the binary row is
// +w_i/W₁ on group 1 and −w_i/W₀ on group 0 (W_g: the total weight of
// group g's known members), and row g of the per-group form is w_i/W_g
// on group g minus w_i/W on every known node (W: the total weight of the
// known nodes). (Δs·SF(F)) is then the gap between the groups'
// weighted mean predicted probabilities. With w_i = P(y_i = 1), a
// backbone's estimate that node i is positive, it is a soft estimate of
// the gap of the groups' true-positive rates (equal opportunity) that
// reaches every node, not only the labelled ones.
//
// sens and perGroup are as in NewDeltaS, and weights ≡ 1 gives exactly
// NewDeltaS's Δs. The weights of nodes whose group is unknown are
// ignored. Under Normalized scaling λf keeps its meaning for a node of
// average weight in its group; a node's shift scales with its weight.
//
// NewWeightedDeltaS returns an error for the cases of NewDeltaS, for a
// weights slice of another length than sens, for a weight that is
// negative, NaN or infinite, and for a group whose total weight is 0.
func NewWeightedDeltaS(sens []int, weights []float64, perGroup bool) (*DeltaS, error) {
	if len(weights) != len(sens) {
		return nil, fmt.Errorf("fmp: NewWeightedDeltaS: %d weights for %d nodes, want one per node", len(weights), len(sens))
	}
	for i, w := range weights {
		if !(w >= 0) || math.IsInf(w, 1) {
			return nil, fmt.Errorf("fmp: NewWeightedDeltaS: weights[%d] = %v, want a finite value ≥ 0", i, w)
		}
	}
	return newDeltaS("NewWeightedDeltaS", sens, weights, perGroup)
}

// NewWithDeltaS returns an FMP layer, as New does, whose fairness steps
// use the given group contrast ds (from NewDeltaS or NewWeightedDeltaS)
// instead of the one New builds from sens. ds must have been built from
// sens: the same number of nodes and the same members per group; and its
// form must be the one cfg asks for (one row per group if
// cfg.PerGroupRows or the attribute has three or more groups, else the
// binary row). sens is copied. Use the layer with Layer.Apply on a
// backbone's logits, or with Forward.
//
// NewWithDeltaS returns the errors of New, and an error for a nil ds or
// one that does not match sens or cfg.
func NewWithDeltaS(adj *graph.Matrix, sens []int, ds *DeltaS, cfg Config) (*Layer, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if adj == nil {
		return nil, fmt.Errorf("fmp: NewWithDeltaS: nil adjacency")
	}
	if ds == nil {
		return nil, fmt.Errorf("fmp: NewWithDeltaS: nil group contrast")
	}
	r, c := adj.Dims()
	if r != c || r != len(sens) || ds.N() != len(sens) {
		return nil, fmt.Errorf("fmp: NewWithDeltaS: adjacency is %d × %d, sens has %d entries and Δs %d columns, want n × n and n with n = len(sens)", r, c, len(sens), ds.N())
	}
	counts := make([]int, ds.Groups())
	for i, s := range sens {
		if s < -1 || s >= ds.Groups() {
			return nil, fmt.Errorf("fmp: NewWithDeltaS: sens[%d] = %d, want a group of Δs (0..%d) or −1", i, s, ds.Groups()-1)
		}
		if s >= 0 {
			counts[s]++
		}
	}
	for g, n := range counts {
		if n != ds.Counts()[g] {
			return nil, fmt.Errorf("fmp: NewWithDeltaS: group %d has %d members in sens and %d in Δs, want Δs built from sens", g, n, ds.Counts()[g])
		}
	}
	if want := cfg.PerGroupRows || ds.Groups() > 2; ds.PerGroup() != want {
		return nil, fmt.Errorf("fmp: NewWithDeltaS: Δs has %d row(s) and Config.PerGroupRows = %v, want the form the config asks for (per-group rows: %v)", ds.Rows(), cfg.PerGroupRows, want)
	}
	if err := checkPropagation(adj); err != nil {
		return nil, fmt.Errorf("fmp: NewWithDeltaS: adjacency: %w", err)
	}
	return newChecked(adj, append([]int(nil), sens...), ds, cfg), nil
}
