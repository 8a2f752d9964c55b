package fmp

import (
	"github.com/fairmp/fairmp/graph"
	"github.com/fairmp/fairmp/internal/opkit"
	"github.com/fairmp/fairmp/internal/pprop"
)

// loop is FMP's K steps, the one forward loop of the package: the fused
// op's forward (stepsOp, Layer.Forward), Layer.Apply, Layer.Record,
// Recorded.Apply and Recorded.Trace, and the audit all run it (runSteps). It
// is written in terms of the row primitives that Steps, the per-node form
// for distributed engines, also uses (pprop.AggregateRow, descendRow and
// projKernel; step 1 is internal/pprop's Step and AggregateRow, which the
// λf = 0 op runs too), so a step has one definition.
//
// The dual policy is a parameter:
//
//   - ascent (fixed == nil, zero false): the paper's steps 2–4, projected
//     dual ascent from u⁰ = 0, as in training and evaluation;
//   - recorded duals (fixed != nil): u after step k is fixed[k] (Recorded's
//     duals), so a step is step 1 and step 5 alone;
//   - zero (zero true): u ≡ 0, the propagation alone (λf = 0, or
//     InferenceOnly while training).
//
// The Δs is a parameter too (rows × n): a deltaS's for a layer, the one
// that a Recorded's group sizes give on another graph for Recorded.Apply, and
// soft memberships' (NewSoft) as any other.
type loop struct {
	adj                    *graph.Matrix
	ds                     []float64 // Δs, rows × n, row-major
	rows, n, k             int
	gamma, beta, rad, temp float64
	// endToEnd keeps S = SF(F/τ) of every step even where the dual is
	// zero: the backward pass of EndToEnd needs it (∂∇/∂u).
	endToEnd bool
	zero     bool
	fixed    [][]float64
}

// loopFor returns the layer's loop with the ascent policy.
func loopFor(l *Layer) *loop {
	return &loop{adj: l.adj, ds: l.ds.d64, rows: l.ds.Rows(), n: l.ds.N(), k: l.cfg.K,
		gamma: l.cfg.Gamma(), beta: l.beta, rad: l.rad, temp: l.cfg.Temperature, zero: l.rad == 0}
}

// fusedState is the loop's workspace and what a run keeps: for the fused
// op's backward pass, every step's S and SF(F̄/τ) and the duals before and
// after the projection (nsf = K); otherwise one buffer of each, reused
// from step to step (a row's S is read before the next step's is written
// over it), so that the memory does not grow with K, or none where no
// softmax is taken (the zero policy).
type fusedState[T float32 | float64] struct {
	n, c     int
	ok       bool // a forward run completed (the op's)
	training bool // the phase of that run (InferenceOnly)
	memoOK   bool // out holds that run's output
	in, out  []T  // the op's: its input (always) and output (when buffers are kept)
	sf       [][]float64
	sfOK     []bool
	sfb      [][]float64
	u        [][]T // u[k]: the dual before step k (u[0] = 0); u[K] the last
	uZero    []bool
	ubar     [][]T
	xagg, f  []T
	gap      []T
	// backward scratch
	w, d, p, t []T
}

// reset sizes the state for n × c inputs, K steps, a dual of rows × c and
// nsf buffers of each softmax.
func (s *fusedState[T]) reset(n, c, k, rows, nsf int) {
	if s.n == n && s.c == c && len(s.sfOK) == k && len(s.sf) == nsf && (k == 0 || len(s.u[0]) == rows*c) {
		return
	}
	*s = fusedState[T]{n: n, c: c}
	s.sf, s.sfb = make([][]float64, nsf), make([][]float64, nsf)
	s.sfOK = make([]bool, k)
	for i := range s.sf {
		s.sf[i], s.sfb[i] = make([]float64, n*c), make([]float64, n*c)
	}
	s.u, s.uZero, s.ubar = make([][]T, k+1), make([]bool, k+1), make([][]T, k)
	for i := range s.u {
		s.u[i] = make([]T, rows*c)
	}
	for i := range s.ubar {
		s.ubar[i] = make([]T, rows*c)
	}
	s.xagg, s.f, s.gap = make([]T, n*c), make([]T, n*c), make([]T, rows*c)
}

// sfAt and sfbAt return step k's buffers of S and SF(F̄/τ) (nil without
// softmax buffers).
func (s *fusedState[T]) sfAt(k int) []float64 {
	if len(s.sf) == 0 {
		return nil
	}
	return s.sf[k%len(s.sf)]
}

func (s *fusedState[T]) sfbAt(k int) []float64 {
	if len(s.sfb) == 0 {
		return nil
	}
	return s.sfb[k%len(s.sfb)]
}

