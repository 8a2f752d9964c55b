package main

import (
	"bytes"
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"math"
	"strings"

	"github.com/fairmp/fairmp/fmp"
	"github.com/fairmp/fairmp/fmp/score"
	"github.com/fairmp/fairmp/graph/datasets"
	"github.com/fairmp/fairmp/metrics"
	"github.com/fairmp/fairmp/metrics/diagnose"
)

//go:embed report.html.tmpl
var reportTemplate string

// reportPage is parsed once; its functions format numbers ("n/a" for
// NaN).
var reportPage = template.Must(template.New("report").Parse(reportTemplate))

// fmtPct formats a fraction in percent with two decimals, "n/a" when it
// is NaN (an undefined metric) or infinite.
func fmtPct(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "n/a"
	}
	return fmt.Sprintf("%.2f", 100*v)
}

// fmtCrit formats a value of criterion c as the table does: a difference
// in percent (fmtPct), a ratio as a ratio with three decimals; "n/a" for
// NaN.
func fmtCrit(c metrics.Criterion, v float64) string {
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return "n/a"
	case c.IsRatio():
		return fmt.Sprintf("%.3f", v)
	}
	return fmtPct(v)
}

// fmtInterval formats an interval of criterion c (nil: accuracy, in
// percent) as "point [lo, hi]", "n/a" where the point is undefined.
func fmtInterval(c *metrics.Criterion, iv metrics.Interval) string {
	f := fmtPct
	if c != nil {
		f = func(v float64) string { return fmtCrit(*c, v) }
	}
	if math.IsNaN(iv.Point) {
		return "n/a"
	}
	return fmt.Sprintf("%s [%s, %s]", f(iv.Point), f(iv.Lo), f(iv.Hi))
}

// majorityRate is the accuracy of predicting the most frequent class for
// every node of nodes whose label and group are known (the nodes the
// metrics evaluate); 0 when there are none.
func majorityRate(ds *datasets.Dataset, nodes []int) float64 {
	_, rate, _ := majority(ds, nodes)
	return rate
}

// reportData is what report.html.tmpl renders; every string in it is
// plain text (html/template escapes it), the figures are trusted SVG.
type reportData struct {
	Title string
	// Verdict says, in words and with the intervals, what each debiased
	// method bought and cost against the backbone; VerdictNote how to
	// read the intervals.
	Verdict     []string
	VerdictNote string
	// Glossary explains the table's words, term by term.
	Glossary [][2]string
	Data     [][2]string
	Warnings []string
	Groups   []reportGroup
	// Columns heads the results table's numbers (between the method and
	// its setting); Rows are its rows.
	Columns     []string
	Rows        []reportRow
	IntervalsOn string
	Notes       []string
	Diagnostics []diagnose.Diagnostic
	Frontier    template.HTML
	GroupsSVG   template.HTML
	GroupRates  []reportRateRow
	// ManyClasses: the task has three classes or more (the groups'
	// table gives each class's share, not a positive class's).
	ManyClasses bool
	// RateClasses: the rates are per class (three classes or more).
	RateClasses bool
	Settings    [][2]string
	Flags       [][2]string
	// Printed are the warnings stderr carried that Diagnostics do not
	// already show (the loader's, the model file's, drift's, ...): the
	// report says what stderr said.
	Printed []string
	// DriftWarned counts the drift warnings, shown in the Drift section.
	DriftWarned int
	// Scoring describes a -model run: the file, how its nodes were told
	// apart, which nodes the test columns cover, how FMP scored.
	Scoring [][2]string
	// Drift is a -model run's comparison of the scored nodes with the
	// model file's baseline (nil otherwise).
	Drift *reportDrift
}

// reportDrift is the drift section of a -model run's report.
type reportDrift struct {
	On       string
	Warnings []string
	Notes    []string
	Mix      []reportShare
	Features []reportFeature
	// FeaturesNote says which features the table lists.
	FeaturesNote string
}

type reportShare struct {
	Group, Now, Baseline string
	Significant          bool
}

type reportFeature struct {
	Name, Below, Above, Beyond, PSI, Shift string
}

