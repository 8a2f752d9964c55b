package main

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/fairmp/fairmp/metrics/diagnose"
	"github.com/fairmp/fairmp/metrics/selection"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/fairmp/fairmp/fmp"
	"github.com/fairmp/fairmp/fmp/modelio"
	"github.com/fairmp/fairmp/fmp/score"
	"github.com/fairmp/fairmp/graph/datasets"
	"github.com/fairmp/fairmp/graph/features"
	"github.com/fairmp/fairmp/internal/protocol"
	"github.com/fairmp/fairmp/layers"
	"github.com/fairmp/fairmp/layers/fairness"
	"github.com/fairmp/fairmp/layers/fairtrain"
	"github.com/fairmp/fairmp/layers/postprocess"
	"github.com/fairmp/fairmp/layers/train"
	"github.com/fairmp/fairmp/metrics"
)

// method is one way of deciding: its probabilities of every class for
// every node (n × classes) and its decisions.
type method struct {
	Name string `json:"-"`
	// probs are the probabilities written to predictions.csv; decision
	// their argmax unless thresholded (then set by the thresholds).
	probs       []float64
	decision    []int
	thresholded bool
	Val         *metrics.Report `json:"val,omitempty"`
	Test        *metrics.Report `json:"test,omitempty"`
	// ValCriterion and TestCriterion are the rule's criterion on the
	// validation and test nodes (absent where undefined).
	ValCriterion  *float64 `json:"val_criterion,omitempty"`
	TestCriterion *float64 `json:"test_criterion,omitempty"`
	// ValClasses, TestClasses and TestClassCI are, for a task of more
	// than two classes, the c-class reports and intervals
	// (metrics.EvaluateClasses, BootstrapClasses): the table's criteria
	// are theirs (evaluateClasses).
	ValClasses  *metrics.ClassReport    `json:"val_classes,omitempty"`
	TestClasses *metrics.ClassReport    `json:"test_classes,omitempty"`
	TestClassCI *metrics.ClassIntervals `json:"test_classes_interval_95,omitempty"`
	// TestCI holds 95% bootstrap intervals of the test accuracy and of
	// every criterion (metrics.Bootstrap: 1000 resamples of the test
	// nodes within each group, seed 1): the uncertainty that comes from
	// which nodes were tested.
	TestCI *metrics.Intervals `json:"test_interval_95,omitempty"`
	// AUCOf says what the AUC ranks by when it is not the row's own
	// probabilities (the thresholds': the backbone's scores).
	AUCOf string `json:"auc_of,omitempty"`
	// Setting says what was chosen (FMP's λs and λf, the thresholds).
	Setting map[string]float64 `json:"setting,omitempty"`
	// Marks say why the row is not a result to read as one: "trivial:
	// selects every node" (its parity is by triviality), "not above the
	// majority rate: ..." (the low end of its accuracy's 95% interval is
	// at or below the majority-class rate, diagnose.NotAboveMajority: the
	// test nodes do not show it to beat a constant prediction), "rule
	// not met" (no setting met the rule: FMP's row is its reference).
	// From the test nodes' diagnostics (the validation nodes', by the
	// accuracy alone, without a test split).
	Marks []string `json:"marks"`
}

// result is everything execute writes.
type result struct {
	ds       *datasets.Dataset
	methods  []*method
	frontier *fmp.Frontier
	thNote   string
	noModel  string // why no model file is written, when one cannot be
	model    layers.Model
	// baseline is the chosen model's decisions on the validation nodes,
	// recorded in model.fmp for drift (nil without a model file).
	baseline *metrics.Baseline
	// nodes is the graph's nodes by id with their split, recorded in
	// model.fmp so that a later -model run tells them from new ones.
	nodes *modelio.Nodes
	// With -model: seen marks the nodes of the graph the model was saved
	// for, known by id (nil when they cannot be told apart: seenNote
	// says why), heldOut says which nodes the test figures cover, and
	// drift compares the scored nodes with the file's baseline.
	saved    bool
	seen     []bool
	seenNote string
	heldOut  string
	drift    map[string]any
	// driftWarnings are the drift's warnings, as stderr prints them
	// ("drift on the new nodes: ..."), for the report; driftOf the whole
	// comparison, and driftOn which nodes it covers.
	driftWarnings []string
	driftOf       *metrics.Drift
	driftOn       string
	// stderrWarnings are every warning printed on stderr before the
	// outputs are written (warnLog): the report shows them all.
	stderrWarnings []string
	training       map[string]any
	// diagnostics are what a careful analyst would say before anyone
	// reads the table (diagnose.Diagnostic), in the command's words.
	diagnostics []diagnose.Diagnostic
	// search is what the backbone search tried and chose (nil without
	// one).
	search *searchRecord
	// belowAdvice, when set, replaces the advice of a BelowMajority
	// diagnostic: what the command's flags can change (the backbone
	// search).
	belowAdvice string
	// ruleDiagnostics are the methods' RuleNotMet diagnostics other than
	// the frontier's (the thresholds').
	ruleDiagnostics []diagnose.Diagnostic
}

// ruleNotMet is execute's error when a method found no setting that meets
// the rule: every output was written (the backbone kept as FMP's answer),
// and the exit status is 3.
type ruleNotMet struct{ methods []string }

func (e ruleNotMet) Error() string {
	return fmt.Sprintf("no setting of %s met the rule: every output was written, with FMP's reference (the backbone) kept where the frontier met nothing; see the warnings (exit status 3)", strings.Join(e.methods, " and "))
}

// allTrivial is execute's error when every debiased result (FMP and
// the thresholds) selects every node or none: their parity is trivial,
// not a result. Every output was written, with the rows marked; the exit
// status is 5.
type allTrivial struct{ methods []string }

func (e allTrivial) Error() string {
	return fmt.Sprintf("every debiased result is trivial (%s each select every node or none, so their parity means nothing): every output was written with the rows marked; see the warnings for what to change (exit status 5)", andList(e.methods))
}

// majorityPrefix starts the mark of a row not above the majority rate.
const majorityPrefix = "not above the majority rate"

// notAboveMajority is execute's error when every debiased result (FMP
// and the thresholds) is not above the majority rate: none is shown to
// predict better than a constant. Every output was written, with the rows
// marked; the exit status is 6.
type notAboveMajority struct{ methods []string }

