package main

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/fairmp/fairmp/fmp"
	"github.com/fairmp/fairmp/internal/cli"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/fairmp/fairmp/graph"
	"github.com/fairmp/fairmp/graph/datasets"
	"github.com/fairmp/fairmp/internal/opkit"
	"github.com/fairmp/fairmp/internal/testutil"
	"github.com/fairmp/fairmp/layers"
	"github.com/fairmp/fairmp/layers/train"
	"github.com/fairmp/fairmp/metrics"
)

// studyData loads a data set of the study by name.
func studyData(t tb, name string) *datasets.Dataset {
	t.Helper()
	if name == "synthetic" {
		d, err := datasets.Synthetic(datasets.DefaultSyntheticConfig())
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	dir := getenv("FAIRMP_DATA")
	if dir == "" {
		t.Skipf("FAIRMP_DATA is not set: skipping %s (set it to the folder holding %s/)", name, name)
	}
	d, err := datasets.Load(dir, name, datasets.PaperOptions())
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// trained is one trained MLP → FMP model with what the study needs.
type trained struct {
	xtrans []float64 // the MLP's logits in evaluation mode, n × c
	logits []float64 // the model's output in evaluation mode, n × c
	res    *train.Result
	dur    time.Duration
}

// trainModel trains MLP → FMP(cfg) with the paper's protocol (2 layers, 64
// hidden, Adam lr 1e-3, weight decay 1e-5, best validation accuracy) and
// returns its logits and its MLP's logits.
func trainModel(t tb, d *datasets.Dataset, adj *graph.Matrix, cfg fmp.Config, seed int64, epochs int) trained {
	t.Helper()
	start := time.Now()
	g := G.NewGraph()
	x, err := train.FeatureNode(g, tensor.Float64, d.Features, d.N(), d.NumFeatures, "X")
	if err != nil {
		t.Fatal(err)
	}
	phase := layers.NewPhase()
	mc := fmp.DefaultModelConfig(d.NumFeatures, 2)
	mc.MLP.Seed = seed
	mc.FMP = cfg
	m, err := fmp.NewModel(g, d.Graph, d.Sens, mc, phase)
	if err != nil {
		t.Fatal(err)
	}
	task := &train.Task{Graph: g, X: x, Labels: d.Labels, Train: d.Split.Train, Val: d.Split.Val, Classes: 2, Phase: phase}
	tc := train.DefaultConfig()
	tc.Epochs = epochs
	res, err := train.Fit(context.Background(), m, task, tc)
	if err != nil {
		t.Fatal(err)
	}
	h, err := m.Backbone().Forward(x)
	if err != nil {
		t.Fatal(err)
	}
	out, err := m.Forward(x)
	if err != nil {
		t.Fatal(err)
	}
	var hv, ov G.Value
	vm := G.NewTapeMachine(g.SubgraphRoots(G.Read(h, &hv), G.Read(out, &ov)))
	defer vm.Close()
	if err := vm.RunAll(); err != nil {
		t.Fatal(err)
	}
	return trained{xtrans: testutil.ToF64(hv), logits: testutil.ToF64(ov), res: res, dur: time.Since(start)}
}

// backbone returns the MLP logits and model logits of trainModel(base),
// cached in the -cache folder (if set) so that further forward-only
// sweeps reuse trained backbones.
func backbone(t tb, d *datasets.Dataset, adj *graph.Matrix, base fmp.Config, seed int64, epochs int) trained {
	t.Helper()
	dir := getenv("FAIRMP_STUDY_CACHE")
	file := filepath.Join(dir, fmt.Sprintf("%s_ls%v_K%d_%v_lf%v_seed%d_ep%d.f64", d.Name, base.LambdaS, base.K, base.TrainMode, base.LambdaF, seed, epochs))
	n2 := 2 * d.N()
	if dir != "" {
		if b, err := os.ReadFile(file); err == nil && len(b) == 16*n2 {
			v := make([]float64, 2*n2)
			for i := range v {
				v[i] = math.Float64frombits(binary.LittleEndian.Uint64(b[8*i:]))
			}
			return trained{xtrans: v[:n2], logits: v[n2:], res: &train.Result{}}
		}
	}
	tr := trainModel(t, d, adj, base, seed, epochs)
	if dir != "" {
		b := make([]byte, 0, 16*n2)
		for _, x := range append(append([]float64(nil), tr.xtrans...), tr.logits...) {
			b = binary.LittleEndian.AppendUint64(b, math.Float64bits(x))
		}
		if err := os.WriteFile(file, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return tr
}

// forwardFMP applies FMP(cfg) to fixed logits (no training).
func forwardFMP(t tb, xtrans []float64, adj *graph.Matrix, sens []int, cfg fmp.Config) []float64 {
	t.Helper()
	n := len(sens)
	rep, err := fmp.Explain(testutil.Tensor(tensor.Float64, xtrans, n, len(xtrans)/n), adj, sens, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return rep.Output
}

func softmaxAll(logits []float64, c int) []float64 {
	p := make([]float64, len(logits))
	for i := 0; i < len(logits); i += c {
		opkit.SoftmaxRow(logits[i:i+c], p[i:i+c], 1)
	}
	return p
}

// evalSplit returns the metrics of logits on the nodes idx.
func evalSplit(t tb, d *datasets.Dataset, logits []float64, idx []int) metrics.Report {
	t.Helper()
	r, err := metrics.Evaluate(softmaxAll(logits, 2), 2, d.Labels, d.Sens, idx, metrics.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	return r
}

type pair struct{ val, test metrics.Report }

// agg accumulates per-seed results of one configuration.
type agg struct {
	name      string
	val, test []metrics.Report
}

func (a *agg) add(p pair) { a.val, a.test = append(a.val, p.val), append(a.test, p.test) }

func (a *agg) summary(t tb) (val, test metrics.Summary) {
	t.Helper()
	var err error
	if val, err = metrics.Summarize(a.val); err != nil {
		t.Fatal(err)
	}
	if test, err = metrics.Summarize(a.test); err != nil {
		t.Fatal(err)
	}
	return val, test
}

func envInt(name string, def int) int {
	if v := getenv(name); v != "" {
		if x, err := strconv.Atoi(v); err == nil {
			return x
		}
	}
	return def
}

func envList(name string, def string) []string {
	v := getenv(name)
	if v == "" {
		v = def
	}
	return strings.Split(v, ",")
}

func pct(s metrics.Stat) string { return fmt.Sprintf("%5.2f±%4.2f", 100*s.Mean, 100*s.Std) }

func row(name string, val, test metrics.Summary) string {
	return fmt.Sprintf("| %-44s | %s | %s | %s | %s | %s |", name,
		pct(val.Accuracy), pct(val.DemographicParity), pct(test.Accuracy), pct(test.DemographicParity), pct(test.EqualOpportunity))
}

const tableHeader = "| config | val acc | val ΔDP | test acc | test ΔDP | test ΔEO |\n|---|---|---|---|---|---|"

// study runs the part of the study its flags select on each data set.
func study(t tb) {
	seeds := envInt("FAIRMP_STUDY_SEEDS", 5)
	epochs := envInt("FAIRMP_STUDY_EPOCHS", 300)
	part := getenv("FAIRMP_STUDY_PART")
	if part == "" {
		part = "sweep"
	}
	for _, name := range envList("FAIRMP_STUDY_DATA", "synthetic,bail,nba") {
		t.Run(name, func(t tb) {
			t.Logf("== %s", name)
			d := studyData(t, name)
			adj := graph.NormalizedAdjacency(d.Graph)
			switch part {
			case "sweep":
				studySweep(t, d, adj, seeds, epochs)
			case "modes":
				studyModes(t, d, adj, seeds, epochs)
			default:
				t.Fatalf("unknown -part %q, want sweep or modes", part)
			}
		})
	}
}

// studySweep trains, per K and seed, the backbone with λf = 0 (MLP →
// propagation) and applies FMP with each scaling and λf to its MLP logits
// at evaluation only: the InferenceOnly training mode, up to the choice of
// the best epoch (made here with λf = 0).
func studySweep(t tb, d *datasets.Dataset, adj *graph.Matrix, seeds, epochs int) {
	lambdaS := []float64{1}
	if v := getenv("FAIRMP_STUDY_LS"); v != "" {
		var err error
		if lambdaS, err = cli.ParseFloats(v, 0); err != nil {
			t.Fatalf("-ls: %v", err)
		}
	}
	ks := []int{2, 5, 10}
	if v := getenv("FAIRMP_STUDY_K"); v != "" {
		var err error
		if ks, err = cli.ParseInts(v, 1); err != nil {
			t.Fatalf("-k: %v", err)
		}
	}
	var temps []float64
	if v := getenv("FAIRMP_STUDY_TEMPS"); v != "" {
		var err error
		if temps, err = cli.ParseFloats(v, 0); err != nil {
			t.Fatalf("-temps: %v", err)
		}
	}
	grid := map[fmp.Scaling][]float64{
		fmp.Normalized: {0.25, 0.5, 1, 2, 3, 4, 6, 8},
		fmp.Paper:      {10, 1000},
	}
	for _, ls := range lambdaS {
		for _, k := range ks {
			base := fmp.Config{LambdaS: ls, LambdaF: 0, K: k, Scaling: fmp.Normalized, Rho: 4, Temperature: 1, TrainMode: fmp.InferenceOnly}
			aggs := map[string]*agg{}
			var order []string
			get := func(name string) *agg {
				if a, ok := aggs[name]; ok {
					return a
				}
				aggs[name] = &agg{name: name}
				order = append(order, name)
				return aggs[name]
			}
			var mlpAgg = get("MLP alone")
			for seed := 0; seed < seeds; seed++ {
				tr := backbone(t, d, adj, base, int64(seed), epochs)
				t.Logf("λs=%v K=%d seed %d: trained in %v (best epoch %d)", ls, k, seed, tr.dur.Round(time.Millisecond), tr.res.Best.Epoch)
				mlpAgg.add(pair{evalSplit(t, d, tr.xtrans, d.Split.Val), evalSplit(t, d, tr.xtrans, d.Split.Test)})
				get("λf=0 (backbone)").add(pair{evalSplit(t, d, tr.logits, d.Split.Val), evalSplit(t, d, tr.logits, d.Split.Test)})
				for _, sc := range []fmp.Scaling{fmp.Paper, fmp.Normalized} {
					for _, lf := range grid[sc] {
						cfg := base
						cfg.Scaling, cfg.LambdaF = sc, lf
						out := forwardFMP(t, tr.xtrans, adj, d.Sens, cfg)
						get(fmt.Sprintf("%v λf=%v", sc, lf)).add(pair{evalSplit(t, d, out, d.Split.Val), evalSplit(t, d, out, d.Split.Test)})
					}
				}
				for _, tau := range temps {
					for _, lf := range grid[fmp.Normalized] {
						cfg := base
						cfg.LambdaF, cfg.Temperature = lf, tau
						out := forwardFMP(t, tr.xtrans, adj, d.Sens, cfg)
						get(fmt.Sprintf("Normalized τ=%v λf=%v", tau, lf)).add(pair{evalSplit(t, d, out, d.Split.Val), evalSplit(t, d, out, d.Split.Test)})
					}
				}
				// Oracle bound (uses the test split; not a method): the
				// best test accuracy of group-specific thresholds on the
				// backbone's probabilities with test ΔDP at most half the
				// backbone's.
				get("oracle thresholds (test, bound)").add(oracle(t, d, tr.logits))
			}
			var b strings.Builder
			fmt.Fprintf(&b, "\n%s, λs=%v, K=%d, %d seeds, %d epochs, InferenceOnly (forward-only sweep)\n%s\n", d.Name, ls, k, seeds, epochs, tableHeader)
			for _, name := range order {
				v, te := aggs[name].summary(t)
				fmt.Fprintln(&b, row(name, v, te))
			}
			t.Log(b.String())
		}
	}
}

// studyModes trains MLP → FMP in each training mode for the (K, τ, λf)
// settings of FAIRMP_STUDY_MODES ("K:τ:λf,...", default "10:0.5:2,5:1:2"),
// Normalized scaling with ρ = 4, and reports the trained models (these
// InferenceOnly rows are full training runs, not sweeps).
func studyModes(t tb, d *datasets.Dataset, adj *graph.Matrix, seeds, epochs int) {
	ls := 1.0
	spec := getenv("FAIRMP_STUDY_MODES")
	if spec == "" {
		spec = "10:0.5:2,5:1:2"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\n%s, λs=%v, Normalized ρ=4, %d seeds, %d epochs, trained per mode\n%s\n", d.Name, ls, seeds, epochs, tableHeader)
	for _, item := range strings.Split(spec, ",") {
		var k int
		var tau, lf float64
		if _, err := fmt.Sscanf(strings.ReplaceAll(item, ":", " "), "%d %g %g", &k, &tau, &lf); err != nil {
			t.Fatalf("FAIRMP_STUDY_MODES item %q: %v", item, err)
		}
		modes := []fmp.TrainMode{0, fmp.EndToEnd, fmp.ConstantDual, fmp.InferenceOnly}
		if getenv("FAIRMP_STUDY_MODES_NOBASE") == "1" {
			modes = modes[1:] // the backbone row is the sweep's
		}
		for _, mode := range modes {
			cfg := fmp.Config{LambdaS: ls, LambdaF: lf, K: k, Scaling: fmp.Normalized, Rho: 4, Temperature: tau, TrainMode: mode}
			name := fmt.Sprintf("%v K=%d τ=%v λf=%v", mode, k, tau, lf)
			if mode == 0 { // the backbone: λf = 0
				cfg.LambdaF, cfg.TrainMode = 0, fmp.EndToEnd
				name = fmt.Sprintf("λf=0 K=%d (backbone)", k)
			}
			a := &agg{}
			for seed := 0; seed < seeds; seed++ {
				tr := trainModel(t, d, adj, cfg, int64(seed), epochs)
				t.Logf("%s seed %d: %v, best epoch %d", name, seed, tr.dur.Round(time.Second), tr.res.Best.Epoch)
				a.add(pair{evalSplit(t, d, tr.logits, d.Split.Val), evalSplit(t, d, tr.logits, d.Split.Test)})
			}
			v, te := a.summary(t)
			line := row(name, v, te)
			t.Log(line)
			fmt.Fprintln(&b, line)
		}
	}
	t.Log(b.String())
}

// oracle returns the metrics of the group-threshold classifier that has
// the highest test accuracy among those with test ΔDP at most half of the
// plain (0.5) thresholds' — an upper bound on what any post-processing of
// these probabilities can reach, computed on the test split itself.
func oracle(t tb, d *datasets.Dataset, logits []float64) pair {
	t.Helper()
	p := softmaxAll(logits, 2)
	base := evalSplit(t, d, logits, d.Split.Test)
	target := base.DemographicParity / 2
	predict := func(t0, t1 float64) []float64 {
		q := make([]float64, len(p))
		for i := 0; i < len(p)/2; i++ {
			th := t0
			if d.Sens[i] == 1 {
				th = t1
			}
			if p[2*i+1] > th {
				q[2*i+1] = 1
			} else {
				q[2*i] = 1
			}
		}
		return q
	}
	best := pair{test: base}
	bestAcc := -1.0
	for a := 0; a <= 100; a++ {
		for b := 0; b <= 100; b++ {
			q := predict(float64(a)/100, float64(b)/100)
			r, err := metrics.Evaluate(q, 2, d.Labels, d.Sens, d.Split.Test, metrics.DefaultOptions())
			if err != nil {
				continue
			}
			if r.DemographicParity <= target && r.Accuracy > bestAcc {
				bestAcc = r.Accuracy
				best.test = r
				best.val, _ = metrics.Evaluate(q, 2, d.Labels, d.Sens, d.Split.Val, metrics.DefaultOptions())
			}
		}
	}
	_ = math.Abs
	return best
}
