package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"time"

	"github.com/fairmp/fairmp/examples/paper/internal/exp"
	"github.com/fairmp/fairmp/fmp"
	"github.com/fairmp/fairmp/graph/datasets"
	"github.com/fairmp/fairmp/internal/blas"
	"github.com/fairmp/fairmp/layers/train"
	"github.com/fairmp/fairmp/metrics"
)

func main() {
	blas.Default() // fairmp's BLAS before any graph runs (see internal/blas)
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "reproduce:", err)
		os.Exit(1)
	}
}

// datasetNames are the -dataset values.
var datasetNames = append(append([]string(nil), datasets.Presets...), "synthetic")

// expectedFiles names the files each real data set needs, for the error
// message when they are missing.
var expectedFiles = map[string]string{
	"nba":     "nba/nba.csv and nba/nba_relationship.txt (FairGNN's release; nba/split.json optional)",
	"pokec_z": "pokec_z/region_job.csv and pokec_z/region_job_relationship.txt (FairGNN's release; or both in pokec/)",
	"pokec_n": "pokec_n/region_job_2.csv and pokec_n/region_job_2_relationship.txt (FairGNN's release; or both in pokec/)",
	"bail":    "bail/bail.csv (NIFTY's release; bail/bail_edges.txt and bail/split.json optional)",
	"credit":  "credit/credit.csv (NIFTY's release; credit/credit_edges.txt and credit/split.json optional)",
	"german":  "german/german.csv (NIFTY's release; german/german_edges.txt and german/split.json optional)",
}

type options struct {
	data, dataset string
	models        []string
	seeds         int
	train         exp.TrainOptions
	hidden        int
	fmp           fmp.Config
	json          bool
}

