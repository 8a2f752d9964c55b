package train

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"time"

	"github.com/fairmp/fairmp/internal/blas"
	"github.com/fairmp/fairmp/internal/valauc"
	"github.com/fairmp/fairmp/layers"

	"github.com/fairmp/fairmp/internal/opkit"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Task is a full-batch node-classification problem in one gorgonia graph.
type Task struct {
	// Graph is the gorgonia graph holding X and the model's parameters.
	Graph *G.ExprGraph
	// X is the n × d input feature node (see FeatureNode).
	X *G.Node
	// Labels holds one class per node; −1 (or any value) is allowed for
	// nodes outside Train and Val.
	Labels []int
	// Train and Val are node indices; the loss uses Train, model selection
	// and early stopping use Val (which may be empty: then the best epoch is
	// the last one).
	Train, Val []int
	// Classes is the number of classes (the model's output width).
	Classes int
	// Phase is the phase the model's layers were built with; the trainer
	// switches it between training and evaluation. May be nil for a model
	// without stochastic layers.
	Phase *layers.Phase
	// Sens, if not nil, holds each node's sensitive group (0, 1, ...; −1
	// unknown): the evaluation pass then also reports the validation ΔDP
	// (EpochStats.ValDP), for progress lines. Training does not use it.
	Sens []int

	// evals holds Predict's and Logits' compiled evaluation programs, one
	// per model, and the lock that serialises them; created on first use.
	evals *evaluators
}

// Validate checks the task's fields against each other.
func (t *Task) Validate() error {
	if t == nil {
		return fmt.Errorf("nil task")
	}
	if t.Graph == nil || t.X == nil {
		return fmt.Errorf("task has no Graph or no X")
	}
	if t.X.Graph() != t.Graph {
		return fmt.Errorf("X %q (node %d) is not in the task's Graph", t.X.Name(), t.X.ID())
	}
	s := t.X.Shape()
	if len(s) != 2 {
		return fmt.Errorf("X %q has shape %v, want n × d", t.X.Name(), s)
	}
	n := s[0]
	if len(t.Labels) != n {
		return fmt.Errorf("%d labels for %d nodes, want one per node", len(t.Labels), n)
	}
	if t.Classes < 2 {
		return fmt.Errorf("Classes = %d, want >= 2", t.Classes)
	}
	if len(t.Train) == 0 {
		return fmt.Errorf("empty Train index set")
	}
	if t.Sens != nil {
		if len(t.Sens) != n {
			return fmt.Errorf("%d sensitive values for %d nodes, want one per node (or Sens nil)", len(t.Sens), n)
		}
		for i, g := range t.Sens {
			if g < -1 {
				return fmt.Errorf("Sens[%d] = %d, want a group id ≥ 0 or −1 (unknown)", i, g)
			}
		}
	}
	for name, idx := range map[string][]int{"Train": t.Train, "Val": t.Val} {
		for k, i := range idx {
			if i < 0 || i >= n {
				return fmt.Errorf("%s[%d] = %d, want a node in [0, %d)", name, k, i, n)
			}
			if y := t.Labels[i]; y < 0 || y >= t.Classes {
				return fmt.Errorf("label of node %d (%s[%d]) is %d, want a class in [0, %d)", i, name, k, y, t.Classes)
			}
		}
	}
	return nil
}

// FeatureNode adds an n × d input node named name holding the row-major
// features (converted to dt) to g. It returns an error if len(features)
// != n·d, a value is not finite or dt is not a float type.
func FeatureNode(g *G.ExprGraph, dt tensor.Dtype, features []float64, n, d int, name string) (*G.Node, error) {
	if err := opkit.CheckFloat(dt); err != nil {
		return nil, fmt.Errorf("train: FeatureNode %q: %w", name, err)
	}
	if n <= 0 || d <= 0 || len(features) != n*d {
		return nil, fmt.Errorf("train: FeatureNode %q: %d values for %d × %d, want n·d with n, d > 0", name, len(features), n, d)
	}
	for i, v := range features {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("train: FeatureNode %q: feature %d of node %d is %v, want a finite value", name, i%d, i/d, v)
		}
	}
	if err := opkit.UniqueName(g, name); err != nil {
		return nil, fmt.Errorf("train: FeatureNode: %w", err)
	}
	t := opkit.Alloc(dt, n, d)
	switch s := t.Data().(type) {
	case []float64:
		copy(s, features)
	case []float32:
		for i, v := range features {
			s[i] = float32(v)
		}
	}
	return G.NewMatrix(g, dt, G.WithShape(n, d), G.WithName(name), G.WithValue(t)), nil
}

