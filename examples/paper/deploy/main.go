// Command deploy measures what FMP means for nodes that arrive after
// training. A GCN is trained on the graph of today (80% of a data set's
// nodes, drawn with the seed, and the edges among them); FMP is put on it
// and its setting chosen on today's validation nodes (fmp.NewFrontier),
// per-group thresholds are fitted on the same nodes
// (postprocess.FitThresholds), and the models are saved as a deployment
// would save them (modelio.Save, with the validation baseline). Then
// the other 20% arrive with all their edges, and each method scores them
// from its model file (package fmp/score):
//
//   - the GCN alone;
//   - per-group thresholds on the GCN's new-node probabilities;
//   - FMP (a), recompute: FMP run again over the whole grown graph
//     (score.Recompute), which may move the old nodes' scores;
//   - FMP (b), fitted: the duals recorded on the training graph applied
//     to the new nodes (score.Fitted).
//
// It reports, on the new nodes and their true labels, the accuracy, ΔDP
// and ΔEO with bootstrap intervals, next to the values each method showed
// on the validation nodes; the share of old test nodes whose decision
// moved; and the drift verdict of metrics.CompareBaseline.
//
// With -methods (default all) every other method of the fairness
// registry that trains a model runs too, on the same old graph and seed:
// each is trained with fairness.Fit on the GCN, saved with
// modelio.Save and scored on the new nodes from its file (FairVGNN's
// file holds its folded encoder). EDITS' model cannot be saved to
// process new nodes: the GCN trained on EDITS' output scores them on
// their raw features and edges, which is what deploying it would do.
//
// With -cost it measures instead the cost of scoring 1, 1,000 and 100,000
// new nodes of a generated 1,000,000-node graph with both semantics: wall
// time, receptive field and peak resident memory.
//
// Usage:
//
//	go run ./deploy -datasets synthetic -seeds 5
//	go run ./deploy -datasets synthetic -seeds 5 -methods none       # the GCN, FMP and the thresholds only
//	go run ./deploy -data $FAIRMP_DATA -datasets synthetic,nba,bail,credit -out deploy/results
//	go run ./deploy -cost -out deploy/results
//
// Progress goes to stderr (-q for none).
package main

import (
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
	"github.com/fairmp/fairmp/graph/datasets"
	"github.com/fairmp/fairmp/internal/blas"
	"github.com/fairmp/fairmp/metrics"
)

func main() {
	blas.Default() // fairmp's BLAS before any graph runs (see internal/blas)
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "deploy:", err)
		}
		os.Exit(2)
	}
}

type options struct {
	data, out     string
	datasets      []string
	seeds, epochs int
	lr, wd        float64
	newFrac       float64
	synthN        int
	quiet         bool
	cost          costOptions
	doCost        bool
	figure        string
	methods       []string
}

var knownDatasets = []string{"synthetic", "nba", "bail", "credit"}

