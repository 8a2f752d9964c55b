package main

import (
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/fairmp/fairmp/fmp"
	"github.com/fairmp/fairmp/graph/datasets"
	"github.com/fairmp/fairmp/internal/cli"
	"github.com/fairmp/fairmp/internal/paired"
	"github.com/fairmp/fairmp/layers/fairness"
	"github.com/fairmp/fairmp/layers/postprocess"
	"github.com/fairmp/fairmp/layers/train"
	"github.com/fairmp/fairmp/metrics"
	"github.com/fairmp/fairmp/metrics/selection"
)

// -compare METHODS: each method and its own backbone on the same split
// and seeds, and the method's effect net of the backbone (package
// internal/paired, as examples/paper/baselines prints it).

// The -compare methods besides the registry's trained ones.
const (
	compareFMP        = "fmp"
	compareThresholds = "thresholds"
	// compareBackbone names the backbone's runs in the tables.
	compareBackbone = "backbone"
)

// compareTrained lists the registry's methods -compare trains: the
// pre-processing, in-training and architecture methods but FMP (which
// -compare puts on the trained backbone).
func compareTrained() []string {
	return append(fairness.Names(fairness.StagePre), append(fairness.Names(fairness.StageLoss), methodArchitectures()...)...)
}

// compareFlags reads -compare (list) and checks it against the other
// flags (set): -compare trains, so -model, -scores, -export and -method
// are refused, and it trains -backbone at -lr for -epochs without a
// search (-search-budget is refused). -seeds goes with -compare alone.
func (o *options) compareFlags(list string, set map[string]bool, hidden int) error {
	if list == "" {
		if set["seeds"] {
			return badInput("-seeds %d is the number of seeds -compare runs; give -compare, or leave -seeds out", o.seeds)
		}
		return nil
	}
	switch {
	case o.modelFile != "":
		return badInput("-compare trains each method and its backbone, and -model %s predicts with a saved model: give one of them", o.modelFile)
	case o.scores.file != "":
		return badInput("-compare trains each method and its backbone, and -scores %s debiases scores trained elsewhere: give one of them", o.scores.file)
	case o.export != "":
		return badInput("-export writes the input graph and stops; -compare trains: give one of them")
	case set["method"] || set["method-weight"]:
		return badInput("-compare names the methods it runs, each at its own weight; -method and -method-weight are for one run: give one of them")
	case set["search-budget"]:
		return badInput("-compare trains -backbone at -lr for -epochs (the defaults where not given), with no backbone search: -search-budget would be ignored; leave it out")
	case o.seeds < 1:
		return badInput("-seeds %d, want ≥ 1", o.seeds)
	}
	offered := append([]string{compareFMP, compareThresholds}, compareTrained()...)
	for _, name := range cli.SplitList(list) {
		switch {
		case name == compareBackbone || name == "plain":
			return badInput("-compare %s: the backbone runs on every seed as what each method is measured against; list the methods only, some of %s", name, strings.Join(offered, ", "))
		case !slices.Contains(offered, name):
			return badInput("-compare: unknown method %q, want some of %s", name, strings.Join(offered, ", "))
		case slices.Contains(o.compare, name):
			return badInput("-compare: %s given twice", name)
		}
		o.compare = append(o.compare, name)
	}
	if len(o.compare) == 0 {
		return badInput("-compare %q names no method, want some of %s", list, strings.Join(offered, ", "))
	}
	var err error
	o.search, err = newSearchPlan(set, o.kind, o.train.Adam.LR, o.train.Epochs, hidden, 0)
	return err
}

// protocolLine says the run's training protocol as its flags, after
// -protocol's name when one was given.
func (o *options) protocolLine() string {
	s := o.settings(o.kind)
	s.Epochs, s.LR, s.WeightDecay = o.train.Epochs, o.train.Adam.LR, o.train.Adam.WeightDecay
	s.Select, s.SelectAfter = o.train.Select, o.train.SelectAfter
	s.IncludeSens, s.NoScale, s.TrainLabels = o.files.Options.IncludeSens, o.noScale, o.trainLabels
	if o.protocol == "" {
		return s.Flags()
	}
	return "-protocol " + o.protocol + ": " + s.Flags()
}

