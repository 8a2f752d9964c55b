package minibatch

import (
	"context"
	"fmt"
	"io"
	"math"
	"time"

	"github.com/fairmp/fairmp/internal/valauc"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/fairmp/fairmp/graph"
	"github.com/fairmp/fairmp/graph/features"
	"github.com/fairmp/fairmp/graph/sample"
	"github.com/fairmp/fairmp/internal/blas"
	"github.com/fairmp/fairmp/internal/opkit"
	"github.com/fairmp/fairmp/layers"
	"github.com/fairmp/fairmp/layers/fairness"
	"github.com/fairmp/fairmp/layers/train"
)

// Task is a node-classification problem for mini-batch training: the
// whole graph's propagation matrix, the features (in memory or in a file)
// and the labels. Nothing in it is copied.
type Task struct {
	// Adj is the whole graph's propagation matrix (Matrix of the model's
	// configuration): batches are sampled from its rows. Nil for an MLP.
	Adj *graph.Matrix
	// Features gives each node's features (Rows() = n): in memory
	// (features.NewDense) or in a memory-mapped file (features.Open).
	Features features.Source
	// Labels holds one class per node (any value outside Train and Val).
	Labels []int
	// Train and Val are node indices: the loss uses Train, selection and
	// early stopping Val (which may be empty: the last epoch is then
	// selected and no evaluation pass runs).
	Train, Val []int
	// Classes is the number of classes.
	Classes int
	// Sens, if not nil, holds each node's group: the evaluation pass then
	// reports the validation ΔDP (train.EpochStats.ValDP).
	Sens []int
}

// Validate checks the task's sizes and indices.
func (t *Task) Validate() error {
	if t.Features == nil {
		return fmt.Errorf("Features is nil")
	}
	n := t.Features.Rows()
	if t.Adj != nil {
		if r, c := t.Adj.Dims(); r != n || c != n {
			return fmt.Errorf("Adj is %d × %d for %d feature rows, want %d × %d", r, c, n, n, n)
		}
	}
	if len(t.Labels) != n {
		return fmt.Errorf("Labels has %d entries for %d nodes", len(t.Labels), n)
	}
	if t.Sens != nil && len(t.Sens) != n {
		return fmt.Errorf("Sens has %d entries for %d nodes", len(t.Sens), n)
	}
	if t.Classes < 2 {
		return fmt.Errorf("Classes is %d, want ≥ 2", t.Classes)
	}
	if len(t.Train) == 0 {
		return fmt.Errorf("Train is empty")
	}
	for _, s := range []struct {
		name string
		idx  []int
	}{{"Train", t.Train}, {"Val", t.Val}} {
		for k, i := range s.idx {
			if i < 0 || i >= n {
				return fmt.Errorf("%s[%d] = %d, want a node in [0, %d)", s.name, k, i, n)
			}
			if y := t.Labels[i]; y < 0 || y >= t.Classes {
				return fmt.Errorf("%s[%d] = node %d has label %d, want a class in [0, %d)", s.name, k, i, y, t.Classes)
			}
		}
	}
	return nil
}

// Config configures Fit.
type Config struct {
	// Model is the backbone's configuration, of a kind whose models run
	// on sampled blocks (layers.Kind.Blocks): layers.MLPConfig,
	// GCNConfig, SGCConfig, APPNPConfig, or such a kind of the user's
	// own. Its Seed seeds the initialisation (the same initial parameters
	// as the full-batch model with that seed).
	Model layers.Config
	// Train holds the optimiser and the selection rules, with the
	// full-batch meaning (Epochs, Adam, Select and Criterion, Patience,
	// SelectAfter, LogEvery, Log, OnEpoch: the epochs run in train.Loop,
	// as train.Fit's do); an epoch is one pass over the training
	// nodes in batches. ExtraLoss and AfterStep are full-batch hooks (they
	// see the whole graph's logits) and must be nil: a fairness method
	// goes in Method.
	Train train.Config
	// Method, if not nil, is a fairness method trained with the model: a
	// BatchMethod (the regulariser, the adversary, mixup and REDRESS of
	// package layers/fairtrain) adds its term to every batch's loss. Fit
	// refuses any other method with an error wrapping ErrNotBatched that
	// says why.
	Method fairness.Method
	// Sampler draws the training batches: Fanouts (one per hop of the
	// model; ignored for an MLP), BatchSize, Shuffle and Seed, which
	// also seeds the batches' dropout masks.
	Sampler sample.Config
	// EvalFanouts are the fan-outs of the evaluation pass over Val. nil
	// computes the whole graph's logits layer by layer (Logits), exactly
	// the full-batch model's, at the cost of a few sparse products over
	// the whole graph per epoch; on a graph too large for that each epoch,
	// set fan-outs (-1 for every neighbour, exact too) and only the
	// validation nodes' neighbourhoods are read.
	EvalFanouts []int
	// EvalBatch is the number of nodes per evaluation batch (≥ 1).
	// Default 4096.
	EvalBatch int
	// BatchLog, if not nil, receives a progress line every BatchLogEvery
	// batches (≥ 1 then): for epochs long enough to watch.
	BatchLog      io.Writer
	BatchLogEvery int
}

