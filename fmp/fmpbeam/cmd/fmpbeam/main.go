// Command fmpbeam scores a graph and debiases the scores with FMP as one
// Apache Beam job: a model file and sharded node, edge and feature files
// in; the whole graph's predictions (sharded text files), the metrics of
// the backbone and of every FMP setting, and the setting a rule chose on
// the validation nodes (metrics.json) out. It runs on Prism, Beam's local
// runner, by default; --runner and --endpoint send it to a cluster's job
// service (Flink, Spark) or to Dataflow.
//
//	fmpbeam -model model.fmp -nodes 'data/nodes-*.txt' -edges 'data/edges-*.txt' \
//	    -features data/features.fmx -out results -frontier default
//
// See the module's README for the formats, the cluster path step by
// step, and what was measured.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"runtime/debug"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem/gcs" // gs:// paths on Dataflow
	"github.com/apache/beam/sdks/v2/go/pkg/beam/runners"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/x/beamx"
	"github.com/fairmp/fairmp/metrics/selection"

	"github.com/fairmp/fairmp/fmp"
	"github.com/fairmp/fairmp/fmp/fmpbeam"
	"github.com/fairmp/fairmp/internal/blas"
	"github.com/fairmp/fairmp/internal/cli"
	"github.com/fairmp/fairmp/metrics"
)

func main() {
	blas.Default() // fairmp's BLAS before any graph runs (see internal/blas)
	o := define(flag.CommandLine)
	flag.Parse()
	o.set = visited(flag.CommandLine)
	// On a cluster the same binary runs as the workers: beam.Init takes
	// over then, and never returns.
	beam.Init()
	err := run(context.Background(), o, flag.Args(), os.Stdout, os.Stderr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "fmpbeam:", err)
		var ue usageError
		if errors.As(err, &ue) {
			os.Exit(2)
		}
		if errors.Is(err, selection.ErrNoCandidate) {
			os.Exit(3) // every output written, the reference kept
		}
		os.Exit(1)
	}
}

type usageError struct{ error }

type options struct {
	model, nodes, edges, features, featureRows, logits string
	out, stage, work                                   string
	block, shards                                      int
	lambdaF, lambdaS, tau                              float64
	k                                                  int
	frontier, frontierS                                string
	maxAccLoss, bound, memLimit                        float64
	criterion                                          string
	verbose, sameGraph                                 bool
	set                                                map[string]bool
}

// define registers the command's flags on fs (Beam's own flags, such as
// --runner and --endpoint, are registered on flag.CommandLine by the
// Beam packages).
func define(fs *flag.FlagSet) *options {
	o := &options{}
	d := fmp.DefaultConfig()
	fs.StringVar(&o.model, "model", "", "model file (fmp/modelio; an fmp model's FMP settings become the defaults)")
	fs.StringVar(&o.nodes, "nodes", "", "node files, a glob: lines \"id label group split\"")
	fs.StringVar(&o.edges, "edges", "", "edge files, a glob: lines \"u v\"")
	fs.StringVar(&o.features, "features", "", "feature file of package graph/features (a path every worker can open)")
	fs.StringVar(&o.featureRows, "feature-rows", "", "feature files, a glob: lines \"id v1 ... vd\" (instead of -features)")
	fs.StringVar(&o.logits, "logits", "", "logits files, a glob: lines \"id z1 ... zc\" (instead of -model: FMP on logits computed elsewhere)")
	fs.StringVar(&o.out, "out", "", "output folder: predictions-*.txt, metrics.json, duals.json, run.json")
	fs.IntVar(&o.block, "block-size", int(fmpbeam.DefaultLayout().Size), "nodes per block (the unit of work and of shuffles)")
	fs.IntVar(&o.shards, "shards", 16, "prediction files (and, stage by stage, block files)")
	fs.Float64Var(&o.lambdaF, "lambda-f", d.LambdaF, "FMP λf (without -frontier)")
	fs.Float64Var(&o.lambdaS, "lambda-s", d.LambdaS, "FMP λs")
	fs.IntVar(&o.k, "k", d.K, "FMP steps")
	fs.Float64Var(&o.tau, "tau", d.Temperature, "FMP temperature τ")
	fs.StringVar(&o.frontier, "frontier", "", "λf values to choose from on the validation nodes, comma-separated, or \"default\" (fmp.DefaultFrontierConfig's 20); empty: -lambda-f alone")
	fs.StringVar(&o.frontierS, "frontier-lambda-s", "", "λs values crossed with -frontier (empty: -lambda-s)")
	fs.StringVar(&o.criterion, "criterion", "dp", "fairness criterion the rule judges: "+strings.Join(metrics.CriterionNames(), ", ")+" (differences: lower is fairer, ratios: higher)")
	fs.Float64Var(&o.maxAccLoss, "max-acc-loss", 1, "the rule: the fairest validation -criterion within this many accuracy points of λf = 0")
	fs.Float64Var(&o.bound, "bound", 0, "the rule instead: the highest validation accuracy whose -criterion meets this bound: for a difference, at most this many points (5); for a ratio, at least this ratio (0.8)")
	fs.StringVar(&o.stage, "stage", "", "run one stage alone ("+strings.Join(fmpbeam.Stages, ", ")+"), keeping blocks in -work")
	fs.StringVar(&o.work, "work", "", "folder of the stages' blocks (with -stage)")
	fs.Float64Var(&o.memLimit, "mem-limit", 10, "soft limit of this process's Go heap in GB (debug.SetMemoryLimit; 0: none): on Prism, runner and worker share it, and without it the collector lets the heap grow to twice the data in flight")
	fs.BoolVar(&o.sameGraph, "same-graph", false, "refuse node and edge files other than the graph -model was saved for (default: score any graph whose nodes have the model's features)")
	fs.BoolVar(&o.verbose, "v", false, "show the runner's log")
	return o
}

