// Command tradeoff sweeps the fairness weight of the fairness-training
// strategies of layers/fairtrain (the demographic-parity regulariser,
// adversarial debiasing and fair mixup) on one or more backbones, over
// several seeds, and writes a CSV of every run and an SVG plot of ΔDP (x)
// against accuracy (y) on the test split with each method's Pareto front.
// The fmp backbone (MLP → FMP layer, package fmp) adds its own sweep of λf
// (method "fmp", with λs from -lambda-s; λf = 0 is its plain run).
//
// Usage:
//
//	go run ./tradeoff -data $FAIRMP_DATA -dataset bail \
//	    -models gcn -seeds 3 -epochs 300 -out examples/tradeoff
//
// Every configuration is trained with Adam (lr 1e-3, weight decay 1e-5,
// as the FMP paper), full batch, and evaluated on the test split at the
// last epoch (the reference code's protocol; -select best uses the
// best-validation epoch instead). The α = 0 point of every method is the
// plain run (method "plain" in the CSV): with α = 0 each strategy trains
// bit-identically to plain training, which layers/fairtrain's tests check.
// Accuracy and ΔDP are computed by the metrics package and reported in
// percent; the plot shows the mean over seeds.
//
// Each run also records its 95% bootstrap intervals over the test nodes
// (metrics.Bootstrap: 1000 resamples within each sensitive group, seed 1;
// columns acc_lo … eo_hi of the CSV), and the summary prints, beside each
// chosen setting's ΔDP, the mean over seeds of those bounds: the
// uncertainty of one run from which nodes were tested. The seeds share
// the test nodes, so the interval of their mean is about as wide.
// -from-csv still reads CSVs written before the intervals (no acc_lo …
// columns); settings with such runs are printed without an interval.
//
// -from-csv merges CSVs (a run in several is kept once, and its copies
// must agree), so an expensive sweep can be run a few seeds at a time
// with -first-seed. When a method has fewer seeds than its backbone's
// plain runs (say, the cheap post-processing on 5 seeds and the training
// strategies on 1), its summary row is judged against the plain runs of
// its own seeds and names them, because the plain mean over other seeds
// is not its reference.
//
// Progress, with an estimate of the remaining time, goes to stderr;
// independent runs are trained in parallel by -workers goroutines, and
// the results do not depend on their number.
package main

import (
	"fmt"
	"os"

	"github.com/fairmp/fairmp/internal/blas"
)

func main() {
	blas.Default() // fairmp's BLAS before any graph runs (see internal/blas)
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "tradeoff:", err)
		os.Exit(1)
	}
}
