package preprocess

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand"
	"slices"
	"sort"

	"gorgonia.org/tensor"

	"github.com/fairmp/fairmp/graph"
	"github.com/fairmp/fairmp/layers/fairness"
)

// EDITSConfig is EDITS (Dong, Liu, Jalaian & Li, "EDITS: Modeling and
// Mitigating Data Bias for Graph Neural Networks", WWW 2022;
// github.com/yushundong/EDITS). It learns
//
//   - θ ∈ [0, 1]^d, a weight per feature column: X̃ = X_norm·diag(θ),
//     X_norm the features with each column scaled to unit L2 norm;
//   - w ∈ [0, 1], a weight per undirected pair of nodes: the graph's
//     edges (starting at 1) and Candidates sampled pairs two hops apart
//     (starting at 0), giving the weighted adjacency Ã;
//   - a linear critic f(i) = Σ_h a_h·(P̃^h X̃)_i over hops h = 0..Hops,
//     its weights clipped to ±CriticClip (the WGAN way to keep it
//     Lipschitz), with P̃ = α·D̃^-1/2 (Ã + I) D̃^-1/2 + (1 − α)·I.
//
// The critic's distance is D = mean over group 0 of f − mean over group
// 1 of f, over the nodes whose group is given (the command gives the
// training nodes', as the authors do): up to the clip bound, the
// Wasserstein distance between the groups' joint distributions of a
// column and its propagations (Kantorovich–Rubinstein duality). Each
// epoch, as the authors' code:
//
//  1. θ takes an RMSprop step on AttrDistance·D + AttrKeep·‖X̃ − X_norm‖²_F,
//     then the L1 proximal step AttrL1·lr, then is clipped to [0, 1];
//  2. w takes an SGD step with momentum 0.9 on StructDistance·D +
//     StructKeep·Σ_p (w_p − a_p)² (a_p its start, 1 or 0), then the L1
//     proximal step StructL1·lr, then is clipped to [0, 1];
//  3. the critic takes CriticSteps RMSprop steps up D, each clipped.
//
// At the end the Mask columns with the smallest θ are set to zero in the
// input features (the other columns keep their values, unweighted, as
// the authors' code returns them), and the pairs are made binary as the
// authors do with their threshold factor r (Threshold): with the largest
// increase w_p − a_p over the candidates Δ⁺ and the largest decrease Δ⁻
// over the edges, a candidate whose increase exceeds r·Δ⁺ becomes an
// edge and an edge whose decrease exceeds r·|Δ⁻| is removed.
//
// # Differences from the paper and the authors' code
//
//   - Memory: the authors learn a dense n × n Ã (356 million entries on
//     Bail, 900 million on Credit). Here Ã has weights only on the
//     graph's edges and on at most Candidates pairs per node drawn among
//     its two-hop neighbours (random two-step walks, seeded): the memory
//     is O(edges + n·(Candidates + d)) and an epoch costs
//     O(Hops²·(edges + n·Candidates) + Hops·n·d). So EDITS can remove any
//     edge but only add edges between nodes two hops apart, where the
//     authors can add any pair. Candidates 0 only removes edges.
//   - Propagation: the critic propagates with the normalised P̃, as the
//     paper writes it and as the structural bias is measured, where the
//     authors' code propagates with the raw Ã (its powers grow with the
//     degree).
//   - The critic is linear, as the authors' (one linear layer over the
//     concatenated hops, equal to the paper's sum of per-column f_m);
//     the authors' dropout on its output is left out. With a linear
//     critic D is linear in X̃, so every gradient is a few propagations
//     of vectors (no n × d matrix per hop is kept).
//   - Precision: the authors train in float16 on a GPU; here in Dtype
//     (float32 or float64), deterministically on one core.
//   - StructL1 defaults to 0 (the authors: 5e-4). In float16 the L1 step
//     5e-4·lr is below the resolution near 1 and leaves the edges alone;
//     in float32 and float64 it lowers every edge by the same amount,
//     which the relative threshold then turns into removing nearly
//     every edge.
//   - The masked columns stay, as zeros, so that the feature matrix keeps
//     its shape (the authors drop them before training).
//   - θ's keep term is squared, as the paper writes it (the authors'
//     code takes the unsquared Frobenius norm): its pull back to 1 then
//     grows with θ's distance from 1, so that θ settles where it
//     balances each column's share of the distance and the smallest θ
//     are the most biased columns; with the unsquared norm (a pull of
//     constant size, split over the columns by their distance from 1)
//     θ stayed within 10⁻³ of 1 and the masked columns were noise.
//
// Defaults are the authors' for Bail (their train.py and GCN setting).
type EDITSConfig struct {
	// Epochs of alternating updates (authors: 100 for Bail, 500 for
	// the others).
	Epochs int
	// LR is the learning rate of the three parts; LateLR replaces it
	// from epoch LateEpoch on (authors: 0.003, then 0.001 after 400).
	LR, LateLR float64
	// LateEpoch is the first epoch (0-based) at LateLR.
	LateEpoch int
	// Hops is H, the number of propagations the critic sees (authors 2).
	Hops int
	// Alpha is α of P̃ (paper 0.5 = 1/λ_max).
	Alpha float64
	// AttrDistance and AttrKeep weigh D and ‖X̃ − X_norm‖²_F in θ's step
	// (authors for Bail: 1 and 0.03; Credit 0.1 and 0.05; German 0.8
	// and 0.3); AttrL1 is its L1 weight μ2 (5e-6).
	AttrDistance, AttrKeep, AttrL1 float64
	// StructDistance and StructKeep weigh D and Σ (w − a)² in w's step
	// (authors 15 and 1); StructL1 is its L1 weight μ4 (default 0, see
	// the type's doc).
	StructDistance, StructKeep, StructL1 float64
	// WeightDecay is the RMSprop weight decay of θ and the critic
	// (authors 1e-7).
	WeightDecay float64
	// CriticSteps is the number of critic steps per epoch (authors 8),
	// CriticClip the bound its weights are clipped to (0.02).
	CriticSteps int
	CriticClip  float64
	// Mask is z, the number of feature columns with the smallest θ set
	// to zero (authors 4); it must be below the number of columns.
	Mask int
	// Threshold is r, the threshold factor of the binarisation of Ã
	// (authors for a GCN: 0.015 on Bail, 0.02 on Credit, 0.29 on
	// German).
	Threshold float64
	// Candidates is the number of two-hop pairs per node whose weight is
	// learned besides the edges (0: edges only).
	Candidates int
	// Seed seeds the critic's initialisation and the candidates.
	Seed int64
	// Dtype is tensor.Float32 or tensor.Float64, the element type of the
	// learning (the output features are float64 either way).
	Dtype tensor.Dtype
}

