package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strings"

	"github.com/fairmp/fairmp/examples/paper/internal/exp"
	"github.com/fairmp/fairmp/fmp"
	"github.com/fairmp/fairmp/graph/datasets"
	"github.com/fairmp/fairmp/internal/blas"
	"github.com/fairmp/fairmp/layers"
	"github.com/fairmp/fairmp/layers/train"
	"github.com/fairmp/fairmp/metrics"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

func main() {
	blas.Default() // fairmp's BLAS before any graph runs (see internal/blas)
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "audit:", err)
		os.Exit(1)
	}
}

type options struct {
	data, dataset string
	synth         datasets.SyntheticConfig
	spec          exp.Spec
	train         exp.TrainOptions
	list          int
	out           string
}

func parseFlags(args []string, stderr io.Writer) (*options, error) {
	fl := flag.NewFlagSet("audit", flag.ContinueOnError)
	fl.SetOutput(stderr)
	def := fmp.DefaultConfig()
	tr := exp.DefaultTrainOptions()
	var (
		data    = fl.String("data", os.Getenv("FAIRMP_DATA"), "data directory for -dataset other than synthetic (default $FAIRMP_DATA)")
		dataset = fl.String("dataset", "synthetic", "data set: synthetic|"+strings.Join(datasets.Presets, "|"))
		epochs  = fl.Int("epochs", tr.Epochs, "training epochs")
		seed    = fl.Int64("seed", 1, "model seed (initialisation and dropout)")
		lambdaS = fl.Float64("lambda-s", def.LambdaS, "FMP λs")
		lambdaF = fl.Float64("lambda-f", def.LambdaF, "FMP λf")
		k       = fl.Int("k", def.K, "FMP unrolled steps K")
		tau     = fl.Float64("tau", def.Temperature, "FMP temperature τ")
		list    = fl.Int("list", 10, "flipped test nodes to list")
		out     = fl.String("out", ".", "directory for audit.svg")
	)
	if err := fl.Parse(args); err != nil {
		return nil, err
	}
	if fl.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments %q", fl.Args())
	}
	o := &options{data: *data, dataset: strings.ToLower(*dataset), synth: datasets.DefaultSyntheticConfig(),
		spec: exp.DefaultSpec("fmp"), train: tr, list: *list, out: *out}
	if o.dataset != "synthetic" {
		ok := false
		for _, p := range datasets.Presets {
			ok = ok || p == o.dataset
		}
		if !ok {
			return nil, fmt.Errorf("-dataset %q: want synthetic or one of %s", *dataset, strings.Join(datasets.Presets, ", "))
		}
		if o.data == "" {
			return nil, fmt.Errorf("-dataset %s needs the data directory: pass -data DIR or set $FAIRMP_DATA (see examples/paper/reproduce for the expected files)", o.dataset)
		}
	}
	if *epochs < 1 {
		return nil, fmt.Errorf("-epochs %d: want at least 1", *epochs)
	}
	if *list < 0 {
		return nil, fmt.Errorf("-list %d: want ≥ 0", *list)
	}
	o.train.Epochs = *epochs
	o.spec.Seed = *seed
	o.spec.FMP.LambdaS, o.spec.FMP.LambdaF, o.spec.FMP.K, o.spec.FMP.Temperature = *lambdaS, *lambdaF, *k, *tau
	if err := o.spec.FMP.Validate(); err != nil {
		return nil, fmt.Errorf("-lambda-s/-lambda-f/-k/-tau: %w", err)
	}
	if st, err := os.Stat(o.out); err != nil || !st.IsDir() {
		return nil, fmt.Errorf("-out %q: not an existing directory", o.out)
	}
	return o, nil
}

func run(args []string, stdout, stderr io.Writer) error {
	o, err := parseFlags(args, stderr)
	if err != nil {
		return err
	}
	ds, err := datasetFor(o)
	if err != nil {
		return err
	}
	exp.PrintWarnings(stderr, ds)
	return audit(o, ds, stdout, stderr)
}

func datasetFor(o *options) (*datasets.Dataset, error) {
	if o.dataset == "synthetic" {
		return datasets.Synthetic(o.synth)
	}
	ds, err := datasets.Load(o.data, o.dataset, datasets.PaperOptions())
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w (see examples/paper/reproduce for the files each data set needs)", err)
	}
	if err != nil {
		return nil, err
	}
	if ds.NumClasses() != 2 {
		return nil, fmt.Errorf("%s has %d classes; this audit prints binary decisions and needs 2", ds.Name, ds.NumClasses())
	}
	return ds, nil
}

