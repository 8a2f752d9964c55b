package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/fairmp/fairmp/internal/blas"

	"github.com/fairmp/fairmp/fmp"
	"github.com/fairmp/fairmp/graph"
	"github.com/fairmp/fairmp/graph/datasets"
	"github.com/fairmp/fairmp/internal/fastblas"
	"github.com/fairmp/fairmp/layers"
	"github.com/fairmp/fairmp/layers/train"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// fmpModels are the -model values besides the declared kinds of package
// layers: FMP as the peer runs it (fmp: MLP → FMP with K = 2 trained end
// to end; fmp-prop: its propagation alone on fixed logits) and at the
// library's defaults (fmp-default).
var fmpModels = []string{"fmp", "fmp-prop", "fmp-default"}

// models lists the -model values: every declared kind that is not a
// wrapper, then fmpModels.
func models() []string {
	var out []string
	for _, k := range layers.Kinds() {
		if !k.Wraps() {
			out = append(out, k.Name())
		}
	}
	return append(out, fmpModels...)
}

type options struct {
	model                  string
	nodes, features, edges int
	hidden                 int
	epochs, warmup         int
	dtype                  tensor.Dtype
	jsonOut                bool
	graphKind              string
	seed                   int64
	k                      int
	lambdaS, lambdaF       float64
	trainer                bool
	cpuProfile, memProfile string
}

// Result is what one run reports (-json prints it as one JSON object).
// Times are milliseconds per epoch, memory is MiB.
type Result struct {
	Model    string `json:"model"`
	BLAS     string `json:"blas"`
	Dtype    string `json:"dtype"`
	Graph    string `json:"graph"`
	Nodes    int    `json:"nodes"`
	Features int    `json:"features"`
	Edges    int    `json:"edges"`
	Hidden   int    `json:"hidden"`
	K        int    `json:"k,omitempty"`
	Warmup   int    `json:"warmup"`
	Epochs   int    `json:"epochs"`
	Procs    int    `json:"gomaxprocs"`

	// MedianMS, MinMS and MaxMS summarise the timed training epochs:
	// train.Trainer.Step (forward + backward on the pruned training tape,
	// the Adam step, the gradients zeroed).
	MedianMS float64 `json:"median_ms"`
	MinMS    float64 `json:"min_ms"`
	MaxMS    float64 `json:"max_ms"`
	// ForwardMS is the median of a forward-only tape (the trainer's
	// logits and the loss) run as many times; OptimizerMS the median
	// train.Adam step over the same parameters; BackwardMS is MedianMS
	// minus both.
	ForwardMS   float64 `json:"forward_ms"`
	BackwardMS  float64 `json:"backward_ms"`
	OptimizerMS float64 `json:"optimizer_ms"`
	// TrainerEpochMS is the median epoch of train.Fit (training step
	// plus its evaluation pass), with -trainer.
	TrainerEpochMS float64 `json:"trainer_epoch_ms,omitempty"`
	// TrainerCPUMSPerEpoch is the process's CPU time per timed train.Fit
	// epoch, with -trainer: on a loaded machine the work an epoch takes.
	TrainerCPUMSPerEpoch float64 `json:"trainer_cpu_ms_per_epoch,omitempty"`
	// CPUMSPerEpoch is the process's CPU time (user + system, all threads)
	// per timed epoch: on a shared machine it is steadier than wall time.
	CPUMSPerEpoch float64 `json:"cpu_ms_per_epoch"`
	// AllocMBPerEpoch is the Go heap allocated per timed epoch.
	AllocMBPerEpoch float64 `json:"alloc_mb_per_epoch"`
	// LossFirst and LossLast are the training loss of the first and the
	// last timed epoch.
	LossFirst float64 `json:"loss_first"`
	LossLast  float64 `json:"loss_last"`

	SetupS float64 `json:"setup_s"`
	// RSSSetupMB is the resident set after building data, model and tapes;
	// PeakRSSMB the process's peak (getrusage ru_maxrss, data generation
	// included); TrainPeakRSSMB the peak during the timed epochs alone
	// (VmHWM after resetting it through /proc/self/clear_refs; 0 where
	// that is not available).
	RSSSetupMB     float64 `json:"rss_setup_mb"`
	PeakRSSMB      float64 `json:"peak_rss_mb"`
	TrainPeakRSSMB float64 `json:"train_peak_rss_mb"`
}