// DefaultConfig returns the paper's optimiser and selection (train's
// DefaultConfig), PyG-like sampling (fan-outs 10 per hop, batches of
// 1024, shuffled) and exact layer-wise evaluation, for the model configuration
// model.
func DefaultConfig(model layers.Config) Config {
	sc := sample.DefaultConfig()
	if h, err := hops(model); err == nil && h > 0 {
		sc.Fanouts = make([]int, h)
		for i := range sc.Fanouts {
			sc.Fanouts[i] = 10
		}
	}
	return Config{Model: model, Train: train.DefaultConfig(), Sampler: sc, EvalBatch: 4096}
}

// Validate checks the configuration.
func (c Config) Validate() error {
	s, err := newSpec(c.Model)
	if err != nil {
		return err
	}
	if err := c.Train.Validate(); err != nil {
		return fmt.Errorf("Train: %w", err)
	}
	if c.Train.ExtraLoss != nil || c.Train.AfterStep != nil {
		return fmt.Errorf("Train: ExtraLoss and AfterStep are full-batch hooks (they see the whole graph's logits), want nil: give a fairness method in Method")
	}
	if err := c.Sampler.Validate(); err != nil {
		return fmt.Errorf("Sampler: %w", err)
	}
	if s.hops > 0 && len(c.Sampler.Fanouts) != s.hops {
		return fmt.Errorf("Sampler.Fanouts has %d entries, want %d (one per hop of the %s model)", len(c.Sampler.Fanouts), s.hops, s.kind.Name())
	}
	if c.EvalFanouts != nil && len(c.EvalFanouts) != s.hops {
		return fmt.Errorf("EvalFanouts has %d entries, want nil or %d", len(c.EvalFanouts), s.hops)
	}
	for i, f := range c.EvalFanouts {
		if f != -1 && f < 1 {
			return fmt.Errorf("EvalFanouts[%d] = %d, want -1 (every neighbour) or ≥ 1", i, f)
		}
	}
	if c.EvalBatch < 1 {
		return fmt.Errorf("EvalBatch = %d, want ≥ 1", c.EvalBatch)
	}
	if c.BatchLog != nil && c.BatchLogEvery < 1 {
		return fmt.Errorf("BatchLogEvery = %d with a BatchLog, want ≥ 1", c.BatchLogEvery)
	}
	if c.Train.Log == nil && c.Train.LogEvery > 0 {
		return fmt.Errorf("Train.LogEvery = %d without a Train.Log", c.Train.LogEvery)
	}
	return nil
}

// Result reports a mini-batch training run.
type Result struct {
	// Epochs is the number of epochs run.
	Epochs int
	// Best is the best epoch by Train.Select (see train.Result.Best),
	// Last the final one.
	Best, Last train.EpochStats
	// History holds every epoch's statistics. TrainAcc and CE are the
	// running means over the epoch's batches (dropout on, parameters
	// before each update), not a separate pass.
	History []train.EpochStats
	// Stopped reports early stopping or train.ErrStop.
	Stopped bool
	// Params are the selected parameters (Train.Select), in the model's
	// Learnables order: NewModel puts them in a full-batch model, Logits
	// computes the whole graph's logits with them.
	Params []*tensor.Dense
	// BestParams and LastParams are the best and the last epoch's.
	BestParams, LastParams []*tensor.Dense
}