type reportGroup struct {
	// ClassShares is, with three classes or more, each class's share
	// of the group's labelled nodes ("no 40.1, maybe 20.3, yes 39.6").
	ClassShares                           string
	Name                                  string
	Nodes, Labelled, Positives, TestNodes int
	BaseRate                              string
}

type reportRow struct {
	Name    string
	Cells   []string // the numbers
	Setting string
	Marks   []string
	// Reference marks a row that is no method (the majority rate).
	Reference bool
}

type reportRateRow struct {
	// Class is, with three classes or more, the class whose rates
	// (against the rest) the row gives; empty for two.
	Method, Class, Group, Selection, TPR, FPR string
}

// writeReport writes groups.svg and report.html into the output folder:
// the per-group figure, then one self-contained page (inline CSS and
// SVG, no script, nothing fetched) with the data summary, the groups and
// their base rates, the results table with intervals and marks, the
// warnings with their advice, both figures and the settings.
func writeReport(od *outDir, o *options, r *result) error {
	rates, err := testGroupRates(r)
	if err != nil {
		return err
	}
	var groupsSVG []byte
	if len(rates) > 0 {
		fig, err := groupsFigure(r, rates)
		if err != nil {
			return err
		}
		var b bytes.Buffer
		if err := fig.WriteSVG(&b); err != nil {
			return fmt.Errorf("groups.svg: %w", err)
		}
		groupsSVG = b.Bytes()
		if err := writeFile(od.path("groups.svg"), func(w io.Writer) error { _, err := w.Write(groupsSVG); return err }); err != nil {
			return err
		}
	}
	d, err := buildReport(o, r, rates, groupsSVG)
	if err != nil {
		return err
	}
	return writeFile(od.path("report.html"), func(w io.Writer) error { return reportPage.Execute(w, d) })
}

// inlineSVG makes an SVG document fit inside HTML: without its XML
// declaration. The SVG comes from svgplot, which escapes every text.
func inlineSVG(svg []byte) template.HTML {
	s := string(svg)
	if strings.HasPrefix(s, "<?xml") {
		if k := strings.Index(s, "?>"); k >= 0 {
			s = strings.TrimLeft(s[k+2:], "\n")
		}
	}
	return template.HTML(s)
}

// frontierConfig is the frontier figure's configuration, as frontier.svg
// and report.html draw it: the data's name (dataName) as its title, the
// other methods as marks, and each panel's majority-class accuracy on
// its own nodes (validation, test).
func frontierConfig(o *options, r *result) fmp.PlotConfig {
	pc := fmp.DefaultPlotConfig()
	pc.Title = dataName(o, r.ds)
	for _, me := range r.methods {
		if me.Name != "fmp" {
			pc.Marks = append(pc.Marks, fmp.PlotMark{Name: me.Name, Val: me.Val, Test: me.Test, ValClasses: me.ValClasses, TestClasses: me.TestClasses})
		}
	}
	pc.MajorityVal, pc.MajorityTest = majorityRate(r.ds, r.ds.Split.Val), majorityRate(r.ds, r.ds.Split.Test)
	return pc
}

// dataName names the data as the command was given it: the node and
// edge files, or the preset, or the generated graph.
func dataName(o *options, ds *datasets.Dataset) string {
	switch {
	case o.dataset == "synthetic":
		return fmt.Sprintf("the generated graph (-dataset synthetic, %d nodes)", ds.N())
	case o.dataset != "":
		return o.dataset + " (preset)"
	case o.files.Nodes != "":
		return o.files.Nodes + " with " + o.files.Edges
	}
	return ds.Name
}

