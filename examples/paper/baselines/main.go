// Command baselines compares FMP with the methods users compare it with,
// on one data set: the plain backbone, FMP on it (λf and λs chosen on
// validation), per-group thresholds, FairGNN and NIFTY (package
// layers/fairtrain), each trained with the FMP paper's protocol. For
// every method and seed it reports test accuracy, ΔDP and ΔEO with 95%
// bootstrap intervals, counterfactual unfairness and instability (package
// layers/perturb) and seconds per run; with -known it also draws the
// missing-attribute curve: ΔDP on the test nodes, whose groups no method
// sees, as the share of other nodes with a known group falls.
//
// Beside the table of means it prints each method's effect net of its
// backbone (effects.go, with package internal/paired): the method minus the plain run of the same
// backbone kind, split and seed, on accuracy, AUC, ΔDP and ΔEO, averaged
// over seeds, with a paired bootstrap interval (both runs on the same
// resampled test nodes), resolved only where the interval excludes 0;
// FMP's row is split into propagation alone (λf 0) and the fairness
// step. The plain run is therefore always among -methods.
//
// -protocol NAME sets the flags of a reference repository's training
// protocol that are not given (the table is package internal/protocol's;
// -h lists it), and the table's Protocol line and the run CSV record
// the protocol a run used.
//
// See README.md beside this file for the questions, the commands and the
// results.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/fairmp/fairmp/examples/paper/internal/exp"
	"github.com/fairmp/fairmp/fmp"
	"github.com/fairmp/fairmp/graph"
	"github.com/fairmp/fairmp/graph/datasets"
	"github.com/fairmp/fairmp/internal/blas"
	"github.com/fairmp/fairmp/internal/cli"
	"github.com/fairmp/fairmp/internal/protocol"
	"github.com/fairmp/fairmp/layers"
	"github.com/fairmp/fairmp/layers/fairness"
	"github.com/fairmp/fairmp/layers/fairtrain"
	"github.com/fairmp/fairmp/layers/perturb"
	"github.com/fairmp/fairmp/layers/postprocess"
	"github.com/fairmp/fairmp/layers/preprocess"
	"github.com/fairmp/fairmp/layers/train"
	"github.com/fairmp/fairmp/metrics"
	"github.com/fairmp/fairmp/metrics/diagnose"
	"github.com/fairmp/fairmp/metrics/selection"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

func main() {
	blas.Default() // fairmp's BLAS before any graph runs (see internal/blas)
	if err := run(os.Args[1:], os.Stdout, os.Stderr); errors.Is(err, flag.ErrHelp) {
		return
	} else if err != nil {
		fmt.Fprintln(os.Stderr, "baselines:", err)
		os.Exit(2)
	}
}

// trainedMethods lists the registry's in-training and architecture
// methods but FMP, which the -methods name fmp runs on the frontier.
func trainedMethods() []string {
	var out []string
	for _, n := range fairness.Names(fairness.StageLoss, fairness.StageArchitecture) {
		if n != methodFMP {
			out = append(out, n)
		}
	}
	return out
}

// Methods compared besides the registry's (package layers/fairness).
const (
	methodPlain      = "plain"
	methodFMP        = "fmp"
	methodThresholds = "thresholds"
)

type options struct {
	data, dataset, out string
	methods            []string
	seeds              int
	firstSeed          int64
	synthN             int
	// st is the training protocol: -backbone, -hidden, -epochs, -lr,
	// -weight-decay, -dropout, -select, -include-sens, -no-scale and
	// -train-labels, filled from -protocol's preset where not given.
	st                        protocol.Settings
	protocolName              string // -protocol ("": none)
	known                     []float64
	knownNodes                []int
	saveSplit                 string
	fairgnnAlpha, fairgnnBeta float64
	fairgnnHidden             int
	estEpochs                 int
	curveFMP                  fmp.Config
	merge                     bool
	editsThreshold            float64
	weights                   map[string]float64 // -method-weights
}

