package modelio_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fairmp/fairmp/fmp/modelio"
	"github.com/fairmp/fairmp/graph"
	"github.com/fairmp/fairmp/internal/blas"
	"github.com/fairmp/fairmp/internal/problem"
	"github.com/fairmp/fairmp/internal/testutil"
	"github.com/fairmp/fairmp/layers"
	"github.com/fairmp/fairmp/layers/train"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// union returns the disjoint union of a and b: a's nodes first, in
// a's order, then b's, with b's edges shifted past a's nodes.
func union(t *testing.T, a, b *problem.Problem) *problem.Problem {
	t.Helper()
	es := a.Graph.Edges()
	for _, e := range b.Graph.Edges() {
		es = append(es, [2]int{e[0] + a.N, e[1] + a.N})
	}
	gr, err := graph.FromEdges(a.N+b.N, es)
	require.NoError(t, err)
	u := &problem.Problem{N: a.N + b.N, D: a.D, C: a.C, Graph: gr}
	u.X = append(append([]float64(nil), a.X...), b.X...)
	u.Labels = append(append([]int(nil), a.Labels...), b.Labels...)
	u.Train, u.Val, u.Test = a.Train, a.Val, a.Test
	return u
}

// TestLoadOntoAnyGraph: a model saved on graph A loads onto another
// graph with the same features (modelio's "any graph"), and predicts
// each of its nodes. Onto A ∪ B (B another component, A's nodes first),
// a model whose prediction of a node depends only on its neighbourhood
// (every kind but fmp, whose group means span the graph) gives A's
// nodes exactly the probabilities it gives them on A alone: the
// hand-checkable case of "the graph is given when the model is
// applied" (bit for bit on fairmp's BLAS; to rounding on OpenBLAS, whose
// products of a taller matrix may sum in another order). With
// Env.SameGraph the other graph is refused.
func TestLoadOntoAnyGraph(t *testing.T) {
	a := problem.New(t, 31, 40, 5, 2, 90, 0.7)
	b := problem.New(t, 32, 25, 5, 2, 50, 0.7)
	u := union(t, a, b)
	for kind, build := range roundTripModels {
		for _, dt := range testutil.Dtypes {
			task := newTask(t, a, dt, layers.NewPhase())
			m, err := build(task.Graph, a, dt, task.Phase)
			require.NoError(t, err)
			_, err = train.Fit(context.Background(), m, task, fastTrain(5))
			require.NoError(t, err)
			onA, err := train.Predict(m, task, nil)
			require.NoError(t, err)
			var buf bytes.Buffer
			require.NoError(t, modelio.Save(&buf, m, modelio.DefaultSaveConfig()), kind)

			taskU := newTask(t, u, dt, layers.NewPhase())
			env := modelio.Env{Graph: u.Graph, Phase: taskU.Phase, Sens: alternating(u.N)}
			mu, err := modelio.Load(bytes.NewReader(buf.Bytes()), taskU.Graph, env)
			require.NoError(t, err, "%s %v onto another graph", kind, dt)
			onU, err := train.Predict(mu, taskU, nil)
			require.NoError(t, err)
			require.Len(t, onU.Probs, u.N*u.C, "%s %v: a probability for every node of the other graph", kind, dt)
			if kind != "fmp" {
				if strings.HasPrefix(blas.Name(), "fastblas") {
					assert.Equal(t, onA.Probs, onU.Probs[:a.N*a.C], "%s %v: A's nodes in A ∪ B", kind, dt)
				} else {
					// OpenBLAS may block a taller product's rows otherwise,
					// and so sum in another order: equal to rounding.
					atol, rtol := testutil.Tol(dt)
					testutil.AllClose(t, fmt.Sprintf("%s %v: A's nodes in A ∪ B on %s", kind, dt, blas.Name()), onU.Probs[:a.N*a.C], onA.Probs, atol, rtol)
				}
			}

			h, err := modelio.ReadHeader(bytes.NewReader(buf.Bytes()))
			require.NoError(t, err)
			if h.Graph != nil {
				assert.True(t, h.Graph.Describes(a.Graph), "%s: the saved graph", kind)
				assert.False(t, h.Graph.Describes(u.Graph), "%s: A ∪ B", kind)
			}
			env.SameGraph = true
			_, err = modelio.Load(bytes.NewReader(buf.Bytes()), G.NewGraph(), env)
			if kind == "mlp" {
				assert.NoError(t, err, "an MLP records no graph")
			} else {
				assert.ErrorIs(t, err, modelio.ErrMismatch, kind)
				assert.ErrorContains(t, err, "Env.SameGraph", kind)
			}
		}
	}
}

