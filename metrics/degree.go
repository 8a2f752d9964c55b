package metrics

import (
	"fmt"
	"math"
	"math/rand"
	"slices"
)

// EachDegree is the buckets argument of GroupByDegree that makes every
// distinct degree its own group: RawlsGCN's protocol.
const EachDegree = 0

// DegreeGroups assigns nodes to groups by their degree, for the degree
// fairness of RawlsGCN (Kang et al., WWW 2022): GCN tends to serve
// low-degree nodes worse, and the Rawlsian view judges a model by its
// worst-served degree group. Its Group slice is a sensitive attribute
// like any other (ids 0..G−1 by ascending degree, −1 for the nodes not
// grouped), so every function of this package that takes sens, every
// Criterion and Bootstrap, takes it too; DegreeBias computes the
// measures RawlsGCN reports from it.
type DegreeGroups struct {
	// Group holds each node's group, 0..G−1 in ascending order of
	// degree, or −1 for a node that was not among the nodes grouped.
	Group []int `json:"-"`
	// Lo and Hi are the smallest and the largest degree in each group.
	Lo []int `json:"lo"`
	Hi []int `json:"hi"`
	// Counts is the number of nodes in each group.
	Counts []int `json:"counts"`
}

// Len returns the number of groups G.
func (d *DegreeGroups) Len() int { return len(d.Counts) }

// Name returns a name for group g: "degree 3", or "degree 4–7" for a
// range.
func (d *DegreeGroups) Name(g int) string {
	if d.Lo[g] == d.Hi[g] {
		return fmt.Sprintf("degree %d", d.Lo[g])
	}
	return fmt.Sprintf("degree %d–%d", d.Lo[g], d.Hi[g])
}

// Names returns the names of every group, in order.
func (d *DegreeGroups) Names() []string {
	out := make([]string, d.Len())
	for g := range out {
		out[g] = d.Name(g)
	}
	return out
}

// GroupByDegree groups nodes (nil: every node) by degrees[i], the
// degree of node i (graph.Graph.Degrees: neighbours, without the
// self-loop a propagation matrix adds).
//
// With buckets = EachDegree (0) every distinct degree among the nodes is
// a group, as RawlsGCN's reference code groups its test nodes
// (jiank2/RawlsGCN, evaluator.py): the paper's protocol. On a graph with
// a long tail of degrees that makes many groups of one or two nodes,
// whose means are noisy and dominate a variance across groups.
//
// With buckets ≥ 2 the nodes are cut at the quantiles of their degrees
// into at most buckets groups of about equal size: group g ends where
// the count of nodes of smaller or equal degree first reaches (g+1)/buckets
// of them. Nodes of one degree always share a group, so heavy ties make
// fewer groups; a last group smaller than half the share is merged into
// the one before it. Len says how many groups there are. This is the
// choice for the package's criteria (ΔDP, ΔEO, ...) by degree, which
// need every group to hold enough nodes of each class.
//
// Group the nodes you evaluate (a test split), and only nodes with a
// known label: every group must have an evaluated node (ErrEmptyGroup).
// GroupByDegree returns an error wrapping ErrValue for a negative degree
// or buckets, buckets = 1, a node out of range or repeated, and ErrEmpty
// for no nodes.
func GroupByDegree(degrees, nodes []int, buckets int) (*DegreeGroups, error) {
	if buckets < 0 || buckets == 1 {
		return nil, fmt.Errorf("%w: buckets = %d, want %d (a group per degree, RawlsGCN's protocol) or ≥ 2 groups of about equal size", ErrValue, buckets, EachDegree)
	}
	n := len(degrees)
	for i, d := range degrees {
		if d < 0 {
			return nil, fmt.Errorf("%w: degrees[%d] = %d, want a degree ≥ 0", ErrValue, i, d)
		}
	}
	nodes, err := checkNodes(nodes, n)
	if err != nil {
		return nil, err
	}
	// The distinct degrees of the nodes, ascending, and their counts.
	ds := make([]int, len(nodes))
	for k, i := range nodes {
		ds[k] = degrees[i]
	}
	slices.Sort(ds)
	var vals, cnts []int
	for _, d := range ds {
		if len(vals) > 0 && vals[len(vals)-1] == d {
			cnts[len(cnts)-1]++
			continue
		}
		vals, cnts = append(vals, d), append(cnts, 1)
	}
	// ends[g] is one past the last distinct degree of group g.
	var ends []int
	if buckets == EachDegree {
		for k := range vals {
			ends = append(ends, k+1)
		}
	} else {
		m := float64(len(nodes))
		share := m / float64(buckets)
		cum := 0
		for k, c := range cnts {
			cum += c
			if g := len(ends); g < buckets-1 && float64(cum) >= float64(g+1)*share-1e-9 {
				ends = append(ends, k+1)
			}
		}
		if len(ends) == 0 || ends[len(ends)-1] != len(vals) {
			ends = append(ends, len(vals))
		}
		if g := len(ends); g >= 2 {
			last := 0
			for k := ends[g-2]; k < ends[g-1]; k++ {
				last += cnts[k]
			}
			if float64(last) < share/2 {
				ends = append(ends[:g-2], ends[g-1])
			}
		}
	}
	out := &DegreeGroups{Group: make([]int, n)}
	groupOf := make(map[int]int, len(vals))
	start := 0
	for g, end := range ends {
		out.Lo, out.Hi = append(out.Lo, vals[start]), append(out.Hi, vals[end-1])
		c := 0
		for k := start; k < end; k++ {
			groupOf[vals[k]] = g
			c += cnts[k]
		}
		out.Counts = append(out.Counts, c)
		start = end
	}
	for i := range out.Group {
		out.Group[i] = -1
	}
	for _, i := range nodes {
		out.Group[i] = groupOf[degrees[i]]
	}
	return out, nil
}