func parseFlags(args []string, stderr io.Writer) (*options, error) {
	fs := flag.NewFlagSet("baselines", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, "baselines compares FMP with the fair GNNs users compare it with, on one data set and one protocol (see README.md).\n\nFlags:\n")
		fs.PrintDefaults()
		fmt.Fprintf(stderr, "\n-protocol presets (every flag they set can be given to override it):\n%s", protocol.Help())
	}
	o := &options{}
	tr := train.DefaultConfig()
	fs.StringVar(&o.data, "data", os.Getenv("FAIRMP_DATA"), "folder holding the data sets (default $FAIRMP_DATA)")
	fs.StringVar(&o.dataset, "dataset", "synthetic", `"synthetic" (generated, -n nodes) or a datasets preset ("nba", "bail", "credit", ...)`)
	fs.IntVar(&o.synthN, "n", 2000, "nodes of the generated graph")
	fs.StringVar(&o.protocolName, "protocol", "", "a reference repository's training protocol, which sets the flags below it names unless given: "+strings.Join(protocol.Names(), ", ")+" (-h lists what each sets)")
	fs.StringVar(&o.st.Backbone, protocol.FlagBackbone, "gcn", "backbone kind: "+strings.Join(layers.BackboneNames(), ", "))
	all := append(append([]string{methodPlain, methodFMP, methodThresholds}, trainedMethods()...), fairness.Names(fairness.StagePre)...)
	methods := fs.String("methods", "plain,fmp,thresholds,fairgnn,nifty", "comma-separated methods: "+strings.Join(all, ", "))
	fs.IntVar(&o.seeds, "seeds", 5, "seeds per method")
	fs.Int64Var(&o.firstSeed, "first-seed", 1, "first seed")
	fs.Float64Var(&o.editsThreshold, "edits-threshold", preprocess.DefaultEDITSConfig().Threshold, "EDITS' threshold factor r: an edge whose weight changed by more than r times the largest change is removed or added (the authors' classification.py runs Bail at 0.015, this default; a comment in their train.py says 0.012 Bail, 0.02 Credit, 0.25 German)")
	fs.IntVar(&o.st.Epochs, protocol.FlagEpochs, 300, "training epochs")
	fs.IntVar(&o.st.Hidden, protocol.FlagHidden, 64, "hidden width of the backbone")
	fs.Float64Var(&o.st.LR, protocol.FlagLR, tr.Adam.LR, "Adam learning rate")
	fs.Float64Var(&o.st.WeightDecay, protocol.FlagWeightDecay, tr.Adam.WeightDecay, "Adam weight decay")
	dropout := fs.String(protocol.FlagDropout, "", "dropout of the backbone, for a kind that has one (default: the kind's own, 0.5 for gcn)")
	fs.BoolVar(&o.st.NoScale, protocol.FlagNoScale, false, "leave the features unscaled (default: the preset's own scaling: every feature column min-max scaled to [-1, 1] over all nodes, pokec_z's and pokec_n's left as they are; a sensitive column kept with -include-sens is never scaled)")
	fs.BoolVar(&o.st.IncludeSens, protocol.FlagIncludeSens, false, "keep the sensitive attribute among the features (NIFTY's protocol; counterfactual unfairness is then about the features)")
	known := fs.String("known", "", "comma-separated shares of non-test nodes whose group is known (e.g. 1,0.3,0.1,0.01): draw the missing-attribute curve instead of the table")
	knownNodes := fs.String("known-nodes", "", "comma-separated numbers of non-test nodes whose group is known (FairGNN's NBA protocol: 50), instead of -known's shares")
	fs.IntVar(&o.st.TrainLabels, protocol.FlagTrainLabels, 0, "keep this many of the split's training nodes, half of each class where it has them, drawn with seed 20 for every run (the reference code's label_number: NIFTY 100 on Bail, 6000 on Credit; FairGNN 100 on NBA); 0 keeps them all")
	fs.Float64Var(&o.fairgnnAlpha, "fairgnn-alpha", fairtrain.DefaultFairGNNConfig().Alpha, "FairGNN's covariance weight α")
	fs.Float64Var(&o.fairgnnBeta, "fairgnn-beta", fairtrain.DefaultFairGNNConfig().Beta, "FairGNN's adversary weight β")
	fs.IntVar(&o.fairgnnHidden, "fairgnn-hidden", fairtrain.DefaultFairGNNConfig().Hidden, "FairGNN's representation width")
	fs.IntVar(&o.estEpochs, "estimator-epochs", fairtrain.DefaultEstimatorConfig().Epochs, "FairGNN's estimator epochs")
	o.curveFMP = fmp.DefaultConfig()
	o.curveFMP.LambdaS = 0
	fs.Float64Var(&o.curveFMP.LambdaS, "curve-lambda-s", o.curveFMP.LambdaS, "FMP's λs in the missing-attribute curve (0: debias the backbone's logits without propagating them again)")
	fs.Float64Var(&o.curveFMP.LambdaF, "curve-lambda-f", o.curveFMP.LambdaF, "FMP's λf in the missing-attribute curve (fixed: the groups of the validation nodes are partly unknown too)")
	fs.StringVar(&o.out, "out", "", "folder for the run CSV and each run's outcome (NAME_runs/METHOD_seedN.gob, for -merge) (default: none)")
	fs.BoolVar(&o.merge, "merge", false, "train nothing: make the table and the CSV from the runs saved under -out by earlier invocations (seeds run in separate processes)")
	fs.StringVar(&o.saveSplit, "save-split", "", "write the split the runs use (after -train-labels) to this JSON file, {\"train\", \"val\", \"test\"} lists of 0-based rows, for another implementation to train on the same nodes")
	// Paired effects (issue 56): every method is measured against the
	// plain run of its backbone, which -methods then always includes.
	sel := fs.String(protocol.FlagSelect, "acc", "the epoch each training keeps, chosen on the validation nodes: "+strings.Join(train.SelectionWords(), ", ")+" (accuracy, AUC, loss, or the last epoch; the reference codes differ: NIFTY's and FairGNN's keep by validation AUC or loss, FMP's by accuracy)")
	weights := fs.String("method-weights", "", "comma-separated NAME=W: the fairness weight of a method of -methods (regularizer, adversary, mixup: α; nifty: λ; ...; fairgnn's β is -fairgnn-beta); default: each method's own")
	err := fs.Parse(args)
	if err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if !(o.editsThreshold >= 0 && o.editsThreshold <= 1) {
		return nil, fmt.Errorf("-edits-threshold: %v, want a share in [0, 1] of the largest change", o.editsThreshold)
	}
	if o.merge && o.out == "" {
		return nil, fmt.Errorf("-merge: give -out, the folder the runs were saved in")
	}
	if o.out != "" {
		// Every check before a write is about where the bytes land.
		r, err := cli.ResolvePath(o.out)
		if err != nil {
			return nil, fmt.Errorf("-out %s: %w", o.out, err)
		}
		o.out = r
	}
	if o.merge && (*known != "" || *knownNodes != "") {
		return nil, fmt.Errorf("-merge makes the table of runs, not the curve of -known or -known-nodes: leave one out")
	}
	o.methods = cli.SplitList(*methods)
	for _, m := range o.methods {
		if !slices.Contains(all, m) {
			return nil, fmt.Errorf("-methods: unknown method %q, want some of %s", m, strings.Join(all, ", "))
		}
	}
	if !slices.Contains(o.methods, methodPlain) {
		// Every method's effect is its difference from this run.
		o.methods = append([]string{methodPlain}, o.methods...)
	}
	if o.st.Select, err = train.ParseSelection(*sel); err != nil {
		return nil, fmt.Errorf("-select: %w", err)
	}
	o.st.Dropout = math.NaN()
	if *dropout != "" {
		if o.st.Dropout, err = strconv.ParseFloat(*dropout, 64); err != nil || !(o.st.Dropout >= 0 && o.st.Dropout < 1) {
			return nil, fmt.Errorf("-dropout %q, want a probability in [0, 1)", *dropout)
		}
	}
	if o.protocolName != "" {
		pr, err := protocol.Lookup(o.protocolName)
		if err != nil {
			return nil, fmt.Errorf("-protocol: %w", err)
		}
		given := map[string]bool{}
		fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
		protocol.Apply(&o.st, pr.For(o.dataset), given)
	}
	if !(o.st.LR > 0) || !(o.st.WeightDecay >= 0) {
		return nil, fmt.Errorf("-lr %v, -weight-decay %v: want a learning rate > 0 and a decay >= 0", o.st.LR, o.st.WeightDecay)
	}
	if o.weights, err = parseWeights(*weights, o.methods); err != nil {
		return nil, err
	}
	if k, err := layers.LookupKind(o.st.Backbone); err != nil {
		return nil, fmt.Errorf("-backbone: %w", err)
	} else if k.Wraps() || k.Composite() {
		return nil, fmt.Errorf("-backbone %q, want one of %s", o.st.Backbone, strings.Join(layers.BackboneNames(), ", "))
	}
	if _, err := o.st.Configure(2, 2, layers.DefaultOptions()); err != nil {
		return nil, err
	}
	if *known != "" {
		ks, err := cli.ParseFloats(*known, 0)
		if err != nil {
			return nil, fmt.Errorf("-known: %w", err)
		}
		for _, k := range ks {
			if !(k > 0 && k <= 1) {
				return nil, fmt.Errorf("-known: share %v, want shares in (0, 1]", k)
			}
		}
		o.known = ks
	}
	if *knownNodes != "" {
		if *known != "" {
			return nil, fmt.Errorf("-known and -known-nodes: give one of them")
		}
		for _, f := range cli.SplitList(*knownNodes) {
			k, err := strconv.Atoi(f)
			if err != nil || k < 2 {
				return nil, fmt.Errorf("-known-nodes: %q, want whole numbers >= 2", f)
			}
			o.knownNodes = append(o.knownNodes, k)
		}
	}
	if o.st.TrainLabels < 0 || o.st.TrainLabels == 1 {
		return nil, fmt.Errorf("-train-labels %d: want 0 (all) or at least 2 (one of each class)", o.st.TrainLabels)
	}
	if o.seeds < 1 || o.st.Epochs < 1 || o.st.Hidden < 1 {
		return nil, fmt.Errorf("-seeds %d, -epochs %d, -hidden %d: want all >= 1", o.seeds, o.st.Epochs, o.st.Hidden)
	}
	return o, nil
}

