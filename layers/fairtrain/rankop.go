package fairtrain

import (
	"fmt"
	"math"

	"github.com/fairmp/fairmp/internal/opkit"
	"github.com/fairmp/fairmp/internal/par"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// rankingLoss returns the scalar node of REDRESS's ranking loss (Dong,
// Kang, Tong & Li, "Individual Fairness for Graph Neural Networks: A
// Ranking based Approach", KDD 2021, Eq. 8) of the n × c outputs z over
// the m nodes listed in nodes:
//
//	L = Σ_i Σ_{a<b in K(i)} |ΔNDCG@k|_ab · ℓ(P̄_ab, P̂_ab)
//
// where, for each anchor i of nodes and the other nodes of nodes:
//
//   - ŝ_ij = 5·(cos(z_i, z_j) + 1) is the similarity of the outputs and
//     s_ij = 5·(cos(x_i, x_j) + 1) that of the features (the n × d
//     row-major x), both in [0, 10] (the reference code's simi; a row of
//     norm 0 counts as norm 1, so its cosine is 0);
//   - K(i) is i's top-k list by ŝ (most similar first, ties broken by the
//     lower position in nodes; k is capped at m − 1);
//   - for a pair a (ranked above) and b of K(i), P̂_ab = sigmoid(σ·(ŝ_ia −
//     ŝ_ib)) is the predicted probability that i is more similar to a than
//     to b, P̄_ab = 1 if s_ia > s_ib, 0 if s_ia < s_ib (½ on ties, whose
//     weight below is 0), and ℓ the binary cross-entropy −P̄ log P̂ − (1 −
//     P̄) log(1 − P̂) (RankNet's pairwise loss);
//   - |ΔNDCG@k|_ab is the change of i's NDCG@k when a and b swap places in
//     K(i): with gains 2^s − 1 and discounts 1/log₂(1 + position),
//     |(G_a − G_b)(D_a − D_b)| / IDCG_i, IDCG_i the DCG of i's top-k by s
//     (the ideal list). A swap that leaves the list's quality unchanged
//     weighs nothing; one near the top between nodes of very different
//     input similarity weighs most (LambdaRank's weighting).
//
// The lists K(i) and the weights are held fixed in the gradient, as
// LambdaRank does and the reference code's hand-written gradient does:
// both change only where two output similarities cross, so the gradient
// is that of L wherever L is differentiable. The gradient reaches z_i and
// z_j through ŝ_ij.
//
// Computing the lists takes O(m²·c) time each run (every anchor's
// similarity to every other node), in parallel over the anchors, with a
// result that does not depend on the number of workers; the lists of the
// forward run are kept for the gradient of the same run. Precomputing
// IDCG takes O(m²·d) once. Values and gradients are computed in float64
// for both dtypes.
//
// It returns an error if z is not a float32 or float64 n × c matrix, x is
// not n × d with finite values, fewer than two nodes are given, a node is
// out of range or repeated, k < 1 or σ is not positive and finite.
func rankingLoss(z *G.Node, x []float64, d int, nodes []int, k int, sigma float64) (*G.Node, error) {
	if z == nil {
		return nil, fmt.Errorf("fairtrain: RankingLoss: nil outputs node")
	}
	s := z.Shape()
	if len(s) != 2 || opkit.CheckFloat(z.Dtype()) != nil {
		return nil, fmt.Errorf("fairtrain: RankingLoss: outputs %s, want a float32 or float64 n × c matrix", opkit.DescribeNode(z))
	}
	r, err := newRanker(x, s[0], d, nodes, k, sigma)
	if err != nil {
		return nil, err
	}
	return r.node(z)
}

// ranker holds REDRESS's ranking loss over a fixed set of nodes: the
// features' part, computed once, and the latest forward run's lists.
type ranker struct {
	nodes []int // node id of each position
	n, d  int
	k     int // top-k, capped at m − 1
	sigma float64
	xu    []float64 // m × d unit feature rows (a zero row stays zero)
	idcg  []float64 // per anchor
	disc  []float64 // 1/log₂(2 + r), r = 0..k−1
	// on switches the loss on; off, it is 0 with a zero gradient and
	// costs nothing (REDRESS's warm-up epochs).
	on bool

	// The latest forward run (valid when ok): its z rows, unit rows and
	// norms, lists, and dL/dŝ per (anchor, list entry), summed over the
	// pairs.
	ok    bool
	c     int
	zrows []float64
	zu    []float64
	zn    []float64
	near  []int
	coef  []float64
	loss  float64
}

// newRanker checks the inputs and precomputes the features' part.
func newRanker(x []float64, n, d int, nodes []int, k int, sigma float64) (*ranker, error) {
	if d < 1 || len(x) != n*d {
		return nil, fmt.Errorf("fairtrain: RankingLoss: %d feature values for %d nodes × %d columns, want n·d", len(x), n, d)
	}
	if k < 1 {
		return nil, fmt.Errorf("fairtrain: RankingLoss: k = %d, want a list length >= 1", k)
	}
	if !(sigma > 0) || math.IsInf(sigma, 0) {
		return nil, fmt.Errorf("fairtrain: RankingLoss: σ = %v, want a finite value > 0", sigma)
	}
	m := len(nodes)
	if m < 2 {
		return nil, fmt.Errorf("fairtrain: RankingLoss: %d node(s), want at least 2 to rank", m)
	}
	seen := make([]bool, n)
	for p, i := range nodes {
		if i < 0 || i >= n {
			return nil, fmt.Errorf("fairtrain: RankingLoss: nodes[%d] = %d, want a node in [0, %d)", p, i, n)
		}
		if seen[i] {
			return nil, fmt.Errorf("fairtrain: RankingLoss: node %d repeated (nodes[%d])", i, p)
		}
		seen[i] = true
	}
	r := &ranker{nodes: append([]int(nil), nodes...), n: n, d: d, k: min(k, m-1), sigma: sigma, on: true}
	r.xu = make([]float64, m*d)
	for p, i := range nodes {
		row := x[i*d : (i+1)*d]
		for j, v := range row {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("fairtrain: RankingLoss: feature x[%d] (node %d, column %d) = %v, want a finite value", i*d+j, i, j, v)
			}
		}
		unitRow(row, r.xu[p*d:(p+1)*d])
	}
	r.disc = make([]float64, r.k)
	for t := range r.disc {
		r.disc[t] = 1 / math.Log2(float64(t+2))
	}
	// IDCG: each anchor's ideal top-k by input similarity.
	r.idcg = make([]float64, m)
	kk := r.k
	par.ForWith(m, func() *rankScratch { return newRankScratch(kk) }, func(s *rankScratch, p int) {
		near := s.near
		topKRow(r.xu, d, p, m, near, s.sy)
		sum := 0.0
		for t, q := range near {
			sum += gain(simOf(r.xu, d, p, q)) * r.disc[t]
		}
		r.idcg[p] = sum
	})
	return r, nil
}

