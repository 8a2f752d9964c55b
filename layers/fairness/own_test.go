package fairness_test

// A user's own method of each stage, declared outside the library's
// packages (this is package fairness_test) as a user would: one type and
// one MustRegister line each. The test then finds them through the
// registry beside the library's, and runs each through the entry point
// of its stage.

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/fairmp/fairmp/graph"
	"github.com/fairmp/fairmp/graph/datasets"
	"github.com/fairmp/fairmp/layers"
	"github.com/fairmp/fairmp/layers/fairness"
	"github.com/fairmp/fairmp/layers/train"
)

// groupCentre is a pre-processing method: it subtracts each group's mean
// from the features of its members (the graph is kept).
type groupCentre struct{}

func (groupCentre) Name() string    { return "group-centre" }
func (groupCentre) Validate() error { return nil }
func (groupCentre) Debias(ctx context.Context, g *graph.Graph, x []float64, d int, sens []int) (*fairness.Debiased, error) {
	n := len(sens)
	if len(x) != n*d {
		return nil, fmt.Errorf("group-centre: %d features for %d nodes × %d columns", len(x), n, d)
	}
	mean := map[int][]float64{}
	count := map[int]float64{}
	for i, s := range sens {
		if mean[s] == nil {
			mean[s] = make([]float64, d)
		}
		for j := 0; j < d; j++ {
			mean[s][j] += x[i*d+j]
		}
		count[s]++
	}
	out := make([]float64, len(x))
	for i, s := range sens {
		for j := 0; j < d; j++ {
			out[i*d+j] = x[i*d+j] - mean[s][j]/count[s]
		}
	}
	return &fairness.Debiased{Graph: g, Features: out}, nil
}

// logitNorm is an in-training method: it adds Weight · mean(logits²) to
// the loss.
type logitNorm struct{ W float64 }

func (m logitNorm) Name() string { return "logit-norm" }
func (m logitNorm) Validate() error {
	if m.W < 0 {
		return fmt.Errorf("W = %v, want >= 0", m.W)
	}
	return nil
}
func (m logitNorm) Weight() float64                      { return m.W }
func (m logitNorm) WithWeight(w float64) fairness.Method { m.W = w; return m }
func (m logitNorm) Apply(tc train.Config, task *train.Task, sens []int) (train.Config, error) {
	tc.ExtraLoss = func(logits *G.Node) (*G.Node, error) {
		sq, err := G.Square(logits)
		if err != nil {
			return nil, err
		}
		mean, err := G.Mean(sq)
		if err != nil {
			return nil, err
		}
		return G.Mul(mean, G.NewConstant(m.W))
	}
	return tc, nil
}

// halfEpochs is an architecture: it trains the backbone for half the
// epochs it is given, with the last epoch's parameters.
type halfEpochs struct{}

func (halfEpochs) Name() string    { return "half-epochs" }
func (halfEpochs) Validate() error { return nil }
func (halfEpochs) Fit(ctx context.Context, backbone layers.Config, s fairness.Setup, tc train.Config) (*fairness.Fitted, error) {
	m, err := layers.Build(s.Task.Graph, s.Graph, backbone, s.Task.Phase)
	if err != nil {
		return nil, err
	}
	tc.Epochs = max(tc.Epochs/2, 1)
	tc.Select = train.SelectLast
	res, err := train.Fit(context.Background(), m, s.Task, tc)
	if err != nil {
		return nil, err
	}
	return &fairness.Fitted{Model: m, Result: res}, nil
}

// everyonePositive is a post-processing method whose rule selects every
// node (parity by construction, a trivially fair rule).
type everyonePositive struct{}

func (everyonePositive) Name() string    { return "everyone-positive" }
func (everyonePositive) Validate() error { return nil }
func (everyonePositive) Post(s fairness.Scores) (fairness.Decider, error) {
	if s.Classes != 2 {
		return nil, fmt.Errorf("everyone-positive: %d classes, want 2", s.Classes)
	}
	return allOnes{}, nil
}

type allOnes struct{}

func (allOnes) Decide(probs []float64, sens []int, seed int64) ([]int, error) {
	out := make([]int, len(sens))
	for i := range out {
		out[i] = 1
	}
	return out, nil
}

var _ = fairness.MustRegister(groupCentre{}, logitNorm{W: 0.1}, halfEpochs{}, everyonePositive{})