// visited returns the flags set on the command line.
func visited(fs *flag.FlagSet) map[string]bool {
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	return set
}

// job turns the flags into a Job, for the model m (nil with -logits).
func (o *options) job(m *fmpbeam.Model) (fmpbeam.Job, error) {
	j := fmpbeam.Job{Nodes: o.nodes, Edges: o.edges, Features: o.features, FeatureRows: o.featureRows,
		Model: o.model, Logits: o.logits, Out: o.out, Layout: fmpbeam.Layout{Size: int64(o.block)},
		Shards: o.shards, Stage: o.stage, Work: o.work, On: fmp.DefaultOnConfig(),
		SameGraph: o.sameGraph}
	if m != nil && m.On != nil {
		j.On = *m.On
	}
	if o.set["lambda-f"] {
		j.On.FMP.LambdaF = o.lambdaF
	}
	if o.set["lambda-s"] {
		j.On.FMP.LambdaS = o.lambdaS
	}
	if o.set["k"] {
		j.On.FMP.K = o.k
	}
	if o.set["tau"] {
		j.On.FMP.Temperature = o.tau
	}
	if err := j.On.FMP.Validate(); err != nil {
		return j, usageError{fmt.Errorf("-lambda-f, -lambda-s, -k, -tau: %w", err)}
	}
	if o.frontier != "" {
		fc := fmp.DefaultFrontierConfig()
		if o.frontier != "default" {
			var err error
			if fc.LambdaF, err = cli.ParseFloats(o.frontier, 0); err != nil {
				return j, usageError{fmt.Errorf("-frontier: %w", err)}
			}
		}
		if o.frontierS != "" {
			var err error
			if fc.LambdaS, err = cli.ParseFloats(o.frontierS, 0); err != nil {
				return j, usageError{fmt.Errorf("-frontier-lambda-s: %w", err)}
			}
		}
		var err error
		if fc.Rule, err = cli.Rule(cli.RuleFlags{Criterion: o.criterion, MaxAccLoss: o.maxAccLoss, Bound: o.bound, SetMaxAccLoss: o.set["max-acc-loss"], SetBound: o.set["bound"]}); err != nil {
			return j, usageError{err}
		}
		j.Frontier = &fc
	}
	if err := j.Validate(m); err != nil {
		return j, usageError{err}
	}
	return j, nil
}

// readModel reads the model file through Beam's file systems (gs:// as
// well as local paths).
func readModel(ctx context.Context, path string) (*fmpbeam.Model, error) {
	fs, err := filesystem.New(ctx, path)
	if err != nil {
		return nil, err
	}
	defer fs.Close()
	rc, err := fs.OpenRead(ctx, path)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		return nil, err
	}
	return fmpbeam.ReadModelFile(b)
}

