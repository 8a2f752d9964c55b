package fairtrain

import (
	"context"
	"fmt"
	"math"

	"github.com/fairmp/fairmp/internal/opkit"
	"github.com/fairmp/fairmp/layers"
	"github.com/fairmp/fairmp/layers/fairness"
	"github.com/fairmp/fairmp/layers/train"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// FairGNNConfig configures FairGNN (Dai & Wang, "Say No to the
// Discrimination: Learning Fair Graph Neural Networks with Limited
// Sensitive Attribute Information", WSDM 2021) on any backbone. Its
// parts, as in the authors' code (EnyanDai/FairGNN, src/models/FairGNN.py):
//
//   - an Encoder: the backbone built with Out = Hidden as the body
//     (its output h is the representation) and a linear classifier head;
//   - a sensitive-attribute estimator (a GCN by default) trained first,
//     on the nodes whose group is known, to predict the group; every
//     node's score ŝ_i is its group where known and the estimator's
//     P(s = 1) elsewhere (or its rounding, HardEstimates);
//   - an adversary, a linear layer h → 1 trained to predict ŝ from h
//     (binary cross-entropy against the soft targets ŝ, over all nodes);
//   - the covariance constraint |Cov(ŝ, p)| over all nodes, p the
//     predicted probability of the Positive class.
//
// Every epoch is one step of the encoder on
//
//	CE(train nodes) + Alpha·|Cov(ŝ, p)| − Beta·BCE(adversary(h), ŝ),
//
// then one step of the adversary (its own Adam) on BCE(adversary(h), ŝ)
// with h of that step's forward pass, detached: the reference code's
// alternation. The estimator is not updated after its training (the
// reference code detaches its output).
//
// Differences from the reference code, by design: the classifier has one
// logit per class and trains with the library's softmax cross-entropy
// (equivalent to its one-logit BCE for two classes); the estimator is
// trained inside Fit rather than loaded from a checkpoint; model
// selection is the trainer's (train.Config.Select), not the reference
// code's "lowest validation ΔDP + ΔEO among epochs above an accuracy and
// AUC threshold", which needs thresholds per data set.
//
// The sensitive attribute must be binary (0, 1, −1 unknown) with both
// groups among the known nodes.
type FairGNNConfig struct {
	// Alpha (α ≥ 0, finite) weighs the covariance term. Default 4, the
	// reference code's default (train_fairGNN.py); its scripts use 10 on
	// NBA and 100 on Pokec-z.
	Alpha float64
	// Beta (β ≥ 0, finite) weighs the adversary's loss in the encoder's
	// objective: the method's fairness weight (Weight). Default 0.01, the
	// reference code's default; its scripts use 1 on NBA and Pokec-z.
	Beta float64
	// Hidden is the width of the representation h, the body's output
	// (> 0). Default 64 (--num-hidden; the scripts use 128).
	Hidden int
	// Positive is the class whose probability enters the covariance.
	// Default 1.
	Positive int
	// HardEstimates rounds the estimator's P(s = 1) to 0 or 1 (a
	// commented-out line of the reference code); default false: soft
	// scores.
	HardEstimates bool
	// Estimator configures the sensitive-attribute estimator.
	Estimator EstimatorConfig
	// Adam configures the adversary's optimiser. Default lr 1e-3,
	// weight decay 1e-5 (the reference code gives the adversary the
	// encoder's settings).
	Adam train.AdamConfig
	// Seed seeds the adversary's initialisation. Default 1.
	Seed int64
}

// EstimatorConfig configures FairGNN's sensitive-attribute estimator: a
// model of a declared kind (Kind, "gcn" by default, as the reference
// code's GCN(nfeat, hidden, 1)) trained with cross-entropy to predict the
// group on the nodes where it is known, for Epochs full-batch Adam steps
// (the last epoch's parameters are kept: there is no validation set of
// groups).
type EstimatorConfig struct {
	// Kind names the estimator's model kind (layers.LookupKind). Default
	// "gcn".
	Kind string
	// Hidden is its hidden width (for kinds that have one). Default 128
	// (the reference code's --hidden).
	Hidden int
	// Epochs is the number of training steps (> 0). Default 300, the
	// library's protocol: the reference code pre-trains its estimator in
	// its own script (src/train_sens.py, 800 epochs, kept at the best
	// group accuracy on its validation nodes, which on NBA are the test
	// nodes), whose selection on test nodes fairmp does not copy.
	Epochs int
	// Adam configures its optimiser. Default lr 1e-3, weight decay 1e-5.
	Adam train.AdamConfig
	// Seed seeds its initialisation and dropout. Default 1.
	Seed int64
}

// DefaultEstimatorConfig returns a GCN estimator with 128 hidden units,
// 300 epochs of Adam (lr 1e-3, weight decay 1e-5), seed 1.
func DefaultEstimatorConfig() EstimatorConfig {
	return EstimatorConfig{Kind: "gcn", Hidden: 128, Epochs: 300, Adam: train.DefaultConfig().Adam, Seed: 1}
}

// Validate checks every field.
func (c EstimatorConfig) Validate() error {
	if _, err := layers.LookupKind(c.Kind); err != nil {
		return fmt.Errorf("Estimator.Kind: %w", err)
	}
	if c.Hidden < 1 || c.Epochs < 1 {
		return fmt.Errorf("Estimator: Hidden = %d, Epochs = %d, want both >= 1", c.Hidden, c.Epochs)
	}
	if err := c.Adam.Validate(); err != nil {
		return fmt.Errorf("Estimator.Adam: %w", err)
	}
	return nil
}

// DefaultFairGNNConfig returns the reference code's defaults: α 4, β
// 0.01, a 64-wide representation, soft estimates from a GCN estimator,
// the adversary's Adam at lr 1e-3 and weight decay 1e-5, seed 1.
func DefaultFairGNNConfig() FairGNNConfig {
	return FairGNNConfig{Alpha: 4, Beta: 0.01, Hidden: 64, Positive: 1, Estimator: DefaultEstimatorConfig(),
		Adam: train.DefaultConfig().Adam, Seed: 1}
}

// Name returns "fairgnn".
func (c FairGNNConfig) Name() string { return "fairgnn" }

// Weight returns Beta, the adversary's weight.
func (c FairGNNConfig) Weight() float64 { return c.Beta }

// WithWeight returns c with Beta = w.
func (c FairGNNConfig) WithWeight(w float64) fairness.Method { c.Beta = w; return c }

// WithSeed returns c with Seed and Estimator.Seed = seed.
func (c FairGNNConfig) WithSeed(seed int64) fairness.Method {
	c.Seed, c.Estimator.Seed = seed, seed
	return c
}

// Validate checks every field.
func (c FairGNNConfig) Validate() error {
	if err := checkAlpha(c.Alpha); err != nil {
		return err
	}
	if !(c.Beta >= 0) || math.IsInf(c.Beta, 0) {
		return fmt.Errorf("Beta = %v, want a finite weight >= 0", c.Beta)
	}
	if c.Hidden < 1 {
		return fmt.Errorf("Hidden = %d, want >= 1", c.Hidden)
	}
	if c.Positive < 0 {
		return fmt.Errorf("Positive = %d, want a class >= 0", c.Positive)
	}
	if err := c.Estimator.Validate(); err != nil {
		return err
	}
	if err := c.Adam.Validate(); err != nil {
		return fmt.Errorf("Adam: %w", err)
	}
	return nil
}

// binarySens checks that sens is binary with both groups known and
// returns the known nodes.
func binarySens(name string, sens []int, n int) ([]int, error) {
	if len(sens) != n {
		return nil, fmt.Errorf("fairtrain: %s: %d sensitive values for %d nodes, want one per node", name, len(sens), n)
	}
	var known []int
	var c [2]int
	for i, s := range sens {
		switch s {
		case -1:
		case 0, 1:
			known = append(known, i)
			c[s]++
		default:
			return nil, fmt.Errorf("fairtrain: %s: sensitive value %d of node %d, want 0, 1 or −1 (unknown): this method needs a binary attribute", name, s, i)
		}
	}
	if c[0] == 0 || c[1] == 0 {
		return nil, fmt.Errorf("fairtrain: %s: %d known nodes in group 0 and %d in group 1, want both groups", name, c[0], c[1])
	}
	return known, nil
}

// EstimateSens trains the estimator of c on the nodes of s.Sens whose
// group is known and returns its P(s = 1) for every node. It returns an
// error for an invalid configuration, a sensitive attribute that is not
// binary with both groups known, and the errors of building and training
// the estimator.
func EstimateSens(ctx context.Context, c EstimatorConfig, s fairness.Setup) ([]float64, error) {
	if err := c.Validate(); err != nil {
		return nil, fmt.Errorf("fairtrain: estimator: %w", err)
	}
	if s.Task == nil || s.Task.X == nil {
		return nil, fmt.Errorf("fairtrain: estimator: Setup.Task has no features")
	}
	sh := s.Task.X.Shape()
	n, d := sh[0], sh[1]
	known, err := binarySens("estimator", s.Sens, n)
	if err != nil {
		return nil, err
	}
	xd, err := opkit.Dense(s.Task.X.Value())
	if err != nil {
		return nil, fmt.Errorf("fairtrain: estimator: features: %w", err)
	}
	g := G.NewGraph()
	dt := s.Task.X.Dtype()
	x, err := train.FeatureNode(g, dt, f64s(xd), n, d, "x")
	if err != nil {
		return nil, fmt.Errorf("fairtrain: estimator: %w", err)
	}
	k, _ := layers.LookupKind(c.Kind)
	opt := layers.Options{Dtype: dt, Seed: c.Seed}
	if k.HasHidden() {
		opt.Hidden = c.Hidden
	}
	cfg, err := k.Configure(d, 2, opt)
	if err != nil {
		return nil, fmt.Errorf("fairtrain: estimator: %w", err)
	}
	b := layers.BaseOf(cfg)
	b.Name = "estimator"
	ph := layers.NewPhase()
	est, err := k.Build(g, s.Graph, layers.WithBase(cfg, b), ph)
	if err != nil {
		return nil, fmt.Errorf("fairtrain: estimator: %w", err)
	}
	labels := make([]int, n)
	for i, v := range s.Sens {
		labels[i] = v
	}
	task := &train.Task{Graph: g, X: x, Labels: labels, Train: known, Classes: 2, Phase: ph}
	tc := train.DefaultConfig()
	tc.Epochs, tc.Adam, tc.Select = c.Epochs, c.Adam, train.SelectLast
	if _, err := train.Fit(ctx, est, task, tc); err != nil {
		return nil, fmt.Errorf("fairtrain: estimator: %w", err)
	}
	p, err := train.Predict(est, task, nil)
	if err != nil {
		return nil, fmt.Errorf("fairtrain: estimator: %w", err)
	}
	return p.Column(1), nil
}

// scores returns ŝ: the group where known, the estimate elsewhere.
func (c FairGNNConfig) scores(sens []int, est []float64) []float64 {
	out := make([]float64, len(sens))
	for i, s := range sens {
		switch {
		case s >= 0:
			out[i] = float64(s)
		case c.HardEstimates:
			if est[i] > 0.5 {
				out[i] = 1
			}
		default:
			out[i] = est[i]
		}
	}
	return out
}

// fit trains FairGNN (see Fit).
func (c FairGNNConfig) Fit(ctx context.Context, backbone layers.Config, s fairness.Setup, tc train.Config) (*fairness.Fitted, error) {
	if err := checkFit(c, backbone, s); err != nil {
		return nil, err
	}
	task := s.Task
	if err := task.Validate(); err != nil {
		return nil, fmt.Errorf("fairtrain: fairgnn: task: %w", err)
	}
	n := task.X.Shape()[0]
	known, err := binarySens("fairgnn", s.Sens, n)
	if err != nil {
		return nil, err
	}
	var score []float64
	if len(known) < n {
		est, err := EstimateSens(ctx, c.Estimator, s)
		if err != nil {
			return nil, fmt.Errorf("fairtrain: fairgnn: %w", err)
		}
		score = c.scores(s.Sens, est)
	} else {
		score = c.scores(s.Sens, nil)
	}
	enc, err := NewEncoder(task.Graph, s.Graph, bodyConfig(backbone, c.Hidden), task.Classes, task.Phase)
	if err != nil {
		return nil, fmt.Errorf("fairtrain: fairgnn: %w", err)
	}
	a := &fairAdversary{cfg: c, enc: enc, score: score, n: n, lossV: new(G.Value)}
	tc = withExtra(tc, a.build)
	tc = withAfterStep(tc, a.step)
	res, err := train.Fit(ctx, enc, task, tc)
	if err != nil {
		return nil, err
	}
	return &fairness.Fitted{Model: enc, Result: res, SensScore: score}, nil
}

// fairAdversary is FairGNN's adversary and covariance term for one run.
type fairAdversary struct {
	cfg   FairGNNConfig
	enc   *Encoder
	score []float64
	n     int

	dt      tensor.Dtype
	capt    *captureOp     // h of the encoder's training pass
	inCls   *layers.Linear // the adversary in the encoder's graph (constant there)
	inTrain *layers.Linear // the same in its own graph
	pin     *G.Node
	m       G.VM
	adam    *train.Adam
	// lossV is apart from the struct for the reason adversary.lossV is.
	lossV *G.Value
}

// build adds α·|Cov(ŝ, p)| − β·BCE(adversary(h), ŝ) to the encoder's
// loss and builds the adversary's own training graph.
func (a *fairAdversary) build(z *G.Node) (*G.Node, error) {
	h := a.enc.Representation()
	if h == nil || len(h.Shape()) != 2 || h.Shape()[0] != a.n {
		return nil, fmt.Errorf("fairtrain: fairgnn: no representation of %d rows from the encoder", a.n)
	}
	a.dt = z.Dtype()
	cov, err := covariance(z, a.score, a.cfg.Positive)
	if err != nil {
		return nil, fmt.Errorf("fairtrain: fairgnn: %w", err)
	}
	hc, capt, err := capture(h)
	if err != nil {
		return nil, fmt.Errorf("fairtrain: fairgnn: %w", err)
	}
	a.capt = capt
	lc := a.linear(fmt.Sprintf("fairgnn.adversary#%d", capt.id))
	if a.inCls, err = layers.NewLinear(z.Graph(), nil, lc, nil); err != nil {
		return nil, fmt.Errorf("fairtrain: fairgnn: %w", err)
	}
	logit, err := a.inCls.Forward(hc)
	if err != nil {
		return nil, fmt.Errorf("fairtrain: fairgnn: %w", err)
	}
	bce, err := bceWithLogitsSoft(logit, a.score)
	if err != nil {
		return nil, err
	}
	ac, err := scaled(a.cfg.Alpha, cov)
	if err != nil {
		return nil, err
	}
	bb, err := scaled(a.cfg.Beta, bce)
	if err != nil {
		return nil, err
	}
	extra, err := G.Sub(ac, bb)
	if err != nil {
		return nil, fmt.Errorf("fairtrain: fairgnn: %w", err)
	}
	return extra, a.buildTrainer()
}

func (a *fairAdversary) linear(name string) layers.LinearConfig {
	lc := layers.DefaultLinearConfig(a.enc.Width(), 1)
	lc.Name, lc.Dtype, lc.Seed = name, a.dt, a.cfg.Seed
	return lc
}

// buildTrainer builds the adversary's graph: input h (n × width), the
// linear adversary (same seed: the same initial values), its BCE, the
// gradients, a pruned machine and an Adam optimiser.
func (a *fairAdversary) buildTrainer() error {
	g := G.NewGraph()
	w := a.enc.Width()
	a.pin = G.NewMatrix(g, a.dt, G.WithShape(a.n, w), G.WithName("h"), G.WithValue(opkit.Alloc(a.dt, a.n, w)))
	var err error
	if a.inTrain, err = layers.NewLinear(g, nil, a.linear("adversary"), nil); err != nil {
		return fmt.Errorf("fairtrain: fairgnn: %w", err)
	}
	logit, err := a.inTrain.Forward(a.pin)
	if err != nil {
		return fmt.Errorf("fairtrain: fairgnn: %w", err)
	}
	bce, err := bceWithLogitsSoft(logit, a.score)
	if err != nil {
		return err
	}
	a.m, a.adam, err = sideTrainer(g, bce, a.lossV, a.inTrain.Learnables(), a.cfg.Adam, "fairgnn: adversary")
	return err
}

// step runs one adversary step on the captured h and copies its
// parameters into the encoder's graph.
func (a *fairAdversary) step(int) error {
	if a.m == nil {
		return fmt.Errorf("fairtrain: fairgnn: adversary not built")
	}
	a.capt.copyTo(a.pin)
	params := a.inTrain.Learnables()
	if err := zeroGrad(params); err != nil {
		return err
	}
	if err := a.m.RunAll(); err != nil {
		return fmt.Errorf("fairtrain: fairgnn: adversary step: %w", err)
	}
	a.m.Reset()
	if err := a.adam.Step(); err != nil {
		return fmt.Errorf("fairtrain: fairgnn: %w", err)
	}
	vals := make([]*tensor.Dense, len(params))
	for i, q := range params {
		vals[i] = q.Value().(*tensor.Dense)
	}
	return train.SetParams(a.inCls, vals)
}

// zeroGrad zeroes the gradients bound to params (none before the first
// run).
func zeroGrad(params G.Nodes) error {
	for _, q := range params {
		g, err := q.Grad()
		if err != nil || g == nil {
			continue
		}
		d, err := opkit.Dense(g)
		if err != nil {
			return fmt.Errorf("fairtrain: %w", err)
		}
		d.Zero()
	}
	return nil
}
