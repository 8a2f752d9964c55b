package datasets

import (
	"fmt"
	"math"
	"math/rand"
	"slices"
	"strconv"

	"github.com/fairmp/fairmp/graph"
)

// SyntheticConfig describes a random biased graph (see Synthetic). Zero
// values are taken literally: start from DefaultSyntheticConfig or
// PokecZShape.
type SyntheticConfig struct {
	// N is the number of nodes. Must be >= 4.
	N int
	// NumFeatures is the number of feature columns. Must be >= 1.
	NumFeatures int
	// GroupFrac is the expected fraction of nodes in sensitive group 1
	// (each node is in group 1 independently with this probability).
	// Must be in (0, 1), or 0 when GroupFracs is set.
	GroupFrac float64
	// GroupFracs, if set, draws len(GroupFracs) ≥ 2 sensitive groups, each
	// node in group g with probability GroupFracs[g] (each in (0, 1),
	// summing to 1), instead of two groups by GroupFrac, which must then
	// be 0. With G groups, group g has the coefficient c_g = −1 + 2g/(G−1)
	// (evenly spread over [−1, 1]; ∓1 for two groups): its label rate is
	// (1 + LabelBias·c_g)/2 and its features are shifted by
	// GroupSignal·c_g along one direction, and an edge leaving its group
	// (probability 1 − SensHomophily) goes to one of the other groups
	// uniformly. Synthetic only: SyntheticLarge draws two groups.
	GroupFracs []float64
	// LabelBias couples the binary label with the group:
	// P(y=1 | s=1) = (1+LabelBias)/2 and P(y=1 | s=0) = (1−LabelBias)/2.
	// 0 makes label and group independent, 1 makes the label equal the
	// group. Must be in [0, 1], and 0 when Classes > 2 (ClassBias is then
	// the knob).
	LabelBias float64
	// Classes is the number of label classes, ≥ 2 and ≤ N. 2 (the
	// default) is the binary task, drawn exactly as before Classes
	// existed. With more classes, ClassBias couples the label with the
	// group, an edge leaving its label (probability 1 − LabelHomophily)
	// goes to one of the other labels uniformly, and the label moves the
	// features by LabelSignal·c_y along a, c_y = −1 + 2y/(Classes−1)
	// (evenly spread over [−1, 1], as the groups' coefficients; ∓1 for two
	// classes). Synthetic only: SyntheticLarge draws two classes.
	Classes int
	// ClassBias, for Classes > 2, says how much each class's rate differs
	// between the groups: P(y = k | s = g) = 1/Classes + ClassBias[k]·c_g/2
	// with c_g the group's coefficient (∓1 for two groups), so with two
	// groups P(y = k | s = 1) − P(y = k | s = 0) = ClassBias[k], as LabelBias
	// is that difference for class 1 of a binary label. It has Classes
	// entries, each in [−2/Classes, 2/Classes] (rates in [0, 1]), summing to
	// 0 (each group's rates sum to 1). nil: every class has the rate
	// 1/Classes in every group. Must be nil when Classes = 2 (LabelBias is
	// the binary knob).
	ClassBias []float64
	// MeanDegree is the target mean degree: the graph has exactly
	// round(N·MeanDegree/2) undirected edges. Must be >= 0 and at most
	// (N−1)/2 (a sparse graph).
	MeanDegree float64
	// LabelHomophily is the probability that an edge joins two nodes of the
	// same label; SensHomophily the probability that it joins two nodes of
	// the same group. Both must be in [0, 1]. The two choices are made
	// independently per edge, so the measured edge homophilies
	// (graph.Graph.Homophily) match these knobs up to sampling noise as
	// long as every (label, group) block is non-empty.
	LabelHomophily, SensHomophily float64
	// LabelSignal, GroupSignal and Noise shape the features
	// x_i = LabelSignal·(2y_i−1)·a + GroupSignal·(2s_i−1)·b + Noise·ε_i
	// (with more classes or groups, their coefficients c_y and c_g
	// replace 2y−1 and 2s−1),
	// with a and b fixed random unit vectors and ε_i standard normal. The
	// Bayes-optimal linear classifier of y from x alone then has a margin
	// of LabelSignal/Noise standard deviations (ignoring b). All must be
	// finite and >= 0.
	LabelSignal, GroupSignal, Noise float64
	// SplitFractions are the train, validation and test fractions of the
	// random split (see RandomSplit).
	SplitFractions [3]float64
	// Seed seeds every random choice: the same config gives a bit-identical
	// data set.
	Seed int64
}

