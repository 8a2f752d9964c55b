// Command gorun trains a plain GCN and REDRESS with fairmp on a NIFTY data
// set (Bail by default) and prints, per seed and as mean ± std, the test
// accuracy, ΔDP and InFoRM's individual bias, the numbers the independent
// PyTorch implementation beside it (redress.py) prints: the Go side of
// the peer check in ../README.md.
//
//	go run ./peers-redress/gorun -data $FAIRMP_DATA -split /tmp/bail_split100.json
//
// InFoRM's bias is metrics.InFoRMBias over the similarity graph of the
// test nodes' features (metrics.CosineTopK on the test nodes, k = -k),
// with the probabilities of both classes.
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
	"strings"
	"time"

	"github.com/fairmp/fairmp/graph/datasets"
	"github.com/fairmp/fairmp/layers"
	"github.com/fairmp/fairmp/layers/fairness"
	"github.com/fairmp/fairmp/layers/fairtrain"
	"github.com/fairmp/fairmp/layers/train"
	"github.com/fairmp/fairmp/metrics"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

type options struct {
	data, dataset, split, out string
	methods                   []string
	seeds, epochs, hidden, k  int
	synthN                    int
	last                      bool
	redress                   fairtrain.REDRESSConfig
}

func parse(args []string, stderr io.Writer) (*options, error) {
	fs := flag.NewFlagSet("gorun", flag.ContinueOnError)
	fs.SetOutput(stderr)
	o := &options{redress: fairtrain.DefaultREDRESSConfig()}
	fs.StringVar(&o.data, "data", os.Getenv("FAIRMP_DATA"), "data folder (default $FAIRMP_DATA)")
	fs.StringVar(&o.dataset, "dataset", "bail", "NIFTY preset (bail, credit, german), or synthetic")
	fs.StringVar(&o.split, "split", "", "JSON {\"train\",\"val\",\"test\"} of 0-based rows (default: the data set's split)")
	fs.StringVar(&o.out, "out", "", "per-run CSV file (default: none)")
	methods := fs.String("methods", "gcn,redress", "comma-separated: gcn, redress")
	fs.IntVar(&o.seeds, "seeds", 3, "seeds 0..seeds−1")
	fs.IntVar(&o.epochs, "epochs", 300, "training epochs")
	fs.IntVar(&o.hidden, "hidden", 64, "GCN hidden width")
	fs.IntVar(&o.k, "k", metrics.DefaultSimilarityK, "neighbours per test node in InFoRM's similarity graph")
	fs.IntVar(&o.synthN, "n", 300, "nodes of the synthetic graph")
	sel := fs.String("select", "best", "parameters kept: best (validation accuracy) or last (epoch)")
	fs.Float64Var(&o.redress.Gamma, "gamma", o.redress.Gamma, "REDRESS's weight γ")
	fs.Float64Var(&o.redress.Sigma, "sigma", o.redress.Sigma, "REDRESS's σ")
	fs.IntVar(&o.redress.TopK, "topk", o.redress.TopK, "REDRESS's list length k")
	fs.IntVar(&o.redress.Warmup, "warmup", o.redress.Warmup, "REDRESS's warm-up epochs")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	switch *sel {
	case "best":
	case "last":
		o.last = true
	default:
		return nil, fmt.Errorf("-select %q, want best or last", *sel)
	}
	for _, m := range strings.Split(*methods, ",") {
		if m != "gcn" && m != "redress" {
			return nil, fmt.Errorf("-methods: %q, want gcn or redress", m)
		}
		o.methods = append(o.methods, m)
	}
	if err := o.redress.Validate(); err != nil {
		return nil, fmt.Errorf("REDRESS flags: %w", err)
	}
	if o.seeds < 1 || o.epochs < 1 || o.hidden < 1 || o.k < 1 {
		return nil, fmt.Errorf("-seeds %d, -epochs %d, -hidden %d, -k %d: want all >= 1", o.seeds, o.epochs, o.hidden, o.k)
	}
	return o, nil
}