// run parses args and runs one benchmark, writing the report to stdout.
//
// Flags:
//
//	-model     mlp|gcn|sgc|appnp|gat|jknet|fmp|fmp-prop|fmp-default (default fmp)
//	-nodes -features -edges   graph shape (default Pokec-z: 67796, 276, 617958)
//	-graph     synthetic (datasets.Synthetic, a biased SBM) or uniform
//	           (uniform random edges, standard normal features, random
//	           labels and groups, as the PyTorch peer); default synthetic
//	-hidden    hidden width (default 64; GAT: 4 heads of hidden/4)
//	-epochs -warmup   timed and untimed epochs (default 10, 3)
//	-dtype     float32|float64 (default float32)
//	-k         propagation steps: FMP and SGC (default 2), APPNP (default 10)
//	-lambda-s -lambda-f   FMP's λs and λf (default 5, 100; Paper scaling)
//	-json      print the Result as JSON
//	-trainer   also time train.Fit's full epoch (step + evaluation;
//	           fmp-default: fmp.Model.FitTwoStage's, the recommended way)
//	-cpuprofile -memprofile   pprof files (CPU: the timed epochs only;
//	           with -trainer, train.Fit's timed epochs, evaluation included)
//
// Models match the PyTorch peer (../shared/peers/models.py): no dropout,
// hidden 64, 2 classes; "fmp" is fmp.Model, a 2-layer MLP followed by an
// fmp.Layer (λs = 5, λf = 100, K = 2, Paper scaling, end-to-end), "fmp-prop" the
// fmp.Layer alone on an n × 2 learnable leaf (the peer takes no optimizer
// step there; here the trainer's Adam step on the n × 2 leaf is included);
// "fmp-default" is fmp.Model at the library's defaults (K = 10, λs 1, λf
// 2, Normalized scaling, InferenceOnly training), the model users get.
//
// An epoch is one train.Trainer.Step, the code train.Fit runs: one
// run of the training tape (forward and backward, pruned to the gradients
// of the learnables), one train.Adam step (lr 1e-3, weight decay 1e-5)
// and the gradients zeroed; train.Fit adds an evaluation pass per
// epoch (-trainer times that too). The forward time comes from a second
// tape holding the trainer's logits and the loss only, run as many times
// after the timed epochs; the optimizer time from a second train.Adam
// over the same parameters; backward = epoch − forward − optimizer.
func run(args []string, stdout, stderr io.Writer) error {
	o, err := parseFlags(args, stderr)
	if err != nil {
		return err
	}
	start := time.Now()
	d, err := makeData(o)
	if err != nil {
		return err
	}
	b, err := build(o, d)
	if err != nil {
		return err
	}
	d.features = nil // the feature node holds its own copy
	runtime.GC()
	debug.FreeOSMemory()
	blasName := blas.Name()
	if blasName == "fastblas" {
		blasName += " (AVX2/FMA)"
		if fastblas.AVX512() {
			blasName = "fastblas (AVX-512)"
		}
	}
	res := &Result{Model: o.model, BLAS: blasName, Dtype: o.dtype.String(), Graph: o.graphKind,
		Nodes: o.nodes, Features: o.features, Edges: d.g.NumEdges(), Hidden: o.hidden, K: b.k,
		Warmup: o.warmup, Epochs: o.epochs, Procs: runtime.GOMAXPROCS(0)}
	res.SetupS = time.Since(start).Seconds()
	res.RSSSetupMB = currentRSS()
	if err := b.time(o, res); err != nil {
		return err
	}
	b.close()
	if o.trainer {
		// The first model is done: collect it before the second is
		// built, so that the peak is one model's, as in a program that
		// trains one.
		b = nil
		runtime.GC()
		debug.FreeOSMemory()
		if err := timeTrainer(o, d, res); err != nil {
			return err
		}
	}
	res.PeakRSSMB = maxRSS()
	if o.memProfile != "" {
		if err := writeHeapProfile(o.memProfile); err != nil {
			return err
		}
	}
	if o.jsonOut {
		enc := json.NewEncoder(stdout)
		return enc.Encode(res)
	}
	printResult(stdout, res)
	return nil
}