func (e notAboveMajority) Error() string {
	return fmt.Sprintf("no debiased result is above the majority rate (%s each have an accuracy whose 95%% interval reaches the rate of predicting the more frequent class for every node): every output was written with the rows marked; see the warnings for what to change (exit status 6)", andList(e.methods))
}

// markedResults returns the debiased methods (every method but the
// backbone and a saved model) when each has a mark that starts with
// prefix, else nil.
func (r *result) markedResults(prefix string) []string {
	var out []string
	for _, me := range r.methods {
		if me.Name == "backbone" || me.Name == "model" {
			continue
		}
		if !me.marked(prefix) {
			return nil
		}
		out = append(out, me.Name)
	}
	return out
}

// marked reports whether one of the method's marks starts with prefix.
func (me *method) marked(prefix string) bool {
	for _, m := range me.Marks {
		if strings.HasPrefix(m, prefix) {
			return true
		}
	}
	return false
}

// trivialResults returns the debiased methods (every method but the
// backbone and a saved model) when each is trivial, else nil.
func (r *result) trivialResults() []string { return r.markedResults("trivial") }

// notMet returns the methods whose rule was not met (RuleNotMet
// diagnostics), in order.
func (r *result) notMet() []string {
	var out []string
	for _, d := range r.diagnostics {
		if d.Code == diagnose.RuleNotMet {
			out = append(out, d.Subject)
		}
	}
	return out
}

// diagnose fills r.diagnostics: the data's (a feature that is the
// sensitive attribute) and each method's test evaluation's (a model at
// the majority-class rate, a trivial selection, small groups, a rare
// class).
func (r *result) diagnose() error {
	cfg := diagnose.DefaultConfig()
	for g := 0; g < groups(r.ds); g++ {
		cfg.GroupNames = append(cfg.GroupNames, groupName(r.ds, g))
	}
	ds, err := diagnose.Features(r.ds.Features, r.ds.NumFeatures, r.ds.FeatureNames, r.ds.Sens, cfg)
	if err != nil {
		return err
	}
	r.diagnostics = append(r.diagnostics, ds...)
	if r.frontier != nil {
		r.diagnostics = append(r.diagnostics, r.frontier.Diagnostics()...)
	}
	r.diagnostics = append(r.diagnostics, r.ruleDiagnostics...)
	var per []diagnose.Diagnostic
	for _, me := range r.methods {
		rep, acc := me.Test, (*metrics.Interval)(nil)
		if rep != nil && me.TestCI != nil {
			acc = &me.TestCI.Accuracy
		}
		if rep == nil {
			rep = me.Val
		}
		if rep == nil {
			continue
		}
		d, err := diagnose.Report(*rep, acc, me.Name, cfg)
		if err != nil {
			return err
		}
		me.Marks = marksOf(append(d, r.ruleOf(me.Name)...), *rep, acc)
		for k := range d {
			if d[k].Code == diagnose.BelowMajority && r.belowAdvice != "" {
				d[k].Advice = r.belowAdvice
			}
		}
		per = append(per, d...)
	}
	r.diagnostics = append(r.diagnostics, sameSaidOnce(per)...)
	for k := range r.diagnostics {
		r.diagnostics[k].Advice = flagWords.Replace(r.diagnostics[k].Advice)
	}
	return nil
}

// ruleOf returns the RuleNotMet diagnostics about the method named name
// among those diagnose has gathered (the frontier's for fmp, the
// thresholds' own).
func (r *result) ruleOf(name string) []diagnose.Diagnostic {
	var out []diagnose.Diagnostic
	for _, d := range r.diagnostics {
		if d.Subject == name && d.Code == diagnose.RuleNotMet {
			out = append(out, d)
		}
	}
	return out
}

// marksOf returns a method's marks from its diagnostics on the report
// rep (see method.Marks), the trivial mark first: rep's selections say
// which way a selection is trivial, rep's accuracy and its interval acc
// (nil: none) what the majority mark checked.
func marksOf(ds []diagnose.Diagnostic, rep metrics.Report, acc *metrics.Interval) []string {
	marks := []string{}
	for _, d := range ds {
		if d.Code == diagnose.TrivialSelection {
			what := "every node"
			if o := rep.Overall; 2*o.Selected < o.Count {
				what = "no node"
			}
			marks = append(marks, "trivial: selects "+what)
		}
	}
	for _, d := range ds {
		if d.Code == diagnose.BelowMajority {
			marks = append(marks, majorityMark(rep, acc))
		}
	}
	for _, d := range ds {
		if d.Code == diagnose.RuleNotMet {
			marks = append(marks, "rule not met")
		}
	}
	return marks
}

// majorityMark words the mark of a row not above the majority rate as
// what diagnose.NotAboveMajority checked: the accuracy at or below the
// rate, or its interval reaching down to it.
func majorityMark(rep metrics.Report, acc *metrics.Interval) string {
	major, _ := rep.MajorityRate()
	if acc == nil || acc.Undefined() || rep.Accuracy <= major {
		return fmt.Sprintf(majorityPrefix+": accuracy %.2f%% ≤ %.2f%%", 100*rep.Accuracy, 100*major)
	}
	return fmt.Sprintf(majorityPrefix+": accuracy %.2f%%, but its 95%% interval [%.2f, %.2f] reaches %.2f%%", 100*rep.Accuracy, 100*acc.Lo, 100*acc.Hi, 100*major)
}

// sameSaidOnce merges diagnostics that say the same thing of several
// methods (a small group, a metric undefined for want of positive labels)
// into one whose subject names them all, in order.
func sameSaidOnce(ds []diagnose.Diagnostic) []diagnose.Diagnostic {
	var out []diagnose.Diagnostic
	subjects := map[int][]string{}
	seen := map[[3]string]int{}
	for _, d := range ds {
		key := [3]string{string(d.Code), d.Message, d.Advice}
		if k, ok := seen[key]; ok {
			subjects[k] = append(subjects[k], d.Subject)
			continue
		}
		seen[key] = len(out)
		subjects[len(out)] = []string{d.Subject}
		out = append(out, d)
	}
	for k := range out {
		out[k].Subject = andList(subjects[k])
	}
	return out
}

// andList joins names as "a", "a and b", "a, b and c".
func andList(names []string) string {
	if len(names) <= 1 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}