func load(o *options) (*datasets.Dataset, error) {
	var ds *datasets.Dataset
	var err error
	if o.dataset == "synthetic" {
		c := datasets.DefaultSyntheticConfig()
		c.N = o.synthN
		ds, err = datasets.Synthetic(c)
	} else {
		if o.data == "" {
			return nil, errors.New("no data folder: set -data or $FAIRMP_DATA")
		}
		ds, err = datasets.Load(o.data, o.dataset, datasets.DefaultOptions())
	}
	if err != nil {
		return nil, err
	}
	if o.split != "" {
		b, err := os.ReadFile(o.split)
		if err != nil {
			return nil, err
		}
		var sp map[string][]int
		if err := json.Unmarshal(b, &sp); err != nil {
			return nil, fmt.Errorf("-split %s: %w", o.split, err)
		}
		ds.Split = datasets.Split{Train: sp["train"], Val: sp["val"], Test: sp["test"]}
		if len(ds.Split.Train) < 2 || len(ds.Split.Test) < 2 {
			return nil, fmt.Errorf("-split %s: %d training and %d test nodes, want at least 2 of each", o.split, len(ds.Split.Train), len(ds.Split.Test))
		}
	}
	return ds, nil
}

// result is one run's test numbers (fractions; bias as returned).
type result struct {
	method              string
	seed                int
	acc, dp, bias, ndcg float64
	bestEpoch           int
	seconds, perEpoch   float64
}

func runOne(o *options, ds *datasets.Dataset, sim metrics.Similarity, method string, seed int) (result, error) {
	g := G.NewGraph()
	x, err := train.FeatureNode(g, tensor.Float64, ds.Features, ds.N(), ds.NumFeatures, "x")
	if err != nil {
		return result{}, err
	}
	task := &train.Task{Graph: g, X: x, Labels: ds.Labels, Train: ds.Split.Train, Val: ds.Split.Val, Classes: ds.NumClasses(), Phase: layers.NewPhase()}
	k, _ := layers.LookupKind("gcn")
	cfg, err := k.Configure(ds.NumFeatures, ds.NumClasses(), layers.Options{Dtype: tensor.Float64, Seed: int64(seed), Hidden: o.hidden})
	if err != nil {
		return result{}, err
	}
	var m fairness.Method
	if method == "redress" {
		m = o.redress
	}
	tc := train.DefaultConfig()
	tc.Epochs = o.epochs
	if o.last {
		tc.Select = train.SelectLast
	}
	start := time.Now()
	fit, err := fairness.Fit(context.Background(), m, cfg, fairness.NewSetup(ds.Graph, task, ds.Sens), tc)
	if err != nil {
		return result{}, err
	}
	secs := time.Since(start).Seconds()
	p, err := train.Predict(fit.Model, task, nil)
	if err != nil {
		return result{}, err
	}
	rep, err := metrics.Evaluate(p.Probs, p.Classes, ds.Labels, ds.Sens, ds.Split.Test, metrics.DefaultOptions())
	if err != nil {
		return result{}, err
	}
	bias, err := metrics.InFoRMBias(p.Probs, p.Classes, sim)
	if err != nil {
		return result{}, err
	}
	z, err := logits(fit.Model, task)
	if err != nil {
		return result{}, err
	}
	ndcg, err := fairtrain.RankingNDCG(z, task.Classes, ds.Features, ds.NumFeatures, ds.Split.Test, o.redress.TopK)
	if err != nil {
		return result{}, err
	}
	var step time.Duration
	for _, st := range fit.Result.History {
		step += st.StepTime
	}
	return result{method: method, seed: seed, acc: rep.Accuracy, dp: rep.DemographicParity, bias: bias, ndcg: ndcg,
		bestEpoch: kept(fit.Result), seconds: secs, perEpoch: step.Seconds() / float64(len(fit.Result.History))}, nil
}

// kept returns the epoch whose parameters the model holds.
func kept(r *train.Result) int {
	if r.Selected == train.SelectLast {
		return r.Last.Epoch
	}
	return r.Best.Epoch
}