func TestOwnMethodOfEachStage(t *testing.T) {
	for name, want := range map[string]fairness.Stage{
		"group-centre":      fairness.StagePre,
		"logit-norm":        fairness.StageLoss,
		"half-epochs":       fairness.StageArchitecture,
		"everyone-positive": fairness.StagePost,
	} {
		m, err := fairness.Lookup(name)
		require.NoError(t, err, name)
		st, err := fairness.StageOf(m)
		require.NoError(t, err)
		assert.Equal(t, want, st, name)
		assert.Contains(t, fairness.Names(want), name)
		assert.NotContains(t, fairness.Names(want+1), name)
	}
	// Listed by stage, then in registration order.
	assert.Equal(t, []string{"group-centre", "logit-norm", "half-epochs", "everyone-positive"}, fairness.Names())

	cfg := datasets.DefaultSyntheticConfig()
	cfg.N, cfg.Seed = 120, 3
	ds, err := datasets.Synthetic(cfg)
	require.NoError(t, err)

	// Pre: the graph and features it returns are what the model trains on.
	pre, _ := fairness.Lookup("group-centre")
	out, err := pre.(fairness.Pre).Debias(context.Background(), ds.Graph, ds.Features, ds.NumFeatures, ds.Sens)
	require.NoError(t, err)
	for g := 0; g < 2; g++ {
		var sum float64
		for i, s := range ds.Sens {
			if s == g {
				sum += out.Features[i*ds.NumFeatures]
			}
		}
		assert.InDelta(t, 0, sum, 1e-9, "group %d's mean of column 0 after group-centre", g)
	}

	task := func(x []float64) fairness.Setup {
		g := G.NewGraph()
		xn, err := train.FeatureNode(g, tensor.Float64, x, ds.N(), ds.NumFeatures, "x")
		require.NoError(t, err)
		tk := &train.Task{Graph: g, X: xn, Labels: ds.Labels, Train: ds.Split.Train, Val: ds.Split.Val, Classes: 2, Phase: layers.NewPhase()}
		return fairness.NewSetup(ds.Graph, tk, ds.Sens)
	}
	backbone := layers.DefaultGCNConfig(ds.NumFeatures, 2)
	tc := train.DefaultConfig()
	tc.Epochs = 6

	// Loss: Fit trains the backbone with its term; with weight 0 the
	// term is 0 and the parameters are plain training's.
	loss, _ := fairness.Lookup("logit-norm")
	fitWith := func(m fairness.Method) (*fairness.Fitted, fairness.Setup) {
		s := task(out.Features)
		f, err := fairness.Fit(context.Background(), m, backbone, s, tc)
		require.NoError(t, err)
		return f, s
	}
	plain, _ := fitWith(nil)
	zero, _ := fitWith(loss.(fairness.Weighted).WithWeight(0))
	weighted, _ := fitWith(loss)
	assert.Equal(t, values(plain.Model), values(zero.Model))
	assert.NotEqual(t, values(plain.Model), values(weighted.Model))
	assert.Greater(t, weighted.Result.History[0].Extra, 0.0)

	// Architecture: Fit hands the training to the method.
	arch, _ := fairness.Lookup("half-epochs")
	f, s := fitWith(arch)
	assert.Equal(t, 3, f.Result.Epochs)
	p, err := train.Predict(f.Model, s.Task, nil)
	require.NoError(t, err)

	// Post: fitted on validation scores, decides every node.
	post, _ := fairness.Lookup("everyone-positive")
	d, err := post.(fairness.Post).Post(fairness.Scores{Probs: p.Probs, Classes: 2, Labels: ds.Labels, Sens: ds.Sens, Val: ds.Split.Val})
	require.NoError(t, err)
	dec, err := d.Decide(p.Probs, ds.Sens, 1)
	require.NoError(t, err)
	assert.Len(t, dec, ds.N())

	// Fit refuses the stages it does not run, naming them.
	_, err = fairness.Fit(context.Background(), pre, backbone, task(ds.Features), tc)
	assert.ErrorContains(t, err, "group-centre is a pre method")
	_, err = fairness.Fit(context.Background(), post, backbone, task(ds.Features), tc)
	assert.ErrorContains(t, err, "everyone-positive is a post method")
}

func values(m layers.Model) [][]float64 {
	var out [][]float64
	for _, p := range m.Learnables() {
		d := p.Value().(*tensor.Dense)
		out = append(out, append([]float64(nil), d.Data().([]float64)...))
	}
	return out
}

// twoStages implements the interfaces of two stages.
type twoStages struct{ groupCentre }

func (twoStages) Name() string { return "two-stages" }
func (twoStages) Post(fairness.Scores) (fairness.Decider, error) {
	return allOnes{}, nil
}

type noStage struct{}

func (noStage) Name() string    { return "no-stage" }
func (noStage) Validate() error { return nil }

func TestRegisterRefuses(t *testing.T) {
	for _, c := range []struct {
		m    fairness.Method
		want string
	}{
		{nil, "nil method"},
		{groupCentre{}, `method "group-centre" is already registered`},
		{noStage{}, "implements no stage's interface"},
		{twoStages{}, "implements the interfaces of 2 stages (pre, post)"},
		{logitNorm{W: -1}, "its defaults do not validate: W = -1"},
	} {
		err := fairness.Register(c.m)
		assert.ErrorContains(t, err, c.want)
	}
	// A name Lookup and the commands cannot take.
	err := fairness.Register(renamed{"Bad Name"})
	assert.ErrorContains(t, err, `method name "Bad Name", want lower-case letters`)
	_, err = fairness.Lookup("nope")
	assert.ErrorIs(t, err, fairness.ErrUnknownMethod)
	assert.ErrorContains(t, err, "want one of group-centre, logit-norm, half-epochs, everyone-positive")
	assert.Equal(t, "in-training", fairness.StageLoss.String())
}

type renamed struct{ n string }

func (r renamed) Name() string    { return r.n }
func (r renamed) Validate() error { return nil }
func (r renamed) Debias(ctx context.Context, g *graph.Graph, x []float64, d int, sens []int) (*fairness.Debiased, error) {
	return nil, nil
}