// checkNodes returns nodes (every node 0..n−1 for nil) after checking
// each is in range and none repeats; ErrEmpty for none.
func checkNodes(nodes []int, n int) ([]int, error) {
	if nodes == nil {
		nodes = make([]int, n)
		for i := range nodes {
			nodes[i] = i
		}
	} else {
		seen := make([]bool, n)
		for k, i := range nodes {
			if i < 0 || i >= n {
				return nil, fmt.Errorf("%w: nodes[%d] = %d, want a node index in 0..%d", ErrValue, k, i, n-1)
			}
			if seen[i] {
				return nil, fmt.Errorf("%w: nodes[%d] = %d repeats an earlier entry", ErrValue, k, i)
			}
			seen[i] = true
		}
	}
	if len(nodes) == 0 {
		return nil, fmt.Errorf("%w: no nodes", ErrEmpty)
	}
	return nodes, nil
}

// DegreeReport holds the degree-fairness measures of one evaluation
// (DegreeBias): accuracy and loss by degree group, and how they spread.
// Accuracies are fractions in [0, 1]; losses are cross-entropies in nats
// (not fractions: do not print them with Percent).
type DegreeReport struct {
	// Groups is the number of degree groups G; Evaluated the number of
	// nodes evaluated (known label and group).
	Groups    int `json:"groups"`
	Evaluated int `json:"evaluated"`
	// Accuracy and Loss are over every evaluated node; Loss is the mean
	// of −log P(y), P(y) the probability of the node's label (clamped
	// below at 1e-12, so a certain and wrong prediction costs 27.6).
	Accuracy float64 `json:"accuracy"`
	Loss     float64 `json:"loss"`
	// AccuracyByGroup, LossByGroup and Counts are each group's accuracy,
	// mean loss and number of evaluated nodes.
	AccuracyByGroup []float64 `json:"accuracy_by_group"`
	LossByGroup     []float64 `json:"loss_by_group"`
	Counts          []int     `json:"counts"`
	// AccuracyGap is max − min of AccuracyByGroup (Frame.Difference
	// between groups), and WorstAccuracy its min: the Rawlsian view, the
	// accuracy of the worst-served degree group.
	AccuracyGap   float64 `json:"accuracy_gap"`
	WorstAccuracy float64 `json:"worst_accuracy"`
	// LossGap is max − min of LossByGroup.
	LossGap float64 `json:"loss_gap"`
	// LossVariance is the variance across groups of LossByGroup, with
	// the n − 1 denominator (Python's statistics.variance): the "bias"
	// RawlsGCN reports (lower is fairer), each group weighing the same
	// whatever its size.
	LossVariance float64 `json:"loss_variance"`
}

// degreeMember is an evaluated node as DegreeBias counts it.
type degreeMember struct {
	correct bool
	loss    float64
}