func buildReport(o *options, r *result, rates []methodRates, groupsSVG []byte) (*reportData, error) {
	ds := r.ds
	d := &reportData{Title: "debias report: " + dataName(o, ds)}
	d.Verdict, d.VerdictNote = verdict(o, r)
	d.Glossary = glossary(o)
	classes := make([]string, ds.NumClasses())
	for k := range classes {
		classes[k] = className(ds, k)
	}
	d.Data = [][2]string{
		{"data set", ds.Name},
		{"nodes", fmt.Sprint(ds.N())}, {"edges", fmt.Sprint(ds.Graph.NumEdges())}, {"features", fmt.Sprint(ds.NumFeatures)},
		{"classes", strings.Join(classes, ", ")},
		{"split (train / validation / test nodes)", fmt.Sprintf("%d / %d / %d", len(ds.Split.Train), len(ds.Split.Val), len(ds.Split.Test))},
	}
	if ds.NumClasses() == 2 {
		d.Data = append(d.Data, [2]string{"positive class", className(ds, 1)})
	}
	d.Warnings = ds.Warnings

	// Groups and their base rates: the share of the positive class among
	// each group's labelled nodes.
	test := make([]bool, ds.N())
	for _, i := range ds.Split.Test {
		test[i] = true
	}
	gs := make([]reportGroup, groups(ds))
	for g := range gs {
		gs[g].Name = groupName(ds, g)
	}
	for i := 0; i < ds.N(); i++ {
		g := ds.Sens[i]
		if g < 0 || g >= len(gs) {
			continue
		}
		gs[g].Nodes++
		if test[i] {
			gs[g].TestNodes++
		}
		if ds.Labels[i] >= 0 {
			gs[g].Labelled++
			if ds.Labels[i] == 1 {
				gs[g].Positives++
			}
		}
	}
	if c := ds.NumClasses(); c > 2 {
		d.ManyClasses = true
		counts := make([][]int, len(gs))
		for g := range counts {
			counts[g] = make([]int, c)
		}
		for i, y := range ds.Labels {
			if g := ds.Sens[i]; g >= 0 && g < len(gs) && y >= 0 && y < c {
				counts[g][y]++
			}
		}
		for g := range gs {
			var parts []string
			for k, n := range counts[g] {
				share := math.NaN()
				if gs[g].Labelled > 0 {
					share = float64(n) / float64(gs[g].Labelled)
				}
				parts = append(parts, className(ds, k)+" "+fmtPct(share))
			}
			gs[g].ClassShares = strings.Join(parts, ", ")
		}
	}
	for g := range gs {
		gs[g].BaseRate = fmtPct(math.NaN())
		if gs[g].Labelled > 0 {
			gs[g].BaseRate = fmtPct(float64(gs[g].Positives) / float64(gs[g].Labelled))
		}
	}
	d.Groups = gs

	// The results table: the printed table's columns, with the marks.
	crit := o.rule.Criterion
	unit := " %"
	if crit.IsRatio() {
		unit = ""
	}
	extra := []metrics.Criterion{}
	for _, c := range []metrics.Criterion{metrics.DPDifference, metrics.EODifference} {
		if c != crit {
			extra = append(extra, c)
		}
	}
	d.Columns = []string{"val accuracy %", "val " + crit.Title() + unit, "test accuracy % [95% interval]", "test " + crit.Title() + unit + " [95%]"}
	for _, c := range extra {
		d.Columns = append(d.Columns, "test "+c.Title()+" % [95%]")
	}
	for _, me := range r.methods {
		va, vc, ta, tc := "–", "–", "–", "–"
		if me.Val != nil {
			va = fmtPct(me.Val.Accuracy)
		}
		if me.ValCriterion != nil {
			vc = fmtCrit(crit, *me.ValCriterion)
		}
		ivOf := func(c metrics.Criterion) string {
			if me.TestCI == nil {
				return "–"
			}
			iv, ok := me.TestCI.Of(c)
			if !ok {
				return "n/a"
			}
			return fmtInterval(&c, iv)
		}
		if me.TestCI != nil {
			ta = fmtInterval(nil, me.TestCI.Accuracy)
		}
		tc = ivOf(crit)
		row := reportRow{Name: me.Name, Cells: []string{va, vc, ta, tc}, Setting: settingText(ds, me), Marks: me.Marks}
		for _, c := range extra {
			row.Cells = append(row.Cells, ivOf(c))
		}
		d.Rows = append(d.Rows, row)
	}
	if row, ok := majorityRow(ds, len(d.Columns)); ok {
		d.Rows = append(d.Rows, row)
	}
	if len(r.methods) > 0 && r.methods[0].TestCI != nil {
		d.IntervalsOn = fmt.Sprintf("Intervals: symmetric bootstrap over the %d test nodes (resampled within each group, 1000 times; the point ± the 95th percentile of its resamples' distance from it, so each interval holds its point): which nodes happen to be in the test split moves the numbers this much.", r.methods[0].TestCI.Evaluated)
	}
	for _, n := range []string{r.noModel, r.thNote, r.seenNote} {
		if n != "" {
			d.Notes = append(d.Notes, n)
		}
	}
	d.Diagnostics = r.diagnostics
	shown := map[string]bool{}
	for _, dg := range r.diagnostics {
		shown[dg.String()] = true
	}
	for _, w := range ds.Warnings {
		shown[w] = true // in the Data section
	}
	for _, w := range r.driftWarnings {
		shown[w] = true // in the Drift section
	}
	for _, w := range r.stderrWarnings {
		if !shown[w] {
			d.Printed = append(d.Printed, w)
		}
	}
	d.DriftWarned = len(r.driftWarnings)
	if r.saved {
		d.Scoring, d.Drift = scoringSection(o, r)
	}

	// The figures.
	if r.frontier != nil {
		var b bytes.Buffer
		if err := r.frontier.WriteSVG(&b, frontierConfig(o, r)); err != nil {
			return nil, fmt.Errorf("report.html: the frontier figure: %w", err)
		}
		d.Frontier = inlineSVG(b.Bytes())
	}
	if groupsSVG != nil {
		d.GroupsSVG = inlineSVG(groupsSVG)
	}
	for _, mr := range rates {
		for g, gr := range mr.rates {
			row := reportRateRow{Method: mr.name, Class: className(ds, mr.class), Group: groupName(ds, g), Selection: "n/a", TPR: "n/a", FPR: "n/a"}
			d.RateClasses = d.RateClasses || mr.class >= 0
			if gr != nil {
				row.Selection = fmtInterval(nil, gr.Selection)
				if gr.TPR != nil {
					row.TPR = fmtInterval(nil, *gr.TPR)
				}
				if gr.FPR != nil {
					row.FPR = fmtInterval(nil, *gr.FPR)
				}
			}
			d.GroupRates = append(d.GroupRates, row)
		}
	}

	// The settings: the rule, what was chosen, and the flags given.
	d.Settings = [][2]string{{"rule", o.rule.String()}}
	switch {
	case o.scores.file != "":
		d.Settings = append(d.Settings, [2]string{"backbone", fmt.Sprintf("the %s of %s", o.scores.kind, o.scores.file)})
	case o.modelFile != "":
		d.Settings = append(d.Settings, [2]string{"model", o.modelFile})
	default:
		d.Settings = append(d.Settings, [2]string{"backbone", fmt.Sprintf("%s (%s training), %d epochs, learning rate %g, hidden %d, %s, seed %d",
			o.backbone, methodName(o), o.train.Epochs, o.train.Adam.LR, o.model.Hidden, o.model.Dtype, o.model.Seed)})
		if o.protocol != "" {
			d.Settings = append(d.Settings, [2]string{"protocol", o.protocolLine()})
		}
		if s := r.search; s != nil {
			c := s.Chosen
			d.Settings = append(d.Settings, [2]string{"backbone search", fmt.Sprintf("chose %s at lr %g (validation accuracy %.2f%% at epoch %d; the more frequent class scores %.2f%%) among %d tried: %s",
				c.Kind, c.LR, 100*c.ValAcc, c.BestEpoch, 100*s.Majority, len(s.Tried), s.Plan)})
		}

	}
	if r.frontier != nil {
		d.Settings = append(d.Settings, [2]string{"FMP grid", fmt.Sprintf("λs %v × λf %v, K %d, τ %g", o.lambdaS, o.lambdaF, o.fmp.K, o.fmp.Temperature)})
	}
	for _, me := range r.methods {
		if s := settingText(ds, me); s != "" {
			d.Settings = append(d.Settings, [2]string{"chosen " + me.Name, s})
		}
	}
	if ds.NumClasses() == 2 {
		d.Settings = append(d.Settings, [2]string{"thresholds", fmt.Sprintf("randomized %v, objective %s", o.randomize, o.objective)})
	}
	d.Flags = o.flagsUsed
	return d, nil
}

