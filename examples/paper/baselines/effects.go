package main

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"math/rand"
	"slices"
	"strings"

	"github.com/fairmp/fairmp/internal/cli"
	"github.com/fairmp/fairmp/metrics"
)

// The measures of the effect table, in its column order.
const (
	effAccuracy = iota
	effAUC
	effDP
	effEO
	numEffects
)

// effectTitles and effectKeys name the measures in the table and in
// the CSV.
var (
	effectTitles = [numEffects]string{"accuracy", "AUC", "ΔDP", "ΔEO"}
	effectKeys   = [numEffects]string{"accuracy", "auc", "dp", "eo"}
)

// Rows of FMP's decomposition: FMP − plain = (propagation − plain) +
// (fairness step), each on the same trained backbone.
const (
	rowPropagation = "fmp: propagation (λf 0)"
	rowFairStep    = "fmp: fairness step"
)

// effectRow is one row of the effect table: the seed mean of method −
// against on each measure, with its paired bootstrap interval
// (fractions; Undefined where the measure is undefined for some run).
type effectRow struct {
	method, against string
	diff            [numEffects]metrics.Interval
}

// resolved reports whether measure k's interval excludes 0: the only
// difference the table calls resolved.
func (r effectRow) resolved(k int) bool {
	iv := r.diff[k]
	return !iv.Undefined() && (iv.Lo > 0 || iv.Hi < 0)
}

// pairing is one row's runs: a[s] − b[s] on seed s, indices into the
// runs given to pairedDiffs.
type pairing struct{ a, b []int }

// measures is one run's measures on one (re)sample of the test nodes,
// and whether each is defined.
type measures struct {
	v  [numEffects]float64
	ok [numEffects]bool
}

// testSample is the evaluated test nodes (known label and group), in
// group order, with what the measures need of each.
type testSample struct {
	members [][]int // positions in nodes, by group
	nodes   []int
	group   []int // per position
	label   []int // per position
}

func newTestSample(labels, sens, test []int) (*testSample, error) {
	s := &testSample{}
	byGroup := map[int][]int{}
	groups := 0
	for _, i := range test {
		if labels[i] < 0 || sens[i] < 0 {
			continue
		}
		byGroup[sens[i]] = append(byGroup[sens[i]], i)
		groups = max(groups, sens[i]+1)
	}
	for _, g := range sens {
		groups = max(groups, g+1)
	}
	if groups < 2 {
		return nil, fmt.Errorf("the test nodes have %d group(s), want at least 2", groups)
	}
	for g := range groups {
		if len(byGroup[g]) == 0 {
			return nil, fmt.Errorf("group %d has no test node with a known label", g)
		}
		var pos []int
		for _, i := range byGroup[g] {
			pos = append(pos, len(s.nodes))
			s.nodes, s.group, s.label = append(s.nodes, i), append(s.group, g), append(s.label, labels[i])
		}
		s.members = append(s.members, pos)
	}
	return s, nil
}

// scoredRun is one run's predictions on the sample's nodes: the
// decision of each position, and the positions sorted by the score
// P(y = 1) for the AUC.
type scoredRun struct {
	pred  []bool // the positive class predicted
	score []float64
	order []int
}

func (s *testSample) score(probs []float64, opt metrics.Options) *scoredRun {
	r := &scoredRun{pred: make([]bool, len(s.nodes)), score: make([]float64, len(s.nodes))}
	for k, i := range s.nodes {
		p1 := probs[2*i+1]
		r.pred[k], r.score[k] = p1 > opt.Threshold, p1
	}
	r.order = make([]int, len(s.nodes))
	for k := range r.order {
		r.order[k] = k
	}
	slices.SortStableFunc(r.order, func(a, b int) int {
		switch {
		case r.score[a] < r.score[b]:
			return -1
		case r.score[a] > r.score[b]:
			return 1
		}
		return 0
	})
	return r
}