func audit(o *options, ds *datasets.Dataset, stdout, stderr io.Writer) error {
	// 1. Train MLP → FMP with the library's trainer.
	fmt.Fprintf(stderr, "training FMP on %s (%d nodes) for %d epochs ...\n", ds.Name, ds.N(), o.train.Epochs)
	p, err := exp.NewProblem(ds, o.spec.Dtype)
	if err != nil {
		return err
	}
	trained, err := exp.Run(p, o.spec, o.train)
	if err != nil {
		return err
	}
	// 2. One forward pass of the backbone, in a fresh graph holding only
	// the forward computation, with the trained parameters; then fmp's
	// Explain on its logits runs the model's FMP and the same K steps with
	// the sensitive steps removed.
	q, err := exp.NewProblem(ds, o.spec.Dtype)
	if err != nil {
		return err
	}
	built, err := exp.Build(q, o.spec)
	if err != nil {
		return err
	}
	m, ok := built.(*fmp.Model)
	if !ok {
		return fmt.Errorf("model %T is not an FMP model", built)
	}
	if err := train.SetParams(m, values(trained.Model)); err != nil {
		return err
	}
	h, err := m.Backbone().Forward(q.Task.X)
	if err != nil {
		return err
	}
	var logits G.Value
	G.Read(h, &logits)
	vm := G.NewTapeMachine(q.Task.Graph)
	defer vm.Close()
	if err := vm.RunAll(); err != nil {
		return fmt.Errorf("audit forward pass: %w", err)
	}
	rep, err := fmp.Explain(logits.(*tensor.Dense), m.Matrix(), m.SensitiveAttribute(), m.Config())
	if err != nil {
		return err
	}
	return printAudit(o, ds, m.Layer(), rep, trained.Report, stdout)
}

// values returns copies of m's current parameter values.
func values(m layers.Model) []*tensor.Dense {
	var v []*tensor.Dense
	for _, p := range m.Learnables() {
		v = append(v, p.Value().(*tensor.Dense).Clone().(*tensor.Dense))
	}
	return v
}

// probs returns the row softmax of the n × c logits.
func probs(logits []float64, n, c int) []float64 {
	p := make([]float64, n*c)
	for i := 0; i < n; i++ {
		row := logits[i*c : (i+1)*c]
		mx := math.Inf(-1)
		for _, z := range row {
			mx = math.Max(mx, z)
		}
		sum := 0.0
		for j, z := range row {
			p[i*c+j] = math.Exp(z - mx)
			sum += p[i*c+j]
		}
		for j := range row {
			p[i*c+j] /= sum
		}
	}
	return p
}

