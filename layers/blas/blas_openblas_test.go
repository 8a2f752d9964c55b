//go:build openblas

package blas

import "testing"

func TestBLASNameOpenBLAS(t *testing.T) {
	if got := Name(); got != "openblas" {
		t.Fatalf("Name() = %q with -tags openblas, want %q", got, "openblas")
	}
}
