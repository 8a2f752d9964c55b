package metrics

import (
	"fmt"
	"math"
	"slices"

	"github.com/fairmp/fairmp/internal/par"
)

// DefaultSimilarityK is the number of nearest neighbours per node that
// [CosineTopK] keeps by default: 10, the k of REDRESS's rankings (Dong et
// al., KDD 2021, k = 10 throughout its experiments).
const DefaultSimilarityK = 10

// Similarity is a symmetric, non-negative similarity graph over N nodes:
// the matrix S of InFoRM's individual fairness (Kang et al., KDD 2020),
// which says which nodes are alike and how much. Pairs lists each
// undirected pair once, as (i, j) with i < j, in ascending order of i then
// j, and Weights[k] = S_ij = S_ji > 0 is its weight; every other entry of
// S (the diagonal included) is 0. Build one with [CosineTopK], or fill it
// from a similarity of your own (an oracle's, a structural one).
type Similarity struct {
	N       int
	Pairs   [][2]int
	Weights []float64
}

// Weight returns Σ_{i<j} S_ij, the total weight of the pairs: divide
// [InFoRMBias] by it for the weighted mean squared difference between
// similar nodes' predictions, comparable between graphs of different
// sizes.
func (s Similarity) Weight() float64 {
	w := 0.0
	for _, v := range s.Weights {
		w += v
	}
	return w
}

// CosineTopK builds the similarity graph S of the nodes' features as
// InFoRM's and REDRESS's experiments build theirs from features, made
// sparse: the cosine similarity cos(x_i, x_j) between the rows of the
// row-major n × d matrix x, each node linked to its k most similar other
// nodes (ties broken by the lower index), the links symmetrised (S_ij =
// cos(x_i, x_j) when j is among i's k or i among j's: the union, and as the
// cosine is symmetric the value does not depend on which side chose the
// pair), and links of cosine ≤ 0 dropped, so that S ≥ 0 and its
// Laplacian is positive semi-definite (a node whose k nearest include
// dissimilar ones keeps fewer than k links; a zero row, whose cosine is 0
// with every node, keeps none).
//
// nodes restricts S to a subset (nil: every node): only nodes of the
// subset are linked, each to its k most similar nodes of the subset, and
// the pairs keep the nodes' ids in [0, n). Build S on the test nodes to
// measure [InFoRMBias] on them alone.
//
// It takes O(m²·d) time for m nodes (m = n for nil) and O(m·k) memory;
// rows are processed in parallel and the result does not depend on the
// number of workers. It returns an error wrapping ErrValue for n < 2,
// d < 1, len(x) ≠ n·d, a non-finite value, k < 1, or a node out of range or
// repeated, and ErrEmpty for a subset of fewer than two nodes.
func CosineTopK(x []float64, n, d, k int, nodes []int) (Similarity, error) {
	if n < 2 || d < 1 || len(x) != n*d {
		return Similarity{}, fmt.Errorf("%w: CosineTopK: %d values for %d × %d rows × columns, want n >= 2, d >= 1 and n·d values", ErrValue, len(x), n, d)
	}
	if k < 1 {
		return Similarity{}, fmt.Errorf("%w: CosineTopK: k = %d, want at least 1 neighbour per node (DefaultSimilarityK = %d)", ErrValue, k, DefaultSimilarityK)
	}
	for i, v := range x {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return Similarity{}, fmt.Errorf("%w: CosineTopK: x[%d] (row %d, column %d) = %v, want a finite value", ErrValue, i, i/d, i%d, v)
		}
	}
	if nodes == nil {
		nodes = make([]int, n)
		for i := range nodes {
			nodes[i] = i
		}
	}
	seen := make([]bool, n)
	for p, i := range nodes {
		if i < 0 || i >= n {
			return Similarity{}, fmt.Errorf("%w: CosineTopK: nodes[%d] = %d, want a node in [0, %d)", ErrValue, p, i, n)
		}
		if seen[i] {
			return Similarity{}, fmt.Errorf("%w: CosineTopK: node %d repeated (nodes[%d])", ErrValue, i, p)
		}
		seen[i] = true
	}
	m := len(nodes)
	if m < 2 {
		return Similarity{}, fmt.Errorf("%w: CosineTopK: %d node(s) in the subset, want at least 2", ErrEmpty, m)
	}
	k = min(k, m-1)
	// Unit rows (a zero row stays zero: its cosine is 0 with every node).
	u := make([]float64, m*d)
	for p, i := range nodes {
		row := x[i*d : (i+1)*d]
		nrm := 0.0
		for _, v := range row {
			nrm += v * v
		}
		nrm = math.Sqrt(nrm)
		if nrm == 0 {
			continue
		}
		for j, v := range row {
			u[p*d+j] = v / nrm
		}
	}
	// The k nearest of each node, by position in nodes.
	near := make([]int, m*k)
	val := make([]float64, m*k)
	cnt := make([]int, m)
	par.For(m, func(p int) {
		c := topK(u, d, p, m, near[p*k:(p+1)*k], val[p*k:(p+1)*k])
		cnt[p] = c
	})
	// Symmetrise: the union of the links, as pairs of node ids.
	type link struct {
		i, j int
		w    float64
	}
	var links []link
	for p := 0; p < m; p++ {
		for t := 0; t < cnt[p]; t++ {
			w := val[p*k+t]
			if !(w > 0) {
				continue
			}
			i, j := nodes[p], nodes[near[p*k+t]]
			if i > j {
				i, j = j, i
			}
			links = append(links, link{i, j, w})
		}
	}
	slices.SortFunc(links, func(a, b link) int {
		if a.i != b.i {
			return a.i - b.i
		}
		return a.j - b.j
	})
	s := Similarity{N: n}
	for t, l := range links {
		if t > 0 && l.i == links[t-1].i && l.j == links[t-1].j {
			continue // the pair chosen from both sides
		}
		s.Pairs = append(s.Pairs, [2]int{l.i, l.j})
		s.Weights = append(s.Weights, l.w)
	}
	return s, nil
}