func parseFlags(args []string, stderr io.Writer) (options, error) {
	var o options
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.model, "model", "fmp", "model: "+strings.Join(models(), "|"))
	fs.IntVar(&o.nodes, "nodes", 67796, "number of nodes")
	fs.IntVar(&o.features, "features", 276, "number of input features")
	fs.IntVar(&o.edges, "edges", 617958, "number of undirected edges")
	fs.IntVar(&o.hidden, "hidden", 64, "hidden width (GAT: 4 heads of hidden/4 features)")
	fs.IntVar(&o.epochs, "epochs", 10, "timed epochs")
	fs.IntVar(&o.warmup, "warmup", 3, "untimed warm-up epochs")
	dtype := fs.String("dtype", "float32", "float32|float64")
	fs.BoolVar(&o.jsonOut, "json", false, "print the result as JSON")
	fs.StringVar(&o.graphKind, "graph", "synthetic", "synthetic (datasets.Synthetic) or uniform (as the PyTorch peer)")
	fs.Int64Var(&o.seed, "seed", 0, "seed of the graph, the features and the parameters")
	fs.IntVar(&o.k, "k", 0, "propagation steps (0: 2 for fmp, fmp-prop and sgc, 10 for appnp)")
	fs.Float64Var(&o.lambdaS, "lambda-s", 5, "FMP λs")
	fs.Float64Var(&o.lambdaF, "lambda-f", 100, "FMP λf")
	fs.BoolVar(&o.trainer, "trainer", false, "also time train.Fit (training step + evaluation pass per epoch)")
	fs.StringVar(&o.cpuProfile, "cpuprofile", "", "write a CPU profile of the timed epochs to this file (with -trainer: of train.Fit's timed epochs)")
	fs.StringVar(&o.memProfile, "memprofile", "", "write a heap profile at the end to this file")
	shape := fs.String("shape", "", "a real data set's shape, setting -nodes, -features and -edges: "+strings.Join(shapeNames(), "|"))
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if *shape != "" {
		s, ok := shapes[*shape]
		if !ok {
			return o, fmt.Errorf("-shape %q, want one of %s", *shape, strings.Join(shapeNames(), ", "))
		}
		o.nodes, o.features, o.edges = s[0], s[1], s[2]
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	switch *dtype {
	case "float32":
		o.dtype = tensor.Float32
	case "float64":
		o.dtype = tensor.Float64
	default:
		return o, fmt.Errorf("-dtype %q, want float32 or float64", *dtype)
	}
	if !slices.Contains(models(), o.model) {
		return o, fmt.Errorf("-model %q, want one of %s", o.model, strings.Join(models(), ", "))
	}
	switch {
	case o.nodes < 4:
		return o, fmt.Errorf("-nodes %d, want >= 4", o.nodes)
	case o.features < 1:
		return o, fmt.Errorf("-features %d, want >= 1", o.features)
	case o.edges < 0 || float64(o.edges) > float64(o.nodes)*float64(o.nodes-1)/4:
		return o, fmt.Errorf("-edges %d, want in [0, nodes·(nodes−1)/4] (a sparse graph)", o.edges)
	case o.hidden < 1:
		return o, fmt.Errorf("-hidden %d, want >= 1", o.hidden)
	case o.model == "gat" && (o.hidden < 4 || o.hidden%4 != 0):
		return o, fmt.Errorf("-hidden %d with -model gat, want a multiple of 4 (4 heads)", o.hidden)
	case o.epochs < 1:
		return o, fmt.Errorf("-epochs %d, want >= 1", o.epochs)
	case o.warmup < 0:
		return o, fmt.Errorf("-warmup %d, want >= 0", o.warmup)
	case o.k < 0:
		return o, fmt.Errorf("-k %d, want >= 0 (0: the model's default)", o.k)
	case o.graphKind != "synthetic" && o.graphKind != "uniform":
		return o, fmt.Errorf("-graph %q, want synthetic or uniform", o.graphKind)
	}
	return o, nil
}