// measure computes the run's measures on the multiset that holds
// position k w[k] times, as metrics.Evaluate computes them on its nodes
// (class 1 positive): accuracy; the AUC of P(y = 1) (ties count one
// half); ΔDP and ΔEO, the largest minus the smallest group's selection
// and true-positive rate (ΔEO undefined when a group has no positive).
func (s *testSample) measure(r *scoredRun, w []int) measures {
	groups := len(s.members)
	n, sel, pos, tp := make([]int, groups), make([]int, groups), make([]int, groups), make([]int, groups)
	total, correct := 0, 0
	for k, wk := range w {
		if wk == 0 {
			continue
		}
		g, y := s.group[k], s.label[k]
		n[g] += wk
		total += wk
		if r.pred[k] {
			sel[g] += wk
		}
		if y == 1 {
			pos[g] += wk
			if r.pred[k] {
				tp[g] += wk
			}
		}
		if r.pred[k] == (y == 1) {
			correct += wk
		}
	}
	var m measures
	m.v[effAccuracy], m.ok[effAccuracy] = float64(correct)/float64(total), true
	spread := func(num, den []int) (float64, bool) {
		lo, hi := math.Inf(1), math.Inf(-1)
		for g := range num {
			if den[g] == 0 {
				return math.NaN(), false
			}
			v := float64(num[g]) / float64(den[g])
			lo, hi = min(lo, v), max(hi, v)
		}
		return hi - lo, true
	}
	m.v[effDP], m.ok[effDP] = spread(sel, n)
	m.v[effEO], m.ok[effEO] = spread(tp, pos)
	// AUC: over the positions in score order, each tie block's
	// positives beat the negatives below it and tie with its own.
	var u, negBelow, allPos, allNeg float64
	for a := 0; a < len(r.order); {
		var pw, nw float64
		b := a
		for ; b < len(r.order) && r.score[r.order[b]] == r.score[r.order[a]]; b++ {
			k := r.order[b]
			if s.label[k] == 1 {
				pw += float64(w[k])
			} else {
				nw += float64(w[k])
			}
		}
		u += pw * (negBelow + nw/2)
		negBelow += nw
		allPos, allNeg = allPos+pw, allNeg+nw
		a = b
	}
	if allPos > 0 && allNeg > 0 {
		m.v[effAUC], m.ok[effAUC] = u/(allPos*allNeg), true
	} else {
		m.v[effAUC] = math.NaN()
	}
	return m
}

// pairedDiffs returns, for each pairing, the interval of the seed mean
// of run a[s]'s measure minus run b[s]'s, for each measure (fractions),
// from a paired bootstrap: each resample draws, within every group
// separately, as many test nodes as the group has, with replacement
// (metrics.Bootstrap's stratified scheme, seeded by cfg.Seed), and
// evaluates every run of every seed on that same multiset; the
// difference of a resample is its seed mean. A resample on which a
// measure is undefined for some run of the pairing is skipped for that
// measure (Interval.Used counts the rest). The interval is the symmetric
// one (metrics.SymmetricInterval, clipped to [−1, 1]): Point ± the
// Level quantile of the resamples' distance from it. A measure
// undefined on the test nodes themselves for some run is Undefined.
//
// runs are n × 2 probability matrices; it returns an error for another
// number of classes, for probabilities metrics.Evaluate refuses, and
// for test nodes without two groups.
func pairedDiffs(runs [][]float64, pairs []pairing, classes int, labels, sens, test []int, cfg metrics.BootstrapConfig) ([][numEffects]metrics.Interval, error) {
	if classes != 2 {
		return nil, fmt.Errorf("%d classes: the paired effects are of binary tasks", classes)
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	opt := metrics.DefaultOptions()
	check := opt
	check.AllowUndefined = true
	s, err := newTestSample(labels, sens, test)
	if err != nil {
		return nil, err
	}
	scored := make([]*scoredRun, len(runs))
	point := make([]measures, len(runs))
	ones := make([]int, len(s.nodes))
	for k := range ones {
		ones[k] = 1
	}
	for j, p := range runs {
		if _, err := metrics.Evaluate(p, classes, labels, sens, test, check); err != nil {
			return nil, err
		}
		scored[j] = s.score(p, opt)
		point[j] = s.measure(scored[j], ones)
	}
	res := make([][]measures, len(runs))
	w := make([]int, len(s.nodes))
	rng := rand.New(rand.NewSource(cfg.Seed))
	for range cfg.Resamples {
		clear(w)
		for _, m := range s.members {
			for range m {
				w[m[rng.Intn(len(m))]]++
			}
		}
		for j := range runs {
			res[j] = append(res[j], s.measure(scored[j], w))
		}
	}
	out := make([][numEffects]metrics.Interval, len(pairs))
	for q, pr := range pairs {
		for e := range numEffects {
			diff := func(at func(j int) measures) (float64, bool) {
				sum := 0.0
				for k := range pr.a {
					x, y := at(pr.a[k]), at(pr.b[k])
					if !x.ok[e] || !y.ok[e] {
						return 0, false
					}
					sum += x.v[e] - y.v[e]
				}
				return sum / float64(len(pr.a)), true
			}
			pt, ok := diff(func(j int) measures { return point[j] })
			if !ok || len(pr.a) == 0 {
				out[q][e] = metrics.Interval{Point: math.NaN(), Lo: math.NaN(), Hi: math.NaN()}
				continue
			}
			var xs []float64
			for r := range cfg.Resamples {
				if d, ok := diff(func(j int) measures { return res[j][r] }); ok {
					xs = append(xs, d)
				}
			}
			if len(xs) == 0 {
				out[q][e] = metrics.Interval{Point: pt, Lo: math.NaN(), Hi: math.NaN()}
				continue
			}
			out[q][e] = metrics.SymmetricInterval(xs, pt, cfg.Level, -1, 1)
		}
	}
	return out, nil
}

// effects returns the effect table's rows: every method of o but plain
// against the plain run of the same seed (the backbone it
// post-processes, or of the kind its encoder is built on, or trained on
// the original data), then FMP's decomposition: propagation alone (λf 0
// at the λs chosen) against plain, and the fairness step (the chosen λf)
// against propagation alone. The decomposition is left out, and the
// second result says why, when a run saved before FMP kept propagation
// alone is merged.
func effects(o *options, p *problem, all [][]outcome) ([]effectRow, string, error) {
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
	var rows []effectRow
	var pairs []pairing
	note := ""
	for k, name := range o.methods {
		if k == plain {
			continue
		}
		rows = append(rows, effectRow{method: name, against: methodPlain})
		pairs = append(pairs, pairing{a: idx[k], b: idx[plain]})
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
			rows = append(rows, effectRow{method: rowPropagation, against: methodPlain}, effectRow{method: rowFairStep, against: rowPropagation})
			pairs = append(pairs, pairing{a: prop, b: idx[plain]}, pairing{a: idx[k], b: prop})
		}
	}
	ds := p.ds
	ivs, err := pairedDiffs(runs, pairs, ds.NumClasses(), ds.Labels, ds.Sens, ds.Split.Test, metrics.DefaultBootstrapConfig())
	if err != nil {
		return nil, "", fmt.Errorf("effect table: %w", err)
	}
	for q := range rows {
		rows[q].diff = ivs[q]
	}
	return rows, note, nil
}