// ErrPhaseMismatch is returned when a model was built with another
// *layers.Phase than the task's: the trainer would switch a phase the
// model never reads, and dropout would never turn on (or off).
var ErrPhaseMismatch = errors.New("train: the model's phase is not the task's")

// checkPhase returns ErrPhaseMismatch (wrapped, naming both) when model
// reports its phase (layers.Phased) and it is not task.Phase.
func checkPhase(model layers.Model, task *Task) error {
	ph, ok := model.(layers.Phased)
	if !ok || ph.Phase() == task.Phase {
		return nil
	}
	switch {
	case task.Phase == nil:
		return fmt.Errorf("%w: %T was built with a *layers.Phase and Task.Phase is nil: set Task.Phase to the model's phase", ErrPhaseMismatch, model)
	case ph.Phase() == nil:
		return fmt.Errorf("%w: %T was built without a *layers.Phase (always evaluation) and Task.Phase is set: build the model with the task's Phase (after modelio.Load: set Env.Phase), or leave Task.Phase nil", ErrPhaseMismatch, model)
	}
	return fmt.Errorf("%w: %T was built with another *layers.Phase than Task.Phase: build the model with the task's Phase (after modelio.Load: load it with Env.Phase set to the task's Phase)", ErrPhaseMismatch, model)
}

// ErrClosed is returned by a Trainer's Step, Evaluate and Epoch after
// Close.
var ErrClosed = errors.New("train: the trainer is closed")

// ErrStop, returned by Config.OnEpoch, ends training without error
// after the current epoch.
var ErrStop = errors.New("train: stop training")

// Config configures [Fit] and [NewTrainer].
//
// There is no seed here: every random choice of a training run (the
// initialisation and each dropout mask) belongs to the model and is
// seeded by the model's configuration, so one model seed fixes the run.
type Config struct {
	// Epochs is the number of full-batch steps (> 0). Default 300.
	Epochs int
	// Adam configures the optimiser. Default lr 1e-3, weight decay 1e-5
	// (the fairness papers' protocol), PyTorch's betas and eps.
	Adam AdamConfig
	// Select is the selection criterion: the epoch whose parameters the
	// model keeps, and the best epoch Patience counts from. Default
	// SelectBestVal (the highest validation accuracy); SelectValAUC,
	// SelectValLoss, SelectLast, or SelectCustom with Criterion.
	Select Selection
	// Criterion is a method's own selection criterion, read with
	// SelectCustom alone (and required then): the epoch with the highest
	// value (the first on ties) is kept. It is called once per epoch after
	// SelectAfter, with the epoch's statistics; a NaN is never the best.
	Criterion func(EpochStats) float64
	// Patience stops training when the selection criterion has not
	// improved for Patience epochs (validation accuracy with SelectLast);
	// 0 disables early stopping. Default 0.
	Patience int
	// SelectAfter excludes epochs 1..SelectAfter from the selection (and
	// from the best epoch that Patience counts from), for
	// schedules whose first epochs are a warm-up, such as the classifier
	// pre-training of fair's adversarial debiasing. In [0, Epochs).
	// Default 0.
	SelectAfter int
	// LogEvery prints one progress line to Log every LogEvery epochs (and
	// after the last); 0 prints nothing. Default 0.
	LogEvery int
	// Log receives the progress lines. Required when LogEvery > 0.
	Log io.Writer
	// ExtraLoss, if set, is called once with the logits node while the
	// training graph is built; its scalar result is added to the
	// cross-entropy (fairness regularisers plug in here).
	ExtraLoss func(logits *G.Node) (*G.Node, error)
	// OnEpoch, if set, is called after every epoch (after the LogEvery line); it
	// may stop training by returning ErrStop, or abort it with another
	// error.
	OnEpoch func(EpochStats) error
	// AfterStep, if set, is called by Trainer.Step after every parameter
	// update, before the evaluation pass, with the 1-based epoch number.
	// Strategies that train something else between the model's steps
	// (fair's adversary) or change a loss weight on a schedule plug in
	// here. An error aborts training.
	AfterStep func(epoch int) error
}