// data is the generated problem.
type data struct {
	g                   *graph.Graph
	features            []float64 // n × d, row-major
	labels, sens, train []int
}

func makeData(o options) (*data, error) {
	if o.graphKind == "synthetic" {
		cfg := datasets.PokecZShape(o.seed)
		cfg.N, cfg.NumFeatures = o.nodes, o.features
		cfg.MeanDegree = 2 * float64(o.edges) / float64(o.nodes)
		ds, err := datasets.Synthetic(cfg)
		if err != nil {
			return nil, err
		}
		return &data{g: ds.Graph, features: ds.Features, labels: ds.Labels, sens: ds.Sens, train: ds.Split.Train}, nil
	}
	return uniformData(o)
}

// uniformData draws o.edges distinct uniform random undirected edges
// without self-loops, standard normal features and uniform binary labels
// and groups; half the nodes (a random permutation's first half) train.
func uniformData(o options) (*data, error) {
	n := o.nodes
	rng := rand.New(rand.NewSource(o.seed))
	keys := make([]uint64, 0, o.edges+o.edges/10)
	for len(keys) < o.edges {
		for need := (o.edges-len(keys))*11/10 + 16; need > 0; need-- {
			a, b := rng.Intn(n), rng.Intn(n)
			if a == b {
				continue
			}
			if a > b {
				a, b = b, a
			}
			keys = append(keys, uint64(a)*uint64(n)+uint64(b))
		}
		slices.Sort(keys)
		keys = slices.Compact(keys)
	}
	rng.Shuffle(len(keys), func(i, j int) { keys[i], keys[j] = keys[j], keys[i] })
	keys = keys[:o.edges]
	edges := make([][2]int, len(keys))
	for i, k := range keys {
		edges[i] = [2]int{int(k / uint64(n)), int(k % uint64(n))}
	}
	keys = nil
	g, err := graph.FromEdges(n, edges)
	if err != nil {
		return nil, err
	}
	d := &data{g: g, features: make([]float64, n*o.features), labels: make([]int, n), sens: make([]int, n)}
	for i := range d.features {
		d.features[i] = rng.NormFloat64()
	}
	for i := 0; i < n; i++ {
		d.labels[i], d.sens[i] = rng.Intn(2), rng.Intn(2)
	}
	d.train = rng.Perm(n)[:n/2]
	sort.Ints(d.train)
	return d, nil
}

// bench is a built model with its trainer.
type bench struct {
	k      int
	phase  *layers.Phase
	params G.Nodes
	tr     *train.Trainer
	fwdM   G.VM
	adam   *train.Adam
}

// protocol holds the benchmark's settings beyond the kinds' defaults, by
// kind and JSON key (layers.Kind.Override): no dropout, as in the PyTorch
// peer's models, except GAT's (the peer keeps it); SGC two hops.
var protocol = map[string]map[string]any{
	"mlp":   {"dropout": 0},
	"gcn":   {"dropout": 0},
	"sgc":   {"k": 2},
	"appnp": {"dropout": 0, "k": 10, "alpha": 0.1},
	"jknet": {"dropout": 0},
}

