package train

import (
	"context"
	"runtime"
	"testing"

	"github.com/fairmp/fairmp/internal/problem"
	"github.com/fairmp/fairmp/layers"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// heapAfterGC returns the live heap after two collections (the first runs
// finalizers, the second frees what they released).
func heapAfterGC() uint64 {
	var ms runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// TestRepeatedTrainingDoesNotLeak trains a GCN many times in one process,
// closing nothing by hand, and bounds the growth of the live heap: a
// trainer's gorgonia graph, machines, activations and gradients must be
// collectable once the caller drops the model and the task. (A tape
// machine carries a finalizer, so a reference cycle through it, as a
// Read node pointing into the trainer that points to the machine, is never
// collected.)
func TestRepeatedTrainingDoesNotLeak(t *testing.T) {
	p := problem.New(t, 41, 1500, 16, 2, 6000, 0.7)
	run := func() {
		g := G.NewGraph()
		x, err := FeatureNode(g, tensor.Float64, p.X, p.N, p.D, "x")
		require.NoError(t, err)
		phase := layers.NewPhase()
		task := &Task{Graph: g, X: x, Labels: p.Labels, Train: p.Train, Val: p.Val, Classes: p.C, Phase: phase}
		c := layers.DefaultGCNConfig(p.D, p.C)
		c.Hidden = 32
		m, err := layers.NewGCN(g, p.Graph, c, phase)
		require.NoError(t, err)
		_, err = Fit(context.Background(), m, task, fastTrain(5))
		require.NoError(t, err)
		_, err = Predict(m, task, nil)
		require.NoError(t, err)
		// A trainer nobody closes must not leak either.
		tr, err := NewTrainer(m, task, fastTrain(1))
		require.NoError(t, err)
		_, err = tr.Epoch()
		require.NoError(t, err)
	}
	run()
	base := heapAfterGC()
	const runs = 12
	for i := 0; i < runs; i++ {
		run()
	}
	grown := float64(heapAfterGC()) - float64(base)
	perRun := grown / runs
	t.Logf("live heap %.1f MB after one run, %+.3f MB per run over %d more", float64(base)/1e6, perRun/1e6, runs)
	// One run's graph holds the 1500 × 32 activations, gradients, Adam
	// moments and the normalised adjacency: well over 1 MB. Allow 5% of that.
	assert.Less(t, perRun, 50e3, "live heap grows by %.0f B per training run", perRun)
}

// TestTrainerClosed: a closed Trainer refuses to run, and closing twice is
// harmless.
func TestTrainerClosed(t *testing.T) {
	p := problem.New(t, 42, 60, 4, 2, 100, 0.7)
	task := newTask(t, p, tensor.Float64, layers.NewPhase())
	m, err := layers.NewMLP(task.Graph, nil, layers.DefaultMLPConfig(p.D, p.C), task.Phase)
	require.NoError(t, err)
	tr, err := NewTrainer(m, task, fastTrain(1))
	require.NoError(t, err)
	_, err = tr.Epoch()
	require.NoError(t, err)
	tr.Close()
	tr.Close()
	_, err = tr.Step()
	assert.ErrorIs(t, err, ErrClosed)
	var st EpochStats
	assert.ErrorIs(t, tr.Evaluate(&st), ErrClosed)
}

// TestPhaseMismatch: a model built with one Phase and a task holding
// another (or none) is an error naming both, from Fit and Predict.
func TestPhaseMismatch(t *testing.T) {
	p := problem.New(t, 43, 60, 4, 2, 100, 0.7)
	task := newTask(t, p, tensor.Float64, layers.NewPhase())
	c := layers.DefaultGCNConfig(p.D, p.C)
	m, err := layers.NewGCN(task.Graph, p.Graph, c, layers.NewPhase())
	require.NoError(t, err)
	_, err = Fit(context.Background(), m, task, fastTrain(1))
	assert.ErrorIs(t, err, ErrPhaseMismatch)
	assert.ErrorContains(t, err, "*layers.GCN was built with another *layers.Phase than Task.Phase: build the model with the task's Phase (after modelio.Load: load it with Env.Phase set to the task's Phase)")
	assert.NotContains(t, err.Error(), "0x", "no pointers in the message")
	_, err = Predict(m, task, nil)
	assert.ErrorIs(t, err, ErrPhaseMismatch)
	task.Phase = nil
	_, err = Fit(context.Background(), m, task, fastTrain(1))
	assert.ErrorContains(t, err, "Task.Phase is nil: set Task.Phase to the model's phase")
	// A model loaded without Env.Phase, evaluated with a task's Phase.
	noPhase, err := layers.NewGCN(task.Graph, p.Graph, func() layers.GCNConfig { c := c; c.Name = "other"; return c }(), nil)
	require.NoError(t, err)
	task.Phase = layers.NewPhase()
	_, err = Predict(noPhase, task, nil)
	assert.ErrorContains(t, err, "built without a *layers.Phase (always evaluation) and Task.Phase is set: build the model with the task's Phase (after modelio.Load: set Env.Phase)")
	// A task of 3 classes for a model of 2.
	task.Phase, task.Classes = m.Phase(), 3
	_, err = Predict(m, task, nil)
	assert.ErrorContains(t, err, "the *layers.GCN outputs 2 classes and Task.Classes is 3")
	task.Classes = p.C
	// The model's own phase: no error.
	task.Phase = m.Phase()
	_, err = Fit(context.Background(), m, task, fastTrain(1))
	assert.NoError(t, err)
}
