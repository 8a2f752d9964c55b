// Command compare puts the ways of debiasing a trained model side by
// side, on a data set and several backbones: the backbone alone, the
// backbone + FMP with its settings chosen on validation data (the
// frontier over λf and λs, fmp.NewFrontier), and the backbone +
// per-group thresholds chosen by the same rule (postprocess.FitThresholds).
// Each backbone is trained once per seed with the paper's protocol; both
// debiasing methods post-process that one trained backbone, so the rows
// differ only in the method.
//
// Usage:
//
//	go run ./compare -dataset synthetic -backbones mlp,gcn -seeds 5
//	go run ./compare -data $FAIRMP_DATA -dataset bail -out results/bail
//
// The rule (-max-acc-loss, in accuracy points) chooses, on validation
// nodes, the setting with the lowest ΔDP among those within that many
// points of the backbone's own validation accuracy. Test accuracy, ΔDP
// and ΔEO are printed as mean ± std over seeds; -out DIR also writes one
// CSV row per run. Progress goes to stderr (-q for none).
package main

import (
	"context"
	"encoding/csv"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/fairmp/fairmp/examples/paper/internal/exp"
	"github.com/fairmp/fairmp/fmp"
	"github.com/fairmp/fairmp/graph/datasets"
	"github.com/fairmp/fairmp/internal/blas"
	"github.com/fairmp/fairmp/layers/postprocess"
	"github.com/fairmp/fairmp/layers/train"
	"github.com/fairmp/fairmp/metrics"
	"github.com/fairmp/fairmp/metrics/selection"
)

func main() {
	blas.Default() // fairmp's BLAS before any graph runs (see internal/blas)
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "compare:", err)
		}
		os.Exit(2)
	}
}

type options struct {
	data, dataset, out string
	backbones          []string
	seeds, epochs      int
	lr, wd, maxLoss    float64
	quiet              bool
	synthN             int
}