// unitRow writes row/‖row‖ to out (zeros for a zero row: the reference
// code divides by 1 there) and returns the norm used (1 for a zero row).
func unitRow[T float32 | float64](row []T, out []float64) float64 {
	s := 0.0
	for _, v := range row {
		s += float64(v) * float64(v)
	}
	nrm := math.Sqrt(s)
	if nrm == 0 {
		nrm = 1
	}
	for j, v := range row {
		out[j] = float64(v) / nrm
	}
	return nrm
}

// simOf returns 5·(u_p·u_q + 1), the similarity of positions p and q of
// the m × w unit rows u.
func simOf(u []float64, w, p, q int) float64 {
	return 5 * (dotRows(u, w, p, q) + 1)
}

func dotRows(u []float64, w, p, q int) float64 {
	a := u[p*w : (p+1)*w : (p+1)*w]
	b := u[q*w : (q+1)*w : (q+1)*w]
	s := 0.0
	for j, v := range a {
		s += v * b[j]
	}
	return s
}

// gain is NDCG's gain 2^s − 1 of a similarity s.
func gain(s float64) float64 { return math.Exp2(s) - 1 }

// topKRow fills near with the positions of the len(near) rows of the m ×
// w unit rows u most similar to row p (largest dot product first, ties
// by the lower position), p excluded; len(near) ≤ m − 1. val is
// scratch of len(near). The loop over the m rows is the cost of
// rankingLoss: it is written out for w = 2 (binary tasks).
func topKRow(u []float64, w, p, m int, near []int, val []float64) {
	k := len(near)
	c := 0
	thr := math.Inf(-1) // the k-th value once the list is full
	up := u[p*w : (p+1)*w : (p+1)*w]
	if w == 2 {
		a0, a1 := up[0], up[1]
		u = u[:2*m]
		for q := 0; q < m; q++ {
			s := a0*u[2*q] + a1*u[2*q+1]
			// Positions ascend: a value equal to the k-th loses its tie.
			if (s > thr || c < k) && q != p {
				if c = insertTop(near, val, c, q, s); c == k {
					thr = val[k-1]
				}
			}
		}
		return
	}
	for q := 0; q < m; q++ {
		uq := u[q*w : (q+1)*w : (q+1)*w]
		s := 0.0
		for j, v := range up {
			s += v * uq[j]
		}
		if (s > thr || c < k) && q != p {
			if c = insertTop(near, val, c, q, s); c == k {
				thr = val[k-1]
			}
		}
	}
}

