package main

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/fairmp/fairmp/fmp"
	"github.com/fairmp/fairmp/graph/datasets"
	"github.com/fairmp/fairmp/layers/postprocess"
	"github.com/fairmp/fairmp/metrics"
)

// className and groupName give the names the input used.
func className(ds *datasets.Dataset, k int) string {
	if k < 0 {
		return ""
	}
	if k < len(ds.ClassNames) {
		return ds.ClassNames[k]
	}
	return strconv.Itoa(k)
}

func groupName(ds *datasets.Dataset, g int) string {
	if g < 0 {
		return ""
	}
	if g < len(ds.GroupNames) {
		return ds.GroupNames[g]
	}
	return strconv.Itoa(g)
}

func writeMetrics(path string, o *options, r *result) error {
	ds := r.ds
	names := func(n int, f func(*datasets.Dataset, int) string) []string {
		out := make([]string, n)
		for k := range out {
			out[k] = f(ds, k)
		}
		return out
	}
	doc := map[string]any{
		"data": map[string]any{
			"name": ds.Name, "nodes": ds.N(), "edges": ds.Graph.NumEdges(), "features": ds.NumFeatures,
			"classes": names(ds.NumClasses(), className), "groups": names(groups(ds), groupName),
			"positive_class": className(ds, 1),
			"train":          len(ds.Split.Train), "val": len(ds.Split.Val), "test": len(ds.Split.Test),
			"warnings": ds.Warnings, "categorical": ds.Categorical,
		},
		"run": r.training,
	}
	if o.modelFile == "" {
		doc["settings"] = map[string]any{
			"backbone": o.backbone, "method": methodName(o), "hidden": o.model.Hidden, "dtype": o.model.Dtype.String(), "seed": o.model.Seed,
			"epochs": o.train.Epochs, "lr": o.train.Adam.LR, "weight_decay": o.train.Adam.WeightDecay,
			"selection": selectionName(o.train.Select), "rule": o.rule.String(), "criterion": o.rule.Criterion.Name(),
			"thresholds": map[string]any{"randomized": o.randomize, "objective": o.objective.String()},
			"min_group":  o.files.Options.MinGroupSize, "merge_small_groups": o.files.Options.MergeSmallGroups, "degree_groups": o.degreeGroups,
			"lambda_f": o.lambdaF, "lambda_s": o.lambdaS, "k": o.fmp.K, "tau": o.fmp.Temperature,
		}
		if o.protocol != "" {
			doc["settings"].(map[string]any)["protocol"] = o.protocol
		}
		if o.trainLabels > 0 {
			doc["settings"].(map[string]any)["train_labels"] = o.trainLabels
		}
		if !math.IsNaN(o.dropout) {
			doc["settings"].(map[string]any)["dropout"] = o.dropout
		}
		scoreSettings(o, doc["settings"].(map[string]any))
	}
	methods := map[string]any{}
	for _, me := range r.methods {
		methods[me.Name] = me
	}
	doc["methods"] = methods
	doc["diagnostics"] = r.diagnostics
	if r.saved {
		doc["drift"] = r.drift
	}
	var notes []string
	for _, n := range []string{r.thNote, r.noModel, r.seenNote} {
		if n != "" {
			notes = append(notes, n)
		}
	}
	if len(notes) > 0 {
		doc["notes"] = notes
	}
	return writeFile(path, func(w io.Writer) error {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(doc)
	})
}

