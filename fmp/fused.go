package fmp

import (
	"fmt"
	"math"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/fairmp/fairmp/graph"
	"github.com/fairmp/fairmp/internal/opkit"
	"github.com/fairmp/fairmp/layers"
)

// steps is FMP's K steps at λf > 0 (Layer.Forward) as one gorgonia op,
// stepsSpec's (its parameters and the state its runs keep), with a
// hand-written backward (stepsBackSpec), as the λf = 0 path is one
// op (internal/pprop). Its forward is the package's one loop (runSteps,
// loop.go): a step is two passes over the rows. Pass A runs on each
// block of rows right after the sparse product computes it: X_agg, the
// softmax S = SF(F/τ) when a dual is about, F̄ = X_agg − γ∇(F, u) and
// SF(F̄/τ). Then the groups' sums Δs·SF(F̄/τ) (blocks of 2048 rows added
// in block order), the dual ascent and the l∞ projection on the small
// R × c dual. Pass B writes F' = X_agg − γ∇(F, u') with the kept S and
// takes the next step's softmax of F' while the row is in cache.
//
// The forward keeps, per step, S and SF(F̄/τ) (float64) and the duals
// before and after the projection: the backward needs no softmax, and
// one product with Ãᵀ per step. Like the propagation op, the op keeps its
// last input and output: an evaluation pass and the next training step
// see the same logits when the backbone has no dropout, and the second
// run copies the output.
type steps struct {
	loop      *loop // the forward loop's setting (ascent, endToEnd = !constDual)
	adj       *graph.Matrix
	ds        *deltaS
	k         int
	gamma     float64
	beta, rad float64
	temp      float64
	constDual bool          // ConstantDual and InferenceOnly: no gradient through the dual
	phase     *layers.Phase // InferenceOnly: u ≡ 0 while the phase is training
	s32       *fusedState[float32]
	s64       *fusedState[float64]
}

// stepsOp is the op of stepsSpec: its parameters and state are a *steps.
type stepsOp = opkit.Op[*steps]

func newStepsOp(l *Layer, constDual bool, phase *layers.Phase) *stepsOp {
	p := loopFor(l)
	p.endToEnd = !constDual
	return opkit.New(stepsSpec, &steps{loop: p, adj: l.adj, ds: l.ds, k: l.cfg.K, gamma: l.cfg.Gamma(), beta: l.beta, rad: l.rad,
		temp: l.cfg.Temperature, constDual: constDual, phase: phase})
}

var stepsSpec = &opkit.Spec[*steps]{
	ID:    "fairmp.fmp.Steps",
	Name:  (*steps).String,
	Sig:   func(*steps) opkit.Sig { return opkit.Mats(1) },
	Shape: func(p *steps, in []tensor.Shape) (tensor.Shape, error) { return p.shape(in[0]) },
	Hash:  (*steps).hash,
	F32:   stepsFwd[float32],
	F64:   stepsFwd[float64],
	Grad: func(op *stepsOp, inputs G.Nodes, output, grad *G.Node) (G.Nodes, error) {
		dx, err := opkit.Apply(stepsBackSpec, stepsBack{fwd: op.P, at: op.P.adj.Transpose()}, inputs[0], grad)
		if err != nil {
			return nil, err
		}
		return G.Nodes{dx}, nil
	},
	Keep:    true,
	Release: func(p *steps) { p.s32, p.s64 = nil, nil },
}

func (p *steps) String() string {
	s := fmt.Sprintf("FMPSteps(A#%d, Δs#%d, K=%d, γ=%g, β=%g, r=%g, τ=%g, constDual=%v", p.adj.ID(), p.ds.ID(), p.k, p.gamma, p.beta, p.rad, p.temp, p.constDual)
	if p.phase != nil {
		s += fmt.Sprintf(", off while training %p", p.phase)
	}
	return s + ")"
}