// insertTop inserts (q, s) into the sorted list near/val of c entries
// (dropping the last if it is full) after every entry of value ≥ s, and
// returns the new count.
func insertTop(near []int, val []float64, c, q int, s float64) int {
	k := len(near)
	t := min(c, k-1)
	for t > 0 && s > val[t-1] {
		near[t], val[t] = near[t-1], val[t-1]
		t--
	}
	near[t], val[t] = q, s
	return min(c+1, k)
}

// softplus is log(1 + e^t) without overflow.
func softplus(t float64) float64 { return math.Max(t, 0) + math.Log1p(math.Exp(-math.Abs(t))) }

// forward computes the lists, the loss and its coefficients from the
// n × c outputs z (any float type).
func forward[T float32 | float64](r *ranker, z []T, c int) {
	m, k := len(r.nodes), r.k
	r.c = c
	if len(r.zu) != m*c {
		r.zrows, r.zu, r.zn = make([]float64, m*c), make([]float64, m*c), make([]float64, m)
		r.near, r.coef = make([]int, m*k), make([]float64, m*k)
	}
	for p, i := range r.nodes {
		row := z[i*c : (i+1)*c]
		for j, v := range row {
			r.zrows[p*c+j] = float64(v)
		}
		r.zn[p] = unitRow(row, r.zu[p*c:(p+1)*c])
	}
	losses := make([]float64, m)
	par.ForWith(m, func() *rankScratch { return newRankScratch(k) }, func(s *rankScratch, p int) {
		near := r.near[p*k : (p+1)*k]
		topKRow(r.zu, c, p, m, near, s.sy)
		losses[p] = r.anchor(p, near, r.coef[p*k:(p+1)*k], s)
	})
	sum := 0.0
	for _, l := range losses {
		sum += l
	}
	r.loss = sum
	r.ok = true
}

type rankScratch struct {
	sy, sx, g []float64
	near      []int
}

func newRankScratch(k int) *rankScratch {
	return &rankScratch{sy: make([]float64, k), sx: make([]float64, k), g: make([]float64, k), near: make([]int, k)}
}

