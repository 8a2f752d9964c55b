package metrics

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// GroupStats holds the confusion counts of one sensitive group (or of all
// evaluated nodes) and the rates derived from them. A node is positive when
// its label is the positive class and selected when its prediction is.
type GroupStats struct {
	// Group is the sensitive group id, or −1 for the overall row.
	Group int `json:"group"`
	// Count is the number of evaluated nodes in the group.
	Count int `json:"count"`
	// Positives and Negatives count the nodes whose label is, or is not,
	// the positive class.
	Positives int `json:"positives"`
	Negatives int `json:"negatives"`
	// Selected counts the nodes predicted as the positive class.
	Selected int `json:"selected"`
	// TruePositives and FalsePositives count selected positives and
	// selected negatives.
	TruePositives  int `json:"true_positives"`
	FalsePositives int `json:"false_positives"`
	// Correct counts the nodes whose prediction equals their label.
	Correct int `json:"correct"`
	// SelectionRate is Selected / Count, P(ŷ = 1 | s = g).
	SelectionRate float64 `json:"selection_rate"`
	// TPR is TruePositives / Positives, P(ŷ = 1 | y = 1, s = g); 0 when
	// Positives is 0 (check Positives before using it; JSON: null).
	TPR float64 `json:"tpr"`
	// FPR is FalsePositives / Negatives, P(ŷ = 1 | y = 0, s = g); 0 when
	// Negatives is 0 (check Negatives before using it; JSON: null).
	FPR float64 `json:"fpr"`
	// Accuracy is Correct / Count. SelectionRate and Accuracy are 0
	// when Count is 0 (JSON: null).
	Accuracy float64 `json:"accuracy"`
}

// groupStatsJSON is GroupStats' JSON form: a rate without a denominator
// is null.
type groupStatsJSON struct {
	Group          int      `json:"group"`
	Count          int      `json:"count"`
	Positives      int      `json:"positives"`
	Negatives      int      `json:"negatives"`
	Selected       int      `json:"selected"`
	TruePositives  int      `json:"true_positives"`
	FalsePositives int      `json:"false_positives"`
	Correct        int      `json:"correct"`
	SelectionRate  *float64 `json:"selection_rate"`
	TPR            *float64 `json:"tpr"`
	FPR            *float64 `json:"fpr"`
	Accuracy       *float64 `json:"accuracy"`
}

// MarshalJSON writes a rate whose denominator is 0 as null (undefined),
// not as the 0 the struct holds.
func (g GroupStats) MarshalJSON() ([]byte, error) {
	rate := func(v float64, den int) *float64 {
		if den == 0 {
			return nil
		}
		return &v
	}
	return json.Marshal(groupStatsJSON{g.Group, g.Count, g.Positives, g.Negatives, g.Selected, g.TruePositives, g.FalsePositives, g.Correct,
		rate(g.SelectionRate, g.Count), rate(g.TPR, g.Positives), rate(g.FPR, g.Negatives), rate(g.Accuracy, g.Count)})
}

// UnmarshalJSON reads what MarshalJSON writes (null as 0), strictly.
func (g *GroupStats) UnmarshalJSON(b []byte) error {
	var j groupStatsJSON
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	if err := d.Decode(&j); err != nil {
		return fmt.Errorf("group stats: %w", err)
	}
	zero := func(p *float64) float64 {
		if p == nil {
			return 0
		}
		return *p
	}
	*g = GroupStats{j.Group, j.Count, j.Positives, j.Negatives, j.Selected, j.TruePositives, j.FalsePositives, j.Correct,
		zero(j.SelectionRate), zero(j.TPR), zero(j.FPR), zero(j.Accuracy)}
	return nil
}

// Breakdown is the per-group view of a set of predictions, like
// fairlearn's MetricFrame: the overall row, one row per sensitive group,
// and how many nodes were left out because their label or sensitive
// attribute is unknown (−1).
type Breakdown struct {
	// Overall holds the statistics of all evaluated nodes (Group = −1).
	Overall GroupStats `json:"overall"`
	// Groups holds one row per sensitive group; Groups[g].Group == g.
	Groups []GroupStats `json:"groups"`
	// UnknownLabel and UnknownSens count the nodes with label −1 and with
	// sensitive attribute −1; a node with both counts in each.
	UnknownLabel int `json:"unknown_label"`
	UnknownSens  int `json:"unknown_sens"`
	// Excluded counts the nodes left out (label or sensitive attribute
	// unknown), each once.
	Excluded int `json:"excluded"`
}

// ByGroup returns the per-group breakdown of binary predictions: for every
// sensitive group the count, selection rate, true- and false-positive rates
// and accuracy, and the same over all evaluated nodes.
//
// pred must hold 0 or 1, labels 0, 1 or −1 (unknown), sens a group id
// 0..G−1 or −1 (unknown); nodes with an unknown label or group are excluded
// and counted. ByGroup returns an error wrapping ErrLength, ErrValue,
// ErrEmpty or ErrEmptyGroup (every group 0..G−1 must have an evaluated
// member, G ≥ 2). A group without positives or negatives is not an error
// here: its TPR or FPR is 0 and its Positives or Negatives count says why.
func ByGroup(pred, labels, sens []int) (*Breakdown, error) {
	if err := sameLength("pred", len(pred), "labels", len(labels)); err != nil {
		return nil, err
	}
	if err := sameLength("pred", len(pred), "sens", len(sens)); err != nil {
		return nil, err
	}
	return tally(pred, labels, sens, 2, 1, -1)
}

