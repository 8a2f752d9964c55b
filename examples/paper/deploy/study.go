package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"time"

	"github.com/fairmp/fairmp/metrics/selection"
	"gorgonia.org/tensor"

	"github.com/fairmp/fairmp/examples/paper/internal/exp"
	"github.com/fairmp/fairmp/fmp"
	"github.com/fairmp/fairmp/fmp/modelio"
	"github.com/fairmp/fairmp/fmp/score"
	"github.com/fairmp/fairmp/graph/datasets"
	"github.com/fairmp/fairmp/graph/features"
	"github.com/fairmp/fairmp/layers"
	"github.com/fairmp/fairmp/layers/postprocess"
	"github.com/fairmp/fairmp/layers/train"
	"github.com/fairmp/fairmp/metrics"
)

// The methods, in table order, as the CSV names them.
const (
	mBackbone   = "backbone"
	mThresholds = "thresholds"
	mRecompute  = "fmp-recompute"
	mFitted     = "fmp-fitted"
)

var methods = []string{mBackbone, mThresholds, mRecompute, mFitted}

// title is a method's name in the tables.
func title(m string) string {
	switch m {
	case mRecompute:
		return "FMP (a) recompute"
	case mFitted:
		return "FMP (b) fitted"
	case mThresholds:
		return "per-group thresholds"
	case mBackbone:
		return "GCN alone"
	case "edits":
		return "EDITS, new nodes unprocessed"
	case "fairgnn":
		return "FairGNN (GCN body)"
	case "nifty":
		return "NIFTY (GCN body)"
	case "fairvgnn":
		return "FairVGNN (GCN body, mask folded)"
	case "rawlsgcn":
		return "RawlsGCN (GCN)"
	}
	return "GCN + " + m
}

// runResult is one data set, seed and method.
type runResult struct {
	dataset, method string
	seed            int
	// setting is FMP's chosen setting or the thresholds.
	setting string
	// oldNodes, newNodes: the sizes of the draw; newRep and newIv the
	// metrics of the new nodes (their true labels) with their bootstrap
	// intervals; valRep and valIv the same on the old validation nodes,
	// from the old-graph output (what the setting was chosen on).
	oldNodes, newNodes int
	newRep, valRep     metrics.Report
	newIv, valIv       metrics.Intervals
	// oldChanged is the share of the old test nodes whose decision
	// differs between the old-graph output and the grown-graph output of
	// the method (with its bootstrap interval over those nodes).
	oldChanged metrics.Interval
	oldTest    int
	// drift is metrics.CompareBaseline of the new nodes against the
	// validation baseline the model file records (the thresholds' own,
	// computed the same way, for thresholds).
	drift metrics.Drift
	// field is the receptive field of the new nodes (Scores.Field) and
	// scoreTime the wall time of scoring them (thresholds: the
	// backbone's scoring plus the decisions).
	field     int
	scoreTime time.Duration
	// checkDiff is the largest difference between the scorer's
	// probabilities of the old validation nodes on the old graph and the
	// trained model's (train.Predict): a check that the file and the
	// scorer reproduce the model (0 up to rounding).
	checkDiff float64
	// For the two FMP methods: the share of new nodes whose decision
	// differs between recompute and fitted, and the largest difference of
	// their probabilities; atBound is how many of the K duals recorded on
	// the training graph lie on the l∞ bound of the dual (λf's radius).
	abChanged metrics.Interval
	abMaxDiff float64
	atBound   string
	// trainTime is the wall time of training the model (FMP and the
	// thresholds: the GCN's; EDITS: its pre-processing and the GCN's).
	trainTime time.Duration
	// valRaw is, for a pre-processing method, its model on the old
	// validation nodes with their raw features and edges (the old graph
	// unprocessed); nil otherwise.
	valRaw *metrics.Report
}

// studyOptions are the knobs of one seed's run.
type studyOptions struct {
	newFrac float64
	train   exp.TrainOptions
	// methods are the registry's methods run besides the four above
	// (trainMethod).
	methods []string
}