// parseWeights reads -method-weights: NAME=W pairs, each NAME a method
// of methods with a weight (fairness.Weighted) other than fairgnn (whose
// β is -fairgnn-beta), each W a valid weight of it.
func parseWeights(list string, methods []string) (map[string]float64, error) {
	out := map[string]float64{}
	for _, f := range cli.SplitList(list) {
		name, v, ok := strings.Cut(f, "=")
		if !ok {
			return nil, fmt.Errorf("-method-weights: %q, want NAME=W (e.g. regularizer=0.5)", f)
		}
		w, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return nil, fmt.Errorf("-method-weights: %q: the weight %q is not a number", f, v)
		}
		if !slices.Contains(methods, name) {
			return nil, fmt.Errorf("-method-weights: %q: %s is not among -methods %s", f, name, strings.Join(methods, ","))
		}
		if name == "fairgnn" {
			return nil, fmt.Errorf("-method-weights: %q: set FairGNN's adversary weight β with -fairgnn-beta", f)
		}
		if _, dup := out[name]; dup {
			return nil, fmt.Errorf("-method-weights: %s given twice", name)
		}
		m, err := fairness.Lookup(name)
		if err != nil {
			return nil, fmt.Errorf("-method-weights: %q: %s has no weight to set", f, name)
		}
		wm, ok := m.(fairness.Weighted)
		if !ok {
			return nil, fmt.Errorf("-method-weights: %q: %s has no weight to set", f, name)
		}
		if err := wm.WithWeight(w).Validate(); err != nil {
			return nil, fmt.Errorf("-method-weights: %q: %w", f, err)
		}
		out[name] = w
	}
	return out, nil
}

// problem is the data set with its sensitive feature column.
type problem struct {
	ds      *datasets.Dataset
	sensCol int
}

func load(o *options) (*problem, error) {
	if o.dataset == "synthetic" {
		c := datasets.DefaultSyntheticConfig()
		c.N = o.synthN
		ds, err := datasets.Synthetic(c)
		if err != nil {
			return nil, err
		}
		if o.st.IncludeSens {
			return nil, fmt.Errorf("-include-sens: the generated graph has no sensitive feature column%s", fromPreset(o, protocol.FlagIncludeSens))
		}
		if o.st.NoScale {
			return nil, fmt.Errorf("-no-scale: the generated graph's features are generated as they are, never scaled; leave -no-scale out")
		}
		return &problem{ds: ds, sensCol: -1}, nil
	}
	if o.data == "" {
		return nil, fmt.Errorf("no data folder: set -data or $FAIRMP_DATA")
	}
	opts := datasets.DefaultOptions()
	opts.IncludeSens = o.st.IncludeSens
	ds, err := protocol.LoadPreset(o.data, o.dataset, opts, !o.st.NoScale)
	if err != nil {
		return nil, err
	}
	p := &problem{ds: ds, sensCol: -1}
	if o.st.IncludeSens {
		col := sensColumn(o.dataset)
		p.sensCol = slices.Index(ds.FeatureNames, col)
		if p.sensCol < 0 {
			return nil, fmt.Errorf("-include-sens: no feature column %q among %d", col, len(ds.FeatureNames))
		}
	}
	return p, nil
}

