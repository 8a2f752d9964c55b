package fmp

import (
	"fmt"
	"math"

	"github.com/fairmp/fairmp/graph"
	"github.com/fairmp/fairmp/internal/opkit"
	"github.com/fairmp/fairmp/layers/train"
	"github.com/fairmp/fairmp/metrics"
	"gorgonia.org/tensor"
)

// FrontierConfig configures Frontier: the grid of FMP settings to
// evaluate and the rule that chooses one.
type FrontierConfig struct {
	// LambdaF lists the λf values of the grid (≥ 0). Default: 20 values
	// from 0 to 16.
	LambdaF []float64
	// LambdaS, K and Temperature, if not empty, are crossed with LambdaF;
	// empty keeps the model's value. Default: the model's.
	LambdaS     []float64
	K           []int
	Temperature []float64
	// Rule chooses the point from the validation accuracy and ΔDP.
	// Default metrics.DefaultRule(): the lowest validation ΔDP within one
	// accuracy point of the model without debiasing (λf = 0).
	Rule metrics.Rule
	// Test, if not empty, are nodes on which every point is also
	// evaluated, for reporting only: the choice uses the validation nodes
	// (the task's Val) alone.
	Test []int
	// TestBootstrap, if not nil, also gives every point bootstrap
	// intervals of its Test metrics (FrontierPoint.TestIntervals, from
	// metrics.Bootstrap with this config), for reporting the uncertainty
	// that comes from which nodes were tested. It needs Test. About 15 ms
	// a point on 5,000 test nodes with the default 1000 resamples.
	TestBootstrap *metrics.BootstrapConfig
}

// DefaultFrontierConfig returns a 20-point λf grid (0, 0.25, 0.5, 0.75,
// 1, 1.25, 1.5, 2, 2.5, 3, 3.5, 4, 5, 6, 7, 8, 10, 12, 14, 16), the
// model's other settings, and metrics.DefaultRule().
func DefaultFrontierConfig() FrontierConfig {
	return FrontierConfig{
		LambdaF: []float64{0, 0.25, 0.5, 0.75, 1, 1.25, 1.5, 2, 2.5, 3, 3.5, 4, 5, 6, 7, 8, 10, 12, 14, 16},
		Rule:    metrics.DefaultRule(),
	}
}

// Validate checks the grid and the rule.
func (c FrontierConfig) Validate() error {
	if len(c.LambdaF) == 0 {
		return fmt.Errorf("fmp: FrontierConfig.LambdaF is empty, want at least one λf")
	}
	for i, v := range c.LambdaF {
		if !(v >= 0) || math.IsInf(v, 0) {
			return fmt.Errorf("fmp: FrontierConfig.LambdaF[%d] = %v, want a finite value ≥ 0", i, v)
		}
	}
	if err := c.Rule.Validate(); err != nil {
		return fmt.Errorf("fmp: FrontierConfig.Rule: %w", err)
	}
	if c.TestBootstrap != nil {
		if len(c.Test) == 0 {
			return fmt.Errorf("fmp: FrontierConfig.TestBootstrap is set but Test is empty, want the test nodes to bootstrap")
		}
		if err := c.TestBootstrap.Validate(); err != nil {
			return fmt.Errorf("fmp: FrontierConfig.TestBootstrap: %w", err)
		}
	}
	return nil
}

// FrontierPoint is one setting of the grid and its metrics.
type FrontierPoint struct {
	Config Config
	// Val is the report on the task's validation nodes; Test on
	// FrontierConfig.Test (zero when it is empty).
	Val, Test metrics.Report
	// TestIntervals are the bootstrap intervals of Test's accuracy, ΔDP
	// and ΔEO when FrontierConfig.TestBootstrap is set (zero otherwise).
	TestIntervals metrics.Intervals
}

// Frontier is the accuracy/fairness trade-off of FMP settings on one
// trained backbone, and the point a rule chose.
type Frontier struct {
	// Points are the grid's settings, in grid order (λf varying fastest).
	Points []FrontierPoint
	// Reference is the model's setting with λf = 0 (propagation only),
	// the reference of a MaxAccuracyLoss rule.
	Reference FrontierPoint
	// Chosen indexes the point the rule chose.
	Chosen int
	// Rule is the rule used.
	Rule  metrics.Rule
	model *Model
}

