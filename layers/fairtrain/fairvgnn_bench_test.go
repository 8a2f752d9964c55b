package fairtrain

import (
	"math/rand"
	"syscall"
	"testing"
	"time"

	"github.com/fairmp/fairmp/graph/datasets"
	"github.com/fairmp/fairmp/layers"
	"github.com/fairmp/fairmp/layers/fairness"
	"github.com/fairmp/fairmp/layers/train"
	"github.com/stretchr/testify/require"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// vgnnShapes are the sizes FairVGNN's cost is measured on: generated
// graphs of the real data sets' nodes, features and mean degree (NBA,
// Bail, Credit) and the baselines command's generated graph.
var vgnnShapes = []struct {
	name   string
	n, d   int
	degree float64
}{{"nba", 403, 95, 52.7}, {"bail", 18876, 18, 33}, {"credit", 30000, 13, 9.2}, {"synthetic", 2000, 16, 10}}

// vgnnBenchSetup returns a generated data set of the shape, a setup on
// it and the GCN backbone at its defaults (64 hidden).
func vgnnBenchSetup(b *testing.B, n, d int, degree float64) (*datasets.Dataset, func() (fairness.Setup, layers.Config)) {
	c := datasets.DefaultSyntheticConfig()
	c.N, c.NumFeatures, c.MeanDegree = n, d, degree
	ds, err := datasets.Synthetic(c)
	require.NoError(b, err)
	return ds, func() (fairness.Setup, layers.Config) {
		g := G.NewGraph()
		x, err := train.FeatureNode(g, tensor.Float64, ds.Features, ds.N(), ds.NumFeatures, "x")
		require.NoError(b, err)
		ph := layers.NewPhase()
		task := &train.Task{Graph: g, X: x, Labels: ds.Labels, Train: ds.Split.Train, Val: ds.Split.Val, Classes: 2, Phase: ph}
		return fairness.NewSetup(ds.Graph, task, ds.Sens), layers.DefaultGCNConfig(ds.NumFeatures, 2)
	}
}

// benchPlainEpoch times plain training's epochs (one step and the
// evaluation).
func benchPlainEpoch(b *testing.B, setup func() (fairness.Setup, layers.Config)) {
	s, cfg := setup()
	m, err := layers.Build(s.Task.Graph, s.Graph, cfg, s.Task.Phase)
	require.NoError(b, err)
	tr, err := train.NewTrainer(m, s.Task, train.DefaultConfig())
	require.NoError(b, err)
	defer tr.Close()
	b.ResetTimer()
	cpu := cpuTime()
	for i := 0; i < b.N; i++ {
		if _, err := tr.Epoch(); err != nil {
			b.Fatal(err)
		}
	}
	reportCPU(b, cpu)
}

// cpuTime returns the process's user and system CPU time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// reportCPU reports the CPU time per op since start (cpu-ns/op): on a
// machine shared with other jobs, a steadier measure than the wall time.
func reportCPU(b *testing.B, start time.Duration) {
	b.ReportMetric(float64(cpuTime()-start)/float64(b.N), "cpu-ns/op")
}

// benchVGNNEpoch times FairVGNN's epochs (its steps, clamping and
// evaluation; building the phases is not timed).
func benchVGNNEpoch(b *testing.B, ds *datasets.Dataset, setup func() (fairness.Setup, layers.Config), cfg FairVGNNConfig, unfolded bool) {
	benchVGNNEpochBody(b, ds, setup, cfg, unfolded, nil)
}

// referenceBody turns the GCN backbone into the reference code's GCN
// encoder (model.py's GCN_encoder_spmm): one convolution, no dropout.
func referenceBody(c layers.Config) layers.Config {
	g := c.(layers.GCNConfig)
	g.Layers, g.Dropout = 1, 0
	return g
}

// benchVGNNEpochBody is benchVGNNEpoch with the backbone changed by body
// (nil: as set up).
func benchVGNNEpochBody(b *testing.B, ds *datasets.Dataset, setup func() (fairness.Setup, layers.Config), cfg FairVGNNConfig, unfolded bool, body func(layers.Config) layers.Config) {
	s, bc := setup()
	if body != nil {
		bc = body(bc)
	}
	enc, err := NewEncoder(s.Task.Graph, s.Graph, bodyConfig(bc, cfg.Hidden), 2, s.Task.Phase)
	require.NoError(b, err)
	var known []int
	for i := range ds.Sens {
		known = append(known, i)
	}
	r := &vgnnRun{cfg: cfg, task: s.Task, n: ds.N(), d: ds.NumFeatures, dt: tensor.Float64,
		rng: rand.New(rand.NewSource(cfg.Seed)), model: &MaskedEncoder{enc: enc}, unfolded: unfolded}
	require.NoError(b, r.build(s, known, train.DefaultConfig().Adam))
	defer r.close()
	b.ResetTimer()
	cpu := cpuTime()
	for i := 0; i < b.N; i++ {
		if _, err := r.epoch(i + 1); err != nil {
			b.Fatal(err)
		}
	}
	reportCPU(b, cpu)
}

// BenchmarkFairVGNNEpochBailShaped times one epoch on a generated graph of
// Bail's size (18,876 nodes, 18 features, mean degree 33) with the GCN
// backbone at its defaults (64 hidden): plain training (one step and the
// evaluation) against FairVGNN at its defaults (10 masks, 5 steps of each
// phase: 150 forward and backward passes of the encoder an epoch) and at
// the reference code's Bail setting (5, 10 and 10 steps: 250 passes), and
// at its defaults with a 2-wide representation (Hidden 2: the passes
// without the second layer's 16-wide products, the work left if the heads
// were folded into it). A FairVGNN epoch includes its clamping and
// evaluation; building the phases' graphs is not timed.
//
//	go test -run - -bench FairVGNNEpochBailShaped -benchtime 3x ./layers/fairtrain
func BenchmarkFairVGNNEpochBailShaped(b *testing.B) {
	ds, setup := vgnnBenchSetup(b, 18876, 18, 33)
	b.Run("plain", func(b *testing.B) { benchPlainEpoch(b, setup) })
	bail := DefaultFairVGNNConfig()
	bail.ClassifierSteps, bail.GeneratorSteps = 10, 10
	narrow := DefaultFairVGNNConfig()
	narrow.Hidden = 2
	for _, v := range []struct {
		name string
		cfg  FairVGNNConfig
	}{{"fairvgnn-defaults", DefaultFairVGNNConfig()}, {"fairvgnn-bail-script", bail}, {"fairvgnn-hidden-2", narrow}} {
		b.Run(v.name, func(b *testing.B) { benchVGNNEpoch(b, ds, setup, v.cfg, false) })
	}
}

// BenchmarkFairVGNNEpochShapes times one epoch of plain training and of
// FairVGNN at its defaults on the shapes of NBA, Bail, Credit and the
// baselines command's generated graph (vgnnShapes), the GCN backbone at
// its defaults; fairvgnn-unfolded is FairVGNN with every view reading the
// masked features (the first propagation in every pass, see
// fairvgnn_fold.go); fairvgnn-reference-encoder is FairVGNN at its
// defaults on the reference code's GCN encoder (one convolution to the
// 16-wide representation, no dropout) instead of the library's two-layer
// GCN (64 hidden, dropout 0.5): the same 150 passes, each of one folded
// layer (no sparse product).
//
//	go test -run - -bench FairVGNNEpochShapes -benchtime 3x ./layers/fairtrain
func BenchmarkFairVGNNEpochShapes(b *testing.B) {
	for _, sh := range vgnnShapes {
		ds, setup := vgnnBenchSetup(b, sh.n, sh.d, sh.degree)
		b.Run(sh.name+"/plain", func(b *testing.B) { benchPlainEpoch(b, setup) })
		b.Run(sh.name+"/fairvgnn", func(b *testing.B) { benchVGNNEpoch(b, ds, setup, DefaultFairVGNNConfig(), false) })
		b.Run(sh.name+"/fairvgnn-unfolded", func(b *testing.B) { benchVGNNEpoch(b, ds, setup, DefaultFairVGNNConfig(), true) })
		b.Run(sh.name+"/fairvgnn-reference-encoder", func(b *testing.B) {
			benchVGNNEpochBody(b, ds, setup, DefaultFairVGNNConfig(), false, referenceBody)
		})
	}
}
