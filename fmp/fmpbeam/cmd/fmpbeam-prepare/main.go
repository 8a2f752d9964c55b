// Command fmpbeam-prepare makes the input of an fmpbeam job on one
// machine: a generated graph (datasets.SyntheticLarge: features streamed
// to a feature file) written as sharded node and edge files, and a model
// trained on it in mini-batches (layers/minibatch) saved as a model
// file. With -reference it then runs the same job in memory
// (minibatch.Logits, fmp.NewLogitsFrontier, fmp.Layer.Apply,
// metrics.Evaluate) and records each stage's wall time and peak memory:
// the in-memory path fmpbeam's measurements compare with.
//
//	fmpbeam-prepare -n 1000000 -out data -reference -frontier 0,1,2,4,8,16
//
// No Beam runs here.
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
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/fairmp/fairmp/fmp"
	"github.com/fairmp/fairmp/fmp/fmpbeam"
	"github.com/fairmp/fairmp/fmp/modelio"
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
	// Ctrl-C stops the training or the frontier at its next batch or
	// setting.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "fmpbeam-prepare:", err)
		var ue usageError
		if errors.As(err, &ue) {
			os.Exit(2)
		}
		os.Exit(1)
	}
}

type usageError struct{ error }

type options struct {
	n, feats, shards, hidden, epochs, batch, k int
	degree, lr, lambdaF, memLimit              float64
	fracs                                      [3]float64
	fanouts                                    []int
	frontier                                   []float64
	seed                                       int64
	out                                        string
	reference, writeLogits                     bool
}

func parse(args []string, stderr io.Writer) (*options, error) {
	fs := flag.NewFlagSet("fmpbeam-prepare", flag.ContinueOnError)
	fs.SetOutput(stderr)
	o := &options{}
	var fracs, fan, frontier string
	fs.IntVar(&o.n, "n", 1_000_000, "nodes of the generated graph")
	fs.Float64Var(&o.degree, "degree", 20, "mean degree")
	fs.IntVar(&o.feats, "features", 64, "feature columns")
	fs.StringVar(&fracs, "split", "0.01,0.01,0.98", "train, validation and test fractions")
	fs.Int64Var(&o.seed, "seed", 1, "seed of the graph, the model and the sampler")
	fs.IntVar(&o.shards, "shards", 16, "node and edge files")
	fs.IntVar(&o.hidden, "hidden", 64, "GCN hidden width")
	fs.IntVar(&o.epochs, "epochs", 1, "mini-batch training epochs")
	fs.IntVar(&o.batch, "batch", 1024, "target nodes per batch")
	fs.StringVar(&fan, "fanouts", "10,10", "neighbours sampled per hop")
	fs.Float64Var(&o.lr, "lr", 0.01, "Adam learning rate")
	fs.StringVar(&o.out, "out", "", "output folder: nodes-*.txt, edges-*.txt, features.fmx, model.fmp (and reference.json)")
	fs.BoolVar(&o.reference, "reference", false, "then run the job in memory, stage by stage, and record reference.json")
	fs.BoolVar(&o.writeLogits, "write-logits", false, "-reference: also write the in-memory logits as logits files (logits-*.txt), for a job that starts from them")
	fs.IntVar(&o.k, "k", 10, "-reference: FMP steps")
	fs.Float64Var(&o.lambdaF, "lambda-f", fmp.DefaultConfig().LambdaF, "-reference: FMP λf (without -frontier)")
	fs.StringVar(&frontier, "frontier", "", "-reference: λf values to choose from on validation (the default rule)")
	fs.Float64Var(&o.memLimit, "mem-limit", 10, "soft limit of the Go heap in GB (0: none), as examples/paper/scale")
	if err := fs.Parse(args); err != nil {
		return nil, usageError{err}
	}
	if fs.NArg() > 0 {
		return nil, usageError{fmt.Errorf("unexpected arguments %q", fs.Args())}
	}
	if o.out == "" {
		return nil, usageError{errors.New("-out is required")}
	}
	fr, err := cli.ParseFloats(fracs, 0)
	if err != nil || len(fr) != 3 {
		return nil, usageError{fmt.Errorf("-split %q: want three fractions", fracs)}
	}
	copy(o.fracs[:], fr)
	if o.fanouts, err = cli.ParseInts(fan, -1); err != nil {
		return nil, usageError{fmt.Errorf("-fanouts: %w", err)}
	}
	if frontier != "" {
		if o.frontier, err = cli.ParseFloats(frontier, 0); err != nil {
			return nil, usageError{fmt.Errorf("-frontier: %w", err)}
		}
	}
	if o.n < 4 || o.shards < 1 {
		return nil, usageError{fmt.Errorf("-n %d, -shards %d: want n ≥ 4 and at least one shard", o.n, o.shards)}
	}
	return o, nil
}

