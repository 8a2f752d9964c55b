package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"text/tabwriter"
	"time"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/fairmp/fairmp/fmp"
	"github.com/fairmp/fairmp/graph/datasets"
	"github.com/fairmp/fairmp/internal/blas"
	"github.com/fairmp/fairmp/layers"
	"github.com/fairmp/fairmp/layers/train"
	"github.com/fairmp/fairmp/metrics"
)

func main() {
	blas.Default() // fairmp's BLAS before any graph runs (see internal/blas)
	// Ctrl-C stops the training between epochs.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "quickstart:", err)
		os.Exit(1)
	}
}

// config is what the quickstart runs: the generated graph and the training
// protocol. run uses defaultConfig; the smoke test a tiny one.
type config struct {
	Data  datasets.SyntheticConfig
	Train train.Config
}

// defaultConfig is the library's defaults throughout: the default
// synthetic graph (2,000 nodes, sensitive homophily 0.9, seed 1) and the
// default training protocol (300 epochs of Adam, lr 1e-3, weight decay
// 1e-5, best-validation epoch).
func defaultConfig() config {
	return config{Data: datasets.DefaultSyntheticConfig(), Train: train.DefaultConfig()}
}

// A model is one row of the table: how to build it in a task's graph and
// how to train it.
type model struct {
	name  string
	build func(t *train.Task, ds *datasets.Dataset) (layers.Model, error)
	fit   func(ctx context.Context, m layers.Model, t *train.Task, tc train.Config) (*train.Result, error)
}

// models are the quickstart's three models, each with its library
// defaults (64 hidden units, dropout 0.5, float64, seed 1).
var models = []model{
	{
		name: "mlp",
		build: func(t *train.Task, ds *datasets.Dataset) (layers.Model, error) {
			return layers.NewMLP(t.Graph, nil, layers.DefaultMLPConfig(ds.NumFeatures, t.Classes), t.Phase)
		},
		fit: train.Fit,
	},
	{
		name: "gcn",
		build: func(t *train.Task, ds *datasets.Dataset) (layers.Model, error) {
			return layers.NewGCN(t.Graph, ds.Graph, layers.DefaultGCNConfig(ds.NumFeatures, t.Classes), t.Phase)
		},
		fit: train.Fit,
	},
	{
		// FMP as the library recommends it: MLP → FMP, the backbone
		// trained with λf = 0 (the epoch chosen on propagation-only
		// validation accuracy), then debiased at inference.
		name: "fmp",
		build: func(t *train.Task, ds *datasets.Dataset) (layers.Model, error) {
			return fmp.NewModel(t.Graph, ds.Graph, ds.Sens, fmp.DefaultModelConfig(ds.NumFeatures, t.Classes), t.Phase)
		},
		fit: func(ctx context.Context, m layers.Model, t *train.Task, tc train.Config) (*train.Result, error) {
			return m.(*fmp.Model).FitTwoStage(ctx, t, tc)
		},
	},
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) > 0 {
		return fmt.Errorf("takes no arguments (got %q); see examples/debias for a configurable run on your own data", args)
	}
	return quickstart(ctx, defaultConfig(), stdout, stderr)
}

func quickstart(ctx context.Context, cfg config, stdout, stderr io.Writer) error {
	ds, err := datasets.Synthetic(cfg.Data)
	if err != nil {
		return err
	}
	labelH, err := ds.Graph.Homophily(ds.Labels)
	if err != nil {
		return err
	}
	sensH, err := ds.Graph.Homophily(ds.Sens)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "Generated graph: %d nodes, %d edges, %d features; label homophily %.2f, sensitive homophily %.2f\n",
		ds.N(), ds.Graph.NumEdges(), ds.NumFeatures, labelH, sensH)
	fmt.Fprintf(stdout, "Training %d epochs (Adam lr %g, weight decay %g, %s selection); test split of %d nodes.\n\n",
		cfg.Train.Epochs, cfg.Train.Adam.LR, cfg.Train.Adam.WeightDecay, cfg.Train.Select, len(ds.Split.Test))
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "model\taccuracy %\tΔDP %\tΔEO %\ttraining time\t")
	for _, m := range models {
		fmt.Fprintf(stderr, "training %s ...\n", m.name)
		rep, _, took, err := trainAndTest(ctx, m, ds, cfg.Train)
		if err != nil {
			return fmt.Errorf("%s: %w", m.name, err)
		}
		fmt.Fprintf(tw, "%s\t%.2f\t%.2f\t%.2f\t%s\t\n", m.name,
			metrics.Percent(rep.Accuracy), metrics.Percent(rep.DemographicParity), metrics.Percent(rep.EqualOpportunity),
			took.Round(10*time.Millisecond))
	}
	return tw.Flush()
}

// trainAndTest puts ds's features in a fresh gorgonia graph, builds and
// trains m there and returns its test metrics, its predictions for every
// node and its training time.
func trainAndTest(ctx context.Context, m model, ds *datasets.Dataset, tc train.Config) (metrics.Report, *train.Prediction, time.Duration, error) {
	g := G.NewGraph()
	x, err := train.FeatureNode(g, tensor.Float64, ds.Features, ds.N(), ds.NumFeatures, "x")
	if err != nil {
		return metrics.Report{}, nil, 0, err
	}
	task := &train.Task{Graph: g, X: x, Labels: ds.Labels, Train: ds.Split.Train, Val: ds.Split.Val,
		Classes: ds.NumClasses(), Phase: layers.NewPhase()}
	mod, err := m.build(task, ds)
	if err != nil {
		return metrics.Report{}, nil, 0, err
	}
	start := time.Now()
	if _, err := m.fit(ctx, mod, task, tc); err != nil {
		return metrics.Report{}, nil, 0, fmt.Errorf("training: %w", err)
	}
	took := time.Since(start)
	pred, err := train.Predict(mod, task, nil)
	if err != nil {
		return metrics.Report{}, nil, 0, err
	}
	rep, err := metrics.Evaluate(pred.Probs, pred.Classes, ds.Labels, ds.Sens, ds.Split.Test, metrics.DefaultOptions())
	if err != nil {
		return metrics.Report{}, nil, 0, fmt.Errorf("evaluating the test split: %w", err)
	}
	return rep, pred, took, nil
}