// majorityRow is the results table's reference row: the accuracy of
// predicting the more frequent class for every validation and test node
// (the rate a row's "not above the majority rate" mark compares with), in
// a table of cols numbers; false without labelled nodes.
func majorityRow(ds *datasets.Dataset, cols int) (reportRow, bool) {
	va, ta := majorityRate(ds, ds.Split.Val), majorityRate(ds, ds.Split.Test)
	if va == 0 && ta == 0 {
		return reportRow{}, false
	}
	cells := make([]string, cols)
	for k := range cells {
		cells[k] = "–"
	}
	if va > 0 {
		cells[0] = fmtPct(va)
	}
	if ta > 0 && cols > 2 {
		cells[2] = fmtPct(ta)
	}
	what := "the more frequent class for every node"
	if k, _, ok := majority(ds, ds.Split.Test); ok {
		what = fmt.Sprintf("%q for every test node", className(ds, k))
	}
	return reportRow{Name: "majority rate", Cells: cells, Setting: "a constant: predicts " + what, Reference: true}, true
}

// majority is the most frequent class among nodes whose label and group
// are known (the lowest on ties), its share of them, and false when
// there is none (rate 0).
func majority(ds *datasets.Dataset, nodes []int) (class int, rate float64, ok bool) {
	counts := map[int]int{}
	n := 0
	for _, i := range nodes {
		if ds.Labels[i] >= 0 && ds.Sens[i] >= 0 {
			counts[ds.Labels[i]]++
			n++
		}
	}
	for k, c := range counts {
		if !ok || c > counts[class] || (c == counts[class] && k < class) {
			class, ok = k, true
		}
	}
	if !ok {
		return 0, 0, false
	}
	return class, float64(counts[class]) / float64(n), true
}

