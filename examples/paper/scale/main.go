// Command scale trains a GNN in mini-batches on a graph larger than
// full-batch training can hold, runs FMP over the whole graph on its
// logits, and reports the wall time and peak memory of every phase; with
// -compare it measures what sampling costs against full-batch training on
// graphs that fit.
//
//	go run ./scale                       # 10M nodes, 100M edges, 64 features
//	go run ./scale -n 1000000            # a smaller run
//	go run ./scale -compare bail,pokec-z -seeds 5
//
// See scale/README.md beside it for the results and what they mean.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"gorgonia.org/tensor"

	"github.com/fairmp/fairmp/fmp"
	"github.com/fairmp/fairmp/graph/datasets"
	"github.com/fairmp/fairmp/graph/features"
	"github.com/fairmp/fairmp/internal/blas"
	"github.com/fairmp/fairmp/internal/cli"
	"github.com/fairmp/fairmp/internal/opkit"
	"github.com/fairmp/fairmp/layers"
	"github.com/fairmp/fairmp/layers/minibatch"
	"github.com/fairmp/fairmp/layers/train"
	"github.com/fairmp/fairmp/metrics"
)

func main() {
	blas.Default() // fairmp's BLAS before any graph runs (see internal/blas)
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "scale:", err)
		var ue usageError
		if errors.As(err, &ue) {
			os.Exit(2)
		}
		os.Exit(1)
	}
}

type usageError struct{ error }

type options struct {
	n, feats      int
	degree        float64
	fracs         [3]float64
	seed          int64
	dir           string
	keep          bool
	fanouts       []int
	batch, epochs int
	hidden        int
	lr            float64
	k             int
	lambdaF       float64
	out           string
	compare       []string
	seeds         int
	data          string
	fullEpochs    int
	miniEpochs    int
	batchLogEvery int
	quiet         bool
	compareShapeN int
	memLimit      float64
	compareLR     float64
	frontier      []float64
}