// anchor returns anchor p's loss over its list near and writes dL/dŝ of
// each list entry into coef.
func (r *ranker) anchor(p int, near []int, coef []float64, s *rankScratch) float64 {
	for t, q := range near {
		s.sy[t] = simOf(r.zu, r.c, p, q)
		s.sx[t] = simOf(r.xu, r.d, p, q)
		s.g[t] = gain(s.sx[t])
		coef[t] = 0
	}
	idcg := r.idcg[p]
	if !(idcg > 0) {
		return 0 // every input similarity is 0: nothing to rank by
	}
	sig := r.sigma
	loss := 0.0
	for a := range near {
		for b := a + 1; b < len(near); b++ {
			if s.sx[a] == s.sx[b] {
				continue // P̄ = ½, but equal gains: |ΔNDCG| = 0
			}
			w := math.Abs((s.g[a]-s.g[b])*(r.disc[a]-r.disc[b])) / idcg
			t := sig * (s.sy[a] - s.sy[b])
			var l, dl float64 // ℓ and dℓ/d(ŝ_a − ŝ_b)
			if s.sx[a] > s.sx[b] {
				l, dl = softplus(-t), sig*(sigmoid(t)-1)
			} else {
				l, dl = softplus(t), sig*sigmoid(t)
			}
			loss += w * l
			coef[a] += w * dl
			coef[b] -= w * dl
		}
	}
	return loss
}

// sameRun reports whether z's rows are those of the latest forward run.
func sameRun[T float32 | float64](r *ranker, z []T, c int) bool {
	if !r.ok || r.c != c {
		return false
	}
	for p, i := range r.nodes {
		for j, v := range z[i*c : (i+1)*c] {
			if float64(v) != r.zrows[p*c+j] {
				return false
			}
		}
	}
	return true
}

// grad writes g · ∂L/∂z into out (n × c, zeroed).
func (r *ranker) grad(out []float64, g float64) {
	k, c := r.k, r.c
	scale := 5 * g
	for p, i := range r.nodes {
		up := r.zu[p*c : (p+1)*c]
		for t := 0; t < k; t++ {
			cf := r.coef[p*k+t] * scale
			if cf == 0 {
				continue
			}
			q := r.near[p*k+t]
			j := r.nodes[q]
			uq := r.zu[q*c : (q+1)*c]
			cos := 0.0
			for e, v := range up {
				cos += v * uq[e]
			}
			// ∂cos/∂z_i = (u_j − cos·u_i)/‖z_i‖, and the same with i, j
			// exchanged.
			ai, aj := cf/r.zn[p], cf/r.zn[q]
			oi, oj := out[i*c:(i+1)*c], out[j*c:(j+1)*c]
			for e := range up {
				oi[e] += ai * (uq[e] - cos*up[e])
				oj[e] += aj * (up[e] - cos*uq[e])
			}
		}
	}
}

// node applies the loss op to z.
func (r *ranker) node(z *G.Node) (*G.Node, error) {
	s := z.Shape()
	if s[0] != r.n {
		return nil, fmt.Errorf("fairtrain: RankingLoss: outputs %s for %d nodes of features, want one row per node", opkit.DescribeNode(z), r.n)
	}
	return opkit.Apply(rankSpec, &rankOp{r: r, n: s[0], c: s[1], id: opIDs.Add(1)}, z)
}

// rankOp holds the ranking loss op's parameters.
type rankOp struct {
	r    *ranker
	n, c int
	id   uint64
}

var rankSpec = &opkit.Spec[*rankOp]{
	ID: "fairmp.fair.RankingLoss",
	Name: func(op *rankOp) string {
		return fmt.Sprintf("RankingLoss#%d(m=%d, k=%d)", op.id, len(op.r.nodes), op.r.k)
	},
	Sig: scalarSig[*rankOp],
	Shape: func(op *rankOp, in []tensor.Shape) (tensor.Shape, error) {
		return tensor.ScalarShape(), logitsShape(in[0], op.n, op.c)
	},
	Hash: func(op *rankOp, h opkit.Hasher) { h.U64(op.id) },
	F32:  rankFwd[float32],
	F64:  rankFwd[float64],
	Grad: func(o *opkit.Op[*rankOp], inputs G.Nodes, _, grad *G.Node) (G.Nodes, error) {
		d, err := opkit.Apply(rankGradSpec, o.P, inputs[0], grad)
		if err != nil {
			return nil, err
		}
		return G.Nodes{d}, nil
	},
}