// DegreeBias computes the degree-fairness measures of RawlsGCN from
// predicted class probabilities: accuracy and mean loss in each degree
// group (groups, as GroupByDegree makes them, or any group ids), their
// gaps, the worst group's accuracy, and the variance of the groups'
// losses, RawlsGCN's "bias".
//
// The arguments are Evaluate's, with groups for sens: probs is n ×
// classes row-major, labels and groups have length n (−1 unknown), nodes
// selects the nodes (nil: all), and opt the decision rule (a threshold
// for two classes, the argmax otherwise). RawlsGCN evaluates on the
// test nodes, grouped with GroupByDegree(degrees, test, EachDegree).
//
// It returns the errors Evaluate returns for the same inputs: ErrLength,
// ErrValue, ErrEmpty, and ErrEmptyGroup for a group 0..G−1 without an
// evaluated node or fewer than two groups.
func DegreeBias(probs []float64, classes int, labels, groups, nodes []int, opt Options) (DegreeReport, error) {
	members, err := degreeMembers(probs, classes, labels, groups, nodes, opt)
	if err != nil {
		return DegreeReport{}, err
	}
	sums := make([]degreeSums, len(members))
	for g, m := range members {
		for _, x := range m {
			sums[g].add(x)
		}
	}
	return degreeReportOf(sums), nil
}

// degreeMembers checks the arguments and returns the evaluated nodes of
// each group.
func degreeMembers(probs []float64, classes int, labels, groups, nodes []int, opt Options) ([][]degreeMember, error) {
	if classes < 2 {
		return nil, fmt.Errorf("%w: classes = %d, want ≥ 2", ErrValue, classes)
	}
	if err := opt.Validate(); err != nil {
		return nil, err
	}
	if opt.Positive >= classes {
		return nil, fmt.Errorf("%w: Options.Positive = %d, want a class in 0..%d", ErrValue, opt.Positive, classes-1)
	}
	n := len(labels)
	if len(probs) != n*classes {
		return nil, fmt.Errorf("%w: len(probs) = %d, want len(labels) × classes = %d × %d = %d", ErrLength, len(probs), n, classes, n*classes)
	}
	if err := sameLength("labels", n, "groups", len(groups)); err != nil {
		return nil, err
	}
	nodes, err := checkNodes(nodes, n)
	if err != nil {
		return nil, err
	}
	top := -1
	for i, g := range groups {
		if g < -1 {
			return nil, fmt.Errorf("%w: groups[%d] = %d, want a group id ≥ 0 or −1 (not grouped)", ErrValue, i, g)
		}
		top = max(top, g)
	}
	if top >= len(nodes) {
		return nil, fmt.Errorf("%w: groups holds the group id %d, so the groups are 0..%d, but %d nodes are evaluated: some group has no evaluated node", ErrEmptyGroup, top, top, len(nodes))
	}
	members := make([][]degreeMember, top+1)
	evaluated := 0
	for _, i := range nodes {
		row := probs[i*classes : (i+1)*classes]
		for j, v := range row {
			if !(v >= 0 && v <= 1) {
				return nil, fmt.Errorf("%w: probs[%d] = %v (node %d), want a probability in [0, 1]", ErrValue, i*classes+j, v, i)
			}
		}
		y, g := labels[i], groups[i]
		if y < -1 || y >= classes {
			return nil, fmt.Errorf("%w: labels[%d] = %d, want %s", ErrValue, i, y, classSet(classes, true))
		}
		if y == -1 || g == -1 {
			continue
		}
		members[g] = append(members[g], degreeMember{correct: decision(row, opt) == y, loss: -math.Log(max(row[y], 1e-12))})
		evaluated++
	}
	if evaluated == 0 {
		return nil, fmt.Errorf("%w: every node has an unknown label or group", ErrEmpty)
	}
	if err := needGroups(top+1, func(g int) int { return len(members[g]) }, evaluated); err != nil {
		return nil, err
	}
	return members, nil
}

// degreeSums accumulates one group's nodes.
type degreeSums struct {
	n, correct int
	loss       float64
}

func (s *degreeSums) add(x degreeMember) {
	s.n++
	if x.correct {
		s.correct++
	}
	s.loss += x.loss
}