// DefaultSyntheticConfig returns a small graph (2,000 nodes, mean degree
// 10, 16 features) on which message passing amplifies bias: 30% of the
// nodes are in group 1, the group predicts the label (LabelBias 0.4:
// P(y=1|s=1) = 0.7, P(y=1|s=0) = 0.3), edges are strongly
// group-homophilous (SensHomophily 0.9) and moderately label-homophilous
// (LabelHomophily 0.7), features carry the label moderately (LabelSignal
// 1, Noise 1) and the group weakly (GroupSignal 0.3). Two classes; split
// 50/25/25, seed 1.
func DefaultSyntheticConfig() SyntheticConfig {
	return SyntheticConfig{
		N:              2000,
		NumFeatures:    16,
		GroupFrac:      0.3,
		LabelBias:      0.4,
		MeanDegree:     10,
		LabelHomophily: 0.7,
		SensHomophily:  0.9,
		LabelSignal:    1,
		GroupSignal:    0.3,
		Noise:          1,
		Classes:        2,
		SplitFractions: [3]float64{0.5, 0.25, 0.25},
		Seed:           1,
	}
}

// PokecZShape returns a config with the shape of the Pokec-z graph of
// FairGNN (67,796 nodes, 276 features, 617,958 undirected edges) and the
// bias knobs of DefaultSyntheticConfig, for speed and scale work.
func PokecZShape(seed int64) SyntheticConfig {
	c := DefaultSyntheticConfig()
	c.N = 67796
	c.NumFeatures = 276
	c.MeanDegree = 2 * 617958.0 / 67796.0
	c.Seed = seed
	return c
}