func loadData(o *options) (*datasets.Dataset, error) {
	var ds *datasets.Dataset
	var err error
	switch {
	case o.dataset == "synthetic":
		c := datasets.DefaultSyntheticConfig()
		c.N = o.synthN
		ds, err = datasets.Synthetic(c)
	case o.dataset != "":
		ds, err = protocol.LoadPreset(o.data, o.dataset, o.files.Options, !o.noScale)
	default:
		ds, err = datasets.LoadFiles(o.files)
	}
	var small *datasets.SmallGroupError
	if errors.As(err, &small) {
		return nil, badInput("%s", smallGroups(small))
	}
	if err != nil {
		return nil, inFlags(inputError{err})
	}
	for k := range ds.Warnings {
		ds.Warnings[k] = flagWords.Replace(ds.Warnings[k])
	}
	return ds, nil
}

// smallGroups says, in the command's flags, which groups are below
// -min-group and what to do.
func smallGroups(e *datasets.SmallGroupError) string {
	where := ""
	if e.File != "" {
		where = e.File + ": "
	}
	if e.All {
		return fmt.Sprintf("%severy sensitive group has fewer than -min-group %d labelled nodes (%s): merged they would make one group; lower -min-group, or choose other -sens columns", where, e.Min, e.List())
	}
	if e.Merged {
		return fmt.Sprintf("%sthe sensitive groups below -min-group %d, %s, merged (-merge-small) make only %d labelled nodes: lower -min-group, or choose other -sens columns", where, e.Min, e.List(), e.Total)
	}
	msg := fmt.Sprintf("%s%d sensitive group(s) with fewer than -min-group %d labelled nodes: %s; add -merge-small to merge them into one group, lower -min-group (0: no minimum), or choose other -sens columns", where, len(e.Groups), e.Min, e.List())
	if e.Mostly() {
		msg += fmt.Sprintf(" (%d of the %d labelled nodes are in such groups: a sensitive attribute puts many nodes in each group; is -sens the right column?)", e.Total, e.Labelled)
	}
	return msg
}

// checkSplitGroups returns an error naming a group without labelled
// validation or test nodes: the choice of FMP's setting and the
// thresholds need every group among the validation nodes, the metrics
// among the test nodes.
func checkSplitGroups(ds *datasets.Dataset) error {
	for _, part := range []struct {
		name  string
		nodes []int
	}{{"validation", ds.Split.Val}, {"test", ds.Split.Test}} {
		if len(part.nodes) == 0 {
			continue
		}
		count := make([]int, groups(ds))
		for _, i := range part.nodes {
			if s := ds.Sens[i]; s >= 0 && ds.Labels[i] >= 0 {
				count[s]++
			}
		}
		for g, c := range count {
			if c == 0 {
				return badInput("%s: sensitive group %q has no labelled %s node; every group needs some: raise -min-group (with -merge-small), or give a split (-split, -split-column) with every group in it", ds.Name, groupName(ds, g), part.name)
			}
		}
	}
	return nil
}

// splitOverlap says when the test nodes are not held out: some are also
// validation nodes (FairGNN's NBA split makes the two lists one) or
// training nodes. Every choice made on validation (the epoch, FMP's
// setting, the thresholds) is then made on test nodes too.
func splitOverlap(ds *datasets.Dataset, preset bool) string {
	in := func(nodes []int) map[int]bool {
		m := make(map[int]bool, len(nodes))
		for _, i := range nodes {
			m[i] = true
		}
		return m
	}
	val, train := in(ds.Split.Val), in(ds.Split.Train)
	var withVal, withTrain int
	for _, i := range ds.Split.Test {
		if val[i] {
			withVal++
		}
		if train[i] {
			withTrain++
		}
	}
	if withVal == 0 && withTrain == 0 {
		return ""
	}
	var parts []string
	if withVal > 0 {
		parts = append(parts, fmt.Sprintf("%d of the %d test nodes are validation nodes too", withVal, len(ds.Split.Test)))
	}
	if withTrain > 0 {
		parts = append(parts, fmt.Sprintf("%d are training nodes", withTrain))
	}
	how := "give -split or -split-column with disjoint lists, or leave them out for a seeded 50/25/25 split of the labelled nodes"
	if preset {
		how = "write the data set as files with -export and run on them without -split-column (a seeded 50/25/25 split of the labelled nodes), or with a split column of your own"
	}
	return fmt.Sprintf("%s: %s, so the test metrics are not held out: the epoch, FMP's setting and the thresholds are chosen on nodes they are then judged on. For an honest estimate, %s", ds.Name, strings.Join(parts, " and "), how)
}

