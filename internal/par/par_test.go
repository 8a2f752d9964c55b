package par

import (
	"math/rand"
	"runtime"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestRowsCoversEachRowOnce checks that every row is handed to exactly one
// call, for serial and parallel work sizes and for GOMAXPROCS 1 and 2.
func TestRowsCoversEachRowOnce(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for _, procs := range []int{1, 2} {
		old := runtime.GOMAXPROCS(procs)
		for _, rows := range []int{0, 1, 7, 5000} {
			indptr := make([]int, rows+1)
			for i := 1; i <= rows; i++ {
				indptr[i] = indptr[i-1] + rng.Intn(10)
			}
			seen := make([]atomic.Int32, rows)
			Rows(indptr, 100, func(lo, hi int) {
				if lo > hi || lo < 0 || hi > rows {
					t.Errorf("block [%d, %d) outside [0, %d)", lo, hi, rows)
					return
				}
				for i := lo; i < hi; i++ {
					seen[i].Add(1)
				}
			})
			for i := range seen {
				require.EqualValues(t, 1, seen[i].Load(), "GOMAXPROCS %d, %d rows: visits of row %d", procs, rows, i)
			}
		}
		runtime.GOMAXPROCS(old)
	}
}