func parseFlags(args []string, stderr io.Writer) (*options, error) {
	fl := flag.NewFlagSet("scale", flag.ContinueOnError)
	fl.SetOutput(stderr)
	o := &options{}
	var fan, fracs, compare string
	fl.IntVar(&o.n, "n", 10_000_000, "nodes of the generated graph")
	fl.Float64Var(&o.degree, "degree", 20, "mean degree (edges = n·degree/2)")
	fl.IntVar(&o.feats, "features", 64, "feature columns")
	fl.StringVar(&fracs, "split", "0.01,0.01,0.98", "train, validation and test fractions of the generated graph")
	fl.Int64Var(&o.seed, "seed", 1, "seed of the graph, the model and the sampler")
	fl.StringVar(&o.dir, "dir", filepath.Join(os.TempDir(), "fairmp-scale"), "folder for the features file")
	fl.BoolVar(&o.keep, "keep", false, "keep the features file")
	fl.StringVar(&fan, "fanouts", "10,10", "neighbours sampled per hop (-1: all)")
	fl.IntVar(&o.batch, "batch", 1024, "target nodes per batch")
	fl.IntVar(&o.epochs, "epochs", 1, "mini-batch training epochs")
	fl.IntVar(&o.hidden, "hidden", 64, "GCN hidden width")
	fl.Float64Var(&o.lr, "lr", 0.01, "Adam learning rate")
	fl.IntVar(&o.k, "k", 10, "FMP steps")
	fl.Float64Var(&o.lambdaF, "lambda-f", fmp.DefaultConfig().LambdaF, "FMP λf (when -frontier is empty)")
	var frontier string
	fl.StringVar(&frontier, "frontier", "", "λf values to choose from on the validation nodes (fmp.NewLogitsFrontier, the default rule: the lowest validation ΔDP within one accuracy point of λf = 0); each costs one FMP pass over the whole graph")
	fl.StringVar(&o.out, "out", "", "folder for the results (JSON and Markdown); none when empty")
	fl.IntVar(&o.batchLogEvery, "log-every", 10, "progress line every this many batches")
	fl.BoolVar(&o.quiet, "q", false, "no progress lines")
	fl.Float64Var(&o.memLimit, "mem-limit", 10, "soft limit of the Go heap in GB (debug.SetMemoryLimit; 0: none): the collector then returns freed memory to the system instead of letting the heap grow to twice its live size")
	fl.StringVar(&compare, "compare", "", "instead of the scale run: compare mini-batch with full-batch training on these data sets (bail, credit, nba, pokec-z: the generated graph of Pokec-z's shape, synthetic)")
	fl.IntVar(&o.seeds, "seeds", 5, "-compare: seeds")
	fl.IntVar(&o.fullEpochs, "full-epochs", 300, "-compare: full-batch training epochs (one Adam step each; the paper's protocol: 300)")
	fl.IntVar(&o.miniEpochs, "mini-epochs", 100, "-compare: mini-batch training epochs (one Adam step per batch)")
	fl.Float64Var(&o.compareLR, "compare-lr", 0.001, "-compare: Adam learning rate of both trainings (weight decay 1e-5, best validation epoch)")
	fl.StringVar(&o.data, "data", os.Getenv("FAIRMP_DATA"), "-compare: folder of the real data sets (default $FAIRMP_DATA)")
	fl.IntVar(&o.compareShapeN, "synthetic-n", 2000, "-compare: nodes of the small generated graph (synthetic)")
	if err := fl.Parse(args); err != nil {
		return nil, usageError{err}
	}
	if fl.NArg() > 0 {
		return nil, usageError{fmt.Errorf("unexpected arguments %q", fl.Args())}
	}
	var err error
	if o.fanouts, err = cli.ParseInts(fan, -1); err != nil {
		return nil, usageError{fmt.Errorf("-fanouts: %w", err)}
	}
	fr, err := cli.ParseFloats(fracs, 0)
	if err != nil || len(fr) != 3 {
		return nil, usageError{fmt.Errorf("-split %q: want three fractions", fracs)}
	}
	copy(o.fracs[:], fr)
	if compare != "" {
		o.compare = cli.SplitList(compare)
	}
	if frontier != "" {
		if o.frontier, err = cli.ParseFloats(frontier, 0); err != nil {
			return nil, usageError{fmt.Errorf("-frontier: %w", err)}
		}
	}
	switch {
	case o.n < 4:
		return nil, usageError{fmt.Errorf("-n %d: want ≥ 4", o.n)}
	case o.fullEpochs < 1 || o.miniEpochs < 1:
		return nil, usageError{fmt.Errorf("-full-epochs %d, -mini-epochs %d: want ≥ 1", o.fullEpochs, o.miniEpochs)}
	case o.seeds < 1:
		return nil, usageError{fmt.Errorf("-seeds %d: want ≥ 1", o.seeds)}
	case o.batchLogEvery < 1:
		return nil, usageError{fmt.Errorf("-log-every %d: want ≥ 1", o.batchLogEvery)}
	}
	return o, nil
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
	if o.memLimit < 0 {
		return usageError{fmt.Errorf("-mem-limit %g: want ≥ 0", o.memLimit)}
	}
	if o.memLimit > 0 {
		defer debug.SetMemoryLimit(debug.SetMemoryLimit(int64(o.memLimit * 1e9)))
	}
	if o.compare != nil {
		return compare(o, stdout, progress)
	}
	return scaleRun(o, stdout, progress)
}

// phase is one measured step of the scale run.
type phase struct {
	Name    string  `json:"name"`
	Seconds float64 `json:"seconds"`
	// PeakRSSGB is the process's peak resident set size so far (file
	// pages of the mapped features included), RSSGB the resident size at
	// the phase's end.
	PeakRSSGB float64 `json:"peak_rss_gb"`
	RSSGB     float64 `json:"rss_gb"`
	Note      string  `json:"note,omitempty"`
}