func execute(o *options, stdout, stderr io.Writer) (err error) {
	start := time.Now()
	// Every warning printed on stderr is kept for report.html.
	warned := &warnLog{w: stderr}
	stderr = warned
	// Before anything long: an unwritable -out or -export, one that is
	// or holds an input or the current folder, or one -overwrite may not
	// replace, is refused at once.
	flag, dir := "-out", o.out
	if o.export != "" {
		flag, dir = "-export", o.export
	}
	od, err := prepareOut(flag, dir, o.overwrite, map[string]string{
		"-nodes": o.files.Nodes, "-edges": o.files.Edges, "-split": o.files.Split, "-model": o.modelFile, "-data": o.data, "-scores": o.scores.file,
	})
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			od.abort()
		}
	}()
	var h *modelio.Header
	var rec *modelio.Nodes
	if o.modelFile != "" {
		// The model's feature schema decides how a node table is read:
		// its columns by name, in the model's order, scaled the model's
		// way.
		if h, rec, err = readHeader(o.modelFile, o.trustedKeys); err != nil {
			return err
		}
		if rec != nil && !rec.ByRow && o.dataset == "" && o.files.IDColumn == "" {
			return needIDs(o, rec)
		}
		if err = warnModel(stderr, o.modelFile, h, o.trustColumns); err != nil {
			return err
		}
		if o.dataset == "" {
			o.files.Schema = h.Features
			// The model's dtype decides, not -dtype's default.
			o.files.FeatureLimit = datasets.FeatureLimit32
			if h.Dtype == tensor.Float64 {
				o.files.FeatureLimit = datasets.FeatureLimit64
			}
		}
	}
	ds, err := loadData(o)
	if err != nil {
		return err
	}
	var saved savedNodes
	if o.modelFile != "" && o.export == "" {
		// A -model run reports on the nodes the model never trained or
		// chose on, told apart by id: the split drawn or read for the
		// table is replaced by the saved one (heldOut).
		if saved, err = identify(o, h, rec, ds); err != nil {
			return err
		}
		saved.heldOut(ds)
	} else if o.export == "" {
		if w := splitOverlap(ds, o.dataset != ""); w != "" {
			ds.Warnings = append(ds.Warnings, w)
		}
	}
	for _, w := range ds.Warnings {
		fmt.Fprintf(stderr, "warning: %s\n", w)
	}
	if o.export != "" {
		return export(od, o, ds, stdout)
	}
	if o.degreeGroups > 0 {
		if err := useDegreeGroups(ds, o.degreeGroups); err != nil {
			return err
		}
	}
	if !o.quiet {
		fmt.Fprintf(stderr, "%s: %d nodes, %d edges, %d features, %d classes, %d groups; split %d/%d/%d (loaded in %v)\n",
			ds.Name, ds.N(), ds.Graph.NumEdges(), ds.NumFeatures, ds.NumClasses(), groups(ds), len(ds.Split.Train), len(ds.Split.Val), len(ds.Split.Test), time.Since(start).Round(time.Millisecond))
	}
	if o.modelFile == "" {
		if len(ds.Split.Val) == 0 {
			return badInput("%s: the split has no validation nodes; the choice of FMP's setting and of the thresholds needs them", ds.Name)
		}
		if err := checkSplitGroups(ds); err != nil {
			return err
		}
	}
	if o.trainLabels > 0 {
		ds.Split.Train = protocol.CapTrain(ds.Split.Train, ds.Labels, o.trainLabels)
	}
	if o.compare != nil {
		return runCompare(od, o, ds, stdout, stderr)
	}
	var r *result
	if o.scores.file != "" {
		r, err = debiasScores(o, ds, stderr)
	} else if o.modelFile != "" {
		r, err = predictSaved(o, h, saved, ds, stderr)
	} else {
		r, err = trainAndDebias(o, ds, stderr)
	}
	if err != nil {
		return err
	}
	if err := r.diagnose(); err != nil {
		return err
	}
	printWarnings(stderr, r)
	r.stderrWarnings = warned.warnings()
	if err := writeAll(od, o, r); err != nil {
		return err
	}
	if err := od.commit(); err != nil {
		if errors.As(err, &keptError{}) {
			printSummary(stdout, o, r)
		}
		return err
	}
	printSummary(stdout, o, r)
	if !o.quiet {
		fmt.Fprintf(stderr, "wrote %s in %v\n", o.out, time.Since(start).Round(time.Millisecond))
	}
	if m := r.trivialResults(); len(m) > 0 {
		return allTrivial{m}
	}
	if m := r.markedResults(majorityPrefix); len(m) > 0 {
		return notAboveMajority{m}
	}
	if m := r.notMet(); len(m) > 0 {
		return ruleNotMet{m}
	}
	return nil
}

// useDegreeGroups makes ds's groups n groups by degree (-degree-groups):
// cut at the quantiles of the labelled nodes' degrees
// (metrics.GroupByDegree), every node, labelled or not, in the group
// whose range holds its degree (above the last range: the last group;
// between two: the higher).
func useDegreeGroups(ds *datasets.Dataset, n int) error {
	var labelled []int
	for i, y := range ds.Labels {
		if y >= 0 {
			labelled = append(labelled, i)
		}
	}
	deg := ds.Graph.Degrees()
	d, err := metrics.GroupByDegree(deg, labelled, n)
	if err != nil {
		return badInput("-degree-groups %d: %v", n, err)
	}
	if d.Len() < 2 {
		return badInput("-degree-groups %d: the labelled nodes' degrees make one group only (%s: nodes of one degree stay together); the graph gives no degree groups to compare", n, d.Name(0))
	}
	for i, g := range d.Group {
		if g >= 0 {
			continue
		}
		g = d.Len() - 1
		for k := range d.Hi {
			if deg[i] <= d.Hi[k] {
				g = k
				break
			}
		}
		d.Group[i] = g
	}
	ds.Sens, ds.GroupNames = d.Group, d.Names()
	return nil
}

func groups(ds *datasets.Dataset) int {
	g := 0
	for _, s := range ds.Sens {
		g = max(g, s+1)
	}
	return g
}

// export writes ds in the documented format into the -export folder in
// the making, puts it in place as the results are (outDir), and prints
// the flags that read it back.
func export(od *outDir, o *options, ds *datasets.Dataset, stdout io.Writer) error {
	c, err := datasets.WriteFiles(ds, od.path("nodes.csv"), od.path("edges.csv"))
	if err != nil {
		return err
	}
	for _, f := range []string{"nodes.csv", "edges.csv"} {
		if err := syncFile(od.path(f)); err != nil {
			return err
		}
	}
	if err := od.commit(); err != nil {
		return err
	}
	nodes, edges := filepath.Join(o.export, "nodes.csv"), filepath.Join(o.export, "edges.csv")
	fmt.Fprintf(stdout, "wrote %s and %s (%d nodes, %d edges); read them with\n  -nodes %s -edges %s -id %s -label %s -sens %s -split-column %s -no-scale\n",
		nodes, edges, ds.N(), ds.Graph.NumEdges(), nodes, edges, c.IDColumn, c.LabelColumn, c.SensColumn, c.SplitColumn)
	return nil
}

