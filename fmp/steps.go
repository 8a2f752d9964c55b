package fmp

import (
	"fmt"

	"github.com/fairmp/fairmp/internal/opkit"
	"github.com/fairmp/fairmp/internal/pprop"
)

// Steps is FMP's K steps split into work on each node and one sum over
// the nodes per step, for engines that hold the nodes apart: Layer.Apply
// computes the same on one machine (its loop is written with the same
// row primitives), and package fmp/fmpbeam runs it on
// Apache Beam. A node needs its own row of X_trans, of F and of ÃF (the
// sparse product, the engine's), its group, and the dual u (R × c), which
// every node of a step shares. With u = 0 before the first step, step k
// is, for every node i:
//
//	xagg_i = Aggregate(x_i, (ÃF)_i)              propagation (x_i when λs = 0)
//	f̄_i    = Descend(xagg_i, f_i, group_i, u)    gradient step on the current dual
//	S_g   += Probs(f̄_i)                          for group_i = g (known groups only)
//
// then, once the sums S (G × c) of every node are in, u = Dual(u, S), and
// for every node f_i = Descend(xagg_i, f_i, group_i, u) (the new dual). F
// starts as X_trans; after K steps F is Layer.Apply's output up to the
// order in which the engine sums (ÃF and S).
//
// The group contrast Δs (see deltaS) enters through the groups' sizes
// alone: the sum over the nodes Δs·SF(F̄) is Σ_g Δs_g·S_g, with Δs_g the
// value of Δs for a node of group g. A Steps is immutable and safe for
// concurrent use.
type Steps struct {
	cfg         Config
	rows        int
	groups      int
	coef        []float64 // rows × groups: Δs[r, i] of a node of group g
	normSq      float64
	beta, rad   float64
	gamma       float64
	scale, invT float64
}

// NewSteps returns the per-node steps of cfg for an attribute whose
// groups 0..G−1 have counts[g] known members (G = len(counts)). It
// returns an error for an invalid cfg, fewer than two groups or an empty
// group.
func NewSteps(cfg Config, counts []int) (*Steps, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if len(counts) < 2 {
		return nil, fmt.Errorf("fmp: NewSteps: %d group(s), want at least 2", len(counts))
	}
	for g, c := range counts {
		if c < 1 {
			return nil, fmt.Errorf("fmp: NewSteps: group %d has %d known members, want ≥ 1 (group ids must be 0..%d without gaps)", g, c, len(counts)-1)
		}
	}
	rows, coef := contrast(counts, cfg.PerGroupRows)
	s := &Steps{cfg: cfg, rows: rows, groups: len(counts), coef: coef, gamma: cfg.Gamma(), invT: 1 / cfg.Temperature}
	s.scale = s.gamma / cfg.Temperature
	gram := make([]float64, rows*rows)
	for p := 0; p < rows; p++ {
		for q := p; q < rows; q++ {
			sum := 0.0
			for g, n := range counts {
				sum += float64(n) * coef[p*s.groups+g] * coef[q*s.groups+g]
			}
			gram[p*rows+q], gram[q*rows+p] = sum, sum
		}
	}
	s.normSq = largestEigen(gram, rows)
	s.beta, s.rad = dualStep(cfg, s.normSq)
	return s, nil
}

// contrast returns the rows of Δs and their value for a node of each
// group (rows × groups, row-major) for groups of the given sizes: the
// paper's single row for two groups unless perGroup, else one row per
// group (see deltaS).
func contrast(counts []int, perGroup bool) (int, []float64) {
	g := len(counts)
	if g == 2 && !perGroup {
		return 1, []float64{-1 / float64(counts[0]), 1 / float64(counts[1])}
	}
	known := 0
	for _, c := range counts {
		known += c
	}
	all := 1 / float64(known)
	coef := make([]float64, g*g)
	for r := 0; r < g; r++ {
		inv := 1 / float64(counts[r])
		for h := 0; h < g; h++ {
			coef[r*g+h] = -all
			if h == r {
				coef[r*g+h] = inv - all
			}
		}
	}
	return g, coef
}

// Config returns the settings.
func (s *Steps) Config() Config { return s.cfg }

// Rows returns R, the rows of Δs: the dual u is R × c.
func (s *Steps) Rows() int { return s.rows }

// Groups returns G, the number of groups: the sums S are G × c.
func (s *Steps) Groups() int { return s.groups }

// NormSq returns ‖Δs‖², from the groups' sizes (the Δs of New, up to
// rounding).
func (s *Steps) NormSq() float64 { return s.normSq }

// DualStep returns the dual step size β and the radius of the dual's l∞
// ball (Layer.DualStep's).
func (s *Steps) DualStep() (beta, radius float64) { return s.beta, s.rad }

// Aggregate writes a node's X_agg = γ·x + (1−γ)·af into out, where x is
// its row of X_trans and af its row of ÃF (af is not read when λs = 0,
// where X_agg = x). out may be x or af.
func (s *Steps) Aggregate(out, x, af []float64) {
	if s.gamma == 1 {
		copy(out, x)
		return
	}
	pprop.AggregateRow(out, x, af, s.gamma)
}

// Descend writes a node's xagg − γ∇(f, u) into out: the gradient step of
// the paper's steps 2 and 5, for a node of group group (−1: unknown,
// which Δs leaves out: out = xagg) with its rows xagg and f and the dual
// u (R × c, row-major). out may be xagg or f.
func (s *Steps) Descend(out, xagg, f []float64, group int, u []float64) {
	c := len(f)
	a := make([]float64, 3*c)
	if group < 0 || !expandRow(s.coef, s.rows, s.groups, group, u, c, a[:c]) {
		copy(out, xagg)
		return
	}
	p, g := a[c:2*c], a[2*c:]
	opkit.SoftmaxRow(f, p, s.invT)
	descendRow(out, xagg, p, a[:c], s.scale, g)
}

// Probs writes SF(f̄/τ), a node's term of its group's sum S_g, into p.
func (s *Steps) Probs(p, fbar []float64) { opkit.SoftmaxRow(fbar, p, s.invT) }

// Dual replaces u (R × c) by the next dual from the groups' sums S
// (G × c, row-major; S_g = Σ over g's known members of Probs(f̄)):
// u ← proj(u + β·Σ_g Δs_g S_g), the projection onto the l∞ ball of
// radius λf scaled (steps 3 and 4).
func (s *Steps) Dual(u, sums []float64) {
	c := len(sums) / s.groups
	for r := 0; r < s.rows; r++ {
		for j := 0; j < c; j++ {
			sum := 0.0
			for g := 0; g < s.groups; g++ {
				sum += s.coef[r*s.groups+g] * sums[g*c+j]
			}
			u[r*c+j] += s.beta * sum
		}
	}
	projKernel(u, u, s.rad)
}