func peakRSS() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return math.NaN()
	}
	return float64(ru.Maxrss) * 1024 / 1e9 // Linux reports KiB
}

func currentRSS() float64 {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return math.NaN()
	}
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return math.NaN()
	}
	pages, err := strconv.ParseFloat(f[1], 64)
	if err != nil {
		return math.NaN()
	}
	return pages * float64(os.Getpagesize()) / 1e9
}

type scaleResult struct {
	Date       string              `json:"date"`
	Command    string              `json:"command"`
	Nodes      int                 `json:"nodes"`
	Edges      int                 `json:"edges"`
	Features   int                 `json:"features"`
	Train      int                 `json:"train_nodes"`
	Test       int                 `json:"test_nodes"`
	Batches    int                 `json:"batches_per_epoch"`
	Phases     []phase             `json:"phases"`
	Backbone   metrics.Report      `json:"backbone_test"`
	FMP        metrics.Report      `json:"fmp_test"`
	FMPConfig  fmp.Config          `json:"fmp_config"`
	Frontier   []fmp.FrontierPoint `json:"frontier,omitempty"`
	Sampler    []int               `json:"fanouts"`
	History    []train.EpochStats  `json:"history"`
	GOMAXPROCS int                 `json:"gomaxprocs"`
}

func scaleRun(o *options, stdout, progress io.Writer) error {
	res := &scaleResult{Date: time.Now().UTC().Format("2006-01-02"), Command: "go run ./scale " + strings.Join(os.Args[1:], " "),
		Nodes: o.n, Features: o.feats, Sampler: o.fanouts, GOMAXPROCS: runtime.GOMAXPROCS(0)}
	measure := func(name string, f func() (string, error)) error {
		fmt.Fprintf(progress, "== %s\n", name)
		start := time.Now()
		note, err := f()
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		runtime.GC() // the phase's garbage goes before the next phase starts
		debug.FreeOSMemory()
		p := phase{Name: name, Seconds: time.Since(start).Seconds(), PeakRSSGB: peakRSS(), RSSGB: currentRSS(), Note: note}
		res.Phases = append(res.Phases, p)
		fmt.Fprintf(progress, "   %.1f s, peak RSS %.2f GB, RSS %.2f GB %s\n", p.Seconds, p.PeakRSSGB, p.RSSGB, note)
		return nil
	}
	// Validate the model and sampler settings before generating anything.
	gcn := layers.DefaultGCNConfig(o.feats, 2)
	gcn.Hidden, gcn.Dtype, gcn.Seed = o.hidden, tensor.Float32, o.seed
	mc := minibatch.DefaultConfig(gcn)
	mc.Train.Epochs, mc.Train.Adam.LR, mc.Train.Select = o.epochs, o.lr, train.SelectLast
	mc.Sampler.Fanouts, mc.Sampler.BatchSize, mc.Sampler.Seed = o.fanouts, o.batch, o.seed
	mc.BatchLog, mc.BatchLogEvery = progress, o.batchLogEvery
	if err := mc.Validate(); err != nil {
		return usageError{err}
	}
	if err := os.MkdirAll(o.dir, 0o755); err != nil {
		return err
	}
	featPath := filepath.Join(o.dir, fmt.Sprintf("features-%d-%d-%d.fmx", o.n, o.feats, o.seed))
	if !o.keep {
		defer os.Remove(featPath)
	}

	cfg := datasets.DefaultSyntheticConfig()
	cfg.N, cfg.NumFeatures, cfg.MeanDegree, cfg.SplitFractions, cfg.Seed = o.n, o.feats, o.degree, o.fracs, o.seed
	var ds *datasets.Dataset
	if err := measure("generate", func() (string, error) {
		var err error
		ds, err = datasets.SyntheticLarge(cfg, featPath, progress)
		if err != nil {
			return "", err
		}
		res.Edges = ds.Graph.NumEdges()
		return fmt.Sprintf("(%d nodes, %d edges, features in %s)", ds.N(), res.Edges, featPath), nil
	}); err != nil {
		return err
	}
	var fx *features.Matrix
	if err := measure("open features", func() (string, error) {
		var err error
		fx, err = features.Open(featPath)
		return "(checksum and finiteness checked, memory-mapped)", err
	}); err != nil {
		return err
	}
	defer fx.Close()

	var task *minibatch.Task
	if err := measure("propagation matrix", func() (string, error) {
		adj, err := minibatch.Matrix(gcn, ds.Graph)
		if err != nil {
			return "", err
		}
		task = &minibatch.Task{Adj: adj, Features: fx, Labels: ds.Labels, Train: ds.Split.Train, Classes: 2}
		ds.Graph = nil // the matrix is all that is needed from here
		return fmt.Sprintf("(GCN normalisation, %d entries; the graph itself freed)", adj.NNZ()), nil
	}); err != nil {
		return err
	}
	res.Train, res.Test = len(ds.Split.Train), len(ds.Split.Test)
	var fit *minibatch.Result
	if err := measure("mini-batch training", func() (string, error) {
		var err error
		fit, err = minibatch.Fit(context.Background(), task, mc)
		if err != nil {
			return "", err
		}
		res.History = fit.History
		nb := (len(task.Train) + o.batch - 1) / o.batch
		res.Batches = nb
		return fmt.Sprintf("(%d epoch(s) of %d batches over %d training nodes; fan-outs %v, batch %d)", o.epochs, nb, len(task.Train), o.fanouts, o.batch), nil
	}); err != nil {
		return err
	}
	var z *tensor.Dense
	if err := measure("whole-graph inference", func() (string, error) {
		var err error
		z, err = minibatch.Logits(gcn, fit.Params, task.Adj, fx)
		return "(layer by layer, every neighbour)", err
	}); err != nil {
		return err
	}
	fc := fmp.DefaultConfig()
	fc.K, fc.LambdaF = o.k, o.lambdaF
	if len(o.frontier) > 0 {
		if err := measure("FMP frontier on validation", func() (string, error) {
			fcfg := fmp.DefaultFrontierConfig()
			fcfg.LambdaF = o.frontier
			if !slices.Contains(fcfg.LambdaF, 0) {
				fcfg.LambdaF = append([]float64{0}, fcfg.LambdaF...) // no debiasing is always a candidate
			}
			fr, err := fmp.NewLogitsFrontier(context.Background(), z, task.Adj, ds.Sens, ds.Labels, ds.Split.Val, fc, fcfg)
			if err != nil {
				return "", err
			}
			fc = fr.Best().Config
			res.Frontier = fr.Points
			return fmt.Sprintf("(%d values of λf on %d validation nodes; chose λf = %g)", len(fcfg.LambdaF), len(ds.Split.Val), fc.LambdaF), nil
		}); err != nil {
			return err
		}
	}
	res.FMPConfig = fc
	var f *tensor.Dense
	if err := measure("FMP over the whole graph", func() (string, error) {
		l, err := fmp.New(task.Adj, ds.Sens, fc)
		if err != nil {
			return "", err
		}
		f, err = l.Apply(z)
		return fmt.Sprintf("(K = %d, λf = %g, on the %d × 2 logits)", fc.K, fc.LambdaF, o.n), err
	}); err != nil {
		return err
	}
	if err := measure("test metrics", func() (string, error) {
		var err error
		if res.Backbone, err = evaluate(z, ds.Labels, ds.Sens, ds.Split.Test); err != nil {
			return "", err
		}
		res.FMP, err = evaluate(f, ds.Labels, ds.Sens, ds.Split.Test)
		return "", err
	}); err != nil {
		return err
	}
	writeScale(stdout, res)
	if o.out != "" {
		return saveScale(o.out, res)
	}
	return nil
}