// Fit trains the model of cfg on task in mini-batches: every epoch
// visits the training nodes in batches of cfg.Sampler.BatchSize, each
// with its sampled neighbourhood (package graph/sample), one Adam step
// per batch; then an evaluation pass over Val selects and stops as the
// full-batch trainer does (train.Loop). The same configuration gives bit-identical
// results.
//
// Each batch is its own small gorgonia graph (blocks of different sizes
// cannot share one), built from the model's layers (layers.BlockModel)
// with the current parameters; its gradients update the parameters.
//
// Cancelling ctx stops the run before its next batch with an error
// wrapping ctx.Err().
func Fit(ctx context.Context, task *Task, cfg Config) (*Result, error) {
	if task == nil {
		return nil, fmt.Errorf("minibatch: Fit: nil task")
	}
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("minibatch: Fit: %w", err)
	}
	if err := task.Validate(); err != nil {
		return nil, fmt.Errorf("minibatch: Fit: task: %w", err)
	}
	s, _ := newSpec(cfg.Model)
	if task.Features.Cols() != s.base.In {
		return nil, fmt.Errorf("minibatch: Fit: the features have %d columns, the model takes %d", task.Features.Cols(), s.base.In)
	}
	if task.Classes != s.base.Out {
		return nil, fmt.Errorf("minibatch: Fit: the task has %d classes, the model outputs %d", task.Classes, s.base.Out)
	}
	if s.hops > 0 && task.Adj == nil {
		return nil, fmt.Errorf("minibatch: Fit: Task.Adj is nil for a %s model (build it with Matrix)", s.kind.Name())
	}
	tc, term, err := batchTerm(cfg, task)
	if err != nil {
		return nil, fmt.Errorf("minibatch: Fit: %w", err)
	}
	cfg.Train = tc
	r := &runner{ctx: ctx, task: task, cfg: cfg, spec: s, term: term}
	if err := r.init(); err != nil {
		return nil, fmt.Errorf("minibatch: Fit: %w", err)
	}
	return r.run()
}

type runner struct {
	ctx    context.Context
	task   *Task
	cfg    Config
	spec   spec
	params G.Nodes // the master parameters, updated by Adam
	adam   *train.Adam
	train  *sample.Sampler
	eval   *sample.Sampler
	term   Term // the fairness method's, or nil
}

func (r *runner) init() error {
	g := G.NewGraph()
	m, err := r.spec.build(g, r.spec.base.Seed, nil)
	if err != nil {
		return err
	}
	r.params = m.Learnables()
	if r.adam, err = train.NewAdam(r.cfg.Train.Adam, r.params); err != nil {
		return err
	}
	if r.spec.hops == 0 {
		return nil
	}
	if r.train, err = sample.NewSampler(r.task.Adj, r.cfg.Sampler); err != nil {
		return fmt.Errorf("Sampler: %w", err)
	}
	if r.cfg.EvalFanouts == nil {
		return nil // exact layer-wise evaluation (Logits)
	}
	ec := sample.Config{Fanouts: r.cfg.EvalFanouts, BatchSize: r.cfg.EvalBatch, Seed: r.cfg.Sampler.Seed}
	if r.eval, err = sample.NewSampler(r.task.Adj, ec); err != nil {
		return fmt.Errorf("evaluation sampler: %w", err)
	}
	return nil
}

func (r *runner) run() (*Result, error) {
	loop := &train.Loop{
		Epoch: func(e int) (train.EpochStats, error) {
			st, err := r.epoch(e)
			if err != nil {
				return st, fmt.Errorf("epoch %d: %w", e, err)
			}
			return st, nil
		},
		Params: r.params, Labels: r.task.Labels, Val: r.task.Val, Classes: r.task.Classes,
	}
	tr, err := loop.Run(r.ctx, r.cfg.Train)
	if err != nil {
		return nil, fmt.Errorf("minibatch: Fit: %w", err)
	}
	res := &Result{Epochs: tr.Epochs, Best: tr.Best, Last: tr.Last, History: tr.History, Stopped: tr.Stopped,
		Params: tr.BestParams, BestParams: tr.BestParams, LastParams: tr.LastParams}
	if tr.Selected == train.SelectLast {
		res.Params = res.LastParams
	}
	return res, nil
}

