package fmp

import "github.com/fairmp/fairmp/internal/par"

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

// gapKernel: out = scale · Δs·S for the softmaxes sm (n × c, row i
// s_i = SF(F̄/τ)_i): the dual's steps 3, summed over fixed row blocks in
// block order. out is rows × c.
func gapKernel[T float32 | float64](ds []float64, rows, n int, out []T, c int, scale float64, sm []float64) {
	nb := numBlocks(n)
	part := make([]float64, nb*rows*c)
	if rows == 1 && c == 2 {
		gapParts2[T](ds, n, nil, part, sm)
	} else {
		gapParts[T](ds, rows, n, nil, part, c, sm)
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
// slice of part, where V_i = s_i (w == nil) or V_i = J(s_i)·W_i
// (w != nil), s_i the row of sm.
func gapParts[T float32 | float64](ds []float64, rows, n int, w []T, part []float64, c int, sm []float64) {
	forBlocks(n, func(b, lo, hi int) {
		p := part[b*rows*c : (b+1)*rows*c]
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
			s := sm[i*c : (i+1)*c : (i+1)*c]
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

// jvp2 is jvpRow for two classes.
func jvp2[T float32 | float64](s0, s1, v0, v1, scale float64, out []T) {
	t := 0.0
	t += s0 * v0
	t += s1 * v1
	out[0] = T(scale * s0 * (v0 - t))
	out[1] = T(scale * s1 * (v1 - t))
}

// gapParts2 is gapParts for one row of Δs and two classes.
func gapParts2[T float32 | float64](ds []float64, n int, w []T, part []float64, sm []float64) {
	forBlocks(n, func(b, lo, hi int) {
		p0, p1 := 0.0, 0.0
		for i := lo; i < hi; i++ {
			d := ds[i]
			if d == 0 {
				continue
			}
			v0, v1 := sm[2*i], sm[2*i+1]
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
