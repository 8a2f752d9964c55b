// Command peers-rawlsgcn trains a plain GCN and RawlsGCN-Graph
// (layers/fairtrain's "rawlsgcn": the GCN on the doubly stochastic
// scaling of its propagation matrix) on one data set and split, and
// reports, on the test nodes, what the independent PyTorch peer
// rawlsgcn.py in this folder reports for the same runs: accuracy, ΔDP
// between the sensitive groups, RawlsGCN's bias (the variance of the
// mean loss across degree groups, one group per distinct degree), the
// accuracy gap and the worst accuracy across degree quartiles (with 95%
// bootstrap intervals), and the cost: milliseconds per training step and
// the time to build the propagation matrix.
//
// Usage:
//
//	go run ./peers-rawlsgcn -dataset bail -seeds 3 -out peers-rawlsgcn/results/bail_go.csv
//	go run ./peers-rawlsgcn -dataset synthetic -synthetic-nodes 500 -epochs 20
//
// The protocol is the lab's (the FMP paper's): the GCN is 2 layers
// d → 64 → 2 with ReLU and dropout 0.5, Adam with lr 1e-3 and weight decay
// 1e-5 for 300 epochs, the epoch with the best validation accuracy kept;
// the features exclude the label and the sensitive column; the split is
// the data set's split.json (Bail: 50/25/25 of the labelled rows).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strings"
	"time"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/fairmp/fairmp/graph/datasets"
	"github.com/fairmp/fairmp/internal/blas"
	"github.com/fairmp/fairmp/layers"
	"github.com/fairmp/fairmp/layers/fairness"
	"github.com/fairmp/fairmp/layers/fairtrain"
	"github.com/fairmp/fairmp/layers/train"
	"github.com/fairmp/fairmp/metrics"
)

func main() {
	blas.Default() // fairmp's BLAS before any graph runs (see internal/blas)
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "peers-rawlsgcn:", err)
		}
		os.Exit(2)
	}
}

type options struct {
	data, dataset, out string
	seeds, epochs      int
	firstSeed          int64
	synthN, buckets    int
	dtype              tensor.Dtype
	quiet              bool
}

func parseFlags(args []string, stderr io.Writer) (*options, error) {
	fs := flag.NewFlagSet("peers-rawlsgcn", flag.ContinueOnError)
	fs.SetOutput(stderr)
	o := &options{}
	fs.StringVar(&o.data, "data", os.Getenv("FAIRMP_DATA"), "folder holding the data sets (default $FAIRMP_DATA)")
	fs.StringVar(&o.dataset, "dataset", "bail", `"synthetic" (generated) or a datasets preset ("bail", "credit", "nba")`)
	fs.IntVar(&o.synthN, "synthetic-nodes", 2000, "nodes of the generated graph")
	fs.IntVar(&o.seeds, "seeds", 3, "seeds per method")
	fs.Int64Var(&o.firstSeed, "first-seed", 1, "first model seed")
	fs.IntVar(&o.epochs, "epochs", 300, "training epochs")
	fs.IntVar(&o.buckets, "buckets", 4, "degree groups for the accuracy gap (quantiles of the test nodes' degrees)")
	dt := fs.String("dtype", "float64", "float32 or float64")
	fs.StringVar(&o.out, "out", "", "CSV file for one row per run (default: none)")
	fs.BoolVar(&o.quiet, "q", false, "no progress lines")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	switch *dt {
	case "float32":
		o.dtype = tensor.Float32
	case "float64":
		o.dtype = tensor.Float64
	default:
		return nil, fmt.Errorf("-dtype %q, want float32 or float64", *dt)
	}
	switch {
	case o.seeds < 1:
		return nil, fmt.Errorf("-seeds %d, want ≥ 1", o.seeds)
	case o.epochs < 1:
		return nil, fmt.Errorf("-epochs %d, want ≥ 1", o.epochs)
	case o.buckets < 2:
		return nil, fmt.Errorf("-buckets %d, want ≥ 2 degree groups", o.buckets)
	case o.dataset != "synthetic" && o.data == "":
		return nil, fmt.Errorf("-dataset %s needs -data or $FAIRMP_DATA", o.dataset)
	}
	return o, nil
}

// outcome is one method's run on one seed.
type outcome struct {
	method              string
	seed                int64
	acc, dp             float64
	bias                float64 // loss variance, a group per degree
	gap, worst          metrics.Interval
	byGroup             []float64 // accuracy of each degree group
	bestEpoch           int
	msPerStep, seconds  float64
	perDegree, quartile int // numbers of degree groups
}