// epoch runs one pass over the training nodes and the evaluation pass.
func (r *runner) epoch(epoch int) (train.EpochStats, error) {
	st := train.EpochStats{Epoch: epoch}
	start := time.Now()
	nb := r.numBatches()
	var ceSum, extraSum float64
	var correct, seen int
	for i := 0; i < nb; i++ {
		if err := r.ctx.Err(); err != nil {
			return st, fmt.Errorf("before batch %d of %d: %w", i+1, nb, err)
		}
		b, err := r.batch(epoch, i)
		if err != nil {
			return st, err
		}
		b.epoch, b.index, b.count = epoch, i, nb
		ce, extra, c, err := r.step(b, batchSeed(r.cfg.Sampler.Seed, epoch, i))
		if err != nil {
			return st, fmt.Errorf("batch %d of %d: %w", i+1, nb, err)
		}
		t := len(b.targets)
		ceSum += ce * float64(t)
		extraSum += extra * float64(t)
		correct += c
		seen += t
		if r.cfg.BatchLog != nil && ((i+1)%r.cfg.BatchLogEvery == 0 || i+1 == nb) {
			el := time.Since(start)
			eta := time.Duration(float64(el) / float64(i+1) * float64(nb-i-1))
			fmt.Fprintf(r.cfg.BatchLog, "epoch %d: batch %d/%d  loss %.4f  acc %.4f  %d nodes  elapsed %v  ETA %v\n",
				epoch, i+1, nb, ceSum/float64(seen), float64(correct)/float64(seen), len(b.nodes), el.Round(time.Second), eta.Round(time.Second))
		}
	}
	st.CE = ceSum / float64(seen)
	st.Extra = extraSum / float64(seen)
	st.Loss = st.CE + st.Extra
	st.TrainAcc = float64(correct) / float64(seen)
	st.StepTime = time.Since(start)
	if len(r.task.Val) > 0 {
		t0 := time.Now()
		z, err := r.valLogits()
		if err != nil {
			return st, fmt.Errorf("evaluation: %w", err)
		}
		st.ValAcc, st.ValLoss, st.ValAUC, st.ValDP = evalLocal(z, r.task.Labels, r.task.Sens, r.task.Val, r.task.Classes, r.cfg.Train.Select.NeedsAUC())
		st.EvalTime = time.Since(t0)
	}
	return st, nil
}

// batchSeed mixes the sampler seed, the epoch and the batch index into
// the seed of a batch's dropout masks (splitmix64's finaliser).
func batchSeed(seed int64, epoch, i int) int64 {
	x := uint64(seed) ^ uint64(epoch)*0x9e3779b97f4a7c15 ^ uint64(i+1)*0xbf58476d1ce4e5b9
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return int64(x >> 1)
}

// mbatch is a batch: the nodes whose features it reads, its blocks, and
// its targets (the first len(targets) nodes); the epoch, its index and
// the epoch's number of batches when it trains.
type mbatch struct {
	nodes               []int
	targets             []int
	blocks              []*graph.Matrix
	epoch, index, count int
}

func (r *runner) numBatches() int {
	if r.train != nil {
		return r.train.NumBatches(r.task.Train)
	}
	bs := r.cfg.Sampler.BatchSize
	return (len(r.task.Train) + bs - 1) / bs
}

func (r *runner) batch(epoch, i int) (mbatch, error) {
	if r.train != nil {
		b, err := r.train.Batch(r.task.Train, epoch, i)
		if err != nil {
			return mbatch{}, err
		}
		return mbatch{nodes: b.Nodes, targets: b.Nodes[:b.Sizes[0]], blocks: b.Blocks}, nil
	}
	// An MLP: the sampler's batches, without neighbours.
	t, err := sample.Chunk(r.task.Train, r.cfg.Sampler, epoch, i)
	if err != nil {
		return mbatch{}, err
	}
	return mbatch{nodes: t, targets: t}, nil
}