// DefaultConfig returns 300 epochs of Adam with lr 1e-3 and weight
// decay 1e-5, best-validation selection, no early stopping, no logging.
func DefaultConfig() Config {
	a := DefaultAdamConfig()
	a.WeightDecay = 1e-5
	return Config{Epochs: 300, Adam: a, Select: SelectBestVal}
}

// Validate checks every field.
func (c Config) Validate() error {
	if c.Epochs <= 0 {
		return fmt.Errorf("Epochs = %d, want > 0", c.Epochs)
	}
	if err := c.Adam.Validate(); err != nil {
		return fmt.Errorf("Adam: %w", err)
	}
	if err := c.validateSelection(); err != nil {
		return err
	}
	if c.Patience < 0 {
		return fmt.Errorf("Patience = %d, want >= 0 (0 disables early stopping)", c.Patience)
	}
	if c.SelectAfter < 0 || c.SelectAfter >= c.Epochs {
		return fmt.Errorf("SelectAfter = %d, want in [0, Epochs = %d)", c.SelectAfter, c.Epochs)
	}
	if c.LogEvery < 0 {
		return fmt.Errorf("LogEvery = %d, want >= 0", c.LogEvery)
	}
	if c.LogEvery > 0 && c.Log == nil {
		return fmt.Errorf("LogEvery = %d but Log is nil", c.LogEvery)
	}
	return nil
}

// EpochStats describes one epoch. Loss, CE and Extra come from the
// training forward pass (dropout on, parameters before the update); the
// accuracies and ValLoss from an evaluation pass after the update.
type EpochStats struct {
	Epoch    int     // 1-based
	Loss     float64 // CE + Extra
	CE       float64 // cross-entropy on the training nodes
	Extra    float64 // ExtraLoss's value (0 without one)
	TrainAcc float64 // accuracy on Train, in [0, 1]
	ValAcc   float64 // accuracy on Val (0 when Val is empty)
	ValLoss  float64 // cross-entropy on Val (0 when Val is empty)
	// ValAUC is the ROC AUC on Val from the logits: class 1's for two
	// classes, the macro one-vs-rest AUC for more (see SelectValAUC). It is
	// computed when Config.Select needs it (Selection.NeedsAUC), 0
	// otherwise, and 0 when Val is empty or a class has no node in it.
	ValAUC float64
	// ValDP is the validation ΔDP of the argmax decisions (the gap
	// between the groups' rates of predicting class 1), when Task.Sens is
	// set; 0 otherwise.
	ValDP float64
	Best  bool // this epoch is the best so far
	// StepTime and EvalTime are the wall-clock times of the training step
	// (forward, backward, Adam) and of the evaluation pass.
	StepTime, EvalTime time.Duration
}

// Result reports a training run.
type Result struct {
	// Epochs is the number of epochs run (less than configured after early
	// stopping or ErrStop).
	Epochs int
	// Best is the best epoch by Config.Select (by validation accuracy for
	// SelectLast; the last epoch when Val is empty), Last the final one.
	Best, Last EpochStats
	// History holds every epoch's statistics.
	History []EpochStats
	// Stopped reports early stopping (Patience) or ErrStop.
	Stopped bool
	// BestParams and LastParams are copies of the learnables' values at the
	// best and the last epoch, in Learnables() order (see SetParams).
	BestParams, LastParams []*tensor.Dense
	// Selected is the set left in the model.
	Selected Selection
}

