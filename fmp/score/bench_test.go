package score_test

import (
	"bytes"
	"context"
	"fmt"
	"runtime"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	G "gorgonia.org/gorgonia"

	"github.com/fairmp/fairmp/fmp"
	"github.com/fairmp/fairmp/fmp/modelio"
	"github.com/fairmp/fairmp/fmp/score"
	"github.com/fairmp/fairmp/graph"
	"github.com/fairmp/fairmp/graph/datasets"
	"github.com/fairmp/fairmp/graph/features"
	"github.com/fairmp/fairmp/layers"
)

var (
	benchOnce  sync.Once
	benchGrown *graph.Graph
	benchX     *features.Dense
	benchSens  []int
	benchFile  []byte
	benchN     int
	benchErr   error
)

// benchSetup generates (once) a graph of Pokec-z's shape (67,796 nodes,
// 276 features), puts GCN → FMP (K 10) with fitted duals on it, saves
// it, and grows the graph by 1,000 nodes of 10 edges each.
func benchSetup(b *testing.B) {
	b.Helper()
	benchOnce.Do(func() {
		var d *datasets.Dataset
		if d, benchErr = datasets.Synthetic(datasets.PokecZShape(1)); benchErr != nil {
			return
		}
		benchN = d.N()
		gcn, err := layers.NewGCN(G.NewGraph(), d.Graph, layers.DefaultGCNConfig(d.NumFeatures, 2), nil)
		if err != nil {
			benchErr = err
			return
		}
		m, err := fmp.On(gcn, d.Graph, d.Sens, fmp.DefaultOnConfig(), nil)
		if err != nil {
			benchErr = err
			return
		}
		x0, err := features.NewDense(d.Features, d.N(), d.NumFeatures)
		if err != nil {
			benchErr = err
			return
		}
		if benchErr = m.Record(x0); benchErr != nil {
			return
		}
		var buf bytes.Buffer
		if benchErr = modelioSave(&buf, m); benchErr != nil {
			return
		}
		benchFile = buf.Bytes()
		const extra = 1000
		var edges [][2]int
		x := append([]float64(nil), d.Features...)
		benchSens = append([]int(nil), d.Sens...)
		for k := 0; k < extra; k++ {
			src := (7919 * k) % d.N()
			x = append(x, d.Features[src*d.NumFeatures:(src+1)*d.NumFeatures]...)
			benchSens = append(benchSens, d.Sens[src])
			for e := 0; e < 10; e++ {
				edges = append(edges, [2]int{d.N() + k, (src + 104729*e) % d.N()})
			}
		}
		if benchGrown, benchErr = d.Graph.Grow(extra, edges); benchErr != nil {
			return
		}
		benchX, benchErr = features.NewDense(x, benchGrown.N(), d.NumFeatures)
	})
	if benchErr != nil {
		b.Fatal(benchErr)
	}
}

// BenchmarkScore scores 1 and 1,000 new nodes of the grown Pokec-z-shaped
// graph with GCN → FMP, under the fitted semantics (the receptive field:
// 2 + 10 hops) and recomputing FMP over the whole graph; the field's size
// is reported as field-nodes.
func BenchmarkScore(b *testing.B) {
	benchSetup(b)
	for _, sem := range []score.Semantics{score.Fitted, score.Recompute} {
		for _, k := range []int{1, 1000} {
			b.Run(fmt.Sprintf("%s/new=%d", sem, k), func(b *testing.B) {
				cfg := score.DefaultConfig()
				cfg.FMP = sem
				s, err := score.Open(bytes.NewReader(benchFile), cfg)
				require.NoError(b, err)
				nodes := make([]int, k)
				for i := range nodes {
					nodes[i] = benchN + i
				}
				var field int
				b.ResetTimer()
				for range b.N {
					out, err := s.Score(context.Background(), benchGrown, benchX, benchSens, nodes)
					if err != nil {
						b.Fatal(err)
					}
					field = out.Field
				}
				b.ReportMetric(float64(field), "field-nodes")
			})
		}
	}
}

// BenchmarkScoreGCN is BenchmarkScore for the GCN alone (2 hops): the
// receptive field of a backbone without FMP's K steps.
func BenchmarkScoreGCN(b *testing.B) {
	benchSetup(b)
	f, err := modelioRead(benchFile)
	require.NoError(b, err)
	var buf bytes.Buffer
	require.NoError(b, modelioSave(&buf, f))
	s, err := score.Open(bytes.NewReader(buf.Bytes()), score.DefaultConfig())
	require.NoError(b, err)
	for _, k := range []int{1, 1000} {
		b.Run(fmt.Sprintf("new=%d", k), func(b *testing.B) {
			nodes := make([]int, k)
			for i := range nodes {
				nodes[i] = benchN + i
			}
			var field int
			for range b.N {
				out, err := s.Score(context.Background(), benchGrown, benchX, benchSens, nodes)
				if err != nil {
					b.Fatal(err)
				}
				field = out.Field
			}
			b.ReportMetric(float64(field), "field-nodes")
		})
	}
}

func modelioSave(w *bytes.Buffer, m layers.Model) error {
	return modelio.Save(w, m, modelio.SaveConfig{Untrained: true})
}

// modelioRead returns the backbone of the fmp model file b.
func modelioRead(b []byte) (layers.Model, error) {
	f, err := modelio.Read(bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	one, err := graph.FromEdges(1, nil)
	if err != nil {
		return nil, err
	}
	return f.Backbone(G.NewGraph(), one, nil)
}

// BenchmarkFrozenAdd adds 1 and 1,000 new nodes to the Pokec-z-shaped
// graph frozen once (score.Frozen): the backbone on their 2-hop ball,
// FMP's K steps on their own rows. Each iteration adds to a fresh copy
// of the frozen base (the copy's cost is not timed).
func BenchmarkFrozenAdd(b *testing.B) {
	benchSetup(b)
	s, err := score.Open(bytes.NewReader(benchFile), score.DefaultConfig())
	require.NoError(b, err)
	for _, k := range []int{1, 1000} {
		b.Run(fmt.Sprintf("new=%d", k), func(b *testing.B) {
			// The base graph: the grown graph's first benchN nodes.
			var edges [][2]int
			for i := 0; i < benchN; i++ {
				for _, j := range benchGrown.Neighbors(i) {
					if int(j) > i && int(j) < benchN {
						edges = append(edges, [2]int{i, int(j)})
					}
				}
			}
			base, err := graph.FromEdges(benchN, edges)
			require.NoError(b, err)
			var extra [][2]int
			for i := benchN; i < benchN+k; i++ {
				for _, j := range benchGrown.Neighbors(i) {
					if int(j) < benchN+k && (int(j) < benchN || int(j) > i) {
						extra = append(extra, [2]int{i, int(j)})
					}
				}
			}
			grown, err := base.Grow(k, extra)
			require.NoError(b, err)
			d := benchX.Cols()
			xs := make([]float64, (benchN+k)*d)
			require.NoError(b, features.Gather(benchX, seq(benchN+k), xs))
			x, err := features.NewDense(xs, benchN+k, d)
			require.NoError(b, err)
			x0, err := features.NewDense(xs[:benchN*d], benchN, d)
			require.NoError(b, err)
			var field int
			for range b.N {
				b.StopTimer()
				fz, err := s.Freeze(context.Background(), base, x0, benchSens[:benchN])
				require.NoError(b, err)
				runtime.GC() // Freeze's garbage is not Add's
				b.StartTimer()
				if field, err = fz.Add(context.Background(), grown, x, benchSens[:benchN+k]); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(field), "field-nodes")
		})
	}
}

func seq(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}
