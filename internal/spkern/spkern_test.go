package spkern

import (
	"math"
	"math/rand"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRowStrip32 checks both widths against a plain loop, including rows
// with more than 8 non-zeros (the prefetching loop) and an unsupported
// width.
func TestRowStrip32(t *testing.T) {
	forEachPath(t, func(t *testing.T, _ *kernelSet) {
		const ldx, rows = 70, 40
		x := make([]float32, rows*ldx)
		for i := range x {
			x[i] = float32(math.Sin(float64(i)))
		}
		for _, nnz := range []int{1, 3, 8, 9, 25} {
			idx := make([]int32, nnz)
			val := make([]float32, nnz)
			for p := range idx {
				idx[p] = int32((p*7 + 3) % rows)
				val[p] = float32(p) - 2.5
			}
			for _, w := range []int{64, 8} {
				for _, off := range []int{0, 6} {
					out := make([]float32, w)
					if !RowStrip32(w, idx, val, x[off:], ldx, out) {
						t.Fatalf("width %d: kernel not run", w)
					}
					for c := 0; c < w; c++ {
						var want float64
						for p, j := range idx {
							want += float64(val[p]) * float64(x[int(j)*ldx+off+c])
						}
						require.InDelta(t, want, float64(out[c]), 1e-4*(1+math.Abs(want)), "nnz %d width %d offset %d: out[%d]", nnz, w, off, c)
					}
				}
			}
		}
		assert.False(t, RowStrip32(16, []int32{0}, []float32{1}, x, ldx, make([]float32, 16)), "width 16 reported as run")
	})
}

// TestHeads4x16 checks the multi-head aggregation (plain and indexed
// weights) and the per-head dot products against plain loops, on every
// kernel path.
func TestHeads4x16(t *testing.T) {
	forEachPath(t, func(t *testing.T, _ *kernelSet) {
		const ldx, rows = 70, 30
		x := make([]float32, rows*ldx)
		for i := range x {
			x[i] = float32(math.Cos(float64(i) * 0.37))
		}
		d := make([]float32, 64)
		for i := range d {
			d[i] = float32(i%9) - 4
		}
		for _, nnz := range []int{0, 1, 5, 17} {
			idx := make([]int32, nnz)
			arow := make([]int32, nnz)
			alpha := make([]float32, 4*nnz)
			for p := range idx {
				idx[p] = int32((p*11 + 2) % rows)
				arow[p] = int32(nnz - 1 - p)
			}
			for i := range alpha {
				alpha[i] = float32(i%7)*0.25 - 0.5
			}
			for _, indexed := range []bool{false, true} {
				out := make([]float32, 64)
				for i := range out {
					out[i] = float32(math.NaN())
				}
				var ar []int32
				if indexed {
					ar = arow
				}
				if !Heads4x16(idx, ar, alpha, x[3:], ldx, out) {
					t.Fatal("kernel not run")
				}
				for k := 0; k < 4; k++ {
					for q := 0; q < 16; q++ {
						var want float64
						for p, j := range idx {
							r := p
							if indexed {
								r = int(arow[p])
							}
							want += float64(alpha[4*r+k]) * float64(x[int(j)*ldx+3+16*k+q])
						}
						require.InDelta(t, want, float64(out[16*k+q]), 1e-5*(1+math.Abs(want)), "nnz %d indexed %v: out[%d]", nnz, indexed, 16*k+q)
					}
				}
			}
			dots := make([]float32, 4*nnz)
			if !Heads4x16Dot(idx, x[3:], ldx, d, dots, 0.5) {
				t.Fatal("dot kernel not run")
			}
			for p, j := range idx {
				for k := 0; k < 4; k++ {
					var want float64
					for q := 0; q < 16; q++ {
						want += float64(x[int(j)*ldx+3+16*k+q]) * float64(d[16*k+q])
					}
					want *= 0.5
					require.InDelta(t, want, float64(dots[4*p+k]), 1e-5*(1+math.Abs(want)), "nnz %d: dot[%d][%d]", nnz, p, k)
				}
			}
		}
	})
}

// TestRowStrip64 checks both float64 widths against the plain Go loop,
// bit for bit (the kernels multiply and add without fusing, in index
// order), including rows with more than 8 non-zeros (the prefetching
// loop), an offset start column and an unsupported width.
func TestRowStrip64(t *testing.T) {
	forEachPath(t, func(t *testing.T, _ *kernelSet) {
		const ldx, rows = 70, 40
		x := make([]float64, rows*ldx)
		for i := range x {
			x[i] = math.Sin(float64(i)) * math.Exp(float64(i%13)-6)
		}
		for _, nnz := range []int{1, 3, 8, 9, 25} {
			idx := make([]int32, nnz)
			val := make([]float64, nnz)
			for p := range idx {
				idx[p] = int32((p*7 + 3) % rows)
				val[p] = float64(p)/3 - 2.5
			}
			for _, w := range []int{32, 8} {
				for _, off := range []int{0, 6} {
					out := make([]float64, w)
					if !RowStrip64(w, idx, val, x[off:], ldx, out) {
						t.Fatalf("width %d: kernel not run", w)
					}
					for c := 0; c < w; c++ {
						var want float64
						for p, j := range idx {
							want += float64(val[p] * x[int(j)*ldx+off+c]) // the conversion forbids fusing
						}
						require.Equal(t, math.Float64bits(want), math.Float64bits(out[c]), "nnz %d width %d offset %d: out[%d] = %v, want %v", nnz, w, off, c, out[c], want)
					}
				}
			}
		}
		assert.False(t, RowStrip64(16, []int32{0}, []float64{1}, x, ldx, make([]float64, 16)), "width 16 reported as run")
		assert.False(t, RowStrip64(32, nil, nil, x, ldx, make([]float64, 32)), "an empty row reported as run")
	})
}

// TestGATAggregate64BitIdentical checks the float64 aggregation kernels
// (GATAggregate, its transpose and the per-edge dot products GATEdgeDot,
// at 4 heads of 16, concatenated) against
// the plain loops they replace, bit for bit, on a random graph with
// self-loops, an isolated node and weights of wide magnitudes.
func TestGATAggregate64BitIdentical(t *testing.T) {
	forEachPath(t, func(t *testing.T, _ *kernelSet) {
		const n, heads, f = 60, 4, 16
		rng := rand.New(rand.NewSource(3))
		nb := make([][]int32, n)
		for i := 0; i < n; i++ {
			for j := i + 1; j < n; j++ {
				if i != 7 && j != 7 && rng.Float64() < 0.15 {
					nb[i], nb[j] = append(nb[i], int32(j)), append(nb[j], int32(i))
				}
			}
		}
		for i := range nb {
			slices.Sort(nb[i])
		}
		c := NewGATCSR(n, func(i int) []int32 { return nb[i] }, true)
		wide := func(k int) []float64 {
			v := make([]float64, k)
			for i := range v {
				v[i] = rng.NormFloat64() * math.Exp(3*rng.NormFloat64())
			}
			return v
		}
		alpha, h, dout := wide(heads*c.Edges()), wide(n*heads*f), wide(n*heads*f)
		out := make([]float64, n*heads*f)
		GATAggregate(c, alpha, h, heads, f, false, out)
		dh := make([]float64, n*heads*f)
		GATAggregateT(c, alpha, dout, heads, f, false, dh)
		want := make([]float64, n*heads*f)
		wantT := make([]float64, n*heads*f)
		for i := 0; i < n; i++ {
			for p := c.Indptr[i]; p < c.Indptr[i+1]; p++ {
				j := int(c.Src[p])
				for k := 0; k < heads; k++ {
					for q := k * f; q < (k+1)*f; q++ {
						want[i*64+q] += float64(alpha[p*heads+k] * h[j*64+q]) // the conversion forbids fusing
					}
				}
			}
		}
		for j := 0; j < n; j++ {
			for q := c.Indptr[j]; q < c.Indptr[j+1]; q++ {
				i, p := int(c.Src[q]), int(c.Rev[q])
				for k := 0; k < heads; k++ {
					for r := k * f; r < (k+1)*f; r++ {
						wantT[j*64+r] += float64(alpha[p*heads+k] * dout[i*64+r])
					}
				}
			}
		}
		dalpha := make([]float64, heads*c.Edges())
		GATEdgeDot(c, dout, h, heads, f, false, dalpha)
		for i := 0; i < n; i++ {
			for p := c.Indptr[i]; p < c.Indptr[i+1]; p++ {
				j := int(c.Src[p])
				for k := 0; k < heads; k++ {
					var s [4]float64 // gatDot's four interleaved sums
					for q := 0; q < f; q++ {
						s[q%4] += float64(h[j*64+k*f+q] * dout[i*64+k*f+q])
					}
					w := (s[0] + s[1]) + (s[2] + s[3])
					require.Equal(t, math.Float64bits(w), math.Float64bits(dalpha[p*heads+k]), "GATEdgeDot[%d][%d] = %v, want %v", p, k, dalpha[p*heads+k], w)
				}
			}
		}
		for e := range want {
			require.Equal(t, math.Float64bits(want[e]), math.Float64bits(out[e]), "GATAggregate[%d] = %v, want %v", e, out[e], want[e])
			require.Equal(t, math.Float64bits(wantT[e]), math.Float64bits(dh[e]), "GATAggregateT[%d] = %v, want %v", e, dh[e], wantT[e])
		}
	})
}