// trainAndDebias trains the backbone, computes FMP's frontier and fits
// the thresholds.
func trainAndDebias(o *options, ds *datasets.Dataset, stderr io.Writer) (*result, error) {
	ds, pre, err := preprocessed(o, ds, stderr) // -method edits: the debiased graph and features
	if err != nil {
		return nil, err
	}
	begin := time.Now()
	bf, err := fitBackbone(o, ds, stderr)
	if err != nil {
		return nil, err
	}
	// What was chosen is what the outputs report.
	o.backbone, o.kind, o.train.Adam.LR, o.train.Epochs = bf.kind.Name(), bf.kind, bf.lr, o.search.epochs
	fit, task := bf.fit, bf.task
	m, res := fit.Model, fit.Result
	if me, ok := m.(*fairtrain.MaskedEncoder); ok {
		// FairVGNN's model reads the features through its mask: what is
		// reported, put FMP on and saved is its encoder with the mask
		// folded into the input weights, in a graph of its own.
		if task, err = newTask(ds, task.X.Dtype()); err != nil {
			return nil, err
		}
		if m, err = me.Folded(task.Graph, ds.Graph, task.Phase); err != nil {
			return nil, fmt.Errorf("-method %s: %w", o.method.Name(), err)
		}
	}
	trainTime := time.Since(begin)
	r := &result{ds: ds, training: map[string]any{
		"epochs_run": res.Epochs, "best_epoch": res.Best.Epoch, "seconds": trainTime.Seconds(),
		"best_val_accuracy": res.Best.ValAcc,
	}}
	if bf.search != nil {
		r.search = bf.search
		r.training["search"] = bf.search
	}
	r.belowAdvice = belowMajorityAdvice(o, bf.search)
	if pre != nil {
		r.training["preprocess"] = pre
		// The model learnt EDITS' features and graph, which EDITS does
		// not compute for nodes it has not seen.
		r.noModel = fmt.Sprintf("no model.fmp: the backbone learnt the graph and features -method %s made of this data, which it cannot make for other nodes; the model would score raw features it never saw", o.pre.Name())
	}
	if o.method != nil {
		r.training["method"] = o.method.Name()
		if w, ok := o.method.(fairness.Weighted); ok {
			r.training["method_weight"] = w.Weight()
		}
		if _, err := layers.KindOf(m); err != nil {
			// A model of no declared kind (every method's is one).
			r.noModel = fmt.Sprintf("no model.fmp: a backbone trained with -method %s (a %T) has no model-file kind yet", o.method.Name(), m)
		}
	}
	pred, err := train.Predict(m, task, nil)
	if err != nil {
		return nil, err
	}
	bb := &method{Name: "backbone", probs: pred.Probs}
	r.methods = append(r.methods, bb)

	// FMP on the trained backbone, λs = 0 as the base so that the
	// frontier's reference (λf = 0) is the backbone itself.
	base := fmp.DefaultOnConfig()
	base.FMP = o.fmp
	base.FMP.LambdaS = 0
	fm, err := fmp.On(m, ds.Graph, ds.Sens, base, task.Phase)
	if err != nil {
		return nil, fmt.Errorf("FMP on %s: %w", o.backbone, err)
	}
	fc := fmp.DefaultFrontierConfig()
	fc.LambdaF, fc.LambdaS, fc.Rule, fc.Test = o.lambdaF, o.lambdaS, o.rule, ds.Split.Test
	if !o.quiet {
		fmt.Fprintf(stderr, "FMP frontier: %d settings (λs %v × λf %v), rule: %s\n", len(fc.LambdaF)*len(fc.LambdaS), fc.LambdaS, fc.LambdaF, o.rule)
	}
	begin = time.Now()
	f, err := fmp.NewFrontier(o.ctx, fm, task, fc)
	if err != nil && (f == nil || !errors.Is(err, selection.ErrNoCandidate)) {
		return nil, fmt.Errorf("FMP frontier: %w", err)
	}
	// No setting met the rule: the frontier's reference (λs 0, λf 0: the
	// backbone) is kept, every output is still written, and the exit
	// status says so (ruleNotMet).
	r.training["frontier_seconds"] = time.Since(begin).Seconds()
	r.frontier = f
	chosen, err := f.Model()
	if err != nil {
		return nil, err
	}
	fpred, err := train.Predict(chosen, task, nil)
	if err != nil {
		return nil, err
	}
	if r.noModel == "" {
		if err := keepModel(r, chosen, ds, fpred.Probs); err != nil {
			return nil, err
		}
	}
	best := f.Best()
	r.methods = append(r.methods, &method{Name: "fmp", probs: fpred.Probs,
		Setting: map[string]float64{"lambda_s": best.Config.LambdaS, "lambda_f": best.Config.LambdaF, "k": float64(best.Config.K), "tau": best.Config.Temperature}})

	if err := r.finish(o, pred.Probs); err != nil {
		return nil, err
	}
	return r, nil
}

// finish adds the per-group thresholds on the backbone's probabilities
// (n × c; binary tasks: the rule's criterion is their constraint) and
// evaluates every method.
func (r *result) finish(o *options, probs []float64) error {
	ds := r.ds
	n := ds.N()
	if c := len(probs) / n; c != 2 {
		// Per-group thresholds cut one probability; with c classes the
		// post-processing is per-group class offsets (the registry's
		// class-offsets), chosen on validation by the same rule judged
		// with the c-class criteria.
		occ := postprocess.DefaultClassOffsetsConfig()
		occ.Rule = o.rule
		off, err := postprocess.FitClassOffsets(probs, c, ds.Labels, ds.Sens, ds.Split.Val, occ)
		switch {
		case errors.Is(err, selection.ErrNoCandidate):
			r.thNote = fmt.Sprintf("per-group class offsets: %v", err)
			r.ruleDiagnostics = append(r.ruleDiagnostics, diagnose.Diagnostic{Code: diagnose.RuleNotMet, Subject: "offsets",
				Message: fmt.Sprintf("no per-group class offsets met the rule (%s) on the validation nodes: the table has no offsets row", o.rule),
				Advice:  "loosen the rule (a larger -max-acc-loss, a looser -bound, another -criterion)"})
		case err != nil:
			r.thNote = fmt.Sprintf("per-group class offsets: %v", err)
		default:
			d, err := off.Decide(probs, ds.Sens)
			if err != nil {
				return err
			}
			r.ruleDiagnostics = append(r.ruleDiagnostics, off.Diagnostics()...)
			r.methods = append(r.methods, &method{Name: "offsets", probs: probs, decision: d, thresholded: true, Setting: offsetSetting(off)})
		}
	} else {
		p1 := classOne(probs, n)
		th, err := postprocess.FitThresholds(p1, ds.Labels, ds.Sens, ds.Split.Val, o.thresholdsConfig())
		if errors.Is(err, selection.ErrNoCandidate) {
			r.thNote = fmt.Sprintf("per-group thresholds: %v", err)
			r.ruleDiagnostics = append(r.ruleDiagnostics, diagnose.Diagnostic{Code: diagnose.RuleNotMet, Subject: "thresholds",
				Message: fmt.Sprintf("no per-group thresholds met the rule (%s) on the validation nodes: the table has no thresholds row", o.rule),
				Advice:  "loosen the rule (a larger -max-acc-loss, a looser -bound, another -criterion), or add -randomize"})
		} else if err != nil {
			r.thNote = fmt.Sprintf("per-group thresholds: %v", err)
		} else {
			d, err := th.Decide(p1, ds.Sens, o.model.Seed)
			if err != nil {
				return err
			}
			r.methods = append(r.methods, &method{Name: "thresholds", probs: probs, decision: d, thresholded: true, Setting: thresholdSetting(th)})
		}
	}
	for _, me := range r.methods {
		if err := me.evaluate(ds, o.rule.Criterion); err != nil {
			return err
		}
	}
	return nil
}

