package fmp

import (
	"math"

	"github.com/fairmp/fairmp/internal/opkit"
	"github.com/fairmp/fairmp/internal/par"
)

// The kernels below compute, row by row, expressions of the row-softmax
// Jacobian J_i = diag(s_i) − s_i s_iᵀ, s_i = SF(F)_i. Arithmetic is done in
// float64 for both element types (float32 inputs are widened per row and
// the result rounded once), so float32 and float64 agree to float32
// rounding. Row blocks are fixed (independent of GOMAXPROCS) and partial
// sums are combined in block order: results are deterministic.

const blockRows = 2048

// forBlocks calls f(b, lo, hi) for the fixed row blocks of [0, n), in
// parallel.
func forBlocks(n int, f func(b, lo, hi int)) {
	nb := (n + blockRows - 1) / blockRows
	if nb <= 1 {
		f(0, 0, n)
		return
	}
	par.For(nb, func(b int) { f(b, b*blockRows, min((b+1)*blockRows, n)) })
}

func numBlocks(n int) int { return max(1, (n+blockRows-1)/blockRows) }

// expandRow writes a = Σ_r Δs[r,i]·u[r,:] (row i of U = Δsᵀu) and reports
// whether it is non-zero (every expression of the kernels is linear in a,
// so a zero row has a zero result).
func expandRow[T float32 | float64](ds []float64, rows, n, i int, u []T, c int, a []float64) bool {
	for j := range a {
		a[j] = 0
	}
	nz := false
	for r := 0; r < rows; r++ {
		d := ds[r*n+i]
		if d == 0 {
			continue
		}
		ur := u[r*c : (r+1)*c]
		for j := range a {
			a[j] += d * float64(ur[j])
		}
	}
	for _, v := range a {
		if v != 0 {
			nz = true
		}
	}
	return nz
}

// allZero reports whether every entry of u is zero.
func allZero[T float32 | float64](u []T) bool {
	for _, v := range u {
		if v != 0 {
			return false
		}
	}
	return true
}

// jvpRow writes J(s)·v = s ⊙ v − (s·v) s into out, scaled by scale.
func jvpRow[T float32 | float64](s, v []float64, scale float64, out []T) {
	t := 0.0
	for j := range s {
		t += s[j] * v[j]
	}
	for j := range s {
		out[j] = T(scale * s[j] * (v[j] - t))
	}
}

// gradKernel: out = scale · (U ⊙ S − rowsum(U ⊙ S) ⊙ S), U = Δsᵀu,
// S = SF(F·invT).
func gradKernel[T float32 | float64](ds []float64, rows, n int, f, u, out []T, c int, scale, invT float64, sm []float64) {
	if rows == 1 && c == 2 {
		gradKernel2(ds, n, f, u, out, scale, invT, sm)
		return
	}
	forBlocks(n, func(_, lo, hi int) {
		s := make([]float64, c)
		a := make([]float64, c)
		for i := lo; i < hi; i++ {
			o := out[i*c : (i+1)*c]
			if !expandRow(ds, rows, n, i, u, c, a) {
				clear(o)
				continue
			}
			s = softmaxOf(f, i, c, s, invT, sm)
			jvpRow(s, a, scale, o)
		}
	})
}

// gradBackKernel: the gradient with respect to F of ⟨W, ∇(F, u)⟩:
// out_i = scale · J(s_i)·h_i, h = W ⊙ U − rowsum(W ⊙ S) ⊙ U − rowsum(U ⊙ S) ⊙ W,
// S = SF(F·invT).
func gradBackKernel[T float32 | float64](ds []float64, rows, n int, f, u, w, out []T, c int, scale, invT float64, sm []float64) {
	if rows == 1 && c == 2 {
		gradBackKernel2(ds, n, f, u, w, out, scale, invT, sm)
		return
	}
	forBlocks(n, func(_, lo, hi int) {
		s := make([]float64, c)
		a := make([]float64, c)
		h := make([]float64, c)
		for i := lo; i < hi; i++ {
			o := out[i*c : (i+1)*c]
			if !expandRow(ds, rows, n, i, u, c, a) {
				clear(o)
				continue
			}
			s = softmaxOf(f, i, c, s, invT, sm)
			wi := w[i*c : (i+1)*c]
			ws, as := 0.0, 0.0
			for j := range s {
				ws += float64(wi[j]) * s[j]
				as += a[j] * s[j]
			}
			for j := range h {
				h[j] = float64(wi[j])*a[j] - ws*a[j] - as*float64(wi[j])
			}
			jvpRow(s, h, scale, o)
		}
	})
}