// descendRow writes the gradient step of steps 2 and 5 for one node,
// out = xagg − γ∇(f, u) with s = SF(f/τ) and a = (Δsᵀu)_i its row of U,
// scale = γ/τ: the term is rounded to the element type (into d) before
// the subtraction. out may be xagg.
func descendRow[T float32 | float64](out, xagg []T, s, a []float64, scale float64, d []T) {
	jvpRow(s, a, scale, d)
	for j, v := range d {
		out[j] = xagg[j] - v
	}
}

// runSteps runs p's K steps on x (n × c) into out, keeping in s what the
// backward pass needs when s.keep. training is InferenceOnly's training
// phase (u ≡ 0 whatever the policy). step, when not nil, is called with
// each step's input F^k (k = 0..K−1) before the step.
func runSteps[T float32 | float64](p *loop, s *fusedState[T], x, out []T, c int, training bool, step func(k int, f []T)) {
	n, rows, K := p.n, p.rows, p.k
	ds := p.ds
	invT := 1 / p.temp
	scale := p.gamma / p.temp // ∇_τ's factor γ/τ
	zero := p.zero || training
	ascent := !zero && p.fixed == nil
	endToEnd := p.endToEnd && ascent
	clear(s.sfOK)
	clear(s.u[0])
	s.uZero[0] = true
	cur := x                   // F_k
	two := rows == 1 && c == 2 // the binary attribute and two classes: scalar loops
	for k := 0; k < K; k++ {
		if step != nil {
			step(k, cur)
		}
		uk, ukZero := s.u[k], s.uZero[k]
		sf, sfb := s.sfAt(k), s.sfbAt(k)
		// S is needed in pass A when the dual is not zero (step 2) and, in
		// EndToEnd, by the backward pass whatever the dual (∂∇/∂u).
		// Pass B of the previous step may have taken it already.
		needSF := ascent && (!ukZero || endToEnd) && !s.sfOK[k]
		passA := func(lo, hi int) {
			if two {
				passA2(p, s, cur, uk, ukZero, needSF, ascent, k, lo, hi)
				return
			}
			if !ascent {
				return
			}
			a := make([]float64, c)
			d := make([]T, c)
			for i := lo; i < hi; i++ {
				xa := s.xagg[i*c : (i+1)*c : (i+1)*c]
				fi := cur[i*c : (i+1)*c : (i+1)*c]
				si := sf[i*c : (i+1)*c : (i+1)*c]
				if needSF {
					opkit.SoftmaxRow(fi, si, invT)
				}
				// Step 2: F̄ = X_agg − γ∇(F, u), into d (xagg where the
				// term is zero: F̄ = X_agg − 0 bit for bit).
				fb := xa
				if !ukZero && expandRow(ds, rows, n, i, uk, c, a) {
					descendRow(d, xa, si, a, scale, d)
					fb = d
				}
				opkit.SoftmaxRow(fb, sfb[i*c:(i+1)*c:(i+1)*c], invT)
			}
		}
		if p.gamma == 1 {
			copy(s.xagg, x)
			forBlocks(n, func(_, lo, hi int) { passA(lo, hi) })
		} else {
			pprop.Step(p.adj, s.xagg, cur, x, c, p.gamma, passA)
		}
		if needSF {
			s.sfOK[k] = true
		}
		dst := s.f
		if k == K-1 {
			dst = out
		}
		u1 := s.u[k+1]
		switch {
		case zero || (!ascent && p.fixed[k] == nil):
			// u ≡ 0 (or a zero recorded dual): F' = X_agg.
			copy(dst, s.xagg)
			clear(u1)
			s.uZero[k+1] = true
			cur = dst
			continue
		case ascent:
			// Steps 3 and 4: ū = u + β Δs SF(F̄/τ) (the first step's ū
			// is the sum alone), u' = proj(ū).
			gapKernel[T](ds, rows, n, s.gap, c, p.beta, sfb)
			ub := s.ubar[k]
			if k == 0 {
				copy(ub, s.gap)
			} else {
				for j, v := range uk {
					ub[j] = v + s.gap[j]
				}
			}
			projKernel(ub, u1, p.rad)
		default:
			for j, v := range p.fixed[k] {
				u1[j] = T(v)
			}
		}
		u1Zero := allZero(u1)
		s.uZero[k+1] = u1Zero
		// Pass B: step 5, F' = X_agg − γ∇(F, u'), and the next step's S.
		haveSF := s.sfOK[k]
		nextSF := ascent && k+1 < K && (!u1Zero || endToEnd)
		var sfNext []float64
		if nextSF {
			sfNext = s.sfAt(k + 1)
		}
		if u1Zero && !nextSF {
			copy(dst, s.xagg)
		} else {
			forBlocks(n, func(_, lo, hi int) {
				if two {
					passB2(p, s, cur, dst, u1, u1Zero, haveSF, nextSF, endToEnd, k, lo, hi)
					return
				}
				a := make([]float64, c)
				d := make([]T, c)
				for i := lo; i < hi; i++ {
					xa := s.xagg[i*c : (i+1)*c : (i+1)*c]
					fo := dst[i*c : (i+1)*c : (i+1)*c]
					si := sf[i*c : (i+1)*c : (i+1)*c]
					if !u1Zero && expandRow(ds, rows, n, i, u1, c, a) {
						if !haveSF {
							opkit.SoftmaxRow(cur[i*c:(i+1)*c:(i+1)*c], si, invT)
						}
						descendRow(fo, xa, si, a, scale, d)
					} else {
						if !haveSF && endToEnd {
							opkit.SoftmaxRow(cur[i*c:(i+1)*c:(i+1)*c], si, invT)
						}
						copy(fo, xa)
					}
					if nextSF {
						opkit.SoftmaxRow(fo, sfNext[i*c:(i+1)*c:(i+1)*c], invT)
					}
				}
			})
			if !haveSF && (!u1Zero || endToEnd) {
				s.sfOK[k] = true
			}
		}
		if nextSF {
			s.sfOK[k+1] = true
		}
		cur = dst
	}
}