// deployOne runs the inductive protocol on full with seed: draw the old
// graph, train the backbone on it, choose FMP and the thresholds on its
// validation nodes, save the models, and score the new nodes of the full
// graph with each method.
func deployOne(full *datasets.Dataset, seed int64, so studyOptions, logw io.Writer) ([]runResult, error) {
	w, err := draw(full, 1-so.newFrac, seed)
	if err != nil {
		return nil, err
	}
	old := w.old
	if len(old.Split.Train) == 0 || len(old.Split.Val) == 0 || len(old.Split.Test) == 0 {
		return nil, fmt.Errorf("the old graph has %d train, %d validation and %d test nodes, want some of each", len(old.Split.Train), len(old.Split.Val), len(old.Split.Test))
	}
	p, err := exp.NewProblem(old, tensor.Float64)
	if err != nil {
		return nil, err
	}
	spec := exp.DefaultSpec("gcn")
	spec.Seed = seed
	// exp.Run also evaluates the old test nodes; that report is not used
	// (their labels take no part in the study).
	out, err := exp.Run(p, spec, so.train)
	if err != nil {
		return nil, err
	}
	bpred, err := train.Predict(out.Model, p.Task, nil)
	if err != nil {
		return nil, err
	}

	// FMP on the trained backbone, λs = 0 as the base (the frontier's
	// reference is then the backbone itself), chosen on the old validation
	// nodes by the frontier's default rule over λf × λs ∈ {0, 1}.
	base := fmp.DefaultOnConfig()
	base.FMP.LambdaS = 0
	m, err := fmp.On(out.Model, old.Graph, old.Sens, base, p.Task.Phase)
	if err != nil {
		return nil, err
	}
	fc := fmp.DefaultFrontierConfig()
	fc.LambdaS = []float64{0, 1}
	f, err := fmp.NewFrontier(context.Background(), m, p.Task, fc)
	if errors.Is(err, selection.ErrNoCandidate) && f != nil {
		fmt.Fprintf(logw, "  note: no FMP setting met the rule on validation; keeping λf = 0 (the backbone)\n")
	} else if err != nil {
		return nil, fmt.Errorf("FMP's frontier: %w", err)
	}
	chosen, err := f.Model()
	if err != nil {
		return nil, err
	}
	best := f.Best().Config
	setting := fmt.Sprintf("λs=%g λf=%g", best.LambdaS, best.LambdaF)
	cpred, err := train.Predict(chosen, p.Task, nil)
	if err != nil {
		return nil, err
	}
	xOld, err := features.NewDense(old.Features, old.N(), old.NumFeatures)
	if err != nil {
		return nil, err
	}
	if err := chosen.Record(xOld); err != nil {
		return nil, err
	}

	// Per-group thresholds on the backbone's validation probabilities.
	p1Old := bpred.Column(1)
	th, err := postprocess.FitThresholds(p1Old, old.Labels, old.Sens, old.Split.Val, postprocess.DefaultThresholdsConfig())
	if err != nil {
		return nil, fmt.Errorf("thresholds: %w", err)
	}
	thOld, err := th.OneHot(p1Old, old.Sens, seed)
	if err != nil {
		return nil, err
	}
	thSetting := ""
	for g, t := range th.T() {
		thSetting += fmt.Sprintf("t%d=%.3g ", g, t)
	}

	// The model files, as a deployment would write them: the feature
	// schema and the validation baseline recorded.
	opt, bc := metrics.DefaultOptions(), metrics.DefaultBootstrapConfig()
	schema := old.Schema()
	save := func(model layers.Model, probs []float64) ([]byte, error) {
		bl, err := metrics.NewBaseline(probs, 2, old.Labels, old.Sens, old.Split.Val, opt, bc)
		if err != nil {
			return nil, err
		}
		var buf bytes.Buffer
		if err := modelio.Save(&buf, model, modelio.SaveConfig{Features: &schema, Baseline: &bl}); err != nil {
			return nil, err
		}
		return buf.Bytes(), nil
	}
	bfile, err := save(out.Model, bpred.Probs)
	if err != nil {
		return nil, fmt.Errorf("saving the backbone: %w", err)
	}
	ffile, err := save(chosen, cpred.Probs)
	if err != nil {
		return nil, fmt.Errorf("saving the FMP model: %w", err)
	}
	thBaseline, err := metrics.NewBaseline(thOld, 2, old.Labels, old.Sens, old.Split.Val, opt, bc)
	if err != nil {
		return nil, err
	}
	open := func(file []byte, sem score.Semantics) (*score.Scorer, error) {
		c := score.DefaultConfig()
		c.FMP = sem
		return score.Open(bytes.NewReader(file), c)
	}
	scorers := map[string]*score.Scorer{}
	for _, s := range []struct {
		m    string
		file []byte
		sem  score.Semantics
	}{{mBackbone, bfile, score.Fitted}, {mRecompute, ffile, score.Recompute}, {mFitted, ffile, score.Fitted}} {
		if scorers[s.m], err = open(s.file, s.sem); err != nil {
			return nil, fmt.Errorf("%s: %w", s.m, err)
		}
	}

	// The grown graph: the full data set. Scoring the new nodes.
	xFull, err := features.NewDense(full.Features, full.N(), full.NumFeatures)
	if err != nil {
		return nil, err
	}
	newLabels, newSens := pickInts(full.Labels, w.newIDs), pickInts(full.Sens, w.newIDs)
	oldTestFull := make([]int, len(old.Split.Test))
	for k, r := range old.Split.Test {
		oldTestFull[k] = w.oldIDs[r]
	}
	oldTestSens := pickInts(full.Sens, oldTestFull)
	type scored struct {
		newProbs, oldTestProbs []float64
		field                  int
		took                   time.Duration
		check                  float64
	}
	sc := map[string]*scored{}
	for _, m := range []string{mBackbone, mRecompute, mFitted} {
		s := scorers[m]
		start := time.Now()
		nw, err := s.Score(context.Background(), full.Graph, xFull, full.Sens, w.newIDs)
		if err != nil {
			return nil, fmt.Errorf("%s: scoring the new nodes: %w", m, err)
		}
		took := time.Since(start)
		ot, err := s.Score(context.Background(), full.Graph, xFull, full.Sens, oldTestFull)
		if err != nil {
			return nil, fmt.Errorf("%s: scoring the old test nodes: %w", m, err)
		}
		// The check: the file scored on the old graph is the trained model.
		want := bpred
		if m != mBackbone {
			want = cpred
		}
		onOld, err := s.Score(context.Background(), old.Graph, xOld, old.Sens, old.Split.Val)
		if err != nil {
			return nil, fmt.Errorf("%s: scoring the old validation nodes on the old graph: %w", m, err)
		}
		sc[m] = &scored{newProbs: nw.Probs, oldTestProbs: ot.Probs, field: nw.Field, took: took,
			check: maxDiff(onOld.Probs, pickRows(want.Probs, 2, old.Split.Val))}
	}
	// Thresholds on the backbone's new-node and grown-graph probabilities.
	start := time.Now()
	thNew, err := th.OneHot(column1(sc[mBackbone].newProbs), newSens, seed)
	if err != nil {
		return nil, err
	}
	sc[mThresholds] = &scored{newProbs: thNew, field: sc[mBackbone].field, took: sc[mBackbone].took + time.Since(start), check: sc[mBackbone].check}
	if sc[mThresholds].oldTestProbs, err = th.OneHot(column1(sc[mBackbone].oldTestProbs), oldTestSens, seed); err != nil {
		return nil, err
	}

	abChanged, err := metrics.ChangeRate(sc[mRecompute].newProbs, sc[mFitted].newProbs, 2, nil, opt, bc)
	if err != nil {
		return nil, err
	}
	abMax := maxDiff(sc[mRecompute].newProbs, sc[mFitted].newProbs)
	atBound, err := dualsAtBound(chosen.Recorded())
	if err != nil {
		return nil, err
	}

	ev := evalInputs{old: old, newLabels: newLabels, newSens: newSens, opt: opt, bc: bc}
	var rs []runResult
	for _, m := range methods {
		r := runResult{dataset: full.Name, method: m, seed: int(seed), oldNodes: len(w.oldIDs), newNodes: len(w.newIDs),
			oldTest: len(oldTestFull), field: sc[m].field, scoreTime: sc[m].took, checkDiff: sc[m].check, trainTime: out.Train}
		var valProbs []float64
		var bl *metrics.Baseline
		switch m {
		case mBackbone:
			valProbs, bl = bpred.Probs, scorers[mBackbone].Header().Baseline
		case mThresholds:
			valProbs, bl, r.setting = thOld, &thBaseline, thSetting
		default:
			valProbs, bl, r.setting = cpred.Probs, scorers[m].Header().Baseline, setting
			r.abChanged, r.abMaxDiff, r.atBound = abChanged, abMax, atBound
		}
		if err := ev.fill(&r, sc[m].newProbs, sc[m].oldTestProbs, valProbs, bl); err != nil {
			return nil, fmt.Errorf("%s: %w", m, err)
		}
		rs = append(rs, r)
	}

	// Every other method of the registry that saves a model: trained on
	// the old graph with fairness.Fit, saved and opened as the GCN is,
	// and scored on the new nodes from its file.
	for _, name := range so.methods {
		fmt.Fprintf(logw, "  %s: training on the old graph\n", name)
		tm, err := trainMethod(name, old, seed, so)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		file, err := save(tm.model, tm.pred.Probs)
		if err != nil {
			return nil, fmt.Errorf("%s: saving the model: %w", name, err)
		}
		s, err := open(file, score.Fitted)
		if err != nil {
			return nil, fmt.Errorf("%s: opening the model file: %w", name, err)
		}
		// New nodes and old test nodes on the grown graph as it is: raw
		// features and edges (for EDITS, what it did not process).
		begin := time.Now()
		nw, err := s.Score(context.Background(), full.Graph, xFull, full.Sens, w.newIDs)
		if err != nil {
			return nil, fmt.Errorf("%s: scoring the new nodes: %w", name, err)
		}
		took := time.Since(begin)
		ot, err := s.Score(context.Background(), full.Graph, xFull, full.Sens, oldTestFull)
		if err != nil {
			return nil, fmt.Errorf("%s: scoring the old test nodes: %w", name, err)
		}
		// The check, on the data the model trained on.
		xIn, err := features.NewDense(tm.in.Features, tm.in.N(), tm.in.NumFeatures)
		if err != nil {
			return nil, err
		}
		onOld, err := s.Score(context.Background(), tm.in.Graph, xIn, tm.in.Sens, old.Split.Val)
		if err != nil {
			return nil, fmt.Errorf("%s: scoring the old validation nodes: %w", name, err)
		}
		r := runResult{dataset: full.Name, method: name, seed: int(seed), oldNodes: len(w.oldIDs), newNodes: len(w.newIDs),
			oldTest: len(oldTestFull), field: nw.Field, scoreTime: took, trainTime: tm.took, setting: tm.setting,
			checkDiff: maxDiff(onOld.Probs, pickRows(tm.pred.Probs, 2, old.Split.Val))}
		if err := ev.fill(&r, nw.Probs, ot.Probs, tm.pred.Probs, s.Header().Baseline); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		if tm.in != old {
			// A pre-processing method: its model on the old validation
			// nodes' raw features and edges, to separate what skipping
			// the pre-processing costs from what new nodes cost.
			raw, err := s.Score(context.Background(), old.Graph, xOld, old.Sens, old.Split.Val)
			if err != nil {
				return nil, fmt.Errorf("%s: scoring the raw old validation nodes: %w", name, err)
			}
			rawVal := pickInts(old.Labels, old.Split.Val)
			rep, err := metrics.Evaluate(raw.Probs, 2, rawVal, pickInts(old.Sens, old.Split.Val), nil, opt)
			if err != nil {
				return nil, fmt.Errorf("%s: the raw validation nodes: %w", name, err)
			}
			r.valRaw = &rep
		}
		rs = append(rs, r)
	}
	return rs, nil
}