// Fit trains model on task with full-batch Adam and returns the run's
// statistics. The model's learnables must be in task.Graph, and the model
// must have been built with task.Phase. It is [NewTrainer] followed by
// [Trainer.Epoch] run by a [Loop]: cfg.Epochs epochs (fewer after early
// stopping or [ErrStop]), the progress output, and the parameter
// selection of cfg.Select. At the end the phase is left in evaluation
// mode and the model holds the chosen parameters.
//
// Fit returns the errors of NewTrainer and Trainer.Epoch, OnEpoch's
// errors other than ErrStop (wrapped; then the model holds the parameters
// of the failing epoch), and [ErrUndefinedSelection] (wrapped) for
// SelectValAUC when a class has no validation node. Calling Fit again continues from the model's
// current parameters with fresh Adam moments. Cancelling ctx stops the
// run before its next epoch with an error wrapping ctx.Err(); the model
// then holds the last epoch's parameters.
func Fit(ctx context.Context, model layers.Model, task *Task, cfg Config) (*Result, error) {
	tr, err := NewTrainer(model, task, cfg)
	if err != nil {
		return nil, err
	}
	defer tr.Close()
	loop := &Loop{Epoch: func(int) (EpochStats, error) { return tr.Epoch() }, Params: tr.params,
		Labels: task.Labels, Val: task.Val, Classes: task.Classes}
	res, err := loop.Run(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("train: %w", err)
	}
	return res, nil
}

// Trainer runs training epochs one at a time; Train drives it. Use it
// directly to interleave other work with the epochs (for example an
// adversary's own steps) or to time them.
type Trainer struct {
	task          *Task
	params        G.Nodes
	trainM, evalM G.VM
	adam          *Adam
	out           *readouts
	logits        *G.Node
	epoch         int
	afterStep     func(int) error
	auc           bool // Evaluate computes ValAUC
}

// readouts holds the values the machines' Read nodes write. It is kept
// apart from Trainer on purpose: a Read node points to where it writes,
// the graph holds the Read nodes and each tape machine holds the graph.
// Were the destinations fields of Trainer, the cycle Trainer → machine →
// graph → Trainer would run through a tape machine, which carries a
// finalizer, and the Go runtime never collects a cycle that holds an
// object with a finalizer: every training would leak its whole graph.
type readouts struct {
	ce, extra, logits G.Value
}

// NewTrainer builds the logits (model.Forward(task.X)), the mean
// cross-entropy over task.Train plus cfg.ExtraLoss, and the gradients of
// that cost with respect to the learnables only. It compiles a tape
// machine on that subgraph alone (no gradient for X or any other node is
// computed) and a second machine that evaluates the logits. Only the
// Epochs-independent fields of cfg are used here (Adam, ExtraLoss,
// AfterStep, and Select: whether Evaluate computes the AUC).
//
// It returns an error for an invalid configuration or task, a model
// without learnables or with learnables outside task.Graph, a model whose
// output is not n × task.Classes of X's dtype, or an ExtraLoss that fails
// or is not a scalar of that dtype.
func NewTrainer(model layers.Model, task *Task, cfg Config) (*Trainer, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("train: config: %w", err)
	}
	if err := task.Validate(); err != nil {
		return nil, fmt.Errorf("train: task: %w", err)
	}
	if err := checkPhase(model, task); err != nil {
		return nil, err
	}
	params := model.Learnables()
	if len(params) == 0 {
		return nil, fmt.Errorf("train: the model has no learnables")
	}
	for _, p := range params {
		if p.Graph() != task.Graph {
			return nil, fmt.Errorf("train: learnable %q (node %d) is not in the task's graph", p.Name(), p.ID())
		}
	}
	logits, err := forwardLogits(model, task)
	if err != nil {
		return nil, fmt.Errorf("train: %w", err)
	}
	ce, err := layers.CrossEntropy(logits, task.Labels, task.Train)
	if err != nil {
		return nil, fmt.Errorf("train: %w", err)
	}
	tr := &Trainer{task: task, params: params, logits: logits, afterStep: cfg.AfterStep, out: &readouts{}, auc: cfg.Select.NeedsAUC()}
	cost := ce
	reads := G.Nodes{G.Read(ce, &tr.out.ce)}
	if cfg.ExtraLoss != nil {
		extra, err := cfg.ExtraLoss(logits)
		if err != nil {
			return nil, fmt.Errorf("train: ExtraLoss: %w", err)
		}
		if extra == nil || !extra.IsScalar() || extra.Dtype() != logits.Dtype() || extra.Graph() != task.Graph {
			return nil, fmt.Errorf("train: ExtraLoss returned %v, want a %v scalar node in the task's graph", opkit.DescribeNode(extra), logits.Dtype())
		}
		if cost, err = G.Add(ce, extra); err != nil {
			return nil, fmt.Errorf("train: adding ExtraLoss: %w", err)
		}
		reads = append(reads, G.Read(extra, &tr.out.extra))
	}
	grads, err := G.Grad(cost, params...)
	if err != nil {
		return nil, fmt.Errorf("train: gradients: %w", err)
	}
	opkit.FollowBuffers(task.Graph) // the gradients' ops reuse buffers as the graph's do
	if tr.adam, err = NewAdam(cfg.Adam, params); err != nil {
		return nil, fmt.Errorf("train: %w", err)
	}
	blas.Default() // fairmp's BLAS unless the program chose one
	tr.trainM = G.NewTapeMachine(task.Graph.SubgraphRoots(append(reads, grads...)...), G.BindDualValues(params...))
	tr.evalM = G.NewTapeMachine(task.Graph.SubgraphRoots(G.Read(logits, &tr.out.logits)))
	return tr, nil
}