// passA2 is pass A of runSteps for one row of Δs and two classes: the
// general loop's operations in the same order on scalars (as
// kernels.go's two-class kernels), so the results are the same bits
// (TestTwoClassPathsBitIdentical).
func passA2[T float32 | float64](p *loop, s *fusedState[T], cur, uk []T, ukZero, needSF, ascent bool, k, lo, hi int) {
	if !ascent {
		return
	}
	ds := p.ds
	invT, scale := 1/p.temp, p.gamma/p.temp
	sf, sfb := s.sfAt(k), s.sfbAt(k)
	var u0, u1 float64
	if !ukZero {
		u0, u1 = float64(uk[0]), float64(uk[1])
	}
	var d [2]T
	for i := lo; i < hi; i++ {
		xa := s.xagg[2*i : 2*i+2 : 2*i+2]
		var s0, s1 float64
		if needSF {
			s0, s1 = opkit.Softmax2(float64(cur[2*i]), float64(cur[2*i+1]), invT)
			sf[2*i], sf[2*i+1] = s0, s1
		} else {
			s0, s1 = sf[2*i], sf[2*i+1]
		}
		fb0, fb1 := xa[0], xa[1]
		if !ukZero {
			if a0, a1 := rowA2(ds[i], u0, u1); a0 != 0 || a1 != 0 {
				jvp2(s0, s1, a0, a1, scale, d[:])
				fb0, fb1 = xa[0]-d[0], xa[1]-d[1]
			}
		}
		sfb[2*i], sfb[2*i+1] = opkit.Softmax2(float64(fb0), float64(fb1), invT)
	}
}

// passB2 is pass B of runSteps for one row of Δs and two classes.
func passB2[T float32 | float64](p *loop, s *fusedState[T], cur, dst, u1 []T, u1Zero, haveSF, nextSF, endToEnd bool, k, lo, hi int) {
	ds := p.ds
	invT, scale := 1/p.temp, p.gamma/p.temp
	sf := s.sfAt(k)
	var sfNext []float64
	if nextSF {
		sfNext = s.sfAt(k + 1)
	}
	var v0, v1 float64
	if !u1Zero {
		v0, v1 = float64(u1[0]), float64(u1[1])
	}
	var d [2]T
	for i := lo; i < hi; i++ {
		xa := s.xagg[2*i : 2*i+2 : 2*i+2]
		fo := dst[2*i : 2*i+2 : 2*i+2]
		var a0, a1 float64
		if !u1Zero {
			a0, a1 = rowA2(ds[i], v0, v1)
		}
		if a0 != 0 || a1 != 0 {
			if !haveSF {
				sf[2*i], sf[2*i+1] = opkit.Softmax2(float64(cur[2*i]), float64(cur[2*i+1]), invT)
			}
			jvp2(sf[2*i], sf[2*i+1], a0, a1, scale, d[:])
			fo[0], fo[1] = xa[0]-d[0], xa[1]-d[1]
		} else {
			if !haveSF && endToEnd {
				sf[2*i], sf[2*i+1] = opkit.Softmax2(float64(cur[2*i]), float64(cur[2*i+1]), invT)
			}
			fo[0], fo[1] = xa[0], xa[1]
		}
		if nextSF {
			sfNext[2*i], sfNext[2*i+1] = opkit.Softmax2(float64(fo[0]), float64(fo[1]), invT)
		}
	}
}
