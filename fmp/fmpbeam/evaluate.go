package fmpbeam

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sort"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/fairmp/fairmp/metrics/selection"

	"github.com/fairmp/fairmp/fmp"
	"github.com/fairmp/fairmp/internal/opkit"
	"github.com/fairmp/fairmp/metrics"
)

// Metrics and the frontier. The metrics of one setting need its
// validation and test nodes together (the AUC ranks them): every block
// sends its evaluated nodes' rows of a setting to that setting's key, and
// one worker per setting assembles them in node order and calls
// metrics.Evaluate, the in-memory function itself. That worker holds
// 8·(C + 2) bytes per evaluated node (16 MB per million at C = 2). The
// points are then gathered and selection.Choose applies the rule.

// Point is one setting's metrics on the validation and the test nodes.
type Point struct {
	// Config is the FMP setting (nil for the backbone's point).
	Config *fmp.Config    `json:"config,omitempty"`
	Val    metrics.Report `json:"val"`
	Test   metrics.Report `json:"test"`
	// Index is the point's setting (0 for the backbone, 1 + s for setting
	// s of the FMP run).
	Index int `json:"-"`
}

// Result is what the evaluation found: the backbone's metrics, every FMP
// setting's, and the setting the rule chose on the validation nodes.
type Result struct {
	Backbone Point `json:"backbone"`
	// Points are the grid's settings (one without a frontier).
	Points []Point `json:"points"`
	// Reference is the setting with λf = 0 a MaxAccuracyLoss rule is
	// measured from (nil without a frontier).
	Reference *Point `json:"reference,omitempty"`
	// Chosen indexes Points; Rule is the rule that chose it (nil without
	// a frontier). Chosen is −1 when no point met the rule: the reference
	// is then the output (as fmp.Frontier keeps it).
	Chosen int             `json:"chosen"`
	Rule   *selection.Rule `json:"rule,omitempty"`
	// Setting is Chosen's (or the kept reference's) index among the
	// settings the FMP run computed (its columns in FMP's output).
	Setting int `json:"-"`
}

func encPoint(v Point) ([]byte, error) {
	return json.Marshal(struct {
		Point
		I int
	}{v, v.Index})
}

func decPoint(b []byte) (Point, error) {
	var w struct {
		Point
		I int
	}
	err := json.Unmarshal(b, &w)
	w.Point.Index = w.I
	return w.Point, err
}

func encResult(v Result) ([]byte, error) {
	return json.Marshal(struct {
		Result
		S int
	}{v, v.Setting})
}

func decResult(b []byte) (Result, error) {
	var w struct {
		Result
		S int
	}
	err := json.Unmarshal(b, &w)
	w.Result.Setting = w.S
	return w.Result, err
}

// Plan says which of the FMP run's settings are the grid's points and
// which one is the rule's reference.
type Plan struct {
	// Settings are the FMP run's settings.
	Settings []fmp.Config
	// Grid indexes the settings of the points, in grid order.
	Grid []int
	// Reference indexes the reference setting (−1: no frontier, a single
	// point).
	Reference int
	// Rule chooses among the points.
	Rule selection.Rule
}

// NewPlan lays out the settings of one FMP setting (frontier nil) or of
// a frontier's grid around base: the grid's points, then the reference
// (base with λf = 0) unless the grid holds it already.
func NewPlan(base fmp.Config, frontier *fmp.FrontierConfig) (Plan, error) {
	if err := base.Validate(); err != nil {
		return Plan{}, err
	}
	if frontier == nil {
		return Plan{Settings: []fmp.Config{base}, Grid: []int{0}, Reference: -1}, nil
	}
	if err := frontier.Validate(); err != nil {
		return Plan{}, err
	}
	p := Plan{Settings: fmp.Grid(base, *frontier), Rule: frontier.Rule}
	for s, c := range p.Settings {
		if err := c.Validate(); err != nil {
			return Plan{}, fmt.Errorf("fmpbeam: frontier point %d: %w", s, err)
		}
		p.Grid = append(p.Grid, s)
	}
	ref := base
	ref.LambdaF = 0
	p.Reference = -1
	for s, c := range p.Settings {
		if c == ref {
			p.Reference = s
		}
	}
	if p.Reference < 0 {
		p.Reference = len(p.Settings)
		p.Settings = append(p.Settings, ref)
	}
	return p, nil
}

// evalSplitFn sends a block's validation and test nodes, with their
// backbone logits (key 0) and each setting's F (key 1 + s), to the
// settings' evaluators.
type evalSplitFn struct{ S int }

func (f *evalSplitFn) ProcessElement(ctx context.Context, b int64, nodes func(*Nodes) bool, logits func(*Rows) bool, outs func(*Rows) bool, emit func(int64, Eval)) error {
	var nb Nodes
	var z, fo Rows
	if !nodes(&nb) || !logits(&z) || !outs(&fo) {
		return fmt.Errorf("fmpbeam: evaluate: block %d lacks its nodes, logits or FMP output", b)
	}
	counter(ctx, "evaluate.split", keyed(b, encodedSize(&nb))+keyed(b, encodedSize(&z))+keyed(b, encodedSize(&fo)))
	c := int(z.C)
	var idx []int32
	for i, sp := range nb.Split {
		if sp == SplitVal || sp == SplitTest {
			idx = append(idx, int32(i))
		}
	}
	for t := 0; t <= f.S; t++ {
		e := Eval{Lo: nb.Lo, C: z.C, Idx: idx, Label: make([]int32, len(idx)), Sens: make([]int32, len(idx)), Split: make([]uint8, len(idx)), Z: make([]float64, len(idx)*c)}
		for k, i := range idx {
			e.Label[k], e.Sens[k], e.Split[k] = nb.Label[i], nb.Sens[i], nb.Split[i]
			if t == 0 {
				copy(e.Z[k*c:], z.V[int(i)*c:(int(i)+1)*c])
			} else {
				r := (int(i)*f.S + t - 1) * c
				copy(e.Z[k*c:], fo.V[r:r+c])
			}
		}
		emit(int64(t), e)
	}
	return nil
}

