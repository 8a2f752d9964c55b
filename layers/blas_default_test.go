//go:build !openblas

package layers

import (
	"testing"

	"github.com/fairmp/fairmp/internal/fastblas"
)

func TestBLASNameDefault(t *testing.T) {
	want := "fastblas"
	if !fastblas.Enabled() {
		want = "fastblas (gonum only: no AVX2/FMA)"
	}
	if got := BLAS(); got != want {
		t.Fatalf("BLAS() = %q in the default build, want %q", got, want)
	}
}
