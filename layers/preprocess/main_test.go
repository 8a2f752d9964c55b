package preprocess

import (
	"testing"

	"github.com/fairmp/fairmp/internal/testutil"
)

// TestMain runs the tests on fairmp's BLAS, as its entry points do.
func TestMain(m *testing.M) { testutil.Main(m) }