// compareRun is one method's (or the backbone's) run on one seed.
type compareRun struct {
	method string
	seed   int64
	probs  []float64 // n × 2
	// prop is FMP's propagation alone (λf 0 at the λs chosen) on the same
	// backbone, for the decomposition.
	prop    []float64
	setting string
	report  metrics.Report
}

// runCompare runs -compare: for each seed, the backbone and every
// method, then the table of method − backbone (stdout, and compare.md,
// compare.csv and compare_runs.csv in -out).
func runCompare(od *outDir, o *options, ds *datasets.Dataset, stdout, stderr io.Writer) error {
	if c := ds.NumClasses(); c != 2 {
		return badInput("-compare: %s has %d classes; the paired effects are of binary tasks (accuracy, AUC, ΔDP and ΔEO of class 1)", ds.Name, c)
	}
	if len(ds.Split.Test) == 0 {
		return badInput("-compare: %s has no test nodes, which the effects are measured on: give a split with some", ds.Name)
	}
	var all [][]compareRun
	for seed := o.model.Seed; seed < o.model.Seed+int64(o.seeds); seed++ {
		runs, err := compareSeed(o, ds, seed, stderr)
		if err != nil {
			return err
		}
		all = append(all, runs)
	}
	rows, err := compareRows(o, ds, all)
	if err != nil {
		return err
	}
	write := func(w io.Writer) error {
		writeCompare(w, o, ds, all, rows)
		return nil
	}
	if err := writeFile(od.path("compare.md"), write); err != nil {
		return err
	}
	if err := writeFile(od.path("compare.csv"), func(w io.Writer) error {
		_, err := w.Write(paired.CSV(rows, len(all)))
		return err
	}); err != nil {
		return err
	}
	if err := writeFile(od.path("compare_runs.csv"), func(w io.Writer) error {
		writeCompareRuns(w, o, all)
		return nil
	}); err != nil {
		return err
	}
	if err := od.commit(); err != nil {
		return err
	}
	writeCompare(stdout, o, ds, all, rows)
	return nil
}

