package fmp

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/fairmp/fairmp/graph"
	"github.com/fairmp/fairmp/internal/opkit"
	"github.com/fairmp/fairmp/layers/train"
	"github.com/fairmp/fairmp/metrics"
	"github.com/fairmp/fairmp/metrics/diagnose"
	"github.com/fairmp/fairmp/metrics/selection"
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
	// Rule chooses the point from the validation accuracy and the
	// rule's fairness criterion (any metrics.Criterion: ΔDP, the DP
	// ratio, ΔEO, equalized odds, ...), judged for c classes (the worst
	// class's one-vs-rest value, FrontierPoint.ValClasses) when the task
	// has more than two. Default selection.DefaultRule():
	// the lowest validation ΔDP within one accuracy point of the model
	// without debiasing (λf = 0).
	Rule selection.Rule
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
// model's other settings, and selection.DefaultRule().
func DefaultFrontierConfig() FrontierConfig {
	return FrontierConfig{
		LambdaF: []float64{0, 0.25, 0.5, 0.75, 1, 1.25, 1.5, 2, 2.5, 3, 3.5, 4, 5, 6, 7, 8, 10, 12, 14, 16},
		Rule:    selection.DefaultRule(),
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
	// FrontierConfig.Test (zero when it is empty). A metric undefined on
	// those nodes (ΔEO where a group has no positive node) is NaN and
	// listed in the report's Undefined: the frontier never fails over a
	// criterion, and a point whose rule criterion is undefined is not
	// eligible.
	Val, Test metrics.Report
	// TestIntervals are the bootstrap intervals of Test's accuracy and
	// criteria when FrontierConfig.TestBootstrap is set (zero otherwise).
	TestIntervals metrics.Intervals
	// ValClasses and TestClasses are, for a task of more than two
	// classes, the c-class reports of the same nodes
	// (metrics.EvaluateClasses: accuracy, macro-F1, and every criterion
	// as the worst class's one-vs-rest value), and TestClassIntervals
	// their bootstrap intervals (metrics.BootstrapClasses) when
	// FrontierConfig.TestBootstrap is set; nil for two classes. With more
	// than two classes the rule chooses with ValClasses' criteria; Val
	// and Test, one class (metrics.Options.Positive, class 1) against the
	// rest, are kept for the callers that read them.
	ValClasses, TestClasses *metrics.ClassReport
	TestClassIntervals      *metrics.ClassIntervals
}

// Candidate returns what rule r judges of the point on validation: its
// accuracy and its value of r's criterion, for c classes
// (selection.Rule.ClassCandidate of ValClasses) when the task has more
// than two, binary (selection.Rule.Candidate of Val) otherwise.
func (p FrontierPoint) Candidate(r selection.Rule) selection.Candidate {
	if p.ValClasses != nil {
		return r.ClassCandidate(*p.ValClasses)
	}
	return r.Candidate(p.Val)
}

// Frontier is the accuracy/fairness trade-off of FMP settings on one
// trained backbone, and the point a rule chose.
type Frontier struct {
	// Points are the grid's settings, in grid order (λf varying fastest).
	Points []FrontierPoint
	// Reference is the model's setting with λf = 0 (propagation only),
	// the reference of a Fairest rule's accuracy loss.
	Reference FrontierPoint
	// Chosen indexes the point the rule chose, or is −1 when no point
	// met the rule (see NewFrontier): Best is then the Reference.
	Chosen int
	// Rule is the rule used.
	Rule  selection.Rule
	model *Model
}

// Best returns the chosen point, or the Reference when no point met the
// rule.
func (f *Frontier) Best() FrontierPoint {
	if f.Chosen < 0 {
		return f.Reference
	}
	return f.Points[f.Chosen]
}

// Met reports whether a point met the rule (Chosen ≥ 0).
func (f *Frontier) Met() bool { return f.Chosen >= 0 }

// Diagnostics returns what a reader of the frontier's result should know:
// a diagnose.RuleNotMet diagnostic when no point met the rule (the
// Reference was kept), naming the most accurate and the fairest settings
// reached on validation, so that the rule can be loosened knowingly; nil
// otherwise.
func (f *Frontier) Diagnostics() []diagnose.Diagnostic {
	if f.Met() || len(f.Points) == 0 {
		return nil
	}
	crit := f.Rule.Criterion
	acc, fair := -1, -1
	var fairV float64
	for i, p := range f.Points {
		if acc < 0 || p.Val.Accuracy > f.Points[acc].Val.Accuracy {
			acc = i
		}
		if c := p.Candidate(f.Rule); c.Undefined == nil && (fair < 0 || crit.Better(c.Fairness, fairV)) {
			fair, fairV = i, c.Fairness
		}
	}
	reach := fmt.Sprintf("the most accurate setting (λs %g, λf %g) reaches %.2f%% validation accuracy", f.Points[acc].Config.LambdaS, f.Points[acc].Config.LambdaF, 100*f.Points[acc].Val.Accuracy)
	if fair >= 0 {
		reach += fmt.Sprintf(", the fairest (λs %g, λf %g) %s %s", f.Points[fair].Config.LambdaS, f.Points[fair].Config.LambdaF, crit.Title(), f.Rule.FormatValue(fairV))
	}
	return []diagnose.Diagnostic{{
		Code:    diagnose.RuleNotMet,
		Subject: "fmp",
		Message: fmt.Sprintf("no FMP setting met the rule (%s) on the validation nodes: the reference (λf 0) was kept; %s", f.Rule, reach),
		Advice:  "loosen the rule (a larger accuracy loss, a looser bound, another criterion) or widen the λf grid; the frontier's points show what each setting reaches",
	}}
}

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
// instance), or no point meeting the rule (selection.ErrNoCandidate).
//
// Cancelling ctx stops it before the next setting with an error wrapping
// ctx.Err().
//
// When no point meets the rule, nothing is lost: it returns the Frontier
// (every point evaluated, Chosen −1, Best and Model the Reference) together
// with the error wrapping selection.ErrNoCandidate, so that a caller can keep
// the reference, show what is reachable and say so (Frontier.Diagnostics).
func NewFrontier(ctx context.Context, m *Model, task *train.Task, cfg FrontierConfig) (*Frontier, error) {
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
	if trained, err := train.Trained(m.backbone); err == nil && !trained {
		return nil, fmt.Errorf("fmp: NewFrontier: the backbone (%T): %w (FitTwoStage, or train.Fit on the backbone)", m.backbone, train.ErrUntrained)
	}
	xt, err := train.Logits(m.backbone, task)
	if err != nil {
		return nil, fmt.Errorf("fmp: NewFrontier: %w", err)
	}
	f, err := frontier(ctx, xt, m.adj, m.layer, task.Labels, task.Val, m.Config(), cfg, "NewFrontier")
	if f != nil {
		f.model = m
	}
	return f, err
}

// NewLogitsFrontier is NewFrontier for backbone logits computed elsewhere:
// z (n × c, float32 or float64) are the whole graph's logits of a trained
// backbone, for example of a model trained in mini-batches
// (layers/minibatch.Logits), adj the graph's propagation matrix, sens and
// labels the nodes' groups and labels, val the validation nodes the rule
// chooses on. base gives the settings the grid does not vary (start from
// DefaultConfig). Each point runs Layer.Apply once; the adjacency is
// checked once. Frontier.Model is not available: build the chosen layer
// with New(adj, sens, f.Best().Config) and Apply it to z. As NewFrontier,
// it returns the Frontier with the error when no point meets the rule.
func NewLogitsFrontier(ctx context.Context, z *tensor.Dense, adj *graph.Matrix, sens, labels, val []int, base Config, cfg FrontierConfig) (*Frontier, error) {
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
	return frontier(ctx, z, adj, ref, labels, val, base, cfg, "NewLogitsFrontier")
}

// frontier evaluates the grid of cfg around base on the logits xt with
// layers sharing proto's checked adjacency and group contrast.
func frontier(ctx context.Context, xt *tensor.Dense, adj *graph.Matrix, proto *Layer, labels, val []int, base Config, cfg FrontierConfig, fn string) (*Frontier, error) {
	s := xt.Shape()
	if len(s) != 2 || s[1] < 2 {
		return nil, fmt.Errorf("fmp: %s: logits of shape %v, want n × c with c ≥ 2", fn, s)
	}
	classes := s[1]
	f := &Frontier{Rule: cfg.Rule}
	eval := func(c Config) (FrontierPoint, error) {
		if err := ctx.Err(); err != nil {
			return FrontierPoint{}, fmt.Errorf("fmp: %s: before setting %v: %w", fn, c, err)
		}
		l, err := proto.with(c)
		if err != nil {
			return FrontierPoint{}, fmt.Errorf("fmp: %s: setting %v: %w", fn, c, err)
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
		// A metric undefined on these nodes (a group without positive
		// nodes has no ΔEO) is NaN in the reports, not an error: the
		// rule judges its own criterion (a point where it is undefined is
		// not eligible), and the others are reported as undefined.
		opt := metrics.DefaultOptions()
		opt.AllowUndefined = true
		if p.Val, err = metrics.Evaluate(probs, classes, labels, proto.sens, val, opt); err != nil {
			return p, fmt.Errorf("fmp: %s: validation metrics of %v: %w", fn, c, err)
		}
		if len(cfg.Test) > 0 {
			if p.Test, err = metrics.Evaluate(probs, classes, labels, proto.sens, cfg.Test, opt); err != nil {
				return p, fmt.Errorf("fmp: %s: test metrics of %v: %w", fn, c, err)
			}
		}
		if cfg.TestBootstrap != nil {
			if p.TestIntervals, err = metrics.Bootstrap(probs, classes, labels, proto.sens, cfg.Test, opt, *cfg.TestBootstrap); err != nil {
				return p, fmt.Errorf("fmp: %s: test intervals of %v: %w", fn, c, err)
			}
		}
		if classes > 2 {
			// The c-class criteria: the rule chooses with these.
			v, err := metrics.EvaluateClasses(probs, classes, labels, proto.sens, val, opt)
			if err != nil {
				return p, fmt.Errorf("fmp: %s: validation metrics for %d classes of %v: %w", fn, classes, c, err)
			}
			p.ValClasses = &v
			if len(cfg.Test) > 0 {
				t, err := metrics.EvaluateClasses(probs, classes, labels, proto.sens, cfg.Test, opt)
				if err != nil {
					return p, fmt.Errorf("fmp: %s: test metrics for %d classes of %v: %w", fn, classes, c, err)
				}
				p.TestClasses = &t
			}
			if cfg.TestBootstrap != nil {
				iv, err := metrics.BootstrapClasses(probs, classes, labels, proto.sens, cfg.Test, opt, *cfg.TestBootstrap)
				if err != nil {
					return p, fmt.Errorf("fmp: %s: test intervals for %d classes of %v: %w", fn, classes, c, err)
				}
				p.TestClassIntervals = &iv
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
	cands := make([]selection.Candidate, len(f.Points))
	for i, p := range f.Points {
		cands[i] = p.Candidate(cfg.Rule)
	}
	if f.Chosen, err = selection.Choose(cands, f.Reference.Candidate(cfg.Rule), cfg.Rule); err != nil {
		if errors.Is(err, selection.ErrNoCandidate) {
			f.Chosen = -1
			return f, fmt.Errorf("fmp: %s: %w", fn, err)
		}
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
		if ds, err = newDeltaS(l.sens, c.PerGroupRows); err != nil {
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