func parseFlags(args []string, stderr io.Writer) (*options, error) {
	o := &options{}
	fs := flag.NewFlagSet("compare", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var backbones string
	fs.StringVar(&o.data, "data", os.Getenv("FAIRMP_DATA"), "folder holding the data sets' folders (default $FAIRMP_DATA)")
	fs.StringVar(&o.dataset, "dataset", "synthetic", "synthetic (generated, no files), nba, bail, credit, german, pokec_z, pokec_n")
	fs.IntVar(&o.synthN, "synthetic-nodes", 2000, "nodes of the generated graph (-dataset synthetic)")
	fs.StringVar(&backbones, "backbones", "mlp,gcn,gat,appnp", "comma-separated backbones: mlp, gcn, sgc, appnp, gat, jknet")
	fs.IntVar(&o.seeds, "seeds", 5, "seeds (model seeds 1..seeds)")
	fs.IntVar(&o.epochs, "epochs", 300, "training epochs (best-validation epoch kept)")
	fs.Float64Var(&o.lr, "lr", 1e-3, "Adam learning rate")
	fs.Float64Var(&o.wd, "weight-decay", 1e-5, "Adam weight decay")
	fs.Float64Var(&o.maxLoss, "max-acc-loss", 1, "selection rule: lowest validation ΔDP within this many accuracy points of the backbone's")
	fs.StringVar(&o.out, "out", "", "folder for runs.csv (empty: none)")
	fs.BoolVar(&o.quiet, "q", false, "no progress on stderr")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	for _, b := range strings.Split(backbones, ",") {
		if b == "fmp" || !contains(exp.Models, b) {
			return nil, fmt.Errorf("-backbones: %q is not a backbone, want some of mlp, gcn, sgc, appnp, gat, jknet", b)
		}
		o.backbones = append(o.backbones, b)
	}
	switch {
	case o.seeds < 1:
		return nil, fmt.Errorf("-seeds %d, want ≥ 1", o.seeds)
	case o.epochs < 1:
		return nil, fmt.Errorf("-epochs %d, want ≥ 1", o.epochs)
	case !(o.lr > 0):
		return nil, fmt.Errorf("-lr %v, want > 0", o.lr)
	case !(o.wd >= 0):
		return nil, fmt.Errorf("-weight-decay %v, want ≥ 0", o.wd)
	case !(o.maxLoss > 0 && o.maxLoss < 50):
		return nil, fmt.Errorf("-max-acc-loss %v, want accuracy points in (0, 50): 1 is one point", o.maxLoss)
	case o.dataset == "synthetic" && o.synthN < 50:
		return nil, fmt.Errorf("-synthetic-nodes %d, want ≥ 50", o.synthN)
	case o.dataset != "synthetic" && o.data == "":
		return nil, fmt.Errorf("-dataset %s needs -data or $FAIRMP_DATA", o.dataset)
	}
	return o, nil
}

func contains(s []string, x string) bool {
	for _, v := range s {
		if v == x {
			return true
		}
	}
	return false
}

// runResult is one backbone, seed and method.
type runResult struct {
	backbone, method string
	seed             int
	test             metrics.Report
	setting          string
	// epoch is the backbone's mean training epoch (with its evaluation
	// pass); post the time the method took after training (FMP: the
	// whole frontier; thresholds: the fit).
	epoch, post time.Duration
	points      int
	// probs are the method's n × 2 probabilities (decisions as one-hot
	// rows for thresholds), for the bootstrap intervals.
	probs []float64
}

var methods = []string{"backbone", "FMP", "thresholds"}

func run(args []string, stdout, stderr io.Writer) error {
	o, err := parseFlags(args, stderr)
	if err != nil {
		return err
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
	exp.PrintWarnings(stderr, ds)
	rule := selection.FairestWithin(metrics.DPDifference, o.maxLoss/100)
	tc := exp.DefaultTrainOptions()
	tc.Epochs, tc.Adam.LR, tc.Adam.WeightDecay = o.epochs, o.lr, o.wd
	var all []runResult
	start := time.Now()
	total := len(o.backbones) * o.seeds
	for bi, b := range o.backbones {
		for seed := 1; seed <= o.seeds; seed++ {
			done := bi*o.seeds + seed - 1
			if !o.quiet {
				eta := ""
				if done > 0 {
					eta = fmt.Sprintf(", about %v left", (time.Since(start) / time.Duration(done) * time.Duration(total-done)).Round(time.Second))
				}
				fmt.Fprintf(stderr, "[%d/%d] %s seed %d (%v elapsed%s)\n", done+1, total, b, seed, time.Since(start).Round(time.Second), eta)
			}
			rs, err := compareOne(ds, b, int64(seed), tc, rule)
			if err != nil {
				return fmt.Errorf("%s seed %d: %w", b, seed, err)
			}
			all = append(all, rs...)
		}
	}
	writeTable(stdout, o, ds, rule, all)
	if o.out != "" {
		return writeCSV(o.out, all)
	}
	return nil
}

// compareOne trains backbone b with seed and evaluates the three methods.
func compareOne(ds *datasets.Dataset, b string, seed int64, tc exp.TrainOptions, rule selection.Rule) ([]runResult, error) {
	p, err := exp.NewProblem(ds, exp.DefaultSpec(b).Dtype)
	if err != nil {
		return nil, err
	}
	spec := exp.DefaultSpec(b)
	spec.Seed = seed
	out, err := exp.Run(p, spec, tc)
	if err != nil {
		return nil, err
	}
	epoch := out.Train / time.Duration(out.Result.Epochs)
	rs := []runResult{{backbone: b, method: "backbone", seed: int(seed), test: out.Report, epoch: epoch, probs: out.Probs}}
	// FMP on the trained backbone: λs = 0 as the base, so that the
	// frontier's reference (λf = 0) is the backbone itself.
	base := fmp.DefaultOnConfig()
	base.FMP.LambdaS = 0
	m, err := fmp.On(out.Model, ds.Graph, ds.Sens, base, p.Task.Phase)
	if err != nil {
		return nil, err
	}
	fc := fmp.DefaultFrontierConfig()
	fc.LambdaS, fc.Rule, fc.Test = []float64{0, 1}, rule, ds.Split.Test
	start := time.Now()
	f, err := fmp.NewFrontier(context.Background(), m, p.Task, fc)
	if err != nil {
		return nil, err
	}
	best := f.Best()
	post := time.Since(start)
	chosen, err := f.Model()
	if err != nil {
		return nil, err
	}
	fpred, err := train.Predict(chosen, p.Task, nil)
	if err != nil {
		return nil, err
	}
	rs = append(rs, runResult{backbone: b, method: "FMP", seed: int(seed), test: best.Test, epoch: epoch, post: post, points: len(f.Points),
		setting: fmt.Sprintf("λs=%g λf=%g", best.Config.LambdaS, best.Config.LambdaF), probs: fpred.Probs})
	pred, err := train.Predict(out.Model, p.Task, nil)
	if err != nil {
		return nil, err
	}
	p1 := pred.Column(1)
	start = time.Now()
	thc := postprocess.DefaultThresholdsConfig()
	thc.Rule = rule
	th, err := postprocess.FitThresholds(p1, ds.Labels, ds.Sens, ds.Split.Val, thc)
	if err != nil {
		return nil, err
	}
	thProbs, err := th.OneHot(p1, ds.Sens, seed)
	if err != nil {
		return nil, err
	}
	thPost := time.Since(start)
	rep, err := metrics.Evaluate(thProbs, 2, ds.Labels, ds.Sens, ds.Split.Test, metrics.DefaultOptions())
	if err != nil {
		return nil, err
	}
	rs = append(rs, runResult{backbone: b, method: "thresholds", seed: int(seed), test: rep, epoch: epoch, post: thPost, points: th.Tried,
		setting: fmt.Sprintf("t0=%.3g t1=%.3g", th.T()[0], th.T()[1]), probs: thProbs})
	return rs, nil
}

func writeTable(w io.Writer, o *options, ds *datasets.Dataset, rule selection.Rule, all []runResult) {
	fmt.Fprintf(w, "%s: %d nodes, %d edges, %d test nodes; %d seeds, %d epochs, Adam lr %g, weight decay %g; rule: %s\n\n",
		o.dataset, ds.N(), ds.Graph.NumEdges(), len(ds.Split.Test), o.seeds, o.epochs, o.lr, o.wd, rule)
	fmt.Fprintln(w, "| backbone | method | test accuracy % | ΔDP % | ΔEO % | 95% intervals: accuracy; ΔDP; ΔEO | settings chosen |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|")
	for _, b := range o.backbones {
		for _, m := range methods {
			var acc, dp, eo []float64
			var settings []string
			var probs [][]float64
			for _, r := range all {
				if r.backbone == b && r.method == m {
					acc, dp, eo = append(acc, r.test.Accuracy), append(dp, r.test.DemographicParity), append(eo, r.test.EqualOpportunity)
					probs = append(probs, r.probs)
					if r.setting != "" {
						settings = append(settings, r.setting)
					}
				}
			}
			ci := "–"
			if iv, err := metrics.BootstrapMean(probs, 2, ds.Labels, ds.Sens, ds.Split.Test, metrics.DefaultOptions(), metrics.DefaultBootstrapConfig()); err == nil {
				ci = fmt.Sprintf("[%.1f, %.1f]; [%.1f, %.1f]; [%.1f, %.1f]", 100*iv.Accuracy.Lo, 100*iv.Accuracy.Hi,
					100*iv.DemographicParity.Lo, 100*iv.DemographicParity.Hi, 100*iv.EqualOpportunity.Lo, 100*iv.EqualOpportunity.Hi)
			}
			fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s |\n", b, m, ms(acc), ms(dp), ms(eo), ci, strings.Join(settings, "; "))
		}
	}
	fmt.Fprintln(w, "\n± is the standard deviation over seeds; the 95% intervals are a bootstrap over the test nodes (resampled within each group) of the seed-averaged metric (metrics.BootstrapMean).")
	fmt.Fprintln(w, "\nTime after training (mean over seeds), in the backbone's training epochs (each with its evaluation pass):")
	for _, b := range o.backbones {
		for _, m := range methods[1:] {
			var epoch, post time.Duration
			n, points := 0, 0
			for _, r := range all {
				if r.backbone == b && r.method == m {
					epoch, post, points = epoch+r.epoch, post+r.post, r.points
					n++
				}
			}
			if n == 0 || epoch == 0 {
				continue
			}
			fmt.Fprintf(w, "- %s %s (%d settings): %v, %.1f epochs of %v\n", b, m, points, (post / time.Duration(n)).Round(time.Millisecond),
				float64(post)/float64(epoch), (epoch / time.Duration(n)).Round(100*time.Microsecond))
		}
	}
}

// ms formats mean ± population std in percent.
func ms(v []float64) string {
	s, err := metrics.MeanStd(v)
	if err != nil {
		return "–"
	}
	return fmt.Sprintf("%.2f ± %.2f", 100*s.Mean, 100*s.Std)
}

func writeCSV(dir string, all []runResult) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f, err := os.Create(filepath.Join(dir, "runs.csv"))
	if err != nil {
		return err
	}
	w := csv.NewWriter(f)
	w.Write([]string{"backbone", "method", "seed", "test_accuracy", "test_dp", "test_eo", "setting"})
	for _, r := range all {
		w.Write([]string{r.backbone, r.method, strconv.Itoa(r.seed),
			strconv.FormatFloat(r.test.Accuracy, 'f', 6, 64), strconv.FormatFloat(r.test.DemographicParity, 'f', 6, 64),
			strconv.FormatFloat(r.test.EqualOpportunity, 'f', 6, 64), r.setting})
	}
	w.Flush()
	if err := w.Error(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
