// Package perturb measures how a trained model's decisions move when its
// inputs do: counterfactual unfairness (the share of decisions that
// change when every node's sensitive attribute is flipped) and
// instability (the share that change under small perturbations of the
// features and the edges), the two metrics of NIFTY (Agarwal, Lakkaraju
// & Zitnik, UAI 2021), for any trained model: the library's kinds, FMP on
// any of them, and the encoders of layers/fairtrain (FairGNN, NIFTY).
//
// # How
//
// The model is rebuilt, with its trained parameters, in a fresh gorgonia
// graph on the perturbed inputs (predict): through the registry of
// kinds (layers.KindOf; a wrapper such as fmp's is rebuilt on its rebuilt
// backbone, with the sensitive attribute given), or through the model's
// own Rebuild method (fairtrain.Encoder). Its decisions there are
// compared with its decisions on the original inputs by
// metrics.ChangeRate, which puts a bootstrap interval around the share.
//
// Flipping the attribute means: in the feature column that holds it
// (Input.SensFeature, when the features hold it: NIFTY's protocol), and
// in the attribute a model reads directly (FMP's group contrast Δs). A
// model that reads the attribute neither way (a GCN on features without
// it) has counterfactual unfairness 0 by construction: the number then
// says nothing about its group fairness, which ΔDP and ΔEO measure.
// FMP reads the attribute, but flipping every node's group at once swaps
// the groups' roles both in Δs and in the gap FMP corrects, and its
// correction is symmetric in the two groups: FMP's counterfactual
// unfairness in this sense is that of its backbone (0 when the features
// do not hold the attribute), exactly.
//
// # Errors
//
// Every function returns an error, never panics, for inputs of the
// wrong length, a model that cannot be rebuilt (a kind not declared to
// layers, without a Rebuild method), an invalid configuration, and the
// errors of metrics.ChangeRate.
package perturb