// Best returns the chosen point.
func (f *Frontier) Best() FrontierPoint { return f.Points[f.Chosen] }

// Model returns the debiased model with the chosen setting; it shares the
// backbone of the model the frontier was computed on. A frontier of
// NewLogitsFrontier has no model: it returns an error.
func (f *Frontier) Model() (*Model, error) {
	if f.model == nil {
		return nil, fmt.Errorf("fmp: Frontier.Model: a frontier on logits (NewLogitsFrontier) has no model; build the chosen layer with New and its Apply")
	}
	return f.model.WithFMP(f.Best().Config)
}

// NewFrontier evaluates every FMP setting of cfg's grid on m's trained
// backbone and chooses one by cfg.Rule on the task's validation nodes. The
// backbone runs once, in evaluation mode; each setting then re-runs only
// the FMP steps on its logits (no retraining), so a point costs about one
// evaluation pass of the FMP layer. Every point's metrics are those of
// the model built separately with that setting (m.WithFMP(point.Config)),
// bit for bit.
//
// It returns an error for an invalid cfg, a task whose Phase is not the
// model's or without validation nodes, a failing forward pass, metrics
// that cannot be computed (a group without validation nodes, for
// instance), or no point meeting the rule (metrics.ErrNoCandidate).
func NewFrontier(m *Model, task *train.Task, cfg FrontierConfig) (*Frontier, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if task == nil || task.X == nil || task.Graph == nil {
		return nil, fmt.Errorf("fmp: NewFrontier: task without Graph or X")
	}
	if task.Phase != m.phase {
		return nil, fmt.Errorf("fmp: NewFrontier: %w", train.ErrPhaseMismatch)
	}
	if len(task.Val) == 0 {
		return nil, fmt.Errorf("fmp: NewFrontier: the task has no validation nodes to choose on")
	}
	xt, err := train.Logits(m.backbone, task)
	if err != nil {
		return nil, fmt.Errorf("fmp: NewFrontier: %w", err)
	}
	f, err := frontier(xt, m.adj, m.layer, task.Labels, task.Val, m.Config(), cfg, "NewFrontier")
	if err != nil {
		return nil, err
	}
	f.model = m
	return f, nil
}

// NewLogitsFrontier is NewFrontier for backbone logits computed elsewhere:
// z (n × c, float32 or float64) are the whole graph's logits of a trained
// backbone, for example of a model trained in mini-batches
// (layers/minibatch.Logits), adj the graph's propagation matrix, sens and
// labels the nodes' groups and labels, val the validation nodes the rule
// chooses on. base gives the settings the grid does not vary (start from
// DefaultConfig). Each point runs Layer.Apply once; the adjacency is
// checked once. Frontier.Model is not available: build the chosen layer
// with New(adj, sens, f.Best().Config) and Apply it to z.
func NewLogitsFrontier(z *tensor.Dense, adj *graph.Matrix, sens, labels, val []int, base Config, cfg FrontierConfig) (*Frontier, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if z == nil {
		return nil, fmt.Errorf("fmp: NewLogitsFrontier: nil logits")
	}
	if len(val) == 0 {
		return nil, fmt.Errorf("fmp: NewLogitsFrontier: no validation nodes to choose on")
	}
	ref, err := New(adj, sens, base)
	if err != nil {
		return nil, fmt.Errorf("fmp: NewLogitsFrontier: %w", err)
	}
	if len(labels) != len(sens) {
		return nil, fmt.Errorf("fmp: NewLogitsFrontier: %d labels for %d nodes", len(labels), len(sens))
	}
	return frontier(z, adj, ref, labels, val, base, cfg, "NewLogitsFrontier")
}

