package fmpbeam

import (
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fairmp/fairmp/graph"
	"github.com/fairmp/fairmp/internal/testutil"
)

// TestMatrixAndPropagate: the matrix built from the edge files is
// graph.GCNNorm's, entry for entry and bit for bit, for every
// normalisation; its product with the features equals MulDense64's up
// to summation order; and the edge statistics count what the files hold.
func TestMatrixAndPropagate(t *testing.T) {
	ds := smallData(t)
	dir, _ := writeSmall(t, ds)
	lay := Layout{Size: 64}
	norms := []Norm{{true, 1, true}, {true, 2, true}, {false, 1, true}, {true, 1, false}}
	p, s := beam.NewPipelineWithRoot()
	nodes := ReadNodes(s, lay, dir+"/nodes-*.txt")
	st := NodeStats(s, lay, nodes)
	edges := ReadEdges(s, lay, dir+"/edges-*.txt")
	rows := ReadRows(s, lay, dir+"/features-*.txt", "features", nodes)
	for k, nm := range norms {
		adj, est := BuildMatrix(s, lay, nm, nodes, edges, st)
		beam.ParDo0(s, &collectAdjFn{Key: "adj" + nm.Name()}, adj)
		if k == 0 {
			beam.ParDo0(s, &collectStatsFn{Key: "stats"}, est)
		}
		beam.ParDo0(s, &collectRowsFn{Key: "ax" + nm.Name()}, Propagate(s, lay, "test", adj, rows))
	}
	run(t, p)
	es := take("stats")[0].(Stats)
	assert.Equal(t, int64(ds.Graph.NumEdges()), es.Edges)
	assert.Equal(t, int64(ds.Graph.Isolated()), es.Isolated)

	for _, nm := range norms {
		want, err := graph.GCNNorm(ds.Graph, graph.NormOptions{AddSelfLoops: nm.Loops, SelfLoopWeight: nm.Weight, Normalize: nm.Normalize})
		require.NoError(t, err)
		entries := 0
		for _, a := range adjOf(t, "adj"+nm.Name()) {
			for r, i := range a.Row {
				for q := a.Ptr[r]; q < a.Ptr[r+1]; q++ {
					v, ok := want.At(int(i), int(a.Lo)+int(a.Col[q]))
					require.True(t, ok, "%s: (%d, %d) is not an entry", nm.Name(), i, a.Lo+int64(a.Col[q]))
					assert.Equal(t, v, a.Val[q], "%s: (%d, %d)", nm.Name(), i, a.Lo+int64(a.Col[q]))
					entries++
				}
			}
		}
		assert.Equal(t, want.NNZ(), entries, nm.Name())
		got, c := rowsOf(t, "ax"+nm.Name(), ds.N())
		require.Equal(t, ds.NumFeatures, c)
		ref := make([]float64, len(ds.Features))
		want.MulDense64(ref, ds.Features, c)
		testutil.AllClose(t, nm.Name(), got, ref, 1e-13, 1e-12)
	}
}
