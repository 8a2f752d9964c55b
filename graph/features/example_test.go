package features_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/fairmp/fairmp/graph/features"
)

// Example streams a 3 × 2 matrix into a file row by row, opens it
// memory-mapped and gathers two rows.
func Example() {
	dir, err := os.MkdirTemp("", "features")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "x.fmx")

	w, err := features.Create(path, 3, 2)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer w.Abort() // does nothing once Close succeeded
	for i := 0; i < 3; i++ {
		if err := w.WriteRow([]float32{float32(i), float32(10 * i)}); err != nil {
			fmt.Println(err)
			return
		}
	}
	if err := w.Close(); err != nil {
		fmt.Println(err)
		return
	}
	st, _ := os.Stat(path)
	fmt.Println("file size:", st.Size(), "bytes (64 header + 24 values + 4 trailer)")

	m, err := features.Open(path)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer m.Close()
	fmt.Println(m.Rows(), "×", m.Cols(), m.Data())
	dst := make([]float32, 2*m.Cols())
	if err := m.Gather(dst, []int{2, 0}); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("rows 2 and 0:", dst)
	fmt.Println(m.Gather(dst, []int{2, 3}))

	// A value outside float32's range (or not finite) is refused, naming
	// its row and column.
	fmt.Println(features.Write(filepath.Join(dir, "bad.fmx"), []float64{1, 2, 3, 1e40}, 2, 2) != nil)
	// Output:
	// file size: 92 bytes (64 header + 24 values + 4 trailer)
	// 3 × 2 [0 0 1 10 2 20]
	// rows 2 and 0: [2 20 0 0]
	// features: Gather: rows[1] = 3, want a row in [0, 3)
	// true
}
