package main

import (
	"fmt"
	"io"
	"slices"

	"github.com/fairmp/fairmp/internal/cli"
	"github.com/fairmp/fairmp/internal/paired"
	"github.com/fairmp/fairmp/metrics"
)

// effects returns the effect table's rows: every method of o but plain
// against the plain run of the same seed (the backbone it
// post-processes, or of the kind its encoder is built on, or trained on
// the original data), then FMP's decomposition: propagation alone (λf 0
// at the λs chosen) against plain, and the fairness step (the chosen λf)
// against propagation alone. The decomposition is left out, and the
// second result says why, when a run saved before FMP kept propagation
// alone is merged.
func effects(o *options, p *problem, all [][]outcome) ([]paired.Row, string, error) {
	plain := slices.Index(o.methods, methodPlain)
	if plain < 0 {
		return nil, "", fmt.Errorf("the effect table needs the plain run among -methods")
	}
	var runs [][]float64
	idx := make([][]int, len(o.methods)) // method → run index per seed
	for _, outs := range all {
		for k, r := range outs {
			idx[k] = append(idx[k], len(runs))
			runs = append(runs, r.probs)
		}
	}
	var rows []paired.Row
	var pairs []paired.Pairing
	note := ""
	for k, name := range o.methods {
		if k == plain {
			continue
		}
		rows = append(rows, paired.Row{Method: name, Against: methodPlain})
		pairs = append(pairs, paired.Pairing{A: idx[k], B: idx[plain]})
		if name != methodFMP {
			continue
		}
		var prop []int
		for _, outs := range all {
			if outs[k].prop == nil {
				prop = nil
				note = "FMP's decomposition is left out: a merged FMP run was saved before baselines kept propagation alone; run FMP again"
				break
			}
			prop = append(prop, len(runs))
			runs = append(runs, outs[k].prop)
		}
		if prop != nil {
			rows = append(rows, paired.Row{Method: paired.RowPropagation, Against: methodPlain}, paired.Row{Method: paired.RowFairStep, Against: paired.RowPropagation})
			pairs = append(pairs, paired.Pairing{A: prop, B: idx[plain]}, paired.Pairing{A: idx[k], B: prop})
		}
	}
	ds := p.ds
	ivs, err := paired.Diffs(runs, pairs, ds.NumClasses(), ds.Labels, ds.Sens, ds.Split.Test, metrics.DefaultBootstrapConfig())
	if err != nil {
		return nil, "", fmt.Errorf("effect table: %w", err)
	}
	for q := range rows {
		rows[q].Diff = ivs[q]
	}
	return rows, note, nil
}

// seedsWord is "1 seed" or "N seeds".
func seedsWord(n int) string {
	if n == 1 {
		return "1 seed"
	}
	return fmt.Sprintf("%d seeds", n)
}

// effectTable writes the rows as the table "effect net of the backbone".
func effectTable(w io.Writer, o *options, rows []paired.Row, note string) {
	fmt.Fprintf(w, "\nEffect net of the backbone: each method minus the plain %s run of the same split and seed (FMP and the thresholds post-process that run; FairGNN, NIFTY and FairVGNN build their encoder on the same kind; a pre-processing method trains it on its data), test points, mean over %s; [95%% paired bootstrap interval]: the test nodes resampled within each group, the same nodes for both runs and every seed, %d resamples (symmetric interval). Resolved (bold): the interval excludes 0. FMP's decomposition, on its trained backbone: propagation alone (λf 0 at the λs chosen) minus plain, and the fairness step (the λf chosen) minus propagation alone.\n\n",
		o.st.Backbone, seedsWord(o.seeds), metrics.DefaultBootstrapConfig().Resamples)
	paired.WriteTable(w, rows)
	if slices.Contains(o.methods, methodThresholds) {
		fmt.Fprintln(w, "\nThe thresholds' AUC is that of their decisions (their probabilities are 0 or 1), not of a score: its fall says they rank nodes by decision alone.")
	}
	if note != "" {
		fmt.Fprintf(w, "\n%s.\n", note)
	}
}

// writeEffectsCSV writes one line per row and measure (points), whole or
// not at all.
func writeEffectsCSV(path string, rows []paired.Row, seeds int) error {
	return cli.ReplaceFile(path, paired.CSV(rows, seeds), []byte(paired.CSVHeader+"\n"))
}
