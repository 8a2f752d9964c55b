//go:build !openblas

package blas

import (
	"testing"

	"github.com/fairmp/fairmp/internal/fastblas"
)

func TestBLASNameDefault(t *testing.T) {
	want := "fastblas"
	if !fastblas.Enabled() {
		want = "fastblas (gonum only: no AVX2/FMA)"
	}
	if got := Name(); got != want {
		t.Fatalf("Name() = %q in the default build, want %q", got, want)
	}
}
