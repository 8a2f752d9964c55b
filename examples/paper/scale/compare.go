package main

import (
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/fairmp/fairmp/fmp"
	"github.com/fairmp/fairmp/graph"
	"github.com/fairmp/fairmp/graph/datasets"
	"github.com/fairmp/fairmp/graph/features"
	"github.com/fairmp/fairmp/layers"
	"github.com/fairmp/fairmp/layers/minibatch"
	"github.com/fairmp/fairmp/layers/train"
	"github.com/fairmp/fairmp/metrics"
)

// compareRow is one training run of the comparison.
type compareRow struct {
	dataset, training string
	seed              int64
	backbone, fair    metrics.Report
	seconds           float64
	steps             int
	lambdaF           float64
}

func loadCompare(o *options, name string) (*datasets.Dataset, error) {
	switch name {
	case "pokec-z":
		return datasets.Synthetic(datasets.PokecZShape(1))
	case "synthetic":
		c := datasets.DefaultSyntheticConfig()
		c.N = o.compareShapeN
		return datasets.Synthetic(c)
	}
	if o.data == "" {
		return nil, usageError{fmt.Errorf("-compare %s needs -data or FAIRMP_DATA", name)}
	}
	return datasets.Load(o.data, name, datasets.PaperOptions())
}

// compare trains GCN full-batch and in mini-batches on each data set and
// seed, and debiases both with FMP over the whole graph.
func compare(o *options, stdout, progress io.Writer) error {
	var rows []compareRow
	for _, name := range o.compare {
		ds, err := loadCompare(o, name)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		base := layers.DefaultGCNConfig(ds.NumFeatures, 2)
		base.Dtype = tensor.Float32
		adj, err := minibatch.Matrix(base, ds.Graph)
		if err != nil {
			return err
		}
		x, err := features.NewDense(ds.Features, ds.N(), ds.NumFeatures)
		if err != nil {
			return err
		}
		for s := int64(1); s <= int64(o.seeds); s++ {
			cfg := base
			cfg.Seed = s
			for _, training := range []string{"full-batch", "mini-batch"} {
				start := time.Now()
				var z *tensor.Dense
				if training == "full-batch" {
					z, err = fullBatch(cfg, ds, o)
				} else {
					z, err = miniBatch(cfg, ds, adj, x, o, s)
				}
				if err != nil {
					return fmt.Errorf("%s, %s, seed %d: %w", name, training, s, err)
				}
				secs := time.Since(start).Seconds()
				// FMP on the backbone's logits, λf chosen on validation
				// (the default grid and rule).
				fr, err := fmp.NewLogitsFrontier(context.Background(), z, adj, ds.Sens, ds.Labels, ds.Split.Val, fmp.DefaultConfig(), fmp.DefaultFrontierConfig())
				if err != nil {
					return fmt.Errorf("%s, %s, seed %d: FMP frontier: %w", name, training, s, err)
				}
				layer, err := fmp.New(adj, ds.Sens, fr.Best().Config)
				if err != nil {
					return err
				}
				f, err := layer.Apply(z)
				if err != nil {
					return err
				}
				steps := o.fullEpochs
				if training == "mini-batch" {
					steps = o.miniEpochs * ((len(ds.Split.Train) + o.batch - 1) / o.batch)
				}
				r := compareRow{dataset: name, training: training, seed: s, seconds: secs, steps: steps, lambdaF: fr.Best().Config.LambdaF}
				if r.backbone, err = evaluate(z, ds.Labels, ds.Sens, ds.Split.Test); err != nil {
					return err
				}
				if r.fair, err = evaluate(f, ds.Labels, ds.Sens, ds.Split.Test); err != nil {
					return err
				}
				rows = append(rows, r)
				fmt.Fprintf(progress, "%s  %-10s seed %d  acc %.2f  ΔDP %.2f  + FMP (λf %g) acc %.2f  ΔDP %.2f  (%.1f s)\n", name, training, s,
					metrics.Percent(r.backbone.Accuracy), metrics.Percent(r.backbone.DemographicParity), r.lambdaF,
					metrics.Percent(r.fair.Accuracy), metrics.Percent(r.fair.DemographicParity), secs)
			}
		}
	}
	if err := writeCompare(stdout, o, rows); err != nil {
		return err
	}
	if o.out == "" {
		return nil
	}
	if err := os.MkdirAll(o.out, 0o755); err != nil {
		return err
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "%s, `go run ./scale %s` (in examples/paper)\n\n", time.Now().UTC().Format("2006-01-02"), strings.Join(os.Args[1:], " "))
	if err := writeCompare(&sb, o, rows); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(o.out, "compare.md"), []byte(sb.String()), 0o644); err != nil {
		return err
	}
	return writeCompareCSV(filepath.Join(o.out, "compare.csv"), rows)
}

