package train_test

import (
	"fmt"
	"runtime"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/fairmp/fairmp/fmp"
	"github.com/fairmp/fairmp/graph/datasets"
	"github.com/fairmp/fairmp/layers"
	"github.com/fairmp/fairmp/layers/train"
)

// served builds, on a generated graph of n nodes, an FMP model on a GCN
// (the deepest evaluation program the library has) and its task.
func served(t testing.TB, n int) (*fmp.Model, *train.Task, *datasets.Dataset) {
	t.Helper()
	sc := datasets.DefaultSyntheticConfig()
	sc.N = n
	ds, err := datasets.Synthetic(sc)
	require.NoError(t, err)
	g := G.NewGraph()
	x, err := train.FeatureNode(g, tensor.Float64, ds.Features, ds.N(), ds.NumFeatures, "x")
	require.NoError(t, err)
	phase := layers.NewPhase()
	cfg := layers.DefaultGCNConfig(ds.NumFeatures, 2)
	cfg.Hidden = 16
	gcn, err := layers.NewGCN(g, ds.Graph, cfg, phase)
	require.NoError(t, err)
	m, err := fmp.On(gcn, ds.Graph, ds.Sens, fmp.DefaultOnConfig(), phase)
	require.NoError(t, err)
	return m, &train.Task{Graph: g, X: x, Labels: ds.Labels, Train: ds.Split.Train, Val: ds.Split.Val, Classes: 2, Phase: phase}, ds
}

// TestPredictConcurrent: Predict from many goroutines on one model gives
// every caller the sequential answer. On df69dad four goroutines crashed
// the process (concurrent map writes inside gorgonia) in 5 of 5 runs.
// .ci/run runs it with -race.
func TestPredictConcurrent(t *testing.T) {
	m, task, ds := served(t, 300)
	want, err := train.Predict(m, task, nil)
	require.NoError(t, err)
	test, err := train.Predict(m, task, ds.Split.Test)
	require.NoError(t, err)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for k := 0; k < 20; k++ {
				idx, ref := []int(nil), want
				if (w+k)%2 == 1 {
					idx, ref = ds.Split.Test, test
				}
				p, err := train.Predict(m, task, idx)
				if err != nil {
					errs <- err
					return
				}
				if fmt.Sprint(p.Probs) != fmt.Sprint(ref.Probs) {
					errs <- fmt.Errorf("goroutine %d, call %d: the probabilities differ from the sequential ones", w, k)
					return
				}
			}
		}(w)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// TestPredictHeapFlat: repeated calls add nothing to the graph and the
// heap stays flat. On df69dad each call added a node (about 33 KB a call:
// 2,000 calls on 2,000 nodes grew the heap from 13.1 to 80.1 MiB).
func TestPredictHeapFlat(t *testing.T) {
	if testing.Short() {
		t.Skip("10,000 predictions; skipped with -short")
	}
	m, task, _ := served(t, 200)
	_, err := train.Predict(m, task, nil)
	require.NoError(t, err)
	nodes := len(task.Graph.AllNodes())
	heap := func() uint64 {
		runtime.GC()
		var s runtime.MemStats
		runtime.ReadMemStats(&s)
		return s.HeapAlloc
	}
	for k := 0; k < 1000; k++ {
		_, err := train.Predict(m, task, nil)
		require.NoError(t, err)
	}
	after1k := heap()
	for k := 0; k < 9000; k++ {
		_, err := train.Predict(m, task, nil)
		require.NoError(t, err)
	}
	after10k := heap()
	assert.Equal(t, nodes, len(task.Graph.AllNodes()), "nodes in the graph after 10,000 calls")
	t.Logf("heap after 1,000 calls %d B, after 10,000 %d B", after1k, after10k)
	assert.Less(t, int64(after10k)-int64(after1k), int64(256<<10), "heap growth over 9,000 calls")
}

// BenchmarkPredict measures predictions of every node per second on the
// Bail shape (18,876 nodes, 18 features, mean degree 33; an FMP on a GCN
// of 64 hidden units, float32) from 1, 2 and 8 goroutines sharing one
// model (calls run one at a time), and from 8 goroutines with a model
// each (parallel, as many cores as the machine has):
//
//	go test -run - -bench Predict ./layers/train
func BenchmarkPredict(b *testing.B) {
	build := func() (layers.Model, *train.Task) {
		sc := datasets.DefaultSyntheticConfig()
		sc.N, sc.MeanDegree, sc.NumFeatures = 18876, 33, 18
		ds, err := datasets.Synthetic(sc)
		require.NoError(b, err)
		g := G.NewGraph()
		x, err := train.FeatureNode(g, tensor.Float32, ds.Features, ds.N(), ds.NumFeatures, "x")
		require.NoError(b, err)
		phase := layers.NewPhase()
		cfg := layers.DefaultGCNConfig(ds.NumFeatures, 2)
		cfg.Dtype = tensor.Float32
		gcn, err := layers.NewGCN(g, ds.Graph, cfg, phase)
		require.NoError(b, err)
		m, err := fmp.On(gcn, ds.Graph, ds.Sens, fmp.DefaultOnConfig(), phase)
		require.NoError(b, err)
		return m, &train.Task{Graph: g, X: x, Labels: ds.Labels, Classes: 2, Phase: phase}
	}
	run := func(b *testing.B, workers int, own bool) {
		models := make([]layers.Model, workers)
		tasks := make([]*train.Task, workers)
		for w := range models {
			if w == 0 || own {
				models[w], tasks[w] = build()
			} else {
				models[w], tasks[w] = models[0], tasks[0]
			}
			if _, err := train.Predict(models[w], tasks[w], nil); err != nil {
				b.Fatal(err)
			}
		}
		b.ResetTimer()
		var wg sync.WaitGroup
		for w := 0; w < workers; w++ {
			wg.Add(1)
			go func(w int) {
				defer wg.Done()
				for k := w; k < b.N; k += workers {
					if _, err := train.Predict(models[w], tasks[w], nil); err != nil {
						b.Error(err)
						return
					}
				}
			}(w)
		}
		wg.Wait()
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "predictions/s")
	}
	for _, w := range []int{1, 2, 8} {
		b.Run(fmt.Sprintf("shared-%d", w), func(b *testing.B) { run(b, w, false) })
	}
	b.Run("own-8", func(b *testing.B) { run(b, 8, true) })
}