// Validate checks every field; the error names the first bad field and
// what was expected.
func (c SyntheticConfig) Validate() error {
	bad := func(field string, v any, want string) error {
		return fmt.Errorf("datasets: SyntheticConfig.%s = %v, want %s", field, v, want)
	}
	finite := func(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }
	switch {
	case c.N < 4:
		return bad("N", c.N, ">= 4")
	case c.N > 1<<31-1:
		return bad("N", c.N, fmt.Sprintf("<= %d", 1<<31-1))
	case c.NumFeatures < 1:
		return bad("NumFeatures", c.NumFeatures, ">= 1")
	case c.GroupFracs == nil && !(c.GroupFrac > 0 && c.GroupFrac < 1):
		return bad("GroupFrac", c.GroupFrac, "a value in (0, 1)")
	case c.GroupFracs != nil && c.GroupFrac != 0:
		return bad("GroupFrac", c.GroupFrac, "0 when GroupFracs is set (GroupFracs gives every group's fraction)")
	case !(c.LabelBias >= 0 && c.LabelBias <= 1):
		return bad("LabelBias", c.LabelBias, "a value in [0, 1]")
	case c.Classes < 2 || c.Classes > c.N:
		return bad("Classes", c.Classes, fmt.Sprintf("a number of classes in [2, %d] (N)", c.N))
	case c.Classes == 2 && c.ClassBias != nil:
		return bad("ClassBias", c.ClassBias, "nil when Classes = 2 (LabelBias is the binary label's bias)")
	case c.Classes > 2 && c.LabelBias != 0:
		return bad("LabelBias", c.LabelBias, fmt.Sprintf("0 when Classes = %d > 2 (ClassBias gives each class's bias)", c.Classes))
	case !(c.MeanDegree >= 0 && c.MeanDegree <= float64(c.N-1)/2):
		return bad("MeanDegree", c.MeanDegree, fmt.Sprintf("a value in [0, %g] ((N-1)/2)", float64(c.N-1)/2))
	case !(c.LabelHomophily >= 0 && c.LabelHomophily <= 1):
		return bad("LabelHomophily", c.LabelHomophily, "a value in [0, 1]")
	case !(c.SensHomophily >= 0 && c.SensHomophily <= 1):
		return bad("SensHomophily", c.SensHomophily, "a value in [0, 1]")
	case !(c.LabelSignal >= 0) || !finite(c.LabelSignal):
		return bad("LabelSignal", c.LabelSignal, "a finite value >= 0")
	case !(c.GroupSignal >= 0) || !finite(c.GroupSignal):
		return bad("GroupSignal", c.GroupSignal, "a finite value >= 0")
	case !(c.Noise >= 0) || !finite(c.Noise):
		return bad("Noise", c.Noise, "a finite value >= 0")
	}
	if c.GroupFracs != nil {
		if len(c.GroupFracs) < 2 {
			return bad("GroupFracs", c.GroupFracs, "at least two fractions")
		}
		sum := 0.0
		for g, f := range c.GroupFracs {
			if !(f > 0 && f < 1) {
				return bad(fmt.Sprintf("GroupFracs[%d]", g), f, "a value in (0, 1)")
			}
			sum += f
		}
		if math.Abs(sum-1) > 1e-9 {
			return bad("GroupFracs", c.GroupFracs, fmt.Sprintf("fractions summing to 1 (they sum to %v)", sum))
		}
	}
	if c.ClassBias != nil {
		if len(c.ClassBias) != c.Classes {
			return bad("ClassBias", c.ClassBias, fmt.Sprintf("one value per class (%d), not %d", c.Classes, len(c.ClassBias)))
		}
		lim, sum := 2/float64(c.Classes), 0.0
		for k, b := range c.ClassBias {
			if !(b >= -lim && b <= lim) {
				return bad(fmt.Sprintf("ClassBias[%d]", k), b, fmt.Sprintf("a value in [%v, %v] (±2/Classes, so that every rate 1/Classes ± ClassBias/2 lies in [0, 1])", -lim, lim))
			}
			sum += b
		}
		if math.Abs(sum) > 1e-9 {
			return bad("ClassBias", c.ClassBias, fmt.Sprintf("values summing to 0 (they sum to %v), so that every group's class rates sum to 1", sum))
		}
	}
	if c.N*c.NumFeatures/c.NumFeatures != c.N {
		return fmt.Errorf("datasets: SyntheticConfig: N × NumFeatures = %d × %d overflows", c.N, c.NumFeatures)
	}
	return checkFractions("SyntheticConfig.SplitFractions", c.SplitFractions)
}