// thresholdsAUC is what a thresholded method's AUC is of (metrics.json
// "auc_of").
const thresholdsAUC = "the backbone's probabilities, which the thresholds are applied to: per-group thresholds change the decisions, not the scores, so the row's AUC is the backbone's (accuracy, ΔDP and ΔEO are the thresholded decisions')"

// offsetsAUC is thresholdsAUC for the per-group class offsets.
const offsetsAUC = "the backbone's probabilities, which the class offsets are applied to: they change the decisions, not the scores, so the row's AUC is the backbone's (accuracy and the criteria are the offset decisions')"

// scoreAUC replaces rep's AUC, computed from one-hot decisions, by the
// AUC of the scores probs (n × c) on the same nodes: the ranking by
// scores, which is what an AUC measures.
func scoreAUC(rep *metrics.Report, probs []float64, c int, ds *datasets.Dataset, idx []int, opt metrics.Options) error {
	byScore, err := metrics.Evaluate(probs, c, ds.Labels, ds.Sens, idx, opt)
	if err != nil {
		return err
	}
	rep.AUC = byScore.AUC
	var und []metrics.Undefined
	for _, u := range rep.Undefined {
		if u.Metric != "auc" {
			und = append(und, u)
		}
	}
	for _, u := range byScore.Undefined {
		if u.Metric == "auc" {
			und = append(und, u)
		}
	}
	rep.Undefined = und
	return nil
}

// evaluate sets the decisions (the argmax, lowest class on ties: for two
// classes class 1 when its probability is above 0.5, as metrics.Evaluate)
// unless thresholded, and the metrics, with the criterion crit.
func (me *method) evaluate(ds *datasets.Dataset, crit metrics.Criterion) error {
	c := len(me.probs) / ds.N()
	if !me.thresholded {
		me.decision = make([]int, ds.N())
		for i := range me.decision {
			me.decision[i] = argmax(me.probs[i*c : (i+1)*c])
		}
	}
	// The metrics of the decisions: the probabilities when the decisions
	// are their argmax, else one-hot rows of the decisions. AUC ranks by
	// scores, never by decisions: a thresholded method's is that of the
	// probabilities it thresholds (the backbone's; scoreAUC below), since
	// per-group thresholds change the decisions, not the scores.
	scored := me.probs
	if me.thresholded {
		scored = make([]float64, len(me.probs))
		for i, k := range me.decision {
			scored[i*c+k] = 1
		}
	}
	// A metric undefined on these nodes (ΔEO where a group has no
	// positive node) is reported as undefined (n/a, null) with a
	// warning, never a reason to stop.
	opt := allowUndefined()
	for _, part := range []struct {
		idx []int
		dst **metrics.Report
	}{{ds.Split.Val, &me.Val}, {ds.Split.Test, &me.Test}} {
		if len(part.idx) == 0 {
			continue
		}
		rep, err := metrics.Evaluate(scored, c, ds.Labels, ds.Sens, part.idx, opt)
		if err != nil {
			return fmt.Errorf("%s: metrics: %w", me.Name, err)
		}
		if me.thresholded {
			if err := scoreAUC(&rep, me.probs, c, ds, part.idx, opt); err != nil {
				return fmt.Errorf("%s: metrics: %w", me.Name, err)
			}
			me.AUCOf = thresholdsAUC
			if me.Name == "offsets" {
				me.AUCOf = offsetsAUC
			}
		}
		*part.dst = &rep
	}
	for _, part := range []struct {
		rep *metrics.Report
		dst **float64
	}{{me.Val, &me.ValCriterion}, {me.Test, &me.TestCriterion}} {
		if part.rep == nil {
			continue
		}
		if v, err := crit.Of(*part.rep); err == nil {
			*part.dst = &v
		}
	}
	if c > 2 {
		return me.evaluateClasses(ds, crit, scored, c, opt)
	}
	if len(ds.Split.Test) > 0 {
		iv, err := metrics.Bootstrap(scored, c, ds.Labels, ds.Sens, ds.Split.Test, opt, metrics.DefaultBootstrapConfig())
		if err != nil {
			return fmt.Errorf("%s: bootstrap: %w", me.Name, err)
		}
		me.TestCI = &iv
	}
	return nil
}

// evaluateClasses replaces, for a task of c > 2 classes, the criteria of
// the table (the rule's and ΔDP, ΔEO, with the test intervals) by their
// c-class forms: the largest between-group gap over the classes (a
// ratio: the smallest), metrics.ClassReport, as the frontier judges the
// rule; metrics.Report's one-vs-rest values of the positive class alone
// would miss the other classes' gaps. The c-class reports are kept in
// metrics.json (val_classes, test_classes, test_classes_interval_95).
func (me *method) evaluateClasses(ds *datasets.Dataset, crit metrics.Criterion, scored []float64, c int, opt metrics.Options) error {
	me.ValCriterion, me.TestCriterion = nil, nil // metrics.Report's, one class against the rest
	for _, part := range []struct {
		idx  []int
		rep  **metrics.ClassReport
		crit **float64
	}{{ds.Split.Val, &me.ValClasses, &me.ValCriterion}, {ds.Split.Test, &me.TestClasses, &me.TestCriterion}} {
		if len(part.idx) == 0 {
			continue
		}
		rep, err := metrics.EvaluateClasses(scored, c, ds.Labels, ds.Sens, part.idx, opt)
		if err != nil {
			return fmt.Errorf("%s: metrics for %d classes: %w", me.Name, c, err)
		}
		*part.rep = &rep
		if v, err := rep.Of(crit); err == nil && !math.IsNaN(v) {
			*part.crit = &v
		}
	}
	if len(ds.Split.Test) == 0 {
		return nil
	}
	civ, err := metrics.BootstrapClasses(scored, c, ds.Labels, ds.Sens, ds.Split.Test, opt, metrics.DefaultBootstrapConfig())
	if err != nil {
		return fmt.Errorf("%s: bootstrap for %d classes: %w", me.Name, c, err)
	}
	me.TestClassCI = &civ
	// The table reads TestCI: the c-class intervals, in its form.
	me.TestCI = &metrics.Intervals{Accuracy: civ.Accuracy, Criteria: civ.Criteria,
		DemographicParity: civ.Criteria[metrics.DPDifference], EqualOpportunity: civ.Criteria[metrics.EODifference],
		Level: civ.Level, Resamples: civ.Resamples, Evaluated: civ.Evaluated}
	return nil
}