// input gathers the batch's features into a new input node of g.
func (r *runner) input(g *G.ExprGraph, nodes []int) (*G.Node, error) {
	d := r.task.Features.Cols()
	var t *tensor.Dense
	if r.spec.base.Dtype == tensor.Float64 {
		buf := make([]float64, len(nodes)*d)
		if err := features.Gather(r.task.Features, nodes, buf); err != nil {
			return nil, err
		}
		t = tensor.New(tensor.WithShape(len(nodes), d), tensor.WithBacking(buf))
	} else {
		buf := make([]float32, len(nodes)*d)
		if err := features.Gather(r.task.Features, nodes, buf); err != nil {
			return nil, err
		}
		t = tensor.New(tensor.WithShape(len(nodes), d), tensor.WithBacking(buf))
	}
	return G.NewMatrix(g, r.spec.base.Dtype, G.WithShape(len(nodes), d), G.WithName("x"), G.WithValue(t)), nil
}

// step runs forward, backward and one Adam step on a batch, and returns
// the batch's mean cross-entropy, the fairness term's value (0 without
// one) and the number of correct predictions; then the term's AfterStep.
func (r *runner) step(b mbatch, seed int64) (ce, extra float64, correct int, err error) {
	g := G.NewGraph()
	phase := layers.NewPhase()
	phase.SetTraining(true)
	m, err := r.spec.build(g, seed, phase)
	if err != nil {
		return 0, 0, 0, err
	}
	if err := setParams(m, r.masterValues()); err != nil {
		return 0, 0, 0, err
	}
	x, err := r.input(g, b.nodes)
	if err != nil {
		return 0, 0, 0, err
	}
	logits, err := layers.ForwardBlocks(m, x, b.blocks)
	if err != nil {
		return 0, 0, 0, err
	}
	t := len(b.targets)
	labels := make([]int, t)
	idx := make([]int, t)
	for k, v := range b.targets {
		labels[k], idx[k] = r.task.Labels[v], k
	}
	ceNode, err := layers.CrossEntropy(logits, labels, idx)
	if err != nil {
		return 0, 0, 0, err
	}
	loss := ceNode
	var tb *Batch
	var ev G.Value
	if r.term != nil {
		tb = &Batch{Epoch: b.epoch, Index: b.index, Count: b.count, Targets: b.targets, Logits: logits}
		e, err := r.term.Loss(tb)
		if err != nil {
			return 0, 0, 0, fmt.Errorf("%s: %w", r.cfg.Method.Name(), err)
		}
		if e != nil {
			if !e.IsScalar() || e.Dtype() != loss.Dtype() || e.Graph() != g {
				return 0, 0, 0, fmt.Errorf("%s: the term %s is not a %v scalar of the batch's graph", r.cfg.Method.Name(), e.Name(), loss.Dtype())
			}
			G.Read(e, &ev)
			if loss, err = G.Add(loss, e); err != nil {
				return 0, 0, 0, fmt.Errorf("%s: %w", r.cfg.Method.Name(), err)
			}
		}
	}
	params := m.Learnables()
	if _, err := G.Grad(loss, params...); err != nil {
		return 0, 0, 0, fmt.Errorf("gradient: %w", err)
	}
	var cv, zv G.Value
	G.Read(ceNode, &cv)
	G.Read(logits, &zv)
	blas.Default() // fairmp's BLAS unless the program chose one
	vm := G.NewTapeMachine(g, G.BindDualValues(params...))
	defer vm.Close()
	if err := vm.RunAll(); err != nil {
		return 0, 0, 0, err
	}
	grads := make([]G.Value, len(params))
	for i, p := range params {
		if grads[i], err = p.Grad(); err != nil {
			return 0, 0, 0, fmt.Errorf("gradient of %s: %w", p.Name(), err)
		}
	}
	if err := r.adam.StepWith(grads); err != nil {
		return 0, 0, 0, err
	}
	z, err := opkit.Dense(zv)
	if err != nil {
		return 0, 0, 0, err
	}
	if ev != nil {
		extra = scalarValue(ev)
	}
	if r.term != nil {
		if err := r.term.AfterStep(tb, z); err != nil {
			return 0, 0, 0, fmt.Errorf("%s: %w", r.cfg.Method.Name(), err)
		}
	}
	acc := opkit.AccIdx(z, labels, idx, r.task.Classes)
	return scalarValue(cv), extra, int(math.Round(acc * float64(t))), nil
}

func scalarValue(v G.Value) float64 {
	switch x := v.Data().(type) {
	case float64:
		return x
	case float32:
		return float64(x)
	}
	return math.NaN()
}

