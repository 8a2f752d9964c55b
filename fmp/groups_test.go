package fmp_test

import (
	"context"
	"fmt"
	"math"
	"testing"

	"github.com/fairmp/fairmp/fmp"
	"github.com/fairmp/fairmp/graph"
	"github.com/fairmp/fairmp/graph/datasets"
	"github.com/fairmp/fairmp/layers/train"
	"github.com/fairmp/fairmp/metrics"
	"github.com/fairmp/fairmp/metrics/selection"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gorgonia.org/tensor"
)

// manyGroups is a generated graph of 600 nodes in len(fracs) groups.
func manyGroups(t testing.TB, fracs []float64) *datasets.Dataset {
	t.Helper()
	c := datasets.DefaultSyntheticConfig()
	c.N, c.MeanDegree, c.GroupFrac, c.GroupFracs = 600, 6, 0, fracs
	ds, err := datasets.Synthetic(c)
	require.NoError(t, err)
	return ds
}

// TestLayerManyGroups: on three and four groups FMP has one Δs row per
// group, and its steps pull the groups' mean probabilities together:
// their spread under softmax(F/τ) shrinks as λf grows.
func TestLayerManyGroups(t *testing.T) {
	for _, fracs := range [][]float64{{0.4, 0.35, 0.25}, {0.3, 0.3, 0.2, 0.2}} {
		ds := manyGroups(t, fracs)
		G := len(fracs)
		// Logits that favour class 1 more for higher groups.
		n := ds.N()
		z := make([]float64, 2*n)
		for i, s := range ds.Sens {
			z[2*i+1] = 0.8*float64(s) - 0.5 + 0.3*float64(ds.Labels[i])
		}
		x := tensor.New(tensor.WithShape(n, 2), tensor.WithBacking(z))
		spread := func(lf float64) float64 {
			cfg := fmp.DefaultConfig()
			cfg.LambdaF, cfg.LambdaS = lf, 0
			l, err := fmp.New(graph.NormalizedAdjacency(ds.Graph), ds.Sens, cfg)
			require.NoError(t, err)
			out, rec, err := l.Record(x)
			require.NoError(t, err)
			if lf > 0 {
				require.Len(t, rec.Duals[0], G*2, "one Δs row per group: the dual is G × c")
			}
			f := out.Data().([]float64)
			mean := make([]float64, G)
			cnt := make([]float64, G)
			for i, s := range ds.Sens {
				a, b := f[2*i]/cfg.Temperature, f[2*i+1]/cfg.Temperature
				mean[s] += 1 / (1 + math.Exp(a-b))
				cnt[s]++
			}
			lo, hi := 1.0, 0.0
			for g := range mean {
				mean[g] /= cnt[g]
				lo, hi = min(lo, mean[g]), max(hi, mean[g])
			}
			return hi - lo
		}
		s0, s1, s4 := spread(0), spread(1), spread(4)
		t.Logf("%d groups: spread %.4f (λf 0), %.4f (1), %.4f (4)", G, s0, s1, s4)
		assert.Less(t, s1, s0, "%d groups: λf = 1 narrows the groups' spread", G)
		assert.Less(t, s4, s0/2, "%d groups: λf = 4 at least halves it (%.3f → %.3f)", G, s0, s4)
	}
}

// TestFrontierManyGroups: the frontier chooses on every criterion with
// three and four groups, and its choice is the fairest admitted point.
func TestFrontierManyGroups(t *testing.T) {
	for _, fracs := range [][]float64{{0.4, 0.35, 0.25}, {0.3, 0.3, 0.2, 0.2}} {
		ds := manyGroups(t, fracs)
		m, task := onBackbone(t, "gcn", ds, tensor.Float64, fmp.DefaultConfig())
		_, err := m.FitTwoStage(context.Background(), task, fastConfig(30))
		require.NoError(t, err)
		for _, c := range metrics.Criteria() {
			name := fmt.Sprintf("%d groups, %s", len(fracs), c.Name())
			fc := fmp.DefaultFrontierConfig()
			fc.LambdaF = []float64{0, 0.5, 1, 2, 4}
			fc.Rule = selection.FairestWithin(c, 0.05)
			fc.Test = ds.Split.Test
			bc := metrics.DefaultBootstrapConfig()
			bc.Resamples = 100
			fc.TestBootstrap = &bc
			f, err := fmp.NewFrontier(context.Background(), m, task, fc)
			require.NoError(t, err, name)
			ref := fc.Rule.Candidate(f.Reference.Val)
			best := fc.Rule.Candidate(f.Best().Val)
			require.NoError(t, best.Undefined, name)
			assert.GreaterOrEqual(t, best.Accuracy, ref.Accuracy-0.05-1e-12, name)
			for _, p := range f.Points {
				cand := fc.Rule.Candidate(p.Val)
				if fc.Rule.Admits(cand, ref) {
					assert.False(t, c.Better(cand.Fairness, best.Fairness), "%s: λf %g is fairer than the choice", name, p.Config.LambdaF)
				}
			}
			assert.Len(t, f.Best().Test.Groups, len(fracs), name)
			if v, err := c.Of(f.Best().Test); err == nil {
				iv, ok := f.Best().TestIntervals.Of(c)
				require.True(t, ok, name)
				assert.Equal(t, v, iv.Point, name)
			}
		}
	}
}

