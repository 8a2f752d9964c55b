// Command multiclass measures fair c-class node classification on the
// generated graph (issue 57): the backbone (an MLP), FMP on it with the
// frontier's rule judged for c classes, and the post-processing of
// per-group class offsets (layers/postprocess.FitClassOffsets); and the
// cost of an FMP training epoch at c classes against two. See README.md.
package main

import (
	"context"
	"encoding/csv"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/fairmp/fairmp/fmp"
	"github.com/fairmp/fairmp/graph/datasets"
	"github.com/fairmp/fairmp/internal/blas"
	"github.com/fairmp/fairmp/layers"
	"github.com/fairmp/fairmp/layers/postprocess"
	"github.com/fairmp/fairmp/layers/train"
	"github.com/fairmp/fairmp/metrics"
	"github.com/fairmp/fairmp/metrics/selection"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

func main() {
	blas.Default()
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "multiclass:", err)
		os.Exit(1)
	}
}

type options struct {
	task         string // "synthetic" or "credit-education"
	data         string // -data: the folder of the shipped data sets
	credit       *datasets.Dataset
	classes      []int
	seeds        int
	n            int
	epochs       int
	loss         float64
	resamples    int
	timingEpochs int
	out          string
}

func parseFlags(args []string, stderr io.Writer) (*options, error) {
	fs := flag.NewFlagSet("multiclass", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var (
		task    = fs.String("task", "synthetic", `"synthetic" (the generated graph with -classes) or "credit-education" (Credit's EducationLevel, 4 classes, as the label; sensitive Age; the shipped split: a task fairmp defines, not a published benchmark)`)
		data    = fs.String("data", os.Getenv("FAIRMP_DATA"), "folder of the shipped data sets, for -task credit-education (default $FAIRMP_DATA)")
		classes = fs.String("classes", "3,5", "comma-separated class counts, each in 3..8 (-task synthetic)")
		seeds   = fs.Int("seeds", 5, "graphs and models per class count (seeds 1..N)")
		n       = fs.Int("n", 2000, "nodes per graph")
		epochs  = fs.Int("epochs", 300, "training epochs")
		loss    = fs.Float64("max-acc-loss", 1, "the rule of FMP's frontier and of the offsets: the lowest validation c-class ΔDP within this many accuracy points of the reference")
		res     = fs.Int("resamples", 1000, "bootstrap resamples of the test intervals")
		timing  = fs.Int("timing-epochs", 30, "FMP training epochs timed at c = 2 and the largest -classes (0: no timing)")
		out     = fs.String("out", ".", "directory for multiclass.csv")
	)
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	o := &options{task: *task, data: *data, seeds: *seeds, n: *n, epochs: *epochs, loss: *loss / 100, resamples: *res, timingEpochs: *timing, out: *out}
	switch o.task {
	case "synthetic":
	case "credit-education":
		if o.data == "" {
			return nil, fmt.Errorf("-task credit-education needs the data sets' folder: give -data DIR or set FAIRMP_DATA")
		}
		ds, err := creditEducation(o.data)
		if err != nil {
			return nil, fmt.Errorf("-task credit-education: %w", err)
		}
		o.credit, o.classes = ds, []int{ds.NumClasses()}
		return o, checkOptions(o, *loss)
	default:
		return nil, fmt.Errorf("-task %q: want synthetic or credit-education", o.task)
	}
	for _, s := range strings.Split(*classes, ",") {
		c, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || c < 3 || c > 8 {
			return nil, fmt.Errorf("-classes: %q is not a class count in 3..8", s)
		}
		o.classes = append(o.classes, c)
	}
	return o, checkOptions(o, *loss)
}

// checkOptions checks the numeric flags; loss is -max-acc-loss as given.
func checkOptions(o *options, loss float64) error {
	switch {
	case o.seeds < 1:
		return fmt.Errorf("-seeds %d: want at least 1", o.seeds)
	case o.n < 100:
		return fmt.Errorf("-n %d: want at least 100 nodes", o.n)
	case o.epochs < 1:
		return fmt.Errorf("-epochs %d: want at least 1", o.epochs)
	case !(o.loss > 0 && o.loss < 0.5):
		return fmt.Errorf("-max-acc-loss %v: want accuracy points in (0, 50)", loss)
	case o.resamples < 100:
		return fmt.Errorf("-resamples %d: want at least 100", o.resamples)
	case o.timingEpochs < 0:
		return fmt.Errorf("-timing-epochs %d: want 0 or more", o.timingEpochs)
	}
	return nil
}

// dataConfig is the generated graph with c classes: the default graph's
// knobs, no binary LabelBias, and a class bias spread evenly from
// −0.6·2/c to +0.6·2/c (class k's rate differs between the groups by
// ClassBias[k]; c = 3: −0.4, 0, 0.4; c = 5: −0.24, −0.12, 0, 0.12, 0.24).
func dataConfig(c, n int, seed int64) datasets.SyntheticConfig {
	cfg := datasets.DefaultSyntheticConfig()
	cfg.N, cfg.Classes, cfg.LabelBias, cfg.Seed = n, c, 0, seed
	cfg.ClassBias = make([]float64, c)
	for k := range c {
		// Evenly from −0.6·(2/c) to +0.6·(2/c): within each rate's bound.
		cfg.ClassBias[k] = 0.6 * (2 / float64(c)) * (-1 + 2*float64(k)/float64(c-1))
	}
	return cfg
}

// row is one method's test figures on one graph.
type row struct {
	classes  int
	seed     int64
	method   string
	rep      metrics.ClassReport
	iv       metrics.ClassIntervals
	setting  string
	valDP    float64
	valAcc   float64
	parityOK bool
}

var methods = []string{"backbone", "fmp", "offsets"}

func run(args []string, stdout, stderr io.Writer) error {
	o, err := parseFlags(args, stderr)
	if err != nil {
		return err
	}
	var rows []row
	for _, c := range o.classes {
		for s := 1; s <= o.seeds; s++ {
			start := time.Now()
			rs, err := oneGraph(o, c, int64(s))
			if err != nil {
				return fmt.Errorf("c = %d, seed %d: %w", c, s, err)
			}
			rows = append(rows, rs...)
			fmt.Fprintf(stderr, "c = %d, seed %d: %s\n", c, s, time.Since(start).Round(time.Millisecond))
		}
	}
	if err := writeCSV(filepath.Join(o.out, "multiclass.csv"), rows); err != nil {
		return err
	}
	printTable(stdout, o, rows)
	if o.timingEpochs > 0 {
		if err := timing(stdout, o); err != nil {
			return err
		}
	}
	return nil
}

// model is an MLP, alone or under FMP, on a gorgonia graph of its own.
type model struct {
	task *train.Task
	mlp  layers.Model
	fmp  *fmp.Model
}

func newModel(ds *datasets.Dataset, c int, seed int64, withFMP bool, fc fmp.Config) (*model, error) {
	g := G.NewGraph()
	x, err := train.FeatureNode(g, tensor.Float64, ds.Features, ds.N(), ds.NumFeatures, "x")
	if err != nil {
		return nil, err
	}
	phase := layers.NewPhase()
	mc := layers.DefaultMLPConfig(ds.NumFeatures, c)
	mc.Seed = seed
	mlp, err := layers.NewMLP(g, nil, mc, phase)
	if err != nil {
		return nil, err
	}
	m := &model{mlp: mlp, task: &train.Task{Graph: g, X: x, Labels: ds.Labels, Train: ds.Split.Train, Val: ds.Split.Val, Classes: c, Phase: phase}}
	if withFMP {
		oc := fmp.DefaultOnConfig()
		oc.FMP = fc
		if m.fmp, err = fmp.On(mlp, ds.Graph, ds.Sens, oc, phase); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// creditEducation is the real c-class task: Credit's node table with
// EducationLevel (0..3, 4 classes) as the label and Age as the sensitive
// attribute, the shipped edges and split, the other columns as features
// (min-max scaled; the default-payment label NoDefaultNextMonth among
// them). A task fairmp defines, not a published benchmark.
func creditEducation(dir string) (*datasets.Dataset, error) {
	fc := datasets.DefaultFilesConfig()
	fc.Nodes = filepath.Join(dir, "credit", "credit.csv")
	fc.Edges = filepath.Join(dir, "credit", "credit_edges.txt")
	fc.Split = filepath.Join(dir, "credit", "split.json")
	fc.LabelColumn, fc.SensColumn, fc.Classes = "EducationLevel", "Age", 4
	ds, err := datasets.LoadFiles(fc)
	if err != nil {
		return nil, err
	}
	ds.Name = "credit-education"
	return ds, nil
}

func oneGraph(o *options, c int, seed int64) ([]row, error) {
	ds := o.credit // the real task: one graph, seeds vary the models
	if ds == nil {
		var err error
		if ds, err = datasets.Synthetic(dataConfig(c, o.n, seed)); err != nil {
			return nil, err
		}
	}
	tc := train.DefaultConfig()
	tc.Epochs = o.epochs
	opt := metrics.DefaultOptions()
	opt.AllowUndefined = true
	bc := metrics.DefaultBootstrapConfig()
	bc.Resamples, bc.Seed = o.resamples, seed
	rule := selection.FairestWithin(metrics.DPDifference, o.loss)
	test := ds.Split.Test
	judge := func(method string, probs []float64) (row, error) {
		r := row{classes: c, seed: seed, method: method}
		var err error
		if r.rep, err = metrics.EvaluateClasses(probs, c, ds.Labels, ds.Sens, test, opt); err != nil {
			return r, fmt.Errorf("%s: %w", method, err)
		}
		if r.iv, err = metrics.BootstrapClasses(probs, c, ds.Labels, ds.Sens, test, opt, bc); err != nil {
			return r, fmt.Errorf("%s: %w", method, err)
		}
		return r, nil
	}

	// The backbone: an MLP alone.
	bb, err := newModel(ds, c, seed, false, fmp.Config{})
	if err != nil {
		return nil, err
	}
	if _, err := train.Fit(context.Background(), bb.mlp, bb.task, tc); err != nil {
		return nil, fmt.Errorf("backbone: %w", err)
	}
	pred, err := train.Predict(bb.mlp, bb.task, nil)
	if err != nil {
		return nil, err
	}
	rb, err := judge("backbone", pred.Probs)
	if err != nil {
		return nil, err
	}
	if v, err := metrics.EvaluateClasses(pred.Probs, c, ds.Labels, ds.Sens, ds.Split.Val, opt); err == nil {
		rb.valDP, rb.valAcc = v.DemographicParity, v.Accuracy
	}

	// FMP on an MLP: FitTwoStage, then the frontier's rule for c classes.
	fm, err := newModel(ds, c, seed, true, fmp.DefaultConfig())
	if err != nil {
		return nil, err
	}
	if _, err := fm.fmp.FitTwoStage(context.Background(), fm.task, tc); err != nil {
		return nil, fmt.Errorf("fmp: %w", err)
	}
	fc := fmp.DefaultFrontierConfig()
	fc.LambdaS = []float64{0, 1}
	fc.Rule = rule
	f, err := fmp.NewFrontier(context.Background(), fm.fmp, fm.task, fc)
	if err != nil && f == nil {
		return nil, fmt.Errorf("fmp frontier: %w", err)
	}
	best, err := f.Model()
	if err != nil {
		return nil, err
	}
	fp, err := train.Predict(best, fm.task, nil)
	if err != nil {
		return nil, err
	}
	rf, err := judge("fmp", fp.Probs)
	if err != nil {
		return nil, err
	}
	bp := f.Best()
	rf.setting = fmt.Sprintf("λs %g λf %g", bp.Config.LambdaS, bp.Config.LambdaF)
	rf.valDP, rf.valAcc = bp.ValClasses.DemographicParity, bp.ValClasses.Accuracy

	// The post-processing of the backbone's probabilities.
	oc := postprocess.DefaultClassOffsetsConfig()
	oc.Rule = rule
	off, err := postprocess.FitClassOffsets(pred.Probs, c, ds.Labels, ds.Sens, ds.Split.Val, oc)
	if err != nil {
		return nil, fmt.Errorf("offsets: %w", err)
	}
	oh, err := off.OneHot(pred.Probs, ds.Sens)
	if err != nil {
		return nil, err
	}
	ro, err := judge("offsets", oh)
	if err != nil {
		return nil, err
	}
	ro.valDP, ro.valAcc, ro.parityOK = off.Val.Fairness, off.Val.Accuracy, len(off.Diagnostics()) == 0
	ro.setting = fmt.Sprintf("%d sweeps", off.Sweeps)
	return []row{rb, rf, ro}, nil
}

func writeCSV(path string, rows []row) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".multiclass-*.csv")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	w := csv.NewWriter(tmp)
	g := func(v float64) string { return strconv.FormatFloat(v, 'g', 6, 64) }
	w.Write([]string{"classes", "seed", "method", "setting", "val_accuracy", "val_dp", "accuracy", "accuracy_lo", "accuracy_hi",
		"macro_f1", "macro_f1_lo", "macro_f1_hi", "dp", "dp_lo", "dp_hi", "eo", "eo_lo", "eo_hi"})
	for _, r := range rows {
		dp, _ := r.iv.Of(metrics.DPDifference)
		eo, _ := r.iv.Of(metrics.EODifference)
		w.Write([]string{strconv.Itoa(r.classes), strconv.FormatInt(r.seed, 10), r.method, r.setting, g(r.valAcc), g(r.valDP),
			g(r.rep.Accuracy), g(r.iv.Accuracy.Lo), g(r.iv.Accuracy.Hi),
			g(r.rep.MacroF1), g(r.iv.MacroF1.Lo), g(r.iv.MacroF1.Hi),
			g(r.rep.DemographicParity), g(dp.Lo), g(dp.Hi),
			g(r.rep.EqualOpportunity), g(eo.Lo), g(eo.Hi)})
	}
	w.Flush()
	if err := w.Error(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// printTable prints, per class count and method, the mean over seeds of
// each test figure ± its standard deviation over seeds, and the mean
// half-width of the per-seed 95% bootstrap interval in brackets.
func printTable(w io.Writer, o *options, rows []row) {
	data := fmt.Sprintf("Generated graph, %d nodes", o.n)
	if o.credit != nil {
		data = fmt.Sprintf("Credit, EducationLevel as the label (%d classes), sensitive Age, %d nodes, the shipped split (%d/%d/%d)", o.credit.NumClasses(), o.credit.N(), len(o.credit.Split.Train), len(o.credit.Split.Val), len(o.credit.Split.Test))
	}
	fmt.Fprintf(w, "%s, %d seed(s), MLP %d epochs; rule: lowest validation c-class ΔDP within %.4g accuracy point(s). Test figures in %%: mean ± sd over seeds [mean half-width of the 95%% bootstrap interval].\n\n",
		data, o.seeds, o.epochs, 100*o.loss)
	fmt.Fprintln(w, "| c | method | accuracy | macro-F1 | ΔDP (c-class) | ΔEO (c-class) | val ΔDP |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|")
	for _, c := range o.classes {
		for _, m := range methods {
			var acc, f1, dp, eo, vdp, hAcc, hF1, hDP, hEO []float64
			for _, r := range rows {
				if r.classes != c || r.method != m {
					continue
				}
				di, _ := r.iv.Of(metrics.DPDifference)
				ei, _ := r.iv.Of(metrics.EODifference)
				acc, f1, dp, eo, vdp = append(acc, r.rep.Accuracy), append(f1, r.rep.MacroF1), append(dp, r.rep.DemographicParity), append(eo, r.rep.EqualOpportunity), append(vdp, r.valDP)
				hAcc, hF1 = append(hAcc, half(r.iv.Accuracy)), append(hF1, half(r.iv.MacroF1))
				hDP, hEO = append(hDP, half(di)), append(hEO, half(ei))
			}
			cell := func(v, h []float64) string {
				m, s := meanSD(v)
				hm, _ := meanSD(h)
				return fmt.Sprintf("%.1f ± %.1f [±%.1f]", 100*m, 100*s, 100*hm)
			}
			vm, _ := meanSD(vdp)
			fmt.Fprintf(w, "| %d | %s | %s | %s | %s | %s | %.1f |\n", c, m, cell(acc, hAcc), cell(f1, hF1), cell(dp, hDP), cell(eo, hEO), 100*vm)
		}
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "FMP's chosen settings and the offsets' sweeps, per graph:")
	for _, r := range rows {
		if r.method == "backbone" {
			continue
		}
		note := ""
		if r.method == "offsets" && !r.parityOK {
			note = " (validation parity not reached)"
		}
		fmt.Fprintf(w, "  c %d seed %d %-8s %s: val accuracy %.1f, val ΔDP %.1f%s\n", r.classes, r.seed, r.method, r.setting, 100*r.valAcc, 100*r.valDP, note)
	}
}

func half(iv metrics.Interval) float64 { return (iv.Hi - iv.Lo) / 2 }

func meanSD(v []float64) (float64, float64) {
	if len(v) == 0 {
		return math.NaN(), math.NaN()
	}
	m := 0.0
	for _, x := range v {
		m += x
	}
	m /= float64(len(v))
	if len(v) < 2 {
		return m, 0
	}
	s := 0.0
	for _, x := range v {
		s += (x - m) * (x - m)
	}
	return m, math.Sqrt(s / float64(len(v)-1))
}

// timing trains FMP on an MLP (λf 2, the default setting) for
// o.timingEpochs epochs at c = 2 and at the largest class count, on the
// same-sized graph, three times each, and prints the median time an epoch.
func timing(w io.Writer, o *options) error {
	cmax := slices.Max(o.classes)
	fmt.Fprintf(w, "\nFMP training epoch (MLP → FMP, λs 1, λf 2, K 10, full batch, %d nodes), median of 3 runs of %d epochs:\n", o.n, o.timingEpochs)
	var base float64
	for _, c := range []int{2, cmax} {
		cfg := dataConfig(max(c, 3), o.n, 1)
		if c == 2 {
			cfg = datasets.DefaultSyntheticConfig()
			cfg.N = o.n
		}
		ds, err := datasets.Synthetic(cfg)
		if err != nil {
			return err
		}
		var per []float64
		for range 3 {
			m, err := newModel(ds, c, 1, true, fmp.DefaultConfig())
			if err != nil {
				return err
			}
			tc := train.DefaultConfig()
			tc.Epochs = o.timingEpochs
			start := time.Now()
			if _, err := train.Fit(context.Background(), m.fmp, m.task, tc); err != nil {
				return err
			}
			per = append(per, float64(time.Since(start).Microseconds())/1000/float64(o.timingEpochs))
		}
		slices.Sort(per)
		ratio := ""
		if c == 2 {
			base = per[1]
		} else {
			ratio = fmt.Sprintf(" (%.2f× c = 2)", per[1]/base)
		}
		fmt.Fprintf(w, "  c = %d: %.1f ms an epoch%s (runs: %.1f, %.1f, %.1f ms)\n", c, per[1], ratio, per[0], per[1], per[2])
	}
	return nil
}