import (
	"fmt"
	"math"
	"math/rand"

	"github.com/fairmp/fairmp/graph"
	"github.com/fairmp/fairmp/internal/augment"
	"github.com/fairmp/fairmp/layers"
	"github.com/fairmp/fairmp/layers/train"
	"github.com/fairmp/fairmp/metrics"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Input is a trained model and the data it predicts on.
type Input struct {
	// Model is the trained model.
	Model layers.Model
	// Graph is the graph the model was trained on (nil for a model that
	// does not propagate).
	Graph *graph.Graph
	// Features holds the n × NumFeatures features, row-major, as the
	// model was trained on them.
	Features    []float64
	NumFeatures int
	// Sens holds each node's group (0, 1, −1 unknown): flipped for the
	// counterfactual, and given to models that read it (FMP).
	Sens []int
	// SensFeature is the feature column holding the sensitive attribute
	// (0/1), or −1 when the features do not hold it.
	SensFeature int
	// Classes is the model's number of classes.
	Classes int
}

// rebuilder is a model that copies itself, with its parameters, into
// another gorgonia graph on another data graph (fairtrain.Encoder is
// one). Models of a declared kind need not implement it.
type rebuilder interface {
	Rebuild(g *G.ExprGraph, gr *graph.Graph, phase *layers.Phase) (layers.Model, error)
}

func (in Input) check() (int, error) {
	if in.Model == nil {
		return 0, fmt.Errorf("perturb: nil Model")
	}
	if in.NumFeatures < 1 || len(in.Features)%in.NumFeatures != 0 {
		return 0, fmt.Errorf("perturb: %d feature values with NumFeatures %d, want n × NumFeatures", len(in.Features), in.NumFeatures)
	}
	n := len(in.Features) / in.NumFeatures
	if len(in.Sens) != n {
		return 0, fmt.Errorf("perturb: %d sensitive values for %d nodes, want one per node", len(in.Sens), n)
	}
	if in.SensFeature < -1 || in.SensFeature >= in.NumFeatures {
		return 0, fmt.Errorf("perturb: SensFeature = %d, want a column in [0, %d) or −1 (none)", in.SensFeature, in.NumFeatures)
	}
	if in.Classes < 2 {
		return 0, fmt.Errorf("perturb: Classes = %d, want >= 2", in.Classes)
	}
	if in.Graph != nil && in.Graph.N() != n {
		return 0, fmt.Errorf("perturb: the graph has %d nodes and the features %d rows", in.Graph.N(), n)
	}
	return n, nil
}

// dtype returns the model's parameter dtype.
func dtype(m layers.Model) tensor.Dtype {
	if ps := m.Learnables(); len(ps) > 0 {
		return ps[0].Dtype()
	}
	return tensor.Float64
}

// rebuild copies m into g on gr with the attribute sens.
func rebuild(m layers.Model, g *G.ExprGraph, gr *graph.Graph, sens []int) (layers.Model, error) {
	if r, ok := m.(rebuilder); ok {
		return r.Rebuild(g, gr, nil)
	}
	k, err := layers.KindOf(m)
	if err != nil {
		return nil, fmt.Errorf("perturb: the %T is neither of a declared kind nor has a Rebuild method: %w", m, err)
	}
	if k.Wraps() {
		w, ok := m.(layers.Wrapper)
		if !ok {
			return nil, fmt.Errorf("perturb: the %s model %T has no Backbone method", k.Name(), m)
		}
		bb, err := rebuild(w.Backbone(), g, gr, sens)
		if err != nil {
			return nil, err
		}
		raw, err := k.EncodeConfig(m)
		if err != nil {
			return nil, fmt.Errorf("perturb: %w", err)
		}
		return k.Wrap(bb, gr, sens, raw, nil)
	}
	cfg, err := k.ConfigOf(m)
	if err != nil {
		return nil, fmt.Errorf("perturb: %w", err)
	}
	out, err := k.Build(g, gr, cfg, nil)
	if err != nil {
		return nil, fmt.Errorf("perturb: rebuilding the %s model: %w", k.Name(), err)
	}
	vals := make([]*tensor.Dense, 0)
	for _, p := range m.Learnables() {
		vals = append(vals, p.Value().(*tensor.Dense))
	}
	if err := train.SetParams(out, vals); err != nil {
		return nil, fmt.Errorf("perturb: %w", err)
	}
	return out, nil
}

// predict returns the n × Classes probabilities of in.Model, rebuilt with
// its parameters, on the given features, graph and sensitive attribute
// (each of in's shape), in evaluation mode.
func predict(in Input, features []float64, gr *graph.Graph, sens []int) ([]float64, error) {
	n, err := in.check()
	if err != nil {
		return nil, err
	}
	if len(features) != len(in.Features) || len(sens) != n {
		return nil, fmt.Errorf("perturb: predict: %d features and %d sensitive values, want %d and %d", len(features), len(sens), len(in.Features), n)
	}
	g := G.NewGraph()
	x, err := train.FeatureNode(g, dtype(in.Model), features, n, in.NumFeatures, "x")
	if err != nil {
		return nil, fmt.Errorf("perturb: %w", err)
	}
	m, err := rebuild(in.Model, g, gr, sens)
	if err != nil {
		return nil, err
	}
	task := &train.Task{Graph: g, X: x, Labels: make([]int, n), Train: []int{0}, Classes: in.Classes}
	p, err := train.Predict(m, task, nil)
	if err != nil {
		return nil, fmt.Errorf("perturb: %w", err)
	}
	return p.Probs, nil
}

// flip returns copies of the features and the attribute with every known
// group flipped (0 ↔ 1) in both: in the attribute, and in the feature
// column col unless it is −1. Unknown groups (−1) stay unknown. It
// returns an error for a group other than 0, 1 and −1.
func flip(features []float64, d, col int, sens []int) ([]float64, []int, error) {
	x := append([]float64(nil), features...)
	s := make([]int, len(sens))
	for i, v := range sens {
		switch v {
		case 0, 1:
			s[i] = 1 - v
		case -1:
			s[i] = -1
		default:
			return nil, nil, fmt.Errorf("perturb: sensitive value %d of node %d, want 0, 1 or −1: flipping needs a binary attribute", v, i)
		}
	}
	if col >= 0 {
		augment.FlipColumn(x, d, col)
	}
	return x, s, nil
}

// Config configures the perturbation of Instability.
type Config struct {
	// NoiseStd is the standard deviation of the Gaussian noise added to
	// each perturbed feature entry (≥ 0). Default 1, as NIFTY's released
	// code (every entry gets an N(0, 1) draw).
	NoiseStd float64
	// NoiseFraction is the share of the feature columns perturbed, in
	// [0, 1]; the sensitive column (Input.SensFeature) is never
	// perturbed. Default 1 (every column).
	NoiseFraction float64
	// EdgeDrop is the probability that an undirected edge is dropped, in
	// [0, 1). Default 0.1, NIFTY's rate for its training views (the
	// released code's metric perturbs the features only; set 0 for it).
	EdgeDrop float64
	// Seed seeds the draws. Default 1.
	Seed int64
}

// DefaultConfig returns N(0, 1) noise on every non-sensitive feature
// entry and 10% of the edges dropped, seed 1.
func DefaultConfig() Config { return Config{NoiseStd: 1, NoiseFraction: 1, EdgeDrop: 0.1, Seed: 1} }

// Validate checks every field.
func (c Config) Validate() error {
	if !(c.NoiseStd >= 0) || math.IsInf(c.NoiseStd, 0) {
		return fmt.Errorf("perturb: NoiseStd = %v, want a finite value >= 0", c.NoiseStd)
	}
	if !(c.NoiseFraction >= 0 && c.NoiseFraction <= 1) {
		return fmt.Errorf("perturb: NoiseFraction = %v, want a share in [0, 1]", c.NoiseFraction)
	}
	if !(c.EdgeDrop >= 0 && c.EdgeDrop < 1) {
		return fmt.Errorf("perturb: EdgeDrop = %v, want a probability in [0, 1)", c.EdgeDrop)
	}
	return nil
}

// perturbInputs returns perturbed copies of the features and the graph: the
// columns (all but skip) are chosen with probability NoiseFraction, every
// entry of a chosen column gets its own N(0, NoiseStd²) draw, and each
// undirected edge is dropped with probability EdgeDrop (gr nil: no
// graph). The draws come from rand.NewSource(cfg.Seed), columns first.
func perturbInputs(features []float64, d, skip int, gr *graph.Graph, cfg Config) ([]float64, *graph.Graph, error) {
	if err := cfg.Validate(); err != nil {
		return nil, nil, err
	}
	rng := rand.New(rand.NewSource(cfg.Seed))
	chosen := make([]bool, d)
	for j := range chosen {
		chosen[j] = j != skip && (cfg.NoiseFraction == 1 || rng.Float64() < cfg.NoiseFraction)
	}
	x := append([]float64(nil), features...)
	if cfg.NoiseStd > 0 {
		for i := range x {
			if chosen[i%d] {
				x[i] += cfg.NoiseStd * rng.NormFloat64()
			}
		}
	}
	if gr == nil || cfg.EdgeDrop == 0 {
		return x, gr, nil
	}
	g2, err := augment.DropEdges(gr, cfg.EdgeDrop, rng)
	if err != nil {
		return nil, nil, fmt.Errorf("perturb: dropping edges: %w", err)
	}
	return x, g2, nil
}

// Report holds both metrics of one model, as fractions with bootstrap
// intervals over the evaluated nodes.
type Report struct {
	// Unfairness is the counterfactual unfairness: the share of decisions
	// that change when every node's group is flipped.
	Unfairness metrics.Interval `json:"counterfactual_unfairness"`
	// Instability is the share of decisions that change under the
	// perturbation of Config.
	Instability metrics.Interval `json:"instability"`
}

// Evaluate returns counterfactual unfairness and instability of in.Model
// on the nodes (nil: all), with decisions made as metrics.Evaluate makes
// them (opt) and intervals from bcfg (metrics.ChangeRate). The reference
// decisions are the model's own on in's unperturbed inputs, rebuilt the
// same way, so that only the perturbation differs.
func Evaluate(in Input, nodes []int, cfg Config, opt metrics.Options, bcfg metrics.BootstrapConfig) (Report, error) {
	if _, err := in.check(); err != nil {
		return Report{}, err
	}
	if err := cfg.Validate(); err != nil {
		return Report{}, err
	}
	orig, err := predict(in, in.Features, in.Graph, in.Sens)
	if err != nil {
		return Report{}, err
	}
	fx, fs, err := flip(in.Features, in.NumFeatures, in.SensFeature, in.Sens)
	if err != nil {
		return Report{}, err
	}
	cf, err := predict(in, fx, in.Graph, fs)
	if err != nil {
		return Report{}, err
	}
	px, pg, err := perturbInputs(in.Features, in.NumFeatures, in.SensFeature, in.Graph, cfg)
	if err != nil {
		return Report{}, err
	}
	noisy, err := predict(in, px, pg, in.Sens)
	if err != nil {
		return Report{}, err
	}
	var r Report
	if r.Unfairness, err = metrics.ChangeRate(orig, cf, in.Classes, nodes, opt, bcfg); err != nil {
		return Report{}, fmt.Errorf("perturb: counterfactual unfairness: %w", err)
	}
	if r.Instability, err = metrics.ChangeRate(orig, noisy, in.Classes, nodes, opt, bcfg); err != nil {
		return Report{}, fmt.Errorf("perturb: instability: %w", err)
	}
	return r, nil
}