// TestLogitsFrontierManyGroups: NewLogitsFrontier on three groups agrees
// with NewFrontier.
func TestLogitsFrontierManyGroups(t *testing.T) {
	ds := manyGroups(t, []float64{0.4, 0.35, 0.25})
	m, task := onBackbone(t, "mlp", ds, tensor.Float64, fmp.DefaultConfig())
	_, err := m.FitTwoStage(context.Background(), task, fastConfig(20))
	require.NoError(t, err)
	fc := fmp.DefaultFrontierConfig()
	fc.LambdaF = []float64{0, 1, 3}
	fc.Rule = selection.MostAccurateWithin(metrics.DPRatio, 0.5)
	a, err := fmp.NewFrontier(context.Background(), m, task, fc)
	require.NoError(t, err)
	z, err := train.Logits(m.Backbone(), task)
	require.NoError(t, err)
	b, err := fmp.NewLogitsFrontier(context.Background(), z, m.Matrix(), ds.Sens, ds.Labels, ds.Split.Val, m.Config(), fc)
	require.NoError(t, err)
	assert.Equal(t, a.Chosen, b.Chosen)
	for k := range a.Points {
		assert.Equal(t, a.Points[k].Val.Accuracy, b.Points[k].Val.Accuracy)
		assert.Equal(t, a.Points[k].Val.Groups, b.Points[k].Val.Groups)
	}
}

// TestFrontierUndefinedCriterion: test nodes on which group 1 has no
// negative node leave its false-positive rate undefined. The frontier
// does not fail: equalized odds is NaN on every point's test report and
// named in its Undefined, ΔDP (the rule's criterion) is defined, and
// the choice is the one made without those test nodes.
func TestFrontierUndefinedCriterion(t *testing.T) {
	ds := manyGroups(t, []float64{0.6, 0.4})
	m, task := onBackbone(t, "mlp", ds, tensor.Float64, fmp.DefaultConfig())
	_, err := m.FitTwoStage(context.Background(), task, fastConfig(20))
	require.NoError(t, err)
	var test []int
	for _, i := range ds.Split.Test {
		if ds.Sens[i] == 0 || ds.Labels[i] == 1 {
			test = append(test, i)
		}
	}
	fc := fmp.DefaultFrontierConfig()
	fc.LambdaF = []float64{0, 1, 3}
	plain, err := fmp.NewFrontier(context.Background(), m, task, fc)
	require.NoError(t, err)
	fc.Test = test
	bc := metrics.DefaultBootstrapConfig()
	bc.Resamples = 200
	fc.TestBootstrap = &bc
	f, err := fmp.NewFrontier(context.Background(), m, task, fc)
	require.NoError(t, err, "an undefined rate the rule does not use must not abort the frontier")
	assert.Equal(t, plain.Chosen, f.Chosen)
	for _, p := range append(f.Points, f.Reference) {
		assert.True(t, math.IsNaN(p.Test.EqualizedOdds), "%v", p.Config)
		assert.True(t, p.Test.IsUndefined("equalized_odds"), "%v", p.Config)
		assert.False(t, math.IsNaN(p.Test.DemographicParity), "%v", p.Config)
		assert.False(t, p.TestIntervals.DemographicParity.Undefined(), "%v", p.Config)
	}
}

// TestConfigString: a setting reads in words in messages, never as a Go
// struct.
func TestConfigString(t *testing.T) {
	assert.Equal(t, "λs 1, λf 2 (K 10, τ 0.5)", fmp.DefaultConfig().String())
	c := fmp.DefaultConfig()
	c.Rho, c.TrainMode = 2, fmp.EndToEnd
	assert.Equal(t, "λs 1, λf 2 (K 10, τ 0.5, ρ 2, EndToEnd)", c.String())
}
