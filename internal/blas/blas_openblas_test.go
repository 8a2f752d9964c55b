//go:build openblas

package blas_test

import (
	"testing"

	fb "github.com/fairmp/fairmp/internal/blas"
	"gonum.org/v1/netlib/blas/netlib"
	G "gorgonia.org/gorgonia"
)

// defaultName is what Name reports after Default in this build.
func defaultName() string { return "openblas" }

// isDefault reports whether b is this build's default BLAS.
func isDefault(b G.BLAS) bool {
	_, ok := b.(netlib.Implementation)
	return ok
}

func TestBLASNameOpenBLAS(t *testing.T) {
	if got := fb.Name(); got != "openblas" {
		t.Fatalf("Name() = %q with -tags openblas after Default, want %q", got, "openblas")
	}
	if _, ok := fb.OpenBLAS().(netlib.Implementation); !ok {
		t.Fatalf("OpenBLAS() = %T, want netlib.Implementation", fb.OpenBLAS())
	}
}
