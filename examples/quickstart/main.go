package main

import (
	"fmt"
	"io"
	"os"
	"text/tabwriter"
	"time"

	"github.com/fairmp/fairmp/examples/internal/exp"
	"github.com/fairmp/fairmp/graph/datasets"
	"github.com/fairmp/fairmp/metrics"
)

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "quickstart:", err)
		os.Exit(1)
	}
}

// config is what the quickstart runs: the generated graph, the models and
// the training protocol. run uses defaultConfig; the smoke test a tiny one.
type config struct {
	Data   datasets.SyntheticConfig
	Models []string
	Train  exp.TrainOptions
}

// defaultConfig is the library's defaults throughout: the default
// synthetic graph (2,000 nodes, sensitive homophily 0.9, seed 1), each
// model's default configuration, and the default training protocol.
func defaultConfig() config {
	return config{
		Data:   datasets.DefaultSyntheticConfig(),
		Models: []string{"mlp", "gcn", "fmp"},
		Train:  exp.DefaultTrainOptions(),
	}
}

func run(args []string, stdout, stderr io.Writer) error {
	if len(args) > 0 {
		return fmt.Errorf("takes no arguments (got %q); see examples/reproduce for a configurable run", args)
	}
	return quickstart(defaultConfig(), stdout, stderr)
}

func quickstart(cfg config, stdout, stderr io.Writer) error {
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
	for _, name := range cfg.Models {
		fmt.Fprintf(stderr, "training %s ...\n", name)
		p, err := exp.NewProblem(ds, exp.DefaultSpec(name).Dtype)
		if err != nil {
			return err
		}
		out, err := exp.Run(p, exp.DefaultSpec(name), cfg.Train)
		if err != nil {
			return err
		}
		r := out.Report
		fmt.Fprintf(tw, "%s\t%.2f\t%.2f\t%.2f\t%s\t\n", name,
			metrics.Percent(r.Accuracy), metrics.Percent(r.DemographicParity), metrics.Percent(r.EqualOpportunity),
			out.Train.Round(10*time.Millisecond))
	}
	return tw.Flush()
}