func (r *runner) masterValues() []*tensor.Dense {
	out := make([]*tensor.Dense, len(r.params))
	for i, p := range r.params {
		out[i] = p.Value().(*tensor.Dense)
	}
	return out
}

func setParams(m layers.Model, values []*tensor.Dense) error {
	return train.SetParams(m, values)
}

// valLogits returns the validation nodes' logits (in Val's order) with
// the current parameters, in evaluation mode: from the whole graph's
// layer-wise logits (exact) for a graph model without EvalFanouts, else
// in batches of the evaluation sampler (batches of nodes for an MLP).
func (r *runner) valLogits() (*tensor.Dense, error) {
	if r.spec.hops > 0 && r.eval == nil {
		all, err := Logits(r.cfg.Model, r.masterValues(), r.task.Adj, r.task.Features)
		if err != nil {
			return nil, err
		}
		c := r.spec.base.Out
		out := tensor.New(tensor.WithShape(len(r.task.Val), c), tensor.Of(r.spec.base.Dtype))
		switch o := out.Data().(type) {
		case []float64:
			a := all.Data().([]float64)
			for k, i := range r.task.Val {
				copy(o[k*c:(k+1)*c], a[i*c:(i+1)*c])
			}
		case []float32:
			a := all.Data().([]float32)
			for k, i := range r.task.Val {
				copy(o[k*c:(k+1)*c], a[i*c:(i+1)*c])
			}
		}
		return out, nil
	}
	return forwardNodes(r.spec, r.masterValues(), r.task.Features, r.task.Val, r.eval, r.cfg.EvalBatch)
}

// forwardNodes computes the logits of nodes in evaluation mode.
func forwardNodes(s spec, values []*tensor.Dense, x features.Source, nodes []int, sm *sample.Sampler, batch int) (*tensor.Dense, error) {
	c := s.base.Out
	out := tensor.New(tensor.WithShape(len(nodes), c), tensor.Of(s.base.Dtype))
	r := &runner{task: &Task{Features: x}, spec: s}
	for lo := 0; lo < len(nodes); lo += batch {
		hi := min(lo+batch, len(nodes))
		b := mbatch{nodes: nodes[lo:hi], targets: nodes[lo:hi]}
		if sm != nil {
			sb, err := sm.Sample(nodes[lo:hi], int64(lo))
			if err != nil {
				return nil, err
			}
			b = mbatch{nodes: sb.Nodes, targets: sb.Nodes[:sb.Sizes[0]], blocks: sb.Blocks}
		}
		g := G.NewGraph()
		m, err := s.build(g, s.base.Seed, nil)
		if err != nil {
			return nil, err
		}
		if err := setParams(m, values); err != nil {
			return nil, err
		}
		xn, err := r.input(g, b.nodes)
		if err != nil {
			return nil, err
		}
		z, err := layers.ForwardBlocks(m, xn, b.blocks)
		if err != nil {
			return nil, err
		}
		var zv G.Value
		G.Read(z, &zv)
		blas.Default()
		vm := G.NewTapeMachine(g)
		err = vm.RunAll()
		vm.Close()
		if err != nil {
			return nil, err
		}
		zd, err := opkit.Dense(zv)
		if err != nil {
			return nil, err
		}
		switch o := out.Data().(type) {
		case []float64:
			copy(o[lo*c:hi*c], zd.Data().([]float64))
		case []float32:
			copy(o[lo*c:hi*c], zd.Data().([]float32))
		}
	}
	return out, nil
}

// evalLocal: accuracy, mean cross-entropy, AUC (when withAUC) and ΔDP of
// logits z whose row k is node idx[k].
func evalLocal(z *tensor.Dense, labels, sens, idx []int, c int, withAUC bool) (acc, loss, auc, dp float64) {
	local := make([]int, len(idx))
	lab := make([]int, len(idx))
	for k, i := range idx {
		local[k], lab[k] = k, labels[i]
	}
	acc, loss = opkit.EvalIdx(z, lab, local, c)
	if withAUC {
		auc, _ = valauc.Of(z, lab, local, c)
	}
	if sens != nil {
		sl := make([]int, len(idx))
		for k, i := range idx {
			sl[k] = sens[i]
		}
		dp = opkit.SelectionGap(z, sl, local, c)
	}
	return acc, loss, auc, dp
}
