//go:build !openblas

package blas

import (
	"github.com/fairmp/fairmp/internal/fastblas"
	G "gorgonia.org/gorgonia"
)

// The default build is pure Go (no cgo). At program start it switches
// gorgonia and tensor from gonum's BLAS to fastblas: gonum's BLAS whose
// large float32 and float64 matrix products run on AVX2/FMA kernels
// written in Go assembly (gonum's own code on CPUs without AVX2/FMA).
func init() { G.Use(fastblas.Implementation{}) }

// isOpenBLAS reports false: this build does not link OpenBLAS (build with
// -tags openblas for it).
func isOpenBLAS(G.BLAS) bool { return false }
