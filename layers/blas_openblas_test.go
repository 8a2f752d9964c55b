//go:build openblas

package layers

import "testing"

func TestBLASNameOpenBLAS(t *testing.T) {
	if got := BLAS(); got != "openblas" {
		t.Fatalf("BLAS() = %q with -tags openblas, want %q", got, "openblas")
	}
}
