// Package blas is the one place that selects the BLAS gorgonia and tensor
// use for dense matrix products, and names it.
//
// Importing it (and so importing layers, which imports it, or any fairmp
// package built on layers) replaces, at program start, the process-wide
// BLAS of gorgonia and tensor with gorgonia.Use: in the default build with
// fastblas, gonum's pure-Go BLAS whose large float32 and float64 matrix
// products run on fairmp's AVX2/FMA Go-assembly kernels (gonum's own code
// on CPUs without AVX2/FMA); with -tags openblas with OpenBLAS through
// gonum's cgo netlib bindings (Debian's libopenblas-dev; thread count from
// OPENBLAS_NUM_THREADS). A program that calls gorgonia.Use itself after
// start-up overrides it; Name reports what is active.
package blas

import (
	"fmt"

	"github.com/fairmp/fairmp/internal/fastblas"

	"gonum.org/v1/gonum/blas/gonum"
	G "gorgonia.org/gorgonia"
)

// Name names the BLAS implementation that gorgonia and tensor use for
// dense matrix products: "fastblas" in the default build (pure Go: gonum's
// BLAS with fairmp's AVX2/FMA Go-assembly kernels for large Sgemm and
// Dgemm; "fastblas (gonum only: no AVX2/FMA)" on other CPUs), "openblas"
// with -tags openblas (OpenBLAS through gonum's cgo netlib bindings; needs
// Debian's libopenblas-dev), "gonum" if a program switched back to
// gonum.Implementation with gorgonia.Use. Any other implementation is
// reported by its Go type.
func Name() string {
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
