package fairtrain

import (
	"context"
	"errors"
	"math"
	"math/rand"
	"reflect"
	"testing"

	"github.com/fairmp/fairmp/graph/datasets"
	"github.com/fairmp/fairmp/internal/augment"
	"github.com/fairmp/fairmp/internal/opkit"
	"github.com/fairmp/fairmp/internal/testutil"
	"github.com/fairmp/fairmp/layers"
	"github.com/fairmp/fairmp/layers/fairness"
	"github.com/fairmp/fairmp/layers/internal/flatkind"
	"github.com/fairmp/fairmp/layers/train"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// setupFor returns a task on ds in a new graph and the backbone
// configuration of kind (hidden 8, dropout as the kind's default unless
// noDropout).
func setupFor(t testing.TB, ds *datasets.Dataset, kind string, dt tensor.Dtype, seed int64, noDropout bool) (fairness.Setup, layers.Config) {
	t.Helper()
	g := G.NewGraph()
	x, err := train.FeatureNode(g, dt, ds.Features, ds.N(), ds.NumFeatures, "x")
	require.NoError(t, err)
	ph := layers.NewPhase()
	task := &train.Task{Graph: g, X: x, Labels: ds.Labels, Train: ds.Split.Train, Val: ds.Split.Val, Classes: ds.NumClasses(), Phase: ph}
	k, err := layers.LookupKind(kind)
	require.NoError(t, err)
	opt := layers.Options{Dtype: dt, Seed: seed}
	if k.HasHidden() {
		opt.Hidden = 8
	}
	cfg, err := k.Configure(ds.NumFeatures, ds.NumClasses(), opt)
	require.NoError(t, err)
	if noDropout {
		cfg, err = k.Override(cfg, map[string]any{"dropout": 0.0})
		require.NoError(t, err)
	}
	return fairness.NewSetup(ds.Graph, task, ds.Sens), cfg
}

// ownMethods returns the package's methods, as registered.
func ownMethods() []fairness.Method {
	var out []fairness.Method
	for _, m := range fairness.Methods() {
		if reflect.TypeOf(m).PkgPath() == reflect.TypeOf(RegularizerConfig{}).PkgPath() {
			out = append(out, m)
		}
	}
	return out
}

func TestRegistered(t *testing.T) {
	var names []string
	for _, m := range ownMethods() {
		names = append(names, m.Name())
	}
	assert.Equal(t, []string{"regularizer", "adversary", "mixup", "redress", "fairgnn", "nifty", "fairvgnn", "rawlsgcn"}, names)
	assert.Subset(t, fairness.Names(fairness.StageLoss), names[:4])
	assert.Subset(t, fairness.Names(fairness.StageArchitecture), names[4:])
	for _, m := range ownMethods() {
		got, err := fairness.Lookup(m.Name())
		require.NoError(t, err)
		assert.Equal(t, m, got)
		require.NoError(t, m.Validate(), m.Name())
		w := m.(fairness.Weighted).WithWeight(0.25)
		assert.Equal(t, 0.25, w.(fairness.Weighted).Weight(), m.Name())
		assert.Equal(t, m.Name(), fairness.WithSeed(w, 9).Name())
	}
	_, err := fairness.Lookup("fairgcn")
	assert.True(t, errors.Is(err, fairness.ErrUnknownMethod))
	assert.ErrorContains(t, err, "regularizer, adversary, mixup, redress")
	assert.ErrorContains(t, err, "fairgnn, nifty, fairvgnn, rawlsgcn")
}

func TestFitEveryMethodEveryBackbone(t *testing.T) {
	ds := biased(t, 120)
	for _, kind := range []string{"mlp", "gcn", "sgc", "appnp", "gat", "jknet", "sage", "gin"} {
		for _, m := range ownMethods() {
			s, cfg := setupFor(t, ds, kind, tensor.Float64, 2, false)
			s.SensFeature = -1
			tc := train.DefaultConfig()
			tc.Epochs, tc.Adam.LR = 80, 0.01
			if a, ok := m.(AdversaryConfig); ok {
				a.PretrainClassifier, a.PretrainAdversary = 10, 5
				m = a
			}
			if f, ok := m.(FairGNNConfig); ok {
				f.Estimator.Epochs = 20
				m = f
			}
			if _, ok := m.(FairVGNNConfig); ok {
				m = quickVGNN()
			}
			if _, ok := m.(RawlsGCNConfig); ok && (kind == "mlp" || kind == "gat" || kind == "sage") {
				_, err := fairness.Fit(context.Background(), m, cfg, s, tc) // nothing to rescale: refused
				assert.ErrorContains(t, err, "rawlsgcn: the "+kind+" backbone", kind)
				continue
			}
			fit, err := fairness.Fit(context.Background(), m, cfg, s, tc)
			require.NoError(t, err, "%s on %s", m.Name(), kind)
			p, err := train.Predict(fit.Model, s.Task, nil)
			require.NoError(t, err)
			for _, v := range p.Probs {
				require.False(t, math.IsNaN(v), "%s on %s", m.Name(), kind)
			}
		}
	}
	// NIFTY with edge dropping on a kind that runs on no other matrix is
	// refused with advice.
	s, cfg := setupFor(t, ds, flatkind.Name, tensor.Float64, 2, false)
	_, err := fairness.Fit(context.Background(), DefaultNIFTYConfig(), cfg, s, train.DefaultConfig())
	assert.ErrorContains(t, err, "set EdgeDrop to 0")
}

// params returns copies of a model's learnables as float64.
func params(m layers.Model) [][]float64 {
	var out [][]float64
	for _, p := range m.Learnables() {
		out = append(out, append([]float64(nil), testutil.ToF64(p.Value())...))
	}
	return out
}

func TestFairGNNNIFTYDeterministic(t *testing.T) {
	ds := biased(t, 100)
	for _, m := range []fairness.Method{DefaultFairGNNConfig(), DefaultNIFTYConfig()} {
		for _, dt := range testutil.Dtypes {
			var runs [2][][]float64
			for r := range runs {
				s, cfg := setupFor(t, ds, "gcn", dt, 4, false)
				sens := append([]int(nil), ds.Sens...)
				for i := 0; i < len(sens); i += 3 {
					sens[i] = -1
				}
				s.Sens = sens
				tc := train.DefaultConfig()
				tc.Epochs = 15
				mm := m
				if f, ok := mm.(FairGNNConfig); ok {
					f.Estimator.Epochs = 10
					mm = f
				}
				fit, err := fairness.Fit(context.Background(), mm, cfg, s, tc)
				require.NoError(t, err)
				runs[r] = params(fit.Model)
			}
			assert.Equal(t, runs[0], runs[1], "%s %v: reruns with one seed must be bit-identical", m.Name(), dt)
		}
	}
}

// evalEncoder returns the encoder's logits and representation on x, in
// evaluation mode, in a fresh graph built from the same configuration
// (so the same initial parameters).
func evalEncoder(t *testing.T, ds *datasets.Dataset, body layers.Config, x []float64) (z, h []float64) {
	t.Helper()
	g := G.NewGraph()
	dt := layers.BaseOf(body).Dtype
	xn, err := train.FeatureNode(g, dt, x, ds.N(), ds.NumFeatures, "x")
	require.NoError(t, err)
	enc, err := NewEncoder(g, ds.Graph, body, 2, nil)
	require.NoError(t, err)
	zn, err := enc.Forward(xn)
	require.NoError(t, err)
	var zv, hv G.Value
	G.Read(zn, &zv)
	G.Read(enc.Representation(), &hv)
	testutil.Run(t, g)
	return testutil.ToF64(zv), testutil.ToF64(hv)
}

func TestFairGNNLossByHand(t *testing.T) {
	ds := biased(t, 60)
	for _, dt := range testutil.Dtypes {
		s, cfg := setupFor(t, ds, "gcn", dt, 5, true)
		c := DefaultFairGNNConfig()
		c.Alpha, c.Beta, c.Hidden = 3, 0.7, 6
		tc := train.DefaultConfig()
		tc.Epochs = 1
		fit, err := fairness.Fit(context.Background(), c, cfg, s, tc)
		require.NoError(t, err)
		// Every group is known: ŝ = s.
		score := make([]float64, ds.N())
		for i, v := range ds.Sens {
			score[i] = float64(v)
		}
		assert.Equal(t, score, fit.SensScore)
		z, h := evalEncoder(t, ds, bodyConfig(cfg, c.Hidden), ds.Features)
		// The adversary's initial weights: a 6 → 1 Linear from c.Seed.
		g := G.NewGraph()
		lc := layers.DefaultLinearConfig(c.Hidden, 1)
		lc.Dtype, lc.Seed = dt, c.Seed
		adv, err := layers.NewLinear(g, nil, lc, nil)
		require.NoError(t, err)
		w := testutil.ToF64(adv.W.Value())
		bce := 0.0
		for i := 0; i < ds.N(); i++ {
			a := 0.0
			for j := 0; j < c.Hidden; j++ {
				a += h[i*c.Hidden+j] * w[j]
			}
			bce += math.Max(a, 0) - score[i]*a + math.Log1p(math.Exp(-math.Abs(a)))
		}
		bce /= float64(ds.N())
		want := c.Alpha*naiveCov(z, 2, score, 1) - c.Beta*bce
		atol := 1e-9
		if dt == tensor.Float32 {
			atol = 1e-4
		}
		assert.InDelta(t, want, fit.Result.History[0].Extra, atol, "%v", dt)
	}
}

func TestNIFTYLossByHand(t *testing.T) {
	ds := biased(t, 60)
	for _, dt := range testutil.Dtypes {
		s, cfg := setupFor(t, ds, "mlp", dt, 6, true)
		s.SensFeature = 2 // column 2 stands for the sensitive feature here
		x := append([]float64(nil), ds.Features...)
		for i := 0; i < ds.N(); i++ {
			x[i*ds.NumFeatures+2] = float64(ds.Sens[i])
		}
		xn, err := train.FeatureNode(s.Task.Graph, dt, x, ds.N(), ds.NumFeatures, "x2")
		require.NoError(t, err)
		s.Task.X = xn
		c := DefaultNIFTYConfig()
		c.SimCoeff, c.FeatureDrop, c.Lipschitz = 0.6, [2]float64{0.5, 0.5}, false
		tc := train.DefaultConfig()
		tc.Epochs = 1
		fit, err := fairness.Fit(context.Background(), c, cfg, s, tc)
		require.NoError(t, err)

		// The views of epoch 1, drawn as fit draws them (no edges dropped
		// for an MLP body: EdgeDrop is unused without propagation, but the
		// MLP is a BlockModel with no hops, so no draw is made either).
		rng := rand.New(rand.NewSource(c.Seed))
		d := ds.NumFeatures
		for v := range 2 {
			if c.EdgeDrop[v] > 0 {
				_, err := augment.DropEdges(ds.Graph, c.EdgeDrop[v], rng)
				require.NoError(t, err)
			}
		}
		v1 := perturbFeatures(x, d, 2, c.FeatureDrop[0], rng)
		v2 := perturbFeatures(x, d, 2, c.FeatureDrop[1], rng)
		augment.FlipColumn(v2, d, 2)
		body := bodyConfig(cfg, c.Hidden)
		z1, h1 := evalEncoder(t, ds, body, v1)
		z2, h2 := evalEncoder(t, ds, body, v2)
		// The projector and predictor as fit initialises them.
		lin := func(k, in, out int) []float64 {
			g := G.NewGraph()
			lc := layers.DefaultLinearConfig(in, out)
			lc.Dtype, lc.Seed = dt, c.Seed+int64(k)
			l, err := layers.NewLinear(g, nil, lc, nil)
			require.NoError(t, err)
			return testutil.ToF64(l.W.Value())
		}
		W := [4][]float64{lin(0, c.Hidden, c.ProjHidden), lin(1, c.ProjHidden, c.Hidden), lin(2, c.Hidden, c.Hidden), lin(3, c.Hidden, c.Hidden)}
		dims := [4][2]int{{c.Hidden, c.ProjHidden}, {c.ProjHidden, c.Hidden}, {c.Hidden, c.Hidden}, {c.Hidden, c.Hidden}}
		dense := func(k int, x []float64, relu bool) []float64 {
			in, out := dims[k][0], dims[k][1]
			y := make([]float64, out)
			for j := 0; j < out; j++ {
				for i := 0; i < in; i++ {
					y[j] += x[i] * W[k][i*out+j]
				}
				if relu && y[j] < 0 {
					y[j] = 0
				}
			}
			return y
		}
		var p, q [2][]float64
		hs := [2][]float64{h1, h2}
		for v := range 2 {
			for _, i := range ds.Split.Train {
				row := hs[v][i*c.Hidden : (i+1)*c.Hidden]
				pv := dense(1, dense(0, row, true), false)
				p[v] = append(p[v], pv...)
				q[v] = append(q[v], dense(3, dense(2, pv, true), false)...)
			}
		}
		sim := (naiveNegCos(q[0], p[1], c.Hidden) + naiveNegCos(q[1], p[0], c.Hidden)) / 2
		ce := func(z []float64) float64 {
			return opkit.MeanCE(z, ds.Labels, ds.Split.Train, 2)
		}
		lam := c.SimCoeff
		wantExtra := ce(z2) + 2*lam/(1-lam)*sim
		atol := 1e-9
		if dt == tensor.Float32 {
			atol = 1e-4
		}
		st := fit.Result.History[0]
		assert.InDelta(t, wantExtra, st.Extra, atol, "%v extra", dt)
		assert.InDelta(t, ce(z1), st.CE, atol, "%v: the trainer's CE reads view 1", dt)
	}
}

func TestFairGNNPartialSens(t *testing.T) {
	ds := biased(t, 150)
	s, cfg := setupFor(t, ds, "gcn", tensor.Float64, 1, false)
	sens := append([]int(nil), ds.Sens...)
	for i := range sens {
		if i%4 != 0 {
			sens[i] = -1
		}
	}
	s.Sens = sens
	c := DefaultFairGNNConfig()
	c.Estimator.Epochs = 50
	tc := train.DefaultConfig()
	tc.Epochs = 5
	fit, err := fairness.Fit(context.Background(), c, cfg, s, tc)
	require.NoError(t, err)
	right, total := 0, 0
	for i, v := range fit.SensScore {
		if sens[i] >= 0 {
			assert.Equal(t, float64(sens[i]), v)
			continue
		}
		require.True(t, v >= 0 && v <= 1)
		total++
		if (v > 0.5) == (ds.Sens[i] == 1) {
			right++
		}
	}
	// The generated graph's groups are homophilous: the estimator beats
	// chance on the nodes it never saw.
	assert.Greater(t, float64(right)/float64(total), 0.6)

	c.HardEstimates = true
	fit, err = fairness.Fit(context.Background(), c, cfg, s, tc)
	require.Error(t, err, "the same names twice in one graph")
	s2, cfg2 := setupFor(t, ds, "gcn", tensor.Float64, 1, false)
	s2.Sens = sens
	fit, err = fairness.Fit(context.Background(), c, cfg2, s2, tc)
	require.NoError(t, err)
	for _, v := range fit.SensScore {
		assert.True(t, v == 0 || v == 1)
	}

	// Errors: a non-binary attribute, one group unknown entirely.
	bad := append([]int(nil), ds.Sens...)
	bad[3] = 2
	s3, cfg3 := setupFor(t, ds, "gcn", tensor.Float64, 1, false)
	s3.Sens = bad
	_, err = fairness.Fit(context.Background(), c, cfg3, s3, tc)
	assert.ErrorContains(t, err, "want 0, 1 or −1")
}

func TestSpectralNormalisation(t *testing.T) {
	g := G.NewGraph()
	w := G.NewMatrix(g, tensor.Float64, G.WithShape(3, 2), G.WithName("w"), G.WithValue(testutil.Tensor(tensor.Float64, []float64{3, 0, 0, 4, 0, 0}, 3, 2)))
	b := G.NewMatrix(g, tensor.Float64, G.WithShape(1, 2), G.WithName("b"), G.WithValue(testutil.Tensor(tensor.Float64, []float64{5, 5}, 1, 2)))
	s := newSpectral(G.Nodes{w, b})
	s.normalize(30)
	// σ = 4: W becomes diag(3/4, 1); the bias is left alone.
	testutil.AllClose(t, "W", testutil.ToF64(w.Value()), []float64{0.75, 0, 0, 1, 0, 0}, 1e-9, 0)
	assert.Equal(t, []float64{5, 5}, testutil.ToF64(b.Value()))
}
