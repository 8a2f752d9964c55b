package fmp

import (
	"os"
	"testing"

	"github.com/fairmp/fairmp/layers/blas"
)

// TestMain calls blas.Default first, as a program's main and fairmp's
// entry points do, so that every test runs on fairmp's BLAS (as before
// layers/blas lost its init) whatever the order of the tests.
func TestMain(m *testing.M) {
	blas.Default()
	os.Exit(m.Run())
}