// verdict says what each debiased method (FMP, the thresholds) bought
// and cost against the backbone, on the test nodes with their 95%
// intervals (on the validation nodes, without intervals, when there is
// no test split), and how to read those intervals: each row's own, not
// intervals of the differences. Nil without a backbone (-model).
func verdict(o *options, r *result) ([]string, string) {
	if r.saved {
		return scoringVerdict(o, r), ""
	}
	var bb *method
	for _, me := range r.methods {
		if me.Name == "backbone" {
			bb = me
		}
	}
	if bb == nil {
		return nil, ""
	}
	crit := o.rule.Criterion
	onTest := bb.Test != nil && bb.TestCI != nil
	where := "test"
	if !onTest {
		where = "validation"
	}
	// value returns a method's criterion and accuracy, formatted with
	// their intervals when on test, and their points.
	type val struct {
		crit, acc   string
		cv, av      float64
		critDefined bool
	}
	value := func(me *method) (val, bool) {
		rep := me.Val
		if onTest {
			rep = me.Test
		}
		if rep == nil {
			return val{}, false
		}
		v := val{acc: fmtPct(rep.Accuracy) + "%", av: rep.Accuracy}
		if onTest && me.TestCI != nil {
			iv := me.TestCI.Accuracy
			v.acc = fmt.Sprintf("%s%% [%s, %s]", fmtPct(iv.Point), fmtPct(iv.Lo), fmtPct(iv.Hi))
		}
		c, err := crit.Of(*rep)
		if err == nil {
			v.cv, v.critDefined = c, true
			v.crit = fmtCrit(crit, c)
			if onTest && me.TestCI != nil {
				if iv, ok := me.TestCI.Of(crit); ok {
					v.crit = fmtInterval(&crit, iv)
				}
			}
		}
		return v, true
	}
	base, ok := value(bb)
	if !ok {
		return nil, ""
	}
	unit := " points"
	if crit.IsRatio() {
		unit = ""
	}
	var out []string
	for _, me := range r.methods {
		if me.Name == "backbone" || me.Name == "model" {
			continue
		}
		v, ok := value(me)
		if !ok {
			continue
		}
		who := map[string]string{"fmp": "FMP", "thresholds": "The per-group thresholds", "offsets": "The per-group class offsets"}[me.Name]
		if who == "" {
			who = me.Name
		}
		if s := settingText(r.ds, me); s != "" && me.Name == "fmp" {
			who += " (" + s + ")"
		}
		var sb strings.Builder
		switch {
		case !base.critDefined || !v.critDefined:
			fmt.Fprintf(&sb, "%s: the %s %s is undefined on the %s nodes (see the warnings)", who, crit.Title(), map[bool]string{true: "of the backbone", false: "of this row"}[!base.critDefined], where)
		default:
			move := "left the " + where + " " + crit.Title() + " where it was, at " + v.crit + unit
			if v.cv != base.cv {
				word := "raised"
				if v.cv < base.cv {
					word = "lowered"
				}
				move = fmt.Sprintf("%s the %s %s from %s to %s%s", word, where, crit.Title(), base.crit, v.crit, unit)
				if crit.Better(v.cv, base.cv) {
					move += " (fairer)"
				} else {
					move += " (less fair)"
				}
			}
			fmt.Fprintf(&sb, "%s %s", who, move)
		}
		gap := 100 * (base.av - v.av)
		switch {
		case math.Abs(gap) < 0.005:
			fmt.Fprintf(&sb, ", at no cost in accuracy (%s)", v.acc)
		case gap > 0:
			fmt.Fprintf(&sb, ", at a cost of %.2f accuracy points (%s → %s)", gap, base.acc, v.acc)
		default:
			fmt.Fprintf(&sb, ", and gained %.2f accuracy points (%s → %s)", -gap, base.acc, v.acc)
		}
		sb.WriteString(".")
		if len(me.Marks) > 0 {
			fmt.Fprintf(&sb, " Its row is marked (%s): not a result to read as one.", strings.Join(me.Marks, "; "))
		}
		out = append(out, sb.String())
	}
	if len(out) == 0 {
		return nil, ""
	}
	note := "Without a test split these are the validation nodes' values, on which the settings were chosen, and have no intervals."
	if onTest {
		note = fmt.Sprintf("The brackets are each row's own 95%% interval over the %d test nodes, not intervals of the differences (the rows share their test nodes, so overlapping intervals do not show that a change is noise, nor do separate ones prove it is not).", bb.TestCI.Evaluated)
	}
	return out, note
}