// hash writes the fields that change the steps' result.
func (p *steps) hash(h opkit.Hasher) {
	h.U64(p.adj.ID(), p.ds.ID())
	h.Int(p.k)
	h.F64(p.gamma, p.beta, p.rad, p.temp)
	h.Bool(p.constDual)
	h.Str(fmt.Sprintf("%p", p.phase))
}

// shape checks an input shape, n × c with c ≥ 2, and returns it.
func (p *steps) shape(s tensor.Shape) (tensor.Shape, error) {
	if s[0] != p.ds.N() || s[1] < 2 {
		return nil, fmt.Errorf("input shape %v, want (%d, c ≥ 2)", s, p.ds.N())
	}
	return s, nil
}

// state returns the steps' state for element type T, made when missing.
func state[T float32 | float64](p *steps) *fusedState[T] {
	var s any
	switch any(T(0)).(type) {
	case float64:
		if p.s64 == nil {
			p.s64 = &fusedState[float64]{}
		}
		s = p.s64
	default:
		if p.s32 == nil {
			p.s32 = &fusedState[float32]{}
		}
		s = p.s32
	}
	return s.(*fusedState[T])
}

func stepsFwd[T float32 | float64](p *steps, a opkit.Args[T]) error {
	fusedForward(p, state[T](p), a.In[0], a.Out, a.Shape[0][1], a.KeepBuffers)
	return nil
}

// fusedForward runs the K steps on x into out (runSteps), keeping what the
// backward needs in s, or copies the kept output of the last run when x
// and the phase are that run's. The output is kept (and copied) only when
// keep is set: the op keeps buffers (opkit.Args.KeepBuffers).
func fusedForward[T float32 | float64](o *steps, s *fusedState[T], x, out []T, c int, keep bool) {
	n, rows, K := o.ds.N(), o.ds.Rows(), o.k
	training := o.phase.Training() // InferenceOnly's training passes: u ≡ 0
	if s.ok && s.memoOK && keep && s.training == training && s.n == n && s.c == c && sameBitsT(x, s.in) {
		copy(out, s.out)
		return
	}
	s.reset(n, c, K, rows, K)
	s.ok, s.memoOK = false, false
	if len(s.in) != len(x) {
		s.in = make([]T, len(x))
	}
	copy(s.in, x)
	runSteps(o.loop, s, x, out, c, training, nil)
	s.ok, s.training = true, training
	if keep {
		if len(s.out) != len(out) {
			s.out = make([]T, len(out))
		}
		copy(s.out, out)
		s.memoOK = true
	}
}

// mulThenT is graph.Matrix.MulDenseThen32/64 for either element type.
func mulThenT[T float32 | float64](a *graph.Matrix, out, x []T, c int, then func(lo, hi int)) {
	switch o := any(out).(type) {
	case []float64:
		a.MulDenseThen64(o, any(x).([]float64), c, then)
	case []float32:
		a.MulDenseThen32(o, any(x).([]float32), c, then)
	}
}

// sameBitsT reports whether a and b hold the same bits.
func sameBitsT[T float32 | float64](a, b []T) bool {
	if len(a) != len(b) {
		return false
	}
	switch x := any(a).(type) {
	case []float64:
		y := any(b).([]float64)
		for i, v := range x {
			if math.Float64bits(v) != math.Float64bits(y[i]) {
				return false
			}
		}
	case []float32:
		y := any(b).([]float32)
		for i, v := range x {
			if math.Float32bits(v) != math.Float32bits(y[i]) {
				return false
			}
		}
	}
	return true
}

// stepsBack is the parameters of stepsBackSpec, stepsSpec's gradient
// with respect to X: inputs X and dY. It reads the state the forward run kept (recomputing it if X or the
// phase changed since). Per step, in reverse: the dual's gradient
// (EndToEnd only: ∂⟨W, ∇(F, u')⟩/∂u' summed over the nodes, masked by the
// projection), then one pass over the rows for F̄'s, F's and X_agg's
// gradients, then the product with Ãᵀ. It is checked against central
// differences of a dense reference (TestStepsOpFiniteDifferences).
type stepsBack struct {
	fwd *steps
	at  *graph.Matrix // Ãᵀ
}