func fullBatch(cfg layers.GCNConfig, ds *datasets.Dataset, o *options) (*tensor.Dense, error) {
	g := G.NewGraph()
	phase := layers.NewPhase()
	m, err := layers.NewGCN(g, ds.Graph, cfg, phase)
	if err != nil {
		return nil, err
	}
	x, err := train.FeatureNode(g, cfg.Dtype, ds.Features, ds.N(), ds.NumFeatures, "x")
	if err != nil {
		return nil, err
	}
	task := &train.Task{Graph: g, X: x, Labels: ds.Labels, Train: ds.Split.Train, Val: ds.Split.Val, Classes: 2, Phase: phase}
	tc := train.DefaultConfig()
	tc.Epochs, tc.Adam.LR = o.fullEpochs, o.compareLR
	if _, err := train.Fit(context.Background(), m, task, tc); err != nil {
		return nil, err
	}
	return train.Logits(m, task)
}

func miniBatch(cfg layers.GCNConfig, ds *datasets.Dataset, adj *graph.Matrix, x features.Source, o *options, seed int64) (*tensor.Dense, error) {
	mc := minibatch.DefaultConfig(cfg)
	mc.Train.Epochs, mc.Train.Adam.LR = o.miniEpochs, o.compareLR
	mc.Sampler.Fanouts, mc.Sampler.BatchSize, mc.Sampler.Seed = o.fanouts, o.batch, seed
	task := &minibatch.Task{Adj: adj, Features: x, Labels: ds.Labels, Train: ds.Split.Train, Val: ds.Split.Val, Classes: 2}
	res, err := minibatch.Fit(context.Background(), task, mc)
	if err != nil {
		return nil, err
	}
	return minibatch.Logits(cfg, res.Params, adj, x)
}

func writeCompare(w io.Writer, o *options, rows []compareRow) error {
	fmt.Fprintf(w, "GCN (hidden 64, 2 layers, dropout 0.5, float32), Adam lr %g, weight decay 1e-5, best validation epoch; full-batch: %d epochs (one step each); mini-batch: %d epochs of batches of %d targets, fan-outs %v; FMP on the whole graph's logits (λs 1, K 10, τ 0.5), λf chosen per run on validation by fmp.NewLogitsFrontier (the default 20-value grid and rule). Test split, mean ± std over %d seeds, %%; steps = Adam steps of one run.\n\n",
		o.compareLR, o.fullEpochs, o.miniEpochs, o.batch, o.fanouts, o.seeds)
	fmt.Fprintln(w, "| data set | training | steps | accuracy | ΔDP | ΔEO | λf chosen | + FMP accuracy | + FMP ΔDP | + FMP ΔEO | s a run |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|---|---|")
	type key struct{ d, t string }
	var order []key
	group := map[key][]compareRow{}
	for _, r := range rows {
		k := key{r.dataset, r.training}
		if _, ok := group[k]; !ok {
			order = append(order, k)
		}
		group[k] = append(group[k], r)
	}
	for _, k := range order {
		var b, f []metrics.Report
		var lfs []string
		secs := 0.0
		for _, r := range group[k] {
			b, f = append(b, r.backbone), append(f, r.fair)
			secs += r.seconds
			lfs = append(lfs, strconv.FormatFloat(r.lambdaF, 'g', -1, 64))
		}
		sb, err := metrics.Summarize(b)
		if err != nil {
			return err
		}
		sf, err := metrics.Summarize(f)
		if err != nil {
			return err
		}
		pm := func(s metrics.Stat) string {
			return fmt.Sprintf("%.2f ± %.2f", metrics.Percent(s.Mean), metrics.Percent(s.Std))
		}
		fmt.Fprintf(w, "| %s | %s | %d | %s | %s | %s | %s | %s | %s | %s | %.1f |\n", k.d, k.t, group[k][0].steps, pm(sb.Accuracy), pm(sb.DemographicParity), pm(sb.EqualOpportunity), strings.Join(lfs, ", "),
			pm(sf.Accuracy), pm(sf.DemographicParity), pm(sf.EqualOpportunity), secs/float64(len(group[k])))
	}
	return nil
}

func writeCompareCSV(path string, rows []compareRow) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := csv.NewWriter(f)
	_ = w.Write([]string{"dataset", "training", "seed", "accuracy", "dp", "eo", "fmp_lambda_f", "fmp_accuracy", "fmp_dp", "fmp_eo", "seconds"})
	g := func(v float64) string { return strconv.FormatFloat(v, 'f', 6, 64) }
	for _, r := range rows {
		_ = w.Write([]string{r.dataset, r.training, strconv.FormatInt(r.seed, 10), g(r.backbone.Accuracy), g(r.backbone.DemographicParity), g(r.backbone.EqualOpportunity),
			g(r.lambdaF), g(r.fair.Accuracy), g(r.fair.DemographicParity), g(r.fair.EqualOpportunity), g(r.seconds)})
	}
	w.Flush()
	if err := w.Error(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
