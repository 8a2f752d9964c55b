package score_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	G "gorgonia.org/gorgonia"

	"github.com/fairmp/fairmp/fmp"
	"github.com/fairmp/fairmp/fmp/modelio"
	"github.com/fairmp/fairmp/fmp/score"
	"github.com/fairmp/fairmp/graph"
	"github.com/fairmp/fairmp/graph/datasets"
	"github.com/fairmp/fairmp/graph/features"
	"github.com/fairmp/fairmp/internal/testutil"
	"github.com/fairmp/fairmp/layers"
)

// frozenModel is fmpModel with λs set.
func frozenModel(t *testing.T, d *datasets.Dataset, lambdaS float64) *fmp.Model {
	t.Helper()
	gcn, err := layers.NewGCN(G.NewGraph(), d.Graph, layers.DefaultGCNConfig(d.NumFeatures, 2), nil)
	require.NoError(t, err)
	oc := fmp.DefaultOnConfig()
	oc.FMP.LambdaF, oc.FMP.K, oc.FMP.LambdaS = 8, 3, lambdaS
	m, err := fmp.On(gcn, d.Graph, d.Sens, oc, nil)
	require.NoError(t, err)
	x, err := features.NewDense(d.Features, d.N(), d.NumFeatures)
	require.NoError(t, err)
	require.NoError(t, m.Record(x))
	return m
}

// TestFrozen: Freeze gives the fitted scores of the base graph; Add
// leaves them as they were and scores the new nodes as a naive dense
// computation of the frozen steps does (and, with λs = 0, exactly as the
// fitted semantics over the grown graph).
func TestFrozen(t *testing.T) {
	d := small(t, 300, 4)
	x0, err := features.NewDense(d.Features, d.N(), d.NumFeatures)
	require.NoError(t, err)
	gg, x, sens := grow(t, d, 12)
	for _, ls := range []float64{0, 1} {
		m := frozenModel(t, d, ls)
		file := save(t, m)
		s, err := score.Open(bytes.NewReader(file), score.DefaultConfig())
		require.NoError(t, err)
		fz, err := s.Freeze(context.Background(), d.Graph, x0, d.Sens)
		require.NoError(t, err)
		old := make([]int, d.N())
		for i := range old {
			old[i] = i
		}
		base, err := fz.Score(old)
		require.NoError(t, err)
		fitted, err := s.Score(context.Background(), d.Graph, x0, d.Sens, old)
		require.NoError(t, err)
		testutil.AllClose(t, "Freeze is the fitted scores", base.Probs, fitted.Probs, 1e-13, 1e-12)

		field, err := fz.Add(context.Background(), gg, x, sens)
		require.NoError(t, err)
		assert.Less(t, field, gg.N(), "the backbone's receptive field of the new nodes")
		assert.Equal(t, gg.N(), fz.N())
		after, err := fz.Score(old)
		require.NoError(t, err)
		assert.Equal(t, base.Probs, after.Probs, "λs %v: old scores do not move", ls)

		fresh := make([]int, gg.N()-d.N())
		for k := range fresh {
			fresh[k] = d.N() + k
		}
		got, err := fz.Score(fresh)
		require.NoError(t, err)
		want := naiveFrozen(t, m, d, x0, gg, x, sens, fresh)
		testutil.AllClose(t, "the frozen steps against a naive dense computation", got.Probs, want, 1e-12, 1e-10)
		if ls == 0 {
			f, err := s.Score(context.Background(), gg, x, sens, fresh)
			require.NoError(t, err)
			testutil.AllClose(t, "λs 0: frozen is fitted", got.Probs, f.Probs, 1e-12, 1e-10)
		}
	}
}

// naiveFrozen computes the frozen semantics densely: the backbone over
// the whole grown graph, the base graph's FMP states from Recorded.Trace,
// then for the new nodes K steps F_i ← γz_i + (1−γ)Σ_j Ã_ij F_j −
// γ∇(F_i, u_k), with F_j the base state for an old j.
func naiveFrozen(t *testing.T, m *fmp.Model, d *datasets.Dataset, x0 *features.Dense, gg *graph.Graph, x *features.Dense, sens, fresh []int) []float64 {
	t.Helper()
	bm := m.Backbone().(layers.BlockModel)
	a0, err := layers.DefaultPropagation().Matrix(d.Graph)
	require.NoError(t, err)
	z0, err := layers.LayerwiseLogits(bm, a0, x0)
	require.NoError(t, err)
	fit := m.Recorded()
	states, _, err := fit.Trace(a0, d.Sens, z0)
	require.NoError(t, err)
	a, err := layers.DefaultPropagation().Matrix(gg)
	require.NoError(t, err)
	z, err := layers.LayerwiseLogits(bm, a, x)
	require.NoError(t, err)
	zs := testutil.ToF64(z)
	dense := a.Dense()
	n, n0, c := gg.N(), d.N(), 2
	steps, err := fmp.NewSteps(fit.Config, fit.Counts)
	require.NoError(t, err)
	cur := map[int][]float64{}
	for _, i := range fresh {
		cur[i] = append([]float64(nil), zs[i*c:(i+1)*c]...)
	}
	for k := 0; k < fit.Config.K; k++ {
		next := map[int][]float64{}
		for _, i := range fresh {
			af := make([]float64, c)
			for j := 0; j < n; j++ {
				if v := dense[i*n+j]; v != 0 {
					fj := cur[j]
					if j < n0 {
						fj = states[k][j*c : (j+1)*c]
					}
					for q := range af {
						af[q] += v * fj[q]
					}
				}
			}
			xagg := make([]float64, c)
			steps.Aggregate(xagg, zs[i*c:(i+1)*c], af)
			out := make([]float64, c)
			steps.Descend(out, xagg, cur[i], sens[i], fit.Dual(k))
			next[i] = out
		}
		cur = next
	}
	var p []float64
	for _, i := range fresh {
		p = append(p, softmaxRows(cur[i], c)...)
	}
	return p
}

func TestFrozenErrors(t *testing.T) {
	d := small(t, 200, 5)
	x0, err := features.NewDense(d.Features, d.N(), d.NumFeatures)
	require.NoError(t, err)
	s, err := score.Open(bytes.NewReader(save(t, frozenModel(t, d, 1))), score.DefaultConfig())
	require.NoError(t, err)
	fz, err := s.Freeze(context.Background(), d.Graph, x0, d.Sens)
	require.NoError(t, err)
	small := small(t, 50, 5)
	xs, err := features.NewDense(small.Features, small.N(), small.NumFeatures)
	require.NoError(t, err)
	_, err = fz.Add(context.Background(), small.Graph, xs, small.Sens)
	assert.ErrorContains(t, err, "fewer than the 200 already scored")
	gg, x, sens := grow(t, d, 2)
	sens[len(sens)-1] = 9
	_, err = fz.Add(context.Background(), gg, x, sens)
	assert.ErrorContains(t, err, "group 9")
	assert.Equal(t, 200, fz.N(), "nothing added on error")
	_, err = fz.Score([]int{200})
	assert.ErrorContains(t, err, "nodes[0] = 200")

	// An FMP model without its duals, which Freeze cannot keep, is refused
	// when saved (it used to reach Freeze, which returned ErrNotFitted).
	var unrecorded bytes.Buffer
	err = modelio.Save(&unrecorded, fmpModel(t, d, false), modelio.SaveConfig{Untrained: true})
	assert.ErrorIs(t, err, fmp.ErrNotRecorded)
}