// gapKernel: out = scale · Δs·V where V_i = s_i (w == nil) or
// V_i = J(s_i)·W_i (w != nil), s_i = SF(F·invT)_i. out is rows × c.
func gapKernel[T float32 | float64](ds []float64, rows, n int, f, w, out []T, c int, scale, invT float64, sm []float64) {
	nb := numBlocks(n)
	part := make([]float64, nb*rows*c)
	if rows == 1 && c == 2 {
		gapParts2(ds, n, f, w, part, invT, sm)
	} else {
		gapParts(ds, rows, n, f, w, part, c, invT, sm)
	}
	for k := range out {
		sum := 0.0
		for b := 0; b < nb; b++ {
			sum += part[b*rows*c+k]
		}
		out[k] = T(scale * sum)
	}
}

// gapParts writes each row block's Σ_i Δs[r,i]·V_i into its rows × c
// slice of part (gapKernel's partial sums).
func gapParts[T float32 | float64](ds []float64, rows, n int, f, w []T, part []float64, c int, invT float64, sm []float64) {
	forBlocks(n, func(b, lo, hi int) {
		p := part[b*rows*c : (b+1)*rows*c]
		s := make([]float64, c)
		v := make([]float64, c)
		for i := lo; i < hi; i++ {
			any := false
			for r := 0; r < rows; r++ {
				if ds[r*n+i] != 0 {
					any = true
					break
				}
			}
			if !any {
				continue
			}
			s = softmaxOf(f, i, c, s, invT, sm)
			vi := s
			if w != nil {
				wi := w[i*c : (i+1)*c]
				t := 0.0
				for j := range s {
					t += s[j] * float64(wi[j])
				}
				for j := range s {
					v[j] = s[j] * (float64(wi[j]) - t)
				}
				vi = v
			}
			for r := 0; r < rows; r++ {
				d := ds[r*n+i]
				if d == 0 {
					continue
				}
				pr := p[r*c : (r+1)*c]
				for j := range pr {
					pr[j] += d * vi[j]
				}
			}
		}
	})
}

// The kernels for the binary attribute (one row of Δs) and two classes,
// FMP's common case: the general kernels' operations in the same order,
// on scalars instead of row slices, so the results are bit-identical
// (TestKernels2BitIdentical) and the loops carry no per-row slices.

// rowA2 is expandRow for one row of Δs and two classes: a = Δs_i·u.
func rowA2(d, u0, u1 float64) (a0, a1 float64) {
	if d != 0 {
		a0 += d * u0
		a1 += d * u1
	}
	return a0, a1
}

// softmax2Of is softmaxOf for two classes.
func softmax2Of[T float32 | float64](f []T, i int, invT float64, sm []float64) (s0, s1 float64) {
	if sm != nil {
		return sm[2*i], sm[2*i+1]
	}
	return opkit.Softmax2(float64(f[2*i]), float64(f[2*i+1]), invT)
}

// jvp2 is jvpRow for two classes.
func jvp2[T float32 | float64](s0, s1, v0, v1, scale float64, out []T) {
	t := 0.0
	t += s0 * v0
	t += s1 * v1
	out[0] = T(scale * s0 * (v0 - t))
	out[1] = T(scale * s1 * (v1 - t))
}

func gradKernel2[T float32 | float64](ds []float64, n int, f, u, out []T, scale, invT float64, sm []float64) {
	u0, u1 := float64(u[0]), float64(u[1])
	forBlocks(n, func(_, lo, hi int) {
		for i := lo; i < hi; i++ {
			o := out[2*i : 2*i+2 : 2*i+2]
			a0, a1 := rowA2(ds[i], u0, u1)
			if a0 == 0 && a1 == 0 {
				o[0], o[1] = 0, 0
				continue
			}
			s0, s1 := softmax2Of(f, i, invT, sm)
			jvp2(s0, s1, a0, a1, scale, o)
		}
	})
}

func gradBackKernel2[T float32 | float64](ds []float64, n int, f, u, w, out []T, scale, invT float64, sm []float64) {
	u0, u1 := float64(u[0]), float64(u[1])
	forBlocks(n, func(_, lo, hi int) {
		for i := lo; i < hi; i++ {
			o := out[2*i : 2*i+2 : 2*i+2]
			a0, a1 := rowA2(ds[i], u0, u1)
			if a0 == 0 && a1 == 0 {
				o[0], o[1] = 0, 0
				continue
			}
			s0, s1 := softmax2Of(f, i, invT, sm)
			w0, w1 := float64(w[2*i]), float64(w[2*i+1])
			ws, as := 0.0, 0.0
			ws += w0 * s0
			as += a0 * s0
			ws += w1 * s1
			as += a1 * s1
			h0 := w0*a0 - ws*a0 - as*w0
			h1 := w1*a1 - ws*a1 - as*w1
			jvp2(s0, s1, h0, h1, scale, o)
		}
	})
}

