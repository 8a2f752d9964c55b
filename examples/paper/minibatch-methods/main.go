// Command minibatch-methods trains a GCN with each in-training fairness
// method of package layers/fairtrain that runs in mini-batches (the
// regulariser, the adversary, REDRESS), full batch (train.Fit) and in
// sampled mini-batches (minibatch.Fit with Config.Method), and prints the
// test accuracy, the test ΔDP and the training seconds of each run as a
// Markdown table.
//
//	go run ./minibatch-methods                    # Bail, from FAIRMP_DATA
//	go run ./minibatch-methods -dataset synthetic -n 20000
//	go run ./minibatch-methods -dataset synthetic-large -n 1000000 -trainings mini
//
// synthetic-large is the generated graph of datasets.SyntheticLarge (the
// scale experiment's generator), its features in a float32 file in -dir,
// memory-mapped and removed at the end. Progress goes to stderr.
//
// See README.md beside it for the results.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/fairmp/fairmp/graph/datasets"
	"github.com/fairmp/fairmp/graph/features"
	"github.com/fairmp/fairmp/internal/blas"
	"github.com/fairmp/fairmp/layers"
	"github.com/fairmp/fairmp/layers/fairness"
	"github.com/fairmp/fairmp/layers/fairtrain"
	"github.com/fairmp/fairmp/layers/minibatch"
	"github.com/fairmp/fairmp/layers/train"
	"github.com/fairmp/fairmp/metrics"
)

func main() {
	blas.Default()
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "minibatch-methods:", err)
		var ue usageError
		if errors.As(err, &ue) {
			os.Exit(2)
		}
		os.Exit(1)
	}
}

type usageError struct{ error }

type options struct {
	data, dataset          string
	n                      int
	fullEpochs, miniEpochs int
	batch                  int
	lr                     float64
	seed                   int64
	methods                []string
	full, mini             bool
	dir                    string
	batchLogEvery          int
}

func parse(args []string, stderr io.Writer) (*options, error) {
	o := &options{}
	fs := flag.NewFlagSet("minibatch-methods", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.data, "data", os.Getenv("FAIRMP_DATA"), "data directory (default $FAIRMP_DATA)")
	fs.StringVar(&o.dataset, "dataset", "bail", "data set: bail, credit, nba, synthetic (the generated graph, -n nodes, in memory) or synthetic-large (the same model by datasets.SyntheticLarge, its features in a file in -dir)")
	fs.IntVar(&o.n, "n", 20000, "nodes of the generated graph (-dataset synthetic)")
	fs.IntVar(&o.fullEpochs, "full-epochs", 300, "full-batch epochs (one step each)")
	fs.IntVar(&o.miniEpochs, "mini-epochs", 30, "mini-batch epochs (one pass over the training nodes each)")
	fs.IntVar(&o.batch, "batch", 1024, "mini-batch targets per batch (fan-outs 10, 10)")
	fs.Float64Var(&o.lr, "lr", 0.01, "Adam's learning rate (both trainings)")
	fs.Int64Var(&o.seed, "seed", 1, "model and sampler seed")
	methods := fs.String("methods", "none,regularizer,adversary,redress", "comma-separated methods (none: the plain GCN)")
	trainings := fs.String("trainings", "full,mini", "comma-separated trainings to run: full (full batch, the whole graph in memory), mini (sampled mini-batches)")
	fs.StringVar(&o.dir, "dir", os.TempDir(), "-dataset synthetic-large: folder for the features file (removed at the end)")
	fs.IntVar(&o.batchLogEvery, "batch-log", 0, "mini-batch: a progress line on stderr every this many batches (0: per epoch only)")
	if err := fs.Parse(args); err != nil {
		return nil, usageError{err}
	}
	for _, t := range strings.Split(*trainings, ",") {
		switch strings.TrimSpace(t) {
		case "full":
			o.full = true
		case "mini":
			o.mini = true
		default:
			return nil, usageError{fmt.Errorf("-trainings: %q, want full, mini or full,mini", t)}
		}
	}
	if o.batchLogEvery < 0 {
		return nil, usageError{fmt.Errorf("-batch-log %d, want ≥ 0", o.batchLogEvery)}
	}
	if o.fullEpochs < 1 || o.miniEpochs < 1 || o.batch < 1 || !(o.lr > 0) {
		return nil, usageError{fmt.Errorf("-full-epochs, -mini-epochs, -batch and -lr must be positive")}
	}
	o.methods = strings.Split(*methods, ",")
	return o, nil
}