// writePredictions writes one row per node: id (or row), group, label,
// split, then per method the probability of class 1 and the decision.
func writePredictions(path string, r *result) error {
	ds := r.ds
	split := ds.Split.Names(ds.N())
	return writeFile(path, func(w io.Writer) error {
		cw := csv.NewWriter(w)
		head := []string{"node", "group", "label", "split"}
		if r.saved {
			// Whether the -model saw the node in training (by id): yes,
			// no, or empty when that cannot be told (see identify).
			head = append(head, "seen")
		}
		first := len(head)
		for _, me := range r.methods {
			head = append(head, me.Name+"_p1", me.Name+"_decision")
		}
		if err := cw.Write(head); err != nil {
			return err
		}
		c := ds.NumClasses()
		row := make([]string, len(head))
		for i := 0; i < ds.N(); i++ {
			row[0] = strconv.Itoa(i)
			if ds.IDs != nil {
				row[0] = ds.IDs[i]
			}
			row[1], row[2], row[3] = groupName(ds, ds.Sens[i]), className(ds, ds.Labels[i]), split[i]
			if r.saved {
				row[4] = ""
				if r.seen != nil {
					row[4] = map[bool]string{true: "yes", false: "no"}[r.seen[i]]
				}
			}
			for k, me := range r.methods {
				row[first+2*k] = strconv.FormatFloat(me.probs[i*c+1], 'f', 6, 64)
				row[first+1+2*k] = className(ds, me.decision[i])
			}
			if err := cw.Write(row); err != nil {
				return err
			}
		}
		cw.Flush()
		return cw.Error()
	})
}

// writeFrontier writes every FMP setting's metrics; val_criterion and
// test_criterion are the rule's criterion (empty where undefined).
func writeFrontier(path string, f *fmp.Frontier) error {
	return writeFile(path, func(w io.Writer) error {
		cw := csv.NewWriter(w)
		cw.Write([]string{"lambda_s", "lambda_f", "val_accuracy", "val_dp", "test_accuracy", "test_dp", "test_eo", "chosen", "val_criterion", "test_criterion"})
		g := func(v float64) string { return strconv.FormatFloat(v, 'f', 6, 64) }
		crit := func(r metrics.Report) string {
			v, err := f.Rule.Criterion.Of(r)
			if err != nil {
				return ""
			}
			return g(v)
		}
		for k, p := range f.Points {
			ch := "0"
			if k == f.Chosen {
				ch = "1"
			}
			cw.Write([]string{g(p.Config.LambdaS), g(p.Config.LambdaF), g(p.Val.Accuracy), g(p.Val.DemographicParity),
				g(p.Test.Accuracy), g(p.Test.DemographicParity), g(p.Test.EqualOpportunity), ch, crit(p.Val), crit(p.Test)})
		}
		cw.Flush()
		return cw.Error()
	})
}

// plotFrontier draws two panels, validation (where the choice is made)
// and test: accuracy against the rule's criterion for every FMP setting
// (one line per λs, each point labelled with its λf), the backbone
// (cross), the thresholds (triangle), the chosen setting (ringed), each
// panel's majority-class accuracy and, on validation, the rule's limit
// (frontierConfig).
func plotFrontier(path string, o *options, r *result) error {
	return writeFile(path, func(w io.Writer) error { return r.frontier.WriteSVG(w, frontierConfig(o, r)) })
}

