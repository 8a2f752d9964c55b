package layers

import (
	"fmt"

	"gonum.org/v1/gonum/blas/gonum"
	G "gorgonia.org/gorgonia"
)

// BLAS names the BLAS implementation that gorgonia and tensor use for
// dense matrix products: "gonum" for gonum's pure-Go BLAS (the default
// build) or "openblas" for OpenBLAS through gonum's cgo netlib bindings
// (the build with -tags openblas, which needs Debian's libopenblas-dev).
// Any other implementation installed with gorgonia.Use is reported by its
// Go type.
func BLAS() string {
	switch b := G.WhichBLAS().(type) {
	case gonum.Implementation, *gonum.Implementation:
		return "gonum"
	default:
		if isOpenBLAS(b) {
			return "openblas"
		}
		return fmt.Sprintf("%T", b)
	}
}
