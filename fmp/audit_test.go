package fmp

import (
	"math"
	"math/rand"
	"testing"

	"github.com/fairmp/fairmp/graph"
	"github.com/fairmp/fairmp/internal/testutil"
	"github.com/stretchr/testify/require"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// TestAuditReport checks every field of the report against the naive
// implementation: the output equals the naive FMP, the baseline equals
// the naive λf = 0 run, influence is their difference, the dual is the
// naive final dual, group means and shifts follow from the softmax; and
// λf = 0 gives exactly zero influence. float32 agrees with float64.
func TestAuditReport(t *testing.T) {
	rng := rand.New(rand.NewSource(21))
	n, c := 25, 3
	gr := randomGraph(t, rng, n, 50)
	adj := graph.NormalizedAdjacency(gr)
	a := naiveNormAdj(gr)
	sens := randSens(rng, n, 3, 0.2)
	rows, d := naiveDelta(sens, false)
	xv := testutil.RandSlice(rng, n*c, -2, 2)
	var r64 *AuditReport
	for _, dt := range testutil.Dtypes {
		cfg := DefaultConfig()
		cfg.LambdaF, cfg.K = 0.7, 3
		rep, err := Explain(testutil.Tensor(dt, xv, n, c), adj, sens, cfg)
		require.NoError(t, err)
		if dt == tensor.Float32 {
			testutil.AllClose(t, "f32 influence", rep.Influence, r64.Influence, 1e-5, 1e-4)
			continue
		}
		r64 = rep
		l, _ := New(adj, sens, cfg)
		wantF, us := naiveFMP(a, xv, n, c, d, rows, cfg, l.groupContrast().NormSq(), nil)
		cfg0 := cfg
		cfg0.LambdaF = 0
		wantB, _ := naiveFMP(a, xv, n, c, d, rows, cfg0, l.groupContrast().NormSq(), nil)
		testutil.AllClose(t, "output", rep.Output, wantF, 1e-10, 1e-9)
		testutil.AllClose(t, "baseline", rep.Baseline, wantB, 1e-10, 1e-9)
		testutil.AllClose(t, "dual", rep.Dual, us[len(us)-1], 1e-10, 1e-9)
		infl := make([]float64, n*c)
		maxAbs := 0.0
		for i := range infl {
			infl[i] = wantF[i] - wantB[i]
			maxAbs = math.Max(maxAbs, math.Abs(infl[i]))
		}
		testutil.AllClose(t, "influence", rep.Influence, infl, 1e-10, 1e-9)
		if !testutil.Close(rep.MaxAbsInfluence, maxAbs, 1e-10, 1e-9) || maxAbs < 1e-3 {
			t.Errorf("MaxAbsInfluence %v, want %v (> 1e-3)", rep.MaxAbsInfluence, maxAbs)
		}
		gm, gb := groupMeans(wantF, n, c, sens, 3), groupMeans(wantB, n, c, sens, 3)
		for g := 0; g < 3; g++ {
			testutil.AllClose(t, "group mean", rep.GroupMean[g], gm[g], 1e-10, 1e-9)
			testutil.AllClose(t, "group mean baseline", rep.GroupMeanBaseline[g], gb[g], 1e-10, 1e-9)
			for j := 0; j < c; j++ {
				if !testutil.Close(rep.GroupShift[g][j], gm[g][j]-gb[g][j], 1e-10, 1e-9) {
					t.Errorf("shift[%d][%d] = %v, want %v", g, j, rep.GroupShift[g][j], gm[g][j]-gb[g][j])
				}
			}
		}
		if !(rep.MaxGap[1] < rep.MaxGapBaseline[1]) {
			t.Errorf("class-1 gap %v not below baseline %v", rep.MaxGap[1], rep.MaxGapBaseline[1])
		}
		testutil.AllClose(t, "node 3 influence", rep.NodeInfluence(3), infl[9:12], 1e-10, 1e-9)
		// λf = 0: zero influence, exactly.
		rep0, err := Explain(testutil.Tensor(dt, xv, n, c), adj, sens, cfg0)
		require.NoError(t, err)
		for i, v := range rep0.Influence {
			if v != 0 {
				t.Fatalf("λf = 0: influence[%d] = %v, want exactly 0", i, v)
			}
		}
	}
}

// TestforwardAuditOutputIsForward: ForwardAudit's Output is the same
// value Forward gives, and Report refuses to run before the graph ran.
func TestForwardAuditOutputIsForward(t *testing.T) {
	rng := rand.New(rand.NewSource(22))
	n, c := 12, 2
	adj := graph.NormalizedAdjacency(randomGraph(t, rng, n, 20))
	sens := randSens(rng, n, 2, 0)
	xv := testutil.RandSlice(rng, n*c, -1, 1)
	l, err := New(adj, sens, DefaultConfig())
	require.NoError(t, err)
	l.SetPhase(nil)
	g := G.NewGraph()
	x := G.NewMatrix(g, tensor.Float64, G.WithShape(n, c), G.WithName("X"), G.WithValue(testutil.Tensor(tensor.Float64, xv, n, c)))
	a, err := l.forwardAudit(x)
	require.NoError(t, err)
	if _, err := a.Report(); err == nil {
		t.Error("Report before running returned no error")
	}
	out, err := l.Forward(x)
	require.NoError(t, err)
	var ov G.Value
	G.Read(out, &ov)
	testutil.Run(t, g)
	rep, err := a.Report()
	require.NoError(t, err)
	testutil.AllClose(t, "audit output vs Forward", rep.Output, testutil.ToF64(ov), 0, 0)
}