// method returns the method named name, scheduled for a run of epochs
// (the adversary pre-trains for a quarter of them); nil for "none".
func method(name string, epochs int) (fairness.Method, error) {
	if name == "none" {
		return nil, nil
	}
	m, err := fairness.Lookup(name)
	if err != nil {
		return nil, usageError{fmt.Errorf("-methods: %w", err)}
	}
	if a, ok := m.(fairtrain.AdversaryConfig); ok {
		a.PretrainClassifier = max(1, epochs/4)
		m = a
	}
	switch name {
	case "regularizer", "adversary", "mixup", "redress":
	default:
		return nil, usageError{fmt.Errorf("-methods: %s has no mini-batch form (minibatch.Fit refuses it), want none, regularizer, adversary, mixup or redress", name)}
	}
	return m, nil
}

type row struct {
	method, training string
	acc, dp, secs    float64
	steps            int
}

func run(args []string, stdout, stderr io.Writer) error {
	o, err := parse(args, stderr)
	if err != nil {
		return err
	}
	var ds *datasets.Dataset
	var x features.Source
	start := time.Now()
	switch o.dataset {
	case "synthetic":
		c := datasets.DefaultSyntheticConfig()
		c.N, c.Seed = o.n, o.seed
		ds, err = datasets.Synthetic(c)
	case "synthetic-large":
		c := datasets.DefaultSyntheticConfig()
		c.N, c.Seed = o.n, o.seed
		if err := os.MkdirAll(o.dir, 0o755); err != nil {
			return err
		}
		path := filepath.Join(o.dir, fmt.Sprintf("minibatch-methods-%d-%d.fmx", o.n, o.seed))
		defer os.Remove(path)
		if ds, err = datasets.SyntheticLarge(c, path, stderr); err != nil {
			return err
		}
		fx, err := features.Open(path)
		if err != nil {
			return err
		}
		defer fx.Close()
		x = fx
	default:
		if o.data == "" {
			return usageError{fmt.Errorf("-dataset %s needs -data or FAIRMP_DATA", o.dataset)}
		}
		ds, err = datasets.Load(o.data, o.dataset, datasets.PaperOptions())
	}
	if err != nil {
		return err
	}
	if x == nil {
		if x, err = features.NewDense(ds.Features, ds.N(), ds.NumFeatures); err != nil {
			return err
		}
	}
	fmt.Fprintf(stderr, "%s: %d nodes, %d edges, %d training nodes (%v)\n", o.dataset, ds.N(), ds.Graph.NumEdges(), len(ds.Split.Train), time.Since(start).Round(time.Millisecond))
	cfg := layers.DefaultGCNConfig(ds.NumFeatures, 2)
	cfg.Dtype, cfg.Seed = tensor.Float32, o.seed
	var rows []row
	for _, name := range o.methods {
		for _, training := range []string{"full batch", "mini-batch"} {
			if (training == "full batch" && !o.full) || (training == "mini-batch" && !o.mini) {
				continue
			}
			epochs := o.fullEpochs
			if training == "mini-batch" {
				epochs = o.miniEpochs
			}
			m, err := method(name, epochs)
			if err != nil {
				return err
			}
			fmt.Fprintf(stderr, "%s, %s ... (%v since the start)\n", name, training, time.Since(start).Round(time.Second))
			var z *tensor.Dense
			var steps int
			start := time.Now()
			if training == "full batch" {
				z, steps, err = fullBatch(cfg, ds, x, m, o, stderr)
			} else {
				z, steps, err = miniBatch(cfg, ds, x, m, o, stderr)
			}
			if err != nil {
				return fmt.Errorf("%s, %s: %w", name, training, err)
			}
			secs := time.Since(start).Seconds()
			acc, dp, err := score(z, ds)
			if err != nil {
				return err
			}
			fmt.Fprintf(stderr, "%s, %s: accuracy %.2f%%, ΔDP %.2f%%, %d Adam steps, %.1f s\n", name, training, 100*acc, 100*dp, steps, secs)
			rows = append(rows, row{name, training, acc, dp, secs, steps})
		}
	}
	full, mini := "not run", "not run"
	if o.full {
		full = fmt.Sprintf("%d epochs", o.fullEpochs)
	}
	if o.mini {
		mini = fmt.Sprintf("%d epochs of batches of %d, fan-outs 10, 10", o.miniEpochs, o.batch)
	}
	fmt.Fprintf(stdout, "%s (%d nodes, %d training), GCN (hidden 64, 2 layers, dropout 0.5, float32), Adam lr %g, best validation epoch, seed %d; full batch: %s; mini-batch: %s. Test split.\n\n",
		o.dataset, ds.N(), len(ds.Split.Train), o.lr, o.seed, full, mini)
	fmt.Fprintln(stdout, "| method | training | Adam steps | accuracy | ΔDP | seconds |")
	fmt.Fprintln(stdout, "|---|---|---|---|---|---|")
	for _, r := range rows {
		fmt.Fprintf(stdout, "| %s | %s | %d | %.2f%% | %.2f%% | %.1f |\n", r.method, r.training, r.steps, 100*r.acc, 100*r.dp, r.secs)
	}
	return nil
}