// evalInputs is what every method's row is measured against.
type evalInputs struct {
	old                *datasets.Dataset
	newLabels, newSens []int
	opt                metrics.Options
	bc                 metrics.BootstrapConfig
}

// fill measures r from a method's probabilities: the new nodes' (newProbs,
// from the grown graph), the old test nodes' on the grown graph
// (oldTestProbs), and every old node's on the old graph (valProbs, the
// validation figures); bl is the file's validation baseline.
func (ev evalInputs) fill(r *runResult, newProbs, oldTestProbs, valProbs []float64, bl *metrics.Baseline) error {
	old, opt, bc := ev.old, ev.opt, ev.bc
	var err error
	if r.newRep, err = metrics.Evaluate(newProbs, 2, ev.newLabels, ev.newSens, nil, opt); err != nil {
		return fmt.Errorf("the new nodes: %w", err)
	}
	if r.newIv, err = metrics.Bootstrap(newProbs, 2, ev.newLabels, ev.newSens, nil, opt, bc); err != nil {
		return fmt.Errorf("the new nodes: %w", err)
	}
	if r.valRep, err = metrics.Evaluate(valProbs, 2, old.Labels, old.Sens, old.Split.Val, opt); err != nil {
		return fmt.Errorf("the validation nodes: %w", err)
	}
	if r.valIv, err = metrics.Bootstrap(valProbs, 2, old.Labels, old.Sens, old.Split.Val, opt, bc); err != nil {
		return fmt.Errorf("the validation nodes: %w", err)
	}
	if r.oldChanged, err = metrics.ChangeRate(pickRows(valProbs, 2, old.Split.Test), oldTestProbs, 2, nil, opt, bc); err != nil {
		return fmt.Errorf("the old test nodes: %w", err)
	}
	if bl == nil {
		return fmt.Errorf("the model file records no baseline")
	}
	if r.drift, err = metrics.CompareBaseline(*bl, newProbs, 2, ev.newLabels, ev.newSens, nil, opt, bc); err != nil {
		return fmt.Errorf("drift: %w", err)
	}
	return nil
}