func parseFlags(args []string, stderr io.Writer) (*options, error) {
	fs := flag.NewFlagSet("reproduce", flag.ContinueOnError)
	fs.SetOutput(stderr)
	def := fmp.DefaultConfig()
	tr := exp.DefaultTrainOptions()
	var (
		data      = fs.String("data", os.Getenv("FAIRMP_DATA"), "data directory holding nba/, bail/, credit/, pokec_z/ ... (default $FAIRMP_DATA)")
		dataset   = fs.String("dataset", "nba", "data set: "+strings.Join(datasetNames, "|"))
		models    = fs.String("models", strings.Join(exp.Models, ","), "comma-separated models: "+strings.Join(exp.Models, ","))
		seeds     = fs.Int("seeds", 5, "number of runs (model seeds 1..N)")
		epochs    = fs.Int("epochs", tr.Epochs, "training epochs")
		sel       = fs.String("select", "last", "parameters evaluated: last (the last epoch, as the paper's code) or val (best validation accuracy)")
		lr        = fs.Float64("lr", tr.Adam.LR, "Adam learning rate")
		wd        = fs.Float64("wd", tr.Adam.WeightDecay, "Adam weight decay (L2)")
		hidden    = fs.Int("hidden", 64, "hidden width of MLP, GCN, APPNP, JKNet and FMP's MLP (GAT: 4 heads × 16)")
		lambdaS   = fs.Float64("lambda-s", def.LambdaS, "FMP λs, smoothness weight (γ = 1/(1+λs))")
		lambdaF   = fs.Float64("lambda-f", def.LambdaF, "FMP λf, fairness weight")
		k         = fs.Int("k", def.K, "FMP unrolled steps K")
		scaling   = fs.String("scaling", strings.ToLower(def.Scaling.String()), "FMP dual scaling: normalized|paper")
		rho       = fs.Float64("rho", def.Rho, "FMP dual step factor ρ (normalized scaling), 0 < ρ ≤ 4")
		trainMode = fs.String("train-mode", modeName(def.TrainMode), "FMP training mode: end-to-end|constant-dual|inference-only")
		tau       = fs.Float64("tau", def.Temperature, "FMP temperature τ > 0 (fairness term on SF(F/τ); 1 is the paper's)")
		perGroup  = fs.Bool("per-group", def.PerGroupRows, "FMP: one Δs row per group for a binary attribute")
		asJSON    = fs.Bool("json", false, "write the results as JSON instead of a markdown table")
	)
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	o := &options{data: *data, dataset: strings.ToLower(*dataset), seeds: *seeds, hidden: *hidden, json: *asJSON}
	if !contains(datasetNames, o.dataset) {
		return nil, fmt.Errorf("-dataset %q: want one of %s", *dataset, strings.Join(datasetNames, ", "))
	}
	if o.dataset != "synthetic" && o.data == "" {
		return nil, fmt.Errorf("-dataset %s needs the data directory: pass -data DIR or set $FAIRMP_DATA; DIR must hold %s", o.dataset, expectedFiles[o.dataset])
	}
	var err error
	if o.models, err = exp.ParseModels(*models); err != nil {
		return nil, fmt.Errorf("-models: %w", err)
	}
	if o.seeds < 1 {
		return nil, fmt.Errorf("-seeds %d: want at least 1", o.seeds)
	}
	if *hidden < 1 {
		return nil, fmt.Errorf("-hidden %d: want at least 1", *hidden)
	}
	o.train = tr
	o.train.Epochs = *epochs
	o.train.Adam.LR, o.train.Adam.WeightDecay = *lr, *wd
	switch *sel {
	case "last":
		o.train.Select = train.SelectLast
	case "val":
		o.train.Select = train.SelectBestVal
	default:
		return nil, fmt.Errorf("-select %q: want last or val", *sel)
	}
	tc := train.DefaultConfig()
	tc.Epochs, tc.Adam = o.train.Epochs, o.train.Adam
	if err := tc.Validate(); err != nil {
		return nil, fmt.Errorf("-epochs/-lr/-wd: %w", err)
	}
	o.fmp = def
	o.fmp.LambdaS, o.fmp.LambdaF, o.fmp.K, o.fmp.Rho, o.fmp.PerGroupRows = *lambdaS, *lambdaF, *k, *rho, *perGroup
	o.fmp.Temperature = *tau
	switch strings.ToLower(*scaling) {
	case "normalized":
		o.fmp.Scaling = fmp.Normalized
	case "paper":
		o.fmp.Scaling = fmp.Paper
	default:
		return nil, fmt.Errorf("-scaling %q: want normalized or paper", *scaling)
	}
	if o.fmp.TrainMode, err = parseMode(*trainMode); err != nil {
		return nil, err
	}
	if err := o.fmp.Validate(); err != nil {
		return nil, fmt.Errorf("FMP flags (-lambda-s, -lambda-f, -k, -rho, -tau): %w", err)
	}
	return o, nil
}

var modes = map[string]fmp.TrainMode{"end-to-end": fmp.EndToEnd, "constant-dual": fmp.ConstantDual, "inference-only": fmp.InferenceOnly}

func modeName(m fmp.TrainMode) string {
	for k, v := range modes {
		if v == m {
			return k
		}
	}
	return m.String()
}

func parseMode(s string) (fmp.TrainMode, error) {
	if m, ok := modes[strings.ToLower(s)]; ok {
		return m, nil
	}
	return 0, fmt.Errorf("-train-mode %q: want end-to-end, constant-dual or inference-only", s)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func load(o *options) (*datasets.Dataset, error) {
	if o.dataset == "synthetic" {
		return datasets.Synthetic(datasets.DefaultSyntheticConfig())
	}
	ds, err := datasets.Load(o.data, o.dataset, datasets.PaperOptions())
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w\n-dataset %s expects, under -data %s: %s", err, o.dataset, o.data, expectedFiles[o.dataset])
	}
	return ds, err
}

// modelResult is one model's runs and their summary.
type modelResult struct {
	Model   string           `json:"model"`
	Summary metrics.Summary  `json:"summary"`
	Runs    []metrics.Report `json:"runs"`
	// Interval holds 95% bootstrap intervals of the seed-averaged test
	// metrics (metrics.BootstrapMean over the test nodes).
	Interval metrics.Intervals `json:"test_interval_95"`
	// TrainSeconds is the mean wall time of one training run.
	TrainSeconds float64   `json:"train_seconds"`
	Paper        *paperRow `json:"paper,omitempty"`
}

