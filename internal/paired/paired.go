// Package paired measures a method's effect net of its backbone: the
// seed mean of the method's test measure minus its backbone's (the run of
// the same split and seed), with a paired bootstrap interval (both runs
// evaluated on the same resampled test nodes), called resolved only
// where the interval excludes 0. The commands baselines
// (examples/paper/baselines) and debias (-compare) write their effect
// tables with it: [Diffs] computes the intervals, [Row] holds one row,
// [WriteTable] and [CSV] write them.
package paired

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"math/rand"
	"slices"
	"strings"

	"github.com/fairmp/fairmp/metrics"
)

// The measures of an effect, in the table's column order.
const (
	Accuracy = iota
	AUC
	DP
	EO
	NumMeasures
)

// Titles and Keys name the measures in the table and in the CSV.
var (
	Titles = [NumMeasures]string{"accuracy", "AUC", "ΔDP", "ΔEO"}
	Keys   = [NumMeasures]string{"accuracy", "auc", "dp", "eo"}
)

// Rows of FMP's decomposition: FMP − backbone = (propagation −
// backbone) + (fairness step), each on the same trained backbone:
// propagation alone is FMP at the λs chosen with λf 0, the fairness step
// the chosen λf against it.
const (
	RowPropagation = "fmp: propagation (λf 0)"
	RowFairStep    = "fmp: fairness step"
)

// Row is one row of an effect table: the seed mean of Method − Against
// on each measure, with its paired bootstrap interval (fractions;
// Undefined where the measure is undefined for some run).
type Row struct {
	Method, Against string
	Diff            [NumMeasures]metrics.Interval
}

// Resolved reports whether measure k's interval excludes 0: the only
// difference the table calls resolved.
func (r Row) Resolved(k int) bool {
	iv := r.Diff[k]
	return !iv.Undefined() && (iv.Lo > 0 || iv.Hi < 0)
}

// Pairing is one row's runs: A[s] − B[s] on seed s, indices into the
// runs given to Diffs.
type Pairing struct{ A, B []int }

// measures is one run's measures on one (re)sample of the test nodes,
// and whether each is defined.
type measures struct {
	v  [NumMeasures]float64
	ok [NumMeasures]bool
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
	m.v[Accuracy], m.ok[Accuracy] = float64(correct)/float64(total), true
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
	m.v[DP], m.ok[DP] = spread(sel, n)
	m.v[EO], m.ok[EO] = spread(tp, pos)
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
		m.v[AUC], m.ok[AUC] = u/(allPos*allNeg), true
	} else {
		m.v[AUC] = math.NaN()
	}
	return m
}

// Diffs returns, for each pairing, the interval of the seed mean of run
// A[s]'s measure minus run B[s]'s, for each measure (fractions), from a
// paired bootstrap: each resample draws, within every group separately,
// as many test nodes as the group has, with replacement
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
// number of classes, for probabilities metrics.Evaluate refuses, for
// test nodes without two groups, and for a pairing whose two lists
// differ in length or name a run that is not there.
func Diffs(runs [][]float64, pairs []Pairing, classes int, labels, sens, test []int, cfg metrics.BootstrapConfig) ([][NumMeasures]metrics.Interval, error) {
	if classes != 2 {
		return nil, fmt.Errorf("%d classes: the paired effects are of binary tasks", classes)
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	for q, pr := range pairs {
		if len(pr.A) != len(pr.B) {
			return nil, fmt.Errorf("pairing %d: %d runs against %d, want one of each per seed", q, len(pr.A), len(pr.B))
		}
		for _, j := range append(slices.Clone(pr.A), pr.B...) {
			if j < 0 || j >= len(runs) {
				return nil, fmt.Errorf("pairing %d: run %d, want 0 to %d", q, j, len(runs)-1)
			}
		}
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
	out := make([][NumMeasures]metrics.Interval, len(pairs))
	for q, pr := range pairs {
		for e := range NumMeasures {
			diff := func(at func(j int) measures) (float64, bool) {
				sum := 0.0
				for k := range pr.A {
					x, y := at(pr.A[k]), at(pr.B[k])
					if !x.ok[e] || !y.ok[e] {
						return 0, false
					}
					sum += x.v[e] - y.v[e]
				}
				return sum / float64(len(pr.A)), true
			}
			pt, ok := diff(func(j int) measures { return point[j] })
			if !ok || len(pr.A) == 0 {
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

// Cell formats measure k of r in points, bold where it is resolved:
// "**−5.53** [−6.66, −4.40]", "+0.34 [n/a]" without an interval, "n/a"
// when undefined.
func Cell(r Row, k int) string {
	iv := r.Diff[k]
	if iv.Undefined() {
		return "n/a"
	}
	if math.IsNaN(iv.Lo) {
		return fmt.Sprintf("%+.2f [n/a]", 100*iv.Point)
	}
	pt := fmt.Sprintf("%+.2f", 100*iv.Point)
	if r.Resolved(k) {
		pt = "**" + pt + "**"
	}
	return fmt.Sprintf("%s [%+.2f, %+.2f]", pt, 100*iv.Lo, 100*iv.Hi)
}

// ResolvedList names the measures r resolves, or "none".
func ResolvedList(r Row) string {
	var res []string
	for k := range NumMeasures {
		if r.Resolved(k) {
			res = append(res, Titles[k])
		}
	}
	if res == nil {
		return "none"
	}
	return strings.Join(res, ", ")
}

// Header is the effect table's header row.
const Header = "| method | against | accuracy | AUC | ΔDP | ΔEO | resolved |"

// WriteTable writes the header and one Markdown row per row.
func WriteTable(w io.Writer, rows []Row) {
	fmt.Fprintln(w, Header)
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|")
	for _, r := range rows {
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s |\n", r.Method, r.Against,
			Cell(r, Accuracy), Cell(r, AUC), Cell(r, DP), Cell(r, EO), ResolvedList(r))
	}
}

// CSVHeader begins the effects CSV: the commands replace only a file
// that begins with it (cli.ReplaceFile).
const CSVHeader = "method,against,measure,diff,lo,hi,resolved,resamples_used,seeds"

// CSV returns the effects CSV: one line per row and measure (points),
// after CSVHeader.
func CSV(rows []Row, seeds int) []byte {
	var b bytes.Buffer
	fmt.Fprintln(&b, CSVHeader)
	num := func(v float64) string {
		if math.IsNaN(v) {
			return ""
		}
		return fmt.Sprintf("%.4f", 100*v)
	}
	for _, r := range rows {
		for k := range NumMeasures {
			iv := r.Diff[k]
			fmt.Fprintf(&b, "%q,%q,%s,%s,%s,%s,%t,%d,%d\n", r.Method, r.Against, Keys[k], num(iv.Point), num(iv.Lo), num(iv.Hi), r.Resolved(k), iv.Used, seeds)
		}
	}
	return b.Bytes()
}
