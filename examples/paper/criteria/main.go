// Command criteria compares FMP (its frontier, chosen on validation data)
// with per-group thresholds (deterministic and randomised, the
// post-processing of fairlearn's ThresholdOptimizer) under several
// fairness criteria, on a data set with two or more sensitive groups.
//
// Each seed trains the backbone once with the paper's protocol; then, for
// every criterion, the same rule (the fairest validation value of the
// criterion within -max-acc-loss accuracy points of the backbone) chooses
// FMP's setting on one frontier (λs ∈ {0, 1} × 20 values of λf) and fits
// the thresholds, whose constraint is the criterion. The test accuracy and
// criterion are reported as mean ± std over seeds, with the 95% bootstrap
// interval of the seed-averaged metric (metrics.BootstrapMean), and FMP is
// compared with each kind of thresholds by a paired bootstrap of the
// difference (the same resampled test nodes for both methods).
//
// Usage (from the lab folder):
//
//	go run ./criteria -dataset bail -out criteria/results/bail
//	go run ./criteria -dataset bail -intersect MALE -out criteria/results/bail_white_male
//	go run ./criteria -dataset synthetic -groups 3 -out criteria/results/synthetic3
//	go run ./criteria -dataset synthetic -groups 2 -second -out criteria/results/synthetic2_second
//
// The table goes to stdout; -out DIR also writes runs.csv (one row per
// criterion, method and seed) and table.md. Progress goes to stderr (-q
// for none).
package main

import (
	"context"
	"encoding/csv"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/fairmp/fairmp/examples/paper/internal/exp"
	"github.com/fairmp/fairmp/fmp"
	"github.com/fairmp/fairmp/graph/datasets"
	"github.com/fairmp/fairmp/internal/blas"
	"github.com/fairmp/fairmp/internal/cli"
	"github.com/fairmp/fairmp/layers/postprocess"
	"github.com/fairmp/fairmp/layers/train"
	"github.com/fairmp/fairmp/metrics"
	"github.com/fairmp/fairmp/metrics/selection"
)

func main() {
	blas.Default() // fairmp's BLAS before any graph runs (see internal/blas)
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "criteria:", err)
		}
		os.Exit(2)
	}
}

type options struct {
	data, dataset, out, backbone string
	intersect                    []string
	groups, synthN               int
	second                       bool
	seeds, epochs, resamples     int
	lr, wd, maxLoss              float64
	criteria                     []metrics.Criterion
	quiet                        bool
}

// syntheticFracs are the group fractions of the generated graphs.
var syntheticFracs = map[int][]float64{
	2: {0.7, 0.3},
	3: {0.5, 0.3, 0.2},
	4: {0.4, 0.3, 0.2, 0.1},
}

