package fairtrain

import (
	"fmt"
	"math"

	"github.com/fairmp/fairmp/graph"
	"github.com/fairmp/fairmp/layers"
	"github.com/fairmp/fairmp/layers/train"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Encoder is the architecture FairGNN and NIFTY train, on any backbone: a
// body of any declared kind built with Out = the representation
// width, whose output h (n × width, no activation after its last layer)
// is the node representation, and a linear classifier head h → classes.
// With the GCN kind this is FairGNN's GCN_Body + Linear (two graph
// convolutions, then nn.Linear(nhid, 1) in the reference code, here one
// logit per class) and NIFTY's encoder + classifier.
//
// An Encoder is a [layers.Model]: it trains with train.Fit, predicts with
// train.Predict and goes under FMP (fmp.On). It is the declared kind
// "encoder" ([EncoderConfig]), so fmp/modelio saves and loads it and
// package fmp/score scores new nodes with it; with a body of a library
// kind (a layers.BlockModel) it is one too, and runs on sampled blocks
// and layer by layer. [Encoder.Rebuild] copies it onto another graph
// (what package layers/perturb uses).
type Encoder struct {
	cfg     EncoderConfig
	body    layers.Model
	bodyCfg layers.Config
	head    *layers.Linear
	// extra holds layers trained with the encoder but not used by
	// Forward: NIFTY's projector and predictor, while NIFTY trains (nil
	// once Fit returns: they are not part of the model, nor of its file).
	extra   []*layers.Linear
	phase   *layers.Phase
	gr      *graph.Graph
	classes int
	width   int
	h       *G.Node
}

var (
	_ layers.Model      = (*Encoder)(nil)
	_ layers.Phased     = (*Encoder)(nil)
	_ layers.BlockModel = (*Encoder)(nil)
	_ layers.GraphModel = (*Encoder)(nil)
)

// NewEncoder builds the body from its configuration (any declared kind;
// its Out is the representation width) on gr, and a head
// width → classes named body name + ".head", initialised from the body's
// seed. It returns an error for a configuration of no declared kind (or
// of a wrapper kind, or an encoder's), an invalid one, classes < 2, or a
// name already used in g.
func NewEncoder(g *G.ExprGraph, gr *graph.Graph, body layers.Config, classes int, phase *layers.Phase) (*Encoder, error) {
	if body == nil {
		return nil, fmt.Errorf("fairtrain: NewEncoder: nil body configuration")
	}
	if classes < 2 {
		return nil, fmt.Errorf("fairtrain: NewEncoder: classes = %d, want >= 2", classes)
	}
	cfg, err := NewEncoderConfig(body, classes)
	if err != nil {
		return nil, err
	}
	m, err := layers.Build(g, gr, body, phase)
	if err != nil {
		return nil, fmt.Errorf("fairtrain: NewEncoder: body: %w", err)
	}
	b := layers.BaseOf(body)
	hc := layers.DefaultLinearConfig(b.Out, classes)
	hc.Name, hc.Dtype, hc.Seed = b.Name+".head", b.Dtype, b.Seed+1
	head, err := layers.NewLinear(g, nil, hc, nil)
	if err != nil {
		return nil, fmt.Errorf("fairtrain: NewEncoder: head: %w", err)
	}
	return &Encoder{cfg: cfg, body: m, bodyCfg: body, head: head, phase: phase, gr: gr, classes: classes, width: b.Out}, nil
}

// Body returns the body model.
func (e *Encoder) Body() layers.Model { return e.body }

// BodyConfig returns the body's configuration.
func (e *Encoder) BodyConfig() layers.Config { return e.bodyCfg }

// Width returns the representation width.
func (e *Encoder) Width() int { return e.width }

// Phase returns the phase the encoder was built with.
func (e *Encoder) Phase() *layers.Phase { return e.phase }

// Graph returns the graph the encoder was built on (nil for none).
func (e *Encoder) Graph() *graph.Graph { return e.gr }

// Learnables returns the body's parameters, the head's, then, while
// NIFTY trains, those of its projector and predictor (not once Fit has
// returned).
func (e *Encoder) Learnables() G.Nodes {
	out := append(G.Nodes(nil), e.body.Learnables()...)
	out = append(out, e.head.Learnables()...)
	for _, l := range e.extra {
		out = append(out, l.Learnables()...)
	}
	return out
}

// Forward returns head(body(x)) and records body(x), the representation,
// for [Encoder.Representation].
func (e *Encoder) Forward(x *G.Node) (*G.Node, error) {
	h, err := e.body.Forward(x)
	if err != nil {
		return nil, err
	}
	e.h = h
	return e.head.Forward(h)
}

// Representation returns the representation node of the latest Forward
// (nil before any).
func (e *Encoder) Representation() *G.Node { return e.h }

// forwardBlocks returns the representation and the logits of x
// propagated over blocks (one matrix per hop of a layers.BlockModel
// body; nil: the body's own graph).
func (e *Encoder) forwardBlocks(x *G.Node, blocks []*graph.Matrix) (h, logits *G.Node, err error) {
	if blocks == nil {
		h, err = e.body.Forward(x)
	} else {
		bm, ok := e.body.(layers.BlockModel)
		if !ok {
			return nil, nil, fmt.Errorf("fairtrain: the %T body does not run on other propagation matrices (layers.BlockModel)", e.body)
		}
		h, err = layers.ForwardBlocks(bm, x, blocks)
	}
	if err != nil {
		return nil, nil, err
	}
	logits, err = e.head.Forward(h)
	return h, logits, err
}

// Rebuild builds an encoder of the same configuration in g on gr and
// copies the parameters into it (the extra layers included). It returns
// the errors of NewEncoder and train.SetParams.
func (e *Encoder) Rebuild(g *G.ExprGraph, gr *graph.Graph, phase *layers.Phase) (layers.Model, error) {
	out, err := NewEncoder(g, gr, e.bodyCfg, e.classes, phase)
	if err != nil {
		return nil, err
	}
	for _, l := range e.extra {
		c := l.Config()
		nl, err := layers.NewLinear(g, nil, c, nil)
		if err != nil {
			return nil, err
		}
		out.extra = append(out.extra, nl)
	}
	vals := make([]*tensor.Dense, 0)
	for _, p := range e.Learnables() {
		vals = append(vals, p.Value().(*tensor.Dense))
	}
	if err := train.SetParams(out, vals); err != nil {
		return nil, err
	}
	return out, nil
}

// ---------------------------------------------------------------------
// Lipschitz normalisation

// spectral keeps NIFTY's layer-wise Lipschitz normalisation: after every
// step each weight matrix W (a learnable with two dimensions both > 1) is
// divided by its largest singular value σ(W), estimated by power
// iteration with a vector kept from step to step (one iteration a step,
// after 30 at the start), as PyTorch's spectral_norm estimates it. Each
// layer then has Lipschitz constant 1 in the forward pass.
type spectral struct {
	params G.Nodes
	u      [][]float64
}

func newSpectral(params G.Nodes) *spectral {
	s := &spectral{}
	for _, p := range params {
		sh := p.Shape()
		if len(sh) == 2 && sh[0] > 1 && sh[1] > 1 {
			s.params = append(s.params, p)
			u := make([]float64, sh[0])
			for i := range u {
				u[i] = 1 / math.Sqrt(float64(sh[0]))
			}
			s.u = append(s.u, u)
		}
	}
	return s
}

// normalize divides every weight matrix by its estimated σ, running iters
// power iterations first.
func (s *spectral) normalize(iters int) {
	for k, p := range s.params {
		d := p.Value().(*tensor.Dense)
		r, c := d.Shape()[0], d.Shape()[1]
		w := f64s(d)
		u := s.u[k]
		v := make([]float64, c)
		var sigma float64
		for it := 0; it < iters; it++ {
			// v = Wᵀu / ‖Wᵀu‖, u = W v / ‖W v‖, σ = uᵀ W v.
			for j := range v {
				v[j] = 0
			}
			for i := 0; i < r; i++ {
				for j := 0; j < c; j++ {
					v[j] += w[i*c+j] * u[i]
				}
			}
			normalizeVec(v)
			for i := 0; i < r; i++ {
				t := 0.0
				for j := 0; j < c; j++ {
					t += w[i*c+j] * v[j]
				}
				u[i] = t
			}
			sigma = normalizeVec(u)
		}
		if !(sigma > 1e-12) || math.IsInf(sigma, 0) {
			continue
		}
		switch x := d.Data().(type) {
		case []float64:
			for i := range x {
				x[i] /= sigma
			}
		case []float32:
			for i := range x {
				x[i] = float32(float64(x[i]) / sigma)
			}
		}
	}
}

// normalizeVec scales v to unit length (unchanged if 0) and returns its
// former length.
func normalizeVec(v []float64) float64 {
	n := 0.0
	for _, x := range v {
		n += x * x
	}
	n = math.Sqrt(n)
	if n > 0 {
		for i := range v {
			v[i] /= n
		}
	}
	return n
}
