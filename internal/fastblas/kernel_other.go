//go:build noasm || !amd64

package fastblas

import "unsafe"

// The pure-Go build (-tags noasm, or any architecture but amd64): no
// assembly. Products that the kernels would run are gonum's; the
// narrow-product paths, plain Go, are the same as on amd64.

func haveAVX2() bool   { return false }
func haveAVX512() bool { return false }

// noKernels is why this build has no assembly.
const noKernels = "assembly kernels (this is the pure-Go build: -tags noasm or not amd64)"

func sStrips(path) []strip[float32] { return nil }
func dStrips(path) []strip[float64] { return nil }

// dot2s and dot2d are the lanes of the amd64 kernels in Go (never called
// here, where the kernels are off, but tested as they are on amd64): lane
// r sums the steps p ≡ r mod 4 over the first n elements, each product
// rounded (the conversion forbids fusing it into the add), then added.
func dot2s(n int, x, y0, y1 *float32, out *[8]float32) { dot2lanes(n, x, y0, y1, out) }
func dot2d(n int, x, y0, y1 *float64, out *[8]float64) { dot2lanes(n, x, y0, y1, out) }

func dot2lanes[T float32 | float64](n int, x, y0, y1 *T, out *[8]T) {
	*out = [8]T{}
	if n <= 0 {
		return
	}
	xs, u, v := unsafe.Slice(x, n), unsafe.Slice(y0, n), unsafe.Slice(y1, n)
	for p := 0; p+4 <= n; p += 4 {
		for r := 0; r < 4; r++ {
			out[r] += T(xs[p+r] * u[p+r])
			out[4+r] += T(xs[p+r] * v[p+r])
		}
	}
}