func run(args []string, stdout, stderr io.Writer) error {
	o, err := parseFlags(args, stderr)
	if err != nil {
		return err
	}
	log := stderr
	if o.quiet {
		log = io.Discard
	}
	var ds *datasets.Dataset
	if o.dataset == "synthetic" {
		c := datasets.DefaultSyntheticConfig()
		c.N = o.synthN
		ds, err = datasets.Synthetic(c)
	} else {
		ds, err = datasets.Load(o.data, o.dataset, datasets.PaperOptions())
	}
	if err != nil {
		return err
	}
	deg := ds.Graph.Degrees()
	test := ds.Split.Test
	perDegree, err := metrics.GroupByDegree(deg, test, metrics.EachDegree)
	if err != nil {
		return err
	}
	quart, err := metrics.GroupByDegree(deg, test, o.buckets)
	if err != nil {
		return err
	}
	fmt.Fprintf(log, "%s: %d nodes, %d edges; test %d nodes in %d degrees; %d degree groups %s\n",
		ds.Name, ds.N(), ds.Graph.NumEdges(), len(test), perDegree.Len(), quart.Len(), strings.Join(quart.Names(), ", "))

	// The cost of the matrices, built once per model.
	for _, p := range []struct {
		name string
		prop layers.Propagation
	}{{"D̂^-½(A+I)D̂^-½", layers.DefaultPropagation()}, {"doubly stochastic", layers.DoublyStochasticPropagation()}} {
		start := time.Now()
		if _, err := p.prop.Matrix(ds.Graph); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "matrix %s: built in %.1f ms\n", p.name, 1e3*time.Since(start).Seconds())
	}

	var outs []outcome
	for s := int64(0); s < int64(o.seeds); s++ {
		seed := o.firstSeed + s
		for _, name := range []string{"gcn", "rawlsgcn"} {
			oc, err := runOne(o, ds, name, seed, perDegree, quart)
			if err != nil {
				return fmt.Errorf("%s seed %d: %w", name, seed, err)
			}
			fmt.Fprintf(log, "seed %d %-8s acc %6.2f ΔDP %5.2f bias %.4f gap %s worst %s by degree group %s; best epoch %d, %.1f ms a step\n",
				seed, name, metrics.Percent(oc.acc), metrics.Percent(oc.dp), oc.bias, oc.gap, oc.worst, percents(oc.byGroup), oc.bestEpoch, oc.msPerStep)
			outs = append(outs, oc)
		}
	}
	table(stdout, outs)
	if o.out != "" {
		return writeCSV(o.out, outs)
	}
	return nil
}

// runOne trains one method on one seed and evaluates it on the test nodes.
func runOne(o *options, ds *datasets.Dataset, name string, seed int64, perDegree, quart *metrics.DegreeGroups) (outcome, error) {
	start := time.Now()
	g := G.NewGraph()
	x, err := train.FeatureNode(g, o.dtype, ds.Features, ds.N(), ds.NumFeatures, "x")
	if err != nil {
		return outcome{}, err
	}
	task := &train.Task{Graph: g, X: x, Labels: ds.Labels, Train: ds.Split.Train, Val: ds.Split.Val, Classes: ds.NumClasses(), Phase: layers.NewPhase()}
	k, err := layers.LookupKind("gcn")
	if err != nil {
		return outcome{}, err
	}
	cfg, err := k.Configure(ds.NumFeatures, ds.NumClasses(), layers.Options{Dtype: o.dtype, Seed: seed})
	if err != nil {
		return outcome{}, err
	}
	var m fairness.Method
	if name == "rawlsgcn" {
		m = fairtrain.DefaultRawlsGCNConfig()
	}
	tc := train.DefaultConfig()
	tc.Epochs = o.epochs
	fit, err := fairness.Fit(context.Background(), m, cfg, fairness.NewSetup(ds.Graph, task, ds.Sens), tc)
	if err != nil {
		return outcome{}, err
	}
	pred, err := train.Predict(fit.Model, task, nil)
	if err != nil {
		return outcome{}, err
	}
	test := ds.Split.Test
	rep, err := metrics.Evaluate(pred.Probs, pred.Classes, ds.Labels, ds.Sens, test, metrics.DefaultOptions())
	if err != nil {
		return outcome{}, err
	}
	bias, err := metrics.DegreeBias(pred.Probs, pred.Classes, ds.Labels, perDegree.Group, test, metrics.DefaultOptions())
	if err != nil {
		return outcome{}, err
	}
	quartRep, err := metrics.DegreeBias(pred.Probs, pred.Classes, ds.Labels, quart.Group, test, metrics.DefaultOptions())
	if err != nil {
		return outcome{}, err
	}
	iv, err := metrics.BootstrapDegreeBias(pred.Probs, pred.Classes, ds.Labels, quart.Group, test, metrics.DefaultOptions(), metrics.DefaultBootstrapConfig())
	if err != nil {
		return outcome{}, err
	}
	steps := make([]float64, len(fit.Result.History))
	for e, st := range fit.Result.History {
		steps[e] = 1e3 * st.StepTime.Seconds()
	}
	slices.Sort(steps)
	return outcome{
		method: name, seed: seed, acc: rep.Accuracy, dp: rep.DemographicParity, bias: bias.LossVariance,
		gap: iv.AccuracyGap, worst: iv.WorstAccuracy, byGroup: quartRep.AccuracyByGroup, bestEpoch: fit.Result.Best.Epoch,
		msPerStep: steps[len(steps)/2], seconds: time.Since(start).Seconds(),
		perDegree: perDegree.Len(), quartile: quart.Len(),
	}, nil
}