// RunInfo is run.json: what ran, how long, its peak memory, and the bytes
// of every shuffle.
type RunInfo struct {
	Date      string           `json:"date"`
	Command   string           `json:"command"`
	Runner    string           `json:"runner"`
	Stage     string           `json:"stage,omitempty"`
	Seconds   float64          `json:"seconds"`
	PeakRSSGB float64          `json:"peak_rss_gb"`
	Bytes     map[string]int64 `json:"shuffled_bytes"`
	ByStage   map[string]int64 `json:"shuffled_bytes_by_stage"`
}

func run(ctx context.Context, o *options, args []string, stdout, stderr io.Writer) error {
	if len(args) > 0 {
		return usageError{fmt.Errorf("unexpected arguments %q", args)}
	}
	if !o.verbose {
		slog.SetDefault(slog.New(slog.NewTextHandler(io.Discard, nil)))
	}
	if o.memLimit < 0 {
		return usageError{fmt.Errorf("-mem-limit %g: want ≥ 0", o.memLimit)}
	}
	if o.memLimit > 0 {
		defer debug.SetMemoryLimit(debug.SetMemoryLimit(int64(o.memLimit * 1e9)))
	}
	switch {
	case o.out == "":
		return usageError{errors.New("-out is required: the folder for the predictions and the metrics")}
	case o.nodes == "" || o.edges == "":
		return usageError{errors.New("-nodes and -edges are required: globs of the node and edge files")}
	case (o.model == "") == (o.logits == ""):
		return usageError{errors.New("give -model (with -features or -feature-rows) or -logits")}
	}
	var m *fmpbeam.Model
	if o.model != "" {
		var err error
		if m, err = readModel(ctx, o.model); err != nil {
			return fmt.Errorf("-model %s: %w", o.model, err)
		}
	}
	j, err := o.job(m)
	if err != nil {
		return err
	}
	name := "run.json"
	if o.stage != "" {
		name = "run-" + o.stage + ".json"
	}
	local := !strings.Contains(o.out, "://")
	if local {
		// A local -out (cli.ClaimDir): a file of the kinds this run writes
		// that the command did not write is refused; the earlier runs'
		// files of those kinds that this run does not write are removed
		// first, so that fewer -shards than last time leave no old
		// prediction file behind. (A stage's kinds are its own: the
		// other stages' files stay.)
		own := func(n string) bool { return n == name || j.OutKind(n) }
		if j.Out, err = cli.ClaimDir("-out", o.out, "fmpbeam", append(j.OutFiles(), name), own); err != nil {
			return err
		}
	}
	if o.stage != "" && !strings.Contains(o.work, "://") {
		// -work is fmpbeam's (cli.ClaimWorkDir). A stage run again makes
		// its own blocks and every later stage's stale: they are removed
		// before it runs, so that a later stage cannot read the old ones
		// (or a -block-size's more blocks) with the new.
		if j.Work, err = cli.ClaimWorkDir("-work", o.work, "fmpbeam", j.StaleWork); err != nil {
			return err
		}
	}
	p := beam.NewPipeline()
	if err := j.Build(p.Root(), m); err != nil {
		return err
	}
	runner := *runners.Runner
	if runner == "" {
		runner = "prism"
	}
	start := time.Now()
	r, err := beamx.RunWithMetrics(ctx, p)
	if err != nil {
		return pipelineError(err)
	}
	info := RunInfo{Date: start.UTC().Format("2006-01-02"), Command: "fmpbeam " + strings.Join(os.Args[1:], " "),
		Runner: runner, Stage: o.stage, Seconds: time.Since(start).Seconds(), PeakRSSGB: peakRSS(),
		Bytes: map[string]int64{}, ByStage: map[string]int64{}}
	if r != nil {
		for _, c := range r.Metrics().AllMetrics().Counters() {
			if c.Key.Namespace == "fmpbeam" {
				v := c.Committed
				if v == 0 {
					v = c.Attempted
				}
				info.Bytes[c.Key.Name] += v
				info.ByStage[fmpbeam.CounterStage(c.Key.Name)] += v
			}
		}
	}
	if err := writeJSON(ctx, strings.TrimSuffix(j.Out, "/")+"/"+name, info, local); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s on %s: %.1f s, peak RSS %.2f GB (this process: the driver and, on Prism, the runner and its worker)\n", stageName(o.stage), runner, info.Seconds, info.PeakRSSGB)
	writeBytes(stdout, info)
	if o.stage == "" || o.stage == "evaluate" {
		return summary(stdout, o.out)
	}
	return nil
}

