package main

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"strconv"

	"github.com/fairmp/fairmp/fmp"
	"github.com/fairmp/fairmp/graph/datasets"
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
			"warnings": ds.Warnings,
		},
		"run": r.training,
	}
	if o.modelFile == "" {
		doc["settings"] = map[string]any{
			"backbone": o.backbone, "hidden": o.model.Hidden, "dtype": o.model.Dtype.String(), "seed": o.model.Seed,
			"epochs": o.train.Epochs, "lr": o.train.Adam.LR, "weight_decay": o.train.Adam.WeightDecay,
			"selection": "best validation accuracy", "rule": o.rule.String(),
			"lambda_f": o.lambdaF, "lambda_s": o.lambdaS, "k": o.fmp.K, "tau": o.fmp.Temperature,
		}
	}
	methods := map[string]any{}
	for _, me := range r.methods {
		methods[me.Name] = me
	}
	doc["methods"] = methods
	doc["diagnostics"] = r.diagnostics
	if r.thNote != "" {
		doc["notes"] = []string{r.thNote}
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
			for k, me := range r.methods {
				row[4+2*k] = strconv.FormatFloat(me.probs[i*c+1], 'f', 6, 64)
				row[5+2*k] = className(ds, me.decision[i])
			}
			if err := cw.Write(row); err != nil {
				return err
			}
		}
		cw.Flush()
		return cw.Error()
	})
}

func writeFrontier(path string, f *fmp.Frontier) error {
	return writeFile(path, func(w io.Writer) error {
		cw := csv.NewWriter(w)
		cw.Write([]string{"lambda_s", "lambda_f", "val_accuracy", "val_dp", "test_accuracy", "test_dp", "test_eo", "chosen"})
		for k, p := range f.Points {
			ch := "0"
			if k == f.Chosen {
				ch = "1"
			}
			g := func(v float64) string { return strconv.FormatFloat(v, 'f', 6, 64) }
			cw.Write([]string{g(p.Config.LambdaS), g(p.Config.LambdaF), g(p.Val.Accuracy), g(p.Val.DemographicParity),
				g(p.Test.Accuracy), g(p.Test.DemographicParity), g(p.Test.EqualOpportunity), ch})
		}
		cw.Flush()
		return cw.Error()
	})
}

// plotFrontier draws two panels, validation (where the choice is made)
// and test: accuracy against ΔDP for every FMP setting (one line per λs,
// each point labelled with its λf where the label fits), the backbone
// (cross), the thresholds (triangle), the chosen setting (ringed) and,
// on validation, the rule's limit.
func plotFrontier(path string, r *result) error {
	pc := fmp.DefaultPlotConfig()
	pc.Title = r.ds.Name
	for _, me := range r.methods {
		if me.Name != "fmp" {
			pc.Marks = append(pc.Marks, fmp.PlotMark{Name: me.Name, Val: me.Val, Test: me.Test})
		}
	}
	return writeFile(path, func(w io.Writer) error { return r.frontier.WriteSVG(w, pc) })
}

func containsF(s []float64, x float64) bool {
	for _, v := range s {
		if v == x {
			return true
		}
	}
	return false
}

// printSummary prints the table of methods on stdout.
func printSummary(w io.Writer, o *options, r *result) {
	ds := r.ds
	for _, d := range r.diagnostics {
		fmt.Fprintf(w, "warning: %s\n", d)
	}
	if len(r.diagnostics) > 0 {
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "%s: %d nodes, %d edges; %d validation and %d test nodes\n", ds.Name, ds.N(), ds.Graph.NumEdges(), len(ds.Split.Val), len(ds.Split.Test))
	if o.modelFile == "" {
		fmt.Fprintf(w, "backbone %s, %d epochs; rule: %s\n", o.backbone, o.train.Epochs, o.rule)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| method | val accuracy % | val ΔDP % | test accuracy % [95% interval] | test ΔDP % [95%] | test ΔEO % [95%] | setting |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|")
	pct := func(rep *metrics.Report, f func(*metrics.Report) float64) string {
		if rep == nil {
			return "–"
		}
		return fmt.Sprintf("%.2f", 100*f(rep))
	}
	acc := func(r *metrics.Report) float64 { return r.Accuracy }
	dp := func(r *metrics.Report) float64 { return r.DemographicParity }
	for _, me := range r.methods {
		ta, td, te := "–", "–", "–"
		if me.TestCI != nil {
			ta, td, te = me.TestCI.Accuracy.String(), me.TestCI.DemographicParity.String(), me.TestCI.EqualOpportunity.String()
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s |\n", me.Name, pct(me.Val, acc), pct(me.Val, dp), ta, td, te, settingText(me))
	}
	if len(r.methods) > 0 && r.methods[0].TestCI != nil {
		fmt.Fprintf(w, "\nIntervals: percentile bootstrap over the %d test nodes (resampled within each group, 1000 times): which nodes happen to be in the test split moves the numbers this much.\n", r.methods[0].TestCI.Evaluated)
	}
	if r.thNote != "" {
		fmt.Fprintf(w, "\nnote: %s\n", r.thNote)
	}
}

func settingText(me *method) string {
	switch me.Name {
	case "fmp":
		return fmt.Sprintf("λs %g, λf %g", me.Setting["lambda_s"], me.Setting["lambda_f"])
	case "thresholds":
		return fmt.Sprintf("t(group 0) %.3f, t(group 1) %.3f", me.Setting["threshold_group0"], me.Setting["threshold_group1"])
	}
	return ""
}
