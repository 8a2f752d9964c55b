package fairtrain

import (
	"context"
	"errors"
	"fmt"
	"math"
	"testing"

	"github.com/fairmp/fairmp/layers/fairness"
	"github.com/fairmp/fairmp/layers/train"
	"github.com/fairmp/fairmp/metrics"
	"github.com/stretchr/testify/require"
	"gorgonia.org/tensor"
)

func testAdversary(alpha float64) AdversaryConfig {
	c := DefaultAdversaryConfig()
	c.Alpha, c.PretrainClassifier, c.PretrainAdversary, c.Steps = alpha, 20, 10, 2
	c.Adam.LR = 0.01
	return c
}

func strategies(alpha float64) []fairness.Loss {
	r := DefaultRegularizerConfig()
	r.Alpha = alpha
	m := DefaultMixupConfig()
	m.Alpha = alpha
	return []fairness.Loss{r, testAdversary(alpha), m}
}

func sameParams(a, b []*tensor.Dense) bool {
	for i := range a {
		switch x := a[i].Data().(type) {
		case []float64:
			y := b[i].Data().([]float64)
			for k := range x {
				if math.Float64bits(x[k]) != math.Float64bits(y[k]) {
					return false
				}
			}
		case []float32:
			y := b[i].Data().([]float32)
			for k := range x {
				if math.Float32bits(x[k]) != math.Float32bits(y[k]) {
					return false
				}
			}
		}
	}
	return true
}

// TestAlphaZeroIsPlain: with α = 0 every strategy, on every backbone,
// leaves bit-identical parameters to plain training (the adversary still
// trains, the mixup sampler still draws); with α > 0 they differ.
func TestAlphaZeroIsPlain(t *testing.T) {
	ds := biased(t, 200)
	for _, bb := range backbones() {
		dts := []tensor.Dtype{tensor.Float64}
		if bb == "gcn" {
			dts = testutilDtypes
		}
		for _, dt := range dts {
			_, plain := run(t, ds, bb, dt, nil, 40)
			for _, s := range strategies(0) {
				_, got := run(t, ds, bb, dt, s, 40)
				if !sameParams(got, plain) {
					t.Errorf("%s %v %s α=0: parameters differ from plain training", bb, dt, s.Name())
				}
			}
			if bb != "gcn" {
				continue
			}
			for _, s := range strategies(2) {
				_, got := run(t, ds, bb, dt, s, 40)
				if sameParams(got, plain) {
					t.Errorf("%s %v %s α=2: parameters equal plain training", bb, dt, s.Name())
				}
			}
		}
	}
}

var testutilDtypes = []tensor.Dtype{tensor.Float64, tensor.Float32}

// TestAlphaLowersDP trains a GCN on the generated biased graph (600
// nodes, group-homophilous edges: plain GCN has a test ΔDP above 50%)
// with three weights per strategy and checks that test ΔDP falls
// strictly with α, and clearly (to under a third) at the largest.
func TestAlphaLowersDP(t *testing.T) {
	ds := biased(t, 600)
	plain, _ := run(t, ds, "gcn", tensor.Float64, nil, 150)
	if plain.DemographicParity < 0.4 {
		t.Fatalf("plain GCN ΔDP %.2f%%: the graph is not biased enough for this test", metrics.Percent(plain.DemographicParity))
	}
	adv := func(a float64) fairness.Loss {
		c := DefaultAdversaryConfig()
		c.Alpha = a
		return c
	}
	reg := func(a float64) fairness.Loss { c := DefaultRegularizerConfig(); c.Alpha = a; return c }
	mix := func(a float64) fairness.Loss { c := DefaultMixupConfig(); c.Alpha = a; return c }
	for _, tc := range []struct {
		name   string
		make   func(float64) fairness.Loss
		alphas [2]float64
	}{
		{"regularizer", reg, [2]float64{0.5, 5}},
		{"mixup", mix, [2]float64{0.5, 5}},
		{"adversary", adv, [2]float64{5, 100}},
	} {
		prev := plain.DemographicParity
		line := "α=0: " + describe(plain)
		for _, a := range tc.alphas {
			r, _ := run(t, ds, "gcn", tensor.Float64, tc.make(a), 150)
			line += fmt.Sprintf("; α=%g: %s", a, describe(r))
			if !(r.DemographicParity < prev) {
				t.Errorf("%s: ΔDP did not fall: %s", tc.name, line)
			}
			prev = r.DemographicParity
		}
		if !(prev < plain.DemographicParity/3) {
			t.Errorf("%s: ΔDP at the largest α not under a third of plain: %s", tc.name, line)
		}
		t.Logf("%s: %s", tc.name, line)
	}
}