// DefaultEDITSConfig returns the authors' settings for Bail, with
// Candidates 5, StructL1 0, Seed 1 and Float64.
func DefaultEDITSConfig() EDITSConfig {
	return EDITSConfig{
		Epochs: 100, LR: 0.003, LateLR: 0.001, LateEpoch: 400, Hops: 2, Alpha: 0.5,
		AttrDistance: 1, AttrKeep: 0.03, AttrL1: 5e-6,
		StructDistance: 15, StructKeep: 1, StructL1: 0,
		WeightDecay: 1e-7, CriticSteps: 8, CriticClip: 0.02,
		Mask: 4, Threshold: 0.015, Candidates: 5, Seed: 1, Dtype: tensor.Float64,
	}
}

// Name returns "edits".
func (c EDITSConfig) Name() string { return "edits" }

// WithSeed returns c with Seed = seed.
func (c EDITSConfig) WithSeed(seed int64) fairness.Method { c.Seed = seed; return c }

// Validate checks every field.
func (c EDITSConfig) Validate() error {
	finite := func(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
	switch {
	case c.Epochs < 1:
		return fmt.Errorf("Epochs %d, want at least 1", c.Epochs)
	case !(c.LR > 0) || !finite(c.LR) || !(c.LateLR > 0) || !finite(c.LateLR):
		return fmt.Errorf("LR %v and LateLR %v, want both positive and finite", c.LR, c.LateLR)
	case c.LateEpoch < 0:
		return fmt.Errorf("LateEpoch %d, want ≥ 0", c.LateEpoch)
	case c.Hops < 1 || c.Hops > 8:
		return fmt.Errorf("Hops %d, want 1 to 8", c.Hops)
	case !(c.Alpha >= 0 && c.Alpha <= 1):
		return fmt.Errorf("Alpha %v, want in [0, 1]", c.Alpha)
	case c.CriticSteps < 1:
		return fmt.Errorf("CriticSteps %d, want at least 1", c.CriticSteps)
	case !(c.CriticClip > 0) || !finite(c.CriticClip):
		return fmt.Errorf("CriticClip %v, want positive and finite", c.CriticClip)
	case c.Mask < 0:
		return fmt.Errorf("Mask %d, want ≥ 0", c.Mask)
	case !(c.Threshold >= 0 && c.Threshold <= 1):
		return fmt.Errorf("Threshold %v, want in [0, 1] (a share of the largest change)", c.Threshold)
	case c.Candidates < 0:
		return fmt.Errorf("Candidates %d, want ≥ 0", c.Candidates)
	case c.Dtype != tensor.Float32 && c.Dtype != tensor.Float64:
		return fmt.Errorf("Dtype %v, want float32 or float64", c.Dtype)
	}
	for _, f := range []struct {
		name string
		v    float64
	}{{"AttrDistance", c.AttrDistance}, {"AttrKeep", c.AttrKeep}, {"AttrL1", c.AttrL1},
		{"StructDistance", c.StructDistance}, {"StructKeep", c.StructKeep}, {"StructL1", c.StructL1},
		{"WeightDecay", c.WeightDecay}} {
		if !(f.v >= 0) || !finite(f.v) {
			return fmt.Errorf("%s %v, want ≥ 0 and finite", f.name, f.v)
		}
	}
	return nil
}

// Debias runs EDITS on the graph g with the n × d row-major features x
// and the groups sens (0 or 1; −1 for a node whose group the debiasing
// must not use). It returns a new graph and new features; its inputs are
// not modified. Errors: the configuration's, shapes that disagree, a
// feature that is not finite, a group other than 0, 1 and −1, a group
// without a known node, Mask not below d.
func (c EDITSConfig) Debias(ctx context.Context, g *graph.Graph, x []float64, d int, sens []int) (*fairness.Debiased, error) {
	if err := c.Validate(); err != nil {
		return nil, fmt.Errorf("preprocess: edits: %w", err)
	}
	if _, err := checkData(g, x, d, sens); err != nil {
		return nil, fmt.Errorf("preprocess: edits: %w", err)
	}
	if c.Mask >= d {
		return nil, fmt.Errorf("preprocess: edits: Mask %d would zero all %d feature columns, want fewer", c.Mask, d)
	}
	if c.Dtype == tensor.Float32 {
		return runEDITS[float32](ctx, c, g, x, d, sens)
	}
	return runEDITS[float64](ctx, c, g, x, d, sens)
}

// candidates draws, for each node in turn, up to k pairs with a node two
// hops away that is not a neighbour (random two-step walks, 4k tries),
// and returns the distinct pairs (u < v), sorted.
func candidates(g *graph.Graph, k int, seed int64) [][2]int32 {
	if k == 0 {
		return nil
	}
	rng := rand.New(rand.NewSource(seed))
	var out [][2]int32
	var mine []int32
	for i := 0; i < g.N(); i++ {
		ni := g.Neighbors(i)
		if len(ni) == 0 {
			continue
		}
		mine = mine[:0]
		for t := 0; t < 4*k && len(mine) < k; t++ {
			j := ni[rng.Intn(len(ni))]
			nj := g.Neighbors(int(j))
			v := nj[rng.Intn(len(nj))]
			if int(v) == i || slices.Contains(mine, v) {
				continue
			}
			if _, found := slices.BinarySearch(ni, v); found {
				continue
			}
			mine = append(mine, v)
			u, w := int32(i), v
			if u > w {
				u, w = w, u
			}
			out = append(out, [2]int32{u, w})
		}
	}
	slices.SortFunc(out, func(a, b [2]int32) int {
		if a[0] != b[0] {
			return int(a[0] - b[0])
		}
		return int(a[1] - b[1])
	})
	return slices.Compact(out)
}

// editsModel holds EDITS' parameters and the quantities its gradients
// are made of, in T.
type editsModel[T float] struct {
	wg    *wgraph[T]
	n, d  int
	hops  int
	alpha T
	xn    []T // n × d, columns of unit L2 norm
	nrm2  []T // each column's squared norm in xn (1, or 0 for a zero column)
	c     []T // +1/n0 on group 0, −1/n1 on group 1, 0 elsewhere
	theta []T // d
	w     []T // one per pair
	start []T // the pairs' starting weights (1 edge, 0 candidate)
	a     []T // critic, (hops+1) × d
	deg   []T
	s     []T
	u     [][]T // u_h = P̃^h c, h = 0..hops
	q     []T   // (hops+1) × d: q_hm = u_h · xn[:, m]
}

func newEditsModel[T float](wg *wgraph[T], x []float64, d int, sens []int, hops int, alpha float64) *editsModel[T] {
	n := wg.n
	m := &editsModel[T]{wg: wg, n: n, d: d, hops: hops, alpha: T(alpha),
		xn: make([]T, n*d), nrm2: make([]T, d), c: make([]T, n),
		theta: make([]T, d), w: wg.ones(), a: make([]T, (hops+1)*d),
		deg: make([]T, n), s: make([]T, n), u: make([][]T, hops+1), q: make([]T, (hops+1)*d)}
	m.start = slices.Clone(m.w)
	for j, nrm := range columnNorms(x, n, d) {
		if nrm > 0 {
			m.nrm2[j] = 1
			for i := 0; i < n; i++ {
				m.xn[i*d+j] = T(x[i*d+j] / nrm)
			}
		}
	}
	var cnt [2]int
	for _, s := range sens {
		if s >= 0 {
			cnt[s]++
		}
	}
	for i, s := range sens {
		switch s {
		case 0:
			m.c[i] = T(1 / float64(cnt[0]))
		case 1:
			m.c[i] = T(-1 / float64(cnt[1]))
		}
	}
	for j := range m.theta {
		m.theta[j] = 1
	}
	for h := range m.u {
		m.u[h] = make([]T, n)
	}
	return m
}

// refresh recomputes the degrees, u_h = P̃^h c and q from the current w
// (θ and the critic do not enter them).
func (m *editsModel[T]) refresh() {
	m.wg.scales(m.w, m.deg, m.s)
	copy(m.u[0], m.c)
	for h := 1; h <= m.hops; h++ {
		m.wg.apply(m.w, m.s, m.alpha, m.u[h-1], m.u[h])
	}
	clear(m.q)
	for h := 0; h <= m.hops; h++ {
		q := m.q[h*m.d : (h+1)*m.d]
		for i, ui := range m.u[h] {
			if ui == 0 {
				continue
			}
			for j, v := range m.xn[i*m.d : (i+1)*m.d] {
				q[j] += ui * v
			}
		}
	}
}

// distance returns D = cᵀ Σ_h P̃^h X̃ a_h = Σ_hm θ_m a_hm q_hm (after
// refresh).
func (m *editsModel[T]) distance() T {
	var s T
	for h := 0; h <= m.hops; h++ {
		for j := 0; j < m.d; j++ {
			s += m.theta[j] * m.a[h*m.d+j] * m.q[h*m.d+j]
		}
	}
	return s
}

// gradTheta sets out to ∂D/∂θ (after refresh).
func (m *editsModel[T]) gradTheta(out []T) {
	clear(out)
	for h := 0; h <= m.hops; h++ {
		for j := range out {
			out[j] += m.a[h*m.d+j] * m.q[h*m.d+j]
		}
	}
}

// gradCritic sets out to ∂D/∂a (after refresh).
func (m *editsModel[T]) gradCritic(out []T) {
	for h := 0; h <= m.hops; h++ {
		for j := 0; j < m.d; j++ {
			out[h*m.d+j] = m.theta[j] * m.q[h*m.d+j]
		}
	}
}

// gradW sets out to ∂D/∂w (after refresh). With y_h = X̃ a_h,
// D = Σ_h cᵀ P̃^h y_h, so dD = Σ_ij G_ij dP̃_ij with
// G = Σ_{h≥1} Σ_{k<h} u_k (P̃^(h−1−k) y_h)ᵀ; P̃_ij = α s_i s_j (w_ij +
// δ_ij) with s = deg^−1/2 and deg_i = 1 + Σ_j w_ij, so that
// ∂D/∂w_uv = α s_u s_v (G_uv + G_vu) + r_u + r_v, with
// r_i = −(Σ_j P̃'_ij (G_ij + G_ji)) / (2 deg_i) over j including i.
func (m *editsModel[T]) gradW(out []T) {
	n, d := m.n, m.d
	// The vector pairs (U_k, V_k) whose outer products sum to G.
	var us, vs [][]T
	for h := 1; h <= m.hops; h++ {
		y := make([]T, n)
		for i := 0; i < n; i++ {
			var s T
			for j, v := range m.xn[i*d : (i+1)*d] {
				s += v * m.theta[j] * m.a[h*d+j]
			}
			y[i] = s
		}
		// v_j = P̃^j y for j = 0..h−1; pair u_k with v_(h−1−k).
		v := y
		for j := 0; j < h; j++ {
			if j > 0 {
				next := make([]T, n)
				m.wg.apply(m.w, m.s, m.alpha, v, next)
				v = next
			}
			us = append(us, m.u[h-1-j])
			vs = append(vs, v)
		}
	}
	gij := func(i, j int) T {
		var s T
		for k := range us {
			s += us[k][i] * vs[k][j]
		}
		return s
	}
	r := make([]T, n)
	wg := m.wg
	for i := 0; i < n; i++ {
		var acc T = m.alpha * m.s[i] * m.s[i] * 2 * gij(i, i)
		for k := wg.rowptr[i]; k < wg.rowptr[i+1]; k++ {
			j := int(wg.nbr[k])
			acc += m.alpha * m.s[i] * m.s[j] * m.w[wg.pid[k]] * (gij(i, j) + gij(j, i))
		}
		r[i] = -acc / (2 * m.deg[i])
	}
	for p := range out {
		u, v := int(wg.pu[p]), int(wg.pv[p])
		out[p] = m.alpha*m.s[u]*m.s[v]*(gij(u, v)+gij(v, u)) + r[u] + r[v]
	}
}

// keepTheta returns ‖X̃ − X_norm‖²_F = Σ_m nrm2_m (θ_m − 1)² and adds
// its gradient times scale to g.
func (m *editsModel[T]) keepTheta(g []T, scale T) T {
	var s T
	for j, t := range m.theta {
		s += m.nrm2[j] * (t - 1) * (t - 1)
		if g != nil {
			g[j] += scale * 2 * m.nrm2[j] * (t - 1)
		}
	}
	return s
}

// keepW returns Σ_p (w_p − a_p)² and adds its gradient times scale to g.
func (m *editsModel[T]) keepW(g []T, scale T) T {
	var s T
	for p, w := range m.w {
		dlt := w - m.start[p]
		s += dlt * dlt
		if g != nil {
			g[p] += scale * 2 * dlt
		}
	}
	return s
}

// rmsprop is torch's RMSprop (smoothing 0.99, no momentum).
type rmsprop[T float] struct {
	v       []T
	eps, wd T
}

func (o *rmsprop[T]) step(p, g []T, lr T, sign T) {
	if o.v == nil {
		o.v = make([]T, len(p))
	}
	for k := range p {
		gk := g[k] + o.wd*p[k]*sign
		o.v[k] = 0.99*o.v[k] + 0.01*gk*gk
		p[k] -= sign * lr * gk / (T(math.Sqrt(float64(o.v[k]))) + o.eps)
	}
}

// proxClip applies the L1 proximal step t and clips to [0, 1].
func proxClip[T float](p []T, t T) {
	for k, v := range p {
		v -= t // p ≥ 0, so the soft threshold is a shift down to 0
		p[k] = min(max(v, 0), 1)
	}
}

func runEDITS[T float](ctx context.Context, c EDITSConfig, g *graph.Graph, x []float64, d int, sens []int) (*fairness.Debiased, error) {
	n := g.N()
	wg := newWGraph[T](g, candidates(g, c.Candidates, c.Seed))
	m := newEditsModel[T](wg, x, d, sens, c.Hops, c.Alpha)
	rng := rand.New(rand.NewSource(c.Seed + 1))
	for k := range m.a {
		m.a[k] = T(c.CriticClip * (2*rng.Float64() - 1))
	}
	thetaOpt := &rmsprop[T]{eps: 1e-4, wd: T(c.WeightDecay)}
	criticOpt := &rmsprop[T]{eps: 1e-4, wd: T(c.WeightDecay)}
	gTheta := make([]T, d)
	gW := make([]T, len(m.w))
	mom := make([]T, len(m.w))
	gA := make([]T, len(m.a))
	clip := T(c.CriticClip)
	out := &fairness.Debiased{Trace: make([]float64, 0, c.Epochs)}
	m.refresh()
	for e := 0; e < c.Epochs; e++ {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("preprocess: edits: before epoch %d: %w", e+1, err)
		}
		lr := T(c.LR)
		if e >= c.LateEpoch {
			lr = T(c.LateLR)
		}
		// 1. Attribute debiasing.
		m.gradTheta(gTheta)
		for j := range gTheta {
			gTheta[j] *= T(c.AttrDistance)
		}
		m.keepTheta(gTheta, T(c.AttrKeep))
		thetaOpt.step(m.theta, gTheta, lr, 1)
		proxClip(m.theta, T(c.AttrL1)*lr)
		// 2. Structural debiasing, with the new θ.
		m.gradW(gW)
		for p := range gW {
			gW[p] *= T(c.StructDistance)
		}
		m.keepW(gW, T(c.StructKeep))
		for p := range mom {
			if e == 0 {
				mom[p] = gW[p]
			} else {
				mom[p] = 0.9*mom[p] + gW[p]
			}
			m.w[p] -= lr * mom[p]
		}
		proxClip(m.w, T(c.StructL1)*lr)
		// 3. The critic, up D, with the new w.
		m.refresh()
		for k := 0; k < c.CriticSteps; k++ {
			m.gradCritic(gA)
			criticOpt.step(m.a, gA, lr, -1)
			for j, v := range m.a {
				m.a[j] = min(max(v, -clip), clip)
			}
		}
		dist := float64(m.distance())
		if math.IsNaN(dist) || math.IsInf(dist, 0) {
			return nil, fmt.Errorf("preprocess: edits: the distance is %v at epoch %d; lower LR or the weights", dist, e+1)
		}
		out.Trace = append(out.Trace, dist)
	}
	// Mask the columns with the smallest θ.
	out.Weights = make([]float64, d)
	order := make([]int, d)
	for j := range order {
		order[j] = j
		out.Weights[j] = float64(m.theta[j])
	}
	sort.SliceStable(order, func(a, b int) bool { return out.Weights[order[a]] < out.Weights[order[b]] })
	out.Masked = slices.Clone(order[:c.Mask])
	slices.Sort(out.Masked)
	out.Features = slices.Clone(x)
	for _, j := range out.Masked {
		for i := 0; i < n; i++ {
			out.Features[i*d+j] = 0
		}
	}
	// Binarise Ã.
	var inc, dec float64
	for p, w := range m.w {
		dl := float64(w - m.start[p])
		inc, dec = max(inc, dl), min(dec, dl)
	}
	r := c.Threshold
	edges := make([][2]int, 0, wg.edges)
	for p, w := range m.w {
		dl := float64(w - m.start[p])
		switch {
		case p < wg.edges && dec < 0 && dl < r*dec:
			out.Removed++
		case p < wg.edges:
			edges = append(edges, [2]int{int(wg.pu[p]), int(wg.pv[p])})
		case inc > 0 && dl > r*inc:
			out.Added++
			edges = append(edges, [2]int{int(wg.pu[p]), int(wg.pv[p])})
		}
	}
	ng, err := graph.FromEdges(n, edges)
	if err != nil {
		return nil, errors.Join(errors.New("preprocess: edits: building the debiased graph"), err)
	}
	out.Graph = ng
	return out, nil
}