// Synthetic generates a biased graph as described by cfg:
//
//   - each node is in group s=1 with probability GroupFrac, then has label
//     y=1 with probability (1±LabelBias)/2 (+ for group 1); with more
//     classes, label k with probability 1/Classes + ClassBias[k]·c_s/2;
//   - each edge picks a uniformly random node u, decides independently
//     whether its other end shares u's label (probability LabelHomophily)
//     and u's group (probability SensHomophily), and picks the other end
//     uniformly inside that (label, group) block (a stochastic block model
//     sampled edge by edge, O(edges) time). Self-loops and duplicates are
//     redrawn until the graph has round(N·MeanDegree/2) edges. When the
//     chosen block is empty the choice is redrawn, so with an empty block
//     (LabelBias = 1, or a tiny N) the measured homophilies deviate from
//     the knobs;
//   - features as documented on SyntheticConfig;
//   - a random split of all nodes (every node is labelled).
//
// Memory: the features (N·NumFeatures float64) plus about 40 bytes per
// edge of temporaries and the graph itself. It returns an error if cfg
// does not validate, or if the edge count cannot be reached (a block
// structure too small for the requested degree).
func Synthetic(cfg SyntheticConfig) (*Dataset, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	n, d := cfg.N, cfg.NumFeatures
	G, C := cfg.groups(), cfg.Classes
	rng := rand.New(rand.NewSource(cfg.Seed))
	sens := make([]int, n)
	labels := make([]int, n)
	blocks := make([][]int32, C*G) // index G*y + s
	for i := 0; i < n; i++ {
		switch {
		case C > 2:
			sens[i], labels[i] = drawNodeC(rng.Float64, cfg)
		case cfg.GroupFracs == nil:
			sens[i], labels[i] = drawNode(rng.Float64, cfg)
		default:
			sens[i], labels[i] = drawNodeG(rng.Float64, cfg)
		}
		b := G*labels[i] + sens[i]
		blocks[b] = append(blocks[b], int32(i))
	}

	// Edges, as keys u<<32|v with u < v, drawn in rounds until enough
	// distinct ones exist.
	m := int(math.Round(float64(n) * cfg.MeanDegree / 2))
	if m > 0 {
		// Every populated block must reach a populated block with
		// positive probability, or the block choice below never ends.
		sizes := make([]int, len(blocks))
		for b, blk := range blocks {
			sizes[b] = len(blk)
		}
		if err := checkBlocksReachable("Synthetic", cfg, sizes); err != nil {
			return nil, err
		}
	}
	keys := make([]uint64, 0, m)
	for round := 0; len(keys) < m; round++ {
		need := m - len(keys)
		if round >= 64 {
			return nil, fmt.Errorf("datasets: Synthetic: reached only %d of %d distinct edges after %d rounds; lower MeanDegree or raise N", len(keys), m, round)
		}
		// Self-loops are redrawn; bound the attempts so that a block
		// structure made of single nodes cannot loop forever.
		attempts := 0
		for k := 0; k < need; k++ {
			if attempts++; attempts > 100*need+1000 {
				return nil, fmt.Errorf("datasets: Synthetic: edge draws keep producing self-loops (blocks of single nodes); lower a homophily knob or raise N")
			}
			u := rng.Intn(n)
			var blk []int32
			for {
				y, s := labels[u], sens[u]
				if rng.Float64() >= cfg.LabelHomophily {
					if C == 2 {
						y = 1 - y
					} else if o := rng.Intn(C - 1); o >= y {
						y = o + 1
					} else {
						y = o
					}
				}
				if rng.Float64() >= cfg.SensHomophily {
					if G == 2 {
						s = 1 - s
					} else if o := rng.Intn(G - 1); o >= s {
						s = o + 1
					} else {
						s = o
					}
				}
				blk = blocks[G*y+s]
				if len(blk) > 0 {
					break
				}
			}
			v := int(blk[rng.Intn(len(blk))])
			if u == v {
				k-- // redraw a self-loop
				continue
			}
			if u > v {
				u, v = v, u
			}
			keys = append(keys, uint64(u)<<32|uint64(v))
		}
		slices.Sort(keys)
		keys = slices.Compact(keys)
	}
	edges := make([][2]int, len(keys))
	for k, key := range keys {
		edges[k] = [2]int{int(key >> 32), int(key & (1<<32 - 1))}
	}
	keys = nil
	g, err := graph.FromEdges(n, edges)
	if err != nil {
		return nil, fmt.Errorf("datasets: Synthetic: %w", err)
	}
	edges = nil

	// Features.
	a := unitVector(rng.NormFloat64, d)
	b := unitVector(rng.NormFloat64, d)
	feats := make([]float64, n*d)
	for i := 0; i < n; i++ {
		ly := cfg.LabelSignal * groupCoef(labels[i], C)
		gs := cfg.GroupSignal * groupCoef(sens[i], G)
		row := feats[i*d : (i+1)*d]
		for k := range row {
			row[k] = ly*a[k] + gs*b[k] + cfg.Noise*rng.NormFloat64()
		}
	}
	names := make([]string, d)
	for k := range names {
		names[k] = "x" + strconv.Itoa(k)
	}
	split, err := RandomSplit(labels, cfg.SplitFractions, cfg.Seed)
	if err != nil {
		return nil, err
	}
	return &Dataset{
		Name:         "synthetic",
		Graph:        g,
		Features:     feats,
		NumFeatures:  d,
		FeatureNames: names,
		Labels:       labels,
		Sens:         sens,
		Split:        split,
	}, nil
}