// epochLog returns an OnEpoch that writes a progress line to w every
// epoch of a run of at most 50 epochs, every tenth of a longer one.
func epochLog(w io.Writer, epochs int) func(train.EpochStats) error {
	start := time.Now()
	every := max(1, epochs/10)
	if epochs <= 50 {
		every = 1
	}
	return func(st train.EpochStats) error {
		if st.Epoch%every == 0 || st.Epoch == epochs {
			fmt.Fprintf(w, "  epoch %d/%d  loss %.4f  val acc %.2f%%  val ΔDP %.2f%%  (%v)\n", st.Epoch, epochs, st.Loss, 100*st.ValAcc, 100*st.ValDP, time.Since(start).Round(time.Second))
		}
		return nil
	}
}

func fullBatch(cfg layers.GCNConfig, ds *datasets.Dataset, src features.Source, m fairness.Method, o *options, stderr io.Writer) (*tensor.Dense, int, error) {
	xs := ds.Features
	if xs == nil { // a feature file: read it whole
		all := make([]int, ds.N())
		for i := range all {
			all[i] = i
		}
		xs = make([]float64, ds.N()*ds.NumFeatures)
		if err := features.Gather(src, all, xs); err != nil {
			return nil, 0, err
		}
	}
	g := G.NewGraph()
	x, err := train.FeatureNode(g, cfg.Dtype, xs, ds.N(), ds.NumFeatures, "x")
	if err != nil {
		return nil, 0, err
	}
	task := &train.Task{Graph: g, X: x, Labels: ds.Labels, Train: ds.Split.Train, Val: ds.Split.Val, Classes: 2, Phase: layers.NewPhase(), Sens: ds.Sens}
	tc := train.DefaultConfig()
	tc.Epochs, tc.Adam.LR = o.fullEpochs, o.lr
	tc.OnEpoch = epochLog(stderr, o.fullEpochs)
	f, err := fairness.Fit(context.Background(), m, cfg, fairness.NewSetup(ds.Graph, task, ds.Sens), tc)
	if err != nil {
		return nil, 0, err
	}
	z, err := train.Logits(f.Model, task)
	return z, f.Result.Epochs, err
}

func miniBatch(cfg layers.GCNConfig, ds *datasets.Dataset, x features.Source, m fairness.Method, o *options, stderr io.Writer) (*tensor.Dense, int, error) {
	adj, err := minibatch.Matrix(cfg, ds.Graph)
	if err != nil {
		return nil, 0, err
	}
	mc := minibatch.DefaultConfig(cfg)
	mc.Train.Epochs, mc.Train.Adam.LR = o.miniEpochs, o.lr
	mc.Train.OnEpoch = epochLog(stderr, o.miniEpochs)
	if o.batchLogEvery > 0 {
		mc.BatchLog, mc.BatchLogEvery = stderr, o.batchLogEvery
	}
	mc.Sampler.BatchSize, mc.Sampler.Seed = o.batch, o.seed
	if m != nil {
		mc.Method = m
	}
	task := &minibatch.Task{Adj: adj, Features: x, Labels: ds.Labels, Train: ds.Split.Train, Val: ds.Split.Val, Classes: 2, Sens: ds.Sens}
	res, err := minibatch.Fit(context.Background(), task, mc)
	if err != nil {
		return nil, 0, err
	}
	z, err := minibatch.Logits(cfg, res.Params, adj, x)
	nb := (len(ds.Split.Train) + o.batch - 1) / o.batch
	return z, res.Epochs * nb, err
}

// score returns the test accuracy and ΔDP of the argmax decisions.
func score(z *tensor.Dense, ds *datasets.Dataset) (acc, dp float64, err error) {
	var pred, labels, sens []int
	zs := z.Data().([]float32)
	for _, i := range ds.Split.Test {
		p := 0
		if zs[2*i+1] > zs[2*i] {
			p = 1
		}
		pred, labels, sens = append(pred, p), append(labels, ds.Labels[i]), append(sens, ds.Sens[i])
	}
	if acc, err = metrics.Accuracy(pred, labels); err != nil {
		return 0, 0, err
	}
	dp, err = metrics.DemographicParity(pred, sens)
	return acc, dp, err
}
