package fairtrain

import (
	"context"
	"fmt"
	"math"
	"math/rand"
	"testing"

	"github.com/fairmp/fairmp/graph"
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

// quickVGNN is FairVGNN with few masks and steps, for tests that train.
func quickVGNN() FairVGNNConfig {
	c := DefaultFairVGNNConfig()
	c.Masks, c.DiscriminatorSteps, c.ClassifierSteps, c.GeneratorSteps = 2, 1, 2, 1
	return c
}

// opGrad builds f on input nodes holding vals (of the given shapes) in
// dtype dt, reduces a non-scalar output to Σ w ⊙ out, and returns that
// scalar and its gradient with respect to each input in wrt.
func opGrad(t *testing.T, dt tensor.Dtype, vals [][]float64, shapes [][]int, wrt []int, w []float64, f func(in G.Nodes) (*G.Node, error)) (float64, [][]float64) {
	t.Helper()
	g := G.NewGraph()
	in := make(G.Nodes, len(vals))
	for k := range vals {
		in[k] = G.NewMatrix(g, dt, G.WithShape(shapes[k]...), G.WithName(string(rune('a'+k))), G.WithValue(testutil.Tensor(dt, vals[k], shapes[k]...)))
	}
	out, err := f(in)
	require.NoError(t, err)
	if !out.IsScalar() {
		wn := G.NewMatrix(g, dt, G.WithShape(out.Shape()...), G.WithName("w"), G.WithValue(testutil.Tensor(dt, w, out.Shape()...)))
		prod, err := G.HadamardProd(out, wn)
		require.NoError(t, err)
		out, err = G.Sum(prod)
		require.NoError(t, err)
	}
	var v G.Value
	G.Read(out, &v)
	var wrtNodes G.Nodes
	for _, k := range wrt {
		wrtNodes = append(wrtNodes, in[k])
	}
	grads, err := G.Grad(out, wrtNodes...)
	require.NoError(t, err)
	testutil.Run(t, g)
	var gs [][]float64
	for _, gr := range grads {
		gs = append(gs, testutil.ToF64(gr.Value()))
	}
	return testutil.ToF64(v)[0], gs
}

func sigma(x float64) float64 { return 1 / (1 + math.Exp(-x)) }

func TestFairVGNNOpsFiniteDifferences(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	n, d := 5, 3
	x := testutil.RandSlice(rng, n*d, -2, 2)
	m := testutil.RandSlice(rng, d, 0, 1)
	wx := testutil.RandSlice(rng, n*d, -1, 1)
	theta := testutil.RandSlice(rng, 2*4, -1.5, 1.5)
	noise := testutil.RandSlice(rng, 4, -2, 2)
	wk := testutil.RandSlice(rng, 4, -1, 1)
	a := testutil.RandSlice(rng, 6, -3, 3)
	tau := 0.7
	k := 4 // maskRows: a d × k weight, its rows scaled by m
	w := testutil.RandSlice(rng, d*k, -2, 2)
	ww := testutil.RandSlice(rng, d*k, -1, 1)

	naiveMask := func() float64 {
		s := 0.0
		for i := 0; i < n; i++ {
			for j := 0; j < d; j++ {
				s += wx[i*d+j] * x[i*d+j] * m[j]
			}
		}
		return s
	}
	naiveRows := func() float64 {
		s := 0.0
		for j := 0; j < d; j++ {
			for c := 0; c < k; c++ {
				s += ww[j*k+c] * w[j*k+c] * m[j]
			}
		}
		return s
	}
	naiveKeep := func(withNoise bool) func() float64 {
		return func() float64 {
			s := 0.0
			for j := 0; j < 4; j++ {
				z := theta[2*j] - theta[2*j+1]
				if withNoise {
					z = (z + noise[j]) / tau
				}
				s += wk[j] * sigma(z)
			}
			return s
		}
	}
	naiveHalf := func() float64 {
		s := 0.0
		for _, v := range a {
			e := sigma(v) - 0.5
			s += e * e
		}
		return s / float64(len(a))
	}
	for _, dt := range testutil.Dtypes {
		atol, rtol := testutil.Tol(dt)
		gtol := 1e-7
		if dt == tensor.Float32 {
			gtol = 2e-5
		}
		check := func(name string, got, want float64, gs [][]float64, nums ...[]float64) {
			t.Helper()
			if !testutil.Close(got, want, atol, rtol) {
				t.Errorf("%v %s: value %v, want %v", dt, name, got, want)
			}
			for k, num := range nums {
				testutil.AllClose(t, dt.String()+" "+name+" gradient", gs[k], num, gtol, 1e-4)
			}
		}
		// maskColumns: both inputs.
		v, gs := opGrad(t, dt, [][]float64{x, m}, [][]int{{n, d}, {1, d}}, []int{0, 1}, wx,
			func(in G.Nodes) (*G.Node, error) { return maskColumns(in[0], in[1]) })
		check("maskColumns", v, naiveMask(), gs, testutil.NumGrad(naiveMask, x, 1e-6), testutil.NumGrad(naiveMask, m, 1e-6))
		// maskRows: both inputs.
		v, gs = opGrad(t, dt, [][]float64{w, m}, [][]int{{d, k}, {1, d}}, []int{0, 1}, ww,
			func(in G.Nodes) (*G.Node, error) { return maskRows(in[0], in[1]) })
		check("maskRows", v, naiveRows(), gs, testutil.NumGrad(naiveRows, w, 1e-6), testutil.NumGrad(naiveRows, m, 1e-6))
		// keepProbs with noise and temperature, and without.
		v, gs = opGrad(t, dt, [][]float64{theta, noise}, [][]int{{4, 2}, {1, 4}}, []int{0}, wk,
			func(in G.Nodes) (*G.Node, error) { return keepProbs(in[0], in[1], tau) })
		check("keepProbs", v, naiveKeep(true)(), gs, testutil.NumGrad(naiveKeep(true), theta, 1e-6))
		v, gs = opGrad(t, dt, [][]float64{theta}, [][]int{{4, 2}}, []int{0}, wk,
			func(in G.Nodes) (*G.Node, error) { return keepProbs(in[0], nil, tau) })
		check("keepProbs (expected)", v, naiveKeep(false)(), gs, testutil.NumGrad(naiveKeep(false), theta, 1e-6))
		// halfMSE.
		v, gs = opGrad(t, dt, [][]float64{a}, [][]int{{6, 1}}, []int{0}, nil,
			func(in G.Nodes) (*G.Node, error) { return halfMSE(in[0]) })
		check("halfMSE", v, naiveHalf(), gs, testutil.NumGrad(naiveHalf, a, 1e-6))
	}
}

func TestFairVGNNOpErrors(t *testing.T) {
	g := G.NewGraph()
	x := G.NewMatrix(g, tensor.Float64, G.WithShape(4, 3), G.WithName("x"), G.WithInit(G.Zeroes()))
	m := G.NewMatrix(g, tensor.Float64, G.WithShape(1, 2), G.WithName("m"), G.WithInit(G.Zeroes()))
	th := G.NewMatrix(g, tensor.Float64, G.WithShape(3, 3), G.WithName("th"), G.WithInit(G.Zeroes()))
	_, err := maskColumns(x, m)
	assert.ErrorContains(t, err, "1 × d mask")
	_, err = maskRows(th, m)
	assert.ErrorContains(t, err, "1 × d mask")
	_, err = maskRows(nil, m)
	assert.ErrorContains(t, err, "nil node")
	_, err = keepProbs(th, nil, 1)
	assert.ErrorContains(t, err, "d × 2")
	_, err = keepProbs(x, nil, 0)
	assert.ErrorContains(t, err, "d × 2")
	_, err = halfMSE(x)
	assert.ErrorContains(t, err, "m × 1")
}

// hand builds a FairVGNN run on s without training it.
func handRun(t *testing.T, c FairVGNNConfig, s fairness.Setup, backbone layers.Config) (*vgnnRun, []int) {
	t.Helper()
	n, d := s.Task.X.Shape()[0], s.Task.X.Shape()[1]
	var known []int
	for i, v := range s.Sens {
		if v >= 0 {
			known = append(known, i)
		}
	}
	enc, err := NewEncoder(s.Task.Graph, s.Graph, bodyConfig(backbone, c.Hidden), s.Task.Classes, s.Task.Phase)
	require.NoError(t, err)
	r := &vgnnRun{cfg: c, task: s.Task, n: n, d: d, dt: s.Task.X.Dtype(), rng: rand.New(rand.NewSource(c.Seed)),
		model: &MaskedEncoder{enc: enc}}
	require.NoError(t, r.build(s, known, train.DefaultConfig().Adam))
	return r, known
}

// runLoss runs a phase's machine once, with the masters copied in, and
// returns its loss.
func runLoss(t *testing.T, p *vgnnPhase) float64 {
	t.Helper()
	for i, c := range p.copies {
		copyValue(c, p.masters[i])
	}
	require.NoError(t, p.m.RunAll())
	l, err := opkit.Scalar(*p.loss)
	require.NoError(t, err)
	p.m.Reset()
	return l
}

func TestFairVGNNLossesByHand(t *testing.T) {
	ds := biased(t, 40)
	for _, dt := range testutil.Dtypes {
		s, cfg := setupFor(t, ds, "gcn", dt, 5, true)
		sens := append([]int(nil), ds.Sens...)
		sens[3], sens[7] = -1, -1 // left out of the discriminator's loss
		s.Sens = sens
		c := DefaultFairVGNNConfig()
		c.Alpha, c.Ratio, c.Hidden, c.Masks, c.Tau = 0.7, 0.3, 6, 3, 0.8
		r, known := handRun(t, c, s, cfg)
		defer r.close()
		n, d := r.n, r.d

		// The generator's logits are the seed's first draws, and the
		// epoch's masks σ((θ0 − θ1 + l)/τ) with l the next logistic draws.
		rng := rand.New(rand.NewSource(c.Seed))
		theta := testutil.ToF64(layers.GlorotUniform(rng, dt, d, 2))
		require.Equal(t, theta, testutil.ToF64(r.model.gen.Value()))
		r.drawMasks()
		mean := make([]float64, d)
		var masks [][]float64
		for k := 0; k < c.Masks; k++ {
			mk := make([]float64, d)
			for j := range mk {
				u := rng.Float64()
				l := math.Log(u / (1 - u))
				mk[j] = sigma((theta[2*j] - theta[2*j+1] + l) / c.Tau)
				mean[j] += mk[j] / float64(c.Masks)
			}
			atol := 1e-12
			if dt == tensor.Float32 {
				atol = 1e-7
			}
			testutil.AllClose(t, "mask", testutil.ToF64(r.masks[k]), mk, atol, 1e-6)
			masks = append(masks, mk)
		}
		testutil.AllClose(t, "mask mean", r.keepMean, mean, 1e-12, 1e-12)
		r.drawNoise()

		lossD, lossC, lossG := runLoss(t, r.d0), runLoss(t, r.c0), runLoss(t, r.g0)

		// By hand, with the initial parameters: the discriminator is a
		// Hidden → 1 Linear from c.Seed with a zero bias.
		lc := layers.DefaultLinearConfig(c.Hidden, 1)
		lc.Dtype, lc.Seed = dt, c.Seed
		disc, err := layers.NewLinear(G.NewGraph(), nil, lc, nil)
		require.NoError(t, err)
		wd := testutil.ToF64(disc.W.Value())
		logit := func(h []float64, i int) float64 {
			a := 0.0
			for j := 0; j < c.Hidden; j++ {
				a += h[i*c.Hidden+j] * wd[j]
			}
			return a
		}
		masked := func(m []float64) []float64 {
			x := append([]float64(nil), ds.Features...)
			for i := 0; i < n; i++ {
				for j := 0; j < d; j++ {
					x[i*d+j] *= m[j]
				}
			}
			return x
		}
		body := bodyConfig(cfg, c.Hidden)
		var wantD, wantC float64
		for _, mk := range masks {
			z, h := evalEncoder(t, ds, body, masked(mk))
			bce := 0.0
			for _, i := range known {
				a := logit(h, i)
				bce += math.Max(a, 0) - float64(sens[i])*a + math.Log1p(math.Exp(-math.Abs(a)))
			}
			wantD += bce / float64(len(known)) / float64(c.Masks)
			wantC += opkit.MeanCE(z, ds.Labels, ds.Split.Train, 2) / float64(c.Masks)
		}
		var adv, pen float64
		for k := 0; k < c.Masks; k++ {
			l := testutil.ToF64(r.noise[k].Value())
			mk := make([]float64, d)
			for j := range mk {
				mk[j] = sigma((theta[2*j] - theta[2*j+1] + l[j]) / c.Tau)
				pen += (mk[j] - 1) * (mk[j] - 1) / float64(d) / float64(c.Masks)
			}
			_, h := evalEncoder(t, ds, body, masked(mk))
			for i := 0; i < n; i++ {
				e := sigma(logit(h, i)) - 0.5
				adv += e * e / float64(n) / float64(c.Masks)
			}
		}
		wantG := c.Alpha*adv + c.Ratio*pen
		atol := 1e-9
		if dt == tensor.Float32 {
			atol = 1e-4
		}
		assert.InDelta(t, wantD, lossD, atol, "%v discriminator", dt)
		assert.InDelta(t, wantC, lossC, atol, "%v classifier", dt)
		assert.InDelta(t, wantG, lossG, atol, "%v generator", dt)

		// The generator's loss as gorgonia differentiates it, through
		// the body and the two ops, against finite differences of the
		// run itself, with respect to the generator's logits and the
		// body's first weights (float64: float32 differences are noise).
		if dt == tensor.Float64 {
			p := r.g0
			require.NoError(t, zeroGrad(p.copies))
			runLoss(t, p)
			var wrt G.Nodes
			var grads [][]float64
			for _, gr := range p.groups {
				q := gr.nodes[0]
				g, err := q.Grad()
				require.NoError(t, err)
				wrt = append(wrt, q)
				grads = append(grads, append([]float64(nil), testutil.ToF64(g)...)) // later runs add to it
			}
			for k, q := range wrt {
				master := p.masters[slicesIndex(p.copies, q)]
				vals := master.Value().(*tensor.Dense).Data().([]float64)
				num := testutil.NumGrad(func() float64 { return runLoss(t, p) }, vals, 1e-6)
				testutil.AllClose(t, "generator loss gradient of "+master.Name(), grads[k], num, 1e-7, 1e-5)
			}
		}
	}
}

// slicesIndex returns the position of n in ns.
func slicesIndex(ns G.Nodes, n *G.Node) int {
	for i, m := range ns {
		if m == n {
			return i
		}
	}
	return -1
}

func TestFairVGNNClampByHand(t *testing.T) {
	for _, dt := range testutil.Dtypes {
		g := G.NewGraph()
		w := G.NewMatrix(g, dt, G.WithShape(3, 2), G.WithName("w"), G.WithValue(testutil.Tensor(dt, []float64{0.5, -2, 0.1, 0.3, -0.7, 0.9}, 3, 2)))
		clampRows(G.Nodes{w}, []float64{0.25, 0.2, 0.5}, []int{1, 2})
		// Row 0 is not among the channels; row 1 is clamped to ±0.2, row 2
		// to ±0.5.
		testutil.AllClose(t, dt.String(), testutil.ToF64(w.Value()), []float64{0.5, -2, 0.1, 0.2, -0.5, 0.5}, 1e-7, 0)
	}
	// The channels most correlated with the group: column 0 is the group
	// (|r| = 1), column 2 its negation plus noise, column 1 constant
	// (r = 0); the unknown node (its row would break column 0) is left out.
	x := []float64{
		0, 5, 1.0,
		1, 5, -1.2,
		0, 5, 0.7,
		1, 5, -0.9,
		7, 5, 9,
	}
	sens := []int{0, 1, 0, 1, -1}
	assert.Equal(t, []int{0, 2, 1}, topCorrelated(x, 5, 3, sens, 3))
	assert.Equal(t, []int{0}, topCorrelated(x, 5, 3, sens, 1))
}

// fakeBody is a model whose only learnable is not an input matrix.
type fakeBody struct{ p *G.Node }

func (f fakeBody) Forward(x *G.Node) (*G.Node, error) { return x, nil }
func (f fakeBody) Learnables() G.Nodes                { return G.Nodes{f.p} }

// twoReaders is a BlockModel that reads the features twice, as
// GraphSAGE does (x·Ws + (Ãx)·Wn), then applies a hidden layer Wh.
type twoReaders struct{ ws, wn, wh *G.Node }

func (m twoReaders) Forward(x *G.Node) (*G.Node, error) { return layers.Forward(m, x) }
func (m twoReaders) Learnables() G.Nodes                { return G.Nodes{m.ws, m.wn, m.wh} }
func (m twoReaders) Matrix() *graph.Matrix              { return nil }
func (m twoReaders) Compute(f layers.Flow, x layers.Value) (layers.Value, error) {
	ax, err := f.Propagate(x, layers.Hop{})
	if err != nil {
		return layers.Value{}, err
	}
	self, err := f.Dense(x, m.ws, nil, layers.ReLU())
	if err != nil {
		return layers.Value{}, err
	}
	nbr, err := f.Dense(ax, m.wn, nil, layers.ReLU())
	if err != nil {
		return layers.Value{}, err
	}
	h, err := f.Combine([]float64{1, 1}, self, nbr)
	if err != nil {
		return layers.Value{}, err
	}
	return f.Dense(h, m.wh, nil, layers.Activation{})
}

func TestFairVGNNInputWeights(t *testing.T) {
	// Both matrices that read the (propagated) features are clamped, the
	// hidden layer's is not, though it has as many rows.
	g0 := G.NewGraph()
	mat := func(name string) *G.Node {
		return G.NewMatrix(g0, tensor.Float64, G.WithShape(3, 3), G.WithName(name), G.WithInit(G.Zeroes()))
	}
	tr := twoReaders{mat("ws"), mat("wn"), mat("wh")}
	ws, err := inputWeights(tr, 3)
	require.NoError(t, err)
	assert.Equal(t, G.Nodes{tr.ws, tr.wn}, ws)

	ds := biased(t, 40)
	for _, kind := range []string{"mlp", "gcn", "sgc", "appnp", "gat", "jknet", flatkind.Name} {
		s, cfg := setupFor(t, ds, kind, tensor.Float64, 1, false)
		m, err := layers.Build(s.Task.Graph, ds.Graph, cfg, s.Task.Phase)
		require.NoError(t, err)
		ws, err := inputWeights(m, ds.NumFeatures)
		require.NoError(t, err, kind)
		// Every library kind's first learnable is its first layer's
		// weight, the one that reads the features.
		assert.Equal(t, G.Nodes{m.Learnables()[0]}, ws, kind)
	}
	g := G.NewGraph()
	p := G.NewMatrix(g, tensor.Float64, G.WithShape(4, 4), G.WithName("p"), G.WithInit(G.Zeroes()))
	_, err = inputWeights(fakeBody{p}, 3)
	assert.ErrorContains(t, err, "set Clip to 0")
}

func TestFairVGNNClampInFit(t *testing.T) {
	ds := biased(t, 80)
	for _, topK := range []int{0, 2} {
		s, cfg := setupFor(t, ds, "gcn", tensor.Float64, 3, false)
		c := quickVGNN()
		c.FeatureMask, c.Clip, c.ClipTopK = false, 0.05, topK
		tc := train.DefaultConfig()
		tc.Epochs, tc.Adam.LR, tc.Select = 3, 0.05, train.SelectLast
		fit, err := fairness.Fit(context.Background(), c, cfg, s, tc)
		require.NoError(t, err)
		enc := fit.Model.(*MaskedEncoder)
		assert.Nil(t, enc.Generator(), "no generator without a feature mask")
		w := testutil.ToF64(enc.Encoder().Body().Learnables()[0].Value())
		d := ds.NumFeatures
		k := len(w) / d
		clamped := map[int]bool{}
		for j := 0; j < d; j++ {
			clamped[j] = topK == 0
		}
		for _, j := range topCorrelated(ds.Features, ds.N(), d, ds.Sens, topK) {
			clamped[j] = true
		}
		over := 0
		for j := 0; j < d; j++ {
			for _, v := range w[j*k : (j+1)*k] {
				if clamped[j] {
					require.LessOrEqual(t, math.Abs(v), c.Clip, "channel %d", j)
				} else if math.Abs(v) > c.Clip {
					over++
				}
			}
		}
		if topK > 0 {
			assert.Positive(t, over, "channels outside the top %d are not clamped", topK)
		}
	}
}

func TestFairVGNNValidate(t *testing.T) {
	require.NoError(t, DefaultFairVGNNConfig().Validate())
	for field, mut := range map[string]func(*FairVGNNConfig){
		"Alpha":              func(c *FairVGNNConfig) { c.Alpha = -1 },
		"Ratio":              func(c *FairVGNNConfig) { c.Ratio = math.Inf(1) },
		"Hidden":             func(c *FairVGNNConfig) { c.Hidden = 0 },
		"Masks":              func(c *FairVGNNConfig) { c.Masks = 0 },
		"Tau":                func(c *FairVGNNConfig) { c.Tau = 0 },
		"DiscriminatorSteps": func(c *FairVGNNConfig) { c.DiscriminatorSteps = -1 },
		"GeneratorSteps":     func(c *FairVGNNConfig) { c.GeneratorSteps = -2 },
		"ClassifierSteps":    func(c *FairVGNNConfig) { c.ClassifierSteps = 0 },
		"Clip":               func(c *FairVGNNConfig) { c.Clip = math.NaN() },
		"ClipTopK":           func(c *FairVGNNConfig) { c.ClipTopK = -1 },
		"ClassifierAdam":     func(c *FairVGNNConfig) { c.ClassifierAdam.LR = 0 },
		"GeneratorAdam":      func(c *FairVGNNConfig) { c.GeneratorAdam.Beta1 = 1 },
		"DiscriminatorAdam":  func(c *FairVGNNConfig) { c.DiscriminatorAdam.Eps = -1 },
	} {
		c := DefaultFairVGNNConfig()
		mut(&c)
		err := c.Validate()
		require.Error(t, err, field)
		assert.Contains(t, err.Error(), field)
		// Fit reports it with the method's name.
		ds := biased(t, 30)
		s, cfg := setupFor(t, ds, "mlp", tensor.Float64, 1, false)
		_, err = fairness.Fit(context.Background(), c, cfg, s, train.DefaultConfig())
		assert.ErrorContains(t, err, "fairvgnn: "+field)
	}
}

func TestFairVGNNErrors(t *testing.T) {
	ds := biased(t, 40)
	s, cfg := setupFor(t, ds, "gcn", tensor.Float64, 1, false)
	bad := append([]int(nil), ds.Sens...)
	bad[2] = 2
	s.Sens = bad
	_, err := fairness.Fit(context.Background(), quickVGNN(), cfg, s, train.DefaultConfig())
	assert.ErrorContains(t, err, "want 0, 1 or −1")
	s.Sens = ds.Sens[:10]
	_, err = fairness.Fit(context.Background(), quickVGNN(), cfg, s, train.DefaultConfig())
	assert.ErrorContains(t, err, "one per node")
	tc := train.DefaultConfig()
	tc.Epochs = 0
	s.Sens = ds.Sens
	_, err = fairness.Fit(context.Background(), quickVGNN(), cfg, s, tc)
	assert.ErrorContains(t, err, "Epochs")
}

func TestFairVGNNDeterministicAndSeeded(t *testing.T) {
	ds := biased(t, 60)
	for _, dt := range testutil.Dtypes {
		run := func(seed int64) [][]float64 {
			s, cfg := setupFor(t, ds, "gcn", dt, 4, false)
			sens := append([]int(nil), ds.Sens...)
			for i := 0; i < len(sens); i += 4 {
				sens[i] = -1
			}
			s.Sens = sens
			tc := train.DefaultConfig()
			tc.Epochs = 4
			fit, err := fairness.Fit(context.Background(), quickVGNN().WithSeed(seed), cfg, s, tc)
			require.NoError(t, err)
			return params(fit.Model)
		}
		a, b := run(1), run(1)
		assert.Equal(t, a, b, "%v: reruns with one seed must be bit-identical", dt)
		assert.NotEqual(t, a, run(2), "%v: another seed draws another generator and other masks", dt)
	}
}

func TestFairVGNNModel(t *testing.T) {
	ds := biased(t, 60)
	s, cfg := setupFor(t, ds, "gcn", tensor.Float64, 2, true)
	tc := train.DefaultConfig()
	tc.Epochs, tc.Adam.LR = 5, 0.02
	c := quickVGNN()
	c.GeneratorAdam.LR = 0.05
	fit, err := fairness.Fit(context.Background(), c, cfg, s, tc)
	require.NoError(t, err)
	m := fit.Model.(*MaskedEncoder)
	theta := testutil.ToF64(m.Generator().Value())
	keep := m.Keep()
	for j, p := range keep {
		assert.InDelta(t, sigma(theta[2*j]-theta[2*j+1]), p, 1e-12)
	}
	assert.Len(t, m.Learnables(), len(m.Encoder().Learnables())+1)
	z, err := train.Logits(m, s.Task)
	require.NoError(t, err)

	// The model is the encoder on the features scaled by Keep: the same
	// logits from a copy (Rebuild) fed x ⊙ p.
	g := G.NewGraph()
	r, err := m.Rebuild(g, ds.Graph, nil)
	require.NoError(t, err)
	x := append([]float64(nil), ds.Features...)
	d := ds.NumFeatures
	for i := range x {
		x[i] *= keep[i%d]
	}
	xn, err := train.FeatureNode(g, tensor.Float64, x, ds.N(), d, "x")
	require.NoError(t, err)
	out, err := r.(*MaskedEncoder).Encoder().Forward(xn)
	require.NoError(t, err)
	var v G.Value
	G.Read(out, &v)
	testutil.Run(t, g)
	testutil.AllClose(t, "logits", testutil.ToF64(v), testutil.ToF64(z), 1e-12, 1e-10)
	// The copy predicts as the original.
	xn2, err := train.FeatureNode(g, tensor.Float64, ds.Features, ds.N(), d, "x2")
	require.NoError(t, err)
	task2 := &train.Task{Graph: g, X: xn2, Labels: ds.Labels, Train: ds.Split.Train, Classes: 2}
	z2, err := train.Logits(r, task2)
	require.NoError(t, err)
	testutil.AllClose(t, "rebuilt logits", testutil.ToF64(z2), testutil.ToF64(z), 1e-12, 1e-10)
	_, err = m.Rebuild(g, ds.Graph, nil)
	assert.Error(t, err, "a second copy in the same graph")
}

func TestFairVGNNEveryBackbone(t *testing.T) {
	ds := biased(t, 80)
	for _, kind := range []string{"mlp", "gcn", "sgc", "appnp", "gat", "jknet", flatkind.Name} {
		for _, dt := range testutil.Dtypes {
			s, cfg := setupFor(t, ds, kind, dt, 2, false)
			tc := train.DefaultConfig()
			tc.Epochs = 3
			c := quickVGNN()
			c.ClipTopK = 3
			fit, err := fairness.Fit(context.Background(), c, cfg, s, tc)
			require.NoError(t, err, "%s %v", kind, dt)
			require.Len(t, fit.Result.History, 3)
			p, err := train.Predict(fit.Model, s.Task, nil)
			require.NoError(t, err)
			for _, v := range p.Probs {
				require.False(t, math.IsNaN(v), "%s %v", kind, dt)
			}
		}
	}
}

func TestFairVGNNTrains(t *testing.T) {
	// On the generated biased graph, the classifier's loss falls and the
	// generator moves the mask: a property, not an accuracy.
	ds := biased(t, 200)
	s, cfg := setupFor(t, ds, "gcn", tensor.Float64, 1, false)
	tc := train.DefaultConfig()
	tc.Epochs, tc.Adam.LR = 15, 0.01
	c := quickVGNN()
	c.ClassifierAdam.LR, c.GeneratorAdam.LR = 0.01, 0.05
	var first, last float64
	c.Progress = func(e int, _, cl, _ float64) {
		if e == 1 {
			first = cl
		}
		last = cl
	}
	fit, err := fairness.Fit(context.Background(), c, cfg, s, tc)
	require.NoError(t, err)
	assert.Less(t, last, first)
	// The generator started from the seed's Glorot draws.
	m := fit.Model.(*MaskedEncoder)
	d := ds.NumFeatures
	theta := testutil.ToF64(layers.GlorotUniform(rand.New(rand.NewSource(c.Seed)), tensor.Float64, d, 2))
	moved := 0.0
	for j, p := range m.Keep() {
		moved = math.Max(moved, math.Abs(p-sigma(theta[2*j]-theta[2*j+1])))
	}
	assert.Greater(t, moved, 0.01)
}

func TestFairVGNNFoldWeight(t *testing.T) {
	// The bodies whose first operation is the features times a weight,
	// then propagated, fold (GCN, JKNet: their first convolution); the
	// others read the masked features (MLP, SGC, whose propagation of the
	// features layers.Forward already folds, APPNP, GAT, a flat kind), as
	// does a GCN with dropout on its input.
	ds := biased(t, 40)
	folds := map[string]bool{"gcn": true, "jknet": true}
	for _, kind := range []string{"mlp", "gcn", "sgc", "appnp", "gat", "jknet", flatkind.Name} {
		s, cfg := setupFor(t, ds, kind, tensor.Float64, 1, false)
		m, err := layers.Build(s.Task.Graph, ds.Graph, cfg, s.Task.Phase)
		require.NoError(t, err)
		w := foldWeight(m, ds.NumFeatures)
		// The views share their dropout masks on the bodies written in
		// Dense, Propagate, Activate and Dropout alone.
		assert.Equal(t, kind == "gcn" || kind == "mlp" || kind == "sgc", viewFlowable(m, ds.NumFeatures), kind)
		if folds[kind] {
			assert.Equal(t, m.Learnables()[0], w, kind)
		} else {
			assert.Nil(t, w, kind)
		}
	}
	s, cfg := setupFor(t, ds, "gcn", tensor.Float64, 1, false)
	gc := cfg.(layers.GCNConfig)
	gc.InputDropout = 0.2
	m, err := layers.Build(s.Task.Graph, ds.Graph, gc, s.Task.Phase)
	require.NoError(t, err)
	assert.Nil(t, foldWeight(m, ds.NumFeatures), "input dropout")
	assert.Nil(t, foldWeight(fakeBody{m.Learnables()[0]}, ds.NumFeatures), "not a BlockModel")
}

// trainVGNN trains FairVGNN for tc's epochs with the views folded or not
// and sharing their dropout masks or not, and returns the model's
// parameters and each epoch's losses.
func trainVGNN(t *testing.T, c FairVGNNConfig, s fairness.Setup, backbone layers.Config, tc train.Config, unfolded, unshared bool) ([][]float64, []float64) {
	t.Helper()
	n, d := s.Task.X.Shape()[0], s.Task.X.Shape()[1]
	var known []int
	for i, v := range s.Sens {
		if v >= 0 {
			known = append(known, i)
		}
	}
	enc, err := NewEncoder(s.Task.Graph, s.Graph, bodyConfig(backbone, c.Hidden), s.Task.Classes, s.Task.Phase)
	require.NoError(t, err)
	r := &vgnnRun{cfg: c, task: s.Task, n: n, d: d, dt: s.Task.X.Dtype(), rng: rand.New(rand.NewSource(c.Seed)),
		model: &MaskedEncoder{enc: enc}, unfolded: unfolded, unshared: unshared}
	require.NoError(t, r.build(s, known, tc.Adam))
	defer r.close()
	kind := layers.BaseOf(backbone).Name
	for _, p := range []*vgnnPhase{r.d0, r.c0, r.g0} {
		require.Equal(t, unfolded || kind == "mlp" || kind == "sgc", p.fold == nil, "%s unfolded %v", kind, unfolded)
		require.Equal(t, !unshared && kind != "jknet", p.flow, "%s unshared %v", kind, unshared)
	}
	res, err := r.train(context.Background(), tc)
	require.NoError(t, err)
	var losses []float64
	for _, st := range res.History {
		losses = append(losses, st.CE, st.Extra)
	}
	return params(r.model), losses
}

func TestFairVGNNFoldMatchesUnfolded(t *testing.T) {
	// Folding the first propagation, (ÃX)·(m ⊙ W) for Ã·((X ⊙ m)·W),
	// changes the order of the sums and nothing else: the same draws
	// (masks, noise, dropout), the same losses and parameters to
	// rounding, with and without a learned mask, with dropout.
	ds := biased(t, 60)
	for _, dt := range testutil.Dtypes {
		for _, kind := range []string{"gcn", "jknet"} {
			for _, mask := range []bool{true, false} {
				s, cfg := setupFor(t, ds, kind, dt, 3, false)
				c := quickVGNN()
				c.FeatureMask = mask
				c.GeneratorAdam.LR, c.ClassifierAdam.LR = 0.05, 0.01
				tc := train.DefaultConfig()
				tc.Epochs, tc.Adam.LR, tc.Select = 4, 0.01, train.SelectLast
				pf, lf := trainVGNN(t, c, s, cfg, tc, false, false)
				s, cfg = setupFor(t, ds, kind, dt, 3, false)
				pu, lu := trainVGNN(t, c, s, cfg, tc, true, false)
				tol := 1e-11 // measured: 3e-16 (float64), 9e-8 (float32)
				if dt == tensor.Float32 {
					tol = 1e-5
				}
				name := fmt.Sprintf("%v %s mask %v", dt, kind, mask)
				testutil.AllClose(t, name+" losses", lf, lu, tol, tol)
				require.Len(t, pf, len(pu))
				for i := range pf {
					testutil.AllClose(t, name+" parameters", pf[i], pu[i], tol, tol)
				}
			}
		}
	}
}

func TestFairVGNNSharedDropoutBitIdentical(t *testing.T) {
	// The views sharing one dropout mask per step (a viewFlow) train the
	// model layers.Forward's views do, bit for bit: the same draws, the
	// same ops, folded or not, for the bodies the flow runs.
	ds := biased(t, 60)
	for _, dt := range testutil.Dtypes {
		for _, kind := range []string{"gcn", "mlp", "sgc"} {
			for _, unfolded := range []bool{false, true} {
				s, cfg := setupFor(t, ds, kind, dt, 3, false)
				if kind == "mlp" { // dropout on the masked features too
					k, err := layers.KindOfConfig(cfg)
					require.NoError(t, err)
					cfg, err = k.Override(cfg, map[string]any{"input_dropout": 0.2})
					require.NoError(t, err)
				}
				c := quickVGNN()
				c.GeneratorAdam.LR = 0.05
				tc := train.DefaultConfig()
				tc.Epochs, tc.Adam.LR, tc.Select = 3, 0.01, train.SelectLast
				ps, ls := trainVGNN(t, c, s, cfg, tc, unfolded, false)
				s2, _ := setupFor(t, ds, kind, dt, 3, false)
				pu, lu := trainVGNN(t, c, s2, cfg, tc, unfolded, true)
				assert.Equal(t, lu, ls, "%v %s unfolded %v: losses", dt, kind, unfolded)
				assert.Equal(t, pu, ps, "%v %s unfolded %v: parameters", dt, kind, unfolded)
			}
		}
	}
}

func TestFairVGNNSharedDropoutDrawsOncePerStep(t *testing.T) {
	// A GCN body has one dropout; its mask is drawn once per step of a
	// phase, however many views the step runs.
	ds := biased(t, 40)
	s, cfg := setupFor(t, ds, "gcn", tensor.Float64, 3, false)
	c := quickVGNN()
	c.Masks, c.DiscriminatorSteps, c.ClassifierSteps, c.GeneratorSteps = 4, 2, 3, 1
	r, _ := handRun(t, c, s, cfg)
	defer r.close()
	for e := 1; e <= 2; e++ {
		_, err := r.epoch(e)
		require.NoError(t, err)
	}
	for _, v := range []struct {
		p     *vgnnPhase
		steps int
	}{{r.d0, c.DiscriminatorSteps}, {r.c0, c.ClassifierSteps}, {r.g0, c.GeneratorSteps}} {
		require.True(t, v.p.flow)
		require.Len(t, v.p.drops, 1)
		assert.Equal(t, 2*v.steps, v.p.drops[0].drawn)
	}
}

func TestFairVGNNPackedDropoutMask(t *testing.T) {
	// The shared dropout keeps its mask as bytes: applying it gives
	// opkit.Dropout's x·mask bit for bit (−0 for a dropped negative, NaN
	// for a dropped infinity), at every rate, in both dtypes.
	x := []float64{1.5, -2.25, 0, math.Copysign(0, -1), math.Inf(1), math.Inf(-1), math.NaN(), 3e-310}
	for len(x) < 200 {
		x = append(x, float64(len(x)%13)-6.5)
	}
	for _, rate := range []float64{0.1, 0.3, 0.5, 0.9} {
		s := &sharedDrop{rate: rate, seed: 7, rng: rand.New(rand.NewSource(7))}
		want64 := make([]float64, len(x))
		opkit.Dropout(rand.New(rand.NewSource(7)), rate, make([]float64, len(x)), x, want64)
		s.draw(tensor.Float64, len(x))
		op := &viewDropOp{s: s, masked: true}
		out := tensor.New(tensor.WithShape(len(x)), tensor.Of(tensor.Float64))
		require.NoError(t, op.apply(out, tensor.New(tensor.WithShape(len(x)), tensor.WithBacking(x))))
		for i, v := range out.Data().([]float64) {
			assert.Equal(t, math.Float64bits(want64[i]), math.Float64bits(v), "float64 rate %v element %d", rate, i)
		}

		x32 := make([]float32, len(x))
		for i, v := range x {
			x32[i] = float32(v)
		}
		s32 := &sharedDrop{rate: rate, seed: 7, rng: rand.New(rand.NewSource(7))}
		want32 := make([]float32, len(x))
		opkit.Dropout(rand.New(rand.NewSource(7)), rate, make([]float32, len(x)), x32, want32)
		s32.draw(tensor.Float32, len(x))
		op32 := &viewDropOp{s: s32, masked: true}
		out32 := tensor.New(tensor.WithShape(len(x)), tensor.Of(tensor.Float32))
		require.NoError(t, op32.apply(out32, tensor.New(tensor.WithShape(len(x)), tensor.WithBacking(x32))))
		for i, v := range out32.Data().([]float32) {
			assert.Equal(t, math.Float32bits(want32[i]), math.Float32bits(v), "float32 rate %v element %d", rate, i)
		}
	}
}