// predictSaved loads o.model onto ds's graph, the one it was saved for
// or any other whose node table has its features (-same-graph refuses
// another), and predicts every node. On another graph an fmp model is
// scored as -fmp-scoring says (fitted: the duals kept in the file, with
// package fmp/score; recompute: FMP run over this graph). The nodes of
// the saved graph are marked (seen), and the scored nodes' decisions are
// compared with the file's validation baseline (drift).
func predictSaved(o *options, h *modelio.Header, saved savedNodes, ds *datasets.Dataset, stderr io.Writer) (*result, error) {
	if h.Features != nil && !h.Features.Equal(ds.Schema()) {
		got, want := ds.Schema().Names, h.Features.Names
		return nil, badInput("-model %s was trained on the feature columns %s; the input's are %s", o.modelFile, strings.Join(want, ", "), strings.Join(got, ", "))
	}
	task, err := newTask(ds, h.Dtype)
	if err != nil {
		return nil, err
	}
	f, err := os.Open(o.modelFile)
	if err != nil {
		return nil, inputError{fmt.Errorf("-model: %w", err)}
	}
	defer f.Close()
	m, err := modelio.Load(f, task.Graph, modelio.Env{Graph: ds.Graph, Phase: task.Phase, Sens: ds.Sens, TrustedKeys: o.trustedKeys, SameGraph: o.sameGraph})
	if err != nil {
		return nil, modelError(o.modelFile, err)
	}
	same := h.Graph == nil || h.Graph.Describes(ds.Graph)
	if !same && !o.quiet {
		fmt.Fprintf(stderr, "-model %s was trained on a graph of %d nodes and %d edges; scoring this one of %d nodes and %d edges (-same-graph refuses another graph)%s\n",
			o.modelFile, h.Graph.Nodes, h.Graph.Edges, ds.N(), ds.Graph.NumEdges(), fmpOnGraph(h, o.fmpScoring))
	}
	k, err := layers.KindOf(m)
	if err != nil {
		return nil, err
	}
	r := &result{ds: ds, saved: true, training: map[string]any{"model_file": o.modelFile, "kind": k.Name()}}
	var probs []float64
	scoring := ""
	if _, isFMP := m.(*fmp.Model); isFMP {
		scoring = o.fmpScoring.String()
		if !same && o.fmpScoring == score.Fitted {
			if probs, err = scoreFitted(o, ds); errors.Is(err, score.ErrNotFitted) {
				fmt.Fprintf(stderr, "warning: -model %s records no fitted FMP duals (it was saved before they were kept): FMP is recomputed over this graph, as -fmp-scoring recompute; save the model again with this release to keep old nodes' scores fixed\n", o.modelFile)
				scoring, probs, err = score.Recompute.String(), nil, nil
			} else if err != nil {
				return nil, err
			}
		}
		r.training["fmp_scoring"] = scoring
	}
	if probs == nil {
		pred, err := train.Predict(m, task, nil)
		if err != nil {
			return nil, err
		}
		probs = pred.Probs
	}
	if bad, first := nonFinite(probs); bad > 0 {
		return nil, badInput("-model %s: the model's outputs are not finite (NaN or ±Inf) for %d of %d values (the first at node %d): its parameters overflow on this input. Check that the node table is the kind of data the model was trained on (its scale above all), or retrain the model", o.modelFile, bad, len(probs), first/max(1, ds.NumClasses()))
	}
	// Every figure is computed on the saved split (heldOut): test on the
	// labelled nodes the model never trained or chose on.
	r.seen, r.seenNote = saved.seen, saved.note
	newNodes, savedTest := saved.newNodes, saved.savedHeldOut
	r.heldOut = heldOutWords(newNodes, savedTest)
	r.training["nodes_known"] = saved.how
	r.training["held_out"] = map[string]any{"new": newNodes, "saved_test": savedTest, "words": r.heldOut}
	if r.seenNote != "" {
		fmt.Fprintf(stderr, "warning: %s\n", r.seenNote)
	}
	if newNodes+savedTest == 0 {
		fmt.Fprintf(stderr, "warning: -model %s: %s: the table's test columns are empty; predictions.csv has every node's score\n", o.modelFile, r.heldOut)
	}
	me := &method{Name: "model", probs: probs}
	if err := me.evaluate(ds, o.rule.Criterion); err != nil {
		return nil, err
	}
	r.methods = []*method{me}
	if err := r.measureDrift(h, probs, stderr, o.quiet); err != nil {
		return nil, err
	}
	return r, nil
}

// scoreFitted scores every node of ds with the -model file's backbone and
// FMP's fitted duals (package fmp/score).
func scoreFitted(o *options, ds *datasets.Dataset) ([]float64, error) {
	f, err := os.Open(o.modelFile)
	if err != nil {
		return nil, inputError{fmt.Errorf("-model: %w", err)}
	}
	defer f.Close()
	cfg := score.DefaultConfig()
	cfg.TrustedKeys = o.trustedKeys
	s, err := score.Open(f, cfg)
	if errors.Is(err, score.ErrNotFitted) {
		return nil, err
	}
	if err != nil {
		return nil, modelError(o.modelFile, err)
	}
	x, err := features.NewDense(ds.Features, ds.N(), ds.NumFeatures)
	if err != nil {
		return nil, err
	}
	all := make([]int, ds.N())
	for i := range all {
		all[i] = i
	}
	out, err := s.Score(o.ctx, ds.Graph, x, ds.Sens, all)
	if err != nil {
		return nil, inFlags(inputError{fmt.Errorf("-model %s: %w", o.modelFile, err)})
	}
	return out.Probs, nil
}

