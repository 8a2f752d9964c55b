package layers

import (
	"fmt"

	"github.com/fairmp/fairmp/internal/fastblas"

	"gonum.org/v1/gonum/blas/gonum"
	G "gorgonia.org/gorgonia"
)

// BLAS names the BLAS implementation that gorgonia and tensor use for
// dense matrix products: "fastblas" in the default build (pure Go: gonum's
// BLAS with fairmp's AVX2/FMA Go-assembly kernels for large Sgemm and
// Dgemm; "fastblas (gonum only: no AVX2/FMA)" on other CPUs), "openblas"
// with -tags openblas (OpenBLAS through gonum's cgo netlib bindings; needs
// Debian's libopenblas-dev), "gonum" if a program switched back to
// gonum.Implementation with gorgonia.Use. Any other implementation is
// reported by its Go type.
func BLAS() string {
	switch b := G.WhichBLAS().(type) {
	case gonum.Implementation, *gonum.Implementation:
		return "gonum"
	case fastblas.Implementation, *fastblas.Implementation:
		if !fastblas.Enabled() {
			return "fastblas (gonum only: no AVX2/FMA)"
		}
		return "fastblas"
	default:
		if isOpenBLAS(b) {
			return "openblas"
		}
		return fmt.Sprintf("%T", b)
	}
}
