package train

import (
	"bytes"
	"errors"
	"math"
	"runtime"
	"strings"
	"testing"

	"github.com/fairmp/fairmp/layers"
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
	m, err := layers.NewMLP(task.Graph, mc, task.Phase)
	require.NoError(t, err)
	res, err := Fit(m, task, cfg)
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
		if last.StepTime <= 0 || last.EvalTime <= 0 {
			t.Errorf("%v: epoch times %v, %v, want > 0", dt, last.StepTime, last.EvalTime)
		}
		if !(last.CE < 0.5*first.CE) {
			t.Errorf("%v: training CE %.4f -> %.4f, want at least halved", dt, first.CE, last.CE)
		}
		if res.Best.ValAcc < 0.85 {
			t.Errorf("%v: best validation accuracy %.3f, want >= 0.85 on a linearly separable problem", dt, res.Best.ValAcc)
		}
		if n := strings.Count(buf.String(), "\n"); n != 4 {
			t.Errorf("%v: %d log lines, want 4:\n%s", dt, n, buf.String())
		}
		// The model holds the best-validation parameters: Predict must
		// reproduce the best epoch's validation accuracy.
		pred, err := Predict(m, task, p.Val)
		require.NoError(t, err)
		if acc := pred.Accuracy(p.Labels); acc != res.Best.ValAcc {
			t.Errorf("%v: Predict val accuracy %.4f, best epoch %d reported %.4f", dt, acc, res.Best.Epoch, res.Best.ValAcc)
		}
		for k := range pred.Nodes {
			s := 0.0
			for c := 0; c < p.C; c++ {
				s += pred.Prob(k, c)
			}
			if math.Abs(s-1) > 1e-9 {
				t.Fatalf("probabilities of node %d sum to %v", pred.Nodes[k], s)
			}
		}
		if task.Phase.Training() {
			t.Error("phase left in training mode")
		}
		// LastParams restores the last epoch.
		if err := SetParams(m, res.LastParams); err != nil {
			t.Fatal(err)
		}
		pred, _ = Predict(m, task, p.Val)
		if acc := pred.Accuracy(p.Labels); acc != res.Last.ValAcc {
			t.Errorf("%v: last params give val accuracy %.4f, last epoch reported %.4f", dt, acc, res.Last.ValAcc)
		}
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
			m, err := layers.NewGCN(task.Graph, c, big.Graph, task.Phase)
			require.NoError(t, err)
			if _, err := Fit(m, task, cfg); err != nil {
				t.Fatal(err)
			}
			return m
		}
		b1, b2 := paramBits(build()), paramBits(build())
		for i := range b1 {
			if b1[i] != b2[i] {
				t.Fatalf("%v GCN on 3000 nodes: same seed, parameter element %d differs", dt, i)
			}
		}
	}
	for _, dt := range testutil.Dtypes {
		cfg := fastTrain(30)
		cfg.Select = SelectLast
		a, _, _ := trainMLP(t, p, dt, 5, cfg)
		b, _, _ := trainMLP(t, p, dt, 5, cfg)
		c, _, _ := trainMLP(t, p, dt, 6, cfg)
		ba, bb, bc := paramBits(a), paramBits(b), paramBits(c)
		for i := range ba {
			if ba[i] != bb[i] {
				t.Fatalf("%v: same seed, parameter element %d differs", dt, i)
			}
		}
		same := true
		for i := range ba {
			same = same && ba[i] == bc[i]
		}
		if same {
			t.Errorf("%v: seeds 5 and 6 gave identical parameters", dt)
		}
	}
}

func TestTrainEarlyStopAndHooks(t *testing.T) {
	p := problem.New(t, 5, 80, 4, 2, 100, 0.5)
	cfg := fastTrain(500)
	cfg.Patience = 10
	_, _, res := trainMLP(t, p, tensor.Float64, 1, cfg)
	if !res.Stopped || res.Epochs != res.Best.Epoch+10 {
		t.Errorf("early stopping: stopped %v after %d epochs, best %d, patience 10", res.Stopped, res.Epochs, res.Best.Epoch)
	}
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
	if res.Epochs != 7 || !res.Stopped || calls != 7 || len(res.History) != 7 {
		t.Errorf("ErrStop at 7: ran %d epochs, stopped %v, %d progress calls", res.Epochs, res.Stopped, calls)
	}
	boom := errors.New("boom")
	cfg.OnEpoch = func(EpochStats) error { return boom }
	task := newTask(t, p, tensor.Float64, nil)
	m, _ := layers.NewMLP(task.Graph, layers.DefaultMLPConfig(p.D, p.C), nil)
	if _, err := Fit(m, task, cfg); !errors.Is(err, boom) {
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
		m, err := layers.NewMLP(task.Graph, mc, nil)
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
		res, err := Fit(m, task, cfg)
		require.NoError(t, err)
		if extra {
			want := 0.0
			for _, v := range z0 {
				want += v * v
			}
			want = 10 * want / float64(len(z0))
			if !testutil.Close(res.History[0].Extra, want, 1e-9, 1e-9) {
				t.Errorf("epoch 1 extra loss %v, want %v", res.History[0].Extra, want)
			}
			if res.History[0].Loss != res.History[0].CE+res.History[0].Extra {
				t.Error("Loss != CE + Extra")
			}
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
	if !(pen < 0.1*plain) {
		t.Errorf("mean squared logit %.4g with the penalty, %.4g without: want at least 10x smaller", pen, plain)
	}
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
	if growth > 1<<20 {
		t.Errorf("heap grew by %.0f B between epochs 30 and 60", growth)
	}
}

func TestTrainErrors(t *testing.T) {
	p := problem.New(t, 8, 20, 3, 2, 20, 0.5)
	task := newTask(t, p, tensor.Float64, nil)
	m, err := layers.NewMLP(task.Graph, layers.DefaultMLPConfig(p.D, p.C), nil)
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
		if _, err := Fit(m, task, c); err == nil {
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
	}
	for name, mut := range badTask {
		k := *task
		mut(&k)
		if _, err := Fit(m, &k, fastTrain(2)); err == nil {
			t.Errorf("%s: Train accepted the task", name)
		}
	}
	c := fastTrain(2)
	c.ExtraLoss = func(z *G.Node) (*G.Node, error) { return z, nil }
	if _, err := Fit(m, task, c); err == nil {
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
		m, err := layers.NewGCN(task.Graph, c, p.Graph, task.Phase)
		require.NoError(t, err)
		cfg := fastTrain(40)
		cfg.Select = SelectLast
		r1, err := Fit(m, task, cfg)
		require.NoError(t, err)
		r2, err := Fit(m, task, cfg)
		require.NoError(t, err)
		if !(r2.History[0].CE < r1.History[0].CE-0.1) {
			t.Errorf("%v: second run starts at CE %.4f, first started at %.4f: not continued", dt, r2.History[0].CE, r1.History[0].CE)
		}
		if r2.Last.CE > r1.Last.CE+0.05 {
			t.Errorf("%v: second run ends at CE %.4f, worse than the first (%.4f)", dt, r2.Last.CE, r1.Last.CE)
		}
	}
}
