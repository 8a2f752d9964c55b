package fairtrain

import (
	"fmt"
	"math"
	"math/rand"
	"slices"

	"github.com/fairmp/fairmp/graph"
	"github.com/fairmp/fairmp/internal/opkit"
	"github.com/fairmp/fairmp/layers"
	"github.com/fairmp/fairmp/layers/fairness"
	"github.com/fairmp/fairmp/layers/train"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// FairVGNNConfig configures FairVGNN (Wang, Zhao, Dong, Chen, Li & Derr,
// "Improving Fairness in Graph Neural Networks via Mitigating Sensitive
// Attribute Leakage", KDD 2022) on any backbone. Propagation can make
// feature channels that were innocuous on their own correlated with the
// sensitive attribute; FairVGNN learns a fair view of the features, a
// soft mask over the channels, adversarially, and clamps the encoder's
// weights on the channels the mask drops. Its parts, as in the authors'
// code (yuwvandy/FairVGNN, fairvgnn.py and model.py):
//
//   - an Encoder: the backbone built with Out = Hidden as the body (its
//     output h is the representation) and a linear classifier head;
//   - a generator: two logits (θ_j0 keep, θ_j1 drop) per feature channel
//     j; a mask is a Gumbel-softmax sample with temperature Tau, m_j =
//     σ((θ_j0 − θ_j1 + l_j)/τ) with l_j a logistic draw (the difference of
//     the two Gumbel draws), and the encoder reads the view x ⊙ m;
//   - a discriminator, a linear layer h → 1 that predicts the sensitive
//     group from the representation (binary cross-entropy over the nodes
//     whose group is known);
//   - adaptive weight clamping: after each epoch every weight of the
//     encoder's first layer that reads channel j is clamped to
//     [−Clip·w_j, Clip·w_j], w_j the mean of the epoch's masks on that
//     channel, so a channel the generator drops cannot be given weight
//     back by the encoder.
//
// Each of the trainer's epochs (train.Config.Epochs) runs, as the
// reference code does:
//
//  1. Masks soft masks drawn from the generator (fixed for steps 2 and 3);
//  2. DiscriminatorSteps steps of the discriminator, and of the encoder
//     when EncoderOnDiscriminator, on the mean over the masks of
//     BCE(discriminator(h), s);
//  3. ClassifierSteps steps of the encoder and the classifier on the mean
//     over the masks of the cross-entropy on the training nodes;
//  4. GeneratorSteps steps of the generator and the encoder on the mean
//     over Masks fresh masks (drawn at every step) of
//     Alpha·MSE(σ(discriminator(h)), ½) + Ratio·MSE(m, 1): fool the
//     discriminator while keeping as many channels as possible;
//  5. the clamping, with the masks of step 1;
//  6. the evaluation (validation accuracy, loss and AUC; the trainer's
//     selection, train.Config.Select, in train.Loop).
//
// Each part has an Adam optimiser of its own, and the encoder (the body)
// one for all three phases, as the reference code's optimizer_e: the
// body trains with train.Config.Adam, the classifier with ClassifierAdam,
// the generator with GeneratorAdam, the discriminator with
// DiscriminatorAdam.
//
// The trained model is a [MaskedEncoder]: the encoder reading x ⊙ p, p_j =
// σ(θ_j0 − θ_j1) the probability that channel j is kept. That is the
// expectation of the reference code's hard masks, whose evaluation
// averages the logits of Masks hard samples; for an encoder linear in its
// input (the reference code's one-layer GCN and linear classifier) it is
// the limit of that average, and it makes prediction deterministic.
// MaskedEncoder.Folded folds p into the input weights of a copy of the
// encoder: the deployable model, an Encoder saved as the "encoder" kind.
//
// Differences from the reference code, by design: the classifier has one
// logit per class and trains with the library's softmax cross-entropy
// (equivalent to its one-logit BCE for two classes); the body is the
// backbone as configured (the reference code's GCN encoder is one
// convolution without dropout; with dropout, the Masks views of one step
// draw the same dropout masks, seeded from the backbone's seeds); the
// discriminator is trained on the nodes whose group is known (all of them
// in the reference code, which reads the sensitive column of the
// features); evaluation reads the expected mask (above); model selection
// is the trainer's (train.Config.Select: validation accuracy by default,
// AUC, loss, the last epoch or a Criterion of the caller's), not the
// reference code's best validation AUC + F1 +
// accuracy − (ΔDP + ΔEO); Alpha, the weight of the adversarial term, is
// 1 in the reference code (it has no such parameter). The encoder's
// weight decay is train.Config.Adam's (the library's default 1e-5; the
// reference code's default is 0). The reference code keeps the sensitive
// attribute among the features, where the mask can drop it;
// datasets.Options.IncludeSens does the same here (the FMP paper's
// protocol, the default, leaves it out).
//
// Cost: an epoch is Masks × (DiscriminatorSteps + ClassifierSteps +
// GeneratorSteps) forward and backward passes of the encoder (150 at the
// defaults, 250 with the Bail script's steps) and one evaluation, against
// one pass and one evaluation for plain training
// (BenchmarkFairVGNNEpochShapes, BenchmarkFairVGNNEpochBailShaped). That
// is the reference code's count of training passes; its evaluation adds
// Masks forward passes where this one adds one. The cost of a pass is the
// body's: with the library's two-layer GCN (64 hidden) an epoch costs
// 50–60 plain GCN epochs on Bail's and Credit's shapes, a pass a third of
// a plain epoch, most of it the first layer's dense products; with the
// reference code's encoder (one convolution to Hidden, no dropout) about
// 6. When
// the body's first operation is a product by a weight matrix W followed
// by a propagation (GCN, JKNet), a view reads Ã·((x ⊙ m)·W) as
// (Ã·x)·(m ⊙ W), Ã·x computed once per run: the passes skip the first
// layer's sparse products, and the result equals the direct computation
// up to the order of floating-point sums (not bit for bit). When the body
// is written in dense layers, propagations, activations and dropout
// alone (GCN, MLP, SGC), the views of a step share each dropout mask,
// drawn once instead of once per view, with the same draws (bit for
// bit).
//
// The sensitive attribute must be binary (0, 1, −1 unknown) with both
// groups among the known nodes. Fit returns an error for an attribute
// that is not, an invalid task or train.Config, and, with clamping on, a
// body with no weight matrix that reads the input channels (a kind of
// your own: set Clip to 0), naming the fix.
type FairVGNNConfig struct {
	// Alpha (finite, >= 0) weighs the adversarial term of the generator's
	// and the encoder's objective in step 4: the method's fairness weight
	// (Weight). Default 1, the reference code's implicit weight. With 0
	// the generator only keeps channels and the encoder takes no
	// adversarial gradient.
	Alpha float64
	// Ratio (finite, >= 0) weighs the mask term MSE(m, 1), which keeps
	// channels. Default 1 (--ratio; the scripts use 1 on Bail, 0.5 or 0
	// on German, 0 on Credit).
	Ratio float64
	// Hidden is the width of the representation h, the body's output
	// (> 0). Default 16 (--hidden).
	Hidden int
	// Masks is the number of masks drawn per epoch for steps 2 and 3,
	// and per step in step 4 (> 0). Default 10 (--K). Each mask is one
	// forward and backward pass of the encoder per step: the cost of an
	// epoch grows with Masks × (DiscriminatorSteps + ClassifierSteps +
	// GeneratorSteps).
	Masks int
	// Tau is the Gumbel-softmax temperature of the training masks
	// (finite, > 0). Default 1 (the reference code's tau).
	Tau float64
	// DiscriminatorSteps (>= 0), ClassifierSteps (> 0) and GeneratorSteps
	// (>= 0) are the steps of each phase per epoch. Defaults 5, 5, 5
	// (--d_epochs, --c_epochs, --g_epochs; the Bail script uses 5, 10,
	// 10).
	DiscriminatorSteps, ClassifierSteps, GeneratorSteps int
	// FeatureMask learns the mask. Default true; false is the reference
	// code's "w/o fm" ablation (--f_mask no): no generator, the encoder
	// reads the features as they are, step 4 trains the encoder alone
	// against the discriminator, and the clamping bound is Clip on every
	// channel.
	FeatureMask bool
	// Clip is ε, the clamping bound per unit of mask (finite, >= 0); 0
	// turns the clamping off (--weight_clip no). Default 1 (--clip_e; the
	// German script uses 0.1).
	Clip float64
	// ClipTopK, if > 0, clamps only the ClipTopK channels with the
	// largest absolute Pearson correlation with the sensitive attribute
	// over the nodes whose group is known (the "sensitive-related
	// channels" of the paper); 0 clamps every channel, as the reference
	// code does (its top_k ranking is computed but not used by the
	// clamping). Default 0.
	ClipTopK int
	// EncoderOnDiscriminator also steps the encoder on the
	// discriminator's loss in step 2, as fairvgnn.py does (it makes the
	// representation more predictive of the group, which step 4 then
	// fights); fairvgnn_credit.py, the reference code's Credit script,
	// does not. Default true.
	EncoderOnDiscriminator bool
	// ClassifierAdam, GeneratorAdam and DiscriminatorAdam configure the
	// parts' optimisers. Defaults lr 1e-3, no weight decay (--c_lr,
	// --g_lr, --d_lr, --*_wd; the Bail script uses a classifier lr of
	// 0.01).
	ClassifierAdam, GeneratorAdam, DiscriminatorAdam train.AdamConfig
	// Seed seeds the generator's and the discriminator's initialisation
	// and the masks' noise. Default 1.
	Seed int64
	// Progress, if set, is called after every epoch's steps with the
	// losses of the last step of each phase (discriminator BCE,
	// classifier cross-entropy, generator loss; NaN for a phase without
	// steps).
	Progress func(epoch int, discriminator, classifier, generator float64)
}

var _ fairness.Method = FairVGNNConfig{}

// DefaultFairVGNNConfig returns the reference code's defaults: α 1 (its
// implicit weight), ratio 1, a 16-wide representation, 10 masks at
// temperature 1, 5 steps of each phase, a learned mask, clamping at ε = 1
// on every channel, the encoder stepped on the discriminator's loss,
// Adam at lr 1e-3 without weight decay for the classifier, generator and
// discriminator, seed 1.
func DefaultFairVGNNConfig() FairVGNNConfig {
	adam := train.DefaultAdamConfig()
	return FairVGNNConfig{Alpha: 1, Ratio: 1, Hidden: 16, Masks: 10, Tau: 1,
		DiscriminatorSteps: 5, ClassifierSteps: 5, GeneratorSteps: 5,
		FeatureMask: true, Clip: 1, EncoderOnDiscriminator: true,
		ClassifierAdam: adam, GeneratorAdam: adam, DiscriminatorAdam: adam, Seed: 1}
}

// Name returns "fairvgnn".
func (c FairVGNNConfig) Name() string { return "fairvgnn" }

// Weight returns Alpha, the adversarial weight.
func (c FairVGNNConfig) Weight() float64 { return c.Alpha }

// WithWeight returns c with Alpha = w.
func (c FairVGNNConfig) WithWeight(w float64) fairness.Method { c.Alpha = w; return c }

// WithSeed returns c with Seed = seed.
func (c FairVGNNConfig) WithSeed(seed int64) fairness.Method { c.Seed = seed; return c }

// Validate checks every field and names the first bad one.
func (c FairVGNNConfig) Validate() error {
	if err := checkAlpha(c.Alpha); err != nil {
		return err
	}
	if !(c.Ratio >= 0) || math.IsInf(c.Ratio, 0) {
		return fmt.Errorf("Ratio = %v, want a finite weight >= 0", c.Ratio)
	}
	if c.Hidden < 1 {
		return fmt.Errorf("Hidden = %d, want >= 1", c.Hidden)
	}
	if c.Masks < 1 {
		return fmt.Errorf("Masks = %d, want >= 1", c.Masks)
	}
	if !(c.Tau > 0) || math.IsInf(c.Tau, 0) {
		return fmt.Errorf("Tau = %v, want a finite temperature > 0", c.Tau)
	}
	if c.DiscriminatorSteps < 0 {
		return fmt.Errorf("DiscriminatorSteps = %d, want >= 0", c.DiscriminatorSteps)
	}
	if c.GeneratorSteps < 0 {
		return fmt.Errorf("GeneratorSteps = %d, want >= 0", c.GeneratorSteps)
	}
	if c.ClassifierSteps < 1 {
		return fmt.Errorf("ClassifierSteps = %d, want >= 1 (else the classifier never trains)", c.ClassifierSteps)
	}
	if !(c.Clip >= 0) || math.IsInf(c.Clip, 0) {
		return fmt.Errorf("Clip = %v, want a finite bound >= 0 (0: no clamping)", c.Clip)
	}
	if c.ClipTopK < 0 {
		return fmt.Errorf("ClipTopK = %d, want >= 0 (0: every channel)", c.ClipTopK)
	}
	for _, a := range []struct {
		name string
		cfg  train.AdamConfig
	}{{"ClassifierAdam", c.ClassifierAdam}, {"GeneratorAdam", c.GeneratorAdam}, {"DiscriminatorAdam", c.DiscriminatorAdam}} {
		if err := a.cfg.Validate(); err != nil {
			return fmt.Errorf("%s: %w", a.name, err)
		}
	}
	return nil
}

// ---------------------------------------------------------------------
// MaskedEncoder

// MaskedEncoder is the model FairVGNN trains: an [Encoder] that reads the
// features through FairVGNN's channel mask, head(body(x ⊙ p)), where p_j
// = σ(θ_j0 − θ_j1) is the probability that the generator keeps channel j
// (see [FairVGNNConfig]). Without a learned mask (FeatureMask false) it
// is the encoder alone. Like the Encoder, it is a [layers.Model]: it
// predicts with train.Predict and copies itself with Rebuild. It is not
// a declared kind: what scores at inference is the encoder reading the
// features through p, and [MaskedEncoder.Folded] moves p into the rows of
// the input weights of a copy of the encoder, an [Encoder] (the "encoder"
// kind) computing the same function, to save with fmp/modelio, score
// new nodes with (fmp/score) and put FMP on. The generator's logits, the
// discriminator and the training masks are not part of that model.
type MaskedEncoder struct {
	enc *Encoder
	gen *G.Node // d × 2 generator logits (keep, drop); nil without a mask
}

var (
	_ layers.Model      = (*MaskedEncoder)(nil)
	_ layers.Phased     = (*MaskedEncoder)(nil)
	_ layers.GraphModel = (*MaskedEncoder)(nil)
)

// Encoder returns the encoder.
func (m *MaskedEncoder) Encoder() *Encoder { return m.enc }

// Generator returns the d × 2 node of the generator's logits (keep, drop)
// per channel, nil without a learned mask.
func (m *MaskedEncoder) Generator() *G.Node { return m.gen }

// Keep returns p_j = σ(θ_j0 − θ_j1) for every channel j, the probability
// that the mask keeps it (nil without a learned mask).
func (m *MaskedEncoder) Keep() []float64 {
	if m.gen == nil {
		return nil
	}
	t := f64s(m.gen.Value().(*tensor.Dense))
	p := make([]float64, len(t)/2)
	for j := range p {
		p[j] = keepProb(t[2*j], t[2*j+1], 0, 1)
	}
	return p
}

// Learnables returns the encoder's parameters, then the generator's
// logits.
func (m *MaskedEncoder) Learnables() G.Nodes {
	out := m.enc.Learnables()
	if m.gen != nil {
		out = append(out, m.gen)
	}
	return out
}

// Phase returns the phase the encoder was built with.
func (m *MaskedEncoder) Phase() *layers.Phase { return m.enc.Phase() }

// Graph returns the graph the encoder was built on.
func (m *MaskedEncoder) Graph() *graph.Graph { return m.enc.Graph() }

// Forward returns head(body(x ⊙ p)) (head(body(x)) without a mask) and
// records the representation for [MaskedEncoder.Representation].
func (m *MaskedEncoder) Forward(x *G.Node) (*G.Node, error) {
	if m.gen == nil {
		return m.enc.Forward(x)
	}
	p, err := keepProbs(m.gen, nil, 1)
	if err != nil {
		return nil, err
	}
	xm, err := maskColumns(x, p)
	if err != nil {
		return nil, err
	}
	return m.enc.Forward(xm)
}

// Representation returns the representation node of the latest Forward.
func (m *MaskedEncoder) Representation() *G.Node { return m.enc.Representation() }

// Rebuild builds a masked encoder of the same configuration in g on gr
// and copies the parameters into it. It returns the errors of
// Encoder.Rebuild and an error for a generator name already used in g.
func (m *MaskedEncoder) Rebuild(g *G.ExprGraph, gr *graph.Graph, phase *layers.Phase) (layers.Model, error) {
	if m.gen != nil {
		if err := opkit.UniqueName(g, m.gen.Name()); err != nil {
			return nil, fmt.Errorf("fairtrain: MaskedEncoder.Rebuild: %w", err)
		}
	}
	e, err := m.enc.Rebuild(g, gr, phase)
	if err != nil {
		return nil, err
	}
	out := &MaskedEncoder{enc: e.(*Encoder)}
	if m.gen == nil {
		return out, nil
	}
	v := m.gen.Value().(*tensor.Dense).Clone().(*tensor.Dense)
	out.gen = G.NewMatrix(g, v.Dtype(), G.WithShape(v.Shape()...), G.WithName(m.gen.Name()), G.WithValue(v))
	return out, nil
}

// ---------------------------------------------------------------------
// Clamping

// inputFlow is a layers.Flow that runs nothing and records the weight
// matrices that read the input channels: those of a Dense primitive (or
// a GAT layer) whose input is the features, or the features propagated,
// activated, dropped out or combined, which keep one column per input
// channel. Its payload says whether a Value still has that property.
type inputFlow struct{ ws G.Nodes }

func perChannel(v layers.Value) bool { b, _ := v.Payload().(bool); return b }

func (f *inputFlow) add(w *G.Node) {
	if w != nil && !slices.Contains(f.ws, w) {
		f.ws = append(f.ws, w)
	}
}

func (f *inputFlow) Dense(h layers.Value, w, b *G.Node, act layers.Activation) (layers.Value, error) {
	if w == nil || w.Dims() != 2 {
		return layers.Value{}, fmt.Errorf("fairtrain: Dense without a weight matrix")
	}
	if perChannel(h) {
		f.add(w)
	}
	return layers.NewValue(false, w.Shape()[1], h.Level()), nil
}
func (f *inputFlow) Propagate(h layers.Value, p layers.Hop) (layers.Value, error) {
	return layers.NewValue(perChannel(h), h.Cols(), h.Level()+1), nil
}
func (f *inputFlow) Scale(h layers.Value, s *G.Node) (layers.Value, error) { return h, nil }
func (f *inputFlow) Activate(h layers.Value, act layers.Activation) (layers.Value, error) {
	return h, nil
}
func (f *inputFlow) Dropout(h layers.Value, rate float64, seed int64) (layers.Value, error) {
	return h, nil
}
func (f *inputFlow) Combine(coef []float64, vs ...layers.Value) (layers.Value, error) {
	if len(vs) == 0 {
		return layers.Value{}, fmt.Errorf("fairtrain: Combine of no value")
	}
	all, level := true, 0
	for _, v := range vs {
		all = all && perChannel(v)
		level = max(level, v.Level())
	}
	return layers.NewValue(all, vs[0].Cols(), level), nil
}
func (f *inputFlow) Jump(mode layers.JKMode, vs ...layers.Value) (layers.Value, error) {
	if len(vs) == 0 {
		return layers.Value{}, fmt.Errorf("fairtrain: Jump of no value")
	}
	all, level, cols := mode == layers.JKMax, 0, 0
	for _, v := range vs {
		all = all && perChannel(v)
		level = max(level, v.Level())
		cols += v.Cols()
	}
	if mode == layers.JKMax {
		cols = vs[0].Cols()
	}
	return layers.NewValue(all, cols, level), nil
}
func (f *inputFlow) Attend(h layers.Value, l *layers.GATConv) (layers.Value, error) {
	if l == nil || len(l.Learnables()) == 0 {
		return layers.Value{}, fmt.Errorf("fairtrain: Attend without a layer")
	}
	if perChannel(h) {
		f.add(l.Learnables()[0])
	}
	c := l.Config()
	cols := c.Out
	if c.Concat {
		cols *= c.Heads
	}
	return layers.NewValue(false, cols, h.Level()+1), nil
}

// inputWeights returns the body's weight matrices whose rows are the d
// input channels: for a layers.BlockModel, every one its computation
// applies to the features (GCN, SGC, MLP, APPNP, JKNet: the first
// layer's W; GAT: the first attention layer's W); for another model, its
// first learnable if it is a d-row matrix.
func inputWeights(body layers.Model, d int) (G.Nodes, error) {
	var ws G.Nodes
	if bm, ok := body.(layers.BlockModel); ok {
		f := &inputFlow{}
		if _, err := bm.Compute(f, layers.NewValue(true, d, 0)); err != nil {
			return nil, fmt.Errorf("fairtrain: fairvgnn: reading the %T body's first layer: %w", body, err)
		}
		ws = f.ws
	} else if ps := body.Learnables(); len(ps) > 0 {
		ws = ps[:1]
	}
	var out G.Nodes
	for _, w := range ws {
		if w.Dims() == 2 && w.Shape()[0] == d {
			out = append(out, w)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("fairtrain: fairvgnn: the %T body has no %d-row weight matrix that reads the input channels to clamp: set Clip to 0 (no clamping) for this backbone", body, d)
	}
	return out, nil
}

// clampRows clamps row j of every weight matrix in ws (d × k, rows the
// input channels) to [−bound[j], bound[j]], for the rows in channels.
func clampRows(ws G.Nodes, bound []float64, channels []int) {
	for _, w := range ws {
		d := w.Value().(*tensor.Dense)
		k := d.Shape()[1]
		switch x := d.Data().(type) {
		case []float64:
			clampRowsOf(x, k, bound, channels)
		case []float32:
			clampRowsOf(x, k, bound, channels)
		}
	}
}

func clampRowsOf[T float32 | float64](w []T, k int, bound []float64, channels []int) {
	for _, j := range channels {
		hi := T(bound[j])
		row := w[j*k : (j+1)*k]
		for i, v := range row {
			row[i] = min(max(v, -hi), hi)
		}
	}
}

// topCorrelated returns the k channels of the n × d features x with the
// largest absolute Pearson correlation with the group over the nodes
// whose group is known (ties: the lower channel first; a constant
// channel correlates 0), in that order.
func topCorrelated(x []float64, n, d int, sens []int, k int) []int {
	var sn, ss, sss float64
	for i := 0; i < n; i++ {
		if s := sens[i]; s >= 0 {
			sn++
			ss += float64(s)
			sss += float64(s * s)
		}
	}
	ms := ss / sn
	vs := sss/sn - ms*ms
	corr := make([]float64, d)
	for j := 0; j < d; j++ {
		var sx, sxx, sxs float64
		for i := 0; i < n; i++ {
			if s := sens[i]; s >= 0 {
				v := x[i*d+j]
				sx += v
				sxx += v * v
				sxs += v * float64(s)
			}
		}
		mx := sx / sn
		vx := sxx/sn - mx*mx
		if vx > 0 && vs > 0 {
			corr[j] = math.Abs((sxs/sn - mx*ms) / math.Sqrt(vx*vs))
		}
	}
	idx := make([]int, d)
	for j := range idx {
		idx[j] = j
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		switch {
		case corr[a] > corr[b]:
			return -1
		case corr[a] < corr[b]:
			return 1
		}
		return 0
	})
	return idx[:min(k, d)]
}

// logistic returns a draw of the standard logistic distribution.
func logistic(rng *rand.Rand) float64 {
	u := rng.Float64()
	for u == 0 {
		u = rng.Float64()
	}
	return math.Log(u) - math.Log1p(-u)
}

// setDense writes vals into t (in its dtype).
func setDense(t *tensor.Dense, vals []float64) {
	switch o := t.Data().(type) {
	case []float64:
		copy(o, vals)
	case []float32:
		for i, v := range vals {
			o[i] = float32(v)
		}
	}
}