// DemographicParity returns the largest minus the smallest group selection
// rate (fairlearn's demographic_parity_difference, method
// "between_groups"): [DPDifference] of b.
func (b *Breakdown) DemographicParity() float64 {
	v, _ := DPDifference.Of(b) // a selection rate is always defined
	return v
}

// EqualOpportunity returns the largest minus the smallest group
// true-positive rate (fairlearn's equal_opportunity_difference, method
// "between_groups"): [EODifference] of b. It returns an error wrapping
// ErrNoPositives if a group has no positive node.
func (b *Breakdown) EqualOpportunity() (float64, error) {
	return EODifference.Of(b)
}

// EqualizedOdds returns the larger of the between-groups true-positive-rate
// difference and false-positive-rate difference (fairlearn's
// equalized_odds_difference, agg "worst_case"): [EOddsDifference] of b.
// It returns an error wrapping ErrNoPositives or ErrNoNegatives if a
// group has no positive or no negative node.
func (b *Breakdown) EqualizedOdds() (float64, error) {
	return EOddsDifference.Of(b)
}

// tally validates and counts. Predictions must lie in [0, classes), labels
// in [−1, classes) (labels may be nil: every node's label is then known
// and negative, for demographic parity alone), sens ≥ −1. A node is
// positive when its label is pos and selected when its prediction is pos.
// The groups are 0..groups−1; groups −1 means 1 + the largest id in sens
// (see groupCount). Lengths must already have been checked.
func tally(pred, labels, sens []int, classes, pos, groups int) (*Breakdown, error) {
	if len(pred) == 0 {
		return nil, fmt.Errorf("%w: no nodes", ErrEmpty)
	}
	if groups < 0 {
		var err error
		if groups, err = groupCount(sens, len(pred)); err != nil {
			return nil, err
		}
	}
	b := &Breakdown{Groups: make([]GroupStats, groups)}
	for g := range b.Groups {
		b.Groups[g].Group = g
	}
	for i, p := range pred {
		if p < 0 || p >= classes {
			return nil, fmt.Errorf("%w: pred[%d] = %d, want %s", ErrValue, i, p, classSet(classes, false))
		}
		y := 0
		if labels != nil {
			y = labels[i]
			if y < -1 || y >= classes {
				return nil, fmt.Errorf("%w: labels[%d] = %d, want %s", ErrValue, i, y, classSet(classes, true))
			}
		}
		s := sens[i]
		if s < -1 {
			return nil, fmt.Errorf("%w: sens[%d] = %d, want a group id ≥ 0 or −1 (unknown)", ErrValue, i, s)
		}
		if y == -1 {
			b.UnknownLabel++
		}
		if s == -1 {
			b.UnknownSens++
		}
		if y == -1 || s == -1 {
			b.Excluded++
			continue
		}
		b.Overall.add(y == pos, p == pos, p == y, 1)
		b.Groups[s].add(y == pos, p == pos, p == y, 1)
	}
	if b.Overall.Count == 0 {
		return nil, fmt.Errorf("%w: all %d nodes have an unknown (−1) label or sensitive group", ErrEmpty, len(pred))
	}
	b.Overall.Group = -1
	b.Overall.rates()
	if err := needGroups(groups, func(g int) int { return b.Groups[g].Count }, b.Overall.Count); err != nil {
		return nil, err
	}
	for g := range b.Groups {
		b.Groups[g].rates()
	}
	return b, nil
}

// add counts k nodes that are positive or not, selected or not, decided
// correctly or not.
func (s *GroupStats) add(positive, selected, correct bool, k int) {
	s.Count += k
	if positive {
		s.Positives += k
	} else {
		s.Negatives += k
	}
	if selected {
		s.Selected += k
		if positive {
			s.TruePositives += k
		} else {
			s.FalsePositives += k
		}
	}
	if correct {
		s.Correct += k
	}
}

func (s *GroupStats) rates() {
	s.SelectionRate = ratio(s.Selected, s.Count)
	s.TPR = ratio(s.TruePositives, s.Positives)
	s.FPR = ratio(s.FalsePositives, s.Negatives)
	s.Accuracy = ratio(s.Correct, s.Count)
}

// ratio returns a/b, or 0 when b is 0.
func ratio(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

func classSet(classes int, unknown bool) string {
	var s string
	if classes == 2 {
		s = "0 or 1"
	} else {
		s = fmt.Sprintf("a class in 0..%d", classes-1)
	}
	if unknown {
		s += " (or −1, unknown)"
	}
	return s
}

// sameLength checks that two named lengths agree.
func sameLength(a string, na int, b string, nb int) error {
	if na != nb {
		return fmt.Errorf("%w: len(%s) = %d, len(%s) = %d", ErrLength, a, na, b, nb)
	}
	return nil
}