// frontier evaluates the grid of cfg around base on the logits xt with
// layers sharing proto's checked adjacency and group contrast.
func frontier(xt *tensor.Dense, adj *graph.Matrix, proto *Layer, labels, val []int, base Config, cfg FrontierConfig, fn string) (*Frontier, error) {
	s := xt.Shape()
	if len(s) != 2 || s[1] < 2 {
		return nil, fmt.Errorf("fmp: %s: logits of shape %v, want n × c with c ≥ 2", fn, s)
	}
	classes := s[1]
	f := &Frontier{Rule: cfg.Rule}
	eval := func(c Config) (FrontierPoint, error) {
		l, err := proto.with(c)
		if err != nil {
			return FrontierPoint{}, fmt.Errorf("fmp: %s: %+v: %w", fn, c, err)
		}
		out, err := l.Apply(xt)
		if err != nil {
			return FrontierPoint{}, err
		}
		z, err := toF64(out)
		if err != nil {
			return FrontierPoint{}, err
		}
		p := FrontierPoint{Config: c}
		probs := softmaxRows(z, classes)
		if p.Val, err = metrics.Evaluate(probs, classes, labels, proto.sens, val, metrics.DefaultOptions()); err != nil {
			return p, fmt.Errorf("fmp: %s: validation metrics of %+v: %w", fn, c, err)
		}
		if len(cfg.Test) > 0 {
			if p.Test, err = metrics.Evaluate(probs, classes, labels, proto.sens, cfg.Test, metrics.DefaultOptions()); err != nil {
				return p, fmt.Errorf("fmp: %s: test metrics of %+v: %w", fn, c, err)
			}
		}
		if cfg.TestBootstrap != nil {
			if p.TestIntervals, err = metrics.Bootstrap(probs, classes, labels, proto.sens, cfg.Test, metrics.DefaultOptions(), *cfg.TestBootstrap); err != nil {
				return p, fmt.Errorf("fmp: %s: test intervals of %+v: %w", fn, c, err)
			}
		}
		return p, nil
	}
	ref := base
	ref.LambdaF = 0
	var err error
	if f.Reference, err = eval(ref); err != nil {
		return nil, err
	}
	for _, c := range Grid(base, cfg) {
		p, err := eval(c)
		if err != nil {
			return nil, err
		}
		f.Points = append(f.Points, p)
	}
	cands := make([]metrics.Candidate, len(f.Points))
	for i, p := range f.Points {
		cands[i] = metrics.Candidate{Accuracy: p.Val.Accuracy, DemographicParity: p.Val.DemographicParity}
	}
	r := metrics.Candidate{Accuracy: f.Reference.Val.Accuracy, DemographicParity: f.Reference.Val.DemographicParity}
	if f.Chosen, err = metrics.Choose(cands, r, cfg.Rule); err != nil {
		return nil, fmt.Errorf("fmp: %s: %w", fn, err)
	}
	return f, nil
}

// Grid returns the settings of cfg's grid around the setting base, in the
// order of Frontier.Points: base crossed with cfg's lists (an empty list
// keeps base's value), λf varying fastest. The settings are not
// validated.
func Grid(base Config, cfg FrontierConfig) []Config {
	ls, ks, ts := cfg.LambdaS, cfg.K, cfg.Temperature
	if len(ls) == 0 {
		ls = []float64{base.LambdaS}
	}
	if len(ks) == 0 {
		ks = []int{base.K}
	}
	if len(ts) == 0 {
		ts = []float64{base.Temperature}
	}
	var out []Config
	for _, s := range ls {
		for _, k := range ks {
			for _, t := range ts {
				for _, lf := range cfg.LambdaF {
					c := base
					c.LambdaS, c.K, c.Temperature, c.LambdaF = s, k, t, lf
					out = append(out, c)
				}
			}
		}
	}
	return out
}

// with returns a layer of l's graph and attribute with the settings c,
// without checking the adjacency again; the group contrast is shared when
// c uses the same rows.
func (l *Layer) with(c Config) (*Layer, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	ds := l.ds
	if c.PerGroupRows != l.cfg.PerGroupRows {
		var err error
		if ds, err = NewDeltaS(l.sens, c.PerGroupRows); err != nil {
			return nil, err
		}
	}
	return newChecked(l.adj, l.sens, ds, c), nil
}

// softmaxRows returns the row softmax of the n × c logits z.
func softmaxRows(z []float64, c int) []float64 {
	p := make([]float64, len(z))
	for i := 0; i < len(z); i += c {
		opkit.SoftmaxRow(z[i:i+c], p[i:i+c], 1)
	}
	return p
}