// stepsBackSpec is never differentiated (no Grad).
var stepsBackSpec = &opkit.Spec[stepsBack]{
	ID:   "fairmp.fmp.StepsBack",
	Name: func(p stepsBack) string { return "Back" + p.fwd.String() },
	Sig:  func(stepsBack) opkit.Sig { return opkit.Mats(2) },
	Shape: func(p stepsBack, in []tensor.Shape) (tensor.Shape, error) {
		if !in[1].Eq(in[0]) {
			return nil, fmt.Errorf("input shapes %v and %v, want (%d, c ≥ 2) twice", in[0], in[1], p.fwd.ds.N())
		}
		return p.fwd.shape(in[0])
	},
	Hash: func(p stepsBack, h opkit.Hasher) { p.fwd.hash(h) },
	F32:  stepsBackFwd[float32],
	F64:  stepsBackFwd[float64],
	Keep: true,
}

func stepsBackFwd[T float32 | float64](p stepsBack, a opkit.Args[T]) error {
	fusedBackward(p, state[T](p.fwd), a.In[0], a.In[1], a.Out, a.Shape[0][1], a.KeepBuffers)
	return nil
}

// fusedBackward writes dX for x and dY = dy into dx (keep: the op keeps
// buffers, for the forward run it may redo).
func fusedBackward[T float32 | float64](o stepsBack, s *fusedState[T], x, dy, dx []T, c int, keep bool) {
	f := o.fwd
	n, rows, K := f.ds.N(), f.ds.Rows(), f.k
	training := f.phase.Training()
	if !s.ok || s.training != training || s.n != n || s.c != c || !sameBitsT(x, s.in) {
		// Another run came between the forward pass and this one: redo it.
		fusedForward(f, s, x, make([]T, n*c), c, keep)
	}
	if len(s.w) != n*c {
		s.w, s.d, s.p, s.t = make([]T, n*c), make([]T, n*c), make([]T, n*c), make([]T, n*c)
	}
	ds := f.ds.d64
	gamma := f.gamma
	gT, cmT := T(gamma), T(1-gamma)
	scale := gamma / f.temp                // ∇_τ's factor
	backScale := gamma / (f.temp * f.temp) // ∂∇_τ/∂F's factor
	betaScale := f.beta / f.temp           // d/dF̄ of β Δs SF(F̄/τ) is β∇_τ
	endToEnd := !f.constDual && !training
	rc := rows * c
	vu := make([]float64, rc) // ∂L/∂u_{k+1}
	dg := make([]float64, rc) // ∂L/∂ū_k
	nb := numBlocks(n)
	part := make([]float64, nb*rc)
	w := s.w
	copy(w, dy)
	clear(dx)
	for k := K - 1; k >= 0; k-- {
		sf, sfb := s.sf[k], s.sfb[k]
		u1, u1Zero := s.u[k+1], s.uZero[k+1] || training
		uk, ukZero := s.u[k], s.uZero[k] || training
		dual := endToEnd // whether F̄ gets a gradient through the dual
		if dual {
			// ∂L/∂u' += (γ/τ) Δs·J(S)(−W); ∂L/∂ū = the projection's mask.
			clear(part)
			if rows == 1 && c == 2 {
				gapParts2(ds, n, w, part, sf)
			} else {
				gapParts(ds, rows, n, w, part, c, sf)
			}
			rt := T(f.rad)
			nz := false
			for j := range vu {
				sum := 0.0
				for b := 0; b < nb; b++ {
					sum += part[b*rc+j]
				}
				v := vu[j] - scale*sum
				ub := s.ubar[k][j]
				if ub < rt && ub > -rt {
					dg[j] = v
					nz = nz || v != 0
				} else {
					dg[j] = 0
				}
			}
			dual = nz
		}
		prevDual := dual && k > 0
		if prevDual {
			clear(part)
		}
		forBlocks(n, func(b, lo, hi int) {
			var pr []float64
			if prevDual {
				pr = part[b*rc : (b+1)*rc]
			}
			if rows == 1 && c == 2 {
				back2(o, s, w, dx, dg, u1, uk, u1Zero, ukZero, dual, k, pr, lo, hi)
				return
			}
			a := make([]float64, c)
			dfb := make([]float64, c)
			dd := make([]float64, c)
			h := make([]float64, c)
			for i := lo; i < hi; i++ {
				wi := w[i*c : (i+1)*c : (i+1)*c]
				dfbNZ := false
				if dual && expandRow(ds, rows, n, i, dg, c, a) {
					jvpRow(sfb[i*c:(i+1)*c:(i+1)*c], a, betaScale, dfb)
					dfbNZ = true
				}
				clear(dd)
				si := sf[i*c : (i+1)*c : (i+1)*c]
				if !u1Zero && expandRow(ds, rows, n, i, u1, c, a) {
					gradBackRow(si, a, wi, h)
					for j := range dd {
						dd[j] -= backScale * si[j] * h[j]
					}
				}
				if dfbNZ && k > 0 {
					if !ukZero && expandRow(ds, rows, n, i, uk, c, a) {
						gradBackRow(si, a, dfb, h)
						for j := range dd {
							dd[j] -= backScale * si[j] * h[j]
						}
					}
					t := 0.0
					for j := range si {
						t += si[j] * dfb[j]
					}
					for r := 0; r < rows; r++ {
						d := ds[r*n+i]
						if d == 0 {
							continue
						}
						p := pr[r*c : (r+1)*c]
						for j := range p {
							p[j] += d * si[j] * (dfb[j] - t)
						}
					}
				}
				dxi, ti, di := dx[i*c:(i+1)*c:(i+1)*c], s.t[i*c:(i+1)*c:(i+1)*c], s.d[i*c:(i+1)*c:(i+1)*c]
				for j := range dxi {
					xa := float64(wi[j])
					if dfbNZ {
						xa += dfb[j]
					}
					if gamma == 1 {
						dxi[j] += T(xa)
					} else {
						dxi[j] += gT * T(xa)
						ti[j] = cmT * T(xa)
					}
					di[j] = T(dd[j])
				}
			}
		})
		// ∂L/∂u_k: ū_k = u_k + g passes ∂L/∂ū_k, and step 2's ∇(F, u_k)
		// adds (γ/τ) Δs·J(S)(−∂L/∂F̄).
		if prevDual {
			for j := range vu {
				sum := 0.0
				for b := 0; b < nb; b++ {
					sum += part[b*rc+j]
				}
				vu[j] = dg[j] - scale*sum
			}
		} else {
			clear(vu)
		}
		if gamma == 1 {
			w, s.d = s.d, w
			continue
		}
		d := s.d
		mulThenT(o.at, s.p, s.t, c, func(lo, hi int) {
			wb, db, pb := w[lo*c:hi*c], d[lo*c:hi*c], s.p[lo*c:hi*c]
			db, pb = db[:len(wb)], pb[:len(wb)]
			for j := range wb {
				wb[j] = db[j] + pb[j]
			}
		})
	}
	for j, v := range w {
		dx[j] += v
	}
	s.w = w
}

