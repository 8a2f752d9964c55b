//go:build openblas

package blas

// The openblas build links Debian's libopenblas (package libopenblas-dev)
// through gonum's cgo netlib bindings; Default installs it. Thread count:
// OPENBLAS_NUM_THREADS (default: one per core).

/*
#cgo LDFLAGS: -lopenblas
*/
import "C"

import (
	"gonum.org/v1/netlib/blas/netlib"
	G "gorgonia.org/gorgonia"
)

// OpenBLAS returns OpenBLAS through gonum's cgo netlib bindings, for
// [Use]. Only in the openblas build (-tags openblas).
func OpenBLAS() G.BLAS { return netlib.Implementation{} }

// defaultBLAS is the openblas build's: OpenBLAS.
func defaultBLAS() G.BLAS { return OpenBLAS() }

func isOpenBLAS(b G.BLAS) bool {
	switch b.(type) {
	case netlib.Implementation, *netlib.Implementation:
		return true
	}
	return false
}