// buildKind builds a model of a declared kind with the benchmark's hidden
// width (GAT: heads × per-head), dtype, seed and protocol; -k replaces
// the protocol's propagation steps of a kind that has them. It returns
// the model and its propagation steps (0 for a kind without "k").
func buildKind(o options, kind *layers.Kind, d *data, g *G.ExprGraph, phase *layers.Phase) (layers.Model, int, error) {
	opt := layers.Options{Dtype: o.dtype, Seed: o.seed + 1}
	if kind.HasHidden() {
		opt.Hidden = o.hidden
	}
	cfg, err := kind.Configure(o.features, 2, opt)
	if err != nil {
		return nil, 0, err
	}
	set := map[string]any{}
	for key, v := range protocol[kind.Name()] {
		set[key] = v
	}
	raw, err := json.Marshal(cfg)
	if err != nil {
		return nil, 0, err
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		return nil, 0, err
	}
	_, hasK := fields["k"]
	if hasK && o.k != 0 {
		set["k"] = o.k
	}
	if cfg, err = kind.Override(cfg, set); err != nil {
		return nil, 0, err
	}
	k := 0
	if hasK {
		raw, _ = json.Marshal(cfg)
		var kv struct {
			K int `json:"k"`
		}
		if err := json.Unmarshal(raw, &kv); err != nil {
			return nil, 0, err
		}
		k = kv.K
	}
	m, err := kind.Build(g, d.g, cfg, phase)
	return m, k, err
}

// newModel builds o.model's model in g for input x (no tapes).
func newModel(o options, d *data, g *G.ExprGraph, x *G.Node, phase *layers.Phase) (layers.Model, int, error) {
	dt, h, c := o.dtype, o.hidden, 2
	k := o.k
	if kind, err := layers.LookupKind(o.model); err == nil && !kind.Wraps() {
		return buildKind(o, kind, d, g, phase)
	}
	switch o.model {
	case "fmp-default":
		// FMP as the library recommends it: fmp.DefaultModelConfig (MLP
		// backbone, K = 10, λs 1, λf 2, Normalized scaling,
		// InferenceOnly), dropout off as in every bench model.
		cfg := fmp.DefaultModelConfig(o.features, c)
		cfg.MLP.Hidden, cfg.MLP.Dropout, cfg.MLP.InputDropout, cfg.MLP.Dtype, cfg.MLP.Seed = h, 0, 0, dt, o.seed+1
		if k != 0 {
			cfg.FMP.K = k
		}
		m, err := fmp.NewModel(g, d.g, d.sens, cfg, phase)
		return m, cfg.FMP.K, err
	case "fmp", "fmp-prop":
		if k == 0 {
			k = 2
		}
		fc := fmp.DefaultConfig()
		fc.LambdaS, fc.LambdaF, fc.K, fc.Scaling, fc.TrainMode = o.lambdaS, o.lambdaF, k, fmp.Paper, fmp.EndToEnd
		if o.model == "fmp" {
			cfg := fmp.DefaultModelConfig(o.features, c)
			cfg.MLP.Hidden, cfg.MLP.Dropout, cfg.MLP.Dtype, cfg.MLP.Seed = h, 0, dt, o.seed+1
			cfg.FMP = fc
			m, err := fmp.NewModel(g, d.g, d.sens, cfg, phase)
			return m, k, err
		}
		l, err := fmp.New(graph.NormalizedAdjacency(d.g), d.sens, fc)
		if err != nil {
			return nil, 0, err
		}
		l.SetPhase(phase)
		rng := rand.New(rand.NewSource(o.seed + 1))
		z := make([]float64, o.nodes*c)
		for i := range z {
			z[i] = rng.NormFloat64()
		}
		zn, err := train.FeatureNode(g, dt, z, o.nodes, c, "logits")
		if err != nil {
			return nil, 0, err
		}
		return &propOnly{z: zn, l: l}, k, nil
	}
	return nil, 0, fmt.Errorf("unknown model %q", o.model)
}

