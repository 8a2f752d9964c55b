package main

import (
	"context"
	"encoding/csv"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/fairmp/fairmp/examples/paper/internal/exp"
	"github.com/fairmp/fairmp/fmp"
	"github.com/fairmp/fairmp/graph/datasets"
	"github.com/fairmp/fairmp/internal/cli"
	"github.com/fairmp/fairmp/layers"
	"github.com/fairmp/fairmp/layers/fairness"
	"github.com/fairmp/fairmp/layers/fairtrain"
	"github.com/fairmp/fairmp/layers/postprocess"
	"github.com/fairmp/fairmp/layers/train"
	"github.com/fairmp/fairmp/metrics"
	"github.com/fairmp/fairmp/metrics/selection"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// The α grids of the FMP paper (regulariser, adversary) and ours for
// mixup, whose penalty is of the same scale as the regulariser's.
const (
	regGrid = "1,2,5,8,10,20,50,80,100"
	advGrid = "1,2,5,8,10,20,30"
	mixGrid = "0.5,1,2,5,10,20,50,100"
	// FairGNN's adversary weight β around its code's default (0.01) and
	// its scripts' (1); NIFTY's similarity coefficient λ over [0, 1).
	fairgnnGrid = "0.01,0.1,1,10"
	niftyGrid   = "0.1,0.3,0.5,0.7,0.9"
	fmpGrid     = "0.5,1,2,5,10,20"
)

// options are the command's flags.
type options struct {
	data, dataset, out, name string
	models, methods          []string
	grids                    map[string][]float64
	seeds, epochs, workers   int
	firstSeed                int64
	lr, weightDecay          float64
	hidden                   int
	dtype                    tensor.Dtype
	selectBest               bool
	synthN                   int
	lambdaS                  float64
	fromCSV                  []string
	adv                      fairtrain.AdversaryConfig // schedule and adversary (Alpha, Seed set per run)
	// post lists the post-processing methods run on every plain run's
	// trained model: "fmp-post" (FMP on the backbone, λs 0 and 1 over
	// postLambdaF) and "thresholds" (per-group thresholds chosen on
	// validation within postLosses accuracy points).
	post        []string
	postLambdaF []float64
	postLosses  []float64
}

func parseFlags(args []string, stderr io.Writer) (*options, error) {
	fs := flag.NewFlagSet("tradeoff", flag.ContinueOnError)
	fs.SetOutput(stderr)
	o := &options{grids: map[string][]float64{}}
	fs.StringVar(&o.data, "data", os.Getenv("FAIRMP_DATA"), "folder holding the data sets (default $FAIRMP_DATA)")
	fs.StringVar(&o.dataset, "dataset", "bail", `data set: a datasets preset ("nba", "bail", "credit", ...), "synthetic" (generated, -n nodes) or "pokec-z" (generated, Pokec-z's shape)`)
	fs.IntVar(&o.synthN, "n", 2000, "number of nodes of the synthetic data set")
	models := fs.String("models", "gcn", "comma-separated backbones: mlp, gcn, sgc, appnp, gat, fmp (MLP → FMP, which adds its λf sweep)")
	methods := fs.String("methods", "regularizer,adversary,mixup", "comma-separated training methods ("+strings.Join(fairness.Names(fairness.StageLoss, fairness.StageArchitecture), ", ")+")")
	reg := fs.String("reg-alphas", regGrid, "α grid of the regulariser (α = 0 is the plain run)")
	adv := fs.String("adv-alphas", advGrid, "α grid of the adversary")
	mix := fs.String("mix-alphas", mixGrid, "α grid of fair mixup")
	fgnn := fs.String("fairgnn-betas", fairgnnGrid, "adversary-weight grid of FairGNN (β; α stays at its default)")
	nifty := fs.String("nifty-lambdas", niftyGrid, "similarity-coefficient grid of NIFTY (λ in [0, 1))")
	fmpL := fs.String("fmp-lambdas", fmpGrid, "λf grid of the fmp backbone's own sweep (method \"fmp\"; λf = 0 is its plain run)")
	fs.Float64Var(&o.lambdaS, "lambda-s", fmp.DefaultConfig().LambdaS, "λs of the fmp backbone")
	o.adv = fairtrain.DefaultAdversaryConfig()
	fs.IntVar(&o.adv.PretrainClassifier, "adv-pretrain", o.adv.PretrainClassifier, "adversary: classifier pre-training epochs")
	fs.IntVar(&o.adv.PretrainAdversary, "adv-pretrain-steps", o.adv.PretrainAdversary, "adversary: adversary pre-training steps")
	fs.IntVar(&o.adv.Steps, "adv-steps", o.adv.Steps, "adversary: adversary steps per classifier step")
	fs.IntVar(&o.seeds, "seeds", 3, "number of seeds per configuration")
	fs.Int64Var(&o.firstSeed, "first-seed", 1, "first seed (seeds first-seed .. first-seed+seeds−1)")
	fs.IntVar(&o.epochs, "epochs", 300, "training epochs per run")
	fs.IntVar(&o.workers, "workers", 2, "runs trained in parallel")
	fs.Float64Var(&o.lr, "lr", 1e-3, "Adam learning rate")
	fs.Float64Var(&o.weightDecay, "wd", 1e-5, "Adam weight decay")
	fs.IntVar(&o.hidden, "hidden", 64, "hidden width of the backbones (GAT: 4 heads of hidden/4)")
	dt := fs.String("dtype", "float64", "float32 or float64")
	fs.BoolVar(&o.selectBest, "select-best", false, "evaluate the best-validation epoch instead of the last")
	from := fs.String("from-csv", "", "comma-separated CSVs of earlier runs: aggregate and plot them instead of training (-dataset and -epochs label the plot)")
	post := fs.String("post", "", `post-processing of every plain run's trained model: comma-separated "fmp-post" (FMP on the backbone: λs 0 and 1 × the -post-lambda-f grid; methods fmp-post-s0 and fmp-post-s1) and "thresholds" (per-group thresholds, lowest validation ΔDP within each of -post-losses accuracy points)`)
	postLF := fs.String("post-lambda-f", "0.25,0.5,1,2,4,8,16", "λf grid of fmp-post")
	postLoss := fs.String("post-losses", "0.25,0.5,1,2,3,5", "accuracy-loss budgets (points) of the thresholds")
	fs.StringVar(&o.out, "out", ".", "output folder")
	fs.StringVar(&o.name, "name", "", "base name of the output files (default <dataset>_tradeoff)")
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
	o.models = cli.SplitList(*models)
	for _, m := range o.models {
		if !validModel(m) {
			return nil, fmt.Errorf("-models: unknown backbone %q, want one of %s", m, strings.Join(append(layers.BackboneNames(), "fmp"), ", "))
		}
	}
	// The fmp backbone comes with its own λf sweep.
	if slices.Contains(o.models, "fmp") && !slices.Contains(cli.SplitList(*methods), "fmp") {
		*methods += ",fmp"
	}
	o.methods = cli.SplitList(*methods)
	grids := map[string]*string{"regularizer": reg, "adversary": adv, "mixup": mix, "fairgnn": fgnn, "nifty": nifty, "fmp": fmpL}
	for _, m := range o.methods {
		if _, err := fairness.Lookup(m); err != nil {
			return nil, fmt.Errorf("-methods %q, want one of %s", m, strings.Join(fairness.Names(fairness.StageLoss, fairness.StageArchitecture), ", "))
		}
		g, ok := grids[m]
		if !ok {
			return nil, fmt.Errorf("-methods: %s has no grid flag in this command", m)
		}
		alphas, err := parseGrid(*g)
		if err != nil {
			return nil, fmt.Errorf("α grid of %s: %w", m, err)
		}
		o.grids[m] = alphas
	}
	if len(o.models) == 0 {
		return nil, errors.New("-models is empty")
	}
	if o.seeds < 1 || o.epochs < 1 || o.workers < 1 || o.hidden < 4 {
		return nil, fmt.Errorf("-seeds %d, -epochs %d, -workers %d, -hidden %d: want seeds, epochs, workers >= 1 and hidden >= 4", o.seeds, o.epochs, o.workers, o.hidden)
	}
	if err := o.adv.Validate(); err != nil {
		return nil, fmt.Errorf("adversary flags: %w", err)
	}
	if o.name == "" {
		o.name = o.dataset + "_tradeoff"
	}
	o.fromCSV = cli.SplitList(*from)
	o.post = cli.SplitList(*post)
	for _, m := range o.post {
		if m != "fmp-post" && m != "thresholds" {
			return nil, fmt.Errorf("-post: unknown method %q, want fmp-post or thresholds", m)
		}
		if slices.Contains(o.models, "fmp") && m == "fmp-post" {
			return nil, errors.New("-post fmp-post on the fmp backbone would stack two FMP layers; use -models without fmp")
		}
	}
	var err error
	if o.postLambdaF, err = parseGrid(*postLF); err != nil {
		return nil, fmt.Errorf("-post-lambda-f: %w", err)
	}
	if o.postLosses, err = parseGrid(*postLoss); err != nil {
		return nil, fmt.Errorf("-post-losses: %w", err)
	}
	return o, nil
}

// parseGrid parses comma-separated weights, drops 0 (the plain run
// stands for it) and sorts them.
func parseGrid(s string) ([]float64, error) {
	if len(cli.SplitList(s)) == 0 {
		return nil, nil
	}
	all, err := cli.ParseFloats(s, 0)
	if err != nil {
		return nil, err
	}
	var out []float64
	for _, a := range all {
		if a > 0 {
			out = append(out, a)
		}
	}
	sort.Float64s(out)
	return out, nil
}

// validModel reports whether m is a backbone the sweep trains: a declared
// kind of package layers (JKNet included, though the paper's figure has
// none) or "fmp", the paper's MLP → FMP.
func validModel(m string) bool {
	k, err := layers.LookupKind(m)
	return err == nil && !k.Composite()
}

// protocol holds the sweep's settings beyond the kinds' defaults, by kind
// and JSON key (layers.Kind.Override): SGC propagates two hops here.
var protocol = map[string]map[string]any{"sgc": {"k": 2}}

// job is one training run.
type job struct {
	model, method string
	alpha         float64
	seed          int64
}

// result is one run's test metrics.
type result struct {
	job
	report metrics.Report
	// iv are the run's 95% bootstrap intervals over the test nodes (nil
	// for runs read from a CSV written before they were recorded).
	iv      *metrics.Intervals
	seconds float64
}

// testIntervals bootstraps one run's test metrics (metrics.Bootstrap with
// its defaults: 1000 resamples within each group, 95%, seed 1).
func testIntervals(probs []float64, classes int, ds *datasets.Dataset) (*metrics.Intervals, error) {
	iv, err := metrics.Bootstrap(probs, classes, ds.Labels, ds.Sens, ds.Split.Test, metrics.DefaultOptions(), metrics.DefaultBootstrapConfig())
	if err != nil {
		return nil, fmt.Errorf("test intervals: %w", err)
	}
	return &iv, nil
}

func loadData(o *options) (*datasets.Dataset, error) {
	if o.dataset == "synthetic" {
		c := datasets.DefaultSyntheticConfig()
		c.N = o.synthN
		return datasets.Synthetic(c)
	}
	if o.dataset == "pokec-z" {
		// The generated graph of Pokec-z's shape (67,796 nodes, 276
		// features), for timings at that size.
		return datasets.Synthetic(datasets.PokecZShape(1))
	}
	if o.data == "" {
		return nil, errors.New("no data folder: set -data or $FAIRMP_DATA")
	}
	return datasets.Load(o.data, o.dataset, datasets.PaperOptions())
}

// buildModel returns a fresh backbone on ds in a new gorgonia graph.
func buildModel(o *options, ds *datasets.Dataset, j job) (layers.Model, *train.Task, error) {
	name, seed := j.model, j.seed
	g := G.NewGraph()
	x, err := train.FeatureNode(g, o.dtype, ds.Features, ds.N(), ds.NumFeatures, "x")
	if err != nil {
		return nil, nil, err
	}
	ph := layers.NewPhase()
	d, c := ds.NumFeatures, ds.NumClasses()
	var m layers.Model
	if name == "fmp" {
		mc := fmp.DefaultModelConfig(d, c)
		mc.MLP.Hidden, mc.MLP.Dtype, mc.MLP.Seed = o.hidden, o.dtype, seed
		mc.FMP.LambdaS, mc.FMP.LambdaF = o.lambdaS, 0
		if j.method == "fmp" {
			mc.FMP.LambdaF = j.alpha
		}
		m, err = fmp.NewModel(g, ds.Graph, ds.Sens, mc, ph)
	} else {
		m, err = buildKind(name, d, c, layers.Options{Hidden: o.hidden, Dtype: o.dtype, Seed: seed}, g, ds, ph)
	}
	if err != nil {
		return nil, nil, err
	}
	return m, &train.Task{Graph: g, X: x, Labels: ds.Labels, Train: ds.Split.Train, Val: ds.Split.Val, Classes: c, Phase: ph}, nil
}

// method returns the training method of a job (nil for "plain" and
// "fmp", whose λf is the backbone's own) through fairtrain's list, with
// the adversary's schedule from the flags.
func method(o *options, name string, alpha float64, seed int64) (fairness.Method, error) {
	if name == "plain" || name == "fmp" {
		return nil, nil
	}
	m, err := fairness.Lookup(name)
	if err != nil {
		return nil, err
	}
	if name == "adversary" {
		m = o.adv
	}
	w, ok := m.(fairness.Weighted)
	if !ok {
		return nil, fmt.Errorf("-methods %s has no weight to sweep", name)
	}
	return fairness.WithSeed(w.WithWeight(alpha), seed), nil
}

// ownModel reports whether a method trains a model of its own around the
// backbone (FairGNN's and NIFTY's encoders) rather than adding a term to
// the backbone's training.
func ownModel(name string) bool {
	if name == "fmp" { // the sweep's FMP is its own model's λf
		return false
	}
	m, err := fairness.Lookup(name)
	if err != nil {
		return false
	}
	_, strategy := m.(fairness.Loss)
	return !strategy
}

// train runs one job and evaluates it on the test split.
func runJob(o *options, ds *datasets.Dataset, j job) ([]result, error) {
	start := time.Now()
	m, task, err := buildModel(o, ds, j)
	if err != nil {
		return nil, err
	}
	tc := train.DefaultConfig()
	tc.Epochs, tc.Adam.LR, tc.Adam.WeightDecay = o.epochs, o.lr, o.weightDecay
	tc.Select = train.SelectLast
	if o.selectBest {
		tc.Select = train.SelectBestVal
	}
	meth, err := method(o, j.method, j.alpha, j.seed)
	if err != nil {
		return nil, err
	}
	if ownModel(j.method) {
		// FairGNN and NIFTY build their encoder on the backbone's
		// configuration, in the task's graph beside the unused m.
		cfg, err := kindConfig(j.model, ds.NumFeatures, ds.NumClasses(), layers.Options{Hidden: o.hidden, Dtype: o.dtype, Seed: j.seed})
		if err != nil {
			return nil, err
		}
		b := layers.BaseOf(cfg)
		b.Name += ".encoder"
		fit, err := fairness.Fit(context.Background(), meth, layers.WithBase(cfg, b), fairness.NewSetup(ds.Graph, task, ds.Sens), tc)
		if err != nil {
			return nil, err
		}
		m = fit.Model
	} else {
		if meth != nil {
			if tc, err = meth.(fairness.Loss).Apply(tc, task, ds.Sens); err != nil {
				return nil, err
			}
		}
		if _, err := train.Fit(context.Background(), m, task, tc); err != nil {
			return nil, err
		}
	}
	p, err := train.Predict(m, task, nil)
	if err != nil {
		return nil, err
	}
	rep, err := metrics.Evaluate(p.Probs, p.Classes, ds.Labels, ds.Sens, ds.Split.Test, metrics.DefaultOptions())
	if err != nil {
		return nil, err
	}
	secs := time.Since(start).Seconds()
	iv, err := testIntervals(p.Probs, p.Classes, ds)
	if err != nil {
		return nil, err
	}
	rs := []result{{job: j, report: rep, iv: iv, seconds: secs}}
	if j.method == "plain" && len(o.post) > 0 {
		more, err := postProcess(o, ds, j, m, task)
		if err != nil {
			return nil, err
		}
		rs = append(rs, more...)
	}
	return rs, nil
}

// postProcess debiases the trained plain model m with FMP (every setting
// of the grid, one point each) and with per-group thresholds (one point
// per accuracy-loss budget), all chosen or evaluated without retraining.
// seconds is each method's whole post-processing time.
func postProcess(o *options, ds *datasets.Dataset, j job, m layers.Model, task *train.Task) ([]result, error) {
	var rs []result
	if slices.Contains(o.post, "fmp-post") {
		start := time.Now()
		base := fmp.DefaultOnConfig()
		base.FMP.LambdaS = 0
		fm, err := fmp.On(m, ds.Graph, ds.Sens, base, task.Phase)
		if err != nil {
			return nil, err
		}
		fc := fmp.DefaultFrontierConfig()
		fc.LambdaF = append([]float64{0}, o.postLambdaF...)
		fc.LambdaS, fc.Test = []float64{0, 1}, ds.Split.Test
		bc := metrics.DefaultBootstrapConfig()
		fc.TestBootstrap = &bc
		f, err := fmp.NewFrontier(context.Background(), fm, task, fc)
		if err != nil {
			return nil, fmt.Errorf("fmp-post: %w", err)
		}
		secs := time.Since(start).Seconds()
		for _, pt := range f.Points {
			if pt.Config.LambdaF == 0 && pt.Config.LambdaS == 0 {
				continue // the plain run itself
			}
			meth := "fmp-post-s0"
			if pt.Config.LambdaS != 0 {
				meth = "fmp-post-s1"
			}
			iv := pt.TestIntervals
			rs = append(rs, result{job: job{model: j.model, method: meth, alpha: pt.Config.LambdaF, seed: j.seed}, report: pt.Test, iv: &iv, seconds: secs})
		}
	}
	if slices.Contains(o.post, "thresholds") {
		start := time.Now()
		pred, err := train.Predict(m, task, nil)
		if err != nil {
			return nil, err
		}
		p1 := pred.Column(1)
		var pts []result
		for _, loss := range o.postLosses {
			c := postprocess.DefaultThresholdsConfig()
			c.Rule = selection.FairestWithin(metrics.DPDifference, loss/100)
			th, err := postprocess.FitThresholds(p1, ds.Labels, ds.Sens, ds.Split.Val, c)
			if err != nil {
				return nil, fmt.Errorf("thresholds within %g points: %w", loss, err)
			}
			probs, err := th.OneHot(p1, ds.Sens, j.seed)
			if err != nil {
				return nil, err
			}
			rep, err := metrics.Evaluate(probs, 2, ds.Labels, ds.Sens, ds.Split.Test, metrics.DefaultOptions())
			if err != nil {
				return nil, err
			}
			iv, err := testIntervals(probs, 2, ds)
			if err != nil {
				return nil, err
			}
			pts = append(pts, result{job: job{model: j.model, method: "thresholds", alpha: loss, seed: j.seed}, report: rep, iv: iv})
		}
		secs := time.Since(start).Seconds()
		for k := range pts {
			pts[k].seconds = secs
		}
		rs = append(rs, pts...)
	}
	return rs, nil
}

func jobs(o *options) []job {
	var js []job
	for _, m := range o.models {
		for s := o.firstSeed; s < o.firstSeed+int64(o.seeds); s++ {
			js = append(js, job{model: m, method: "plain", seed: s})
			for _, meth := range o.methods {
				if meth == "fmp" && m != "fmp" {
					continue // λf is the fmp backbone's own knob
				}
				if m == "fmp" && ownModel(meth) {
					continue // FairGNN and NIFTY build their own model on a kind
				}
				for _, a := range o.grids[meth] {
					js = append(js, job{model: m, method: meth, alpha: a, seed: s})
				}
			}
		}
	}
	return js
}

// sweep trains every job with o.workers goroutines and returns the results
// in job order. Progress lines with an ETA go to stderr, and each finished
// run is appended at once to partial (a CSV in writeCSV's format, usable
// with -from-csv if the sweep is interrupted).
func sweep(o *options, ds *datasets.Dataset, js []job, stderr io.Writer, partial string) ([]result, error) {
	pf, err := os.Create(partial)
	if err != nil {
		return nil, err
	}
	defer pf.Close()
	pw := csv.NewWriter(pf)
	pw.Write(strings.Split(csvHeader, ","))
	pw.Flush()
	res := make([][]result, len(js))
	errs := make([]error, len(js))
	next := make(chan int)
	var mu sync.Mutex
	done := 0
	start := time.Now()
	var wg sync.WaitGroup
	for w := 0; w < o.workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				rr, err := runJob(o, ds, js[i])
				res[i], errs[i] = rr, err
				var r result
				if len(rr) > 0 {
					r = rr[0]
				}
				mu.Lock()
				done++
				el := time.Since(start)
				eta := time.Duration(float64(el) / float64(done) * float64(len(js)-done))
				if err != nil {
					fmt.Fprintf(stderr, "[%d/%d] %s %s α=%g seed %d: error: %v\n", done, len(js), js[i].model, js[i].method, js[i].alpha, js[i].seed, err)
				} else {
					fmt.Fprintf(stderr, "[%d/%d] %-5s %-11s α=%-5g seed %d  acc %6.2f  ΔDP %6.2f  (%.0fs)  elapsed %s  ETA %s\n",
						done, len(js), js[i].model, js[i].method, js[i].alpha, js[i].seed,
						metrics.Percent(r.report.Accuracy), metrics.Percent(r.report.DemographicParity), r.seconds,
						el.Round(time.Second), eta.Round(time.Second))
					for _, x := range rr {
						pw.Write(csvRow(x))
					}
					pw.Flush()
				}
				mu.Unlock()
			}
		}()
	}
	for i := range js {
		next <- i
	}
	close(next)
	wg.Wait()
	var out []result
	for i, err := range errs {
		if err != nil {
			return nil, fmt.Errorf("%s %s α=%g seed %d: %w", js[i].model, js[i].method, js[i].alpha, js[i].seed, err)
		}
		out = append(out, res[i]...)
	}
	return out, nil
}