// logits returns the model's evaluation-mode logits on every node.
func logits(m layers.Model, task *train.Task) ([]float64, error) {
	zn, err := m.Forward(task.X)
	if err != nil {
		return nil, err
	}
	var zv G.Value
	read := G.Read(zn, &zv)
	was := task.Phase.Training()
	task.Phase.SetTraining(false)
	defer task.Phase.SetTraining(was)
	vm := G.NewTapeMachine(task.Graph.SubgraphRoots(read))
	defer vm.Close()
	if err := vm.RunAll(); err != nil {
		return nil, err
	}
	d, ok := zv.(*tensor.Dense)
	if !ok {
		return nil, fmt.Errorf("logits: value %T", zv)
	}
	switch s := d.Data().(type) {
	case []float64:
		return append([]float64(nil), s...), nil
	case []float32:
		out := make([]float64, len(s))
		for i, v := range s {
			out[i] = float64(v)
		}
		return out, nil
	}
	return nil, fmt.Errorf("logits: dtype %v", d.Dtype())
}

func run(args []string, stdout, stderr io.Writer) error {
	o, err := parse(args, stderr)
	if err != nil {
		return err
	}
	ds, err := load(o)
	if err != nil {
		return err
	}
	sim, err := metrics.CosineTopK(ds.Features, ds.N(), ds.NumFeatures, o.k, ds.Split.Test)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s: n=%d d=%d split train/val/test %d/%d/%d; InFoRM S over the test nodes: k=%d, %d pairs, weight %.1f; REDRESS %+v\n",
		ds.Name, ds.N(), ds.NumFeatures, len(ds.Split.Train), len(ds.Split.Val), len(ds.Split.Test), o.k, len(sim.Pairs), sim.Weight(), o.redress)
	fmt.Fprintf(stdout, "%-8s %4s %8s %8s %10s %8s %8s %8s %10s\n", "method", "seed", "acc", "ΔDP", "InFoRM", "NDCG", "kept ep", "s/run", "step s/ep")
	var rows []result
	for _, method := range o.methods {
		for seed := 0; seed < o.seeds; seed++ {
			r, err := runOne(o, ds, sim, method, seed)
			if err != nil {
				return fmt.Errorf("%s seed %d: %w", method, seed, err)
			}
			rows = append(rows, r)
			fmt.Fprintf(stdout, "%-8s %4d %8.2f %8.2f %10.3f %8.4f %8d %8.1f %10.4f\n", method, seed, 100*r.acc, 100*r.dp, r.bias, r.ndcg, r.bestEpoch, r.seconds, r.perEpoch)
		}
	}
	fmt.Fprintf(stdout, "\nmean ± std (population std over seeds), test nodes; acc and ΔDP in %%\n")
	for _, method := range o.methods {
		var acc, dp, bias, ndcg, secs, step []float64
		for _, r := range rows {
			if r.method == method {
				acc, dp, bias, ndcg = append(acc, 100*r.acc), append(dp, 100*r.dp), append(bias, r.bias), append(ndcg, r.ndcg)
				secs, step = append(secs, r.seconds), append(step, r.perEpoch)
			}
		}
		fmt.Fprintf(stdout, "%-8s acc %s  ΔDP %s  InFoRM %s  NDCG@%d %s  s/run %.1f  step s/epoch %.4f\n", method, pm(acc, 2), pm(dp, 2), pm(bias, 1), o.redress.TopK, pm(ndcg, 4), mean(secs), mean(step))
	}
	if o.out != "" {
		var b strings.Builder
		b.WriteString("method,seed,acc,dp,inform_bias,ndcg,best_epoch,seconds,step_seconds_per_epoch\n")
		for _, r := range rows {
			fmt.Fprintf(&b, "%s,%d,%.4f,%.4f,%.6f,%.6f,%d,%.2f,%.5f\n", r.method, r.seed, 100*r.acc, 100*r.dp, r.bias, r.ndcg, r.bestEpoch, r.seconds, r.perEpoch)
		}
		if err := os.WriteFile(o.out, []byte(b.String()), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// mean is metrics.MeanStd's mean (NaN for no value or a value that is
// not finite).
func mean(v []float64) float64 {
	st, err := metrics.MeanStd(v)
	if err != nil {
		return math.NaN()
	}
	return st.Mean
}

// pm formats mean ± population std (metrics.MeanStd) with prec decimals.
func pm(v []float64, prec int) string {
	st, err := metrics.MeanStd(v)
	if err != nil {
		return "n/a"
	}
	return fmt.Sprintf("%.*f ± %.*f", prec, st.Mean, prec, st.Std)
}

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "gorun:", err)
		os.Exit(1)
	}
}