// compareSeed trains the backbone on seed and runs every -compare method
// on the same split and seed: FMP (chosen on validation by the rule, as
// one run chooses it) and the thresholds on that backbone, the trained
// methods on the same kind, a pre-processing method's backbone on its
// data.
func compareSeed(o *options, ds *datasets.Dataset, seed int64, stderr io.Writer) ([]compareRun, error) {
	so := *o
	so.model.Seed = seed
	prefix := func(name string) string { return fmt.Sprintf("seed %d %s: ", seed, name) }
	bf, _, err := trainOne(&so, ds, o.kind, o.train.Adam.LR, o.search, nil, stderr, prefix(compareBackbone), time.Time{})
	if err != nil {
		return nil, err
	}
	pred, err := train.Predict(bf.fit.Model, bf.task, nil)
	if err != nil {
		return nil, err
	}
	runs := []compareRun{{method: compareBackbone, seed: seed, probs: pred.Probs}}
	for _, name := range o.compare {
		r := compareRun{method: name, seed: seed}
		switch {
		case name == compareFMP:
			base := fmp.DefaultOnConfig()
			base.FMP = o.fmp
			base.FMP.LambdaS = 0
			fm, err := fmp.On(bf.fit.Model, ds.Graph, ds.Sens, base, bf.task.Phase)
			if err != nil {
				return nil, fmt.Errorf("-compare fmp, seed %d: %w", seed, err)
			}
			fc := fmp.DefaultFrontierConfig()
			fc.LambdaF, fc.LambdaS, fc.Rule = o.lambdaF, o.lambdaS, o.rule
			f, ferr := fmp.NewFrontier(o.ctx, fm, bf.task, fc)
			if ferr != nil && (f == nil || !errors.Is(ferr, selection.ErrNoCandidate)) {
				return nil, fmt.Errorf("-compare fmp, seed %d: %w", seed, ferr)
			}
			chosen, err := f.Model()
			if err != nil {
				return nil, err
			}
			fp, err := train.Predict(chosen, bf.task, nil)
			if err != nil {
				return nil, err
			}
			c := f.Best().Config
			r.probs, r.setting = fp.Probs, fmt.Sprintf("λs %g, λf %g", c.LambdaS, c.LambdaF)
			if ferr != nil {
				r.setting += " (no setting met the rule: the backbone kept)"
			}
			c.LambdaF = 0
			pm, err := fm.WithFMP(c)
			if err != nil {
				return nil, fmt.Errorf("-compare fmp, seed %d: propagation alone: %w", seed, err)
			}
			pp, err := train.Predict(pm, bf.task, nil)
			if err != nil {
				return nil, err
			}
			r.prop = pp.Probs
		case name == compareThresholds:
			n := ds.N()
			p1 := classOne(pred.Probs, n)
			th, err := postprocess.FitThresholds(p1, ds.Labels, ds.Sens, ds.Split.Val, o.thresholdsConfig())
			if errors.Is(err, selection.ErrNoCandidate) {
				return nil, badInput("-compare thresholds, seed %d: no per-group thresholds met the rule (%s) on the validation nodes: loosen the rule (a larger -max-acc-loss, a looser -bound, another -criterion), or add -randomize", seed, o.rule)
			}
			if err != nil {
				return nil, fmt.Errorf("-compare thresholds, seed %d: %w", seed, err)
			}
			d, err := th.Decide(p1, ds.Sens, seed)
			if err != nil {
				return nil, err
			}
			// The decisions as probabilities: their AUC ranks by decision.
			r.probs = make([]float64, 2*n)
			for i, c := range d {
				r.probs[2*i+c] = 1
			}
		default:
			m, err := fairness.Lookup(name)
			if err != nil {
				return nil, err
			}
			m = fairness.WithSeed(m, seed)
			mo, mds := &so, ds
			var method fairness.Method = m
			if pre, ok := m.(fairness.Pre); ok {
				po := so
				po.pre, po.method = pre, nil
				if mds, _, err = preprocessed(&po, ds, stderr); err != nil {
					return nil, err
				}
				mo, method = &po, nil
			}
			f, _, err := trainOne(mo, mds, o.kind, o.train.Adam.LR, o.search, method, stderr, prefix(name), time.Time{})
			if err != nil {
				return nil, err
			}
			mp, err := train.Predict(f.fit.Model, f.task, nil)
			if err != nil {
				return nil, err
			}
			r.probs = mp.Probs
		}
		runs = append(runs, r)
	}
	for k := range runs {
		rep, err := metrics.Evaluate(runs[k].probs, 2, ds.Labels, ds.Sens, ds.Split.Test, allowUndefined())
		if err != nil {
			return nil, fmt.Errorf("-compare %s, seed %d: %w", runs[k].method, seed, err)
		}
		runs[k].report = rep
		if !o.quiet {
			fmt.Fprintf(stderr, "seed %d %-12s test accuracy %6.2f%%  AUC %6.2f%%  ΔDP %6.2f%%  ΔEO %6.2f%%  %s\n", seed, runs[k].method,
				100*rep.Accuracy, 100*rep.AUC, 100*rep.DemographicParity, 100*rep.EqualOpportunity, runs[k].setting)
		}
	}
	return runs, nil
}

// allowUndefined is metrics.DefaultOptions with undefined measures
// allowed (a group without a positive test node has no ΔEO: n/a).
func allowUndefined() metrics.Options {
	opt := metrics.DefaultOptions()
	opt.AllowUndefined = true
	return opt
}

// compareRows returns the effect table's rows: each method against the
// backbone of its seed, FMP followed by its decomposition (propagation
// alone against the backbone, the fairness step against propagation
// alone).
func compareRows(o *options, ds *datasets.Dataset, all [][]compareRun) ([]paired.Row, error) {
	var runs [][]float64
	idx := make([][]int, len(o.compare)+1) // backbone, then the methods: run index per seed
	var prop []int
	for _, seed := range all {
		for k, r := range seed {
			idx[k] = append(idx[k], len(runs))
			runs = append(runs, r.probs)
		}
		for _, r := range seed {
			if r.prop != nil {
				prop = append(prop, len(runs))
				runs = append(runs, r.prop)
			}
		}
	}
	var rows []paired.Row
	var pairs []paired.Pairing
	for k, name := range o.compare {
		rows = append(rows, paired.Row{Method: name, Against: compareBackbone})
		pairs = append(pairs, paired.Pairing{A: idx[k+1], B: idx[0]})
		if name == compareFMP {
			rows = append(rows, paired.Row{Method: paired.RowPropagation, Against: compareBackbone}, paired.Row{Method: paired.RowFairStep, Against: paired.RowPropagation})
			pairs = append(pairs, paired.Pairing{A: prop, B: idx[0]}, paired.Pairing{A: idx[k+1], B: prop})
		}
	}
	ivs, err := paired.Diffs(runs, pairs, 2, ds.Labels, ds.Sens, ds.Split.Test, metrics.DefaultBootstrapConfig())
	if err != nil {
		return nil, badInput("-compare: %v", err)
	}
	for q := range rows {
		rows[q].Diff = ivs[q]
	}
	return rows, nil
}