func writeCSV(path string, rs []result) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := csv.NewWriter(f)
	w.Write(strings.Split(csvHeader, ","))
	for _, r := range rs {
		w.Write(csvRow(r))
	}
	w.Flush()
	if err := w.Error(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// seedsText says what the numbers are over.
func seedsText(n int) string {
	if n == 1 {
		return "one seed"
	}
	return fmt.Sprintf("mean of %d seeds", n)
}

// csvRow formats one run: metrics in percent with four decimals, then
// the bounds of its bootstrap intervals (empty when the run has none).
func csvRow(r result) []string {
	pc := func(x float64) string { return strconv.FormatFloat(metrics.Percent(x), 'f', 4, 64) }
	row := []string{r.model, r.method, strconv.FormatFloat(r.alpha, 'g', -1, 64), strconv.FormatInt(r.seed, 10),
		pc(r.report.Accuracy), pc(r.report.DemographicParity), pc(r.report.EqualOpportunity),
		pc(r.report.F1), pc(r.report.AUC), strconv.FormatFloat(r.seconds, 'f', 1, 64)}
	if r.iv == nil {
		return append(row, "", "", "", "", "", "")
	}
	return append(row, pc(r.iv.Accuracy.Lo), pc(r.iv.Accuracy.Hi), pc(r.iv.DemographicParity.Lo),
		pc(r.iv.DemographicParity.Hi), pc(r.iv.EqualOpportunity.Lo), pc(r.iv.EqualOpportunity.Hi))
}

// readCSV reads the runs written by writeCSV (the metrics the plot and
// the summary use: accuracy, ΔDP, ΔEO, F1, AUC).
func readCSV(path string) ([]result, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	header := strings.Join(recs[0], ",")
	if len(recs) < 2 || (header != csvHeader && header != csvHeaderV1) {
		return nil, fmt.Errorf("%s: want a header %q (or, from before the intervals, %q) and at least one run", path, csvHeader, csvHeaderV1)
	}
	var rs []result
	for line, r := range recs[1:] {
		var v [8]float64
		for k, col := range []int{2, 3, 4, 5, 6, 7, 8, 9} {
			if v[k], err = strconv.ParseFloat(r[col], 64); err != nil {
				return nil, fmt.Errorf("%s:%d: column %s: %w", path, line+2, recs[0][col], err)
			}
		}
		rep := metrics.Report{Accuracy: v[2] / 100, DemographicParity: v[3] / 100, EqualOpportunity: v[4] / 100, F1: v[5] / 100, AUC: v[6] / 100}
		res := result{job: job{model: r[0], method: r[1], alpha: v[0], seed: int64(v[1])}, report: rep, seconds: v[7]}
		if header == csvHeader && r[10] != "" {
			var b [6]float64
			for k := range b {
				if b[k], err = strconv.ParseFloat(r[10+k], 64); err != nil {
					return nil, fmt.Errorf("%s:%d: column %s: %w", path, line+2, recs[0][10+k], err)
				}
				b[k] /= 100
			}
			res.iv = &metrics.Intervals{
				Accuracy:          metrics.Interval{Point: rep.Accuracy, Lo: b[0], Hi: b[1]},
				DemographicParity: metrics.Interval{Point: rep.DemographicParity, Lo: b[2], Hi: b[3]},
				EqualOpportunity:  metrics.Interval{Point: rep.EqualOpportunity, Lo: b[4], Hi: b[5]},
			}
		}
		rs = append(rs, res)
	}
	return rs, nil
}

// mergeRuns merges runs read from several CSVs: a run (model, method, α,
// seed) that appears more than once is kept once, in its first place,
// with its first seconds. Runs are deterministic per seed, so its copies
// must have the same metrics; a copy with intervals gives them to a run
// without (a rerun of some settings adds intervals to an older sweep).
func mergeRuns(rs []result) ([]result, error) {
	at := map[job]int{}
	var out []result
	for _, r := range rs {
		i, ok := at[r.job]
		if !ok {
			at[r.job] = len(out)
			out = append(out, r)
			continue
		}
		a, b := out[i].report, r.report
		if a.Accuracy != b.Accuracy || a.DemographicParity != b.DemographicParity || a.EqualOpportunity != b.EqualOpportunity || a.F1 != b.F1 || a.AUC != b.AUC {
			return nil, fmt.Errorf("-from-csv: %s %s α=%g seed %d appears twice with different metrics (accuracy %.4f and %.4f, ΔDP %.4f and %.4f): runs are deterministic per seed, so the CSVs come from different settings",
				r.model, r.method, r.alpha, r.seed, metrics.Percent(a.Accuracy), metrics.Percent(b.Accuracy), metrics.Percent(a.DemographicParity), metrics.Percent(b.DemographicParity))
		}
		if out[i].iv == nil {
			out[i].iv = r.iv
		}
	}
	return out, nil
}

// csvHeader names writeCSV's columns: the run, its test metrics (%), its
// seconds, and the bounds of its 95% bootstrap intervals over the test
// nodes (%). csvHeaderV1 is the header before the intervals, still read.
const (
	csvHeader   = "model,method,alpha,seed,accuracy,dp,eo,f1,auc,seconds,acc_lo,acc_hi,dp_lo,dp_hi,eo_lo,eo_hi"
	csvHeaderV1 = "model,method,alpha,seed,accuracy,dp,eo,f1,auc,seconds"
)

// point is one configuration's mean over seeds, in percent.
type point struct {
	model, method string
	alpha         float64
	summary       metrics.Summary
	acc, dp, eo   float64
	// seconds is the mean wall time of a run (training, or the
	// post-processing of a trained plain run for fmp-post and thresholds).
	seconds float64
	// dpLo and dpHi are the means over seeds of the runs' 95% bootstrap
	// ΔDP bounds (%), when every run has them (hasIV).
	dpLo, dpHi float64
	hasIV      bool
}

// aggregate averages the runs of each (model, method, α) over seeds, in
// first-seen order.
func aggregate(rs []result) ([]point, error) {
	type key struct {
		model, method string
		alpha         float64
	}
	var order []key
	groups := map[key][]metrics.Report{}
	secs := map[key]float64{}
	lo, hi := map[key]float64{}, map[key]float64{}
	withIV := map[key]int{}
	for _, r := range rs {
		k := key{r.model, r.method, r.alpha}
		if _, ok := groups[k]; !ok {
			order = append(order, k)
		}
		groups[k] = append(groups[k], r.report)
		secs[k] += math.Round(r.seconds*10) / 10 // as the CSV keeps it
		if r.iv != nil {
			lo[k] += metrics.Percent(r.iv.DemographicParity.Lo)
			hi[k] += metrics.Percent(r.iv.DemographicParity.Hi)
			withIV[k]++
		}
	}
	var ps []point
	for _, k := range order {
		s, err := metrics.Summarize(groups[k])
		if err != nil {
			return nil, err
		}
		ps = append(ps, point{model: k.model, method: k.method, alpha: k.alpha, summary: s,
			acc: metrics.Percent(s.Accuracy.Mean), dp: metrics.Percent(s.DemographicParity.Mean),
			eo: metrics.Percent(s.EqualOpportunity.Mean), seconds: secs[k] / float64(len(groups[k]))})
		if n := withIV[k]; n == len(groups[k]) {
			p := &ps[len(ps)-1]
			p.dpLo, p.dpHi, p.hasIV = lo[k]/float64(n), hi[k]/float64(n), true
		}
	}
	return ps, nil
}

// front returns the Pareto-optimal points (no other point has both a
// lower ΔDP and a higher accuracy), by ascending ΔDP.
func front(ps []point) []point {
	s := append([]point(nil), ps...)
	sort.SliceStable(s, func(i, j int) bool {
		if s[i].dp != s[j].dp {
			return s[i].dp < s[j].dp
		}
		return s[i].acc > s[j].acc
	})
	var f []point
	for _, p := range s {
		if len(f) == 0 || p.acc > f[len(f)-1].acc {
			f = append(f, p)
		}
	}
	return f
}

// methodPoints returns model's points of method, with the plain point as
// its α = 0.
func methodPoints(ps []point, model, method string) []point {
	var out []point
	for _, p := range ps {
		if p.model == model && (p.method == method || p.method == "plain") {
			out = append(out, p)
		}
	}
	return out
}

// hasMethod reports whether model has runs of method.
func hasMethod(ps []point, model, method string) bool {
	for _, p := range ps {
		if p.model == model && p.method == method {
			return true
		}
	}
	return false
}

// dpText formats a point's ΔDP, with its interval when it has one.
func dpText(p point) string {
	if !p.hasIV {
		return fmt.Sprintf("%.2f", p.dp)
	}
	return fmt.Sprintf("%.2f [%.1f, %.1f]", p.dp, p.dpLo, p.dpHi)
}

// seedSet returns the sorted seeds of model's runs of method.
func seedSet(rs []result, model, method string) []int64 {
	var s []int64
	for _, r := range rs {
		if r.model == model && r.method == method && !slices.Contains(s, r.seed) {
			s = append(s, r.seed)
		}
	}
	slices.Sort(s)
	return s
}

// plainOn returns model's plain point over the given seeds only.
func plainOn(rs []result, model string, seeds []int64) (point, error) {
	var sub []result
	for _, r := range rs {
		if r.model == model && r.method == "plain" && slices.Contains(seeds, r.seed) {
			sub = append(sub, r)
		}
	}
	if len(sub) != len(seeds) {
		return point{}, fmt.Errorf("%s: a method has runs on seeds %s but the plain runs of only %d of them: no reference to compare it with", model, seedsList(seeds), len(sub))
	}
	ps, err := aggregate(sub)
	if err != nil {
		return point{}, err
	}
	return ps[0], nil
}

// seedsList formats seeds as "1, 2, 3".
func seedsList(seeds []int64) string {
	s := make([]string, len(seeds))
	for i, v := range seeds {
		s[i] = strconv.FormatInt(v, 10)
	}
	return strings.Join(s, ", ")
}

// summarize writes, per model and method, the plain numbers and the best
// ΔDP among the configurations within 1 and 2 accuracy points of plain.
// A method run on fewer seeds than its backbone's plain runs (runs merged
// with -from-csv) is compared with the plain runs of its own seeds, and
// its row says so: a mean over other seeds is not a reference.
func summarize(w io.Writer, o *options, rs []result, ps []point) error {
	// Backbones may have different numbers of seeds (runs merged with
	// -from-csv): say so where they do.
	runs := map[int]bool{}
	for _, p := range ps {
		if p.method == "plain" {
			runs[p.summary.Runs] = true
		}
	}
	seeds := seedsText(o.seeds)
	if len(runs) > 1 {
		seeds = "mean over each backbone's seeds"
	}
	fmt.Fprintf(w, "%s, test split, %% (%s of each setting); per backbone and method: the setting with the lowest ΔDP whose accuracy is within 1 and within 2 points of the plain run's, the lowest ΔDP at any accuracy, and the mean seconds per run\n", o.dataset, seeds)
	for _, p := range ps {
		if p.hasIV {
			fmt.Fprintln(w, "ΔDP [lo, hi]: the mean over seeds of each run's 95% bootstrap interval over the test nodes (metrics.Bootstrap, resampled within each group): one run's uncertainty from which nodes were tested; settings run before the intervals were recorded have none")
			break
		}
	}
	for _, m := range o.models {
		var plain point
		for _, p := range ps {
			if p.model == m && p.method == "plain" {
				plain = p
			}
		}
		fmt.Fprintf(w, "\n%s, plain (%s): accuracy %.2f, ΔDP %s, ΔEO %.2f (%.1f s a run)\n\n", m, seedsText(plain.summary.Runs), plain.acc, dpText(plain), plain.eo, plain.seconds)
		fmt.Fprintln(w, "| method | within 1 point: α, acc / ΔDP / ΔEO | within 2 points: α, acc / ΔDP / ΔEO | lowest ΔDP: α, acc / ΔDP | s a run |")
		fmt.Fprintln(w, "|---|---|---|---|---|")
		plainSeeds := seedSet(rs, m, "plain")
		for _, meth := range o.methods {
			if !hasMethod(ps, m, meth) {
				continue
			}
			pts := methodPoints(ps, m, meth)
			ref, label := plain, meth
			if s := seedSet(rs, m, meth); !slices.Equal(s, plainSeeds) {
				var err error
				if ref, err = plainOn(rs, m, s); err != nil {
					return err
				}
				label = fmt.Sprintf("%s (seeds %s only; plain on them: %.2f / %s)", meth, seedsList(s), ref.acc, dpText(ref))
			}
			within := func(loss float64) string {
				best := ref
				found := false
				for _, p := range pts {
					if p.method == meth && p.acc >= ref.acc-loss && p.dp < best.dp {
						best, found = p, true
					}
				}
				if !found {
					return "none below plain"
				}
				return fmt.Sprintf("%g, %.2f / %s / %.2f", best.alpha, best.acc, dpText(best), best.eo)
			}
			low := point{dp: 1e9}
			var secs, n float64
			for _, p := range pts {
				if p.method != meth {
					continue
				}
				if p.dp < low.dp {
					low = p
				}
				secs += p.seconds
				n++
			}
			fmt.Fprintf(w, "| %s | %s | %s | %g, %.2f / %.2f | %.1f |\n", label, within(1), within(2), low.alpha, low.acc, low.dp, secs/n)
		}
	}
	return nil
}

func run(args []string, stdout, stderr io.Writer) error {
	o, err := parseFlags(args, stderr)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(o.out, 0o755); err != nil {
		return err
	}
	var rs []result
	csvPath := filepath.Join(o.out, o.name+".csv")
	if len(o.fromCSV) > 0 {
		for _, f := range o.fromCSV {
			r, err := readCSV(f)
			if err != nil {
				return err
			}
			rs = append(rs, r...)
		}
		if rs, err = mergeRuns(rs); err != nil {
			return err
		}
		// The backbones and methods are those of the runs, in order.
		o.models, o.methods = nil, nil
		seen := map[string]bool{}
		for _, r := range rs {
			if !seen["m:"+r.model] {
				seen["m:"+r.model] = true
				o.models = append(o.models, r.model)
			}
			if r.method != "plain" && !seen["s:"+r.method] {
				seen["s:"+r.method] = true
				o.methods = append(o.methods, r.method)
			}
		}
	} else {
		ds, err := loadData(o)
		if err != nil {
			return err
		}
		exp.PrintWarnings(stderr, ds)
		js := jobs(o)
		fmt.Fprintf(stderr, "%s: %d nodes, %d edges; %d runs (%s × %s, %d seeds, %d epochs), %d workers\n",
			o.dataset, ds.N(), ds.Graph.NumEdges(), len(js), strings.Join(o.models, ","), strings.Join(o.methods, ","), o.seeds, o.epochs, o.workers)
		partial := filepath.Join(o.out, o.name+".partial.csv")
		if rs, err = sweep(o, ds, js, stderr, partial); err != nil {
			return err
		}
		for _, r := range rs {
			if r.method != "plain" && !slices.Contains(o.methods, r.method) {
				o.methods = append(o.methods, r.method)
			}
		}
		defer os.Remove(partial)
	}
	if err := writeCSV(csvPath, rs); err != nil {
		return err
	}
	ps, err := aggregate(rs)
	if err != nil {
		return err
	}
	seeds := map[int64]bool{}
	for _, r := range rs {
		seeds[r.seed] = true
	}
	o.seeds = len(seeds) // what the means are over (-from-csv may merge runs)
	svgPath := filepath.Join(o.out, o.name+".svg")
	title := fmt.Sprintf("%s: test accuracy against ΔDP, each method's Pareto front (%d epochs)", o.dataset, o.epochs)
	if err := plotFronts(svgPath, title, o, rs, ps); err != nil {
		return err
	}
	rtPath := filepath.Join(o.out, o.name+"-runtime.svg")
	rtTitle := fmt.Sprintf("%s: seconds per run (%d epochs)", o.dataset, o.epochs)
	if err := plotRuntime(rtPath, rtTitle, o, ps); err != nil {
		return err
	}
	if err := summarize(stdout, o, rs, ps); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "wrote %s, %s and %s\n", csvPath, svgPath, rtPath)
	return nil
}

// buildKind builds a backbone of a declared kind with the options (the
// hidden width only for kinds that have one) and the sweep's protocol.
func buildKind(name string, d, c int, opt layers.Options, g *G.ExprGraph, ds *datasets.Dataset, ph *layers.Phase) (layers.Model, error) {
	cfg, err := kindConfig(name, d, c, opt)
	if err != nil {
		return nil, err
	}
	return layers.Build(g, ds.Graph, cfg, ph)
}

// kindConfig returns the configuration of a declared kind with the
// options (the hidden width only for kinds that have one) and the sweep's
// protocol.
func kindConfig(name string, d, c int, opt layers.Options) (layers.Config, error) {
	k, err := layers.LookupKind(name)
	if err != nil {
		return nil, err
	}
	if !k.HasHidden() {
		opt.Hidden = 0
	}
	cfg, err := k.Configure(d, c, opt)
	if err != nil {
		return nil, err
	}
	if set, ok := protocol[name]; ok {
		if cfg, err = k.Override(cfg, set); err != nil {
			return nil, err
		}
	}
	return cfg, nil
}