func parseFlags(args []string, stderr io.Writer) (*options, error) {
	o := &options{}
	fs := flag.NewFlagSet("criteria", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var intersect, crits string
	fs.StringVar(&o.data, "data", os.Getenv("FAIRMP_DATA"), "folder holding the data sets' folders (default $FAIRMP_DATA)")
	fs.StringVar(&o.dataset, "dataset", "synthetic", "synthetic (generated, no files) or a preset: "+strings.Join(datasets.Presets, ", "))
	fs.StringVar(&intersect, "intersect", "", "further sensitive columns of the preset, intersected with its own (bail: MALE)")
	fs.IntVar(&o.groups, "groups", 3, "groups of the generated graph: 2 (fractions 0.7/0.3), 3 (0.5/0.3/0.2) or 4 (0.4/0.3/0.2/0.1)")
	fs.IntVar(&o.synthN, "synthetic-nodes", 4000, "nodes of the generated graph")
	fs.BoolVar(&o.second, "second", false, "intersect the generated graph's attribute with a second binary one, drawn per node with P(b=1 | y) = 0.3 + 0.4·y (seed 1), in neither the features nor the edges")
	fs.StringVar(&o.backbone, "backbone", "gcn", "backbone: mlp, gcn, sgc, appnp, gat, jknet")
	fs.IntVar(&o.seeds, "seeds", 5, "seeds (model seeds 1..seeds)")
	fs.IntVar(&o.epochs, "epochs", 300, "training epochs (best-validation epoch kept)")
	fs.Float64Var(&o.lr, "lr", 1e-3, "Adam learning rate")
	fs.Float64Var(&o.wd, "weight-decay", 1e-5, "Adam weight decay")
	fs.Float64Var(&o.maxLoss, "max-acc-loss", 1, "rule: the fairest validation criterion within this many accuracy points of the backbone's")
	fs.StringVar(&crits, "criteria", "dp,eo,eodds,dp-ratio", "criteria, comma-separated: "+strings.Join(metrics.CriterionNames(), ", "))
	fs.IntVar(&o.resamples, "resamples", 1000, "bootstrap resamples of the test nodes")
	fs.StringVar(&o.out, "out", "", "folder for runs.csv and table.md (empty: none)")
	fs.BoolVar(&o.quiet, "q", false, "no progress on stderr")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	for _, name := range cli.SplitList(crits) {
		c, err := metrics.ParseCriterion(name)
		if err != nil {
			return nil, fmt.Errorf("-criteria: %w", err)
		}
		o.criteria = append(o.criteria, c)
	}
	o.intersect = cli.SplitList(intersect)
	switch {
	case len(o.criteria) == 0:
		return nil, fmt.Errorf("-criteria %q names no criterion", crits)
	case o.backbone == "fmp" || !slices.Contains(exp.Models, o.backbone):
		return nil, fmt.Errorf("-backbone %q, want one of mlp, gcn, sgc, appnp, gat, jknet", o.backbone)
	case o.seeds < 1:
		return nil, fmt.Errorf("-seeds %d, want ≥ 1", o.seeds)
	case o.epochs < 1:
		return nil, fmt.Errorf("-epochs %d, want ≥ 1", o.epochs)
	case !(o.lr > 0) || !(o.wd >= 0):
		return nil, fmt.Errorf("-lr %v -weight-decay %v, want a positive rate and a decay ≥ 0", o.lr, o.wd)
	case !(o.maxLoss > 0 && o.maxLoss < 50):
		return nil, fmt.Errorf("-max-acc-loss %v, want accuracy points in (0, 50): 1 is one point", o.maxLoss)
	case o.resamples < 100:
		return nil, fmt.Errorf("-resamples %d, want ≥ 100", o.resamples)
	case o.dataset == "synthetic" && syntheticFracs[o.groups] == nil:
		return nil, fmt.Errorf("-groups %d, want 2, 3 or 4", o.groups)
	case o.dataset == "synthetic" && o.synthN < 200:
		return nil, fmt.Errorf("-synthetic-nodes %d, want ≥ 200", o.synthN)
	case o.dataset == "synthetic" && len(o.intersect) > 0:
		return nil, fmt.Errorf("-intersect is for a preset's columns; the generated graph has one attribute (-groups), and -second adds another")
	case o.dataset != "synthetic" && o.second:
		return nil, fmt.Errorf("-second is for the generated graph; a preset intersects its own columns (-intersect)")
	case o.dataset != "synthetic" && o.data == "":
		return nil, fmt.Errorf("-dataset %s needs -data or $FAIRMP_DATA", o.dataset)
	}
	return o, nil
}

// load returns the data set: a preset with the paper's folding, its
// attribute intersected with -intersect, or the generated graph.
func load(o *options) (*datasets.Dataset, error) {
	if o.dataset == "synthetic" {
		c := datasets.DefaultSyntheticConfig()
		c.N, c.GroupFrac, c.GroupFracs = o.synthN, 0, syntheticFracs[o.groups]
		ds, err := datasets.Synthetic(c)
		if err != nil || !o.second {
			return ds, err
		}
		// The second attribute, coupled with the label only.
		rng := rand.New(rand.NewSource(1))
		b := make([]int, ds.N())
		for i, y := range ds.Labels {
			if rng.Float64() < 0.3+0.4*float64(y) {
				b[i] = 1
			}
		}
		sens, combos, err := datasets.Intersect(ds.Sens, b)
		if err != nil {
			return nil, err
		}
		ds.Sens, ds.GroupNames = sens, make([]string, len(combos))
		for g, c := range combos {
			ds.GroupNames[g] = fmt.Sprintf("s=%d & b=%d", c[0], c[1])
		}
		return ds, nil
	}
	opts := datasets.PaperOptions()
	opts.IntersectSens = o.intersect
	return datasets.Load(o.data, o.dataset, opts)
}

// The methods, in table order.
var methods = []string{"backbone", "FMP", "thresholds", "thresholds (randomised)"}

// runResult is one seed, criterion and method on the test nodes.
type runResult struct {
	crit    metrics.Criterion
	method  string
	seed    int
	acc     float64
	value   float64 // the criterion on the test nodes
	defined bool
	setting string
	// probs are the decisions' n × 2 probabilities (one-hot rows for the
	// thresholds), for the bootstrap intervals.
	probs []float64
}

func run(args []string, stdout, stderr io.Writer) error {
	o, err := parseFlags(args, stderr)
	if err != nil {
		return err
	}
	start := time.Now()
	ds, err := load(o)
	if err != nil {
		return err
	}
	exp.PrintWarnings(stderr, ds)
	tc := exp.DefaultTrainOptions()
	tc.Epochs, tc.Adam.LR, tc.Adam.WeightDecay = o.epochs, o.lr, o.wd
	var all []runResult
	for seed := 1; seed <= o.seeds; seed++ {
		if !o.quiet {
			eta := ""
			if seed > 1 {
				eta = fmt.Sprintf(", about %v left", (time.Since(start) / time.Duration(seed-1) * time.Duration(o.seeds-seed+1)).Round(time.Second))
			}
			fmt.Fprintf(stderr, "[%d/%d] %s seed %d (%v elapsed%s)\n", seed, o.seeds, o.backbone, seed, time.Since(start).Round(time.Second), eta)
		}
		rs, err := runSeed(o, ds, int64(seed), tc)
		if err != nil {
			return fmt.Errorf("seed %d: %w", seed, err)
		}
		all = append(all, rs...)
	}
	var table strings.Builder
	if err := writeTable(&table, o, ds, all, time.Since(start)); err != nil {
		return err
	}
	io.WriteString(stdout, table.String())
	if o.out == "" {
		return nil
	}
	if err := os.MkdirAll(o.out, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(o.out, "table.md"), []byte(table.String()), 0o644); err != nil {
		return err
	}
	return writeCSV(filepath.Join(o.out, "runs.csv"), all)
}

// runSeed trains the backbone with seed and evaluates every method under
// every criterion.
func runSeed(o *options, ds *datasets.Dataset, seed int64, tc exp.TrainOptions) ([]runResult, error) {
	spec := exp.DefaultSpec(o.backbone)
	spec.Seed = seed
	p, err := exp.NewProblem(ds, spec.Dtype)
	if err != nil {
		return nil, err
	}
	out, err := exp.Run(p, spec, tc)
	if err != nil {
		return nil, err
	}
	loss := o.maxLoss / 100
	test := ds.Split.Test
	var rs []runResult
	add := func(c metrics.Criterion, method, setting string, probs []float64) error {
		r, err := metrics.Evaluate(probs, 2, ds.Labels, ds.Sens, test, metrics.DefaultOptions())
		if err != nil {
			return fmt.Errorf("%s under %s: %w", method, c, err)
		}
		v, verr := c.Of(r)
		rs = append(rs, runResult{crit: c, method: method, seed: int(seed), acc: r.Accuracy, value: v, defined: verr == nil, setting: setting, probs: probs})
		return nil
	}
	// One frontier on the trained backbone (λs = 0 as the base, so that
	// its reference, λf = 0, is the backbone); each criterion's rule
	// chooses on its validation points.
	base := fmp.DefaultOnConfig()
	base.FMP.LambdaS = 0
	m, err := fmp.On(out.Model, ds.Graph, ds.Sens, base, p.Task.Phase)
	if err != nil {
		return nil, err
	}
	fc := fmp.DefaultFrontierConfig()
	// The frontier's own choice is not used (the reference setting always
	// meets this rule, so the frontier never fails for want of one).
	fc.LambdaS, fc.Rule, fc.Test = []float64{0, 1}, selection.FairestWithin(metrics.DPDifference, 0.01), test
	f, err := fmp.NewFrontier(context.Background(), m, p.Task, fc)
	if err != nil {
		return nil, err
	}
	pred, err := train.Predict(out.Model, p.Task, nil)
	if err != nil {
		return nil, err
	}
	p1 := pred.Column(1)
	for _, c := range o.criteria {
		rule := selection.FairestWithin(c, loss)
		if err := add(c, "backbone", "", out.Probs); err != nil {
			return nil, err
		}
		// FMP: the rule over the frontier's validation points.
		cands := make([]selection.Candidate, len(f.Points))
		for k, pt := range f.Points {
			cands[k] = rule.Candidate(pt.Val)
		}
		k, err := selection.Choose(cands, rule.Candidate(f.Reference.Val), rule)
		if err != nil {
			return nil, fmt.Errorf("FMP under %s: %w", c, err)
		}
		chosen, err := m.WithFMP(f.Points[k].Config)
		if err != nil {
			return nil, err
		}
		fp, err := train.Predict(chosen, p.Task, nil)
		if err != nil {
			return nil, err
		}
		cfg := f.Points[k].Config
		if err := add(c, "FMP", fmt.Sprintf("λs=%g λf=%g", cfg.LambdaS, cfg.LambdaF), fp.Probs); err != nil {
			return nil, err
		}
		// Thresholds with the criterion as their constraint.
		for _, randomized := range []bool{false, true} {
			name := "thresholds"
			if randomized {
				name = "thresholds (randomised)"
			}
			thc := postprocess.DefaultThresholdsConfig()
			thc.Rule, thc.Randomized = rule, randomized
			th, err := postprocess.FitThresholds(p1, ds.Labels, ds.Sens, ds.Split.Val, thc)
			if err != nil {
				return nil, fmt.Errorf("%s under %s: %w", name, c, err)
			}
			oh, err := th.OneHot(p1, ds.Sens, seed)
			if err != nil {
				return nil, err
			}
			if err := add(c, name, thresholdText(th), oh); err != nil {
				return nil, err
			}
		}
	}
	return rs, nil
}

// thresholdText writes the groups' thresholds, group 0 first, separated
// by "/": a randomised group's two thresholds as "t:t2", and "*" when it
// also decides a share at random (equalized odds).
func thresholdText(th *postprocess.Thresholds) string {
	var parts []string
	for _, g := range th.Groups {
		s := strconv.FormatFloat(g.T, 'g', 3, 64)
		if g.P2 != 0 {
			s += ":" + strconv.FormatFloat(g.T2, 'g', 3, 64)
		}
		if g.PConstant != 0 {
			s += "*"
		}
		parts = append(parts, s)
	}
	return "t=" + strings.Join(parts, "/")
}

// summary is one criterion and method over the seeds.
type summary struct {
	acc, value     metrics.Stat
	accIv, valueIv metrics.Interval
	defined        bool
	settings       []string
}

func summarize(o *options, ds *datasets.Dataset, all []runResult, c metrics.Criterion, method string) (summary, error) {
	var s summary
	var acc, val []float64
	var probs [][]float64
	s.defined = true
	for _, r := range all {
		if r.crit == c && r.method == method {
			acc, val, probs = append(acc, r.acc), append(val, r.value), append(probs, r.probs)
			s.defined = s.defined && r.defined
			if r.setting != "" {
				s.settings = append(s.settings, r.setting)
			}
		}
	}
	var err error
	if s.acc, err = metrics.MeanStd(acc); err != nil {
		return s, err
	}
	if s.defined {
		if s.value, err = metrics.MeanStd(val); err != nil {
			return s, err
		}
	}
	bc := metrics.DefaultBootstrapConfig()
	bc.Resamples = o.resamples
	iv, err := metrics.BootstrapMean(probs, 2, ds.Labels, ds.Sens, ds.Split.Test, metrics.DefaultOptions(), bc)
	if err != nil {
		return s, err
	}
	s.accIv = iv.Accuracy
	s.valueIv, _ = iv.Of(c)
	return s, nil
}

// fmtValue formats a criterion's value: a difference in percent, a ratio
// as a number.
func fmtValue(c metrics.Criterion, v float64) string {
	if c.IsRatio() {
		return fmt.Sprintf("%.3f", v)
	}
	return fmt.Sprintf("%.2f", 100*v)
}

func fmtInterval(c metrics.Criterion, iv metrics.Interval) string {
	if iv.Used == 0 {
		return "–"
	}
	if c.IsRatio() {
		return fmt.Sprintf("[%.3f, %.3f]", iv.Lo, iv.Hi)
	}
	return fmt.Sprintf("[%.1f, %.1f]", 100*iv.Lo, 100*iv.Hi)
}

func writeTable(w io.Writer, o *options, ds *datasets.Dataset, all []runResult, took time.Duration) error {
	G := 0
	for _, s := range ds.Sens {
		G = max(G, s+1)
	}
	name := o.dataset
	if o.dataset == "synthetic" {
		name = fmt.Sprintf("generated graph, %d groups", o.groups)
	}
	if len(o.intersect) > 0 {
		name += " × " + strings.Join(o.intersect, " × ")
	}
	if o.second {
		name += " × a second attribute b"
	}
	fmt.Fprintf(w, "%s: %d nodes, %d edges, %d groups, %d validation and %d test nodes; backbone %s, %d seeds, %d epochs, Adam lr %g, weight decay %g; rule: the fairest validation criterion within %g accuracy points of the backbone; %v in all\n\n",
		name, ds.N(), ds.Graph.NumEdges(), G, len(ds.Split.Val), len(ds.Split.Test), o.backbone, o.seeds, o.epochs, o.lr, o.wd, o.maxLoss, took.Round(time.Second))
	fmt.Fprintln(w, "| criterion | method | test accuracy % | 95% interval | test criterion | 95% interval | settings chosen (first seeds) |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|")
	sums := map[string]summary{}
	for _, c := range o.criteria {
		for _, m := range methods {
			s, err := summarize(o, ds, all, c, m)
			if err != nil {
				return fmt.Errorf("%s, %s: %w", c, m, err)
			}
			sums[c.Name()+"/"+m] = s
			v := "undefined in some seed"
			if s.defined {
				v = fmt.Sprintf("%s ± %s", fmtValue(c, s.value.Mean), fmtValue(c, s.value.Std))
			}
			settings := s.settings
			if len(settings) > 2 {
				settings = append(settings[:2:2], "…")
			}
			fmt.Fprintf(w, "| %s | %s | %.2f ± %.2f | [%.1f, %.1f] | %s | %s | %s |\n", c.Title(), m, 100*s.acc.Mean, 100*s.acc.Std,
				100*s.accIv.Lo, 100*s.accIv.Hi, v, fmtInterval(c, s.valueIv), strings.Join(settings, "; "))
		}
	}
	fmt.Fprintln(w, "\nDifferences are in points; ratios as numbers. ± is the standard deviation over seeds; the intervals are a bootstrap over the test nodes (resampled within each group) of the seed-averaged metric (metrics.BootstrapMean). Thresholds: group 0's first; \"a:b\" mixes two, \"*\" also decides a share at random. Randomised thresholds draw their test decisions with the run's seed.")
	fmt.Fprintln(w, "\nFMP against the thresholds: the seed-averaged test difference FMP − thresholds, with its 95% interval from a paired bootstrap (both methods on the same resampled test nodes). \"Beyond the noise\" means the interval excludes 0.")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| criterion | against | criterion: FMP − thresholds [95%] | accuracy points: FMP − thresholds [95%] | fairer (beyond the noise?) | more accurate (beyond the noise?) |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|")
	for _, c := range o.criteria {
		for _, other := range methods[2:] {
			dv, dvOK := pairedDiff(o, ds, all, c, "FMP", other, true)
			da, _ := pairedDiff(o, ds, all, c, "FMP", other, false)
			verdict := func(d diff, higherBetter bool) string {
				if !d.ok {
					return "–"
				}
				win := "FMP"
				if (d.point > 0) != higherBetter {
					win = "thresholds"
				}
				if d.point == 0 {
					return "tie"
				}
				if d.lo > 0 || d.hi < 0 {
					return win + " (yes)"
				}
				return win + " (no)"
			}
			vs := "–"
			if dvOK {
				vs = fmt.Sprintf("%s [%s, %s]", signed(c, dv.point), signed(c, dv.lo), signed(c, dv.hi))
			}
			fmt.Fprintf(w, "| %s | %s | %s | %+.2f [%+.2f, %+.2f] | %s | %s |\n", c.Title(), other, vs, 100*da.point, 100*da.lo, 100*da.hi,
				verdict(dv, c.IsRatio()), verdict(da, true))
		}
	}
	return nil
}

func signed(c metrics.Criterion, v float64) string {
	if c.IsRatio() {
		return fmt.Sprintf("%+.3f", v)
	}
	return fmt.Sprintf("%+.2f", 100*v)
}

// diff is a paired bootstrap interval of a seed-averaged difference.
type diff struct {
	point, lo, hi float64
	used          int
	ok            bool
}

// pairedDiff returns the seed-averaged test difference a − b of the
// criterion c (crit) or of the accuracy (!crit) between methods a and b,
// with a 95% percentile interval from resampling the test nodes within
// each group (the same nodes for both methods and every seed). Resamples
// on which the criterion is undefined for some run are skipped.
func pairedDiff(o *options, ds *datasets.Dataset, all []runResult, c metrics.Criterion, a, b string, crit bool) (diff, bool) {
	var da, db [][]int // decisions per seed
	for _, r := range all {
		if r.crit != c {
			continue
		}
		d := make([]int, len(r.probs)/2)
		for i := range d {
			if r.probs[2*i+1] > 0.5 {
				d[i] = 1
			}
		}
		switch r.method {
		case a:
			da = append(da, d)
		case b:
			db = append(db, d)
		}
	}
	if len(da) == 0 || len(da) != len(db) {
		return diff{}, false
	}
	// The test nodes with a known label and group, by group.
	var members [][]int
	for _, i := range ds.Split.Test {
		s := ds.Sens[i]
		if s < 0 || ds.Labels[i] < 0 {
			continue
		}
		for len(members) <= s {
			members = append(members, nil)
		}
		members[s] = append(members[s], i)
	}
	var nodes []int
	for _, m := range members {
		nodes = append(nodes, m...)
	}
	measure := func(dec [][]int, idx []int) (float64, bool) {
		sum := 0.0
		pred := make([]int, len(idx))
		labels := make([]int, len(idx))
		sens := make([]int, len(idx))
		for _, d := range dec {
			correct := 0
			for k, i := range idx {
				pred[k], labels[k], sens[k] = d[i], ds.Labels[i], ds.Sens[i]
				if d[i] == ds.Labels[i] {
					correct++
				}
			}
			if !crit {
				sum += float64(correct) / float64(len(idx))
				continue
			}
			v, err := c.Measure(pred, labels, sens)
			if err != nil {
				return 0, false
			}
			sum += v
		}
		return sum / float64(len(dec)), true
	}
	va, okA := measure(da, nodes)
	vb, okB := measure(db, nodes)
	if !okA || !okB {
		return diff{}, false
	}
	rng := rand.New(rand.NewSource(1))
	var ds2 []float64
	idx := make([]int, 0, len(nodes))
	for range o.resamples {
		idx = idx[:0]
		for _, m := range members {
			for range m {
				idx = append(idx, m[rng.Intn(len(m))])
			}
		}
		x, okX := measure(da, idx)
		y, okY := measure(db, idx)
		if okX && okY {
			ds2 = append(ds2, x-y)
		}
	}
	if len(ds2) == 0 {
		return diff{}, false
	}
	iv := metrics.Percentile(ds2, va-vb, 0.95)
	return diff{point: iv.Point, lo: iv.Lo, hi: iv.Hi, used: iv.Used, ok: true}, true
}

func writeCSV(path string, all []runResult) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := csv.NewWriter(f)
	w.Write([]string{"criterion", "method", "seed", "test_accuracy", "test_criterion", "setting"})
	for _, r := range all {
		v := ""
		if r.defined {
			v = strconv.FormatFloat(r.value, 'f', 6, 64)
		}
		w.Write([]string{r.crit.Name(), r.method, strconv.Itoa(r.seed), strconv.FormatFloat(r.acc, 'f', 6, 64), v, r.setting})
	}
	w.Flush()
	if err := w.Error(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