// TestLoadSensOnSavedGraph: without Env.SameGraph, an fmp model loaded
// onto the graph it was saved for still refuses another sensitive
// attribute (the same nodes in other groups is a wrong column, not a
// new graph), and onto another graph takes that graph's attribute.
func TestLoadSensOnSavedGraph(t *testing.T) {
	a := problem.New(t, 33, 30, 4, 2, 60, 0.6)
	b := problem.New(t, 34, 10, 4, 2, 20, 0.6)
	u := union(t, a, b)
	task := newTask(t, a, tensor.Float64, layers.NewPhase())
	m, err := roundTripModels["fmp"](task.Graph, a, tensor.Float64, task.Phase)
	require.NoError(t, err)
	var buf bytes.Buffer
	require.NoError(t, saveUntrained(&buf, m))
	flipped := alternating(a.N)
	flipped[3] = 1 - flipped[3]
	_, err = modelio.Load(bytes.NewReader(buf.Bytes()), G.NewGraph(), modelio.Env{Graph: a.Graph, Sens: flipped})
	assert.ErrorIs(t, err, modelio.ErrMismatch)
	assert.ErrorContains(t, err, "another sensitive attribute")
	sensU := alternating(u.N)
	sensU[3] = 1 - sensU[3]
	_, err = modelio.Load(bytes.NewReader(buf.Bytes()), G.NewGraph(), modelio.Env{Graph: u.Graph, Sens: sensU})
	assert.NoError(t, err, "another graph brings its own attribute")
}

// TestLoadNeedsNoOtherImport: a program that imports modelio and no
// package of fmp's loads an fmp model file (testdata/loadonly), onto a
// graph of its own (a ring of 6 nodes).
func TestLoadNeedsNoOtherImport(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs a program (-short)")
	}
	p := problem.New(t, 35, 20, 3, 2, 40, 0.6)
	task := newTask(t, p, tensor.Float64, layers.NewPhase())
	m, err := roundTripModels["fmp"](task.Graph, p, tensor.Float64, task.Phase)
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "model.fmp")
	var buf bytes.Buffer
	require.NoError(t, saveUntrained(&buf, m))
	require.NoError(t, os.WriteFile(path, buf.Bytes(), 0o644))
	out, err := exec.Command("go", "run", "./testdata/loadonly", path, "0", "1", "0", "1", "1", "0").CombinedOutput()
	require.NoError(t, err, "%s", out)
	assert.Equal(t, "fmp\n", string(out))
}

// TestSameGraphRefusesAFileWithoutGraph is issue 53's C2: with
// Env.SameGraph, a graph model's file whose header records no graph (an
// older or edited file: here the "graph" key removed and the file
// resealed) passed silently on 8baef3f; it is refused, naming what is
// missing, while without SameGraph it loads (the fingerprint is
// information). An MLP records no graph and is built on none: SameGraph
// accepts it on any graph, as TestLoadOntoAnyGraph expects.
func TestSameGraphRefusesAFileWithoutGraph(t *testing.T) {
	p := problem.New(t, 35, 30, 4, 2, 60, 0.6)
	for kind, build := range roundTripModels {
		task := newTask(t, p, tensor.Float64, layers.NewPhase())
		m, err := build(task.Graph, p, tensor.Float64, task.Phase)
		require.NoError(t, err)
		var buf bytes.Buffer
		require.NoError(t, saveUntrained(&buf, m), kind)
		data := withHeader(t, buf.Bytes(), func(h map[string]any) { delete(h, "graph") })
		env := modelio.Env{Graph: p.Graph, Phase: layers.NewPhase(), Sens: alternating(p.N)}
		_, err = modelio.Load(bytes.NewReader(data), G.NewGraph(), env)
		require.NoError(t, err, "%s: without SameGraph", kind)
		env.SameGraph = true
		g := G.NewGraph()
		_, err = modelio.Load(bytes.NewReader(data), g, env)
		if kind == "mlp" {
			assert.NoError(t, err, "an MLP is built on no graph")
			continue
		}
		assert.ErrorIs(t, err, modelio.ErrMismatch, kind)
		assert.ErrorContains(t, err, "the file records no graph", kind)
		assert.ErrorContains(t, err, "(Env.SameGraph asks for the saved graph)", kind)
		assert.Empty(t, g.AllNodes(), "%s: nothing added to the caller's graph", kind)
	}
}