// topK fills near and val with the positions and cosines of the (up to)
// len(near) rows of the m × d unit rows u most similar to row p, most
// similar first, ties by the lower position, and returns how many it
// filled.
func topK(u []float64, d, p, m int, near []int, val []float64) int {
	k := len(near)
	c := 0
	up := u[p*d : (p+1)*d : (p+1)*d]
	for q := 0; q < m; q++ {
		if q == p {
			continue
		}
		uq := u[q*d : (q+1)*d : (q+1)*d]
		s := 0.0
		for j, v := range up {
			s += v * uq[j]
		}
		// Positions come in ascending order, so a value equal to the
		// last kept one loses its tie.
		if c == k && !(s > val[k-1]) {
			continue
		}
		t := min(c, k-1)
		for t > 0 && s > val[t-1] {
			near[t], val[t] = near[t-1], val[t-1]
			t--
		}
		near[t], val[t] = q, s
		if c < k {
			c++
		}
	}
	return c
}

// InFoRMBias returns InFoRM's individual bias of the predictions probs (n
// × classes, row-major, as Evaluate takes them) over the similarity graph
// s (Kang, He, Maciejewski & Tong, "InFoRM: Individual Fairness on Graph
// Mining", KDD 2020):
//
//	Tr(Yᵀ L_S Y) = Σ_{i<j} S_ij ‖Y_i − Y_j‖²,   L_S = D − S,  D = diag(Σ_j S_ij),
//
// with Y the n × classes matrix of predicted probabilities. It is 0 when
// every pair of similar nodes gets the same prediction and grows with the
// similarity of the pairs that are treated differently: the individual
// fairness of Dwork et al. ("similar individuals, similar outcomes") made
// a number. Lower is fairer; it has no upper bound but 2·s.Weight() (two
// one-hot rows differ by 2 in squared norm), and [Similarity.Weight]
// turns it into a mean.
//
// Choices, where the papers leave room:
//
//   - L_S is the unnormalised Laplacian D − S, InFoRM's definition and
//     what PyGDebias's REDRESS, InFoRM-GNN and GUIDE report (scipy's
//     laplacian, normed=False). With it each similar pair counts by its
//     similarity alone, as the right-hand side shows; the normalised
//     Laplacian I − D^−½ S D^−½ would weigh a pair by the degrees of its
//     ends (Σ S_ij ‖Y_i/√d_i − Y_j/√d_j‖²), so that two nodes with equal
//     predictions would still count as treated differently when their
//     degrees differ.
//   - Y holds the probabilities of every class, not the decisions (the
//     bias then moves smoothly with the model, and decisions are all or
//     nothing) and not only P(y = 1): for two classes ‖Y_i − Y_j‖² =
//     2(p_i − p_j)², so the value is twice PyGDebias's, which uses the
//     column of class 1 alone; for more classes every class counts.
//   - No bootstrap interval: the bias is a sum over pairs, not a mean over
//     nodes, and resampling nodes with replacement would duplicate and
//     drop pairs rather than resample them. Compare models by the spread
//     over seeds, on one S (the value depends on S's k and nodes).
//
// It is not a [Criterion]: criteria compare groups, and this compares
// individuals, whatever their group.
//
// It returns an error wrapping ErrLength (probs not s.N × classes, or
// Pairs and Weights of different lengths) or ErrValue (classes < 1, a
// probability outside [0, 1] or not finite, a pair out of range or with
// i ≥ j, a weight that is negative or not finite).
func InFoRMBias(probs []float64, classes int, s Similarity) (float64, error) {
	if classes < 1 {
		return 0, fmt.Errorf("%w: InFoRMBias: classes = %d, want >= 1", ErrValue, classes)
	}
	if len(probs) != s.N*classes {
		return 0, fmt.Errorf("%w: InFoRMBias: %d probabilities for %d nodes × %d classes, want one row per node of the similarity graph", ErrLength, len(probs), s.N, classes)
	}
	if len(s.Pairs) != len(s.Weights) {
		return 0, fmt.Errorf("%w: InFoRMBias: %d pairs and %d weights in the similarity graph, want one weight per pair", ErrLength, len(s.Pairs), len(s.Weights))
	}
	for i, v := range probs {
		if math.IsNaN(v) || v < 0 || v > 1 {
			return 0, fmt.Errorf("%w: InFoRMBias: probs[%d] (node %d, class %d) = %v, want a probability in [0, 1]", ErrValue, i, i/classes, i%classes, v)
		}
	}
	sum := 0.0
	for k, pr := range s.Pairs {
		i, j := pr[0], pr[1]
		if i < 0 || j >= s.N || i >= j {
			return 0, fmt.Errorf("%w: InFoRMBias: pair %d is (%d, %d), want nodes i < j in [0, %d)", ErrValue, k, i, j, s.N)
		}
		w := s.Weights[k]
		if !(w >= 0) || math.IsInf(w, 0) {
			return 0, fmt.Errorf("%w: InFoRMBias: weight %d (pair (%d, %d)) = %v, want a finite similarity >= 0", ErrValue, k, i, j, w)
		}
		d2 := 0.0
		for c := 0; c < classes; c++ {
			t := probs[i*classes+c] - probs[j*classes+c]
			d2 += t * t
		}
		sum += w * d2
	}
	return sum, nil
}