// writeSplit writes sp as split.json does: 0-based rows per part.
func writeSplit(path string, sp datasets.Split) error {
	b, err := json.Marshal(map[string][]int{"train": sp.Train, "val": sp.Val, "test": sp.Test})
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

// sensColumn names the sensitive column of a preset.
func sensColumn(name string) string {
	if c, err := datasets.NIFTYPreset(name); err == nil {
		return c.SensColumn
	}
	if c, err := datasets.FairGNNPreset(name); err == nil {
		return c.SensColumn
	}
	return ""
}

// task returns a fresh task on the data in a new graph.
func task(p *problem) (*train.Task, error) {
	ds := p.ds
	g := G.NewGraph()
	x, err := train.FeatureNode(g, tensor.Float64, ds.Features, ds.N(), ds.NumFeatures, "x")
	if err != nil {
		return nil, err
	}
	return &train.Task{Graph: g, X: x, Labels: ds.Labels, Train: ds.Split.Train, Val: ds.Split.Val, Classes: ds.NumClasses(), Phase: layers.NewPhase()}, nil
}

// backbone returns the backbone configuration of the protocol (SGC with
// K = 2).
func backbone(o *options, p *problem, seed int64) (layers.Config, error) {
	cfg, err := o.st.Configure(p.ds.NumFeatures, p.ds.NumClasses(), layers.Options{Dtype: tensor.Float64, Seed: seed})
	if err != nil {
		return nil, err
	}
	if o.st.Backbone == "sgc" {
		k, _ := layers.LookupKind(o.st.Backbone)
		return k.Override(cfg, map[string]any{"k": 2})
	}
	return cfg, nil
}

// method returns the configured fairtrain method.
func method(o *options, name string, seed int64) (fairness.Method, error) {
	m, err := fairness.Lookup(name)
	if err != nil {
		return nil, err
	}
	if f, ok := m.(fairtrain.FairGNNConfig); ok {
		f.Alpha, f.Beta, f.Hidden, f.Estimator.Epochs = o.fairgnnAlpha, o.fairgnnBeta, o.fairgnnHidden, o.estEpochs
		m = f
	}
	if w, ok := o.weights[name]; ok {
		m = m.(fairness.Weighted).WithWeight(w) // parseWeights checked it is one
	}
	return fairness.WithSeed(m, seed), nil
}

// outcome is one method's run on one seed.
type outcome struct {
	method  string
	seed    int64
	probs   []float64
	report  metrics.Report
	iv      metrics.Intervals
	stab    perturb.Report
	seconds float64
	setting string
	// prop, for FMP, is the test-time probabilities of propagation
	// alone: λf = 0 at the chosen λs, on the same trained backbone (the
	// first half of FMP's decomposition, effects.go).
	prop []float64
}

func trainConfig(o *options) train.Config {
	tc := train.DefaultConfig()
	tc.Epochs, tc.Select, tc.SelectAfter = o.st.Epochs, o.st.Select, o.st.SelectAfter
	tc.Adam.LR, tc.Adam.WeightDecay = o.st.LR, o.st.WeightDecay
	return tc
}

// runSeed runs every method of o on one seed.
func runSeed(o *options, p *problem, seed int64, log io.Writer) ([]outcome, error) {
	ds := p.ds
	var outs []outcome
	var plain *fairness.Fitted
	var plainTask *train.Task
	var plainSecs float64
	needPlain := slices.Contains(o.methods, methodPlain) || slices.Contains(o.methods, methodFMP) || slices.Contains(o.methods, methodThresholds)
	if needPlain {
		start := time.Now()
		t, err := task(p)
		if err != nil {
			return nil, err
		}
		cfg, err := backbone(o, p, seed)
		if err != nil {
			return nil, err
		}
		if plain, err = fairness.Fit(context.Background(), nil, cfg, setup(p, t, ds.Sens), trainConfig(o)); err != nil {
			return nil, err
		}
		plainTask, plainSecs = t, time.Since(start).Seconds()
	}
	for _, name := range o.methods {
		start := time.Now()
		var model layers.Model
		var probs []float64
		var setting string
		var secs float64
		var prop []float64
		pd := p // the data the model trained on (a pre-processing method's debiased copy)
		switch {
		case isPre(name):
			// The backbone trained plainly on the method's debiased data.
			pp, st, err := preprocessed(o, p, name, seed, log)
			if err != nil {
				return nil, err
			}
			if model, plainTask, err = trainOn(o, pp, seed, name, log); err != nil {
				return nil, err
			}
			pd, setting, secs = pp, st, time.Since(start).Seconds()
		case name == methodPlain:
			model, secs = plain.Model, plainSecs
		case name == methodFMP:
			fm, err := fmp.On(plain.Model, ds.Graph, ds.Sens, fmp.DefaultOnConfig(), plainTask.Phase)
			if err != nil {
				return nil, err
			}
			fc := fmp.DefaultFrontierConfig()
			fc.LambdaS = []float64{0, 1}
			fc.Rule = selection.Rule{MaxAccuracyLoss: 0.01}
			f, err := fmp.NewFrontier(context.Background(), fm, plainTask, fc)
			if err != nil {
				return nil, fmt.Errorf("fmp: %w", err)
			}
			if model, err = f.Model(); err != nil {
				return nil, err
			}
			c := f.Points[f.Chosen].Config
			setting = fmt.Sprintf("λs %g, λf %g", c.LambdaS, c.LambdaF)
			secs = plainSecs + time.Since(start).Seconds()
			c.LambdaF = 0
			pm, err := fm.WithFMP(c)
			if err != nil {
				return nil, fmt.Errorf("fmp: propagation alone: %w", err)
			}
			pr, err := train.Predict(pm, plainTask, nil)
			if err != nil {
				return nil, fmt.Errorf("fmp: propagation alone: %w", err)
			}
			prop = pr.Probs
		case name == methodThresholds:
			pred, err := train.Predict(plain.Model, plainTask, nil)
			if err != nil {
				return nil, err
			}
			p1 := pred.Column(1)
			c := postprocess.DefaultThresholdsConfig()
			c.Rule = selection.Rule{MaxAccuracyLoss: 0.01}
			th, err := postprocess.FitThresholds(p1, ds.Labels, ds.Sens, ds.Split.Val, c)
			if err != nil {
				return nil, fmt.Errorf("thresholds: %w", err)
			}
			if probs, err = th.OneHot(p1, ds.Sens, seed); err != nil {
				return nil, fmt.Errorf("thresholds: %w", err)
			}
			secs = plainSecs + time.Since(start).Seconds()
		default:
			t, err := task(p)
			if err != nil {
				return nil, err
			}
			cfg, err := backbone(o, p, seed)
			if err != nil {
				return nil, err
			}
			m, err := method(o, name, seed)
			if err != nil {
				return nil, err
			}
			fit, err := fairness.Fit(context.Background(), m, cfg, setup(p, t, ds.Sens), trainConfig(o))
			if err != nil {
				return nil, fmt.Errorf("%s: %w", name, err)
			}
			model, secs = fit.Model, time.Since(start).Seconds()
			plainTask = t
		}
		oc := outcome{method: name, seed: seed, seconds: secs, setting: setting, prop: prop}
		if probs == nil {
			pr, err := train.Predict(model, plainTaskFor(name, plainTask), nil)
			if err != nil {
				return nil, err
			}
			probs = pr.Probs
			in := perturb.Input{Model: model, Graph: pd.ds.Graph, Features: pd.ds.Features, NumFeatures: ds.NumFeatures,
				Sens: ds.Sens, SensFeature: pd.sensCol, Classes: ds.NumClasses()}
			if oc.stab, err = perturb.Evaluate(in, ds.Split.Test, perturb.DefaultConfig(), metrics.DefaultOptions(), metrics.DefaultBootstrapConfig()); err != nil {
				return nil, fmt.Errorf("%s: %w", name, err)
			}
		} else {
			oc.stab = perturb.Report{Unfairness: metrics.Interval{Point: math.NaN()}, Instability: metrics.Interval{Point: math.NaN()}}
		}
		oc.probs = probs
		var err error
		if oc.report, err = metrics.Evaluate(probs, ds.NumClasses(), ds.Labels, ds.Sens, ds.Split.Test, metrics.DefaultOptions()); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		if oc.iv, err = metrics.Bootstrap(probs, ds.NumClasses(), ds.Labels, ds.Sens, ds.Split.Test, metrics.DefaultOptions(), metrics.DefaultBootstrapConfig()); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		fmt.Fprintf(log, "seed %d %-10s acc %6.2f AUC %6.2f ΔDP %6.2f ΔEO %6.2f CF %6.2f instab %6.2f %6.1fs %s\n", seed, name,
			metrics.Percent(oc.report.Accuracy), metrics.Percent(oc.report.AUC), metrics.Percent(oc.report.DemographicParity), metrics.Percent(oc.report.EqualOpportunity),
			metrics.Percent(oc.stab.Unfairness.Point), metrics.Percent(oc.stab.Instability.Point), secs, setting)
		outs = append(outs, oc)
	}
	return outs, nil
}

// plainTaskFor returns the task a method's model was built in.
func plainTaskFor(_ string, t *train.Task) *train.Task { return t }

func setup(p *problem, t *train.Task, sens []int) fairness.Setup {
	s := fairness.NewSetup(p.ds.Graph, t, sens)
	s.SensFeature = p.sensCol
	return s
}

// table writes the methods' means over seeds.
func table(w io.Writer, o *options, p *problem, all [][]outcome) error {
	fmt.Fprintf(w, "%s, backbone %s, %d seeds (%d–%d), %d epochs, %d training nodes; test %%: accuracy, ΔDP, ΔEO with the 95%% bootstrap interval of the seed mean over the %d test nodes (metrics.BootstrapMean); counterfactual unfairness (CF) and instability: mean over seeds [mean of the runs' 95%% intervals]; seconds a run (FMP and thresholds: the plain run's training plus the post-processing)\n\n",
		o.dataset, o.st.Backbone, o.seeds, o.firstSeed, o.firstSeed+int64(o.seeds)-1, o.st.Epochs, len(p.ds.Split.Train), len(p.ds.Split.Test))
	fmt.Fprintf(w, "Protocol: %s\n\n", protocolLine(o))
	fmt.Fprintln(w, "| method | accuracy | ΔDP | ΔEO | CF unfairness | instability | s a run | settings chosen |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|")
	for k, name := range o.methods {
		var probs [][]float64
		var cf, cfLo, cfHi, in, inLo, inHi, secs float64
		var settings []string
		for _, runs := range all {
			r := runs[k]
			probs = append(probs, r.probs)
			cf, cfLo, cfHi = cf+r.stab.Unfairness.Point, cfLo+r.stab.Unfairness.Lo, cfHi+r.stab.Unfairness.Hi
			in, inLo, inHi = in+r.stab.Instability.Point, inLo+r.stab.Instability.Lo, inHi+r.stab.Instability.Hi
			secs += r.seconds
			if r.setting != "" {
				settings = append(settings, r.setting)
			}
		}
		nr := float64(len(all))
		iv, err := metrics.BootstrapMean(probs, p.ds.NumClasses(), p.ds.Labels, p.ds.Sens, p.ds.Split.Test, metrics.DefaultOptions(), metrics.DefaultBootstrapConfig())
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		stab := func(v, lo, hi float64) string {
			if math.IsNaN(v) {
				return "n/a"
			}
			return fmt.Sprintf("%.2f [%.1f, %.1f]", 100*v/nr, 100*lo/nr, 100*hi/nr)
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %.1f | %s |\n", name, iv.Accuracy, iv.DemographicParity, iv.EqualOpportunity,
			stab(cf, cfLo, cfHi), stab(in, inLo, inHi), secs/nr, strings.Join(settings, "; "))
	}
	return trivialRuns(w, o, all)
}

// trivialRuns lists, below a table, the runs whose result is trivially
// true: accuracy at or below the majority-class rate, or (nearly) every
// test node selected or none, whose ΔDP is then (nearly) 0 by
// triviality (diagnose.Report).
func trivialRuns(w io.Writer, o *options, all [][]outcome) error {
	var lines []string
	for k, name := range o.methods {
		count := map[diagnose.Code]int{}
		for _, runs := range all {
			ds, err := diagnose.Report(runs[k].report, nil, name, diagnose.DefaultConfig())
			if err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
			for _, d := range ds { // DiagnoseReport gives each of these once at most
				if d.Code == diagnose.BelowMajority || d.Code == diagnose.TrivialSelection {
					count[d.Code]++
				}
			}
		}
		for _, c := range []diagnose.Code{diagnose.TrivialSelection, diagnose.BelowMajority} {
			if count[c] > 0 {
				lines = append(lines, fmt.Sprintf("%s: %s in %d of %d runs", name, c, count[c], len(all)))
			}
		}
	}
	if len(lines) > 0 {
		fmt.Fprintf(w, "\nWarning: trivially true results (%s: every test node selected or none, so ΔDP and ΔEO are near 0 by triviality; %s: no more accurate than predicting the larger class for every node): %s.\n",
			diagnose.TrivialSelection, diagnose.BelowMajority, strings.Join(lines, "; "))
	}
	return nil
}

// csvHeader begins the run CSV: -out replaces only a file that begins
// with csvMark, its columns before the protocol (cli.ReplaceFile), so
// that a CSV written before the column is replaced too.
const (
	csvMark   = "method,seed,accuracy,dp,eo,acc_lo,acc_hi,dp_lo,dp_hi,eo_lo,eo_hi,cf,cf_lo,cf_hi,instability,inst_lo,inst_hi,seconds,setting"
	csvHeader = csvMark + ",protocol"
)

// protocolLine says the run's protocol: -protocol's name, when given,
// and the flags' values.
func protocolLine(o *options) string {
	if o.protocolName == "" {
		return o.st.Flags()
	}
	return "-protocol " + o.protocolName + ": " + o.st.Flags()
}

// writeCSV writes one line per run, whole or not at all; the last
// column is the protocol (protocolLine).
func writeCSV(path string, o *options, all [][]outcome) error {
	var f bytes.Buffer
	fmt.Fprintln(&f, csvHeader)
	proto := protocolLine(o)
	for _, runs := range all {
		for _, r := range runs {
			fmt.Fprintf(&f, "%s,%d,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f,%.2f,%q,%q\n", r.method, r.seed,
				100*r.report.Accuracy, 100*r.report.DemographicParity, 100*r.report.EqualOpportunity,
				100*r.iv.Accuracy.Lo, 100*r.iv.Accuracy.Hi, 100*r.iv.DemographicParity.Lo, 100*r.iv.DemographicParity.Hi,
				100*r.iv.EqualOpportunity.Lo, 100*r.iv.EqualOpportunity.Hi,
				100*r.stab.Unfairness.Point, 100*r.stab.Unfairness.Lo, 100*r.stab.Unfairness.Hi,
				100*r.stab.Instability.Point, 100*r.stab.Instability.Lo, 100*r.stab.Instability.Hi, r.seconds, r.setting, proto)
		}
	}
	return cli.ReplaceFile(path, f.Bytes(), []byte(csvMark))
}

// knownSens returns the attribute with the groups of the test nodes and
// of all but a share of the other nodes hidden (−1), drawn from seed.
func knownSens(ds *datasets.Dataset, share float64, seed int64) []int {
	cand := knownCandidates(ds)
	rng := rand.New(rand.NewSource(seed))
	rng.Shuffle(len(cand), func(a, b int) { cand[a], cand[b] = cand[b], cand[a] })
	k := max(2, int(math.Round(share*float64(len(cand)))))
	out := make([]int, ds.N())
	for i := range out {
		out[i] = -1
	}
	for _, i := range cand[:min(k, len(cand))] {
		out[i] = ds.Sens[i]
	}
	return out
}

// knownCandidates lists the nodes whose group may be known: the non-test
// nodes with a group.
func knownCandidates(ds *datasets.Dataset) []int {
	test := make([]bool, ds.N())
	for _, i := range ds.Split.Test {
		test[i] = true
	}
	var cand []int
	for i, s := range ds.Sens {
		if s >= 0 && !test[i] {
			cand = append(cand, i)
		}
	}
	return cand
}

// curvePoint is one method at one known share and seed.
type curvePoint struct {
	method string
	share  float64
	seed   int64
	acc    float64
	dp     float64
	eo     float64
	estAcc float64 // the estimator's accuracy on the test nodes (fmp-est, fairgnn)
	estOne bool    // the estimator put every test node in one group
}

// curveSeed runs the missing-attribute curve for one seed: the plain
// backbone is trained once; FMP (defaults) is applied to its logits with
// the known groups alone (fmp-known) and with the estimator's soft
// memberships elsewhere (fmp-est); FairGNN is trained with the known
// groups. ΔDP is measured on the test nodes with their true groups.
func curveSeed(o *options, p *problem, seed int64, log io.Writer) ([]curvePoint, error) {
	ds := p.ds
	t, err := task(p)
	if err != nil {
		return nil, err
	}
	cfg, err := backbone(o, p, seed)
	if err != nil {
		return nil, err
	}
	plain, err := fairness.Fit(context.Background(), nil, cfg, setup(p, t, ds.Sens), trainConfig(o))
	if err != nil {
		return nil, err
	}
	lg, err := train.Logits(plain.Model, t)
	if err != nil {
		return nil, err
	}
	adj := graph.NormalizedAdjacency(ds.Graph)
	eval := func(probs []float64) (metrics.Report, error) {
		return metrics.Evaluate(probs, 2, ds.Labels, ds.Sens, ds.Split.Test, metrics.DefaultOptions())
	}
	// est is the estimator's accuracy on the test nodes' groups, and
	// whether it put them all in one group.
	type est struct {
		acc float64
		one bool
	}
	estAcc := func(score []float64) est {
		right, ones := 0, 0
		for _, i := range ds.Split.Test {
			if score[i] > 0.5 {
				ones++
			}
			if (score[i] > 0.5) == (ds.Sens[i] == 1) {
				right++
			}
		}
		n := len(ds.Split.Test)
		return est{float64(right) / float64(n), ones == 0 || ones == n}
	}
	var pts []curvePoint
	add := func(method string, share float64, probs []float64, e est) error {
		r, err := eval(probs)
		if err != nil {
			return fmt.Errorf("%s at %g: %w", method, share, err)
		}
		pts = append(pts, curvePoint{method: method, share: share, seed: seed, acc: r.Accuracy, dp: r.DemographicParity, eo: r.EqualOpportunity, estAcc: e.acc, estOne: e.one})
		fmt.Fprintf(log, "seed %d known %5.3f %-10s acc %6.2f ΔDP %6.2f ΔEO %6.2f est %5.2f\n", seed, share, method,
			metrics.Percent(r.Accuracy), metrics.Percent(r.DemographicParity), metrics.Percent(r.EqualOpportunity), metrics.Percent(e.acc))
		return nil
	}
	pp, err := train.Predict(plain.Model, t, nil)
	if err != nil {
		return nil, err
	}
	if err := add(methodPlain, 0, pp.Probs, est{acc: math.NaN()}); err != nil {
		return nil, err
	}
	for _, share := range o.known {
		known := knownSens(ds, share, seed)
		// FMP on the known groups alone.
		l, err := fmp.New(adj, known, o.curveFMP)
		if err != nil {
			return nil, fmt.Errorf("fmp-known at %g: %w", share, err)
		}
		out, err := l.Apply(lg)
		if err != nil {
			return nil, err
		}
		if err := add("fmp-known", share, softmax(out), est{acc: math.NaN()}); err != nil {
			return nil, err
		}
		// FMP on the estimator's memberships where unknown.
		est, err := fairtrain.EstimateSens(context.Background(), estimator(o, seed), setup(p, t, known))
		if err != nil {
			return nil, fmt.Errorf("estimator at %g: %w", share, err)
		}
		soft := make([]float64, len(known))
		for i, s := range known {
			soft[i] = est[i]
			if s >= 0 {
				soft[i] = float64(s)
			}
		}
		ls, err := fmp.NewSoft(adj, soft, o.curveFMP)
		if err != nil {
			return nil, fmt.Errorf("fmp-est at %g: %w", share, err)
		}
		if out, err = ls.Apply(lg); err != nil {
			return nil, err
		}
		if err := add("fmp-est", share, softmax(out), estAcc(soft)); err != nil {
			return nil, err
		}
		// FairGNN with the known groups.
		ft, err := task(p)
		if err != nil {
			return nil, err
		}
		m, err := method(o, "fairgnn", seed)
		if err != nil {
			return nil, err
		}
		fit, err := fairness.Fit(context.Background(), m, cfg, setup(p, ft, known), trainConfig(o))
		if err != nil {
			return nil, fmt.Errorf("fairgnn at %g: %w", share, err)
		}
		fp, err := train.Predict(fit.Model, ft, nil)
		if err != nil {
			return nil, err
		}
		if err := add("fairgnn", share, fp.Probs, estAcc(fit.SensScore)); err != nil {
			return nil, err
		}
	}
	return pts, nil
}

func estimator(o *options, seed int64) fairtrain.EstimatorConfig {
	e := fairtrain.DefaultEstimatorConfig()
	e.Epochs, e.Seed = o.estEpochs, seed
	return e
}

// softmax returns the row softmax of n × c logits as probabilities.
func softmax(z *tensor.Dense) []float64 {
	c := z.Shape()[1]
	var vals []float64
	switch d := z.Data().(type) {
	case []float64:
		vals = d
	case []float32:
		for _, v := range d {
			vals = append(vals, float64(v))
		}
	}
	out := make([]float64, len(vals))
	for i := 0; i < len(vals)/c; i++ {
		row := vals[i*c : (i+1)*c]
		m := slices.Max(row)
		s := 0.0
		for j, v := range row {
			out[i*c+j] = math.Exp(v - m)
			s += out[i*c+j]
		}
		for j := range row {
			out[i*c+j] /= s
		}
	}
	return out
}

// curveTable writes the curve's means over seeds.
func curveTable(w io.Writer, o *options, p *problem, pts []curvePoint) {
	fmt.Fprintf(w, "%s, backbone %s, %d seeds, %d epochs, %d training nodes; FMP with λs %g, λf %g on the trained backbone's logits; FairGNN α %g, β %g: test %% (mean ± std over seeds) on the %d test nodes, whose groups no method sees; \"known\" is the share of the other nodes whose group the methods are given; est. acc: the estimator's accuracy on the test nodes' groups\n\n",
		o.dataset, o.st.Backbone, o.seeds, o.st.Epochs, len(p.ds.Split.Train), o.curveFMP.LambdaS, o.curveFMP.LambdaF, o.fairgnnAlpha, o.fairgnnBeta, len(p.ds.Split.Test))
	fmt.Fprintln(w, "| known | method | accuracy | ΔDP | ΔEO | est. acc |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|")
	type key struct {
		share  float64
		method string
	}
	var order []key
	groups := map[key][]curvePoint{}
	for _, q := range pts {
		k := key{q.share, q.method}
		if _, ok := groups[k]; !ok {
			order = append(order, k)
		}
		groups[k] = append(groups[k], q)
	}
	ms := func(xs []float64) string {
		m, s := 0.0, 0.0
		for _, x := range xs {
			m += x
		}
		m /= float64(len(xs))
		for _, x := range xs {
			s += (x - m) * (x - m)
		}
		return fmt.Sprintf("%.2f ± %.2f", 100*m, 100*math.Sqrt(s/float64(len(xs))))
	}
	// label names a known share as the flags gave it: a share, or a
	// number of nodes (-known-nodes).
	cand := float64(len(knownCandidates(p.ds)))
	label := func(share float64) string {
		if o.knownNodes != nil {
			return fmt.Sprintf("%d nodes (%.1f%%)", int(math.Round(share*cand)), 100*share)
		}
		return fmt.Sprintf("%g%%", 100*share)
	}
	for _, k := range order {
		var acc, dp, eo, ea []float64
		for _, q := range groups[k] {
			acc, dp, eo, ea = append(acc, q.acc), append(dp, q.dp), append(eo, q.eo), append(ea, q.estAcc)
		}
		share := label(k.share)
		if k.method == methodPlain {
			share = "(none used)"
		}
		est := "—"
		if !math.IsNaN(ea[0]) {
			est = ms(ea)
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s |\n", share, k.method, ms(acc), ms(dp), ms(eo), est)
	}
	// A trivially right estimator: its accuracy is the majority group's
	// share, and methods that use its estimates are given nothing.
	one := map[string]int{}
	for _, q := range pts {
		if q.estOne {
			one[label(q.share)]++
		}
	}
	if len(one) > 0 {
		var list []string
		for _, k := range order {
			sh := label(k.share)
			if n, ok := one[sh]; ok {
				list = append(list, fmt.Sprintf("%s in %d of %d runs", sh, n, 2*o.seeds))
				delete(one, sh)
			}
		}
		fmt.Fprintf(w, "\nWarning: the estimator put every test node in one group (known %s): its accuracy is that group's share, and fmp-est and fairgnn were given no information about the groups there.\n", strings.Join(list, ", "))
	}
}

func run(args []string, stdout, stderr io.Writer) error {
	o, err := parseFlags(args, stderr)
	if err != nil {
		return err
	}
	p, err := load(o)
	if err != nil {
		return err
	}
	if o.st.TrainLabels > 0 {
		p.ds.Split.Train = protocol.CapTrain(p.ds.Split.Train, p.ds.Labels, o.st.TrainLabels)
	}
	if o.saveSplit != "" {
		if err := writeSplit(o.saveSplit, p.ds.Split); err != nil {
			return fmt.Errorf("-save-split: %w", err)
		}
	}
	exp.PrintWarnings(stderr, p.ds)
	fmt.Fprintf(stderr, "%s: %d nodes, %d edges, %d features (sensitive column %d); started %s\n", o.dataset, p.ds.N(), p.ds.Graph.NumEdges(), p.ds.NumFeatures, p.sensCol, time.Now().Format(time.RFC3339))
	if o.knownNodes != nil {
		cand := len(knownCandidates(p.ds))
		for _, k := range o.knownNodes {
			if k > cand {
				return fmt.Errorf("-known-nodes: %d, but only %d non-test nodes have a known group", k, cand)
			}
			o.known = append(o.known, float64(k)/float64(cand))
		}
	}
	if o.known != nil {
		var pts []curvePoint
		for s := o.firstSeed; s < o.firstSeed+int64(o.seeds); s++ {
			ps, err := curveSeed(o, p, s, stderr)
			if err != nil {
				return err
			}
			pts = append(pts, ps...)
		}
		curveTable(stdout, o, p, pts)
		return nil
	}
	var all [][]outcome
	if o.merge {
		if all, err = loadRuns(o); err != nil {
			return err
		}
	} else {
		for s := o.firstSeed; s < o.firstSeed+int64(o.seeds); s++ {
			outs, err := runSeed(o, p, s, stderr)
			if err != nil {
				return err
			}
			if o.out != "" {
				if err := saveRuns(o, outs); err != nil {
					return fmt.Errorf("-out: %w", err)
				}
			}
			all = append(all, outs)
		}
	}
	rows, note, err := effects(o, p, all)
	if err != nil {
		return err
	}
	if o.out != "" {
		if err := os.MkdirAll(o.out, 0o755); err != nil {
			return fmt.Errorf("-out: %w", err)
		}
		if err := writeCSV(filepath.Join(o.out, runName(o)+"_runs.csv"), o, all); err != nil {
			return fmt.Errorf("-out: %w", err)
		}
		if err := writeEffectsCSV(filepath.Join(o.out, runName(o)+"_effects.csv"), rows, len(all)); err != nil {
			return fmt.Errorf("-out: %w", err)
		}
	}
	if err := table(stdout, o, p, all); err != nil {
		return err
	}
	effectTable(stdout, o, rows, note)
	return nil
}

// fromPreset says, for an error about flag, that -protocol set it, when
// it did: " (-protocol nifty sets -include-sens; give -include-sens=false)".
func fromPreset(o *options, flag string) string {
	if o.protocolName == "" {
		return ""
	}
	return fmt.Sprintf(" (-protocol %s sets -%s; give -%s with another value to override it)", o.protocolName, flag, flag)
}