// propOnly is FMP propagation on a learnable n × c leaf (x is ignored).
type propOnly struct {
	z *G.Node
	l *fmp.Layer
}

func (p *propOnly) Forward(*G.Node) (*G.Node, error) { return p.l.Forward(p.z) }
func (p *propOnly) Learnables() G.Nodes              { return G.Nodes{p.z} }

func build(o options, d *data) (*bench, error) {
	g := G.NewGraph()
	x, err := train.FeatureNode(g, o.dtype, d.features, o.nodes, o.features, "x")
	if err != nil {
		return nil, err
	}
	phase := layers.NewPhase()
	m, k, err := newModel(o, d, g, x, phase)
	if err != nil {
		return nil, fmt.Errorf("building %s: %w", o.model, err)
	}
	task := &train.Task{Graph: g, X: x, Labels: d.labels, Train: d.train, Classes: 2, Phase: phase}
	tr, err := train.NewTrainer(m, task, trainConfig(o))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", o.model, err)
	}
	b := &bench{k: k, phase: phase, params: m.Learnables(), tr: tr}
	// The forward-only tape: the same logits node and its loss.
	loss, err := layers.CrossEntropy(tr.Logits(), d.labels, d.train)
	if err != nil {
		return nil, err
	}
	b.fwdM = G.NewTapeMachine(g.SubgraphRoots(loss))
	// A second optimiser over the same parameters, to time an Adam step.
	if b.adam, err = train.NewAdam(trainConfig(o).Adam, b.params); err != nil {
		return nil, err
	}
	return b, nil
}

// trainConfig is layers' default training configuration (Adam, lr 1e-3,
// weight decay 1e-5) for the benchmark's epochs.
func trainConfig(o options) train.Config {
	cfg := train.DefaultConfig()
	cfg.Epochs, cfg.Select = o.warmup+o.epochs, train.SelectLast
	return cfg
}

func (b *bench) close() {
	b.tr.Close()
	b.fwdM.Close()
}

// time runs the warm-up and timed epochs (train.Trainer.Step: forward,
// backward, Adam step, gradients zeroed), then the forward-only tape and
// the Adam step as many times each.
func (b *bench) time(o options, res *Result) error {
	n := o.warmup + o.epochs
	total := make([]float64, 0, o.epochs)
	var ms0, ms1 runtime.MemStats
	var cpu0 time.Duration
	for e := 0; e < n; e++ {
		if e == o.warmup {
			if o.cpuProfile != "" && !o.trainer {
				f, err := os.Create(o.cpuProfile)
				if err != nil {
					return err
				}
				defer f.Close()
				if err := pprof.StartCPUProfile(f); err != nil {
					return err
				}
				defer pprof.StopCPUProfile()
			}
			runtime.ReadMemStats(&ms0)
			resetPeakRSS()
			cpu0 = cpuTime()
		}
		t0 := time.Now()
		st, err := b.tr.Step()
		if err != nil {
			return err
		}
		d := ms(time.Since(t0))
		if math.IsNaN(st.Loss) || math.IsInf(st.Loss, 0) {
			return fmt.Errorf("epoch %d: loss %v", e+1, st.Loss)
		}
		if e >= o.warmup {
			total = append(total, d)
			if e == o.warmup {
				res.LossFirst = st.Loss
			}
			res.LossLast = st.Loss
		}
	}
	res.CPUMSPerEpoch = ms(cpuTime()-cpu0) / float64(o.epochs)
	runtime.ReadMemStats(&ms1)
	if o.cpuProfile != "" && !o.trainer {
		pprof.StopCPUProfile()
	}
	res.TrainPeakRSSMB = peakRSS()
	res.AllocMBPerEpoch = float64(ms1.TotalAlloc-ms0.TotalAlloc) / float64(o.epochs) / (1 << 20)
	b.phase.SetTraining(true)
	fwd := make([]float64, 0, o.epochs)
	for e := 0; e < o.epochs; e++ {
		t0 := time.Now()
		if err := b.fwdM.RunAll(); err != nil {
			return fmt.Errorf("forward-only run %d: %w", e+1, err)
		}
		b.fwdM.Reset()
		fwd = append(fwd, ms(time.Since(t0)))
	}
	b.phase.SetTraining(false)
	// The gradients bound to the parameters hold zeros now: the Adam step
	// costs the same on any values.
	opt := make([]float64, 0, o.epochs)
	for e := 0; e < o.epochs; e++ {
		t0 := time.Now()
		if err := b.adam.Step(); err != nil {
			return err
		}
		opt = append(opt, ms(time.Since(t0)))
	}
	res.MedianMS, res.MinMS, res.MaxMS = median(total), slices.Min(total), slices.Max(total)
	res.ForwardMS = median(fwd)
	res.OptimizerMS = median(opt)
	res.BackwardMS = math.Max(0, res.MedianMS-res.ForwardMS-res.OptimizerMS)
	return nil
}

