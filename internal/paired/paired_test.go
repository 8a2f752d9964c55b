package paired

import (
	"bytes"
	"math"
	"math/rand"
	"strings"
	"testing"

	"github.com/fairmp/fairmp/internal/testutil"
	"github.com/fairmp/fairmp/metrics"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

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
	back := testutil.BinaryProbs([]float64{.9, .8, .3, .2, .6, .4, .45, .1})
	meth := testutil.BinaryProbs([]float64{.9, .8, .3, .2, .6, .7, .45, .1})
	runs := [][]float64{back, meth, back, back}
	ivs, err := Diffs(runs, []Pairing{{A: []int{1}, B: []int{0}}, {A: []int{1, 3}, B: []int{0, 2}}}, 2, labels, sens, test, metrics.DefaultBootstrapConfig())
	require.NoError(t, err)
	want := [NumMeasures]float64{Accuracy: 1.0 / 8, AUC: 1.0 / 16, DP: -1.0 / 4, EO: -1.0 / 2}
	for k := range NumMeasures {
		assert.InDelta(t, want[k], ivs[0][k].Point, 1e-12, Titles[k])
		assert.InDelta(t, want[k]/2, ivs[1][k].Point, 1e-12, "seed mean, %s", Titles[k])
		for _, iv := range []metrics.Interval{ivs[0][k], ivs[1][k]} {
			assert.LessOrEqual(t, iv.Lo, iv.Point, Titles[k])
			assert.GreaterOrEqual(t, iv.Hi, iv.Point, Titles[k])
		}
	}
	// Two nodes per group and class: the resamples that draw no
	// positive of a group have no ΔEO and are skipped.
	assert.Less(t, ivs[0][EO].Used, 1000)
	assert.Equal(t, 1000, ivs[0][Accuracy].Used)
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
		run := s.score(testutil.BinaryProbs(p1), metrics.DefaultOptions())
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
			for k, v := range [NumMeasures]float64{r.Accuracy, r.AUC, r.DemographicParity, r.EqualOpportunity} {
				if math.IsNaN(v) {
					assert.False(t, m.ok[k], "trial %d %s %s", trial, what, Titles[k])
					continue
				}
				require.True(t, m.ok[k], "trial %d %s %s", trial, what, Titles[k])
				assert.InDelta(t, v, m.v[k], 1e-12, "trial %d %s %s", trial, what, Titles[k])
			}
		}
		check(w, testutil.BinaryProbs(p1), labels, sens, test, "unit weights")
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
		check(w, testutil.BinaryProbs(ep), el, es, nil, "resample")
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
	runs := [][]float64{testutil.BinaryProbs(back), testutil.BinaryProbs(forced), testutil.BinaryProbs(back)}
	ivs, err := Diffs(runs, []Pairing{{A: []int{1}, B: []int{0}}, {A: []int{2}, B: []int{0}}}, 2, labels, sens, test, metrics.DefaultBootstrapConfig())
	require.NoError(t, err)
	forcedRow, same := Row{Method: "forced", Diff: ivs[0]}, Row{Method: "same", Diff: ivs[1]}
	assert.True(t, forcedRow.Resolved(DP), "ΔDP %v", ivs[0][DP])
	assert.Greater(t, ivs[0][DP].Lo, 0.5)
	assert.True(t, forcedRow.Resolved(Accuracy), "accuracy %v", ivs[0][Accuracy])
	for k := range NumMeasures {
		assert.Equal(t, metrics.Interval{Used: 1000}, ivs[1][k], Titles[k])
		assert.False(t, same.Resolved(k), Titles[k])
	}
	// The boundary: an interval that touches 0 is not resolved.
	assert.False(t, Row{Diff: [NumMeasures]metrics.Interval{{Point: 0.1, Lo: 0, Hi: 0.2}}}.Resolved(Accuracy))
	assert.True(t, Row{Diff: [NumMeasures]metrics.Interval{{Point: -0.1, Lo: -0.2, Hi: -0.01}}}.Resolved(Accuracy))
	assert.False(t, Row{Diff: [NumMeasures]metrics.Interval{{Point: math.NaN(), Lo: math.NaN(), Hi: math.NaN()}}}.Resolved(Accuracy))

	_, err = Diffs(runs, nil, 3, labels, sens, test, metrics.DefaultBootstrapConfig())
	assert.ErrorContains(t, err, "3 classes")
	one := make([]int, n)
	_, err = Diffs(runs, nil, 2, labels, one, test, metrics.DefaultBootstrapConfig())
	assert.ErrorContains(t, err, "1 group(s)")
}