// TestAdversaryLearns: after its pre-training on the outputs of a plain
// classifier of a biased graph, the adversary predicts the group better
// than chance (its BCE falls below 0.95·log 2), and Progress sees every
// adversary step.
func TestAdversaryLearns(t *testing.T) {
	ds := biased(t, 400)
	m, task := build(t, ds, "gcn", tensor.Float64, 1)
	tc := train.DefaultConfig()
	tc.Epochs, tc.Adam.LR = 55, 0.01
	c := DefaultAdversaryConfig()
	c.Alpha, c.PretrainClassifier, c.PretrainAdversary, c.Steps, c.Adam.LR = 0, 50, 200, 3, 0.01
	var losses []float64
	var epochs []int
	c.Progress = func(e int, l float64) { losses, epochs = append(losses, l), append(epochs, e) }
	tc, err := c.Apply(tc, task, ds.Sens)
	require.NoError(t, err)
	if _, err := train.Fit(context.Background(), m, task, tc); err != nil {
		t.Fatal(err)
	}
	if len(losses) != 200+5*3 || epochs[0] != 50 || epochs[len(epochs)-1] != 55 {
		t.Fatalf("%d adversary steps (epochs %d..%d), want 215 (50..55)", len(losses), epochs[0], epochs[len(epochs)-1])
	}
	if !(losses[199] < 0.95*math.Ln2) || !(losses[199] < losses[0]) {
		t.Errorf("adversary BCE %.4f → %.4f after pre-training, want a fall below 0.95·log 2 = %.4f", losses[0], losses[199], 0.95*math.Ln2)
	}
}

func TestApplyErrors(t *testing.T) {
	ds := biased(t, 100)
	_, task := build(t, ds, "mlp", tensor.Float64, 1)
	tc := train.DefaultConfig()
	three := append([]int(nil), ds.Sens...)
	for _, i := range task.Train[:5] {
		three[i] = 2
	}
	for _, s := range strategies(1) {
		if _, err := s.Apply(tc, task, ds.Sens[:10]); err == nil {
			t.Errorf("%s: short sens accepted", s.Name())
		}
		_, err := s.Apply(tc, task, three)
		if s.Name() == "regularizer" {
			if err != nil {
				t.Errorf("regularizer: three groups: %v", err)
			}
		} else if err == nil {
			t.Errorf("%s: three groups accepted", s.Name())
		}
	}
	bad := []fairness.Loss{
		RegularizerConfig{Alpha: -1, Positive: 1},
		RegularizerConfig{Alpha: math.Inf(1), Positive: 1},
		MixupConfig{Alpha: 1, Fraction: 0, BetaA: 2, BetaB: 2, Positive: 1},
		MixupConfig{Alpha: 1, Fraction: 1, BetaA: 0, BetaB: 2, Positive: 1},
		func() AdversaryConfig { c := DefaultAdversaryConfig(); c.PretrainClassifier = 0; return c }(),
		func() AdversaryConfig { c := DefaultAdversaryConfig(); c.Steps = 0; return c }(),
		func() AdversaryConfig { c := DefaultAdversaryConfig(); c.Adam.LR = 0; return c }(),
	}
	for _, s := range bad {
		if s.Validate() == nil {
			t.Errorf("%s %+v validated", s.Name(), s)
		}
		if _, err := s.Apply(tc, task, ds.Sens); err == nil {
			t.Errorf("%s %+v applied", s.Name(), s)
		}
	}
	tc.Epochs = 70
	if _, err := DefaultAdversaryConfig().Apply(tc, task, ds.Sens); err == nil {
		t.Errorf("adversary with Epochs = PretrainClassifier applied")
	}
	for _, s := range strategies(1) {
		if err := s.Validate(); err != nil {
			t.Errorf("default %s: %v", s.Name(), err)
		}
	}
	// Hooks already set are kept: an earlier AfterStep's error is returned.
	tc = train.DefaultConfig()
	tc.Epochs = 30
	boom := errors.New("boom")
	tc.AfterStep = func(e int) error {
		if e == 2 {
			return boom
		}
		return nil
	}
	tc, err := testAdversary(1).Apply(tc, task, ds.Sens)
	require.NoError(t, err)
	m, task := build(t, ds, "mlp", tensor.Float64, 1)
	if tc, err = DefaultRegularizerConfig().Apply(tc, task, ds.Sens); err != nil {
		t.Fatal(err)
	}
	if _, err := train.Fit(context.Background(), m, task, tc); !errors.Is(err, boom) {
		t.Errorf("chained AfterStep error: got %v", err)
	}
}
