package fairtrain

import (
	"context"
	"fmt"
	"math/rand"

	"github.com/fairmp/fairmp/graph"
	"github.com/fairmp/fairmp/internal/augment"
	"github.com/fairmp/fairmp/internal/opkit"
	"github.com/fairmp/fairmp/layers"
	"github.com/fairmp/fairmp/layers/fairness"
	"github.com/fairmp/fairmp/layers/train"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// NIFTYConfig configures NIFTY (Agarwal, Lakkaraju & Zitnik, "Towards a
// Unified Framework for Fair and Stable Graph Representation Learning",
// UAI 2021) on any backbone. Its parts, as in the authors' code
// (chirag126/nifty, nifty_sota_gnn.py and models/ssf.py):
//
//   - an Encoder: the backbone built with Out = Hidden as the body
//     and a linear classifier head, with a projector (Hidden → ProjHidden
//     → Hidden, ReLU between) and a predictor (Hidden → Hidden → Hidden)
//     trained alongside;
//   - two augmented views of the graph at every epoch: view 1 perturbs
//     the features (each non-sensitive column is chosen with probability
//     FeatureDrop[0], and one N(0, 1) draw is added to every chosen
//     column, as the reference code's drop_feature does) and drops edges
//     (EdgeDrop[0]); view 2 does the same with the second rates and
//     flips the sensitive feature (0 ↔ 1): the counterfactual view;
//   - the Siamese objective: with z_v the representation of view v,
//     p_v = projector(z_v) and q_v = predictor(p_v), the similarity loss
//     S = (D(q₁, sg(p₂)) + D(q₂, sg(p₁)))/2 over the training nodes, D
//     the mean negative cosine similarity and sg a stopped gradient; the
//     classification loss (CE(view 1) + CE(view 2))/2; the objective
//     (1 − λ)·CE + λ·S, λ = SimCoeff;
//   - layer-wise Lipschitz normalisation (Lipschitz): every weight matrix
//     of the encoder, projector and predictor divided by its largest
//     singular value after every step.
//
// In training, the trainer's cross-entropy is computed on view 1 (a
// switch on the phase; evaluation and prediction read the clean input),
// and the strategy adds CE(view 2) + (2λ/(1−λ))·S: the paper's objective
// multiplied by 2/(1−λ), a constant factor Adam's steps are invariant to
// (up to its ε).
//
// Differences from the reference code, by design: one Adam step a
// epoch on the whole objective (the code takes one step on S, then one on
// CE, with two optimisers); no batch normalisation in the projector and
// predictor; the Lipschitz normalisation is a projection after each step
// (PyTorch's spectral_norm reparametrises the weight, with the same
// forward value); the edge-dropped propagation matrices are drawn once
// per run (the models hold their matrices; the reference code redraws
// each epoch), and only for backbones that run on other propagation
// matrices (layers.BlockModel: every kind of the library; set EdgeDrop to
// 0 for a kind of your own that is not one); undirected edges are dropped whole; view 1 uses
// FeatureDrop[0] (the reference code uses its second rate for both
// views); the two views draw the same dropout masks in an epoch (their
// dropout ops are seeded from the backbone's seeds; the reference code
// draws one per forward pass: an independent PyTorch NIFTY with its own
// masks per view gives the same Bail results within the seeds' spread,
// examples/paper/peers-nifty); model selection is the trainer's.
//
// Without a sensitive feature column (Setup.SensFeature −1) the
// counterfactual view flips nothing and NIFTY trains for stability
// alone.
//
// The trained model (Fitted.Model) is the Encoder alone: the projector
// and the predictor serve the similarity loss in training and are
// dropped from it when training ends, so its learnables, and its model
// file (the "encoder" kind), are the body's and the head's.
type NIFTYConfig struct {
	// SimCoeff (λ ∈ [0, 1)) weighs the similarity loss against the
	// classification loss: the method's fairness weight. Default 0.5
	// (--sim_coeff; the README's German example uses 0.6).
	SimCoeff float64
	// Hidden is the width of the representation (> 0). Default 16
	// (--hidden).
	Hidden int
	// ProjHidden is the projector's hidden width (> 0). Default 16
	// (--proj_hidden).
	ProjHidden int
	// FeatureDrop is the probability that a feature column is perturbed,
	// per view, in [0, 1]. Default 0.1 and 0.1 (--drop_feature_rate_1/2).
	FeatureDrop [2]float64
	// EdgeDrop is the probability that an edge is dropped, per view, in
	// [0, 1). Default 0.1 and 0.1 (--drop_edge_rate_1/2).
	EdgeDrop [2]float64
	// Lipschitz normalises every weight matrix to spectral norm 1 after
	// every step. Default true.
	Lipschitz bool
	// Seed seeds the views and the projector's and predictor's
	// initialisation. Default 1.
	Seed int64
}

// DefaultNIFTYConfig returns the reference code's defaults: λ 0.5, a
// 16-wide representation and projector, 10% of the feature columns
// perturbed and 10% of the edges dropped in each view, Lipschitz
// normalisation, seed 1.
func DefaultNIFTYConfig() NIFTYConfig {
	return NIFTYConfig{SimCoeff: 0.5, Hidden: 16, ProjHidden: 16, FeatureDrop: [2]float64{0.1, 0.1},
		EdgeDrop: [2]float64{0.1, 0.1}, Lipschitz: true, Seed: 1}
}

// Name returns "nifty".
func (c NIFTYConfig) Name() string { return "nifty" }

// Weight returns SimCoeff.
func (c NIFTYConfig) Weight() float64 { return c.SimCoeff }

// WithWeight returns c with SimCoeff = w.
func (c NIFTYConfig) WithWeight(w float64) fairness.Method { c.SimCoeff = w; return c }

// WithSeed returns c with Seed = seed.
func (c NIFTYConfig) WithSeed(seed int64) fairness.Method { c.Seed = seed; return c }

// Validate checks every field.
func (c NIFTYConfig) Validate() error {
	if !(c.SimCoeff >= 0 && c.SimCoeff < 1) {
		return fmt.Errorf("SimCoeff = %v, want λ in [0, 1) (λ = 1 leaves no classification loss)", c.SimCoeff)
	}
	if c.Hidden < 1 || c.ProjHidden < 1 {
		return fmt.Errorf("Hidden = %d, ProjHidden = %d, want both >= 1", c.Hidden, c.ProjHidden)
	}
	for v := range 2 {
		if !(c.FeatureDrop[v] >= 0 && c.FeatureDrop[v] <= 1) {
			return fmt.Errorf("FeatureDrop[%d] = %v, want a probability in [0, 1]", v, c.FeatureDrop[v])
		}
		if !(c.EdgeDrop[v] >= 0 && c.EdgeDrop[v] < 1) {
			return fmt.Errorf("EdgeDrop[%d] = %v, want a probability in [0, 1)", v, c.EdgeDrop[v])
		}
	}
	return nil
}

// perturbFeatures returns a copy of the n × d features x in which every
// column but skip (−1: none) is chosen with probability p, and one draw
// of N(0, 1) is added to every entry of the chosen columns (NIFTY's
// drop_feature, with one draw for all chosen columns as there). The
// draws come from rng.
func perturbFeatures(x []float64, d, skip int, p float64, rng *rand.Rand) []float64 {
	out := append([]float64(nil), x...)
	chosen := make([]bool, d)
	for j := range chosen {
		chosen[j] = rng.Float64() < p && j != skip
	}
	noise := rng.NormFloat64()
	for i := 0; i < len(out)/d; i++ {
		for j, c := range chosen {
			if c {
				out[i*d+j] += noise
			}
		}
	}
	return out
}

// fit trains NIFTY (see Fit).
func (c NIFTYConfig) Fit(ctx context.Context, backbone layers.Config, s fairness.Setup, tc train.Config) (*fairness.Fitted, error) {
	if err := checkFit(c, backbone, s); err != nil {
		return nil, err
	}
	task := s.Task
	if err := task.Validate(); err != nil {
		return nil, fmt.Errorf("fairtrain: nifty: task: %w", err)
	}
	n, d := task.X.Shape()[0], task.X.Shape()[1]
	if s.SensFeature < -1 || s.SensFeature >= d {
		return nil, fmt.Errorf("fairtrain: nifty: Setup.SensFeature = %d, want a feature column in [0, %d) or −1 (none)", s.SensFeature, d)
	}
	enc, err := NewEncoder(task.Graph, s.Graph, bodyConfig(backbone, c.Hidden), task.Classes, task.Phase)
	if err != nil {
		return nil, fmt.Errorf("fairtrain: nifty: %w", err)
	}
	b := layers.BaseOf(enc.BodyConfig())
	for k, io := range [][2]int{{c.Hidden, c.ProjHidden}, {c.ProjHidden, c.Hidden}, {c.Hidden, c.Hidden}, {c.Hidden, c.Hidden}} {
		lc := layers.DefaultLinearConfig(io[0], io[1])
		lc.Name, lc.Dtype, lc.Seed = fmt.Sprintf("%s.nifty%d", b.Name, k), b.Dtype, c.Seed+int64(k)
		l, err := layers.NewLinear(task.Graph, nil, lc, nil)
		if err != nil {
			return nil, fmt.Errorf("fairtrain: nifty: %w", err)
		}
		enc.extra = append(enc.extra, l)
	}
	xd, err := opkit.Dense(task.X.Value())
	if err != nil {
		return nil, fmt.Errorf("fairtrain: nifty: features: %w", err)
	}
	nm := &niftyModel{cfg: c, enc: enc, x: f64s(xd), n: n, d: d, sensCol: s.SensFeature,
		rng: rand.New(rand.NewSource(c.Seed)), train: append([]int(nil), task.Train...), labels: task.Labels}
	nm.x = append([]float64(nil), nm.x...)
	for v := range 2 {
		if c.EdgeDrop[v] == 0 {
			continue
		}
		bm, ok := enc.Body().(layers.BlockModel)
		if !ok {
			return nil, fmt.Errorf("fairtrain: nifty: EdgeDrop[%d] = %v but the %T body does not run on other propagation matrices (it is not a layers.BlockModel): set EdgeDrop to 0 for this backbone", v, c.EdgeDrop[v], enc.Body())
		}
		if s.Graph == nil {
			return nil, fmt.Errorf("fairtrain: nifty: EdgeDrop[%d] = %v and Setup.Graph is nil: give the data graph, or set EdgeDrop to 0", v, c.EdgeDrop[v])
		}
		dg, err := augment.DropEdges(s.Graph, c.EdgeDrop[v], nm.rng)
		if err != nil {
			return nil, fmt.Errorf("fairtrain: nifty: dropping edges: %w", err)
		}
		a := graph.NormalizedAdjacency(dg)
		hops, err := layers.Hops(bm)
		if err != nil {
			return nil, fmt.Errorf("fairtrain: nifty: %w", err)
		}
		nm.blocks[v] = make([]*graph.Matrix, hops)
		for k := range nm.blocks[v] {
			nm.blocks[v][k] = a
		}
		if hops == 0 {
			nm.blocks[v] = nil
		}
	}
	dt := task.X.Dtype()
	for v := range 2 {
		nm.views[v] = G.NewMatrix(task.Graph, dt, G.WithShape(n, d), G.WithName(fmt.Sprintf("%s.nifty.view%d", b.Name, v+1)), G.WithValue(opkit.Alloc(dt, n, d)))
	}
	nm.drawViews()
	if c.Lipschitz {
		nm.spec = newSpectral(enc.Learnables())
		nm.spec.normalize(30)
	}
	tc = withExtra(tc, nm.extraLoss)
	tc = withAfterStep(tc, nm.afterStep)
	res, err := train.Fit(ctx, nm, task, tc)
	if err != nil {
		return nil, err
	}
	enc.extra = nil // the projector and predictor serve training only
	return &fairness.Fitted{Model: enc, Result: res}, nil
}

// niftyModel is the model train.Fit trains for NIFTY: the encoder, whose
// output in training is view 1's logits; Learnables are the encoder's
// (projector and predictor included).
type niftyModel struct {
	cfg     NIFTYConfig
	enc     *Encoder
	x       []float64
	n, d    int
	sensCol int
	rng     *rand.Rand
	train   []int
	labels  []int
	views   [2]*G.Node
	blocks  [2][]*graph.Matrix
	spec    *spectral

	// built by Forward: the views' representations and logits.
	z, logits [2]*G.Node
}

func (m *niftyModel) Learnables() G.Nodes  { return m.enc.Learnables() }
func (m *niftyModel) Phase() *layers.Phase { return m.enc.Phase() }

// Forward returns the switch between the clean logits (evaluation) and
// view 1's (training), and builds view 2.
func (m *niftyModel) Forward(x *G.Node) (*G.Node, error) {
	clean, err := m.enc.Forward(x)
	if err != nil {
		return nil, err
	}
	for v := range 2 {
		if m.z[v], m.logits[v], err = m.enc.forwardBlocks(m.views[v], m.blocks[v]); err != nil {
			return nil, fmt.Errorf("fairtrain: nifty: view %d: %w", v+1, err)
		}
	}
	return phaseSelect(m.enc.Phase(), clean, m.logits[0])
}

// extraLoss returns CE(view 2) + (2λ/(1−λ))·S on the training nodes.
func (m *niftyModel) extraLoss(_ *G.Node) (*G.Node, error) {
	if m.logits[1] == nil {
		return nil, fmt.Errorf("fairtrain: nifty: views not built")
	}
	ce2, err := layers.CrossEntropy(m.logits[1], m.labels, m.train)
	if err != nil {
		return nil, fmt.Errorf("fairtrain: nifty: %w", err)
	}
	lam := m.cfg.SimCoeff
	if lam == 0 {
		return ce2, nil
	}
	sel, err := selection(m.train, m.n)
	if err != nil {
		return nil, err
	}
	var p, q [2]*G.Node
	for v := range 2 {
		zs, err := layers.SpMM(sel, m.z[v])
		if err != nil {
			return nil, fmt.Errorf("fairtrain: nifty: %w", err)
		}
		if p[v], err = mlp2(m.enc.extra[0], m.enc.extra[1], zs); err != nil {
			return nil, err
		}
		if q[v], err = mlp2(m.enc.extra[2], m.enc.extra[3], p[v]); err != nil {
			return nil, err
		}
	}
	var d [2]*G.Node
	for v := range 2 {
		target, err := stopGradient(p[1-v])
		if err != nil {
			return nil, err
		}
		if d[v], err = negCosine(q[v], target); err != nil {
			return nil, err
		}
	}
	sum, err := G.Add(d[0], d[1])
	if err != nil {
		return nil, fmt.Errorf("fairtrain: nifty: %w", err)
	}
	// (2λ/(1−λ))·S with S = (D₁ + D₂)/2.
	sim, err := scaled(lam/(1-lam), sum)
	if err != nil {
		return nil, err
	}
	return G.Add(ce2, sim)
}

// mlp2 returns l2(ReLU(l1(x))).
func mlp2(l1, l2 *layers.Linear, x *G.Node) (*G.Node, error) {
	h, err := l1.Forward(x)
	if err != nil {
		return nil, fmt.Errorf("fairtrain: nifty: %w", err)
	}
	if h, err = G.Rectify(h); err != nil {
		return nil, fmt.Errorf("fairtrain: nifty: %w", err)
	}
	return l2.Forward(h)
}

// selection returns the |rows| × n matrix that picks rows.
func selection(rows []int, n int) (*graph.Matrix, error) {
	m := len(rows)
	rs, vals := make([]int, m), make([]float64, m)
	for k := range rows {
		rs[k], vals[k] = k, 1
	}
	sel, err := graph.NewMatrix(m, n, rs, append([]int(nil), rows...), vals)
	if err != nil {
		return nil, fmt.Errorf("fairtrain: selection matrix: %w", err)
	}
	return sel, nil
}

// drawViews draws the next epoch's perturbed features into the views.
func (m *niftyModel) drawViews() {
	for v := range 2 {
		x := perturbFeatures(m.x, m.d, m.sensCol, m.cfg.FeatureDrop[v], m.rng)
		if v == 1 && m.sensCol >= 0 {
			augment.FlipColumn(x, m.d, m.sensCol)
		}
		dst := m.views[v].Value().(*tensor.Dense)
		switch o := dst.Data().(type) {
		case []float64:
			copy(o, x)
		case []float32:
			for i, val := range x {
				o[i] = float32(val)
			}
		}
	}
}

// afterStep normalises the weights and draws the next views.
func (m *niftyModel) afterStep(int) error {
	if m.spec != nil {
		m.spec.normalize(1)
	}
	m.drawViews()
	return nil
}
