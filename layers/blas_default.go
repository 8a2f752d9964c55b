//go:build !openblas

package layers

import G "gorgonia.org/gorgonia"

// isOpenBLAS reports false: this build does not link OpenBLAS (build with
// -tags openblas for it).
func isOpenBLAS(G.BLAS) bool { return false }
