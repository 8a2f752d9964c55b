package train_test

import (
	"context"
	"runtime"
	"testing"

	"github.com/fairmp/fairmp/graph/datasets"
	"github.com/fairmp/fairmp/layers"
	"github.com/fairmp/fairmp/layers/fairtrain"
	"github.com/fairmp/fairmp/layers/train"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// TestAdversaryReleasesItsGraph: fair's adversary compiles a tape machine
// of its own that nobody closes; many adversarial trainings in one
// process must not keep their graphs on the heap.
func TestAdversaryReleasesItsGraph(t *testing.T) {
	c := datasets.DefaultSyntheticConfig()
	c.N, c.MeanDegree = 300, 6
	ds, err := datasets.Synthetic(c)
	require.NoError(t, err)
	run := func() {
		g := G.NewGraph()
		x, err := train.FeatureNode(g, tensor.Float64, ds.Features, ds.N(), ds.NumFeatures, "x")
		require.NoError(t, err)
		ph := layers.NewPhase()
		mc := layers.DefaultMLPConfig(ds.NumFeatures, ds.NumClasses())
		mc.Hidden = 16
		m, err := layers.NewMLP(g, nil, mc, ph)
		require.NoError(t, err)
		task := &train.Task{Graph: g, X: x, Labels: ds.Labels, Train: ds.Split.Train, Val: ds.Split.Val, Classes: ds.NumClasses(), Phase: ph}
		tc := train.DefaultConfig()
		tc.Epochs = 4
		ac := fairtrain.DefaultAdversaryConfig()
		ac.PretrainClassifier, ac.PretrainAdversary, ac.Steps = 1, 2, 1
		tc, err = ac.Apply(tc, task, ds.Sens)
		require.NoError(t, err)
		_, err = train.Fit(context.Background(), m, task, tc)
		require.NoError(t, err)
	}
	const warm, runs = 3, 20
	for r := 0; r < warm; r++ {
		run()
	}
	before := heap()
	for r := 0; r < runs; r++ {
		run()
	}
	perRun := (float64(heap()) - float64(before)) / runs
	t.Logf("%.1f KB per adversarial training run", perRun/1024)
	assert.Less(t, perRun, 64.0*1024, "heap grows by %.1f KB per adversarial training run", perRun/1024)
}

func heap() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}