func parseFlags(args []string, stderr io.Writer) (*options, error) {
	o := &options{}
	fs := flag.NewFlagSet("deploy", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var list, newSizes string
	fs.StringVar(&o.data, "data", os.Getenv("FAIRMP_DATA"), "folder holding the data sets' folders (default $FAIRMP_DATA); without it the real data sets are skipped")
	fs.StringVar(&list, "datasets", "synthetic,nba,bail,credit", "comma-separated data sets: synthetic (generated, no files), nba, bail, credit")
	fs.IntVar(&o.synthN, "synthetic-nodes", datasets.DefaultSyntheticConfig().N, "nodes of the generated graph (-datasets synthetic)")
	fs.IntVar(&o.seeds, "seeds", 5, "seeds 1..seeds: each draws the old nodes and initialises the model")
	fs.IntVar(&o.epochs, "epochs", exp.DefaultTrainOptions().Epochs, "training epochs of the GCN (best-validation epoch kept)")
	fs.Float64Var(&o.lr, "lr", exp.DefaultTrainOptions().Adam.LR, "Adam learning rate")
	fs.Float64Var(&o.wd, "weight-decay", exp.DefaultTrainOptions().Adam.WeightDecay, "Adam weight decay")
	fs.Float64Var(&o.newFrac, "new", 0.2, "fraction of the nodes that arrive after training")
	fs.StringVar(&o.out, "out", "", "folder for the results files (empty: none; the tables go to stdout)")
	fs.BoolVar(&o.quiet, "q", false, "no progress on stderr")
	var methodList string
	fs.StringVar(&methodList, "methods", "all", "comma-separated fairness methods of the registry to run besides the GCN, FMP and the thresholds, each trained on the old graph, saved and scored from its file: "+strings.Join(studyMethods(), ", ")+"; all for every one, none for none")
	fs.StringVar(&o.figure, "figure", "", "redraw the figure from this runs.csv into -out (no training)")
	fs.BoolVar(&o.doCost, "cost", false, "measure the cost of scoring new nodes on a generated graph instead (the -cost-* flags)")
	fs.IntVar(&o.cost.nodes, "cost-nodes", 1_000_000, "-cost: nodes of the generated graph")
	fs.IntVar(&o.cost.features, "cost-features", datasets.PokecZShape(1).NumFeatures, "-cost: features of the generated graph")
	fs.Float64Var(&o.cost.degree, "cost-degree", datasets.PokecZShape(1).MeanDegree, "-cost: mean degree of the generated graph (default Pokec-z's)")
	fs.StringVar(&newSizes, "cost-new", "1,1000,100000", "-cost: comma-separated numbers of new nodes to score")
	fs.IntVar(&o.cost.trainNodes, "cost-train-nodes", 50_000, "-cost: the model is trained on the subgraph of this many nodes")
	fs.IntVar(&o.cost.epochs, "cost-epochs", 20, "-cost: training epochs (the cost study measures scoring, not quality)")
	fs.IntVar(&o.cost.repeats, "cost-repeats", 3, "-cost: timed repetitions of each scoring (the median is reported)")
	fs.StringVar(&o.cost.dir, "cost-dir", os.TempDir(), "-cost: folder for the generated graph's feature file (removed afterwards)")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	seen := map[string]bool{}
	for _, d := range strings.Split(list, ",") {
		d = strings.ToLower(strings.TrimSpace(d))
		if !contains(knownDatasets, d) {
			return nil, fmt.Errorf("-datasets: %q is not a data set of this study, want some of %s", d, strings.Join(knownDatasets, ", "))
		}
		if seen[d] {
			return nil, fmt.Errorf("-datasets: %q listed twice", d)
		}
		seen[d] = true
		o.datasets = append(o.datasets, d)
	}
	switch methodList {
	case "all":
		o.methods = studyMethods()
	case "none", "":
	default:
		for _, m := range strings.Split(methodList, ",") {
			m = strings.TrimSpace(m)
			if !contains(studyMethods(), m) {
				return nil, fmt.Errorf("-methods: %q is not a method of this study, want some of %s (or all, none)", m, strings.Join(studyMethods(), ", "))
			}
			if contains(o.methods, m) {
				return nil, fmt.Errorf("-methods: %q listed twice", m)
			}
			o.methods = append(o.methods, m)
		}
	}
	for _, s := range strings.Split(newSizes, ",") {
		k, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || k < 1 {
			return nil, fmt.Errorf("-cost-new: %q is not a number of nodes ≥ 1", s)
		}
		o.cost.newSizes = append(o.cost.newSizes, k)
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
	case !(o.newFrac > 0 && o.newFrac < 1):
		return nil, fmt.Errorf("-new %v, want a fraction in (0, 1)", o.newFrac)
	case o.synthN < 50:
		return nil, fmt.Errorf("-synthetic-nodes %d, want ≥ 50", o.synthN)
	}
	if o.doCost {
		if err := o.cost.validate(); err != nil {
			return nil, err
		}
	}
	if o.figure != "" && o.out == "" {
		return nil, fmt.Errorf("-figure %s needs -out, the folder for deploy.svg", o.figure)
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

func run(args []string, stdout, stderr io.Writer) error {
	o, err := parseFlags(args, stderr)
	if err != nil {
		return err
	}
	progress := stderr
	if o.quiet {
		progress = io.Discard
	}
	if o.doCost {
		return runCost(o, stdout, progress)
	}
	if o.figure != "" {
		f, err := os.Open(o.figure)
		if err != nil {
			return err
		}
		defer f.Close()
		pts, err := readFigurePoints(f, o.figure)
		if err != nil {
			return err
		}
		if err := os.MkdirAll(o.out, 0o755); err != nil {
			return err
		}
		return writeFigure(filepath.Join(o.out, "deploy.svg"), pts)
	}
	tc := exp.DefaultTrainOptions()
	tc.Epochs, tc.Adam.LR, tc.Adam.WeightDecay = o.epochs, o.lr, o.wd
	so := studyOptions{newFrac: o.newFrac, train: tc, methods: o.methods}
	var all []runResult
	var done []*datasets.Dataset
	start := time.Now()
	for _, name := range o.datasets {
		var ds *datasets.Dataset
		if name == "synthetic" {
			c := datasets.DefaultSyntheticConfig()
			c.N = o.synthN
			ds, err = datasets.Synthetic(c)
		} else {
			if o.data == "" {
				fmt.Fprintf(stderr, "skipping %s: no data folder (set $FAIRMP_DATA or -data)\n", name)
				continue
			}
			ds, err = datasets.Load(o.data, name, datasets.PaperOptions())
		}
		if err != nil {
			return err
		}
		exp.PrintWarnings(progress, ds)
		for seed := 1; seed <= o.seeds; seed++ {
			fmt.Fprintf(progress, "%s seed %d/%d (%v elapsed)\n", name, seed, o.seeds, time.Since(start).Round(time.Second))
			rs, err := deployOne(ds, int64(seed), so, progress)
			if err != nil {
				return fmt.Errorf("%s seed %d: %w", name, seed, err)
			}
			for _, r := range rs {
				fmt.Fprintf(progress, "  %-14s new: acc %.2f ΔDP %.2f ΔEO %.2f | val: acc %.2f ΔDP %.2f ΔEO %.2f | old test changed %.2f%% | drift warnings %d | field %d in %v | check %.1e\n",
					r.method, 100*r.newRep.Accuracy, 100*r.newRep.DemographicParity, 100*r.newRep.EqualOpportunity,
					100*r.valRep.Accuracy, 100*r.valRep.DemographicParity, 100*r.valRep.EqualOpportunity,
					100*r.oldChanged.Point, len(r.drift.Warnings), r.field, r.scoreTime.Round(time.Millisecond), r.checkDiff)
				if r.method == mFitted {
					fmt.Fprintf(progress, "    (a) vs (b) on the new nodes: %.2f%% of decisions differ, max |Δp| %.2e; duals on the bound: %s\n", 100*r.abChanged.Point, r.abMaxDiff, r.atBound)
					for _, w := range r.drift.Warnings {
						fmt.Fprintf(progress, "    drift (b): %s\n", w)
					}
				}
			}
			all = append(all, rs...)
		}
		done = append(done, ds)
	}
	if len(done) == 0 {
		fmt.Fprintln(stderr, "no data set run")
		return nil
	}
	var table strings.Builder
	writeTable(&table, o, done, all, time.Since(start))
	fmt.Fprint(stdout, table.String())
	if o.out == "" {
		return nil
	}
	if err := os.MkdirAll(o.out, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(o.out, "summary.md"), []byte(table.String()), 0o644); err != nil {
		return err
	}
	if err := writeCSV(filepath.Join(o.out, "runs.csv"), all); err != nil {
		return err
	}
	var pts []figurePoint
	for _, r := range all {
		pts = append(pts, figurePoint{dataset: r.dataset, method: r.method, val: 100 * r.valRep.DemographicParity, new: 100 * r.newRep.DemographicParity})
	}
	return writeFigure(filepath.Join(o.out, "deploy.svg"), pts)
}

// writeTable writes the summary: per data set, the new nodes against the
// validation nodes, then what deployment sees (old decisions moved, drift,
// cost).
func writeTable(w io.Writer, o *options, done []*datasets.Dataset, all []runResult, took time.Duration) {
	fmt.Fprintf(w, "GCN (%d epochs, Adam lr %g, weight decay %g, best-validation epoch); %d seeds; %.0f%% of the nodes old, %.0f%% new; whole run %v.\n",
		o.epochs, o.lr, o.wd, o.seeds, 100*(1-o.newFrac), 100*o.newFrac, took.Round(time.Second))
	fmt.Fprintln(w, "Percent, mean ± std over seeds; [lo, hi] is the mean over seeds of each seed's 95% bootstrap interval (metrics.Bootstrap, resampled within groups).")
	for _, ds := range done {
		rows := func(m string) []runResult {
			var out []runResult
			for _, r := range all {
				if r.dataset == ds.Name && r.method == m {
					out = append(out, r)
				}
			}
			return out
		}
		first := rows(mBackbone)
		if len(first) == 0 {
			continue
		}
		fmt.Fprintf(w, "\n## %s\n\n%d nodes, %d edges; each seed: %d old nodes, %d new (%d of them labelled and of a known group), %d old test nodes\n\n",
			ds.Name, ds.N(), ds.Graph.NumEdges(), first[0].oldNodes, first[0].newNodes, first[0].newRep.Evaluated, first[0].oldTest)
		fmt.Fprintln(w, "| method | new: accuracy | new: ΔDP | new: ΔEO | new: 95% intervals acc; ΔDP; ΔEO | validation: accuracy | validation: ΔDP | validation: ΔEO | ΔDP new − validation |")
		fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|")
		for _, m := range append(append([]string(nil), methods...), o.methods...) {
			rs := rows(m)
			if len(rs) == 0 {
				continue
			}
			get := func(f func(r runResult) float64) []float64 {
				v := make([]float64, len(rs))
				for i, r := range rs {
					v[i] = f(r)
				}
				return v
			}
			iv := func(f func(r runResult) metrics.Interval) string {
				lo, hi := 0.0, 0.0
				for _, r := range rs {
					lo += f(r).Lo
					hi += f(r).Hi
				}
				n := float64(len(rs))
				return fmt.Sprintf("[%.1f, %.1f]", 100*lo/n, 100*hi/n)
			}
			fmt.Fprintf(w, "| %s | %s | %s | %s | %s; %s; %s | %s | %s | %s | %s |\n", title(m),
				ms(get(func(r runResult) float64 { return r.newRep.Accuracy })),
				ms(get(func(r runResult) float64 { return r.newRep.DemographicParity })),
				ms(get(func(r runResult) float64 { return r.newRep.EqualOpportunity })),
				iv(func(r runResult) metrics.Interval { return r.newIv.Accuracy }),
				iv(func(r runResult) metrics.Interval { return r.newIv.DemographicParity }),
				iv(func(r runResult) metrics.Interval { return r.newIv.EqualOpportunity }),
				ms(get(func(r runResult) float64 { return r.valRep.Accuracy })),
				ms(get(func(r runResult) float64 { return r.valRep.DemographicParity })),
				ms(get(func(r runResult) float64 { return r.valRep.EqualOpportunity })),
				ms(get(func(r runResult) float64 { return r.newRep.DemographicParity - r.valRep.DemographicParity })))
		}
		var ab, abMax []float64
		var bound []string
		for _, r := range rows(mFitted) {
			ab, abMax = append(ab, r.abChanged.Point), append(abMax, r.abMaxDiff)
			bound = append(bound, r.atBound)
		}
		mx := 0.0
		for _, v := range abMax {
			mx = max(mx, v)
		}
		fmt.Fprintf(w, "\nFMP (a) against (b) on the new nodes: %s%% of the decisions differ; largest probability difference %.2g; duals of the training graph on the l∞ bound, per seed: %s.\n",
			ms(ab), mx, strings.Join(bound, ", "))
		for _, r := range rows("edits") {
			if r.valRaw != nil {
				fmt.Fprintf(w, "\nEDITS' model on the old validation nodes with their raw features and edges (unprocessed), seed %d: accuracy %.2f, ΔDP %.2f, ΔEO %.2f (on EDITS' output: %.2f, %.2f, %.2f).\n", r.seed,
					100*r.valRaw.Accuracy, 100*r.valRaw.DemographicParity, 100*r.valRaw.EqualOpportunity,
					100*r.valRep.Accuracy, 100*r.valRep.DemographicParity, 100*r.valRep.EqualOpportunity)
			}
		}
		fmt.Fprintln(w, "\n| method | old test decisions changed (grown graph vs old graph) | drift warnings on the new nodes, per seed | receptive field of the new nodes | scoring time, new nodes | training time | settings chosen |")
		fmt.Fprintln(w, "|---|---|---|---|---|---|---|")
		for _, m := range append(append([]string(nil), methods...), o.methods...) {
			rs := rows(m)
			var changed, field []float64
			var warns, settings []string
			var t, tt time.Duration
			for _, r := range rs {
				tt += r.trainTime
				changed = append(changed, r.oldChanged.Point)
				field = append(field, float64(r.field))
				warns = append(warns, strconv.Itoa(len(r.drift.Warnings)))
				if r.setting != "" {
					settings = append(settings, strings.TrimSpace(r.setting))
				}
				t += r.scoreTime
			}
			fs, _ := metrics.MeanStd(field)
			if len(rs) == 0 {
				continue
			}
			fmt.Fprintf(w, "| %s | %s | %s | %.0f of %d | %v | %v | %s |\n", title(m), ms(changed), strings.Join(warns, ", "),
				fs.Mean, ds.N(), (t / time.Duration(len(rs))).Round(100*time.Microsecond), (tt / time.Duration(len(rs))).Round(100*time.Millisecond), strings.Join(settings, "; "))
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

func writeCSV(path string, all []runResult) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := csv.NewWriter(f)
	w.Write([]string{"dataset", "seed", "method", "setting", "old_nodes", "new_nodes", "new_evaluated",
		"new_accuracy", "new_accuracy_lo", "new_accuracy_hi", "new_dp", "new_dp_lo", "new_dp_hi", "new_eo", "new_eo_lo", "new_eo_hi",
		"val_accuracy", "val_accuracy_lo", "val_accuracy_hi", "val_dp", "val_dp_lo", "val_dp_hi", "val_eo", "val_eo_lo", "val_eo_hi",
		"old_test", "old_changed", "old_changed_lo", "old_changed_hi", "drift_warnings", "field", "score_seconds", "check_max_diff", "a_vs_b_changed", "a_vs_b_max_diff", "duals_at_bound",
		"train_seconds", "val_raw_accuracy", "val_raw_dp", "val_raw_eo"})
	f6 := func(x float64) string { return strconv.FormatFloat(x, 'f', 6, 64) }
	ivs := func(i metrics.Interval) []string { return []string{f6(i.Point), f6(i.Lo), f6(i.Hi)} }
	for _, r := range all {
		row := []string{r.dataset, strconv.Itoa(r.seed), r.method, strings.TrimSpace(r.setting),
			strconv.Itoa(r.oldNodes), strconv.Itoa(r.newNodes), strconv.Itoa(r.newRep.Evaluated)}
		row = append(row, ivs(r.newIv.Accuracy)...)
		row = append(row, ivs(r.newIv.DemographicParity)...)
		row = append(row, ivs(r.newIv.EqualOpportunity)...)
		row = append(row, ivs(r.valIv.Accuracy)...)
		row = append(row, ivs(r.valIv.DemographicParity)...)
		row = append(row, ivs(r.valIv.EqualOpportunity)...)
		row = append(row, strconv.Itoa(r.oldTest))
		row = append(row, ivs(r.oldChanged)...)
		row = append(row, strconv.Itoa(len(r.drift.Warnings)), strconv.Itoa(r.field),
			strconv.FormatFloat(r.scoreTime.Seconds(), 'f', 4, 64), strconv.FormatFloat(r.checkDiff, 'g', 3, 64))
		if r.method == mFitted || r.method == mRecompute {
			row = append(row, f6(r.abChanged.Point), strconv.FormatFloat(r.abMaxDiff, 'g', 3, 64), r.atBound)
		} else {
			row = append(row, "", "", "")
		}
		row = append(row, strconv.FormatFloat(r.trainTime.Seconds(), 'f', 3, 64))
		if r.valRaw != nil {
			row = append(row, f6(r.valRaw.Accuracy), f6(r.valRaw.DemographicParity), f6(r.valRaw.EqualOpportunity))
		} else {
			row = append(row, "", "", "")
		}
		w.Write(row)
	}
	w.Flush()
	if err := w.Error(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