// timeTrainer builds the model afresh and times train.Fit's epochs.
func timeTrainer(o options, d *data, res *Result) error {
	d2 := *d
	if d2.features == nil {
		var err error
		if d2.features, err = regenFeatures(o); err != nil {
			return err
		}
	}
	g := G.NewGraph()
	x, err := train.FeatureNode(g, o.dtype, d2.features, o.nodes, o.features, "x")
	if err != nil {
		return err
	}
	d2.features = nil
	phase := layers.NewPhase()
	m, _, err := newModel(o, &d2, g, x, phase)
	if err != nil {
		return err
	}
	cfg := trainConfig(o)
	var times []float64
	var cpu0 time.Duration
	var profErr error
	last := time.Now()
	cfg.OnEpoch = func(st train.EpochStats) error {
		now := time.Now()
		if st.Epoch > o.warmup {
			times = append(times, ms(now.Sub(last)))
		}
		if st.Epoch == o.warmup {
			cpu0 = cpuTime()
			if o.cpuProfile != "" {
				profErr = startProfile(o.cpuProfile)
			}
		}
		last = time.Now()
		return nil
	}
	if o.warmup == 0 {
		cpu0 = cpuTime()
		if o.cpuProfile != "" {
			if err := startProfile(o.cpuProfile); err != nil {
				return err
			}
		}
	}
	task := &train.Task{Graph: g, X: x, Labels: d.labels, Train: d.train, Classes: 2, Phase: phase}
	last = time.Now()
	if fm, ok := m.(*fmp.Model); ok && o.model == "fmp-default" {
		// The recommended way (fmp.Model.FitTwoStage): the backbone trained
		// through propagation alone, λf = 0.
		_, err = fm.FitTwoStage(context.Background(), task, cfg)
	} else {
		_, err = train.Fit(context.Background(), m, task, cfg)
	}
	if o.cpuProfile != "" {
		pprof.StopCPUProfile()
	}
	if err != nil {
		return err
	}
	if profErr != nil {
		return profErr
	}
	res.TrainerEpochMS = median(times)
	res.TrainerCPUMSPerEpoch = ms(cpuTime()-cpu0) / float64(o.epochs)
	return nil
}

// startProfile starts a CPU profile into path (stopped by the caller's
// pprof.StopCPUProfile; the file is closed when the process ends).
func startProfile(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	return pprof.StartCPUProfile(f)
}

// regenFeatures rebuilds the features dropped after the first build.
func regenFeatures(o options) ([]float64, error) {
	d, err := makeData(o)
	if err != nil {
		return nil, err
	}
	return d.features, nil
}