// probs returns the row softmax of n × c logits, in float64.
func probs(z *tensor.Dense) []float64 {
	n, c := z.Shape()[0], z.Shape()[1]
	p := make([]float64, n*c)
	switch s := z.Data().(type) {
	case []float32:
		for i := 0; i < n; i++ {
			opkit.SoftmaxRow(s[i*c:(i+1)*c], p[i*c:(i+1)*c], 1)
		}
	case []float64:
		for i := 0; i < n; i++ {
			opkit.SoftmaxRow(s[i*c:(i+1)*c], p[i*c:(i+1)*c], 1)
		}
	}
	return p
}

func evaluate(z *tensor.Dense, labels, sens, nodes []int) (metrics.Report, error) {
	return metrics.Evaluate(probs(z), z.Shape()[1], labels, sens, nodes, metrics.DefaultOptions())
}

func writeScale(w io.Writer, r *scaleResult) {
	fmt.Fprintf(w, "Generated graph: %d nodes, %d edges, %d features; %d training nodes (%d batches an epoch), %d test nodes; GOMAXPROCS %d\n\n",
		r.Nodes, r.Edges, r.Features, r.Train, r.Batches, r.Test, r.GOMAXPROCS)
	fmt.Fprintln(w, "| phase | wall time | peak RSS | RSS after |")
	fmt.Fprintln(w, "|---|---|---|---|")
	total := 0.0
	for _, p := range r.Phases {
		total += p.Seconds
		fmt.Fprintf(w, "| %s | %.1f s | %.2f GB | %.2f GB |\n", p.Name, p.Seconds, p.PeakRSSGB, p.RSSGB)
	}
	fmt.Fprintf(w, "| total | %.1f s | | |\n\n", total)
	fmt.Fprintln(w, "| model (test) | accuracy % | ΔDP % | ΔEO % |")
	fmt.Fprintln(w, "|---|---|---|---|")
	for _, m := range []struct {
		name string
		r    metrics.Report
	}{{"GCN, mini-batch", r.Backbone}, {fmt.Sprintf("+ FMP (K = %d, λf = %g) over the whole graph", r.FMPConfig.K, r.FMPConfig.LambdaF), r.FMP}} {
		fmt.Fprintf(w, "| %s | %.2f | %.2f | %.2f |\n", m.name, metrics.Percent(m.r.Accuracy), metrics.Percent(m.r.DemographicParity), metrics.Percent(m.r.EqualOpportunity))
	}
	if len(r.Frontier) > 0 {
		fmt.Fprintln(w, "\nThe validation frontier FMP was chosen from (default rule: the lowest validation ΔDP within one accuracy point of λf = 0):")
		fmt.Fprintln(w, "\n| λf | validation accuracy % | validation ΔDP % | validation ΔEO % |")
		fmt.Fprintln(w, "|---|---|---|---|")
		for _, p := range r.Frontier {
			mark := ""
			if p.Config == r.FMPConfig {
				mark = " (chosen)"
			}
			fmt.Fprintf(w, "| %g%s | %.2f | %.2f | %.2f |\n", p.Config.LambdaF, mark, metrics.Percent(p.Val.Accuracy), metrics.Percent(p.Val.DemographicParity), metrics.Percent(p.Val.EqualOpportunity))
		}
	}
}

func saveScale(dir string, r *scaleResult) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	name := fmt.Sprintf("scale-%d", r.Nodes)
	if len(r.Frontier) > 0 {
		name += "-frontier"
	}
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, name+".json"), append(b, '\n'), 0o644); err != nil {
		return err
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "%s, `%s`\n\n", r.Date, r.Command)
	writeScale(&sb, r)
	return os.WriteFile(filepath.Join(dir, name+".md"), []byte(sb.String()), 0o644)
}
