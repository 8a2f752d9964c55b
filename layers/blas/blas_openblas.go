//go:build openblas

package blas

// The openblas build links Debian's libopenblas (package libopenblas-dev)
// and switches gorgonia and tensor to it through gonum's cgo netlib
// bindings at program start. Thread count: OPENBLAS_NUM_THREADS (default:
// one per core).

/*
#cgo LDFLAGS: -lopenblas
*/
import "C"

import (
	"gonum.org/v1/netlib/blas/netlib"
	G "gorgonia.org/gorgonia"
)

func init() { G.Use(netlib.Implementation{}) }

func isOpenBLAS(b G.BLAS) bool {
	switch b.(type) {
	case netlib.Implementation, *netlib.Implementation:
		return true
	}
	return false
}