func scalar(v G.Value) (float64, error) {
	switch s := v.Data().(type) {
	case float64:
		return s, nil
	case float32:
		return float64(s), nil
	case []float64:
		if len(s) == 1 {
			return s[0], nil
		}
	case []float32:
		if len(s) == 1 {
			return float64(s[0]), nil
		}
	}
	return 0, fmt.Errorf("loss is %v, want a scalar", v)
}

func ms(d time.Duration) float64 { return float64(d) / 1e6 }

func median(s []float64) float64 {
	t := slices.Clone(s)
	slices.Sort(t)
	if len(t)%2 == 1 {
		return t[len(t)/2]
	}
	return (t[len(t)/2-1] + t[len(t)/2]) / 2
}

// cpuTime returns the process's user + system CPU time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// maxRSS returns the process's peak resident set (getrusage ru_maxrss).
func maxRSS() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return float64(ru.Maxrss) / 1024 // KiB on Linux
}

// procStatusMB returns a "VmXxx:" line of /proc/self/status in MiB.
func procStatusMB(key string) float64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, key+":"); ok {
			f := strings.Fields(rest)
			if len(f) > 0 {
				kb, err := strconv.ParseFloat(f[0], 64)
				if err == nil {
					return kb / 1024
				}
			}
		}
	}
	return 0
}

func currentRSS() float64 { return procStatusMB("VmRSS") }

var peakReset bool

// resetPeakRSS resets VmHWM to the current RSS (Linux >= 4.0).
func resetPeakRSS() {
	peakReset = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) == nil
}

func peakRSS() float64 {
	if !peakReset {
		return 0
	}
	return procStatusMB("VmHWM")
}

func writeHeapProfile(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	runtime.GC()
	return errors.Join(pprof.WriteHeapProfile(f), f.Close())
}

func printResult(w io.Writer, r *Result) {
	k := ""
	if r.K > 0 {
		k = fmt.Sprintf(" K=%d", r.K)
	}
	fmt.Fprintf(w, "%s%s  %s  BLAS %s  %s graph: %d nodes, %d features, %d edges  hidden %d  GOMAXPROCS %d\n",
		r.Model, k, r.Dtype, r.BLAS, r.Graph, r.Nodes, r.Features, r.Edges, r.Hidden, r.Procs)
	fmt.Fprintf(w, "epoch (Trainer.Step: fwd+bwd+adam), %d warm-up + %d timed: median %.1f ms  min %.1f  max %.1f\n",
		r.Warmup, r.Epochs, r.MedianMS, r.MinMS, r.MaxMS)
	fmt.Fprintf(w, "split (medians): forward %.1f ms  backward %.1f ms  optimizer %.1f ms  (CPU time %.1f ms/epoch)\n", r.ForwardMS, r.BackwardMS, r.OptimizerMS, r.CPUMSPerEpoch)
	if r.TrainerEpochMS > 0 {
		fmt.Fprintf(w, "train.Fit epoch (step + evaluation pass): median %.1f ms  (CPU time %.1f ms/epoch)\n", r.TrainerEpochMS, r.TrainerCPUMSPerEpoch)
	}
	fmt.Fprintf(w, "memory: RSS after setup %.0f MiB  peak during epochs %.0f MiB  process peak %.0f MiB  heap alloc %.1f MiB/epoch\n",
		r.RSSSetupMB, r.TrainPeakRSSMB, r.PeakRSSMB, r.AllocMBPerEpoch)
	fmt.Fprintf(w, "loss %.4f -> %.4f  setup %.1f s\n", r.LossFirst, r.LossLast, r.SetupS)
}

// shapes are the real data sets' sizes: nodes, features, undirected edges.
var shapes = map[string][3]int{
	"nba":     {403, 95, 10621},
	"bail":    {18876, 18, 311870},
	"credit":  {30000, 13, 137377},
	"pokec_z": {67796, 276, 617958},
}

func shapeNames() []string {
	names := make([]string, 0, len(shapes))
	for k := range shapes {
		names = append(names, k)
	}
	sort.Strings(names)
	return names
}