func rankFwd[T float32 | float64](op *rankOp, a opkit.Args[T]) error {
	if !op.r.on {
		op.r.ok = false
		a.Out[0] = 0
		return nil
	}
	forward(op.r, a.In[0], op.c)
	a.Out[0] = T(op.r.loss)
	return nil
}

// rankGradSpec computes grad · ∂L/∂z from (z, grad), with the lists of
// the forward run on the same z (recomputed if z changed since).
var rankGradSpec = &opkit.Spec[*rankOp]{
	ID:   "fairmp.fair.RankingLossGrad",
	Name: func(op *rankOp) string { return fmt.Sprintf("RankingLossGrad#%d", op.id) },
	Sig:  lossGradSig[*rankOp],
	Shape: func(op *rankOp, in []tensor.Shape) (tensor.Shape, error) {
		return tensor.Shape{op.n, op.c}, logitsShape(in[0], op.n, op.c)
	},
	Hash: func(op *rankOp, h opkit.Hasher) { h.U64(op.id) },
	F32:  rankGradFwd[float32],
	F64:  rankGradFwd[float64],
}

func rankGradFwd[T float32 | float64](f *rankOp, a opkit.Args[T]) error {
	if !f.r.on {
		return nil // the fresh output's zeros
	}
	zs := a.In[0]
	if !sameRun(f.r, zs, f.c) {
		forward(f.r, zs, f.c)
	}
	out := make([]float64, f.n*f.c)
	f.r.grad(out, float64(a.In[1][0]))
	putF64(a.Out, out)
	return nil
}

// RankingNDCG returns REDRESS's measure of individual fairness (Dong et
// al., KDD 2021, Section 4.2): the mean over the nodes listed in nodes of
// NDCG@k of each node's top-k list by output similarity, graded by input
// similarity. With ŝ, s, the gains 2^s − 1, the discounts and the ties as
// in rankingLoss, for each node i of nodes
//
//	NDCG@k(i) = Σ_{r=1..k} (2^{s_{i,π(r)}} − 1)/log₂(1 + r) / IDCG_i,
//
// π(r) the r-th node of i's list by ŝ among the other nodes of nodes and
// IDCG_i the same sum over i's list by s: 1 when the outputs rank the k
// most input-similar nodes first, in their order. Nodes whose IDCG is 0
// (every input similarity 0) are left out of the mean. z holds the n × c
// outputs (the logits, as the loss reads them), x the n × d features,
// both row-major.
//
// It returns the errors of rankingLoss's inputs, and an error if z is not
// n × c or no node has a positive IDCG.
func RankingNDCG(z []float64, c int, x []float64, d int, nodes []int, k int) (float64, error) {
	if c < 1 || len(z)%c != 0 {
		return 0, fmt.Errorf("fairtrain: RankingNDCG: %d outputs with c = %d, want n × c", len(z), c)
	}
	n := len(z) / c
	r, err := newRanker(x, n, d, nodes, k, 1)
	if err != nil {
		return 0, fmt.Errorf("fairtrain: RankingNDCG: %w", err)
	}
	m, kk := len(nodes), r.k
	zu := make([]float64, m*c)
	for p, i := range nodes {
		unitRow(z[i*c:(i+1)*c], zu[p*c:(p+1)*c])
	}
	vals := make([]float64, m)
	par.ForWith(m, func() *rankScratch { return newRankScratch(kk) }, func(s *rankScratch, p int) {
		if !(r.idcg[p] > 0) {
			vals[p] = math.NaN()
			return
		}
		topKRow(zu, c, p, m, s.near, s.sy)
		dcg := 0.0
		for t, q := range s.near {
			dcg += gain(simOf(r.xu, d, p, q)) * r.disc[t]
		}
		vals[p] = dcg / r.idcg[p]
	})
	sum, cnt := 0.0, 0
	for _, v := range vals {
		if !math.IsNaN(v) {
			sum += v
			cnt++
		}
	}
	if cnt == 0 {
		return 0, fmt.Errorf("fairtrain: RankingNDCG: every node's input similarities are 0: nothing to rank by")
	}
	return sum / float64(cnt), nil
}
