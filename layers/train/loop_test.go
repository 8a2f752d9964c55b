package train

import (
	"context"
	"errors"
	"testing"

	"github.com/fairmp/fairmp/internal/problem"
	"github.com/fairmp/fairmp/layers"
	"github.com/fairmp/fairmp/metrics"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// scripted returns a Loop whose epochs return hist's statistics in turn
// and write the epoch's number into its one parameter, so the parameters
// left at the end say which epoch was selected.
func scripted(t *testing.T, hist []EpochStats) (*Loop, *G.Node) {
	t.Helper()
	g := G.NewGraph()
	w := G.NewVector(g, tensor.Float64, G.WithShape(1), G.WithName("w"), G.WithValue(tensor.New(tensor.WithShape(1), tensor.WithBacking([]float64{0}))))
	l := &Loop{
		Epoch: func(e int) (EpochStats, error) {
			w.Value().Data().([]float64)[0] = float64(e)
			st := hist[e-1]
			st.Epoch = e
			return st, nil
		},
		Params: G.Nodes{w},
		Labels: []int{0, 1}, Val: []int{0, 1}, Classes: 2,
	}
	return l, w
}

// criteriaHistory: every criterion has its best epoch elsewhere —
// accuracy 4, AUC 2, loss 3, the custom criterion (lowest ΔDP) 1, last 6.
var criteriaHistory = []EpochStats{
	{ValAcc: 0.50, ValAUC: 0.60, ValLoss: 0.70, ValDP: 0.05},
	{ValAcc: 0.60, ValAUC: 0.90, ValLoss: 0.65, ValDP: 0.20},
	{ValAcc: 0.70, ValAUC: 0.80, ValLoss: 0.50, ValDP: 0.25},
	{ValAcc: 0.80, ValAUC: 0.70, ValLoss: 0.60, ValDP: 0.10},
	{ValAcc: 0.75, ValAUC: 0.85, ValLoss: 0.55, ValDP: 0.40},
	{ValAcc: 0.78, ValAUC: 0.88, ValLoss: 0.52, ValDP: 0.30},
}

func lowestDP(st EpochStats) float64 { return -st.ValDP }

func TestLoopEachCriterionPicksItsEpoch(t *testing.T) {
	for _, c := range []struct {
		sel        Selection
		best, kept int
	}{
		{SelectBestVal, 4, 4}, {SelectValAUC, 2, 2}, {SelectValLoss, 3, 3},
		{SelectLast, 4, 6}, // the reported best is validation accuracy's
		{SelectCustom, 1, 1},
	} {
		t.Run(c.sel.String(), func(t *testing.T) {
			l, w := scripted(t, criteriaHistory)
			cfg := DefaultConfig()
			cfg.Epochs, cfg.Select = len(criteriaHistory), c.sel
			if c.sel == SelectCustom {
				cfg.Criterion = lowestDP
			}
			require.NoError(t, cfg.Validate())
			res, err := l.Run(context.Background(), cfg)
			require.NoError(t, err)
			assert.Equal(t, c.best, res.Best.Epoch, "best epoch")
			assert.Equal(t, float64(c.kept), w.Value().Data().([]float64)[0], "parameters left")
			assert.Equal(t, []float64{float64(c.best)}, res.BestParams[0].Data(), "BestParams")
			assert.Equal(t, []float64{6}, res.LastParams[0].Data(), "LastParams")
			assert.True(t, res.History[c.best-1].Best)
			assert.False(t, res.Stopped)
			assert.Equal(t, c.sel, res.Selected)
		})
	}
}

// TestLoopPatienceCountsFromTheCriterionsBest: with Patience 2 each run
// stops two epochs after its own criterion's best.
func TestLoopPatienceCountsFromTheCriterionsBest(t *testing.T) {
	for _, c := range []struct {
		sel           Selection
		epochs, after int
	}{
		{SelectBestVal, 6, 0}, {SelectValAUC, 4, 0}, {SelectValLoss, 5, 0}, {SelectLast, 6, 0}, {SelectCustom, 3, 0},
		// After SelectAfter 1 the lowest ΔDP is epoch 4's: stop at 6.
		{SelectCustom, 6, 1},
	} {
		l, w := scripted(t, criteriaHistory)
		cfg := DefaultConfig()
		cfg.Epochs, cfg.Select, cfg.Patience, cfg.SelectAfter = len(criteriaHistory), c.sel, 2, c.after
		if c.sel == SelectCustom {
			cfg.Criterion = lowestDP
		}
		res, err := l.Run(context.Background(), cfg)
		require.NoError(t, err)
		assert.Equal(t, c.epochs, res.Epochs, "%v after %d: epochs run", c.sel, c.after)
		assert.True(t, res.Stopped, "%v after %d", c.sel, c.after)
		assert.Equal(t, c.epochs-2, res.Best.Epoch, "%v after %d: best epoch", c.sel, c.after)
		if c.sel != SelectLast {
			assert.Equal(t, float64(c.epochs-2), w.Value().Data().([]float64)[0], "%v after %d: parameters left", c.sel, c.after)
		}
	}
}

// TestLoopTiesAndNaN: the first best epoch wins a tie, and a NaN
// criterion is never the best (all NaN: the last epoch).
func TestLoopTiesAndNaN(t *testing.T) {
	l, _ := scripted(t, []EpochStats{{ValAUC: 0.7}, {ValAUC: 0.8}, {ValAUC: 0.8}})
	cfg := DefaultConfig()
	cfg.Epochs, cfg.Select = 3, SelectValAUC
	res, err := l.Run(context.Background(), cfg)
	require.NoError(t, err)
	assert.Equal(t, 2, res.Best.Epoch)

	nan := func(EpochStats) float64 { return 0 * (1 / zero()) }
	l, w := scripted(t, make([]EpochStats, 3))
	cfg.Select, cfg.Criterion = SelectCustom, nan
	res, err = l.Run(context.Background(), cfg)
	require.NoError(t, err)
	assert.Equal(t, 3, res.Best.Epoch)
	assert.Equal(t, 3.0, w.Value().Data().([]float64)[0])
}

func zero() float64 { return 0 }

func TestSelectionValidateAndParse(t *testing.T) {
	cfg := DefaultConfig()
	assert.Equal(t, SelectBestVal, cfg.Select, "the default stays validation accuracy")
	cfg.Select = 9
	assert.ErrorContains(t, cfg.Validate(), "Select = 9, want SelectBestVal (validation accuracy), SelectValAUC, SelectValLoss, SelectLast or SelectCustom")
	cfg.Select = SelectCustom
	assert.ErrorContains(t, cfg.Validate(), "Criterion is nil")
	cfg.Select, cfg.Criterion = SelectValLoss, lowestDP
	assert.ErrorContains(t, cfg.Validate(), "Criterion is set and Select is val-loss")

	assert.Equal(t, []string{"acc", "auc", "loss", "last"}, SelectionWords())
	for _, w := range SelectionWords() {
		s, err := ParseSelection(w)
		require.NoError(t, err)
		assert.Equal(t, w, s.Word())
	}
	for word, want := range map[string]Selection{"acc": SelectBestVal, "best-val": SelectBestVal, "auc": SelectValAUC, "loss": SelectValLoss, "last": SelectLast} {
		got, err := ParseSelection(word)
		require.NoError(t, err, word)
		assert.Equal(t, want, got, word)
	}
	for _, word := range []string{"custom", "AUC", ""} {
		_, err := ParseSelection(word)
		assert.EqualError(t, err, `selection "`+word+`", want one of acc, auc, loss, last`)
	}
}

func TestLoopErrors(t *testing.T) {
	l, _ := scripted(t, criteriaHistory)
	boom := errors.New("boom")
	cfg := DefaultConfig()
	cfg.Epochs = 3
	cfg.OnEpoch = func(st EpochStats) error {
		if st.Epoch == 2 {
			return boom
		}
		return nil
	}
	_, err := l.Run(context.Background(), cfg)
	assert.ErrorIs(t, err, boom)
	assert.EqualError(t, err, "epoch 2: OnEpoch: boom")

	l.Epoch = func(int) (EpochStats, error) { return EpochStats{}, boom }
	_, err = l.Run(context.Background(), DefaultConfig())
	assert.Equal(t, boom, err, "Epoch's error as it is")

	// Selection by AUC with one class among the validation nodes.
	l, _ = scripted(t, criteriaHistory)
	l.Labels, l.Val = []int{0, 0, 1}, []int{0, 1}
	cfg = DefaultConfig()
	cfg.Select = SelectValAUC
	_, err = l.Run(context.Background(), cfg)
	assert.ErrorIs(t, err, ErrUndefinedSelection)
	assert.ErrorContains(t, err, "none of the 2 validation nodes is of class 1")
}

// TestSelectValAUCDiffersFromAccuracy: on a tiny graph (40 nodes, 10 of
// them for validation) one GCN run selected by validation accuracy keeps
// epoch 23 (AUC 0.84) and the same run selected by AUC keeps epoch 30
// (AUC 0.96). The runs train alike (the same history but for the best
// flags), and the model keeps the AUC's epoch.
func TestSelectValAUCDiffersFromAccuracy(t *testing.T) {
	p := problem.New(t, 1, 40, 4, 2, 80, 0.7)
	fit := func(sel Selection) (*Result, layers.Model, *Task) {
		task := newTask(t, p, tensor.Float64, layers.NewPhase())
		c := layers.DefaultGCNConfig(p.D, p.C)
		c.Hidden, c.Seed = 8, 1
		m, err := layers.NewGCN(task.Graph, p.Graph, c, task.Phase)
		require.NoError(t, err)
		cfg := fastTrain(30)
		cfg.Select = sel
		res, err := Fit(context.Background(), m, task, cfg)
		require.NoError(t, err)
		return res, m, task
	}
	byAcc, _, _ := fit(SelectBestVal)
	byAUC, m, task := fit(SelectValAUC)
	assert.Equal(t, 23, byAcc.Best.Epoch)
	assert.Equal(t, 30, byAUC.Best.Epoch)
	assert.InDelta(t, 0.84, byAUC.History[23-1].ValAUC, 1e-12, "the AUC of accuracy's epoch")
	assert.InDelta(t, 0.96, byAUC.Best.ValAUC, 1e-12)
	for e := range byAcc.History {
		a, b := byAcc.History[e], byAUC.History[e]
		assert.Zero(t, a.ValAUC, "epoch %d: the AUC is computed only when the selection reads it", e+1)
		a.Best, b.Best, a.StepTime, b.StepTime, a.EvalTime, b.EvalTime, b.ValAUC = false, false, 0, 0, 0, 0, 0
		assert.Equal(t, a, b, "epoch %d", e+1)
		assert.LessOrEqual(t, byAUC.History[e].ValAUC, byAUC.Best.ValAUC, "epoch %d", e+1)
	}
	pred, err := Predict(m, task, p.Val)
	require.NoError(t, err)
	y := make([]int, len(p.Val))
	for k, i := range p.Val {
		y[k] = p.Labels[i]
	}
	auc, err := metrics.AUC(pred.Column(1), y)
	require.NoError(t, err)
	assert.InDelta(t, byAUC.Best.ValAUC, auc, 1e-12, "the model holds the AUC's epoch")
}