// Logits returns the logits node the trainer built.
func (t *Trainer) Logits() *G.Node { return t.logits }

// Close releases the machines and their buffers, and the buffers the
// graph's ops keep between runs; the Trainer cannot run after it. Closing
// twice is harmless. A Trainer that is never closed is still collected
// once unreachable, with its machines.
func (t *Trainer) Close() {
	if t.trainM != nil {
		t.trainM.Close()
		opkit.ReleaseGraph(t.task.Graph)
	}
	if t.evalM != nil {
		t.evalM.Close()
	}
	t.trainM, t.evalM, t.out = nil, nil, &readouts{}
}

// Step runs one training step (zeroing of the gradients, forward and
// backward with the phase in training mode, one Adam update, then the
// AfterStep hook) and returns the epoch number and the losses of that
// forward pass in the stats (accuracies are left 0). After Step each
// learnable's Grad() holds the gradient of that step alone.
func (t *Trainer) Step() (st EpochStats, err error) {
	if t.trainM == nil {
		return EpochStats{}, ErrClosed
	}
	t.epoch++
	st = EpochStats{Epoch: t.epoch}
	start := time.Now()
	defer func() { st.StepTime = time.Since(start) }()
	// The machine adds each run's gradients into the bound dual values:
	// zero them first, or this step would use the sum over all steps.
	if err := zeroGrads(t.params); err != nil {
		return st, fmt.Errorf("epoch %d: %w", t.epoch, err)
	}
	t.task.Phase.SetTraining(true)
	defer t.task.Phase.SetTraining(false)
	if err := t.trainM.RunAll(); err != nil {
		return st, fmt.Errorf("epoch %d: training step: %w", t.epoch, err)
	}
	defer t.trainM.Reset()
	if st.CE, err = opkit.Scalar(t.out.ce); err != nil {
		return st, fmt.Errorf("epoch %d: loss: %w", t.epoch, err)
	}
	if t.out.extra != nil {
		if st.Extra, err = opkit.Scalar(t.out.extra); err != nil {
			return st, fmt.Errorf("epoch %d: extra loss: %w", t.epoch, err)
		}
	}
	st.Loss = st.CE + st.Extra
	if err := t.adam.Step(); err != nil {
		return st, fmt.Errorf("epoch %d: %w", t.epoch, err)
	}
	if t.afterStep != nil {
		if err := t.afterStep(t.epoch); err != nil {
			return st, fmt.Errorf("epoch %d: AfterStep: %w", t.epoch, err)
		}
	}
	return st, nil
}

// zeroGrads zeroes the gradients bound to params. Before the first run
// no gradient is bound yet, and there is nothing to zero.
func zeroGrads(params G.Nodes) error {
	for _, p := range params {
		g, err := p.Grad()
		if err != nil {
			return fmt.Errorf("gradient of %q (node %d): %w", p.Name(), p.ID(), err)
		}
		if g == nil {
			continue
		}
		d, err := opkit.Dense(g)
		if err != nil {
			return fmt.Errorf("gradient of %q (node %d): %w", p.Name(), p.ID(), err)
		}
		d.Zero()
	}
	return nil
}