// printSummary prints the table of methods on stdout: accuracy and the
// rule's criterion on validation and test, with test intervals, and ΔDP
// and ΔEO when the criterion is another.
func printSummary(w io.Writer, o *options, r *result) {
	ds := r.ds
	crit := o.rule.Criterion
	fmt.Fprintf(w, "%s: %d nodes, %d edges, %d groups; %d validation and %d test nodes\n", ds.Name, ds.N(), ds.Graph.NumEdges(), groups(ds), len(ds.Split.Val), len(ds.Split.Test))
	if r.heldOut != "" {
		// -model: which nodes the columns cover (see heldOut).
		fmt.Fprintf(w, "nodes the model saw known %v; test columns: %s; val columns: the saved validation nodes (chosen on, not held out)\n", r.training["nodes_known"], r.heldOut)
	}
	if o.scores.file != "" {
		fmt.Fprintf(w, "backbone: the %s of %s; rule: %s\n", o.scores.kind, o.scores.file, o.rule)
	} else if o.modelFile == "" {
		trained := ""
		if o.method != nil {
			trained = " trained with " + methodLabel(o.method)
		}
		how := fmt.Sprintf("%d epochs", o.train.Epochs)
		if s := r.search; s != nil {
			how = fmt.Sprintf("lr %g, epoch %v of at most %d (chosen on validation by -select %s among %d tried)", o.train.Adam.LR, r.training["best_epoch"], o.train.Epochs, o.train.Select.Word(), len(s.Tried))
		}
		fmt.Fprintf(w, "backbone %s%s, %s; rule: %s\n", o.backbone, trained, how, o.rule)
	}
	fmt.Fprintln(w)
	extra := []metrics.Criterion{}
	for _, c := range []metrics.Criterion{metrics.DPDifference, metrics.EODifference} {
		if c != crit {
			extra = append(extra, c)
		}
	}
	unit := " %"
	if crit.IsRatio() {
		unit = ""
	}
	head := fmt.Sprintf("| method | val accuracy %% | val %s%s | test accuracy %% [95%% interval] | test %s%s [95%%] |", crit.Title(), unit, crit.Title(), unit)
	for _, c := range extra {
		head += fmt.Sprintf(" test %s %% [95%%] |", c.Title())
	}
	fmt.Fprintln(w, head+" setting | marks |")
	fmt.Fprintln(w, "|---|---|---|---|---|"+strings.Repeat("---|", len(extra))+"---|---|")
	value := func(v *float64) string {
		switch {
		case v == nil:
			return "–"
		case crit.IsRatio():
			return fmt.Sprintf("%.3f", *v)
		}
		return fmt.Sprintf("%.2f", 100**v)
	}
	interval := func(ci *metrics.Intervals, c metrics.Criterion) string {
		if ci == nil {
			return "–"
		}
		iv, ok := ci.Of(c)
		switch {
		case !ok:
			return "n/a" // undefined on the test nodes (see the warnings)
		case c.IsRatio():
			return fmt.Sprintf("%.3f [%.3f, %.3f]", iv.Point, iv.Lo, iv.Hi)
		}
		return iv.String()
	}
	for _, me := range r.methods {
		va, ta := "–", "–"
		if me.Val != nil {
			va = fmt.Sprintf("%.2f", 100*me.Val.Accuracy)
		}
		if me.TestCI != nil {
			ta = me.TestCI.Accuracy.String()
		}
		vc := value(me.ValCriterion)
		if me.Val != nil && me.ValCriterion == nil {
			vc = "n/a"
		}
		row := fmt.Sprintf("| %s | %s | %s | %s | %s |", me.Name, va, vc, ta, interval(me.TestCI, crit))
		for _, c := range extra {
			row += " " + interval(me.TestCI, c) + " |"
		}
		fmt.Fprintf(w, "%s %s | %s |\n", row, settingText(ds, me), strings.Join(me.Marks, "; "))
	}
	for _, me := range r.methods {
		if len(me.Marks) > 0 {
			fmt.Fprintln(w, "\nA marked row is not a result to read as one: a trivial selection is at parity whatever the groups, and a row not above the majority rate (the low end of its accuracy's 95% interval at or below the accuracy of predicting the more frequent class for every node) is not shown to predict better than a constant. The warnings (on stderr, and in metrics.json) say what to change.")
			break
		}
	}
	if len(r.methods) > 0 && r.methods[0].TestCI != nil {
		fmt.Fprintf(w, "\nIntervals: symmetric bootstrap over the %d test nodes (resampled within each group, 1000 times; the point ± the 95th percentile of its resamples' distance from it, so each interval holds its point): which nodes happen to be in the test split moves the numbers this much.\n", r.methods[0].TestCI.Evaluated)
	}
	if c := ds.NumClasses(); c > 2 {
		fmt.Fprintf(w, "%d classes: each criterion is the largest gap between the groups over the classes, each class against the rest (a ratio: the smallest); accuracy is over all classes.\n", c)
	}
	if r.noModel != "" {
		fmt.Fprintf(w, "\nnote: %s\n", r.noModel)
	}
	if r.thNote != "" {
		fmt.Fprintf(w, "\nnote: %s\n", r.thNote)
	}
}