// evaluateFn computes one setting's metrics on its validation and test
// nodes.
type evaluateFn struct {
	Settings []fmp.Config
}

func (f *evaluateFn) ProcessElement(ctx context.Context, t int64, parts func(*Eval) bool, emit func(int64, Point)) error {
	var all []Eval
	var e Eval
	bytes := 0
	for parts(&e) {
		bytes += keyed(t, encodedSize(&e))
		all = append(all, e)
	}
	counter(ctx, "evaluate.gather", bytes)
	sort.Slice(all, func(i, j int) bool { return all[i].Lo < all[j].Lo })
	var probs []float64
	var labels, sens, val, test []int
	c := 0
	for _, e := range all {
		c = int(e.C)
		for k := range e.Idx {
			m := len(labels)
			p := make([]float64, c)
			opkit.SoftmaxRow(e.Z[k*c:(k+1)*c], p, 1)
			probs = append(probs, p...)
			labels, sens = append(labels, int(e.Label[k])), append(sens, int(e.Sens[k]))
			if e.Split[k] == SplitVal {
				val = append(val, m)
			} else {
				test = append(test, m)
			}
		}
	}
	p := Point{Index: int(t)}
	if t > 0 {
		c := f.Settings[t-1]
		p.Config = &c
	}
	var err error
	if p.Val, err = metrics.Evaluate(probs, c, labels, sens, val, metrics.DefaultOptions()); err != nil {
		return fmt.Errorf("fmpbeam: evaluate: %s on the validation nodes: %w", pointName(p), err)
	}
	if p.Test, err = metrics.Evaluate(probs, c, labels, sens, test, metrics.DefaultOptions()); err != nil {
		return fmt.Errorf("fmpbeam: evaluate: %s on the test nodes: %w", pointName(p), err)
	}
	emit(0, p)
	return nil
}

func pointName(p Point) string {
	if p.Index == 0 {
		return "the backbone"
	}
	return fmt.Sprintf("FMP λs %g λf %g K %d τ %g", p.Config.LambdaS, p.Config.LambdaF, p.Config.K, p.Config.Temperature)
}

// chooseFn gathers the points and applies the plan's rule.
type chooseFn struct{ Plan Plan }

func (f *chooseFn) ProcessElement(_ int64, points func(*Point) bool) (Result, error) {
	byIndex := map[int]Point{}
	var p Point
	for points(&p) {
		byIndex[p.Index] = p
	}
	r := Result{Backbone: byIndex[0]}
	for _, s := range f.Plan.Grid {
		r.Points = append(r.Points, byIndex[1+s])
	}
	r.Setting = f.Plan.Grid[0]
	if f.Plan.Reference < 0 {
		return r, nil
	}
	ref := byIndex[1+f.Plan.Reference]
	rule := f.Plan.Rule
	r.Reference, r.Rule = &ref, &rule
	cands := make([]selection.Candidate, len(r.Points))
	for i, p := range r.Points {
		cands[i] = rule.Candidate(p.Val)
	}
	var err error
	if r.Chosen, err = selection.Choose(cands, rule.Candidate(ref.Val), rule); err != nil {
		if errors.Is(err, selection.ErrNoCandidate) {
			// As fmp.NewLogitsFrontier: nothing chosen, the reference kept.
			r.Chosen, r.Setting = -1, f.Plan.Reference
			return r, nil
		}
		return r, fmt.Errorf("fmpbeam: the frontier: %w", err)
	}
	r.Setting = f.Plan.Grid[r.Chosen]
	return r, nil
}

// Evaluate computes the metrics of the backbone's logits z and of every
// setting of an FMP run's output out (FMP's S·C columns) on the
// validation and test nodes (ReadNodes's splits), and applies the plan's
// rule on the validation metrics: a singleton Result.
func Evaluate(s beam.Scope, plan Plan, nodes, z, out beam.PCollection) beam.PCollection {
	s = s.Scope("Evaluate")
	parts := beam.ParDo(s, &evalSplitFn{S: len(plan.Settings)}, beam.CoGroupByKey(s, nodes, z, out))
	points := beam.ParDo(s, &evaluateFn{Settings: plan.Settings}, beam.GroupByKey(s, parts))
	return beam.ParDo(s, &chooseFn{Plan: plan}, beam.GroupByKey(s, points))
}

func init() {
	beam.RegisterCoder(reflect.TypeOf(Point{}), encPoint, decPoint)
	beam.RegisterCoder(reflect.TypeOf(Result{}), encResult, decResult)
	register.DoFn6x1[context.Context, int64, func(*Nodes) bool, func(*Rows) bool, func(*Rows) bool, func(int64, Eval), error](&evalSplitFn{})
	register.DoFn4x1[context.Context, int64, func(*Eval) bool, func(int64, Point), error](&evaluateFn{})
	register.DoFn2x2[int64, func(*Point) bool, Result, error](&chooseFn{})
	register.Emitter2[int64, Eval]()
	register.Emitter2[int64, Point]()
	register.Iter1[Eval]()
	register.Iter1[Point]()
}