// files are the names this run writes in -out.
func (o *options) files() []string {
	names := []string{"features.fmx", "model.fmp"}
	prefixes := []string{"nodes", "edges"}
	if o.reference {
		names = append(names, "reference.json")
		if o.writeLogits {
			prefixes = append(prefixes, "logits")
		}
	}
	for _, p := range prefixes {
		for s := 0; s < o.shards; s++ {
			names = append(names, fmpbeam.ShardFile(p, s))
		}
	}
	return names
}

// prepared reports whether a file name is of a kind fmpbeam-prepare
// writes.
func prepared(name string) bool {
	switch name {
	case "features.fmx", "model.fmp", "reference.json":
		return true
	}
	for _, p := range []string{"nodes-", "edges-", "logits-"} {
		if strings.HasPrefix(name, p) && strings.HasSuffix(name, ".txt") {
			return true
		}
	}
	return false
}

// Phase is one measured step: its wall time, the peak RSS during it (the
// kernel's high-water mark, reset when the phase starts) and the RSS
// when it ends.
type Phase struct {
	Name      string  `json:"name"`
	Seconds   float64 `json:"seconds"`
	PeakRSSGB float64 `json:"peak_rss_gb"`
	RSSGB     float64 `json:"rss_gb"`
}

// Reference is reference.json: the in-memory path's phases and results.
type Reference struct {
	Date     string              `json:"date"`
	Command  string              `json:"command"`
	Nodes    int                 `json:"nodes"`
	Edges    int                 `json:"edges"`
	Phases   []Phase             `json:"phases"`
	Backbone [2]metrics.Report   `json:"backbone_val_test"`
	FMP      fmp.Config          `json:"fmp"`
	Frontier []fmp.FrontierPoint `json:"frontier,omitempty"`
	Chosen   [2]metrics.Report   `json:"chosen_val_test"`
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	o, err := parse(args, stderr)
	if err != nil {
		return err
	}
	if o.memLimit > 0 {
		defer debug.SetMemoryLimit(debug.SetMemoryLimit(int64(o.memLimit * 1e9)))
	}
	ref := &Reference{Date: time.Now().UTC().Format("2006-01-02"), Command: "fmpbeam-prepare " + strings.Join(args, " "), Nodes: o.n}
	measure := func(name string, f func() error) error {
		fmt.Fprintf(stderr, "== %s\n", name)
		resetPeak()
		start := time.Now()
		if err := f(); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		runtime.GC()
		debug.FreeOSMemory()
		p := Phase{Name: name, Seconds: time.Since(start).Seconds(), PeakRSSGB: peakRSS(), RSSGB: currentRSS()}
		ref.Phases = append(ref.Phases, p)
		fmt.Fprintf(stderr, "   %.1f s, peak RSS %.2f GB, RSS %.2f GB\n", p.Seconds, p.PeakRSSGB, p.RSSGB)
		return nil
	}
	// -out: a file of the kinds this command writes that it did not write
	// is refused (a user's nodes-00099.txt would be read with these), and
	// an earlier run's that this run does not write (more shards, a
	// reference.json) are removed, not left to be read as this run's.
	if o.out, err = cli.ClaimDir("-out", o.out, "fmpbeam-prepare", o.files(), prepared); err != nil {
		return err
	}
	cfg := datasets.DefaultSyntheticConfig()
	cfg.N, cfg.NumFeatures, cfg.MeanDegree, cfg.SplitFractions, cfg.Seed = o.n, o.feats, o.degree, o.fracs, o.seed
	featPath := filepath.Join(o.out, "features.fmx")
	var ds *datasets.Dataset
	if err := measure("generate", func() error {
		ds, err = datasets.SyntheticLarge(cfg, featPath, stderr)
		return err
	}); err != nil {
		return err
	}
	ref.Edges = ds.Graph.NumEdges()
	if err := measure("write node and edge files", func() error {
		if err := fmpbeam.WriteNodes(o.out, o.shards, ds.Labels, ds.Sens, ds.Split); err != nil {
			return err
		}
		return fmpbeam.WriteGraph(o.out, o.shards, ds.Graph)
	}); err != nil {
		return err
	}
	fx, err := features.Open(featPath)
	if err != nil {
		return err
	}
	defer fx.Close()

	// The model is built once on the whole graph: its propagation matrix
	// is the one training samples from and the file records the graph.
	gcn := layers.DefaultGCNConfig(o.feats, 2)
	gcn.Hidden, gcn.Dtype, gcn.Seed = o.hidden, tensor.Float32, o.seed
	var model layers.BlockModel
	if err := measure("propagation matrix", func() error {
		m, err := layers.NewGCN(G.NewGraph(), ds.Graph, gcn, nil)
		model = m
		return err
	}); err != nil {
		return err
	}
	adj := model.Matrix()
	var params []*tensor.Dense
	if err := measure("mini-batch training", func() error {
		mc := minibatch.DefaultConfig(gcn)
		mc.Train.Epochs, mc.Train.Adam.LR, mc.Train.Select = o.epochs, o.lr, train.SelectLast
		mc.Sampler.Fanouts, mc.Sampler.BatchSize, mc.Sampler.Seed = o.fanouts, o.batch, o.seed
		res, err := minibatch.Fit(ctx, &minibatch.Task{Adj: adj, Features: fx, Labels: ds.Labels, Train: ds.Split.Train, Classes: 2}, mc)
		if err != nil {
			return err
		}
		params = res.Params
		if err := train.SetParams(model, params); err != nil {
			return err
		}
		var b bytes.Buffer
		if err := modelio.Save(&b, model, modelio.DefaultSaveConfig()); err != nil {
			return err
		}
		return cli.ReplaceFile(filepath.Join(o.out, "model.fmp"), b.Bytes(), nil) // (-out is ours: ClaimDir)
	}); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s: %d nodes, %d edges, %d features; model.fmp (GCN %d → %d → 2, float32)\n", o.out, o.n, ref.Edges, o.feats, o.feats, o.hidden)
	if !o.reference {
		return nil
	}
	ds.Graph = nil // the matrix is all the job needs

	var z *tensor.Dense
	if err := measure("infer: the whole graph's logits, layer by layer", func() error {
		z, err = minibatch.Logits(gcn, params, adj, fx)
		return err
	}); err != nil {
		return err
	}
	if o.writeLogits {
		zs := z.Data().([]float32)
		if err := fmpbeam.WriteRows(o.out, "logits", o.shards, o.n, 2, func(i int, dst []float64) error {
			dst[0], dst[1] = float64(zs[2*i]), float64(zs[2*i+1])
			return nil
		}); err != nil {
			return err
		}
	}
	fc := fmp.DefaultConfig()
	fc.K, fc.LambdaF = o.k, o.lambdaF
	if len(o.frontier) > 0 {
		if err := measure("fmp: the frontier on the validation nodes", func() error {
			fcfg := fmp.DefaultFrontierConfig()
			fcfg.LambdaF = o.frontier
			if !slices.Contains(fcfg.LambdaF, 0) {
				fcfg.LambdaF = append([]float64{0}, fcfg.LambdaF...)
			}
			fr, err := fmp.NewLogitsFrontier(ctx, z, adj, ds.Sens, ds.Labels, ds.Split.Val, fc, fcfg)
			if err != nil {
				return err
			}
			fc, ref.Frontier = fr.Best().Config, fr.Points
			return nil
		}); err != nil {
			return err
		}
	}
	ref.FMP = fc
	var f *tensor.Dense
	if err := measure("fmp: the chosen setting over the whole graph", func() error {
		l, err := fmp.New(adj, ds.Sens, fc)
		if err != nil {
			return err
		}
		f, err = l.Apply(z)
		return err
	}); err != nil {
		return err
	}
	if err := measure("evaluate: validation and test metrics", func() error {
		for k, nodes := range [][]int{ds.Split.Val, ds.Split.Test} {
			if ref.Backbone[k], err = evaluate(z, ds.Labels, ds.Sens, nodes); err != nil {
				return err
			}
			if ref.Chosen[k], err = evaluate(f, ds.Labels, ds.Sens, nodes); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		return err
	}
	b, err := json.MarshalIndent(ref, "", "  ")
	if err != nil {
		return err
	}
	if err := cli.ReplaceFile(filepath.Join(o.out, "reference.json"), append(b, '\n'), nil); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "reference: backbone test accuracy %.2f %%, ΔDP %.2f %%; FMP (λf %g) %.2f %%, %.2f %%\n",
		metrics.Percent(ref.Backbone[1].Accuracy), metrics.Percent(ref.Backbone[1].DemographicParity), fc.LambdaF,
		metrics.Percent(ref.Chosen[1].Accuracy), metrics.Percent(ref.Chosen[1].DemographicParity))
	return nil
}

func evaluate(z *tensor.Dense, labels, sens, nodes []int) (metrics.Report, error) {
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
	return metrics.Evaluate(p, c, labels, sens, nodes, metrics.DefaultOptions())
}

// resetPeak resets the kernel's RSS high-water mark (Linux: 5 written to
// /proc/self/clear_refs), so that peakRSS gives a phase's own peak.
func resetPeak() { os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) }

// peakRSS returns VmHWM, the RSS high-water mark since the last reset, in
// GB; without /proc, the process's peak (getrusage).
func peakRSS() float64 {
	b, err := os.ReadFile("/proc/self/status")
	if err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmHWM:" {
				if kb, err := strconv.ParseFloat(f[1], 64); err == nil {
					return kb * 1024 / 1e9
				}
			}
		}
	}
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return math.NaN()
	}
	return float64(ru.Maxrss) * 1024 / 1e9
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