// table writes one row per run and the mean ± std (population) of each
// method.
func table(w io.Writer, outs []outcome) {
	fmt.Fprintln(w, "| method | seed | accuracy | ΔDP | bias (loss variance, per degree) | accuracy gap, degree groups [95%] | worst group accuracy [95%] | best epoch | ms a step | s a run |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|---|")
	for _, name := range []string{"gcn", "rawlsgcn"} {
		var acc, dp, bias, gap, worst, ms []float64
		for _, oc := range outs {
			if oc.method != name {
				continue
			}
			fmt.Fprintf(w, "| %s | %d | %.2f | %.2f | %.4f | %s | %s | %d | %.1f | %.1f |\n", title(name), oc.seed, metrics.Percent(oc.acc), metrics.Percent(oc.dp), oc.bias, oc.gap, oc.worst, oc.bestEpoch, oc.msPerStep, oc.seconds)
			acc, dp, bias = append(acc, metrics.Percent(oc.acc)), append(dp, metrics.Percent(oc.dp)), append(bias, oc.bias)
			gap, worst, ms = append(gap, metrics.Percent(oc.gap.Point)), append(worst, metrics.Percent(oc.worst.Point)), append(ms, oc.msPerStep)
		}
		fmt.Fprintf(w, "| **%s mean ± std** | | **%s** | **%s** | **%s** | **%s** | **%s** | | %.1f | |\n", title(name),
			ms2(acc, 2), ms2(dp, 2), ms2(bias, 4), ms2(gap, 2), ms2(worst, 2), mean(ms))
	}
}

func title(name string) string {
	if name == "gcn" {
		return "GCN"
	}
	return "RawlsGCN-Graph"
}

// mean is metrics.MeanStd's mean (NaN for no value or a value that is
// not finite).
func mean(xs []float64) float64 {
	st, err := metrics.MeanStd(xs)
	if err != nil {
		return math.NaN()
	}
	return st.Mean
}

// ms2 formats mean ± population std (metrics.MeanStd) with d decimals.
func ms2(xs []float64, d int) string {
	st, err := metrics.MeanStd(xs)
	if err != nil {
		return "n/a"
	}
	return fmt.Sprintf("%.*f ± %.*f", d, st.Mean, d, st.Std)
}

// percents formats fractions as "a / b / c" in percent.
func percents(xs []float64) string {
	s := make([]string, len(xs))
	for k, x := range xs {
		s[k] = fmt.Sprintf("%.2f", metrics.Percent(x))
	}
	return strings.Join(s, " / ")
}

func writeCSV(path string, outs []outcome) error {
	var b strings.Builder
	b.WriteString("method,seed,accuracy,dp,bias,acc_gap,acc_gap_lo,acc_gap_hi,worst_acc,worst_lo,worst_hi,acc_by_group,best_epoch,ms_per_step,seconds,degree_groups,buckets\n")
	for _, oc := range outs {
		fmt.Fprintf(&b, "%s,%d,%.4f,%.4f,%.6f,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f,%s,%d,%.2f,%.2f,%d,%d\n", oc.method, oc.seed,
			metrics.Percent(oc.acc), metrics.Percent(oc.dp), oc.bias,
			metrics.Percent(oc.gap.Point), metrics.Percent(oc.gap.Lo), metrics.Percent(oc.gap.Hi),
			metrics.Percent(oc.worst.Point), metrics.Percent(oc.worst.Lo), metrics.Percent(oc.worst.Hi),
			strings.ReplaceAll(percents(oc.byGroup), " / ", ";"), oc.bestEpoch, oc.msPerStep, oc.seconds, oc.perDegree, oc.quartile)
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}