type output struct {
	Dataset  string        `json:"dataset"`
	Nodes    int           `json:"nodes"`
	Edges    int           `json:"edges"`
	Features int           `json:"features"`
	Test     int           `json:"test_nodes"`
	Seeds    int           `json:"seeds"`
	Epochs   int           `json:"epochs"`
	Select   string        `json:"select"`
	LR       float64       `json:"lr"`
	WD       float64       `json:"weight_decay"`
	Hidden   int           `json:"hidden"`
	FMP      fmpJSON       `json:"fmp"`
	Results  []modelResult `json:"results"`

	hasFMP bool // FMP is among the models
}

type fmpJSON struct {
	LambdaS   float64 `json:"lambda_s"`
	LambdaF   float64 `json:"lambda_f"`
	K         int     `json:"k"`
	Scaling   string  `json:"scaling"`
	Rho       float64 `json:"rho"`
	Tau       float64 `json:"temperature"`
	TrainMode string  `json:"train_mode"`
	PerGroup  bool    `json:"per_group_rows"`
}

func run(args []string, stdout, stderr io.Writer) error {
	o, err := parseFlags(args, stderr)
	if err != nil {
		return err
	}
	ds, err := load(o)
	if err != nil {
		return err
	}
	exp.PrintWarnings(stderr, ds)
	out := output{
		Dataset: o.dataset, Nodes: ds.N(), Edges: ds.Graph.NumEdges(), Features: ds.NumFeatures, Test: len(ds.Split.Test),
		Seeds: o.seeds, Epochs: o.train.Epochs, Select: o.train.Select.String(), LR: o.train.Adam.LR, WD: o.train.Adam.WeightDecay,
		Hidden: o.hidden,
		FMP: fmpJSON{LambdaS: o.fmp.LambdaS, LambdaF: o.fmp.LambdaF, K: o.fmp.K, Scaling: strings.ToLower(o.fmp.Scaling.String()),
			Rho: o.fmp.Rho, Tau: o.fmp.Temperature, TrainMode: modeName(o.fmp.TrainMode), PerGroup: o.fmp.PerGroupRows},
	}
	fmt.Fprintf(stderr, "%s: %d nodes, %d edges, %d features, train/val/test %d/%d/%d\n",
		o.dataset, ds.N(), ds.Graph.NumEdges(), ds.NumFeatures, len(ds.Split.Train), len(ds.Split.Val), len(ds.Split.Test))
	out.hasFMP = contains(o.models, "fmp")
	if !o.json {
		writeHeader(stdout, &out)
	}
	total, done := len(o.models)*o.seeds, 0
	start := time.Now()
	for _, name := range o.models {
		mr := modelResult{Model: name}
		if row, ok := paperTable1[o.dataset][name]; ok {
			mr.Paper = &row
		}
		var trainTime time.Duration
		var probs [][]float64
		for seed := 1; seed <= o.seeds; seed++ {
			spec := exp.DefaultSpec(name)
			spec.Seed, spec.Hidden, spec.FMP = int64(seed), o.hidden, o.fmp
			p, err := exp.NewProblem(ds, spec.Dtype)
			if err != nil {
				return err
			}
			res, err := exp.Run(p, spec, o.train)
			if err != nil {
				return fmt.Errorf("seed %d: %w", seed, err)
			}
			done++
			trainTime += res.Train
			r := res.Report
			elapsed := time.Since(start)
			eta := time.Duration(float64(elapsed) / float64(done) * float64(total-done))
			fmt.Fprintf(stderr, "[%d/%d] %-6s seed %d: acc %6.2f  ΔDP %6.2f  ΔEO %6.2f  (%.1fs)  ETA %s\n",
				done, total, name, seed, metrics.Percent(r.Accuracy), metrics.Percent(r.DemographicParity),
				metrics.Percent(r.EqualOpportunity), res.Train.Seconds(), eta.Round(time.Second))
			mr.Runs = append(mr.Runs, r)
			probs = append(probs, res.Probs)
		}
		if mr.Summary, err = metrics.Summarize(mr.Runs); err != nil {
			return err
		}
		if mr.Interval, err = metrics.BootstrapMean(probs, ds.NumClasses(), ds.Labels, ds.Sens, ds.Split.Test, metrics.DefaultOptions(), metrics.DefaultBootstrapConfig()); err != nil {
			return fmt.Errorf("%s: bootstrap: %w", name, err)
		}
		mr.TrainSeconds = trainTime.Seconds() / float64(o.seeds)
		out.Results = append(out.Results, mr)
		if !o.json {
			writeRow(stdout, &out, mr)
		}
	}
	if o.json {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(out)
	}
	writeFooter(stdout, &out)
	return nil
}

