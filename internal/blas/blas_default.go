//go:build !openblas

package blas

import G "gorgonia.org/gorgonia"

// defaultBLAS is the default build's: fastblas, pure Go (no cgo).
func defaultBLAS() G.BLAS { return Fast() }

// isOpenBLAS reports false: this build does not link OpenBLAS (build with
// -tags openblas for it).
func isOpenBLAS(G.BLAS) bool { return false }