// drawNode draws a node's group (1 with probability GroupFrac) and then
// its label (1 with probability (1 ± LabelBias)/2 in group 1 / 0) from the
// uniform draws of uniform (math/rand's or math/rand/v2's).
func drawNode(uniform func() float64, cfg SyntheticConfig) (s, y int) {
	if uniform() < cfg.GroupFrac {
		s = 1
	}
	p := (1 - cfg.LabelBias) / 2
	if s == 1 {
		p = (1 + cfg.LabelBias) / 2
	}
	if uniform() < p {
		y = 1
	}
	return s, y
}

// groups returns the number of sensitive groups cfg draws.
func (c SyntheticConfig) groups() int {
	if c.GroupFracs == nil {
		return 2
	}
	return len(c.GroupFracs)
}

// groupCoef returns c_g = −1 + 2g/(G−1): ∓1 for two groups (and the
// same for a class y of C: c_y).
func groupCoef(g, groups int) float64 {
	if groups == 2 {
		return float64(2*g - 1)
	}
	return -1 + 2*float64(g)/float64(groups-1)
}

// drawNodeG draws a node's group by cfg.GroupFracs and then its label (1
// with probability (1 + LabelBias·c_g)/2).
func drawNodeG(uniform func() float64, cfg SyntheticConfig) (s, y int) {
	s = groupOf(uniform(), cfg.GroupFracs)
	if uniform() < (1+cfg.LabelBias*groupCoef(s, len(cfg.GroupFracs)))/2 {
		y = 1
	}
	return s, y
}

// groupOf returns the group of the uniform draw u by the fractions fracs
// (the inverse of their cumulative sums; the last group takes the rest).
func groupOf(u float64, fracs []float64) int {
	acc := 0.0
	for g, f := range fracs[:len(fracs)-1] {
		if acc += f; u < acc {
			return g
		}
	}
	return len(fracs) - 1
}

// drawNodeC draws a node's group (by GroupFrac or GroupFracs) and then its
// label among cfg.Classes > 2: class k with probability
// 1/Classes + ClassBias[k]·c_s/2.
func drawNodeC(uniform func() float64, cfg SyntheticConfig) (s, y int) {
	if cfg.GroupFracs == nil {
		if uniform() < cfg.GroupFrac {
			s = 1
		}
	} else {
		s = groupOf(uniform(), cfg.GroupFracs)
	}
	cs := groupCoef(s, cfg.groups())
	u, acc := uniform(), 0.0
	for k := 0; k < cfg.Classes-1; k++ {
		if acc += cfg.classRate(k, cs); u < acc {
			return s, k
		}
	}
	return s, cfg.Classes - 1
}

// classRate returns P(y = k | s) for a group of coefficient cs, with
// Classes > 2: 1/Classes + ClassBias[k]·cs/2.
func (c SyntheticConfig) classRate(k int, cs float64) float64 {
	p := 1 / float64(c.Classes)
	if c.ClassBias != nil {
		p += c.ClassBias[k] * cs / 2
	}
	return p
}

// unitVector draws a uniformly random unit vector of R^d from the
// standard normal draws of normal (math/rand's or math/rand/v2's).
func unitVector(normal func() float64, d int) []float64 {
	for {
		v := make([]float64, d)
		s := 0.0
		for k := range v {
			v[k] = normal()
			s += v[k] * v[k]
		}
		if s > 0 {
			s = math.Sqrt(s)
			for k := range v {
				v[k] /= s
			}
			return v
		}
	}
}