// glossary explains the report's words: the criteria in the table, FMP's
// λs and λf, the thresholds, the majority rate, the marks and the
// intervals.
func glossary(o *options) [][2]string {
	g := [][2]string{
		{"ΔDP", "demographic parity difference: the largest minus the smallest group's selection rate (the share of the group's nodes predicted positive), in points; 0 is parity. fairlearn's demographic_parity_difference."},
		{"ΔEO", "equal opportunity difference: the largest minus the smallest group's true-positive rate (the share of the group's positive nodes predicted positive), in points. fairlearn's equal_opportunity_difference."},
	}
	if c := o.rule.Criterion; c != metrics.DPDifference && c != metrics.EODifference {
		how := "a difference in points: lower is fairer"
		if c.IsRatio() {
			how = "a ratio, the smallest group rate over the largest: higher is fairer, 1 is parity"
		}
		g = append(g, [2]string{c.Title(), fmt.Sprintf("the rule's criterion (-criterion %s), %s; fairlearn's %s.", c.Name(), how, c.Fairlearn())})
	}
	g = append(g,
		[2]string{"λs", "FMP's smoothing weight: how much extra propagation over the graph its steps add (0: none)."},
		[2]string{"λf", "FMP's fairness budget: how far its fairness steps may move each node's logits towards equal group rates (0: the backbone's predictions unchanged)."},
		[2]string{"thresholds", "per-group decision thresholds on the backbone's probabilities, chosen on the validation nodes under the same rule (post-processing; fairlearn's ThresholdOptimizer). They change decisions, not scores: their AUC in metrics.json is the backbone's."},
		[2]string{"offsets", "with three classes or more, the post-processing in place of the thresholds: an offset per group and class added to the backbone's log-probabilities before the argmax, chosen on the validation nodes under the same rule, judged with the c-class criteria. Like the thresholds, they change decisions, not scores."},
		[2]string{"majority rate", "the accuracy of predicting the more frequent class for every node: what a model must beat to have learnt anything."},
		[2]string{"marks", "\"trivial\": the row selects every node or none, so its parity means nothing; \"not above the majority rate\": the low end of its test accuracy's 95% interval is at or below the majority rate, so the test nodes do not show it to beat a constant; \"rule not met\": no setting met the rule, and FMP's row is the backbone."},
		[2]string{"intervals", "95% symmetric bootstrap intervals over the test nodes (1000 resamples within each group; the point ± the 95th percentile of the resamples' distance from it): how much the numbers move with which nodes happen to be tested."},
	)
	return g
}

