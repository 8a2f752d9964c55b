package fmpbeam

import (
	"context"
	"io"
	"log/slog"
	"os"
	"sort"
	"sync"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/runners/prism"
	"github.com/stretchr/testify/require"

	"github.com/fairmp/fairmp/graph/datasets"
	"github.com/fairmp/fairmp/graph/features"
)

func TestMain(m *testing.M) {
	beam.Init()
	// Prism logs every stage (beam.Init sets the logger up); the tests'
	// failures say what they need.
	slog.SetDefault(slog.New(slog.NewTextHandler(io.Discard, nil)))
	os.Exit(m.Run())
}

// The collectors hand a pipeline's elements to the test: Prism runs the
// worker in the test's process.
var (
	collectMu sync.Mutex
	collected = map[string][]any{}
)

func store(key string, v any) {
	collectMu.Lock()
	defer collectMu.Unlock()
	collected[key] = append(collected[key], v)
}

func take(key string) []any {
	collectMu.Lock()
	defer collectMu.Unlock()
	v := collected[key]
	delete(collected, key)
	return v
}

type collectRowsFn struct{ Key string }

func (f *collectRowsFn) ProcessElement(b int64, x Rows) { store(f.Key, x) }

type collectAdjFn struct{ Key string }

func (f *collectAdjFn) ProcessElement(b int64, x AdjBlock) { store(f.Key, x) }

type collectStatsFn struct{ Key string }

func (f *collectStatsFn) ProcessElement(x Stats) { store(f.Key, x) }

func init() {
	register.DoFn2x0[int64, Rows](&collectRowsFn{})
	register.DoFn2x0[int64, AdjBlock](&collectAdjFn{})
	register.DoFn1x0[Stats](&collectStatsFn{})
}

// rowsOf assembles collected blocks into one n × c matrix.
func rowsOf(t *testing.T, key string, n int) ([]float64, int) {
	t.Helper()
	got := take(key)
	require.NotEmpty(t, got, key)
	c := int(got[0].(Rows).C)
	out := make([]float64, n*c)
	seen := 0
	for _, v := range got {
		x := v.(Rows)
		require.Equal(t, c, int(x.C))
		copy(out[int(x.Lo)*c:], x.V)
		seen += int(x.N)
	}
	require.Equal(t, n, seen, "%s: rows", key)
	return out, c
}

func adjOf(t *testing.T, key string) []AdjBlock {
	t.Helper()
	var out []AdjBlock
	for _, v := range take(key) {
		out = append(out, v.(AdjBlock))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Lo < out[j].Lo })
	return out
}

func run(t *testing.T, p *beam.Pipeline) beam.PipelineResult {
	t.Helper()
	r, err := prism.Execute(context.Background(), p)
	require.NoError(t, err)
	return r
}

// smallData returns the tests' generated graph: 300 nodes, 16 features,
// two groups.
func smallData(t testing.TB) *datasets.Dataset {
	t.Helper()
	c := datasets.DefaultSyntheticConfig()
	c.N, c.Seed = 300, 7
	ds, err := datasets.Synthetic(c)
	require.NoError(t, err)
	return ds
}

// writeSmall writes the small data set's graph (3 shards), nodes (2) and
// features (4) into a new folder and returns it with the features.
func writeSmall(t *testing.T, ds *datasets.Dataset) (string, *features.Dense) {
	t.Helper()
	dir := t.TempDir()
	require.NoError(t, WriteGraph(dir, 3, ds.Graph))
	require.NoError(t, WriteNodes(dir, 2, ds.Labels, ds.Sens, ds.Split))
	x, err := features.NewDense(ds.Features, ds.N(), ds.NumFeatures)
	require.NoError(t, err)
	require.NoError(t, WriteFeatures(dir, 4, x))
	return dir, x
}