func printAudit(o *options, ds *datasets.Dataset, l *fmp.Layer, rep *fmp.AuditReport, trained metrics.Report, w io.Writer) error {
	cfg := l.Config()
	beta, radius := l.DualStep()
	fmt.Fprintf(w, "FMP on %s: %d nodes, %d edges; λs %g (γ %.3f), λf %g, K %d, τ %g, %v scaling, %v training: dual step β %.4g, radius %.4g\n\n",
		ds.Name, ds.N(), ds.Graph.NumEdges(), cfg.LambdaS, cfg.Gamma(), cfg.LambdaF, cfg.K, cfg.Temperature, cfg.Scaling, cfg.TrainMode, beta, radius)

	n, c := rep.N, rep.C
	pOut, pBase := probs(rep.Output, n, c), probs(rep.Baseline, n, c)
	test := ds.Split.Test
	withR, err := metrics.Evaluate(pOut, c, ds.Labels, ds.Sens, test, metrics.DefaultOptions())
	if err != nil {
		return fmt.Errorf("metrics with the sensitive steps: %w", err)
	}
	baseR, err := metrics.Evaluate(pBase, c, ds.Labels, ds.Sens, test, metrics.DefaultOptions())
	if err != nil {
		return fmt.Errorf("metrics without the sensitive steps: %w", err)
	}
	fmt.Fprintln(w, "Test split, one forward pass of the trained model:")
	fmt.Fprintln(w, "| forward pass | accuracy % | ΔDP % | ΔEO % |")
	fmt.Fprintln(w, "|---|---|---|---|")
	fmt.Fprintf(w, "| without the sensitive steps (u ≡ 0) | %.2f | %.2f | %.2f |\n", metrics.Percent(baseR.Accuracy), metrics.Percent(baseR.DemographicParity), metrics.Percent(baseR.EqualOpportunity))
	fmt.Fprintf(w, "| FMP (with them) | %.2f | %.2f | %.2f |\n", metrics.Percent(withR.Accuracy), metrics.Percent(withR.DemographicParity), metrics.Percent(withR.EqualOpportunity))
	if withR.Accuracy != trained.Accuracy || withR.DemographicParity != trained.DemographicParity {
		return fmt.Errorf("the audit pass disagrees with the trained model's prediction (accuracy %.4f vs %.4f): a bug", withR.Accuracy, trained.Accuracy)
	}

	fmt.Fprintln(w, "\nInfluence of the sensitive attribute, per group (all nodes; mean P(ŷ=1), in %):")
	fmt.Fprintln(w, "| group | nodes | without | with | shift | mean |Δlogit| |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|")
	for g := range rep.GroupMean {
		cnt, infl := 0, 0.0
		for i := 0; i < n; i++ {
			if ds.Sens[i] == g {
				cnt++
				for _, v := range rep.NodeInfluence(i) {
					infl += math.Abs(v) / float64(c)
				}
			}
		}
		fmt.Fprintf(w, "| s=%d | %d | %.2f | %.2f | %+.2f | %.4f |\n", g, cnt,
			metrics.Percent(rep.GroupMeanBaseline[g][1]), metrics.Percent(rep.GroupMean[g][1]),
			metrics.Percent(rep.GroupShift[g][1]), infl/float64(max(cnt, 1)))
	}
	fmt.Fprintf(w, "Gap in mean P(ŷ=1) between groups: %.2f%% without, %.2f%% with; largest logit change %.4f.\n",
		metrics.Percent(rep.MaxGapBaseline[1]), metrics.Percent(rep.MaxGap[1]), rep.MaxAbsInfluence)

	fmt.Fprintf(w, "\nDual direction u (%d × %d, one column per class; Δs is +1/n₁ on s=1 and −1/n₀ on s=0,\nso a positive entry pushes group 1's probability of that class down and group 0's up):", rep.DualRows, c)
	for r := 0; r < rep.DualRows; r++ {
		fmt.Fprint(w, "\n  [")
		for j := 0; j < c; j++ {
			fmt.Fprintf(w, " %+.4g", rep.Dual[r*c+j])
		}
		fmt.Fprint(w, " ]")
	}
	fmt.Fprintln(w)

	// Nodes whose decision (P(y=1) > 0.5, as metrics) the sensitive steps flipped.
	var flipped []int
	up, down := map[int]int{}, map[int]int{}
	for i := 0; i < n; i++ {
		b, a := pBase[i*c+1] > 0.5, pOut[i*c+1] > 0.5
		if a != b {
			flipped = append(flipped, i)
			if a {
				up[ds.Sens[i]]++
			} else {
				down[ds.Sens[i]]++
			}
		}
	}
	fmt.Fprintf(w, "\nDecisions flipped by the sensitive steps: %d of %d nodes", len(flipped), n)
	for _, g := range groupsOf(ds.Sens) {
		fmt.Fprintf(w, "; s=%d: %d to ŷ=1, %d to ŷ=0", g, up[g], down[g])
	}
	fmt.Fprintln(w, ".")
	isTest := map[int]bool{}
	for _, i := range test {
		isTest[i] = true
	}
	listed := 0
	for _, i := range flipped {
		if listed == o.list {
			break
		}
		if !isTest[i] {
			continue
		}
		if listed == 0 {
			fmt.Fprintln(w, "| test node | group | label | P(ŷ=1) without | with | Δlogit |")
			fmt.Fprintln(w, "|---|---|---|---|---|---|")
		}
		listed++
		infl := rep.NodeInfluence(i)
		fmt.Fprintf(w, "| %d | %d | %d | %.3f | %.3f | %+.3f |\n", i, ds.Sens[i], ds.Labels[i], pBase[i*c+1], pOut[i*c+1], infl[1]-infl[0])
	}

	svg := filepath.Join(o.out, "audit.svg")
	if err := plotLogits(svg, rep, ds.Sens); err != nil {
		return err
	}
	fmt.Fprintf(w, "\nwrote %s\n", svg)
	return nil
}

// groupsOf returns the group ids present (≥ 0), ascending.
func groupsOf(sens []int) []int {
	mx := -1
	for _, s := range sens {
		mx = max(mx, s)
	}
	g := make([]int, mx+1)
	for i := range g {
		g[i] = i
	}
	return g
}
