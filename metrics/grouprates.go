package metrics

import "fmt"

// NewGroupRates returns each known group's decision rates on nodes (nil:
// all) with their Wilson score intervals at level (0.95 for 95%): the
// selection rate over every node of the group, the true- and
// false-positive rates over its labelled ones (nil where the group has no
// positive, or no negative, labelled node: undefined, not 0). These are
// Baseline.Groups without the bootstrap of the criteria: cheap, and
// defined for every group with a node. probs is n × classes; groups −1
// are left out. It returns an error for mismatched lengths, a node out
// of range or a level outside (0, 1).
func NewGroupRates(probs []float64, classes int, labels, sens, nodes []int, opt Options, level float64) ([]GroupRates, error) {
	if !(level > 0 && level < 1) {
		return nil, fmt.Errorf("metrics: NewGroupRates: %w: level %v, want a confidence level in (0, 1), e.g. 0.95", ErrValue, level)
	}
	if classes < 1 {
		return nil, fmt.Errorf("metrics: NewGroupRates: %w: %d classes, want ≥ 1", ErrValue, classes)
	}
	out, err := groupRates(probs, classes, labels, sens, allIfNil(nodes, len(sens)), opt, level)
	if err != nil {
		return nil, fmt.Errorf("metrics: NewGroupRates: %w", err)
	}
	return out, nil
}