// Evaluate runs the model in evaluation mode and fills st's TrainAcc,
// ValAcc, ValLoss, ValDP and, when the configuration's selection needs
// it, ValAUC.
func (t *Trainer) Evaluate(st *EpochStats) error {
	if t.evalM == nil {
		return ErrClosed
	}
	start := time.Now()
	defer func() { st.EvalTime = time.Since(start) }()
	t.task.Phase.SetTraining(false)
	if err := t.evalM.RunAll(); err != nil {
		return fmt.Errorf("epoch %d: evaluation: %w", st.Epoch, err)
	}
	defer t.evalM.Reset()
	z, err := opkit.Dense(t.out.logits)
	if err != nil {
		return fmt.Errorf("epoch %d: logits: %w", st.Epoch, err)
	}
	st.TrainAcc = opkit.AccIdx(z, t.task.Labels, t.task.Train, t.task.Classes)
	if len(t.task.Val) > 0 {
		st.ValAcc, st.ValLoss = opkit.EvalIdx(z, t.task.Labels, t.task.Val, t.task.Classes)
		if t.auc {
			st.ValAUC, _ = valauc.Of(z, t.task.Labels, t.task.Val, t.task.Classes)
		}
		if t.task.Sens != nil {
			st.ValDP = opkit.SelectionGap(z, t.task.Sens, t.task.Val, t.task.Classes)
		}
	}
	return nil
}

// Epoch is Step followed by Evaluate.
func (t *Trainer) Epoch() (EpochStats, error) {
	st, err := t.Step()
	if err != nil {
		return st, err
	}
	return st, t.Evaluate(&st)
}

// forwardLogits builds model.Forward(task.X) and checks its shape.
func forwardLogits(model layers.Model, task *Task) (*G.Node, error) {
	logits, err := model.Forward(task.X)
	if err != nil {
		return nil, err
	}
	n := task.X.Shape()[0]
	if s := logits.Shape(); len(s) != 2 || s[0] != n || s[1] != task.Classes || logits.Dtype() != task.X.Dtype() {
		switch {
		case len(s) == 2 && s[0] == n && s[1] != task.Classes:
			return nil, fmt.Errorf("the %T outputs %d classes and Task.Classes is %d: build the model for the task's classes", model, s[1], task.Classes)
		case logits.Dtype() != task.X.Dtype():
			return nil, fmt.Errorf("the %T outputs %v logits and the task's features are %v: build the model and FeatureNode with one dtype", model, logits.Dtype(), task.X.Dtype())
		}
		return nil, fmt.Errorf("the %T outputs a %v array of shape %v, want %d × %d (nodes × Task.Classes)", model, logits.Dtype(), s, n, task.Classes)
	}
	return logits, nil
}

// snapshot returns copies of the nodes' values.
func snapshot(params G.Nodes) []*tensor.Dense {
	out := make([]*tensor.Dense, len(params))
	for i, p := range params {
		out[i] = p.Value().(*tensor.Dense).Clone().(*tensor.Dense)
	}
	return out
}

// copyParams copies the nodes' values into dst (same shapes).
func copyParams(dst []*tensor.Dense, params G.Nodes) {
	for i, p := range params {
		copyData(dst[i], p.Value().(*tensor.Dense))
	}
}

func copyData(dst, src *tensor.Dense) {
	switch d := dst.Data().(type) {
	case []float64:
		copy(d, src.Data().([]float64))
	case []float32:
		copy(d, src.Data().([]float32))
	}
}

// SetParams copies values into model's learnables (in Learnables()
// order), e.g. Result.LastParams after a best-validation run. It returns an
// error on a count, dtype or shape mismatch, before changing anything.
func SetParams(model layers.Model, values []*tensor.Dense) error {
	params := model.Learnables()
	if len(values) != len(params) {
		return fmt.Errorf("train: SetParams: %d values for %d learnables", len(values), len(params))
	}
	for i, p := range params {
		w, ok := p.Value().(*tensor.Dense)
		if !ok || values[i] == nil || values[i].Dtype() != w.Dtype() || !values[i].Shape().Eq(w.Shape()) {
			return fmt.Errorf("train: SetParams: value %d is %v, want %v %v for %q", i, describeDense(values[i]), p.Dtype(), p.Shape(), p.Name())
		}
	}
	for i, p := range params {
		copyData(p.Value().(*tensor.Dense), values[i])
	}
	return nil
}

func describeDense(d *tensor.Dense) string {
	if d == nil {
		return "nil"
	}
	return fmt.Sprintf("%v %v", d.Dtype(), d.Shape())
}