// printWarnings writes the diagnostics, one "warning:" line each, on w
// (stderr: every warning of the command goes there, the table to
// stdout).
func printWarnings(w io.Writer, r *result) {
	for _, d := range r.diagnostics {
		fmt.Fprintf(w, "warning: %s\n", d)
	}
}

// offsetSetting records the class offsets, by group and class index
// (offset_group1_class2).
func offsetSetting(o *postprocess.ClassOffsets) map[string]float64 {
	out := map[string]float64{}
	for g, row := range o.Offsets {
		for k, b := range row {
			out[fmt.Sprintf("offset_group%d_class%d", g, k)] = b
		}
	}
	return out
}

// thresholdSetting records the thresholds' rules, by group index.
func thresholdSetting(th *postprocess.Thresholds) map[string]float64 {
	out := map[string]float64{}
	for g, r := range th.Groups {
		out[fmt.Sprintf("threshold_group%d", g)] = r.T
		if r.P2 != 0 {
			out[fmt.Sprintf("threshold2_group%d", g)], out[fmt.Sprintf("p_threshold2_group%d", g)] = r.T2, r.P2
		}
		if r.PConstant != 0 {
			out[fmt.Sprintf("p_constant_group%d", g)], out[fmt.Sprintf("constant_group%d", g)] = r.PConstant, r.Constant
		}
	}
	return out
}

func settingText(ds *datasets.Dataset, me *method) string {
	switch me.Name {
	case "fmp":
		return fmt.Sprintf("λs %g, λf %g", me.Setting["lambda_s"], me.Setting["lambda_f"])
	case "offsets":
		var parts []string
		for g := 0; ; g++ {
			if _, ok := me.Setting[fmt.Sprintf("offset_group%d_class0", g)]; !ok {
				break
			}
			var bs []string
			for k := 1; ; k++ {
				b, ok := me.Setting[fmt.Sprintf("offset_group%d_class%d", g, k)]
				if !ok {
					break
				}
				bs = append(bs, fmt.Sprintf("%+.2f", b))
			}
			parts = append(parts, fmt.Sprintf("b(group %s) 0 %s", groupName(ds, g), strings.Join(bs, " ")))
		}
		return strings.Join(parts, ", ")
	case "thresholds":
		var parts []string
		for g := 0; ; g++ {
			t, ok := me.Setting[fmt.Sprintf("threshold_group%d", g)]
			if !ok {
				break
			}
			s := fmt.Sprintf("t(group %s) %s", groupName(ds, g), thresholdText(t))
			if p := me.Setting[fmt.Sprintf("p_threshold2_group%d", g)]; p != 0 {
				s += fmt.Sprintf(" or %s (p %.2f)", thresholdText(me.Setting[fmt.Sprintf("threshold2_group%d", g)]), p)
			}
			if p := me.Setting[fmt.Sprintf("p_constant_group%d", g)]; p != 0 {
				s += fmt.Sprintf(", random %.2f (p %.2f)", me.Setting[fmt.Sprintf("constant_group%d", g)], p)
			}
			parts = append(parts, s)
		}
		return strings.Join(parts, ", ")
	}
	return ""
}

// thresholdText writes a decision threshold t (class 1 when P > t) in
// words where it is a limit: below 0 every node is selected, from 1 none.
func thresholdText(t float64) string {
	switch {
	case t < 0:
		return "selects every node"
	case t >= 1:
		return "selects no node"
	}
	return fmt.Sprintf("%.3f", t)
}

// methodName is the -method's name, "plain" without one.
func methodName(o *options) string {
	switch {
	case o.pre != nil:
		return o.pre.Name()
	case o.method == nil:
		return "plain"
	}
	return o.method.Name()
}