// The markdown output is written as the runs progress: the header first,
// then each model's row as soon as its seeds are done, then the footnote,
// so that a long run interrupted midway still leaves the finished rows.

func writeHeader(w io.Writer, out *output) {
	fmt.Fprintf(w, "%s: %d nodes, %d edges, %d features, %d test nodes. %d seeds, %d epochs, Adam lr %g, weight decay %g, hidden %d, %s-epoch parameters.\n",
		out.Dataset, out.Nodes, out.Edges, out.Features, out.Test, out.Seeds, out.Epochs, out.LR, out.WD, out.Hidden, out.Select)
	if out.hasFMP {
		f := out.FMP
		fmt.Fprintf(w, "FMP: λs %g, λf %g, K %d, τ %g, %s scaling (ρ %g), %s training, per-group rows %v.\n",
			f.LambdaS, f.LambdaF, f.K, f.Tau, f.Scaling, f.Rho, f.TrainMode, f.PerGroup)
	}
	fmt.Fprintln(w)
	if _, paper := paperTable1[out.Dataset]; paper {
		fmt.Fprintln(w, "| model | accuracy % | ΔDP % | ΔEO % | 95% intervals: accuracy; ΔDP; ΔEO | paper accuracy | paper ΔDP | paper ΔEO | train s/run |")
		fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|")
	} else {
		fmt.Fprintln(w, "| model | accuracy % | ΔDP % | ΔEO % | 95% intervals: accuracy; ΔDP; ΔEO | train s/run |")
		fmt.Fprintln(w, "|---|---|---|---|---|---|")
	}
}

func writeRow(w io.Writer, out *output, r modelResult) {
	s := r.Summary
	iv := r.Interval
	fmt.Fprintf(w, "| %s | %s | %s | %s | %s; %s; %s |", exp.DisplayName(r.Model), s.Accuracy, s.DemographicParity, s.EqualOpportunity,
		bracket(iv.Accuracy), bracket(iv.DemographicParity), bracket(iv.EqualOpportunity))
	if _, paper := paperTable1[out.Dataset]; paper {
		if r.Paper != nil {
			fmt.Fprintf(w, " %s | %s | %s |", r.Paper.Acc, r.Paper.DP, r.Paper.EO)
		} else {
			fmt.Fprint(w, " – | – | – |")
		}
	}
	fmt.Fprintf(w, " %.1f |\n", r.TrainSeconds)
}

// bracket formats an interval's bounds in percent: "[60.3, 80.9]".
func bracket(i metrics.Interval) string {
	return fmt.Sprintf("[%.1f, %.1f]", 100*i.Lo, 100*i.Hi)
}

func writeFooter(w io.Writer, out *output) {
	fmt.Fprintf(w, "\n± is the standard deviation over seeds (the runs' variation on these test nodes); the 95%% intervals come from a bootstrap over the %d test nodes, resampled within each group, of the seed-averaged metric (metrics.BootstrapMean): the uncertainty from which nodes were tested, usually the larger.\n", out.Test)
	if _, paper := paperTable1[out.Dataset]; paper {
		fmt.Fprintln(w, "\nPaper: Table 1 of Jiang et al., AAAI 2024 (test, %, mean±std over 5 runs).")
	}
}
