//go:build !openblas

package layers

import "testing"

func TestBLASNameDefault(t *testing.T) {
	if got := BLAS(); got != "gonum" {
		t.Fatalf("BLAS() = %q in the default build, want %q", got, "gonum")
	}
}