// degreeReportOf computes the report from each group's sums (every
// group has a node, and there are at least two).
func degreeReportOf(sums []degreeSums) DegreeReport {
	G := len(sums)
	r := DegreeReport{Groups: G, AccuracyByGroup: make([]float64, G), LossByGroup: make([]float64, G), Counts: make([]int, G)}
	correct, loss := 0, 0.0
	for g, s := range sums {
		r.Counts[g] = s.n
		r.AccuracyByGroup[g] = float64(s.correct) / float64(s.n)
		r.LossByGroup[g] = s.loss / float64(s.n)
		r.Evaluated += s.n
		correct += s.correct
		loss += s.loss
	}
	r.Accuracy = float64(correct) / float64(r.Evaluated)
	r.Loss = loss / float64(r.Evaluated)
	r.WorstAccuracy = slices.Min(r.AccuracyByGroup)
	r.AccuracyGap = slices.Max(r.AccuracyByGroup) - r.WorstAccuracy
	r.LossGap = slices.Max(r.LossByGroup) - slices.Min(r.LossByGroup)
	mean := 0.0
	for _, v := range r.LossByGroup {
		mean += v
	}
	mean /= float64(G)
	for _, v := range r.LossByGroup {
		r.LossVariance += (v - mean) * (v - mean)
	}
	r.LossVariance /= float64(G - 1)
	return r
}

// DegreeIntervals holds (symmetric) bootstrap intervals of a
// DegreeReport's summary measures (BootstrapDegreeBias). The intervals of
// LossGap and LossVariance are in nats and nats², not fractions.
type DegreeIntervals struct {
	Accuracy      Interval `json:"accuracy"`
	AccuracyGap   Interval `json:"accuracy_gap"`
	WorstAccuracy Interval `json:"worst_accuracy"`
	LossGap       Interval `json:"loss_gap"`
	LossVariance  Interval `json:"loss_variance"`
	// Level and Resamples are those of the BootstrapConfig used;
	// Evaluated is the number of nodes resampled.
	Level     float64 `json:"level"`
	Resamples int     `json:"resamples"`
	Evaluated int     `json:"evaluated"`
}

// BootstrapDegreeBias returns (symmetric) bootstrap intervals for the
// accuracy, the accuracy gap, the worst group's accuracy, the loss gap
// and the loss variance that DegreeBias computes from the same
// arguments (each Point is DegreeBias's value). Each resample draws,
// within every degree group separately, as many evaluated nodes as the
// group has, with replacement (Bootstrap's stratified scheme, groups in
// order, seeded by cfg.Seed), so every measure is defined on every
// resample. A group of one node (frequent with EachDegree) is the same
// node in every resample: the interval then says nothing of how that
// group's mean would vary with other nodes of its degree.
//
// It returns DegreeBias's errors and an error wrapping ErrValue for an
// invalid cfg. The cost is O(Resamples × nodes).
func BootstrapDegreeBias(probs []float64, classes int, labels, groups, nodes []int, opt Options, cfg BootstrapConfig) (DegreeIntervals, error) {
	if err := cfg.Validate(); err != nil {
		return DegreeIntervals{}, err
	}
	members, err := degreeMembers(probs, classes, labels, groups, nodes, opt)
	if err != nil {
		return DegreeIntervals{}, err
	}
	sums := make([]degreeSums, len(members))
	for g, m := range members {
		for _, x := range m {
			sums[g].add(x)
		}
	}
	point := degreeReportOf(sums)
	rng := rand.New(rand.NewSource(cfg.Seed))
	var acc, gap, worst, lgap, lvar []float64
	for b := 0; b < cfg.Resamples; b++ {
		for g, m := range members {
			sums[g] = degreeSums{}
			for range m {
				sums[g].add(m[rng.Intn(len(m))])
			}
		}
		r := degreeReportOf(sums)
		acc, gap, worst = append(acc, r.Accuracy), append(gap, r.AccuracyGap), append(worst, r.WorstAccuracy)
		lgap, lvar = append(lgap, r.LossGap), append(lvar, r.LossVariance)
	}
	return DegreeIntervals{
		Accuracy:      unitInterval(acc, point.Accuracy, cfg.Level),
		AccuracyGap:   unitInterval(gap, point.AccuracyGap, cfg.Level),
		WorstAccuracy: unitInterval(worst, point.WorstAccuracy, cfg.Level),
		LossGap:       SymmetricInterval(lgap, point.LossGap, cfg.Level, 0, math.Inf(1)),
		LossVariance:  SymmetricInterval(lvar, point.LossVariance, cfg.Level, 0, math.Inf(1)),
		Level:         cfg.Level,
		Resamples:     cfg.Resamples,
		Evaluated:     point.Evaluated,
	}, nil
}