// scoringSection describes a -model run for the report: the file, the
// nodes, the scoring semantics, and the drift against the file's
// baseline.
func scoringSection(o *options, r *result) ([][2]string, *reportDrift) {
	rows := [][2]string{{"model file", o.modelFile}}
	if k, ok := r.training["kind"].(string); ok {
		rows = append(rows, [2]string{"model kind", k})
	}
	if v, ok := r.training["nodes_known"]; ok {
		rows = append(rows, [2]string{"nodes the model saw, known", fmt.Sprint(v)})
	}
	if r.heldOut != "" {
		rows = append(rows, [2]string{"test columns", r.heldOut})
		rows = append(rows, [2]string{"val columns", "the saved validation nodes (the model's setting was chosen on them: not held out)"})
	}
	if s, ok := r.training["fmp_scoring"].(string); ok {
		// What was used: an old file without fitted duals is recomputed.
		sem := score.Fitted
		if s == score.Recompute.String() {
			sem = score.Recompute
		}
		rows = append(rows, [2]string{"-fmp-scoring " + s, fmpScoringWords(sem)})
	}
	if r.driftOf == nil {
		if n, ok := r.drift["note"].(string); ok {
			return rows, &reportDrift{Notes: []string{n}}
		}
		return rows, nil
	}
	dr := r.driftOf
	rd := &reportDrift{On: fmt.Sprintf("%s (%d nodes of a known group, %d labelled), against the model's validation nodes", r.driftOn, dr.Nodes, dr.Labelled), Warnings: r.driftWarnings, Notes: dr.Notes}
	for _, g := range dr.GroupMix {
		rd.Mix = append(rd.Mix, reportShare{Group: groupName(r.ds, g.Group), Now: fmtInterval(nil, g.Now), Baseline: fmtInterval(nil, g.Baseline), Significant: g.Significant})
	}
	if f := dr.Features; f != nil {
		listed := 0
		for _, fs := range f.Features {
			if fs.Shift == "none" && fs.Below == 0 && fs.Above == 0 {
				continue
			}
			listed++
			rd.Features = append(rd.Features, reportFeature{Name: fs.Name, Below: fmtPct(fs.Below), Above: fmtPct(fs.Above),
				Beyond: fmt.Sprintf("%.3g×", fs.Beyond), PSI: fmt.Sprintf("%.3f", fs.PSI), Shift: fs.Shift})
		}
		rd.FeaturesNote = fmt.Sprintf("%d of the %d features recorded in the model file moved (a PSI of 0.1 or more, or values outside the training range); the others are in metrics.json.", listed, len(f.Features))
	}
	return rows, rd
}

// scoringVerdict opens a -model run's report: what was scored, how it
// did on the nodes it never trained or chose on, and what drifted.
func scoringVerdict(o *options, r *result) []string {
	var out []string
	ds := r.ds
	out = append(out, fmt.Sprintf("%s scored the %d nodes of this graph.", o.modelFile, ds.N()))
	if me := r.methods[0]; me.Test != nil && me.TestCI != nil {
		crit := o.rule.Criterion
		line := fmt.Sprintf("On the %d labelled nodes it never trained or chose on (%s), its accuracy is %s", len(ds.Split.Test), strings.TrimPrefix(r.heldOut, "held out: "), fmtInterval(nil, me.TestCI.Accuracy))
		if iv, ok := me.TestCI.Of(crit); ok {
			line += fmt.Sprintf(" and its %s %s", crit.Title(), fmtInterval(&crit, iv))
		}
		out = append(out, line+" (95% intervals).")
	} else if r.heldOut != "" {
		out = append(out, "No labelled node it never trained or chose on: nothing here measures how well it does (the validation columns are the nodes its setting was chosen on).")
	}
	switch n := len(r.driftWarnings); {
	case r.driftOf == nil:
		out = append(out, "Drift was not measured: the model file records no baseline.")
	case n == 0:
		out = append(out, fmt.Sprintf("Nothing drifted beyond noise on %s: decisions, group mix and features stay within their validation-time intervals.", r.driftOn))
	default:
		out = append(out, fmt.Sprintf("%d drift warning(s) on %s: see Drift below before trusting these scores.", n, r.driftOn))
	}
	return out
}
