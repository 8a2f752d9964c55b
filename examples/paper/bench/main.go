// Command bench times one full-batch training epoch of a fairmp model on a
// generated graph (by default the shape of Pokec-z: 67,796 nodes, 276
// features, 617,958 undirected edges) and reports the median, the split
// into forward, backward and optimizer time, and the peak memory.
//
//	go run ./bench -model fmp
//	go run -tags openblas ./examples/bench -model gcn -json
//
// See run's documentation (bench.go) for the flags and for how each
// number is measured.
package main

import (
	"fmt"
	"os"

	"github.com/fairmp/fairmp/internal/blas"
)

func main() {
	blas.Default() // fairmp's BLAS before any graph runs (see internal/blas)
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}
