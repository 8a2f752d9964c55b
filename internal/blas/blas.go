// Package blas chooses the BLAS that gorgonia and tensor use for dense
// matrix products, and names it. It is internal: fairmp's training and
// prediction entry points and its commands call it; a program chooses
// another BLAS with gorgonia.Use, which fairmp keeps.
//
// Importing it changes nothing: gorgonia's process-wide BLAS stays what
// the program set, gonum's pure-Go BLAS until then. Choosing is a call, in
// gonum's style:
//
//	blas.Use(blas.Fast())     // fastblas: gonum's BLAS with fairmp's Go-assembly kernels
//	blas.Use(blas.Gonum())    // gonum's pure-Go BLAS, gorgonia's own default
//	blas.Use(blas.OpenBLAS()) // OpenBLAS through cgo (only with -tags openblas)
//	blas.Default()            // fairmp's default for this build, unless the program chose
//
// fairmp's training and prediction entry points (layers/train's Fit,
// NewTrainer and Predict, layers/minibatch's Fit, layers/fairtrain's
// adversary, fmp's audit) call [Default] before they run a graph, so a
// program that does nothing gets fairmp's speed: [Fast] in the default
// build, [OpenBLAS] with -tags openblas. A program that chose with [Use],
// or with gorgonia.Use and anything but gonum's default, keeps its
// choice. fairmp's commands call Default at the start of main.
//
// Fast is fastblas: gonum's pure-Go BLAS whose large float32 and float64
// matrix products run on fairmp's AVX2/FMA and AVX-512 Go-assembly
// kernels (gonum's own code on CPUs without AVX2/FMA, on other
// architectures and with -tags noasm). No cgo: the default build is pure
// Go. OpenBLAS is Debian's libopenblas-dev through gonum's cgo netlib
// bindings, its thread count from OPENBLAS_NUM_THREADS. [Name] reports
// what is active.
package blas

import (
	"fmt"
	"sync"

	"github.com/fairmp/fairmp/internal/fastblas"

	"gonum.org/v1/gonum/blas/gonum"
	G "gorgonia.org/gorgonia"
)

var (
	mu     sync.Mutex
	chosen bool // the program called Use
	once   sync.Once
)

// Fast returns fastblas, gonum's pure-Go BLAS with fairmp's Go-assembly
// kernels for large Sgemm and Dgemm, for [Use].
func Fast() G.BLAS { return fastblas.Implementation{} }

// Gonum returns gonum's pure-Go BLAS, gorgonia's own default, for [Use].
func Gonum() G.BLAS { return gonum.Implementation{} }

// Use makes b the BLAS of gorgonia and tensor for the whole process
// (gorgonia.Use) and records that the program chose: [Default] will not
// replace it. Call it at the start of main, before any graph runs.
func Use(b G.BLAS) {
	mu.Lock()
	defer mu.Unlock()
	chosen = true
	G.Use(b)
}

// Default installs fairmp's default BLAS ([Fast]; [OpenBLAS] with -tags
// openblas) with gorgonia.Use, unless the program chose one: with [Use],
// or with gorgonia.Use and anything but gonum's default value
// (gonum.Implementation{}, which Default takes for "nothing chosen": to
// keep gonum's BLAS, call Use(Gonum())). Only the first call acts; later
// ones return at once, and a program's later Use still wins. Safe for
// concurrent use.
func Default() {
	once.Do(func() {
		mu.Lock()
		defer mu.Unlock()
		if chosen {
			return
		}
		if _, ok := G.WhichBLAS().(gonum.Implementation); !ok {
			return // the program called gorgonia.Use itself
		}
		G.Use(defaultBLAS())
	})
}

// Name names the BLAS implementation that gorgonia and tensor use for
// dense matrix products: "fastblas" for [Fast] ("fastblas (gonum only: no
// AVX2/FMA)" on CPUs without AVX2/FMA, other architectures and -tags
// noasm), "openblas" for [OpenBLAS] (with -tags openblas), "gonum" for
// gonum's BLAS (gorgonia's default before [Default] or [Use] runs). Any
// other implementation is reported by its Go type.
func Name() string {
	switch b := G.WhichBLAS().(type) {
	case gonum.Implementation, *gonum.Implementation:
		return "gonum"
	case fastblas.Implementation, *fastblas.Implementation:
		if !fastblas.Enabled() {
			return "fastblas (gonum only: no AVX2/FMA)"
		}
		return "fastblas"
	default:
		if isOpenBLAS(b) {
			return "openblas"
		}
		return fmt.Sprintf("%T", b)
	}
}
