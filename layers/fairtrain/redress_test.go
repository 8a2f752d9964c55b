package fairtrain

import (
	"context"
	"math"
	"math/rand"
	"sort"
	"testing"

	"github.com/fairmp/fairmp/graph/datasets"
	"github.com/fairmp/fairmp/internal/testutil"
	"github.com/fairmp/fairmp/layers"
	"github.com/fairmp/fairmp/layers/fairness"
	"github.com/fairmp/fairmp/layers/train"
	"github.com/fairmp/fairmp/metrics"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// naiveRank is REDRESS's ranking loss written from its definition, with
// dense similarity matrices and sorting: for each anchor, sort the others
// by output similarity (stable, so ties keep the lower position), take
// the first k, and sum |ΔNDCG| · RankNet's cross-entropy over the pairs
// and the anchors.
func naiveRank(z []float64, c int, x []float64, d int, nodes []int, k int, sigma float64) float64 {
	m := len(nodes)
	sim := func(v []float64, w, a, b int) float64 {
		ra, rb := v[nodes[a]*w:(nodes[a]+1)*w], v[nodes[b]*w:(nodes[b]+1)*w]
		var ab, aa, bb float64
		for j := range ra {
			ab += ra[j] * rb[j]
			aa += ra[j] * ra[j]
			bb += rb[j] * rb[j]
		}
		na, nb := math.Sqrt(aa), math.Sqrt(bb)
		if na == 0 {
			na = 1
		}
		if nb == 0 {
			nb = 1
		}
		return 5 * (ab/(na*nb) + 1)
	}
	k = min(k, m-1)
	total := 0.0
	for i := 0; i < m; i++ {
		var others []int
		for j := 0; j < m; j++ {
			if j != i {
				others = append(others, j)
			}
		}
		byY := append([]int(nil), others...)
		sort.SliceStable(byY, func(a, b int) bool { return sim(z, c, i, byY[a]) > sim(z, c, i, byY[b]) })
		byX := append([]int(nil), others...)
		sort.SliceStable(byX, func(a, b int) bool { return sim(x, d, i, byX[a]) > sim(x, d, i, byX[b]) })
		disc := func(pos int) float64 { return 1 / math.Log2(float64(pos)+2) }
		gain := func(j int) float64 { return math.Pow(2, sim(x, d, i, j)) - 1 }
		idcg := 0.0
		for pos, j := range byX[:k] {
			idcg += gain(j) * disc(pos)
		}
		top := byY[:k]
		for a := 0; a < k; a++ {
			for b := a + 1; b < k; b++ {
				ja, jb := top[a], top[b]
				// |ΔNDCG|: the DCG of the list with a and b swapped.
				dcg := func(list []int) float64 {
					s := 0.0
					for pos, j := range list {
						s += gain(j) * disc(pos)
					}
					return s
				}
				sw := append([]int(nil), top...)
				sw[a], sw[b] = sw[b], sw[a]
				w := math.Abs(dcg(top)-dcg(sw)) / idcg
				pbar := 0.5
				switch sa, sb := sim(x, d, i, ja), sim(x, d, i, jb); {
				case sa > sb:
					pbar = 1
				case sa < sb:
					pbar = 0
				}
				phat := 1 / (1 + math.Exp(-sigma*(sim(z, c, i, ja)-sim(z, c, i, jb))))
				total += w * (-pbar*math.Log(phat) - (1-pbar)*math.Log(1-phat))
			}
		}
	}
	return total
}

// TestRankingLossByHand: three nodes, k = 2, σ = 0.5, on unit vectors
// whose similarities 5·(cos + 1) are integers.
//
//	features x0 = (1, 0), x1 = (0.6, 0.8), x2 = (0, 1):
//	  s01 = 5·1.6 = 8, s02 = 5·1 = 5, s12 = 5·1.8 = 9;
//	  gains 2^s − 1: 255, 31, 511.
//	outputs z0 = (1, 0), z1 = (0, 1), z2 = (0.8, 0.6):
//	  ŝ01 = 5, ŝ02 = 9, ŝ12 = 8.
//
// With D = 1/log₂3 (the discount of the second place; the first is 1):
//
//	anchor 0: list by ŝ (2, 1); by s 1 comes first (8 > 5): the pair is
//	  misordered, P̄ = 0, ℓ = softplus(0.5·(9 − 5)) = softplus(2);
//	  |ΔNDCG| = |31 − 255|·(1 − D) / IDCG, IDCG = 255 + 31·D.
//	anchor 1: list (2, 0) (ŝ 8 > 5); s12 = 9 > s10 = 8: in order, P̄ = 1,
//	  ℓ = softplus(−0.5·(8 − 5)) = softplus(−1.5);
//	  |ΔNDCG| = |511 − 255|·(1 − D) / (511 + 255·D).
//	anchor 2: list (0, 1) (ŝ 9 > 8); s20 = 5 < s21 = 9: misordered,
//	  ℓ = softplus(0.5·(9 − 8)) = softplus(0.5);
//	  |ΔNDCG| = |31 − 511|·(1 − D) / (511 + 31·D).
//	L = 0.30111·2.12693 + 0.14062·0.20141 + 0.33390·0.97408 ≈ 0.99400.
func TestRankingLossByHand(t *testing.T) {
	x := []float64{1, 0, 0.6, 0.8, 0, 1}
	z := []float64{1, 0, 0, 1, 0.8, 0.6}
	D := 1 / math.Log2(3)
	sp := func(t float64) float64 { return math.Log(1 + math.Exp(t)) }
	want := 224*(1-D)/(255+31*D)*sp(2) +
		256*(1-D)/(511+255*D)*sp(-1.5) +
		480*(1-D)/(511+31*D)*sp(0.5)
	assert.InDelta(t, 0.99400, want, 5e-6, "the comment's rounding")
	assert.InDelta(t, want, naiveRank(z, 2, x, 2, []int{0, 1, 2}, 2, 0.5), 1e-12, "naive implementation")
	for _, dt := range testutil.Dtypes {
		v, _ := scalarGrad(t, dt, z, 3, 2, func(zn *G.Node) (*G.Node, error) {
			return rankingLoss(zn, x, 2, []int{0, 1, 2}, 2, 0.5)
		})
		atol, rtol := testutil.Tol(dt)
		assert.True(t, testutil.Close(v, want, atol, rtol), "%v: L = %v, want %v", dt, v, want)
	}
	// k = 1: one node per list, no pair, no loss.
	v, gr := scalarGrad(t, tensor.Float64, z, 3, 2, func(zn *G.Node) (*G.Node, error) {
		return rankingLoss(zn, x, 2, []int{0, 1, 2}, 1, 0.5)
	})
	assert.Equal(t, 0.0, v)
	assert.Equal(t, make([]float64, 6), gr)
	// Node 1 left out: every list has one node.
	v, _ = scalarGrad(t, tensor.Float64, z, 3, 2, func(zn *G.Node) (*G.Node, error) {
		return rankingLoss(zn, x, 2, []int{2, 0}, 10, 0.5)
	})
	assert.Equal(t, 0.0, v)
}

// TestRankingLossGradient checks value and gradient against the naive
// loss and its central differences, in both dtypes, on a subset of the
// rows with lists shorter than the subset and tied feature rows; and the
// value with a zero output row (where the loss, like the reference's, is
// not continuous: its norm counts as 1).
func TestRankingLossGradient(t *testing.T) {
	rng := rand.New(rand.NewSource(11))
	n, c, d := 14, 3, 4
	zv := testutil.RandSlice(rng, n*c, -2, 2)
	x := testutil.RandSlice(rng, n*d, -1, 1)
	copy(x[5*d:6*d], x[2*d:3*d]) // nodes 2 and 5: equal features
	nodes := []int{0, 2, 3, 5, 6, 7, 8, 9, 11, 12, 13}
	for _, sigma := range []float64{1, 0.02} {
		f := func() float64 { return naiveRank(zv, c, x, d, nodes, 4, sigma) }
		want := f()
		num := testutil.NumGrad(f, zv, 1e-6)
		for _, dt := range testutil.Dtypes {
			v, gr := scalarGrad(t, dt, zv, n, c, func(z *G.Node) (*G.Node, error) {
				return rankingLoss(z, x, d, nodes, 4, sigma)
			})
			atol, rtol := testutil.Tol(dt)
			if !testutil.Close(v, want, atol, rtol) {
				t.Errorf("σ %v %v: L = %v, want %v", sigma, dt, v, want)
			}
			gtol := 1e-8
			if dt == tensor.Float32 {
				gtol = 1e-5
			}
			testutil.AllClose(t, dt.String()+" gradient", gr, num, gtol, 1e-4)
			for _, r := range []int{1, 4, 10} {
				require.Equal(t, []float64{0, 0, 0}, gr[r*c:(r+1)*c], "row %d is outside the nodes", r)
			}
		}
	}
	for j := 0; j < c; j++ {
		zv[7*c+j] = 0
	}
	want := naiveRank(zv, c, x, d, nodes, 4, 1)
	for _, dt := range testutil.Dtypes {
		v, _ := scalarGrad(t, dt, zv, n, c, func(z *G.Node) (*G.Node, error) {
			return rankingLoss(z, x, d, nodes, 4, 1)
		})
		atol, rtol := testutil.Tol(dt)
		assert.True(t, testutil.Close(v, want, atol, rtol), "%v zero row: L = %v, want %v", dt, v, want)
	}
}

func TestRankingLossErrors(t *testing.T) {
	g := G.NewGraph()
	z := G.NewMatrix(g, tensor.Float64, G.WithShape(3, 2), G.WithName("z"), G.WithInit(G.Zeroes()))
	x := []float64{1, 0, 0, 1, 1, 1}
	for name, f := range map[string]func() error{
		"one node": func() error { _, err := rankingLoss(z, x, 2, []int{1}, 2, 1); return err },
		"repeated": func() error { _, err := rankingLoss(z, x, 2, []int{1, 1}, 2, 1); return err },
		"range":    func() error { _, err := rankingLoss(z, x, 2, []int{0, 3}, 2, 1); return err },
		"k":        func() error { _, err := rankingLoss(z, x, 2, []int{0, 1}, 0, 1); return err },
		"sigma":    func() error { _, err := rankingLoss(z, x, 2, []int{0, 1}, 2, 0); return err },
		"features": func() error { _, err := rankingLoss(z, x[:4], 2, []int{0, 1}, 2, 1); return err },
		"not finite": func() error {
			_, err := rankingLoss(z, []float64{1, 0, math.NaN(), 1, 1, 1}, 2, []int{0, 1}, 2, 1)
			return err
		},
		"nil": func() error { _, err := rankingLoss(nil, x, 2, []int{0, 1}, 2, 1); return err },
	} {
		assert.Error(t, f(), name)
	}
}

func TestREDRESSValidate(t *testing.T) {
	require.NoError(t, DefaultREDRESSConfig().Validate())
	for field, c := range map[string]REDRESSConfig{
		"Gamma":  {Gamma: -1, TopK: 10, Sigma: 1},
		"TopK":   {Gamma: 1, TopK: 0, Sigma: 1},
		"Sigma":  {Gamma: 1, TopK: 10, Sigma: math.Inf(1)},
		"Warmup": {Gamma: 1, TopK: 10, Sigma: 1, Warmup: -1},
	} {
		assert.ErrorContains(t, c.Validate(), field)
	}
	ds := biased(t, 40)
	s, cfg := setupFor(t, ds, "gcn", tensor.Float64, 1, true)
	s.Task.Train = s.Task.Train[:1]
	_, err := fairness.Fit(context.Background(), DefaultREDRESSConfig(), cfg, s, train.DefaultConfig())
	assert.ErrorContains(t, err, "want at least 2")
}

// initialLogits returns the evaluation-mode logits of the backbone cfg
// built afresh on ds, with its initial parameters or those of trained
// (nil: initial).
func initialLogits(t *testing.T, ds *datasets.Dataset, cfg layers.Config, trained layers.Model) []float64 {
	t.Helper()
	g := G.NewGraph()
	xn, err := train.FeatureNode(g, layers.BaseOf(cfg).Dtype, ds.Features, ds.N(), ds.NumFeatures, "x")
	require.NoError(t, err)
	m, err := layers.Build(g, ds.Graph, cfg, nil)
	require.NoError(t, err)
	if trained != nil {
		var vals []*tensor.Dense
		for _, p := range trained.Learnables() {
			vals = append(vals, p.Value().(*tensor.Dense))
		}
		require.NoError(t, train.SetParams(m, vals))
	}
	zn, err := m.Forward(xn)
	require.NoError(t, err)
	var zv G.Value
	G.Read(zn, &zv)
	testutil.Run(t, g)
	return testutil.ToF64(zv)
}

// TestREDRESSLossInTraining: the first epoch's extra term is γ times the
// ranking loss of the initial model's logits (no dropout) over the
// training nodes, and the trainer's cross-entropy is untouched.
func TestREDRESSLossInTraining(t *testing.T) {
	ds := biased(t, 60)
	for _, dt := range testutil.Dtypes {
		s, cfg := setupFor(t, ds, "gcn", dt, 5, true)
		c := DefaultREDRESSConfig()
		c.Gamma, c.TopK, c.Sigma = 3, 6, 0.3
		tc := train.DefaultConfig()
		tc.Epochs = 1
		fit, err := fairness.Fit(context.Background(), c, cfg, s, tc)
		require.NoError(t, err)
		z := initialLogits(t, ds, cfg, nil)
		want := c.Gamma * naiveRank(z, 2, ds.Features, ds.NumFeatures, ds.Split.Train, c.TopK, c.Sigma)
		atol := 1e-9
		if dt == tensor.Float32 {
			atol = 1e-4
		}
		st := fit.Result.History[0]
		assert.InDelta(t, want, st.Extra, atol, "%v extra", dt)
		assert.Greater(t, want, 0.01)
		assert.InDelta(t, opkitCE(z, ds), st.CE, atol, "%v CE", dt)
	}
}

func opkitCE(z []float64, ds *datasets.Dataset) float64 {
	s := 0.0
	for _, i := range ds.Split.Train {
		p := softmax(z[2*i : 2*i+2])
		s -= math.Log(p[ds.Labels[i]])
	}
	return s / float64(len(ds.Split.Train))
}

// fitREDRESS trains a GCN on ds with c (nil: plain) for epochs and
// returns the trained parameters and the run's history.
func fitREDRESS(t *testing.T, ds *datasets.Dataset, dt tensor.Dtype, c *REDRESSConfig, epochs int) ([][]float64, []train.EpochStats, layers.Model, layers.Config) {
	t.Helper()
	s, cfg := setupFor(t, ds, "gcn", dt, 4, false)
	tc := train.DefaultConfig()
	tc.Epochs, tc.Adam.LR, tc.Select = epochs, 0.01, train.SelectLast
	var m fairness.Method
	if c != nil {
		m = *c
	}
	fit, err := fairness.Fit(context.Background(), m, cfg, s, tc)
	require.NoError(t, err)
	return params(fit.Model), fit.Result.History, fit.Model, cfg
}

// TestREDRESSDeterministicAndPlain: reruns are bit-identical; γ = 0, and
// a warm-up as long as the run, give plain training's parameters bit for
// bit; γ > 0 does not; during the warm-up the term reads 0.
func TestREDRESSDeterministicAndPlain(t *testing.T) {
	ds := biased(t, 100)
	for _, dt := range testutil.Dtypes {
		plain, _, _, _ := fitREDRESS(t, ds, dt, nil, 12)
		c := DefaultREDRESSConfig()
		a, _, _, _ := fitREDRESS(t, ds, dt, &c, 12)
		b, _, _, _ := fitREDRESS(t, ds, dt, &c, 12)
		assert.Equal(t, a, b, "%v: reruns must be bit-identical", dt)
		assert.NotEqual(t, plain, a, "%v: γ = 1 trains like plain", dt)
		zero := c
		zero.Gamma = 0
		got, _, _, _ := fitREDRESS(t, ds, dt, &zero, 12)
		assert.Equal(t, plain, got, "%v: γ = 0 must be plain training", dt)
		late := c
		late.Warmup = 12
		got, _, _, _ = fitREDRESS(t, ds, dt, &late, 12)
		assert.Equal(t, plain, got, "%v: a warm-up of the whole run must be plain training", dt)
		late.Warmup = 3
		_, hist, _, _ := fitREDRESS(t, ds, dt, &late, 5)
		for e, st := range hist {
			if e < 3 {
				assert.Equal(t, 0.0, st.Extra, "%v: epoch %d is in the warm-up", dt, e+1)
			} else {
				assert.Greater(t, st.Extra, 0.0, "%v: epoch %d is after the warm-up", dt, e+1)
			}
		}
	}
}

// TestREDRESSLowersInFoRMBias: on the generated graph, REDRESS at its
// default weight leaves predictions whose InFoRM bias over the features'
// similarity graph is below plain training's (a lower bias is what the
// method is for; the accuracy is not asserted).
func TestREDRESSLowersInFoRMBias(t *testing.T) {
	ds := biased(t, 150)
	sim, err := metrics.CosineTopK(ds.Features, ds.N(), ds.NumFeatures, 10, nil)
	require.NoError(t, err)
	bias := func(m layers.Model, cfg layers.Config) float64 {
		z := initialLogits(t, ds, cfg, m)
		probs := make([]float64, len(z))
		for i := 0; i < ds.N(); i++ {
			copy(probs[2*i:2*i+2], softmax(z[2*i:2*i+2]))
		}
		b, err := metrics.InFoRMBias(probs, 2, sim)
		require.NoError(t, err)
		return b
	}
	_, _, pm, pc := fitREDRESS(t, ds, tensor.Float64, nil, 60)
	c := DefaultREDRESSConfig()
	_, _, rm, rc := fitREDRESS(t, ds, tensor.Float64, &c, 60)
	pb, rb := bias(pm, pc), bias(rm, rc)
	t.Logf("InFoRM bias %.2f → %.2f", pb, rb)
	assert.Less(t, rb, pb)
}

// naiveNDCG is RankingNDCG written from its definition with sorting.
func naiveNDCG(z []float64, c int, x []float64, d int, nodes []int, k int) float64 {
	m := len(nodes)
	cos := func(v []float64, w, a, b int) float64 {
		ra, rb := v[nodes[a]*w:(nodes[a]+1)*w], v[nodes[b]*w:(nodes[b]+1)*w]
		var ab, aa, bb float64
		for j := range ra {
			ab += ra[j] * rb[j]
			aa += ra[j] * ra[j]
			bb += rb[j] * rb[j]
		}
		return ab / math.Sqrt(aa*bb)
	}
	k = min(k, m-1)
	total := 0.0
	for i := 0; i < m; i++ {
		var byY, byX []int
		for j := 0; j < m; j++ {
			if j != i {
				byY, byX = append(byY, j), append(byX, j)
			}
		}
		sort.SliceStable(byY, func(a, b int) bool { return cos(z, c, i, byY[a]) > cos(z, c, i, byY[b]) })
		sort.SliceStable(byX, func(a, b int) bool { return cos(x, d, i, byX[a]) > cos(x, d, i, byX[b]) })
		dcg, idcg := 0.0, 0.0
		for p := 0; p < k; p++ {
			dcg += (math.Pow(2, 5*(cos(x, d, i, byY[p])+1)) - 1) / math.Log2(float64(p+2))
			idcg += (math.Pow(2, 5*(cos(x, d, i, byX[p])+1)) - 1) / math.Log2(float64(p+2))
		}
		total += dcg / idcg
	}
	return total / float64(m)
}

// TestRankingNDCG: on TestRankingLossByHand's three nodes, anchor 0's
// list (2, 1) has gains (31, 255) where the ideal has (255, 31); anchor
// 1's list (2, 0) is ideal; anchor 2's list (0, 1) has (31, 511) where the
// ideal has (511, 31). And against the definition on random data.
func TestRankingNDCG(t *testing.T) {
	x := []float64{1, 0, 0.6, 0.8, 0, 1}
	z := []float64{1, 0, 0, 1, 0.8, 0.6}
	D := 1 / math.Log2(3)
	want := ((31+255*D)/(255+31*D) + 1 + (31+511*D)/(511+31*D)) / 3
	got, err := RankingNDCG(z, 2, x, 2, []int{0, 1, 2}, 2)
	require.NoError(t, err)
	assert.InDelta(t, want, got, 1e-12)
	// Outputs equal to the features rank perfectly.
	got, err = RankingNDCG(x, 2, x, 2, []int{0, 1, 2}, 2)
	require.NoError(t, err)
	assert.InDelta(t, 1, got, 1e-12)

	rng := rand.New(rand.NewSource(4))
	n, c, d := 40, 2, 5
	zv := testutil.RandSlice(rng, n*c, -2, 2)
	xv := testutil.RandSlice(rng, n*d, -1, 1)
	nodes := rng.Perm(n)[:30]
	got, err = RankingNDCG(zv, c, xv, d, nodes, 10)
	require.NoError(t, err)
	assert.InDelta(t, naiveNDCG(zv, c, xv, d, nodes, 10), got, 1e-12)
	_, err = RankingNDCG(zv[:5], 2, xv, d, nodes, 10)
	assert.Error(t, err)
}

// TestSecondModelAfterREDRESS: a model trains in the gorgonia graph where
// REDRESS trained one: its backward op declares that gorgonia never
// differentiates it (a Spec without Grad), as every backward op must, or every
// later Grad in the graph fails.
func TestSecondModelAfterREDRESS(t *testing.T) {
	ds := biased(t, 60)
	s, cfg := setupFor(t, ds, "gcn", tensor.Float64, 5, true)
	tc := train.DefaultConfig()
	tc.Epochs = 2
	_, err := fairness.Fit(context.Background(), DefaultREDRESSConfig(), cfg, s, tc)
	require.NoError(t, err)
	mc := layers.DefaultMLPConfig(ds.NumFeatures, 2)
	mc.Name = "second"
	ph := layers.NewPhase()
	mlp, err := layers.NewMLP(s.Task.Graph, nil, mc, ph)
	require.NoError(t, err)
	task := *s.Task
	task.Phase = ph
	_, err = train.Fit(context.Background(), mlp, &task, tc)
	assert.NoError(t, err)
}
