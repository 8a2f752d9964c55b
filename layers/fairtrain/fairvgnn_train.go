package fairtrain

import (
	"context"
	"fmt"
	"math"
	"math/rand"
	"time"

	"github.com/fairmp/fairmp/graph"
	"github.com/fairmp/fairmp/internal/blas"
	"github.com/fairmp/fairmp/internal/opkit"
	"github.com/fairmp/fairmp/internal/valauc"
	"github.com/fairmp/fairmp/layers"
	"github.com/fairmp/fairmp/layers/fairness"
	"github.com/fairmp/fairmp/layers/train"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// FairVGNN's training run (see FairVGNNConfig for the schedule).

// vgnnRun is one FairVGNN training run. Each phase (discriminator,
// classifier, generator) has a gorgonia graph of its own, holding copies
// of the parameters it reads, its views and its loss: gorgonia's
// differentiation analyses the whole graph, and the gradient ops of one
// loss would make a second loss in the same graph fail to differentiate.
// The parameters themselves (the masters) are the model's, in the task's
// graph, and the discriminator's, in a graph of its own; before each step
// the phase copies them in, and its optimisers update the masters with
// the gradients of the copies (train.Adam.StepWith). The task's graph
// gets the model alone.
type vgnnRun struct {
	cfg   FairVGNNConfig
	model *MaskedEncoder
	task  *train.Task
	n, d  int
	dt    tensor.Dtype
	rng   *rand.Rand
	disc  *layers.Linear  // the discriminator's master
	masks []*tensor.Dense // the masks of the discriminator and classifier steps
	noise []*G.Node       // the noise of the generator steps' masks (inputs)
	views int             // masks per step (1 without a learned mask)

	d0, c0, g0                 *vgnnPhase // nil for a phase without steps
	adamE, adamC, adamD, adamG *train.Adam

	clampW   G.Nodes
	channels []int
	keepMean []float64

	// ax is Ã·X once a folded view computed it (see fairvgnn_fold.go),
	// axT its value once a view flow did.
	ax  layers.Value
	axT *tensor.Dense
	// unfolded makes every view read the masked features x ⊙ m, the
	// first propagation left in the passes: the computation before the
	// fold, for the tests that compare the two.
	unfolded bool
	// unshared runs the views with layers.Forward, each view's dropouts
	// drawing their masks (fairvgnn_flow.go), for the tests that compare
	// the two.
	unshared bool
	// auc makes the evaluation compute the validation AUC (the selection
	// reads it).
	auc bool
}

// vgnnPhase is one phase's graph and machine.
type vgnnPhase struct {
	g       *G.ExprGraph
	x       *G.Node
	body    layers.Model
	m       G.VM
	loss    *G.Value        // apart from the struct: see adversary.lossV
	fold    *G.Node         // the body's first weight when the views fold, else nil
	flow    bool            // the views run in a viewFlow (fairvgnn_flow.go)
	drops   []*sharedDrop   // the body's dropout masks, shared by the views (viewFlow)
	ax      *G.Node         // Ã·X in this graph, once a view flow folded
	dummies map[int]*G.Node // the width-only inputs of hopStep, by width
	copies  G.Nodes         // the parameters the phase reads
	masters G.Nodes         // their masters, in the same order
	groups  []vgnnGroup
}

// vgnnGroup is a set of a phase's parameter copies and the optimiser of
// their masters.
type vgnnGroup struct {
	adam  *train.Adam
	nodes G.Nodes
}

// fit trains FairVGNN (see Fit).
func (c FairVGNNConfig) Fit(ctx context.Context, backbone layers.Config, s fairness.Setup, tc train.Config) (*fairness.Fitted, error) {
	if err := checkFit(c, backbone, s); err != nil {
		return nil, err
	}
	task := s.Task
	if err := task.Validate(); err != nil {
		return nil, fmt.Errorf("fairtrain: fairvgnn: task: %w", err)
	}
	if err := tc.Validate(); err != nil {
		return nil, fmt.Errorf("fairtrain: fairvgnn: train config: %w", err)
	}
	n, d := task.X.Shape()[0], task.X.Shape()[1]
	known, err := binarySens("fairvgnn", s.Sens, n)
	if err != nil {
		return nil, err
	}
	enc, err := NewEncoder(task.Graph, s.Graph, bodyConfig(backbone, c.Hidden), task.Classes, task.Phase)
	if err != nil {
		return nil, fmt.Errorf("fairtrain: fairvgnn: %w", err)
	}
	r := &vgnnRun{cfg: c, task: task, n: n, d: d, dt: task.X.Dtype(), rng: rand.New(rand.NewSource(c.Seed)),
		model: &MaskedEncoder{enc: enc}}
	if err := r.build(s, known, tc.Adam); err != nil {
		return nil, err
	}
	defer r.close()
	res, err := r.train(ctx, tc)
	if err != nil {
		return nil, err
	}
	return &fairness.Fitted{Model: r.model, Result: res}, nil
}

// build creates the generator in the task's graph, the discriminator,
// the optimisers, the three phases and the clamping's weights and
// channels.
func (r *vgnnRun) build(s fairness.Setup, known []int, bodyAdam train.AdamConfig) error {
	c, task, enc := r.cfg, r.task, r.model.enc
	fail := func(err error) error { return fmt.Errorf("fairtrain: fairvgnn: %w", err) }
	var err error
	if c.FeatureMask {
		name := layers.BaseOf(enc.BodyConfig()).Name + ".fairvgnn.generator"
		if err := opkit.UniqueName(task.Graph, name); err != nil {
			return fail(err)
		}
		r.model.gen = G.NewMatrix(task.Graph, r.dt, G.WithShape(r.d, 2), G.WithName(name),
			G.WithValue(layers.GlorotUniform(r.rng, r.dt, r.d, 2)))
		r.views = c.Masks
		for range r.views {
			r.masks = append(r.masks, opkit.Alloc(r.dt, 1, r.d))
		}
	} else {
		r.views = 1
	}
	lc := layers.DefaultLinearConfig(c.Hidden, 1)
	lc.Name, lc.Dtype, lc.Seed = "discriminator", r.dt, c.Seed
	if r.disc, err = layers.NewLinear(G.NewGraph(), nil, lc, nil); err != nil {
		return fail(err)
	}
	if r.adamE, err = train.NewAdam(bodyAdam, enc.body.Learnables()); err != nil {
		return fail(err)
	}
	if r.adamC, err = train.NewAdam(c.ClassifierAdam, enc.head.Learnables()); err != nil {
		return fail(err)
	}
	if r.adamD, err = train.NewAdam(c.DiscriminatorAdam, r.disc.Learnables()); err != nil {
		return fail(err)
	}
	if c.FeatureMask {
		if r.adamG, err = train.NewAdam(c.GeneratorAdam, G.Nodes{r.model.gen}); err != nil {
			return fail(err)
		}
	}
	if c.DiscriminatorSteps > 0 {
		if r.d0, err = r.buildDiscriminator(s, known); err != nil {
			return err
		}
	}
	if r.c0, err = r.buildClassifier(s); err != nil {
		return err
	}
	if c.GeneratorSteps > 0 {
		if r.g0, err = r.buildGenerator(s); err != nil {
			return err
		}
	}
	if c.Clip > 0 {
		if r.clampW, err = inputWeights(enc.body, r.d); err != nil {
			return err
		}
		if c.ClipTopK > 0 {
			xd, err := opkit.Dense(task.X.Value())
			if err != nil {
				return fail(err)
			}
			r.channels = topCorrelated(f64s(xd), r.n, r.d, s.Sens, c.ClipTopK)
		} else {
			r.channels = make([]int, r.d)
			for j := range r.channels {
				r.channels[j] = j
			}
		}
	}
	r.keepMean = make([]float64, r.d)
	return nil
}

// newPhase returns a phase graph with the features and a copy of the
// body.
func (r *vgnnRun) newPhase(s fairness.Setup) (*vgnnPhase, error) {
	g := G.NewGraph()
	x := G.NewMatrix(g, r.dt, G.WithShape(r.n, r.d), G.WithName("x"), G.WithValue(r.task.X.Value()))
	body, err := layers.Build(g, s.Graph, r.model.enc.BodyConfig(), r.task.Phase)
	if err != nil {
		return nil, fmt.Errorf("fairtrain: fairvgnn: %w", err)
	}
	p := &vgnnPhase{g: g, x: x, body: body, loss: new(G.Value)}
	if !r.unfolded {
		p.fold = foldWeight(body, r.d)
	}
	p.flow = !r.unshared && viewFlowable(body, r.d)
	p.copyOf(body.Learnables(), r.model.enc.body.Learnables())
	return p, nil
}

// copyOf registers copies of masters.
func (p *vgnnPhase) copyOf(copies, masters G.Nodes) {
	p.copies = append(p.copies, copies...)
	p.masters = append(p.masters, masters...)
}

// linear returns a copy of the linear layer master in the phase's graph.
func (p *vgnnPhase) linear(master *layers.Linear, name string) (*layers.Linear, error) {
	lc := master.Config()
	lc.Name = name
	l, err := layers.NewLinear(p.g, nil, lc, nil)
	if err != nil {
		return nil, fmt.Errorf("fairtrain: fairvgnn: %w", err)
	}
	p.copyOf(l.Learnables(), master.Learnables())
	return l, nil
}

// maskInput returns the input node of the phase's mask k holding mask
// (nil without one).
func (p *vgnnPhase) maskInput(k int, mask *tensor.Dense) *G.Node {
	if mask == nil {
		return nil
	}
	return G.NewMatrix(p.g, mask.Dtype(), G.WithShape(mask.Shape()...), G.WithName(fmt.Sprintf("mask%d", k)), G.WithValue(mask))
}

// encode returns the body's representation of the view x ⊙ m (x without
// a mask): (Ã·X)·(m ⊙ W) for the first layer when the phase folds (see
// fairvgnn_fold.go), the body on the masked features otherwise.
//
// When the phase runs its views in a viewFlow (fairvgnn_flow.go), the
// views share their dropout masks.
func (r *vgnnRun) encode(p *vgnnPhase, m *G.Node) (*G.Node, error) {
	x, wm := p.x, p.fold
	var err error
	if m != nil && p.fold == nil {
		if x, err = maskColumns(p.x, m); err != nil {
			return nil, err
		}
	}
	if m != nil && p.fold != nil {
		if wm, err = maskRows(p.fold, m); err != nil {
			return nil, err
		}
	}
	switch {
	case p.flow:
		return (&viewFlow{r: r, p: p, in: x, wm: wm}).run()
	case p.fold != nil:
		return (&foldedBody{inner: p.body.(layers.BlockModel), wm: wm, ax: &r.ax}).Forward(p.x)
	}
	return p.body.Forward(x)
}

// finish compiles the phase's machine on loss with the gradients of its
// groups' parameters.
func (p *vgnnPhase) finish(loss *G.Node, groups ...vgnnGroup) error {
	p.groups = groups
	var params G.Nodes
	for _, gr := range groups {
		params = append(params, gr.nodes...)
	}
	grads, err := G.Grad(loss, params...)
	if err != nil {
		return fmt.Errorf("fairtrain: fairvgnn: gradients: %w", err)
	}
	blas.Default() // fairmp's BLAS unless the program chose one
	p.m = G.NewTapeMachine(p.g.SubgraphRoots(append(G.Nodes{G.Read(loss, p.loss)}, grads...)...), G.BindDualValues(params...))
	return nil
}

// mask returns the tensor of the epoch's mask k (nil without a learned
// mask).
func (r *vgnnRun) mask(k int) *tensor.Dense {
	if r.masks == nil {
		return nil
	}
	return r.masks[k]
}

// buildDiscriminator builds step 2: the mean over the epoch's masks of
// BCE(discriminator(h), s) over the known nodes.
func (r *vgnnRun) buildDiscriminator(s fairness.Setup, known []int) (*vgnnPhase, error) {
	p, err := r.newPhase(s)
	if err != nil {
		return nil, err
	}
	fail := func(err error) (*vgnnPhase, error) {
		return nil, fmt.Errorf("fairtrain: fairvgnn: discriminator: %w", err)
	}
	disc, err := p.linear(r.disc, "discriminator")
	if err != nil {
		return nil, err
	}
	targets := make([]int, len(known))
	for k, i := range known {
		targets[k] = s.Sens[i]
	}
	var sel *graph.Matrix
	if len(known) < r.n {
		if sel, err = selection(known, r.n); err != nil {
			return nil, err
		}
	}
	var bces G.Nodes
	for k := range r.views {
		h, err := r.encode(p, p.maskInput(k, r.mask(k)))
		if err != nil {
			return fail(err)
		}
		if sel != nil {
			if h, err = layers.SpMM(sel, h); err != nil {
				return fail(err)
			}
		}
		a, err := disc.Forward(h)
		if err != nil {
			return fail(err)
		}
		bce, err := bceWithLogits(a, targets)
		if err != nil {
			return nil, err
		}
		bces = append(bces, bce)
	}
	loss, err := meanOf(bces, 1)
	if err != nil {
		return nil, err
	}
	groups := []vgnnGroup{{r.adamD, disc.Learnables()}}
	if r.cfg.EncoderOnDiscriminator {
		groups = append(groups, vgnnGroup{r.adamE, p.body.Learnables()})
	}
	return p, p.finish(loss, groups...)
}

// buildClassifier builds step 3: the mean over the epoch's masks of the
// cross-entropy on the training nodes.
func (r *vgnnRun) buildClassifier(s fairness.Setup) (*vgnnPhase, error) {
	p, err := r.newPhase(s)
	if err != nil {
		return nil, err
	}
	fail := func(err error) (*vgnnPhase, error) {
		return nil, fmt.Errorf("fairtrain: fairvgnn: classifier: %w", err)
	}
	head, err := p.linear(r.model.enc.head, "head")
	if err != nil {
		return nil, err
	}
	var ces G.Nodes
	for k := range r.views {
		h, err := r.encode(p, p.maskInput(k, r.mask(k)))
		if err != nil {
			return fail(err)
		}
		z, err := head.Forward(h)
		if err != nil {
			return fail(err)
		}
		ce, err := layers.CrossEntropy(z, r.task.Labels, r.task.Train)
		if err != nil {
			return fail(err)
		}
		ces = append(ces, ce)
	}
	loss, err := meanOf(ces, 1)
	if err != nil {
		return nil, err
	}
	return p, p.finish(loss, vgnnGroup{r.adamE, p.body.Learnables()}, vgnnGroup{r.adamC, head.Learnables()})
}

// buildGenerator builds step 4: the mean over fresh masks of
// Alpha·MSE(σ(discriminator(h)), ½) + Ratio·MSE(m, 1), the masks drawn
// from a copy of the generator with noise inputs.
func (r *vgnnRun) buildGenerator(s fairness.Setup) (*vgnnPhase, error) {
	c := r.cfg
	p, err := r.newPhase(s)
	if err != nil {
		return nil, err
	}
	fail := func(err error) (*vgnnPhase, error) { return nil, fmt.Errorf("fairtrain: fairvgnn: generator: %w", err) }
	disc, err := p.linear(r.disc, "discriminator")
	if err != nil {
		return nil, err
	}
	var theta *G.Node
	if r.model.gen != nil {
		theta = G.NewMatrix(p.g, r.dt, G.WithShape(r.d, 2), G.WithName("generator"), G.WithValue(opkit.Alloc(r.dt, r.d, 2)))
		p.copyOf(G.Nodes{theta}, G.Nodes{r.model.gen})
	}
	var advs, pens G.Nodes
	for k := range r.views {
		var m *G.Node
		if theta != nil {
			l := G.NewMatrix(p.g, r.dt, G.WithShape(1, r.d), G.WithName(fmt.Sprintf("noise%d", k)), G.WithValue(opkit.Alloc(r.dt, 1, r.d)))
			r.noise = append(r.noise, l)
			if m, err = keepProbs(theta, l, c.Tau); err != nil {
				return nil, err
			}
			pen, err := maskPenalty(m)
			if err != nil {
				return fail(err)
			}
			pens = append(pens, pen)
		}
		h, err := r.encode(p, m)
		if err != nil {
			return fail(err)
		}
		a, err := disc.Forward(h)
		if err != nil {
			return fail(err)
		}
		adv, err := halfMSE(a)
		if err != nil {
			return nil, err
		}
		advs = append(advs, adv)
	}
	loss, err := meanOf(advs, c.Alpha)
	if err != nil {
		return nil, err
	}
	if len(pens) > 0 && c.Ratio > 0 {
		pen, err := meanOf(pens, c.Ratio)
		if err != nil {
			return nil, err
		}
		if loss, err = G.Add(loss, pen); err != nil {
			return fail(err)
		}
	}
	groups := []vgnnGroup{{r.adamE, p.body.Learnables()}}
	if theta != nil {
		groups = append(groups, vgnnGroup{r.adamG, G.Nodes{theta}})
	}
	return p, p.finish(loss, groups...)
}

// meanOf returns (w/len(xs))·Σ xs.
func meanOf(xs G.Nodes, w float64) (*G.Node, error) {
	sum := xs[0]
	for _, x := range xs[1:] {
		var err error
		if sum, err = G.Add(sum, x); err != nil {
			return nil, fmt.Errorf("fairtrain: fairvgnn: %w", err)
		}
	}
	return scaled(w/float64(len(xs)), sum)
}

// maskPenalty returns mean_j (m_j − 1)², the mask term.
func maskPenalty(m *G.Node) (*G.Node, error) {
	var one *G.Node
	if m.Dtype() == tensor.Float32 {
		one = G.NewConstant(float32(1))
	} else {
		one = G.NewConstant(1.0)
	}
	diff, err := G.Sub(m, one)
	if err != nil {
		return nil, err
	}
	sq, err := G.Square(diff)
	if err != nil {
		return nil, err
	}
	return G.Mean(sq)
}

func (r *vgnnRun) close() {
	for _, p := range []*vgnnPhase{r.d0, r.c0, r.g0} {
		if p != nil && p.m != nil {
			p.m.Close()
			opkit.ReleaseGraph(p.g)
		}
	}
}

// drawMasks draws the epoch's masks into the mask tensors and their mean
// per channel into keepMean (1 on every channel without a learned mask).
func (r *vgnnRun) drawMasks() {
	if r.model.gen == nil {
		for j := range r.keepMean {
			r.keepMean[j] = 1
		}
		return
	}
	clear(r.keepMean)
	t := f64s(r.model.gen.Value().(*tensor.Dense))
	invT, k := 1/r.cfg.Tau, float64(len(r.masks))
	m := make([]float64, r.d)
	for _, mt := range r.masks {
		for j := range m {
			m[j] = keepProb(t[2*j], t[2*j+1], logistic(r.rng), invT)
			r.keepMean[j] += m[j] / k
		}
		setDense(mt, m)
	}
}

// drawNoise draws the noise of the generator step's masks.
func (r *vgnnRun) drawNoise() {
	l := make([]float64, r.d)
	for _, node := range r.noise {
		for j := range l {
			l[j] = logistic(r.rng)
		}
		setDense(node.Value().(*tensor.Dense), l)
	}
}

// step runs one step of phase p: the masters copied in, the machine on
// zeroed gradients, then each group's optimiser on its masters with the
// copies' gradients. It returns the phase's loss.
func (r *vgnnRun) step(p *vgnnPhase) (float64, error) {
	for i, c := range p.copies {
		copyValue(c, p.masters[i])
	}
	for _, gr := range p.groups {
		if err := zeroGrad(gr.nodes); err != nil {
			return 0, err
		}
	}
	if err := p.m.RunAll(); err != nil {
		return 0, err
	}
	l, err := opkit.Scalar(*p.loss)
	p.m.Reset()
	if err != nil {
		return 0, fmt.Errorf("loss: %w", err)
	}
	for _, gr := range p.groups {
		grads := make([]G.Value, len(gr.nodes))
		for i, q := range gr.nodes {
			if grads[i], err = q.Grad(); err != nil {
				return 0, fmt.Errorf("gradient of %q: %w", q.Name(), err)
			}
		}
		if err := gr.adam.StepWith(grads); err != nil {
			return 0, err
		}
	}
	return l, nil
}

// copyValue copies src's value into dst's (same dtype and shape).
func copyValue(dst, src *G.Node) {
	switch s := src.Value().(*tensor.Dense).Data().(type) {
	case []float64:
		copy(dst.Value().(*tensor.Dense).Data().([]float64), s)
	case []float32:
		copy(dst.Value().(*tensor.Dense).Data().([]float32), s)
	}
}

// epoch runs one epoch's phases, the clamping and the evaluation.
func (r *vgnnRun) epoch(e int) (st train.EpochStats, err error) {
	c, task := r.cfg, r.task
	st.Epoch = e
	start := time.Now()
	r.drawMasks()
	task.Phase.SetTraining(true)
	defer task.Phase.SetTraining(false)
	lD, lC, lG := math.NaN(), math.NaN(), math.NaN()
	for range c.DiscriminatorSteps {
		if lD, err = r.step(r.d0); err != nil {
			return st, fmt.Errorf("discriminator step: %w", err)
		}
	}
	for range c.ClassifierSteps {
		if lC, err = r.step(r.c0); err != nil {
			return st, fmt.Errorf("classifier step: %w", err)
		}
	}
	for range c.GeneratorSteps {
		r.drawNoise()
		if lG, err = r.step(r.g0); err != nil {
			return st, fmt.Errorf("generator step: %w", err)
		}
	}
	task.Phase.SetTraining(false)
	if c.Clip > 0 {
		bound := make([]float64, r.d)
		for j, w := range r.keepMean {
			bound[j] = c.Clip * w
		}
		clampRows(r.clampW, bound, r.channels)
	}
	st.CE = lC
	if c.GeneratorSteps > 0 {
		st.Extra = lG
	}
	st.Loss = st.CE + st.Extra
	st.StepTime = time.Since(start)
	if c.Progress != nil {
		c.Progress(e, lD, lC, lG)
	}
	start = time.Now()
	z, err := train.Logits(r.model, task)
	if err != nil {
		return st, fmt.Errorf("evaluation: %w", err)
	}
	st.TrainAcc = opkit.AccIdx(z, task.Labels, task.Train, task.Classes)
	if len(task.Val) > 0 {
		st.ValAcc, st.ValLoss = opkit.EvalIdx(z, task.Labels, task.Val, task.Classes)
		if r.auc {
			st.ValAUC, _ = valauc.Of(z, task.Labels, task.Val, task.Classes)
		}
		if task.Sens != nil {
			st.ValDP = opkit.SelectionGap(z, task.Sens, task.Val, task.Classes)
		}
	}
	st.EvalTime = time.Since(start)
	return st, nil
}

// train runs tc.Epochs epochs in the library's training loop
// (train.Loop): the selection by tc.Select after SelectAfter, Patience,
// OnEpoch (ErrStop), the progress lines and the parameters left in the
// model.
func (r *vgnnRun) train(ctx context.Context, tc train.Config) (*train.Result, error) {
	task := r.task
	r.auc = tc.Select.NeedsAUC()
	loop := &train.Loop{
		Epoch: func(e int) (train.EpochStats, error) {
			st, err := r.epoch(e)
			if err != nil {
				return st, fmt.Errorf("epoch %d: %w", e, err)
			}
			return st, nil
		},
		Params: r.model.Learnables(), Labels: task.Labels, Val: task.Val, Classes: task.Classes,
	}
	res, err := loop.Run(ctx, tc)
	if err != nil {
		return nil, fmt.Errorf("fairtrain: fairvgnn: %w", err)
	}
	return res, nil
}
