package fmp_test

import (
	"context"
	"math"
	"math/rand"
	"testing"

	"github.com/fairmp/fairmp/fmp"
	"github.com/fairmp/fairmp/graph"
	"github.com/fairmp/fairmp/graph/datasets"
	"github.com/fairmp/fairmp/metrics"
	"github.com/fairmp/fairmp/metrics/selection"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gorgonia.org/tensor"
)

// classLogits is a three-class generated graph and logits in which class
// 1 is as likely in both groups while group 0 leans to class 0 and group
// 1 to class 2: one class against the rest (class 1, what metrics.Evaluate
// judges) looks fair, the c-class ΔDP (the worst class) does not.
func classLogits(t *testing.T) (*datasets.Dataset, *tensor.Dense) {
	t.Helper()
	c := datasets.DefaultSyntheticConfig()
	c.N, c.MeanDegree, c.LabelBias, c.Classes, c.ClassBias = 600, 6, 0, 3, []float64{-0.3, 0, 0.3}
	ds, err := datasets.Synthetic(c)
	require.NoError(t, err)
	rng := rand.New(rand.NewSource(57))
	n := ds.N()
	z := make([]float64, 3*n)
	for i, s := range ds.Sens {
		z[3*i+ds.Labels[i]] += 1.5
		z[3*i+2*s] += 0.8 // group 0 → class 0, group 1 → class 2
		for k := range 3 {
			z[3*i+k] += rng.NormFloat64()
		}
	}
	return ds, tensor.New(tensor.WithShape(n, 3), tensor.WithBacking(z))
}

// TestFrontierClassesRule: with three classes the frontier judges its rule
// with the c-class criteria. λf 0 and 1 meet ΔDP ≤ 0.15 one class
// against the rest but not for c classes, so the rule (most accurate
// with ΔDP ≤ 0.15) must choose λf 4, not the more accurate λf 1; every point's
// c-class reports are those of metrics.EvaluateClasses on the layer built
// separately with its setting, and the choice is selection.Choose over the
// c-class candidates. Before the frontier used the c-class criteria it
// chose λf 1.
func TestFrontierClassesRule(t *testing.T) {
	ds, z := classLogits(t)
	adj := graph.NormalizedAdjacency(ds.Graph)
	fc := fmp.DefaultFrontierConfig()
	fc.LambdaF = []float64{0, 1, 4, 16}
	fc.Rule = selection.MostAccurateWithin(metrics.DPDifference, 0.15)
	fc.Test = ds.Split.Test
	bc := metrics.DefaultBootstrapConfig()
	bc.Resamples = 100
	fc.TestBootstrap = &bc
	base := fmp.DefaultConfig()
	f, err := fmp.NewLogitsFrontier(context.Background(), z, adj, ds.Sens, ds.Labels, ds.Split.Val, base, fc)
	require.NoError(t, err)

	first := f.Points[0]
	require.NotNil(t, first.ValClasses)
	assert.LessOrEqual(t, first.Val.DemographicParity, 0.15, "class 1 against the rest looks fair at λf 0")
	assert.Greater(t, first.ValClasses.DemographicParity, 0.15, "the worst class does not")

	opt := metrics.DefaultOptions()
	opt.AllowUndefined = true
	cands := make([]selection.Candidate, len(f.Points))
	for i, p := range f.Points {
		require.NotNil(t, p.ValClasses, "%v", p.Config)
		require.NotNil(t, p.TestClasses, "%v", p.Config)
		require.NotNil(t, p.TestClassIntervals, "%v", p.Config)
		l, err := fmp.New(adj, ds.Sens, p.Config)
		require.NoError(t, err)
		out, err := l.Apply(z)
		require.NoError(t, err)
		probs := softmax3(out.Data().([]float64))
		v, err := metrics.EvaluateClasses(probs, 3, ds.Labels, ds.Sens, ds.Split.Val, opt)
		require.NoError(t, err)
		assert.Equal(t, v, *p.ValClasses, "%v", p.Config)
		tv, err := metrics.EvaluateClasses(probs, 3, ds.Labels, ds.Sens, ds.Split.Test, opt)
		require.NoError(t, err)
		assert.Equal(t, tv, *p.TestClasses, "%v", p.Config)
		assert.Equal(t, tv.DemographicParity, p.TestClassIntervals.Criteria[metrics.DPDifference].Point)
		cands[i] = fc.Rule.ClassCandidate(v)
	}
	want, err := selection.Choose(cands, fc.Rule.ClassCandidate(*f.Reference.ValClasses), fc.Rule)
	require.NoError(t, err)
	assert.Equal(t, want, f.Chosen)
	assert.LessOrEqual(t, f.Best().ValClasses.DemographicParity, 0.15)
	// One class against the rest, every point meets the bound and the
	// most accurate (λf 1) would be chosen; for three classes only λf ≥ 4.
	binary := make([]selection.Candidate, len(f.Points))
	for i, p := range f.Points {
		binary[i] = fc.Rule.Candidate(p.Val)
	}
	old, err := selection.Choose(binary, fc.Rule.Candidate(f.Reference.Val), fc.Rule)
	require.NoError(t, err)
	assert.Equal(t, 1, old)
	assert.Equal(t, 2, f.Chosen)
	assert.Equal(t, f.Best().ValClasses.DemographicParity, f.Best().Candidate(fc.Rule).Fairness)
}

// TestFrontierClassesNotMet: the diagnostic of a rule no point meets
// names the fairest c-class value reached.
func TestFrontierClassesNotMet(t *testing.T) {
	ds, z := classLogits(t)
	fc := fmp.DefaultFrontierConfig()
	fc.LambdaF = []float64{0, 0.25}
	fc.Rule = selection.MostAccurateWithin(metrics.DPDifference, 0.001)
	f, err := fmp.NewLogitsFrontier(context.Background(), z, graph.NormalizedAdjacency(ds.Graph), ds.Sens, ds.Labels, ds.Split.Val, fmp.DefaultConfig(), fc)
	require.ErrorIs(t, err, selection.ErrNoCandidate)
	d := f.Diagnostics()
	require.Len(t, d, 1)
	best := math.Min(f.Points[0].ValClasses.DemographicParity, f.Points[1].ValClasses.DemographicParity)
	assert.Contains(t, d[0].Message, fc.Rule.FormatValue(best))
}

func softmax3(z []float64) []float64 {
	p := make([]float64, len(z))
	for i := 0; i < len(z); i += 3 {
		m := math.Max(z[i], math.Max(z[i+1], z[i+2]))
		s := 0.0
		for k := range 3 {
			p[i+k] = math.Exp(z[i+k] - m)
			s += p[i+k]
		}
		for k := range 3 {
			p[i+k] /= s
		}
	}
	return p
}