// signedCell formats a difference interval in points, bold where it is
// resolved.
func signedCell(r effectRow, k int) string {
	iv := r.diff[k]
	if iv.Undefined() {
		return "n/a"
	}
	if math.IsNaN(iv.Lo) {
		return fmt.Sprintf("%+.2f [n/a]", 100*iv.Point)
	}
	pt := fmt.Sprintf("%+.2f", 100*iv.Point)
	if r.resolved(k) {
		pt = "**" + pt + "**"
	}
	return fmt.Sprintf("%s [%+.2f, %+.2f]", pt, 100*iv.Lo, 100*iv.Hi)
}

// seedsWord is "1 seed" or "N seeds".
func seedsWord(n int) string {
	if n == 1 {
		return "1 seed"
	}
	return fmt.Sprintf("%d seeds", n)
}

// effectHeader is the effect table's header row.
const effectHeader = "| method | against | accuracy | AUC | ΔDP | ΔEO | resolved |"

// effectTable writes the rows as the table "effect net of the backbone".
func effectTable(w io.Writer, o *options, rows []effectRow, note string) {
	fmt.Fprintf(w, "\nEffect net of the backbone: each method minus the plain %s run of the same split and seed (FMP and the thresholds post-process that run; FairGNN, NIFTY and FairVGNN build their encoder on the same kind; a pre-processing method trains it on its data), test points, mean over %s; [95%% paired bootstrap interval]: the test nodes resampled within each group, the same nodes for both runs and every seed, %d resamples (symmetric interval). Resolved (bold): the interval excludes 0. FMP's decomposition, on its trained backbone: propagation alone (λf 0 at the λs chosen) minus plain, and the fairness step (the λf chosen) minus propagation alone.\n\n",
		o.backbone, seedsWord(o.seeds), metrics.DefaultBootstrapConfig().Resamples)
	fmt.Fprintln(w, effectHeader)
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|")
	for _, r := range rows {
		var res []string
		for k := range numEffects {
			if r.resolved(k) {
				res = append(res, effectTitles[k])
			}
		}
		if res == nil {
			res = []string{"none"}
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s |\n", r.method, r.against,
			signedCell(r, effAccuracy), signedCell(r, effAUC), signedCell(r, effDP), signedCell(r, effEO), strings.Join(res, ", "))
	}
	if slices.Contains(o.methods, methodThresholds) {
		fmt.Fprintln(w, "\nThe thresholds' AUC is that of their decisions (their probabilities are 0 or 1), not of a score: its fall says they rank nodes by decision alone.")
	}
	if note != "" {
		fmt.Fprintf(w, "\n%s.\n", note)
	}
}

// effectsCSVHeader begins the effects CSV: -out replaces only a file
// that begins with it (cli.ReplaceFile).
const effectsCSVHeader = "method,against,measure,diff,lo,hi,resolved,resamples_used,seeds"

// writeEffectsCSV writes one line per row and measure (points), whole or
// not at all.
func writeEffectsCSV(path string, rows []effectRow, seeds int) error {
	var b bytes.Buffer
	fmt.Fprintln(&b, effectsCSVHeader)
	num := func(v float64) string {
		if math.IsNaN(v) {
			return ""
		}
		return fmt.Sprintf("%.4f", 100*v)
	}
	for _, r := range rows {
		for k := range numEffects {
			iv := r.diff[k]
			fmt.Fprintf(&b, "%q,%q,%s,%s,%s,%s,%t,%d,%d\n", r.method, r.against, effectKeys[k], num(iv.Point), num(iv.Lo), num(iv.Hi), r.resolved(k), iv.Used, seeds)
		}
	}
	return cli.ReplaceFile(path, b.Bytes(), []byte(effectsCSVHeader+"\n"))
}
