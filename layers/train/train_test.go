package train

import (
	"bytes"
	"context"
	"errors"
	"math"
	"runtime"
	"strings"
	"testing"

	"github.com/fairmp/fairmp/layers"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fairmp/fairmp/internal/problem"
	"github.com/fairmp/fairmp/internal/testutil"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

func trainMLP(t *testing.T, p *problem.Problem, dt tensor.Dtype, seed int64, cfg Config) (*layers.MLP, *Task, *Result) {
	t.Helper()
	task := newTask(t, p, dt, layers.NewPhase())
	mc := layers.DefaultMLPConfig(p.D, p.C)
	mc.Hidden, mc.Dtype, mc.Seed, mc.InputDropout = 16, dt, seed, 0.1
	m, err := layers.NewMLP(task.Graph, nil, mc, task.Phase)
	require.NoError(t, err)
	res, err := Fit(context.Background(), m, task, cfg)
	require.NoError(t, err)
	return m, task, res
}

func fastTrain(epochs int) Config {
	c := DefaultConfig()
	c.Epochs = epochs
	c.Adam.LR = 0.01
	return c
}

func TestTrainLossFalls(t *testing.T) {
	p := problem.New(t, 3, 200, 8, 2, 400, 0.8)
	for _, dt := range testutil.Dtypes {
		var buf bytes.Buffer
		cfg := fastTrain(100)
		cfg.LogEvery, cfg.Log = 25, &buf
		m, task, res := trainMLP(t, p, dt, 1, cfg)
		first, last := res.History[0], res.Last
		assert.Positive(t, last.StepTime, "%v: step time", dt)
		assert.Positive(t, last.EvalTime, "%v: evaluation time", dt)
		assert.Less(t, last.CE, 0.5*first.CE, "%v: training CE, want at least halved", dt)
		assert.GreaterOrEqual(t, res.Best.ValAcc, 0.85, "%v: best validation accuracy on a linearly separable problem", dt)
		assert.Equal(t, 4, strings.Count(buf.String(), "\n"), "%v: log lines:\n%s", dt, buf.String())
		// The model holds the best-validation parameters: Predict must
		// reproduce the best epoch's validation accuracy.
		pred, err := Predict(m, task, p.Val)
		require.NoError(t, err)
		assert.Equal(t, res.Best.ValAcc, pred.Accuracy(p.Labels), "%v: Predict's validation accuracy vs the best epoch's (%d)", dt, res.Best.Epoch)
		for k := range pred.Nodes {
			s := 0.0
			for c := 0; c < p.C; c++ {
				s += pred.Prob(k, c)
			}
			require.InDelta(t, 1, s, 1e-9, "probabilities of node %d", pred.Nodes[k])
		}
		assert.False(t, task.Phase.Training(), "phase left in training mode")
		// LastParams restores the last epoch.
		if err := SetParams(m, res.LastParams); err != nil {
			t.Fatal(err)
		}
		pred, _ = Predict(m, task, p.Val)
		assert.Equal(t, res.Last.ValAcc, pred.Accuracy(p.Labels), "%v: validation accuracy of LastParams vs the last epoch's", dt)
	}
}

func paramBits(m layers.Model) []uint64 {
	var out []uint64
	for _, n := range m.Learnables() {
		switch s := n.Value().Data().(type) {
		case []float64:
			for _, v := range s {
				out = append(out, math.Float64bits(v))
			}
		case []float32:
			for _, v := range s {
				out = append(out, uint64(math.Float32bits(v)))
			}
		}
	}
	return out
}

// TestTrainDeterministic trains twice with one seed and checks
// bit-identical parameters; the second problem is large enough for
// gonum's parallel matrix product and the parallel sparse product.
func TestTrainDeterministic(t *testing.T) {
	p := problem.New(t, 4, 120, 6, 3, 200, 0.5)
	big := problem.New(t, 40, 3000, 100, 2, 20000, 0.6)
	for _, dt := range testutil.Dtypes {
		cfg := fastTrain(5)
		cfg.Select = SelectLast
		build := func() layers.Model {
			task := newTask(t, big, dt, layers.NewPhase())
			c := layers.DefaultGCNConfig(big.D, big.C)
			c.Dtype = dt
			m, err := layers.NewGCN(task.Graph, big.Graph, c, task.Phase)
			require.NoError(t, err)
			if _, err := Fit(context.Background(), m, task, cfg); err != nil {
				t.Fatal(err)
			}
			return m
		}
		require.Equal(t, paramBits(build()), paramBits(build()), "%v GCN on 3000 nodes: same seed, different parameters", dt)
	}
	for _, dt := range testutil.Dtypes {
		cfg := fastTrain(30)
		cfg.Select = SelectLast
		a, _, _ := trainMLP(t, p, dt, 5, cfg)
		b, _, _ := trainMLP(t, p, dt, 5, cfg)
		c, _, _ := trainMLP(t, p, dt, 6, cfg)
		require.Equal(t, paramBits(a), paramBits(b), "%v: same seed, different parameters", dt)
		assert.NotEqual(t, paramBits(a), paramBits(c), "%v: seeds 5 and 6 gave identical parameters", dt)
	}
}

func TestTrainEarlyStopAndHooks(t *testing.T) {
	p := problem.New(t, 5, 80, 4, 2, 100, 0.5)
	cfg := fastTrain(500)
	cfg.Patience = 10
	_, _, res := trainMLP(t, p, tensor.Float64, 1, cfg)
	assert.True(t, res.Stopped, "early stopping")
	assert.Equal(t, res.Best.Epoch+10, res.Epochs, "epochs run with patience 10")
	cfg = fastTrain(50)
	calls := 0
	cfg.OnEpoch = func(s EpochStats) error {
		calls++
		if s.Epoch == 7 {
			return ErrStop
		}
		return nil
	}
	_, _, res = trainMLP(t, p, tensor.Float64, 1, cfg)
	assert.True(t, res.Stopped, "ErrStop at 7")
	assert.Equal(t, 7, res.Epochs, "epochs run after ErrStop at 7")
	assert.Equal(t, 7, calls, "OnEpoch calls")
	assert.Len(t, res.History, 7)
	boom := errors.New("boom")
	cfg.OnEpoch = func(EpochStats) error { return boom }
	task := newTask(t, p, tensor.Float64, nil)
	m, _ := layers.NewMLP(task.Graph, nil, layers.DefaultMLPConfig(p.D, p.C), nil)
	if _, err := Fit(context.Background(), m, task, cfg); !errors.Is(err, boom) {
		t.Errorf("OnEpoch error: got %v", err)
	}
}

// TestTrainExtraLoss checks that the extra term is added to the cost
// (reported, and its gradient used): a strong penalty on the logits'
// squares keeps them much smaller than plain training.
func TestTrainExtraLoss(t *testing.T) {
	p := problem.New(t, 6, 100, 5, 2, 100, 0.5)
	meanSq := func(extra bool) (float64, *Result) {
		task := newTask(t, p, tensor.Float64, nil)
		mc := layers.DefaultMLPConfig(p.D, p.C)
		mc.Dropout = 0
		m, err := layers.NewMLP(task.Graph, nil, mc, nil)
		require.NoError(t, err)
		z0 := modelLogits(t, m, task)
		cfg := fastTrain(60)
		cfg.Select = SelectLast
		if extra {
			cfg.ExtraLoss = func(z *G.Node) (*G.Node, error) {
				sq, err := G.Square(z)
				if err != nil {
					return nil, err
				}
				s, err := G.Mean(sq)
				if err != nil {
					return nil, err
				}
				return G.Mul(s, G.NewConstant(10.0))
			}
		}
		res, err := Fit(context.Background(), m, task, cfg)
		require.NoError(t, err)
		if extra {
			want := 0.0
			for _, v := range z0 {
				want += v * v
			}
			want = 10 * want / float64(len(z0))
			assert.InDelta(t, want, res.History[0].Extra, 1e-9*(1+math.Abs(want)), "epoch 1 extra loss")
			assert.Equal(t, res.History[0].CE+res.History[0].Extra, res.History[0].Loss, "Loss = CE + Extra")
		}
		z := modelLogits(t, m, task)
		s := 0.0
		for _, v := range z {
			s += v * v
		}
		return s / float64(len(z)), res
	}
	plain, _ := meanSq(false)
	pen, _ := meanSq(true)
	assert.Less(t, pen, 0.1*plain, "mean squared logit with the penalty, want at least 10x smaller than without")
}

// TestTrainNoMemoryGrowth checks that the live heap after epoch 2E is not
// materially larger than after epoch E.
func TestTrainNoMemoryGrowth(t *testing.T) {
	p := problem.New(t, 7, 2000, 32, 2, 8000, 0.7)
	var at [2]uint64
	cfg := fastTrain(60)
	cfg.OnEpoch = func(s EpochStats) error {
		if s.Epoch == 30 || s.Epoch == 60 {
			runtime.GC()
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			at[s.Epoch/30-1] = ms.HeapInuse
		}
		return nil
	}
	trainMLP(t, p, tensor.Float32, 1, cfg)
	growth := float64(at[1]) - float64(at[0])
	t.Logf("HeapInuse after epoch 30: %d B, after 60: %d B", at[0], at[1])
	// One epoch's activations are about 2000 × 16 × 4 B × a few = ~0.5 MB.
	assert.LessOrEqual(t, growth, float64(1<<20), "heap growth in B between epochs 30 and 60")
}

func TestTrainErrors(t *testing.T) {
	p := problem.New(t, 8, 20, 3, 2, 20, 0.5)
	task := newTask(t, p, tensor.Float64, nil)
	m, err := layers.NewMLP(task.Graph, nil, layers.DefaultMLPConfig(p.D, p.C), nil)
	require.NoError(t, err)
	badCfg := map[string]func(c *Config){
		"epochs 0":      func(c *Config) { c.Epochs = 0 },
		"lr 0":          func(c *Config) { c.Adam.LR = 0 },
		"wd -1":         func(c *Config) { c.Adam.WeightDecay = -1 },
		"beta1 1":       func(c *Config) { c.Adam.Beta1 = 1 },
		"select 7":      func(c *Config) { c.Select = 7 },
		"patience -1":   func(c *Config) { c.Patience = -1 },
		"log no writer": func(c *Config) { c.LogEvery = 5 },
	}
	for name, mut := range badCfg {
		c := fastTrain(2)
		mut(&c)
		if _, err := Fit(context.Background(), m, task, c); err == nil {
			t.Errorf("%s: Train accepted the config", name)
		}
	}
	badTask := map[string]func(k *Task){
		"no train":      func(k *Task) { k.Train = nil },
		"train range":   func(k *Task) { k.Train = []int{20} },
		"val label":     func(k *Task) { k.Labels = append([]int{-1}, k.Labels[1:]...); k.Val = []int{0} },
		"classes 1":     func(k *Task) { k.Classes = 1 },
		"short labels":  func(k *Task) { k.Labels = k.Labels[:5] },
		"wrong classes": func(k *Task) { k.Classes = 3 },
		"short sens":    func(k *Task) { k.Sens = []int{0, 1} },
		"sens -2":       func(k *Task) { k.Sens = make([]int, 20); k.Sens[3] = -2 },
	}
	for name, mut := range badTask {
		k := *task
		mut(&k)
		if _, err := Fit(context.Background(), m, &k, fastTrain(2)); err == nil {
			t.Errorf("%s: Train accepted the task", name)
		}
	}
	c := fastTrain(2)
	c.ExtraLoss = func(z *G.Node) (*G.Node, error) { return z, nil }
	if _, err := Fit(context.Background(), m, task, c); err == nil {
		t.Error("a matrix ExtraLoss was accepted")
	}
	if _, err := Predict(m, task, []int{-1}); err == nil {
		t.Error("Predict accepted node -1")
	}
	if err := SetParams(m, nil); err == nil {
		t.Error("SetParams accepted no values")
	}
}

// TestTrainTwice checks the documented continuation: a second Train on
// the same model and task starts from the trained parameters.
func TestTrainTwice(t *testing.T) {
	p := problem.New(t, 9, 150, 6, 2, 300, 0.7)
	for _, dt := range testutil.Dtypes {
		task := newTask(t, p, dt, layers.NewPhase())
		c := layers.DefaultGCNConfig(p.D, p.C)
		c.Hidden, c.Dtype = 16, dt
		m, err := layers.NewGCN(task.Graph, p.Graph, c, task.Phase)
		require.NoError(t, err)
		cfg := fastTrain(40)
		cfg.Select = SelectLast
		r1, err := Fit(context.Background(), m, task, cfg)
		require.NoError(t, err)
		r2, err := Fit(context.Background(), m, task, cfg)
		require.NoError(t, err)
		assert.Less(t, r2.History[0].CE, r1.History[0].CE-0.1, "%v: the second run must continue from the first", dt)
		assert.LessOrEqual(t, r2.Last.CE, r1.Last.CE+0.05, "%v: the second run must not end worse than the first", dt)
	}
}

// TestValDP checks EpochStats.ValDP against metrics computed by hand
// from the predictions of the last epoch's parameters.
func TestValDP(t *testing.T) {
	p := problem.New(t, 11, 200, 6, 2, 400, 0.5)
	for _, dt := range testutil.Dtypes {
		task := newTask(t, p, dt, layers.NewPhase())
		task.Sens = make([]int, p.N)
		for i := range task.Sens {
			task.Sens[i] = i%3 - 1 // −1 (unknown), 0, 1
		}
		mc := layers.DefaultMLPConfig(p.D, p.C)
		mc.Hidden, mc.Dtype = 8, dt
		m, err := layers.NewMLP(task.Graph, nil, mc, task.Phase)
		require.NoError(t, err)
		cfg := fastTrain(3)
		cfg.Select = SelectLast
		res, err := Fit(context.Background(), m, task, cfg)
		require.NoError(t, err)
		pred, err := Predict(m, task, nil)
		require.NoError(t, err)
		var count, sel [2]float64
		for _, i := range task.Val {
			if g := task.Sens[i]; g >= 0 {
				count[g]++
				if pred.Probs[2*i+1] > 0.5 {
					sel[g]++
				}
			}
		}
		require.Positive(t, count[0])
		require.Positive(t, count[1])
		want := math.Abs(sel[0]/count[0] - sel[1]/count[1])
		assert.InDelta(t, want, res.Last.ValDP, 1e-12, "%v", dt)
	}
}

// TestPredictionColumn: Column(c) is P(class c) per predicted node, in
// Nodes order, a copy of the matrix's column.
func TestPredictionColumn(t *testing.T) {
	p := &Prediction{Nodes: []int{4, 0, 7}, Classes: 3, Probs: []float64{
		0.1, 0.2, 0.7,
		0.5, 0.25, 0.25,
		0, 1, 0,
	}}
	assert.Equal(t, []float64{0.2, 0.25, 1}, p.Column(1))
	col := p.Column(0)
	assert.Equal(t, []float64{0.1, 0.5, 0}, col)
	col[0] = 9
	assert.Equal(t, 0.1, p.Probs[0], "Column returns a copy")
}