// Three seeds by hand, on the toy of TestPairedDiffsHandComputed: the
// method beats its backbone on seed 1 (+1/8 accuracy, −1/4 ΔDP), is it
// on seed 2 (0), and on seed 3 its backbone is the better one (the
// method misses node 5, which that seed's backbone gets right: −1/8,
// +1/4). The seed mean is 0 on every measure; single seeds and a
// two-seed mean give the hand-computed differences.
func TestDiffsThreeSeedsByHand(t *testing.T) {
	labels := []int{1, 1, 0, 0, 1, 1, 0, 0}
	sens := []int{0, 0, 0, 0, 1, 1, 1, 1}
	test := []int{0, 1, 2, 3, 4, 5, 6, 7}
	miss := testutil.BinaryProbs([]float64{.9, .8, .3, .2, .6, .4, .45, .1}) // node 5 missed
	hit := testutil.BinaryProbs([]float64{.9, .8, .3, .2, .6, .7, .45, .1})  // every node right
	// runs: backbone 1, 2, 3, then method 1, 2, 3.
	runs := [][]float64{miss, miss, hit, hit, miss, miss}
	ivs, err := Diffs(runs, []Pairing{{A: []int{3, 4, 5}, B: []int{0, 1, 2}}, {A: []int{3, 4, 5}, B: []int{2, 0, 1}}}, 2, labels, sens, test, metrics.DefaultBootstrapConfig())
	require.NoError(t, err)
	for k := range NumMeasures {
		assert.InDelta(t, 0, ivs[0][k].Point, 1e-12, Titles[k])
	}
	// Paired with the backbones of other seeds (3, 1, 2): hit − hit,
	// miss − miss, miss − miss, 0 as well; pairing a seed with itself
	// below is what moves the mean.
	for k := range NumMeasures {
		assert.InDelta(t, 0, ivs[1][k].Point, 1e-12, Titles[k])
	}
	one, err := Diffs(runs, []Pairing{{A: []int{3}, B: []int{0}}, {A: []int{5}, B: []int{2}}, {A: []int{3, 5}, B: []int{0, 0}}}, 2, labels, sens, test, metrics.DefaultBootstrapConfig())
	require.NoError(t, err)
	want := [NumMeasures]float64{Accuracy: 1.0 / 8, AUC: 1.0 / 16, DP: -1.0 / 4, EO: -1.0 / 2}
	for k := range NumMeasures {
		assert.InDelta(t, want[k], one[0][k].Point, 1e-12, "seed 1 %s", Titles[k])
		assert.InDelta(t, -want[k], one[1][k].Point, 1e-12, "seed 3 %s", Titles[k])
		// (hit − miss + miss − miss) / 2
		assert.InDelta(t, want[k]/2, one[2][k].Point, 1e-12, "mean %s", Titles[k])
	}

	_, err = Diffs(runs, []Pairing{{A: []int{3, 4}, B: []int{0}}}, 2, labels, sens, test, metrics.DefaultBootstrapConfig())
	assert.ErrorContains(t, err, "2 runs against 1")
	_, err = Diffs(runs, []Pairing{{A: []int{6}, B: []int{0}}}, 2, labels, sens, test, metrics.DefaultBootstrapConfig())
	assert.ErrorContains(t, err, "run 6, want 0 to 5")
}

// The table and the CSV: a resolved cell is bold and named in the last
// column, an unresolved one is not, an undefined one is n/a.
func TestTableAndCSV(t *testing.T) {
	nan := math.NaN()
	rows := []Row{
		{Method: "fmp", Against: "plain", Diff: [NumMeasures]metrics.Interval{
			{Point: -0.004, Lo: -0.01, Hi: 0.002, Used: 1000},
			{Point: 0.001, Lo: -0.003, Hi: 0.005, Used: 1000},
			{Point: -0.0553, Lo: -0.0666, Hi: -0.044, Used: 1000},
			{Point: nan, Lo: nan, Hi: nan},
		}},
	}
	var b bytes.Buffer
	WriteTable(&b, rows)
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	require.Len(t, lines, 3)
	assert.Equal(t, Header, lines[0])
	assert.Equal(t, "| fmp | plain | -0.40 [-1.00, +0.20] | +0.10 [-0.30, +0.50] | **-5.53** [-6.66, -4.40] | n/a | ΔDP |", lines[2])
	csv := strings.Split(strings.TrimSpace(string(CSV(rows, 5))), "\n")
	require.Len(t, csv, 1+NumMeasures)
	assert.Equal(t, CSVHeader, csv[0])
	assert.Equal(t, `"fmp","plain",dp,-5.5300,-6.6600,-4.4000,true,1000,5`, csv[1+DP])
	assert.Equal(t, `"fmp","plain",eo,,,,false,0,5`, csv[1+EO])
	assert.Equal(t, "none", ResolvedList(Row{}))
}
