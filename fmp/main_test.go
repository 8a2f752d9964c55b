package fmp

import (
	"testing"

	"github.com/fairmp/fairmp/internal/testutil"
)

// TestMain runs the tests on fairmp's BLAS, as its entry points do
// (testutil.Main: blas.Default first), whatever the order of the tests.
func TestMain(m *testing.M) { testutil.Main(m) }