// gradBackRow writes h = w⊙a − (w·s) a − (a·s) w, the vector whose
// J(s)·h is row i of ∂⟨W, ∇(F, u)⟩/∂F (up to the scale; see
// gradBackKernel).
func gradBackRow[T float32 | float64](s, a []float64, w []T, h []float64) {
	ws, as := 0.0, 0.0
	for j := range s {
		ws += float64(w[j]) * s[j]
		as += a[j] * s[j]
	}
	t := 0.0
	for j := range h {
		h[j] = float64(w[j])*a[j] - ws*a[j] - as*float64(w[j])
		t += s[j] * h[j]
	}
	for j := range h {
		h[j] -= t
	}
}

// back2 is the row pass of fusedBackward for one row of Δs and two
// classes (pr: the block's partial sums of Δs·J(S)·∂L/∂F̄, nil when not
// needed).
func back2[T float32 | float64](o stepsBack, s *fusedState[T], w, dx []T, dg []float64, u1, uk []T, u1Zero, ukZero, dual bool, k int, pr []float64, lo, hi int) {
	f := o.fwd
	ds := f.ds.d64
	gamma := f.gamma
	gT, cmT := T(gamma), T(1-gamma)
	backScale := gamma / (f.temp * f.temp)
	betaScale := f.beta / f.temp
	sf, sfb := s.sf[k], s.sfb[k]
	var g0, g1, v0, v1, q0, q1 float64
	if dual {
		g0, g1 = dg[0], dg[1]
	}
	if !u1Zero {
		v0, v1 = float64(u1[0]), float64(u1[1])
	}
	if !ukZero {
		q0, q1 = float64(uk[0]), float64(uk[1])
	}
	var p0, p1 float64
	for i := lo; i < hi; i++ {
		di := ds[i]
		w0, w1 := float64(w[2*i]), float64(w[2*i+1])
		s0, s1 := sf[2*i], sf[2*i+1]
		var b0, b1, dd0, dd1 float64 // ∂L/∂F̄ and the fairness part of ∂L/∂F
		bNZ := false
		if dual && di != 0 {
			if a0, a1 := di*g0, di*g1; a0 != 0 || a1 != 0 {
				t0, t1 := sfb[2*i], sfb[2*i+1]
				t := t0*a0 + t1*a1
				b0, b1 = betaScale*t0*(a0-t), betaScale*t1*(a1-t)
				bNZ = true
			}
		}
		if !u1Zero && di != 0 {
			if a0, a1 := di*v0, di*v1; a0 != 0 || a1 != 0 {
				h0, h1 := gradBack2(s0, s1, a0, a1, w0, w1)
				dd0 -= backScale * s0 * h0
				dd1 -= backScale * s1 * h1
			}
		}
		if bNZ && k > 0 {
			if !ukZero {
				if a0, a1 := di*q0, di*q1; a0 != 0 || a1 != 0 {
					h0, h1 := gradBack2(s0, s1, a0, a1, b0, b1)
					dd0 -= backScale * s0 * h0
					dd1 -= backScale * s1 * h1
				}
			}
			t := s0*b0 + s1*b1
			p0 += di * s0 * (b0 - t)
			p1 += di * s1 * (b1 - t)
		}
		x0, x1 := w0+b0, w1+b1
		if gamma == 1 {
			dx[2*i] += T(x0)
			dx[2*i+1] += T(x1)
		} else {
			dx[2*i] += gT * T(x0)
			dx[2*i+1] += gT * T(x1)
			s.t[2*i], s.t[2*i+1] = cmT*T(x0), cmT*T(x1)
		}
		s.d[2*i], s.d[2*i+1] = T(dd0), T(dd1)
	}
	if pr != nil {
		pr[0], pr[1] = p0, p1
	}
}

// gradBack2 is gradBackRow for two classes.
func gradBack2(s0, s1, a0, a1, w0, w1 float64) (h0, h1 float64) {
	ws, as := w0*s0+w1*s1, a0*s0+a1*s1
	h0 = w0*a0 - ws*a0 - as*w0
	h1 = w1*a1 - ws*a1 - as*w1
	t := s0*h0 + s1*h1
	return h0 - t, h1 - t
}
