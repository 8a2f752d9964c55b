package train

import (
	"context"
	"fmt"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/fairmp/fairmp/layers"
	"github.com/stretchr/testify/require"

	"github.com/fairmp/fairmp/graph"
	"github.com/fairmp/fairmp/graph/datasets"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// TestNBABaselines trains every baseline on NBA (real data from
// $FAIRMP_DATA, the reference split) with the protocol of the fairness
// papers: Adam lr 1e-3, weight decay 1e-5, 300 epochs, hidden 64 (GAT 4
// heads × 16), 5 seeds, the epoch selected by validation accuracy (NBA's
// validation list is its test list). It checks that each model's mean test
// accuracy is no more than 3 points below an independent PyTorch
// implementation's (MLP 74.9, GCN 73.7, SGC K=2 62.5, APPNP K=10 α=0.1
// 69.2, GAT 72.4). Being above the reference is not checked (GAT lands
// about 4 points above it); the table is logged. Features are the
// loader's (min-max scaled to [−1, 1], no sensitive column).
func TestNBABaselines(t *testing.T) {
	dir := os.Getenv("FAIRMP_DATA")
	if dir == "" {
		t.Skip("FAIRMP_DATA is not set: set it to the folder holding nba/ to run the NBA baselines")
	}
	if testing.Short() {
		t.Skip("NBA baselines take about a minute; skipped with -short")
	}
	ds, err := datasets.Load(dir, "nba", datasets.DefaultOptions())
	require.NoError(t, err)
	n, d := ds.N(), ds.NumFeatures
	x := ds.Features
	gr := ds.Graph
	type build func(g *G.ExprGraph, seed int64, gr *graph.Graph, ph *layers.Phase) (layers.Model, error)
	models := []struct {
		name string
		ref  float64 // NaN: no reference
		b    build
	}{
		{"MLP", 74.9, func(g *G.ExprGraph, s int64, gr *graph.Graph, ph *layers.Phase) (layers.Model, error) {
			c := layers.DefaultMLPConfig(d, 2)
			c.Seed = s
			return layers.NewMLP(g, nil, c, ph)
		}},
		{"GCN", 73.7, func(g *G.ExprGraph, s int64, gr *graph.Graph, ph *layers.Phase) (layers.Model, error) {
			c := layers.DefaultGCNConfig(d, 2)
			c.Seed = s
			return layers.NewGCN(g, gr, c, ph)
		}},
		{"SGC K=2", 62.5, func(g *G.ExprGraph, s int64, gr *graph.Graph, ph *layers.Phase) (layers.Model, error) {
			c := layers.DefaultSGCConfig(d, 2)
			c.Seed, c.K = s, 2
			return layers.NewSGC(g, gr, c, nil)
		}},
		{"APPNP K=10", 69.2, func(g *G.ExprGraph, s int64, gr *graph.Graph, ph *layers.Phase) (layers.Model, error) {
			c := layers.DefaultAPPNPConfig(d, 2)
			c.Seed = s
			return layers.NewAPPNP(g, gr, c, ph)
		}},
		{"GAT 4x16", 72.4, func(g *G.ExprGraph, s int64, gr *graph.Graph, ph *layers.Phase) (layers.Model, error) {
			c := layers.DefaultGATConfig(d, 2)
			c.Seed = s
			return layers.NewGAT(g, gr, c, ph)
		}},
		{"JKNet cat", math.NaN(), func(g *G.ExprGraph, s int64, gr *graph.Graph, ph *layers.Phase) (layers.Model, error) {
			c := layers.DefaultJKNetConfig(d, 2)
			c.Seed = s
			return layers.NewJKNet(g, gr, c, ph)
		}},
	}
	var table strings.Builder
	fmt.Fprintf(&table, "NBA test accuracy %%, 5 seeds, best-validation epoch (n=%d, d=%d, %d edges, train %d, test %d)\n",
		n, d, gr.NumEdges(), len(ds.Split.Train), len(ds.Split.Test))
	for _, m := range models {
		var accs []float64
		for seed := int64(1); seed <= 5; seed++ {
			g := G.NewGraph()
			xn, err := FeatureNode(g, tensor.Float64, x, n, d, "x")
			require.NoError(t, err)
			task := &Task{Graph: g, X: xn, Labels: ds.Labels, Train: ds.Split.Train, Val: ds.Split.Val, Classes: 2, Phase: layers.NewPhase()}
			model, err := m.b(g, seed, gr, task.Phase)
			require.NoError(t, err)
			if _, err := Fit(context.Background(), model, task, DefaultConfig()); err != nil {
				t.Fatal(err)
			}
			p, err := Predict(model, task, ds.Split.Test)
			require.NoError(t, err)
			accs = append(accs, 100*p.Accuracy(ds.Labels))
		}
		mu, sd := meanStd(accs)
		fmt.Fprintf(&table, "  %-11s %5.1f ± %.1f   (reference %v)  %.1f\n", m.name, mu, sd, m.ref, accs)
		if !math.IsNaN(m.ref) && mu < m.ref-3 {
			t.Errorf("%s: mean test accuracy %.1f %%, more than 3 points below the reference %.1f %%", m.name, mu, m.ref)
		}
	}
	t.Log("\n" + table.String())
}

// meanStd returns the mean and the population standard deviation.
func meanStd(v []float64) (float64, float64) {
	mu := 0.0
	for _, a := range v {
		mu += a
	}
	mu /= float64(len(v))
	s := 0.0
	for _, a := range v {
		s += (a - mu) * (a - mu)
	}
	return mu, math.Sqrt(s / float64(len(v)))
}
