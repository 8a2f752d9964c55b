package fairtrain

import (
	"fmt"

	"github.com/fairmp/fairmp/graph"
	"github.com/fairmp/fairmp/internal/blas"
	"github.com/fairmp/fairmp/internal/opkit"
	"github.com/fairmp/fairmp/layers"
	"github.com/fairmp/fairmp/layers/minibatch"
	"github.com/fairmp/fairmp/layers/train"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// AdversaryConfig configures adversarial debiasing: an adversary MLP
// (c → Hidden → … → 1 with ReLU, Layers linear layers; the 2 → 32
// → 32 → 32 → 1 for a binary task) reads the model's softmax output of
// each training node with a known group and predicts the group s ∈ {0, 1}
// through a sigmoid. Its loss is the mean binary cross-entropy
// bceWithLogits (stable logits form). The classifier's loss is
//
//	CE − w_t · BCE(adversary(softmax(z)), s),
//
// which rewards outputs from which the adversary cannot recover s.
//
// The schedule:
//
// The schedule runs inside train.Fit's epochs (one classifier step per
// epoch) through [train.Config].AfterStep:
//
//   - Epochs 1..PretrainClassifier: the classifier trains on CE alone
//     (w_t = 0).
//   - After the step of epoch PretrainClassifier: the adversary takes
//     PretrainAdversary steps on that step's outputs.
//   - Every later epoch t: one classifier step with w_t = Alpha against the
//     current adversary, then Steps adversary steps on the outputs of that
//     classifier step.
//
// The adversary trains on the outputs of the classifier's training forward
// pass (dropout on, parameters before that step's update), detached: its
// steps never change the classifier. It has its own Adam optimiser (Adam)
// and is initialised from Seed. Apply sets [train.Config].SelectAfter to at
// least PretrainClassifier, so best-validation selection never picks a
// pre-training epoch, and requires Epochs > PretrainClassifier. With α = 0
// the adversary still trains but the classifier's parameters are
// bit-identical to plain training.
type AdversaryConfig struct {
	// Alpha is the fairness weight α (finite, >= 0). Default 1.
	Alpha float64
	// PretrainClassifier is the number of epochs on CE alone before the
	// adversary starts (>= 1: the adversary needs outputs to train on).
	// Default 70.
	PretrainClassifier int
	// PretrainAdversary is the number of adversary steps after the
	// classifier's pre-training (>= 0). Default 30.
	PretrainAdversary int
	// Steps is the number of adversary steps after each later classifier
	// step (>= 1). Default 5.
	Steps int
	// Hidden is the adversary's hidden width and Layers its number of
	// linear layers (>= 1). Defaults 32 and 4 (three hidden layers).
	Hidden, Layers int
	// Adam configures the adversary's optimiser. Default lr 1e-3, no
	// weight decay (PyTorch's defaults).
	Adam train.AdamConfig
	// Seed seeds the adversary's initialisation. Default 1.
	Seed int64
	// Progress, if set, is called after every adversary step with the
	// classifier's epoch and the adversary's loss (BCE) at that step.
	Progress func(epoch int, loss float64)
}

// DefaultAdversaryConfig returns α = 1, 70 classifier and 30 adversary
// pre-training steps, then 5 adversary steps per classifier step, an
// adversary 2 → 32 → 32 → 32 → 1 (for two classes) with Adam lr 1e-3, seed 1.
func DefaultAdversaryConfig() AdversaryConfig {
	return AdversaryConfig{Alpha: 1, PretrainClassifier: 70, PretrainAdversary: 30, Steps: 5,
		Hidden: 32, Layers: 4, Adam: train.DefaultAdamConfig(), Seed: 1}
}

// Name returns "adversary".
func (c AdversaryConfig) Name() string { return "adversary" }

// Weight returns Alpha.
func (c AdversaryConfig) Weight() float64 { return c.Alpha }

// Validate checks every field.
func (c AdversaryConfig) Validate() error {
	if err := checkAlpha(c.Alpha); err != nil {
		return err
	}
	if c.PretrainClassifier < 1 {
		return fmt.Errorf("PretrainClassifier = %d, want >= 1", c.PretrainClassifier)
	}
	if c.PretrainAdversary < 0 {
		return fmt.Errorf("PretrainAdversary = %d, want >= 0", c.PretrainAdversary)
	}
	if c.Steps < 1 {
		return fmt.Errorf("Steps = %d, want >= 1", c.Steps)
	}
	if c.Hidden < 1 || c.Layers < 1 {
		return fmt.Errorf("Hidden = %d, Layers = %d, want both >= 1", c.Hidden, c.Layers)
	}
	if err := c.Adam.Validate(); err != nil {
		return fmt.Errorf("Adam: %w", err)
	}
	return nil
}

func (c AdversaryConfig) mlp(name string, in int, dt tensor.Dtype) layers.MLPConfig {
	mc := layers.DefaultMLPConfig(in, 1)
	mc.Name, mc.Hidden, mc.Layers, mc.Dropout, mc.Dtype, mc.Seed = name, c.Hidden, c.Layers, 0, dt, c.Seed
	return mc
}

// Apply adds the adversarial term and schedule to tc. It returns an error
// for an invalid configuration or task, a sens of the wrong length, a
// sensitive attribute that is not binary (0/1, −1 unknown) with both
// groups among the training nodes, or tc.Epochs <= PretrainClassifier.
func (c AdversaryConfig) Apply(tc train.Config, task *train.Task, sens []int) (train.Config, error) {
	if err := c.Validate(); err != nil {
		return tc, fmt.Errorf("fairtrain: adversary: %w", err)
	}
	n, err := checkTask("adversary", task, sens)
	if err != nil {
		return tc, err
	}
	if _, _, err := twoGroups("adversary", task.Train, sens); err != nil {
		return tc, err
	}
	if tc.Epochs <= c.PretrainClassifier {
		return tc, fmt.Errorf("fairtrain: adversary: Epochs = %d, want > PretrainClassifier = %d (else the adversary never acts)", tc.Epochs, c.PretrainClassifier)
	}
	var rows, targets []int
	for _, i := range task.Train {
		if sens[i] >= 0 {
			rows = append(rows, i)
			targets = append(targets, sens[i])
		}
	}
	a := &adversary{cfg: c, rows: rows, targets: targets, n: n, lossV: new(G.Value)}
	tc.SelectAfter = max(tc.SelectAfter, c.PretrainClassifier)
	tc = withExtra(tc, a.build)
	return withAfterStep(tc, a.afterStep), nil
}

// adversary is the state of one adversarial training run.
type adversary struct {
	cfg           AdversaryConfig
	rows, targets []int
	n             int

	weight  *G.Node      // w_t, a scalar input of the classifier's graph
	dt      tensor.Dtype //
	capt    *captureOp   // the classifier step's adversary inputs
	inCls   *layers.MLP  // the adversary inside the classifier's graph
	inTrain *layers.MLP  // the same adversary in its own training graph
	pin     *G.Node      // its input
	m       G.VM
	adam    *train.Adam
	// lossV is where the adversary graph's Read node writes. It is a
	// separate allocation, not a field of adversary: a Read node pointing
	// into adversary would close the cycle adversary → machine → graph →
	// adversary through the tape machine's finalizer, which the Go runtime
	// never collects.
	lossV *G.Value
}

// build adds −w·BCE(adversary(softmax(z[rows])), s) to the classifier's
// graph and builds the adversary's own training graph.
func (a *adversary) build(z *G.Node) (*G.Node, error) {
	sh := z.Shape()
	if len(sh) != 2 || sh[0] != a.n {
		return nil, fmt.Errorf("fairtrain: adversary: logits %q have shape %v, want %d × classes", z.Name(), sh, a.n)
	}
	c, m := sh[1], len(a.rows)
	a.dt = z.Dtype()
	vals := make([]float64, m)
	cols := make([]int, m)
	rs := make([]int, m)
	for k, i := range a.rows {
		rs[k], cols[k], vals[k] = k, i, 1
	}
	pc, capt, err := selectedSoftmax(z, a.n, rs, cols, vals)
	if err != nil {
		return nil, err
	}
	a.capt = capt
	if a.inCls, err = layers.NewMLP(z.Graph(), nil, a.cfg.mlp(fmt.Sprintf("fair.adversary#%d", capt.id), c, a.dt), nil); err != nil {
		return nil, fmt.Errorf("fairtrain: adversary: %w", err)
	}
	logit, err := a.inCls.Forward(pc)
	if err != nil {
		return nil, fmt.Errorf("fairtrain: adversary: %w", err)
	}
	bce, err := bceWithLogits(logit, a.targets)
	if err != nil {
		return nil, err
	}
	a.weight = G.NewScalar(z.Graph(), a.dt, G.WithName(fmt.Sprintf("fair.adversary#%d.weight", capt.id)), G.WithValue(scalarValue(a.dt, 0)))
	wb, err := G.Mul(a.weight, bce)
	if err != nil {
		return nil, fmt.Errorf("fairtrain: adversary: %w", err)
	}
	extra, err := G.Neg(wb)
	if err != nil {
		return nil, fmt.Errorf("fairtrain: adversary: %w", err)
	}
	return extra, a.buildTrainer(c)
}

// selectedSoftmax returns the row softmax of the rows of z (n rows) that
// the selection matrix (rs, cols, vals: row k of it picks row cols[k] of
// z) picks, captured for the adversary's own training (capture): what
// the adversary sees, full batch and per batch alike.
func selectedSoftmax(z *G.Node, n int, rs, cols []int, vals []float64) (*G.Node, *captureOp, error) {
	sel, err := graph.NewMatrix(len(rs), n, rs, cols, vals)
	if err != nil {
		return nil, nil, fmt.Errorf("fairtrain: adversary: selection matrix: %w", err)
	}
	zs, err := layers.SpMM(sel, z)
	if err != nil {
		return nil, nil, fmt.Errorf("fairtrain: adversary: %w", err)
	}
	p, err := G.SoftMax(zs)
	if err != nil {
		return nil, nil, fmt.Errorf("fairtrain: adversary: %w", err)
	}
	pc, capt, err := capture(p)
	if err != nil {
		return nil, nil, fmt.Errorf("fairtrain: adversary: %w", err)
	}
	return pc, capt, nil
}

// buildTrainer builds the adversary's own graph: input P (m × c), the
// adversary (same configuration and seed, hence the same initial values),
// its BCE and gradients, a pruned machine and an Adam optimiser.
func (a *adversary) buildTrainer(c int) error {
	g := G.NewGraph()
	m := len(a.rows)
	a.pin = G.NewMatrix(g, a.dt, G.WithShape(m, c), G.WithName("p"), G.WithValue(opkit.Alloc(a.dt, m, c)))
	var err error
	if a.inTrain, err = layers.NewMLP(g, nil, a.cfg.mlp("adversary", c, a.dt), nil); err != nil {
		return fmt.Errorf("fairtrain: adversary: %w", err)
	}
	logit, err := a.inTrain.Forward(a.pin)
	if err != nil {
		return fmt.Errorf("fairtrain: adversary: %w", err)
	}
	bce, err := bceWithLogits(logit, a.targets)
	if err != nil {
		return err
	}
	a.m, a.adam, err = sideTrainer(g, bce, a.lossV, a.inTrain.Learnables(), a.cfg.Adam, "adversary")
	return err
}

// sideTrainer builds what trains a side model of its own graph g (an
// adversary) on loss: the gradients of params, a machine pruned to the
// loss (read into lossV) and them, and an Adam optimiser.
func sideTrainer(g *G.ExprGraph, loss *G.Node, lossV *G.Value, params G.Nodes, cfg train.AdamConfig, what string) (G.VM, *train.Adam, error) {
	grads, err := G.Grad(loss, params...)
	if err != nil {
		return nil, nil, fmt.Errorf("fairtrain: %s: gradients: %w", what, err)
	}
	adam, err := train.NewAdam(cfg, params)
	if err != nil {
		return nil, nil, fmt.Errorf("fairtrain: %s: %w", what, err)
	}
	blas.Default() // fairmp's BLAS unless the program chose one
	return G.NewTapeMachine(g.SubgraphRoots(append(G.Nodes{G.Read(loss, lossV)}, grads...)...), G.BindDualValues(params...)), adam, nil
}

func (a *adversary) afterStep(epoch int) error {
	p := a.cfg.PretrainClassifier
	switch {
	case epoch < p:
		return nil
	case epoch == p:
		if err := a.train(epoch, a.cfg.PretrainAdversary); err != nil {
			return err
		}
		return G.Let(a.weight, scalarValue(a.dt, a.cfg.Alpha))
	default:
		return a.train(epoch, a.cfg.Steps)
	}
}

// adversaryPass runs the adversary's machine m once (its loss, read into
// lossV, and gradients), reports the loss to progress (nil: none) and
// resets m: a step of the adversary before its optimiser's, full batch
// and per batch alike.
func adversaryPass(m G.VM, lossV *G.Value, progress func(epoch int, loss float64), epoch int) error {
	if err := m.RunAll(); err != nil {
		return fmt.Errorf("fairtrain: adversary step: %w", err)
	}
	l, err := opkit.Scalar(*lossV)
	if err != nil {
		return fmt.Errorf("fairtrain: adversary loss: %w", err)
	}
	if progress != nil {
		progress(epoch, l)
	}
	m.Reset()
	return nil
}

// train runs k adversary steps on the captured outputs and copies the
// adversary's parameters into the classifier's graph.
func (a *adversary) train(epoch, k int) error {
	if a.m == nil {
		return fmt.Errorf("fairtrain: adversary: not built (the configuration from Apply must go through train.Fit)")
	}
	a.capt.copyTo(a.pin)
	params := a.inTrain.Learnables()
	for s := 0; s < k; s++ {
		if err := adversaryPass(a.m, a.lossV, a.cfg.Progress, epoch); err != nil {
			return err
		}
		if err := a.adam.Step(); err != nil {
			return fmt.Errorf("fairtrain: adversary: %w", err)
		}
		for _, q := range params {
			g, err := q.Grad()
			if err != nil {
				return fmt.Errorf("fairtrain: adversary: %w", err)
			}
			d, err := opkit.Dense(g)
			if err != nil {
				return fmt.Errorf("fairtrain: adversary: %w", err)
			}
			d.Zero()
		}
	}
	vals := make([]*tensor.Dense, len(params))
	for i, q := range params {
		vals[i] = q.Value().(*tensor.Dense)
	}
	return train.SetParams(a.inCls, vals)
}

// MiniBatch returns the adversary's per-batch form for minibatch.Fit
// (Config.Method), the full-batch schedule with a batch in place of the
// training set, and tc with SelectAfter raised to PretrainClassifier:
//
//   - epochs 1..PretrainClassifier − 1: cross-entropy alone;
//   - epoch PretrainClassifier: cross-entropy alone (the term's weight is
//     0), and after each batch's step the adversary takes
//     PretrainAdversary steps on that batch's outputs;
//   - every later epoch: each batch's loss is CE − α·BCE(adversary(
//     softmax(z)), s) over its targets of known group, with the current
//     adversary, and after its step the adversary takes Steps steps on
//     that batch's outputs (detached, dropout on, parameters before the
//     step).
//
// The classifier's term is an estimate per batch: the adversary's mean
// BCE over the batch's nodes of known group is an unbiased estimate of
// its mean over the training nodes (for the adversary of that step), and
// the adversary itself trains by mini-batch Adam, on every batch's
// outputs in turn. With one batch holding every training node the run is
// the full-batch schedule (exact). The adversary keeps one Adam
// optimiser across batches; a batch without a node of known group skips
// the term and the adversary's steps.
//
// It returns an error for an invalid configuration, a task without Sens,
// an attribute that is not binary (0/1, −1 unknown) with both groups
// among the training nodes, or tc.Epochs <= PretrainClassifier.
func (c AdversaryConfig) MiniBatch(tc train.Config, task *minibatch.Task) (train.Config, minibatch.Term, error) {
	if err := c.Validate(); err != nil {
		return tc, nil, fmt.Errorf("fairtrain: adversary: %w", err)
	}
	sens, err := batchSens("adversary", task)
	if err != nil {
		return tc, nil, err
	}
	if _, _, err := twoGroups("adversary", task.Train, sens); err != nil {
		return tc, nil, err
	}
	if tc.Epochs <= c.PretrainClassifier {
		return tc, nil, fmt.Errorf("fairtrain: adversary: Epochs = %d, want > PretrainClassifier = %d (else the adversary never acts)", tc.Epochs, c.PretrainClassifier)
	}
	tc.SelectAfter = max(tc.SelectAfter, c.PretrainClassifier)
	return tc, &advTerm{cfg: c, sens: sens, lossV: new(G.Value)}, nil
}

// advTerm is the adversary's per-batch form: the master adversary (in a
// graph of its own, updated by its Adam) and the latest batch's captured
// outputs.
type advTerm struct {
	cfg    AdversaryConfig
	sens   []int
	master *layers.MLP
	adam   *train.Adam
	c      int
	dt     tensor.Dtype
	// The latest batch: the captured softmax outputs of its rows of known
	// group and those groups (capt nil when the batch had no term).
	capt   *captureOp
	groups []int
	lossV  *G.Value // the side graph's Read destination (see adversary.lossV)
}

func (a *advTerm) values() []*tensor.Dense {
	ps := a.master.Learnables()
	out := make([]*tensor.Dense, len(ps))
	for i, p := range ps {
		out[i] = p.Value().(*tensor.Dense)
	}
	return out
}

func (a *advTerm) Loss(b *minibatch.Batch) (*G.Node, error) {
	a.capt, a.groups = nil, nil
	if b.Epoch < a.cfg.PretrainClassifier {
		return nil, nil
	}
	z := b.Logits
	sh := z.Shape()
	if len(sh) != 2 || sh[0] != len(b.Targets) {
		return nil, fmt.Errorf("fairtrain: adversary: logits %q have shape %v, want %d × classes", z.Name(), sh, len(b.Targets))
	}
	t, c := sh[0], sh[1]
	if a.master == nil {
		a.c, a.dt = c, z.Dtype()
		var err error
		if a.master, err = layers.NewMLP(G.NewGraph(), nil, a.cfg.mlp("adversary", c, a.dt), nil); err != nil {
			return nil, fmt.Errorf("fairtrain: adversary: %w", err)
		}
		if a.adam, err = train.NewAdam(a.cfg.Adam, a.master.Learnables()); err != nil {
			return nil, fmt.Errorf("fairtrain: adversary: %w", err)
		}
	}
	var rs, cols []int
	var vals []float64
	var groups []int
	for k, v := range b.Targets {
		if g := a.sens[v]; g >= 0 {
			rs, cols, vals = append(rs, len(rs)), append(cols, k), append(vals, 1)
			groups = append(groups, g)
		}
	}
	if len(groups) == 0 {
		return nil, nil
	}
	pc, capt, err := selectedSoftmax(z, t, rs, cols, vals)
	if err != nil {
		return nil, err
	}
	adv, err := layers.NewMLP(z.Graph(), nil, a.cfg.mlp(fmt.Sprintf("fair.adversary#%d", capt.id), c, a.dt), nil)
	if err != nil {
		return nil, fmt.Errorf("fairtrain: adversary: %w", err)
	}
	if err := train.SetParams(adv, a.values()); err != nil {
		return nil, fmt.Errorf("fairtrain: adversary: %w", err)
	}
	logit, err := adv.Forward(pc)
	if err != nil {
		return nil, fmt.Errorf("fairtrain: adversary: %w", err)
	}
	bce, err := bceWithLogits(logit, groups)
	if err != nil {
		return nil, err
	}
	w := 0.0 // the epoch of the adversary's pre-training: CE alone
	if b.Epoch > a.cfg.PretrainClassifier {
		w = a.cfg.Alpha
	}
	extra, err := scaled(-w, bce)
	if err != nil {
		return nil, fmt.Errorf("fairtrain: adversary: %w", err)
	}
	a.capt, a.groups = capt, groups
	return extra, nil
}

func (a *advTerm) AfterStep(b *minibatch.Batch, _ *tensor.Dense) error {
	if a.capt == nil {
		return nil
	}
	k := a.cfg.Steps
	if b.Epoch == a.cfg.PretrainClassifier {
		k = a.cfg.PretrainAdversary
	}
	return a.train(b.Epoch, k)
}

// train runs k steps of the master adversary on the latest batch's
// captured outputs, in a graph built for the batch's size.
func (a *advTerm) train(epoch, k int) error {
	if k == 0 {
		return nil
	}
	g := G.NewGraph()
	m := len(a.groups)
	pin := G.NewMatrix(g, a.dt, G.WithShape(m, a.c), G.WithName("p"), G.WithValue(opkit.Alloc(a.dt, m, a.c)))
	a.capt.copyTo(pin)
	adv, err := layers.NewMLP(g, nil, a.cfg.mlp("adversary", a.c, a.dt), nil)
	if err != nil {
		return fmt.Errorf("fairtrain: adversary: %w", err)
	}
	if err := train.SetParams(adv, a.values()); err != nil {
		return fmt.Errorf("fairtrain: adversary: %w", err)
	}
	logit, err := adv.Forward(pin)
	if err != nil {
		return fmt.Errorf("fairtrain: adversary: %w", err)
	}
	bce, err := bceWithLogits(logit, a.groups)
	if err != nil {
		return err
	}
	params := adv.Learnables()
	grads, err := G.Grad(bce, params...)
	if err != nil {
		return fmt.Errorf("fairtrain: adversary: gradients: %w", err)
	}
	blas.Default()
	vm := G.NewTapeMachine(g.SubgraphRoots(append(G.Nodes{G.Read(bce, a.lossV)}, grads...)...), G.BindDualValues(params...))
	defer vm.Close()
	gv := make([]G.Value, len(params))
	for s := 0; s < k; s++ {
		if err := adversaryPass(vm, a.lossV, a.cfg.Progress, epoch); err != nil {
			return err
		}
		for i, q := range params {
			var err error
			if gv[i], err = q.Grad(); err != nil {
				return fmt.Errorf("fairtrain: adversary: %w", err)
			}
		}
		if err := a.adam.StepWith(gv); err != nil {
			return fmt.Errorf("fairtrain: adversary: %w", err)
		}
		for _, v := range gv {
			d, err := opkit.Dense(v)
			if err != nil {
				return fmt.Errorf("fairtrain: adversary: %w", err)
			}
			d.Zero()
		}
		if err := train.SetParams(adv, a.values()); err != nil {
			return fmt.Errorf("fairtrain: adversary: %w", err)
		}
	}
	return nil
}