// writeCompare writes the comparison: what ran, each method's test
// means, and the effect table.
func writeCompare(w io.Writer, o *options, ds *datasets.Dataset, all [][]compareRun, rows []paired.Row) {
	first := o.model.Seed
	fmt.Fprintf(w, "%s, backbone %s, seeds %d–%d, %d training nodes, %d test nodes\n\nProtocol: %s\n\n", ds.Name, o.backbone, first, first+int64(len(all))-1,
		len(ds.Split.Train), len(ds.Split.Test), o.protocolLine())
	fmt.Fprintln(w, "| method | accuracy | AUC | ΔDP | ΔEO | settings chosen |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|")
	for k := range all[0] {
		var acc, auc, dp, eo []float64
		var settings []string
		for _, seed := range all {
			r := seed[k]
			acc, auc, dp, eo = append(acc, r.report.Accuracy), append(auc, r.report.AUC), append(dp, r.report.DemographicParity), append(eo, r.report.EqualOpportunity)
			if r.setting != "" {
				settings = append(settings, r.setting)
			}
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s |\n", all[0][k].method, meanStd(acc), meanStd(auc), meanStd(dp), meanStd(eo), strings.Join(settings, "; "))
	}
	fmt.Fprintf(w, "\nTest %%, mean ± std over seeds. Effect net of the backbone: each method minus the backbone of the same split and seed (FMP and the thresholds post-process that run; a trained method builds on the same kind; a pre-processing method trains it on its data), test points, mean over %d seed(s); [95%% paired bootstrap interval]: the test nodes resampled within each group, the same nodes for both runs and every seed, %d resamples (symmetric interval). Resolved (bold): the interval excludes 0. FMP's decomposition, on its trained backbone: propagation alone (λf 0 at the λs chosen) minus the backbone, and the fairness step (the λf chosen) minus propagation alone.\n\n",
		len(all), metrics.DefaultBootstrapConfig().Resamples)
	paired.WriteTable(w, rows)
	if slices.Contains(o.compare, compareThresholds) {
		fmt.Fprintln(w, "\nThe thresholds' AUC is that of their decisions (0 or 1), not of a score: its fall says they rank nodes by decision alone.")
	}
}

// meanStd writes fractions as "mean ± std" in percent (population std,
// metrics.MeanStd), "n/a" when a value is undefined.
func meanStd(xs []float64) string {
	st, err := metrics.MeanStd(xs)
	if err != nil {
		return "n/a"
	}
	return fmt.Sprintf("%.2f ± %.2f", metrics.Percent(st.Mean), metrics.Percent(st.Std))
}

// compareRunsHeader begins compare_runs.csv.
const compareRunsHeader = "method,seed,accuracy,auc,dp,eo,setting,protocol"

// writeCompareRuns writes one line per run (test %).
func writeCompareRuns(w io.Writer, o *options, all [][]compareRun) {
	fmt.Fprintln(w, compareRunsHeader)
	num := func(v float64) string {
		if math.IsNaN(v) {
			return ""
		}
		return fmt.Sprintf("%.4f", 100*v)
	}
	proto := o.protocolLine()
	for _, seed := range all {
		for _, r := range seed {
			fmt.Fprintf(w, "%s,%d,%s,%s,%s,%s,%q,%q\n", r.method, r.seed, num(r.report.Accuracy), num(r.report.AUC),
				num(r.report.DemographicParity), num(r.report.EqualOpportunity), r.setting, proto)
		}
	}
}
