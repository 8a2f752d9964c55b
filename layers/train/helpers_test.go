package train

import (
	"testing"

	"github.com/fairmp/fairmp/layers"
	"github.com/stretchr/testify/require"

	"github.com/fairmp/fairmp/internal/problem"
	"github.com/fairmp/fairmp/internal/testutil"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// task builds a gorgonia graph with the problem's features in dtype dt.
func newTask(t testing.TB, p *problem.Problem, dt tensor.Dtype, phase *layers.Phase) *Task {
	t.Helper()
	g := G.NewGraph()
	x, err := FeatureNode(g, dt, p.X, p.N, p.D, "x")
	require.NoError(t, err)
	return &Task{Graph: g, X: x, Labels: p.Labels, Train: p.Train, Val: p.Val, Classes: p.C, Phase: phase}
}

// paramValues returns the learnables' values as float64 slices.
func paramValues(m layers.Model) [][]float64 {
	var out [][]float64
	for _, n := range m.Learnables() {
		out = append(out, testutil.ToF64(n.Value()))
	}
	return out
}

// modelLogits evaluates m's logits on task.X with the phase in evaluation
// mode, as float64.
func modelLogits(t testing.TB, m layers.Model, task *Task) []float64 {
	t.Helper()
	z, err := m.Forward(task.X)
	require.NoError(t, err)
	var zv G.Value
	vm := G.NewTapeMachine(task.Graph.SubgraphRoots(G.Read(z, &zv)))
	defer vm.Close()
	task.Phase.SetTraining(false)
	if err := vm.RunAll(); err != nil {
		t.Fatal(err)
	}
	return testutil.ToF64(zv)
}
