//go:build !openblas

package blas_test

import (
	"testing"

	fb "github.com/fairmp/fairmp/internal/blas"
	"github.com/fairmp/fairmp/internal/fastblas"
	G "gorgonia.org/gorgonia"
)

// defaultName is what Name reports after Default in this build.
func defaultName() string {
	if !fastblas.Enabled() {
		return "fastblas (gonum only: no AVX2/FMA)"
	}
	return "fastblas"
}

// isDefault reports whether b is this build's default BLAS.
func isDefault(b G.BLAS) bool {
	_, ok := b.(fastblas.Implementation)
	return ok
}

func TestBLASNameDefault(t *testing.T) {
	if got, want := fb.Name(), defaultName(); got != want {
		t.Fatalf("Name() = %q in the default build after Default, want %q", got, want)
	}
	if _, ok := fb.Fast().(fastblas.Implementation); !ok {
		t.Fatalf("Fast() = %T, want fastblas.Implementation", fb.Fast())
	}
}