// measureDrift compares the scored nodes' decisions with the -model
// file's validation baseline: the new nodes when the nodes the model saw
// are known and some are new, else every node. Warnings go to stderr.
func (r *result) measureDrift(h *modelio.Header, probs []float64, stderr io.Writer, quiet bool) error {
	if h.Baseline == nil {
		r.drift = map[string]any{"note": "the model file records no validation baseline (it was saved without one: modelio.SaveConfig.Baseline; the model.fmp debias writes has one): nothing to compare the decisions with"}
		return nil
	}
	ds := r.ds
	var nodes []int
	which := "every node"
	if r.seen != nil {
		for i, s := range r.seen {
			if !s {
				nodes = append(nodes, i)
			}
		}
		which = "the new nodes"
	}
	if len(nodes) == 0 {
		nodes, which = nil, "every node"
	}
	// Outcomes, the group mix and the features (metrics.Baseline.Compare).
	sc := metrics.Scored{Probs: probs, Classes: ds.NumClasses(), Labels: ds.Labels, Sens: ds.Sens, Nodes: nodes, X: ds.Features, D: ds.NumFeatures}
	d, err := h.Baseline.Compare(sc, metrics.DefaultOptions(), metrics.DefaultBootstrapConfig())
	if err != nil {
		return fmt.Errorf("drift: %w", err)
	}
	r.drift = map[string]any{"scored": which, "baseline_nodes": h.Baseline.Nodes, "nodes": d.Nodes, "labelled": d.Labelled,
		"groups": d.Groups, "criteria": d.Criteria, "group_mix": d.GroupMix, "features": d.Features,
		"warnings": nonNil(d.Warnings), "notes": nonNil(d.Notes)}
	if d.Classes != nil {
		// Three classes or more: every class's per-group rates.
		r.drift["classes"] = d.Classes
	}
	r.driftOf, r.driftOn = &d, which
	for _, w := range d.Warnings {
		w = fmt.Sprintf("drift on %s: %s", which, w)
		r.driftWarnings = append(r.driftWarnings, w)
		fmt.Fprintf(stderr, "warning: %s\n", w)
	}
	if !quiet {
		for _, n := range d.Notes {
			fmt.Fprintf(stderr, "drift on %s: %s\n", which, n)
		}
	}
	return nil
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// keepModel makes m the model model.fmp records, with what scoring it
// later needs: for an fmp model its duals on this graph (fmp.Model.Record,
// the fitted semantics of -fmp-scoring), and its decisions' baseline on
// the validation nodes (metrics.NewBaseline; with three classes or more,
// every class's), which drift is measured against.
func keepModel(r *result, m layers.Model, ds *datasets.Dataset, probs []float64) error {
	if fm, ok := m.(*fmp.Model); ok {
		x, err := features.NewDense(ds.Features, ds.N(), ds.NumFeatures)
		if err != nil {
			return err
		}
		if err := fm.Record(x); err != nil {
			return err
		}
	}
	b, err := metrics.NewBaseline(probs, ds.NumClasses(), ds.Labels, ds.Sens, ds.Split.Val, metrics.DefaultOptions(), metrics.DefaultBootstrapConfig())
	if err != nil {
		return fmt.Errorf("the validation baseline of the model file: %w", err)
	}
	// Drift names groups by their values, and compares new nodes'
	// features with every node's of this graph (the population the
	// model was built on), in the model's scaled columns.
	for g := 0; g < groups(ds); g++ {
		b.GroupNames = append(b.GroupNames, groupName(ds, g))
	}
	// With three classes or more the baseline holds every class's
	// rates (metrics.NewBaseline), and drift names the classes too.
	if ds.NumClasses() > 2 && len(ds.ClassNames) == ds.NumClasses() {
		b.ClassNames = append([]string(nil), ds.ClassNames...)
	}
	if err := b.RecordFeatures(ds.Features, ds.NumFeatures, ds.FeatureNames, nil); err != nil {
		return fmt.Errorf("the feature reference of the model file: %w", err)
	}
	nodes, err := recordNodes(ds)
	if err != nil {
		return fmt.Errorf("the node record of the model file: %w", err)
	}
	r.model, r.baseline, r.nodes = m, &b, nodes
	return nil
}

// writeAll writes the results into the output folder in the making.
func writeAll(od *outDir, o *options, r *result) error {
	if err := writeMetrics(od.path("metrics.json"), o, r); err != nil {
		return err
	}
	if err := writePredictions(od.path("predictions.csv"), r); err != nil {
		return err
	}
	if r.frontier != nil {
		if err := writeFrontier(od.path("frontier.csv"), r.frontier); err != nil {
			return err
		}
		if err := plotFrontier(od.path("frontier.svg"), o, r); err != nil {
			return err
		}
	}
	if err := writeReport(od, o, r); err != nil {
		return err
	}
	if r.model != nil {
		schema := r.ds.Schema()
		cfg := modelio.SaveConfig{Features: &schema, Baseline: r.baseline, Nodes: r.nodes}
		if err := writeFile(od.path("model.fmp"), func(w io.Writer) error { return modelio.Save(w, r.model, cfg) }); err != nil {
			return err
		}
	}
	return nil
}

// newTask puts ds's features in a new gorgonia graph as an n × d node of
// dtype dt and returns the training task (ds's train and validation
// splits, a fresh Phase).
func newTask(ds *datasets.Dataset, dt tensor.Dtype) (*train.Task, error) {
	g := G.NewGraph()
	x, err := train.FeatureNode(g, dt, ds.Features, ds.N(), ds.NumFeatures, "x")
	if err != nil {
		return nil, err
	}
	t := &train.Task{Graph: g, X: x, Labels: ds.Labels, Train: ds.Split.Train, Val: ds.Split.Val,
		Classes: ds.NumClasses(), Phase: layers.NewPhase()}
	if err := t.Validate(); err != nil {
		return nil, err
	}
	return t, nil
}

// argmax returns the index of the largest value (the first on ties).
func argmax(p []float64) int {
	k := 0
	for i, v := range p {
		if v > p[k] {
			k = i
		}
	}
	return k
}

// classOne returns class 1's column of n × 2 probabilities: the scores
// the per-group thresholds are fitted on and applied to.
func classOne(probs []float64, n int) []float64 {
	p1 := make([]float64, n)
	for i := range p1 {
		p1[i] = probs[2*i+1]
	}
	return p1
}

// thresholdsConfig is the per-group thresholds' configuration the flags
// give (-criterion and its rule, -randomize, -objective).
func (o *options) thresholdsConfig() postprocess.ThresholdsConfig {
	thc := postprocess.DefaultThresholdsConfig()
	thc.Rule, thc.Randomized, thc.Objective = o.rule, o.randomize, o.objective
	return thc
}
