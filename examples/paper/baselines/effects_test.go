package main

import (
	"bytes"
	"math"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fairmp/fairmp/layers/train"
	"github.com/fairmp/fairmp/metrics"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// probsOf returns n × 2 probabilities from P(y = 1).
func probsOf(p1 []float64) []float64 {
	out := make([]float64, 0, 2*len(p1))
	for _, p := range p1 {
		out = append(out, 1-p, p)
	}
	return out
}

// The toy case by hand. Groups 0 (nodes 0–3) and 1 (nodes 4–7), two
// positives in each. The backbone misses node 5 (a positive of group 1
// scored 0.4): accuracy 7/8, selection rates 1/2 and 1/4 (ΔDP 1/4),
// true-positive rates 1 and 1/2 (ΔEO 1/2), AUC 15/16 (node 5 ranks
// below the negative 0.45). The method scores node 5 at 0.7: every
// node right, both groups select 1/2 and find every positive, AUC 1.
// On seed 1 method − backbone is +1/8, +1/16, −1/4, −1/2; on seed 2 the
// method is the backbone (0); the seed mean is half of seed 1's.
func TestPairedDiffsHandComputed(t *testing.T) {
	labels := []int{1, 1, 0, 0, 1, 1, 0, 0}
	sens := []int{0, 0, 0, 0, 1, 1, 1, 1}
	test := []int{0, 1, 2, 3, 4, 5, 6, 7}
	back := probsOf([]float64{.9, .8, .3, .2, .6, .4, .45, .1})
	meth := probsOf([]float64{.9, .8, .3, .2, .6, .7, .45, .1})
	runs := [][]float64{back, meth, back, back}
	ivs, err := pairedDiffs(runs, []pairing{{a: []int{1}, b: []int{0}}, {a: []int{1, 3}, b: []int{0, 2}}}, 2, labels, sens, test, metrics.DefaultBootstrapConfig())
	require.NoError(t, err)
	want := [numEffects]float64{effAccuracy: 1.0 / 8, effAUC: 1.0 / 16, effDP: -1.0 / 4, effEO: -1.0 / 2}
	for k := range numEffects {
		assert.InDelta(t, want[k], ivs[0][k].Point, 1e-12, effectTitles[k])
		assert.InDelta(t, want[k]/2, ivs[1][k].Point, 1e-12, "seed mean, %s", effectTitles[k])
		for _, iv := range []metrics.Interval{ivs[0][k], ivs[1][k]} {
			assert.LessOrEqual(t, iv.Lo, iv.Point, effectTitles[k])
			assert.GreaterOrEqual(t, iv.Hi, iv.Point, effectTitles[k])
		}
	}
	// Two nodes per group and class: the resamples that draw no
	// positive of a group have no ΔEO and are skipped.
	assert.Less(t, ivs[0][effEO].Used, 1000)
	assert.Equal(t, 1000, ivs[0][effAccuracy].Used)
}

// measure with unit weights is metrics.Evaluate on the test nodes, and
// with a resample's weights it is metrics.Evaluate on the multiset
// written out node by node: the bootstrap resamples the statistic the
// table's points are.
func TestMeasureIsEvaluate(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	for trial := range 20 {
		n := 30 + rng.Intn(40)
		labels, sens, p1 := make([]int, n), make([]int, n), make([]float64, n)
		for i := range n {
			labels[i], sens[i] = rng.Intn(2), rng.Intn(2)
			p1[i] = math.Round(10*rng.Float64()) / 10 // ties for the AUC
			if i%11 == 5 {
				labels[i] = -1
			}
		}
		labels[0], labels[1], labels[2], labels[3] = 1, 1, 0, 0
		sens[0], sens[1], sens[2], sens[3] = 0, 1, 0, 1
		var test []int
		for i := range n {
			if i%3 != 2 {
				test = append(test, i)
			}
		}
		s, err := newTestSample(labels, sens, test)
		require.NoError(t, err)
		run := s.score(probsOf(p1), metrics.DefaultOptions())
		w := make([]int, len(s.nodes))
		for k := range w {
			w[k] = 1
		}
		check := func(w []int, probs []float64, labels, sens, nodes []int, what string) {
			t.Helper()
			opt := metrics.DefaultOptions()
			opt.AllowUndefined = true
			r, err := metrics.Evaluate(probs, 2, labels, sens, nodes, opt)
			require.NoError(t, err)
			m := s.measure(run, w)
			for k, v := range [numEffects]float64{r.Accuracy, r.AUC, r.DemographicParity, r.EqualOpportunity} {
				if math.IsNaN(v) {
					assert.False(t, m.ok[k], "trial %d %s %s", trial, what, effectTitles[k])
					continue
				}
				require.True(t, m.ok[k], "trial %d %s %s", trial, what, effectTitles[k])
				assert.InDelta(t, v, m.v[k], 1e-12, "trial %d %s %s", trial, what, effectTitles[k])
			}
		}
		check(w, probsOf(p1), labels, sens, test, "unit weights")
		// A stratified resample's weights, written out as a new data set.
		clear(w)
		for _, m := range s.members {
			for range m {
				w[m[rng.Intn(len(m))]]++
			}
		}
		var el, es []int
		var ep []float64
		for k, i := range s.nodes {
			for range w[k] {
				el, es, ep = append(el, labels[i]), append(es, sens[i]), append(ep, p1[i])
			}
		}
		check(w, probsOf(ep), el, es, nil, "resample")
	}
}

// A method forced to differ from its backbone (it selects every node of
// group 0 and none of group 1) is resolved on ΔDP; a method identical to
// its backbone differs by exactly 0 on every measure, in every resample,
// and is resolved on none.
func TestPairedDiffsResolvedOnlyWhereTheIntervalExcludesZero(t *testing.T) {
	rng := rand.New(rand.NewSource(5))
	n := 400
	labels, sens, back, forced := make([]int, n), make([]int, n), make([]float64, n), make([]float64, n)
	for i := range n {
		labels[i], sens[i] = rng.Intn(2), i%2
		back[i] = 0.3 + 0.4*float64(labels[i]) + 0.2*(rng.Float64()-0.5) // right on most nodes, either group
		forced[i] = 0.9 * float64(1-sens[i])
	}
	test := make([]int, n)
	for i := range test {
		test[i] = i
	}
	runs := [][]float64{probsOf(back), probsOf(forced), probsOf(back)}
	ivs, err := pairedDiffs(runs, []pairing{{a: []int{1}, b: []int{0}}, {a: []int{2}, b: []int{0}}}, 2, labels, sens, test, metrics.DefaultBootstrapConfig())
	require.NoError(t, err)
	forcedRow, same := effectRow{method: "forced", diff: ivs[0]}, effectRow{method: "same", diff: ivs[1]}
	assert.True(t, forcedRow.resolved(effDP), "ΔDP %v", ivs[0][effDP])
	assert.Greater(t, ivs[0][effDP].Lo, 0.5)
	assert.True(t, forcedRow.resolved(effAccuracy), "accuracy %v", ivs[0][effAccuracy])
	for k := range numEffects {
		assert.Equal(t, metrics.Interval{Used: 1000}, ivs[1][k], effectTitles[k])
		assert.False(t, same.resolved(k), effectTitles[k])
	}
	// The boundary: an interval that touches 0 is not resolved.
	assert.False(t, effectRow{diff: [numEffects]metrics.Interval{{Point: 0.1, Lo: 0, Hi: 0.2}}}.resolved(effAccuracy))
	assert.True(t, effectRow{diff: [numEffects]metrics.Interval{{Point: -0.1, Lo: -0.2, Hi: -0.01}}}.resolved(effAccuracy))
	assert.False(t, effectRow{diff: [numEffects]metrics.Interval{{Point: math.NaN(), Lo: math.NaN(), Hi: math.NaN()}}}.resolved(effAccuracy))

	_, err = pairedDiffs(runs, nil, 3, labels, sens, test, metrics.DefaultBootstrapConfig())
	assert.ErrorContains(t, err, "3 classes")
	one := make([]int, n)
	_, err = pairedDiffs(runs, nil, 2, labels, one, test, metrics.DefaultBootstrapConfig())
	assert.ErrorContains(t, err, "1 group(s)")
}

// The regulariser at weight 0 trains exactly as the plain backbone
// (fairtrain.RegularizerConfig's doc): its effect is 0 on every measure,
// with the interval [0, 0], and resolved on none. The table has its
// columns, a row for every method but plain and FMP's decomposition,
// and -out writes the same rows to the effects CSV.
func TestEffectTable(t *testing.T) {
	dir := t.TempDir()
	var out, log bytes.Buffer
	require.NoError(t, run([]string{"-n", "300", "-seeds", "2", "-epochs", "20", "-methods", "fmp,thresholds,regularizer", "-method-weights", "regularizer=0", "-out", dir}, &out, &log))
	got := out.String()
	assert.Contains(t, got, "| plain |", "plain runs though -methods leaves it out: it is every method's backbone")
	_, table, ok := strings.Cut(got, "Effect net of the backbone")
	require.True(t, ok, got)
	lines := strings.Split(table, "\n")
	var rows []string
	for _, l := range lines {
		if strings.HasPrefix(l, "| ") {
			rows = append(rows, l)
		}
	}
	require.Len(t, rows, 6, table) // header, fmp, its two parts, thresholds, regularizer
	assert.Equal(t, "| method | against | accuracy | AUC | ΔDP | ΔEO | resolved |", rows[0])
	for _, r := range rows {
		assert.Len(t, strings.Split(r, " | "), 7, r)
	}
	assert.True(t, strings.HasPrefix(rows[1], "| fmp | plain | "), rows[1])
	assert.True(t, strings.HasPrefix(rows[2], "| "+rowPropagation+" | plain | "), rows[2])
	assert.True(t, strings.HasPrefix(rows[3], "| "+rowFairStep+" | "+rowPropagation+" | "), rows[3])
	assert.True(t, strings.HasPrefix(rows[4], "| thresholds | plain | "), rows[4])
	zero := "+0.00 [+0.00, +0.00]"
	assert.Equal(t, "| regularizer | plain | "+strings.Repeat(zero+" | ", 4)+"none |", rows[5])

	b, err := os.ReadFile(filepath.Join(dir, "synthetic_gcn_effects.csv"))
	require.NoError(t, err)
	csv := strings.Split(strings.TrimSpace(string(b)), "\n")
	require.Len(t, csv, 1+5*numEffects)
	assert.Equal(t, effectsCSVHeader, csv[0])
	assert.Equal(t, `"regularizer","plain",dp,0.0000,0.0000,0.0000,false,1000,2`, csv[1+4*numEffects+effDP])
}

// A merged FMP run saved before FMP kept propagation alone has no
// decomposition: the rows are left out and the note says why.
func TestEffectsWithoutPropagationRun(t *testing.T) {
	p, err := load(&options{dataset: "synthetic", synthN: 200})
	require.NoError(t, err)
	n := p.ds.N()
	p1 := make([]float64, n)
	for i := range p1 {
		p1[i] = 0.2 + 0.6*float64(p.ds.Labels[i])
	}
	pr := probsOf(p1)
	o := &options{methods: []string{"plain", "fmp"}, backbone: "gcn", seeds: 1}
	rows, note, err := effects(o, p, [][]outcome{{{method: "plain", probs: pr}, {method: "fmp", probs: pr}}})
	require.NoError(t, err)
	require.Len(t, rows, 1)
	assert.Equal(t, "fmp", rows[0].method)
	assert.Contains(t, note, "run FMP again")
	var w bytes.Buffer
	effectTable(&w, o, rows, note)
	assert.Contains(t, w.String(), "FMP's decomposition is left out")
}

func TestMethodWeightsFlag(t *testing.T) {
	var out, log bytes.Buffer
	for args, want := range map[string]string{
		"regularizer":                 "want NAME=W",
		"regularizer=x":               `the weight "x" is not a number`,
		"nifty=1":                     "nifty is not among -methods",
		"regularizer=-1":              "regularizer=-1",
		"regularizer=1,regularizer=2": "regularizer given twice",
		"fairgnn=1":                   "-fairgnn-beta",
		"thresholds=1":                "has no weight",
	} {
		err := run([]string{"-methods", "regularizer,fairgnn,thresholds", "-method-weights", args}, &out, &log)
		assert.ErrorContains(t, err, want, args)
	}
	o, err := parseFlags([]string{"-methods", "regularizer", "-method-weights", "regularizer=0.5"}, &log)
	require.NoError(t, err)
	assert.Equal(t, []string{"plain", "regularizer"}, o.methods)
	assert.Contains(t, protocol(o), "-method-weights regularizer=0.5")
	o, err = parseFlags(nil, &log)
	require.NoError(t, err)
	assert.NotContains(t, protocol(o), "-method-weights", "runs saved before the flag still merge")
}

// TestSelectFlag: -select chooses the epoch every training keeps, is part
// of the saved runs' protocol when not the default (so -merge refuses to
// mix selections), and names the choices when wrong.
func TestSelectFlag(t *testing.T) {
	var log bytes.Buffer
	o, err := parseFlags([]string{"-select", "auc"}, &log)
	require.NoError(t, err)
	assert.Equal(t, train.SelectValAUC, trainConfig(o).Select)
	assert.Contains(t, protocol(o), "-select auc")
	o, err = parseFlags(nil, &log)
	require.NoError(t, err)
	assert.Equal(t, train.SelectBestVal, trainConfig(o).Select)
	assert.NotContains(t, protocol(o), "-select", "runs saved before the flag still merge")
	_, err = parseFlags([]string{"-select", "f1"}, &log)
	assert.ErrorContains(t, err, `-select: selection "f1", want one of acc, auc, loss, last`)
}