func stageName(s string) string {
	if s == "" {
		return "the job"
	}
	return "stage " + s
}

// pipelineError returns the pipeline's own error (a DoFn's "fmpbeam: ..."
// message) without the runner's report around it.
func pipelineError(err error) error {
	msg := err.Error()
	if k := strings.LastIndex(msg, "fmpbeam: "); k >= 0 {
		line := msg[k+len("fmpbeam: "):]
		if e := strings.IndexByte(line, '\n'); e >= 0 {
			line = line[:e]
		}
		return errors.New(line + " (-v for the runner's report)")
	}
	return err
}

func peakRSS() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return math.NaN()
	}
	return float64(ru.Maxrss) * 1024 / 1e9 // Linux reports KiB
}

// writeJSON writes run.json: into a local -out (claimed: the file is
// ours) whole or not at all, or through Beam's file systems (gs://).
func writeJSON(ctx context.Context, path string, v any, local bool) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	b = append(b, '\n')
	if local {
		return cli.ReplaceFile(path, b, nil)
	}
	fs, err := filesystem.New(ctx, path)
	if err != nil {
		return err
	}
	defer fs.Close()
	w, err := fs.OpenWrite(ctx, path)
	if err != nil {
		return err
	}
	if _, err := w.Write(b); err != nil {
		w.Close()
		return err
	}
	return w.Close()
}

func writeBytes(w io.Writer, info RunInfo) {
	var stages []string
	for s := range info.ByStage {
		stages = append(stages, s)
	}
	sort.Strings(stages)
	for _, s := range stages {
		fmt.Fprintf(w, "  shuffled by %s: %.1f MB\n", s, float64(info.ByStage[s])/1e6)
	}
}

// summary prints the metrics file's backbone and chosen setting. When
// no setting met the rule it prints the reference it kept and returns an
// error wrapping selection.ErrNoCandidate (exit status 3: the outputs are
// written).
func summary(w io.Writer, out string) error {
	path := strings.TrimSuffix(out, "/") + "/metrics.json"
	if strings.Contains(out, "://") {
		return nil // not a local folder: the file is where the runner wrote it
	}
	b, err := os.ReadFile(path)
	if err != nil {
		// A job that succeeds writes it; without it a stage produced
		// nothing, which must not pass for a result.
		return fmt.Errorf("the job finished but %s is missing (%w): a stage produced nothing; run with -v for the runner's log", path, err)
	}
	var rep fmpbeam.Report
	if err := json.NewDecoder(bytes.NewReader(b)).Decode(&rep); err != nil {
		return fmt.Errorf("%s/metrics.json: %w", out, err)
	}
	res := rep.Result
	fmt.Fprintf(w, "\n%d nodes, %d edges; test nodes %d\n\n", rep.Graph.Nodes, rep.Graph.Edges, rep.Graph.Test)
	fmt.Fprintln(w, "| model | val accuracy % | val ΔDP % | test accuracy % | test ΔDP % | test ΔEO % |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|")
	row := func(name string, p fmpbeam.Point) {
		fmt.Fprintf(w, "| %s | %.2f | %.2f | %.2f | %.2f | %.2f |\n", name, metrics.Percent(p.Val.Accuracy), metrics.Percent(p.Val.DemographicParity),
			metrics.Percent(p.Test.Accuracy), metrics.Percent(p.Test.DemographicParity), metrics.Percent(p.Test.EqualOpportunity))
	}
	setting := func(how string, c fmp.Config) string {
		return fmt.Sprintf("%s (λs %g, λf %g, K %d, τ %g)", how, c.LambdaS, c.LambdaF, c.K, c.Temperature)
	}
	row("backbone", res.Backbone)
	switch {
	case res.Chosen < 0 && res.Reference != nil:
		row(setting("FMP, the reference kept", *res.Reference.Config), *res.Reference)
		return fmt.Errorf("no setting met the rule (%s) on the validation nodes: the reference (λf 0) was kept and written; loosen the rule (a larger -max-acc-loss, a looser -bound, another -criterion): %w", res.Rule, selection.ErrNoCandidate)
	case len(res.Points) > 0:
		how := "FMP"
		if res.Rule != nil {
			how = "FMP, chosen on validation"
		}
		row(setting(how, *res.Points[res.Chosen].Config), res.Points[res.Chosen])
	}
	return nil
}