func gapParts2[T float32 | float64](ds []float64, n int, f, w []T, part []float64, invT float64, sm []float64) {
	forBlocks(n, func(b, lo, hi int) {
		p0, p1 := 0.0, 0.0
		for i := lo; i < hi; i++ {
			d := ds[i]
			if d == 0 {
				continue
			}
			v0, v1 := softmax2Of(f, i, invT, sm)
			if w != nil {
				w0, w1 := float64(w[2*i]), float64(w[2*i+1])
				t := 0.0
				t += v0 * w0
				t += v1 * w1
				v0, v1 = v0*(w0-t), v1*(w1-t)
			}
			p0 += d * v0
			p1 += d * v1
		}
		part[2*b], part[2*b+1] = p0, p1
	})
}

// projKernel: out = sign(x) ⊙ min(|x|, r).
func projKernel[T float32 | float64](x, out []T, r float64) {
	rt := T(r)
	for i, v := range x {
		switch {
		case v > rt:
			out[i] = rt
		case v < -rt:
			out[i] = -rt
		default:
			out[i] = v
		}
	}
}

// projMaskKernel: out = w where |x| < r, else 0.
func projMaskKernel[T float32 | float64](x, w, out []T, r float64) {
	rt := T(r)
	for i, v := range x {
		if v < rt && v > -rt {
			out[i] = w[i]
		} else {
			out[i] = 0
		}
	}
}

// softmaxOf returns row i of SF(F·invT): the row of sm when sm holds the
// whole matrix's (a softmaxCache's), else s filled by opkit.SoftmaxRow.
func softmaxOf[T float32 | float64](f []T, i, c int, s []float64, invT float64, sm []float64) []float64 {
	if sm != nil {
		return sm[i*c : (i+1)*c : (i+1)*c]
	}
	opkit.SoftmaxRow(f[i*c:(i+1)*c], s[:c], invT)
	return s[:c]
}

// softmaxCache keeps SF(F·invT) of the last F that one family of ops saw
// (an op and the ops its SymDiff builds on the same first input: FairGrad
// forward, its F-gradient and its u-gradient all read the softmax of the
// same F). The input's bits are kept and compared, so a hit is the same
// computation: every row by opkit.SoftmaxRow, as the kernels would. Ops
// run one at a time, as the machine runs them.
type softmaxCache struct {
	in32 []float32
	in64 []float64
	invT float64
	c    int
	s    []float64
	ok   bool
}

// get returns SF(f·invT) for the n × c matrix f, computed or kept.
func get[T float32 | float64](sc *softmaxCache, f []T, c int, invT float64) []float64 {
	if sc == nil {
		return nil
	}
	if sc.ok && sc.invT == invT && sc.c == c && sameBits(sc, f) {
		return sc.s
	}
	n := len(f) / c
	if cap(sc.s) < len(f) {
		sc.s = make([]float64, len(f))
	}
	sc.s = sc.s[:len(f)]
	out := sc.s
	forBlocks(n, func(_, lo, hi int) {
		for i := lo; i < hi; i++ {
			opkit.SoftmaxRow(f[i*c:(i+1)*c], out[i*c:(i+1)*c], invT)
		}
	})
	switch x := any(f).(type) {
	case []float32:
		sc.in32 = append(sc.in32[:0], x...)
		sc.in64 = sc.in64[:0]
	case []float64:
		sc.in64 = append(sc.in64[:0], x...)
		sc.in32 = sc.in32[:0]
	}
	sc.invT, sc.c, sc.ok = invT, c, true
	return sc.s
}

func sameBits[T float32 | float64](sc *softmaxCache, f []T) bool {
	switch x := any(f).(type) {
	case []float32:
		if len(sc.in32) != len(x) {
			return false
		}
		for i, v := range x {
			if math.Float32bits(v) != math.Float32bits(sc.in32[i]) {
				return false
			}
		}
		return true
	case []float64:
		if len(sc.in64) != len(x) {
			return false
		}
		for i, v := range x {
			if math.Float64bits(v) != math.Float64bits(sc.in64[i]) {
				return false
			}
		}
		return true
	}
	return false
}

// release drops the kept matrices.
func (sc *softmaxCache) release() {
	if sc != nil {
		*sc = softmaxCache{}
	}
}