// dualsAtBound says how many of the fitted duals lie on the l∞ bound
// of the dual ("k/K"): where every dual is on it, the fitted shift of a
// node's logits does not depend on the groups' sizes, and recompute and
// fitted agree.
func dualsAtBound(f *fmp.Recorded) (string, error) {
	if f == nil {
		return "", fmt.Errorf("the FMP model was not fitted")
	}
	if len(f.Duals) == 0 {
		return fmt.Sprintf("λf = 0 (0/%d)", f.Config.K), nil
	}
	st, err := fmp.NewSteps(f.Config, f.Counts)
	if err != nil {
		return "", err
	}
	_, rad := st.DualStep()
	k := 0
	for _, u := range f.Duals {
		for _, v := range u {
			if math.Abs(v) >= rad*(1-1e-9) {
				k++
				break
			}
		}
	}
	return fmt.Sprintf("%d/%d", k, len(f.Duals)), nil
}

func pickInts(v []int, idx []int) []int {
	out := make([]int, len(idx))
	for k, i := range idx {
		out[k] = v[i]
	}
	return out
}

// pickRows returns the rows idx of an n × c matrix.
func pickRows(p []float64, c int, idx []int) []float64 {
	out := make([]float64, 0, len(idx)*c)
	for _, i := range idx {
		out = append(out, p[i*c:(i+1)*c]...)
	}
	return out
}

// column1 returns P(y = 1) of n × 2 probabilities.
func column1(p []float64) []float64 {
	out := make([]float64, len(p)/2)
	for i := range out {
		out[i] = p[2*i+1]
	}
	return out
}

func maxDiff(a, b []float64) float64 {
	if len(a) != len(b) {
		return math.Inf(1)
	}
	m := 0.0
	for i := range a {
		m = math.Max(m, math.Abs(a[i]-b[i]))
	}
	return m
}
