package layers

import (
	"fmt"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/fairmp/fairmp/graph"
	"github.com/fairmp/fairmp/internal/opkit"
	"github.com/fairmp/fairmp/internal/spkern"
)

// This file holds GAT's custom ops; their kernels are in internal/spkern
// (gat.go), with the other sparse kernels. The attention layer is
// computed by two forward ops:
//
//	gatKAttn: (H, aSrc, aDst) -> α      per-edge attention, E × heads, with
//	                                    the edge softmax over each destination
//	gatKAgg:  (α, H)          -> out    out_i = Σ_j α_ij h_j, per head,
//	                                    concatenated or averaged
//
// and their gradient ops (gatKAttnGrad, gatKScoreGradH, gatKScoreGradSrc,
// gatKScoreGradDst, gatKAggT, gatKEdgeDot). Edges are stored in CSR order of
// a spkern.GATCSR: rows are destinations, the entries of row i are i's in-edges
// (its neighbours, plus itself when self-loops are added), sorted by source.

// gatKind selects what a GAT op (gatSpec) computes.
type gatKind uint8

const (
	gatKAttn         gatKind = iota // (H, aSrc, aDst) -> α (E × heads)
	gatKAttnGrad                    // (α, dα, H, aSrc, aDst) -> dSD (n × 2·heads)
	gatKScoreGradH                  // (dSD, aSrc, aDst) -> dH (n × heads·f)
	gatKScoreGradSrc                // (dSD, H) -> daSrc (1 × heads·f)
	gatKScoreGradDst                // (dSD, H) -> daDst (1 × heads·f)
	gatKAgg                         // (α, H) -> out (n × heads·f, or n × f when mean)
	gatKAggT                        // (α, dOut) -> dH (n × heads·f)
	gatKEdgeDot                     // (dOut, H) -> dα (E × heads)
)

var gatKindNames = [...]string{"GATAttention", "GATAttentionGrad", "GATScoreGradH", "GATScoreGradSrc",
	"GATScoreGradDst", "GATAggregate", "GATAggregateT", "GATEdgeDot"}

var gatKindArity = [...]int{3, 5, 3, 2, 2, 2, 2, 2}

// gatParams are every custom op of the GAT layer's; kind selects the
// computation.
type gatParams struct {
	kind  gatKind
	c     *spkern.GATCSR
	heads int
	f     int
	mean  bool
	slope float64
}

// gatSpec is every custom op of the GAT layer.
var gatSpec = &opkit.Spec[gatParams]{
	ID: "fairmp.GAT",
	Name: func(p gatParams) string {
		agg := "concat"
		if p.mean {
			agg = "mean"
		}
		return fmt.Sprintf("%s(E#%d, heads=%d, f=%d, %s, slope=%g)", gatKindNames[p.kind], p.c.ID, p.heads, p.f, agg, p.slope)
	},
	Sig:   func(p gatParams) opkit.Sig { return opkit.Mats(gatKindArity[p.kind]) },
	Shape: func(p gatParams, in []tensor.Shape) (tensor.Shape, error) { return p.outShape(in) },
	Hash: func(p gatParams, h opkit.Hasher) {
		h.U64(uint64(p.kind), p.c.ID)
		h.Int(p.heads, p.f)
		h.Bool(p.mean)
		h.F64(p.slope)
	},
	F32: gatFwd[float32],
	F64: gatFwd[float64],
	DiffWRT: func(p gatParams, n int) []bool {
		w := make([]bool, n)
		switch p.kind {
		case gatKAttn, gatKAgg:
			for k := range w {
				w[k] = true
			}
		}
		return w
	},
	Grad: gatGrad,
	Keep: true,
}

// outShape returns the output shape for the given input shapes (as many
// as the kind's arity, matrices).
func (p gatParams) outShape(in []tensor.Shape) (tensor.Shape, error) {
	// H and the scores' gradients have a row per source, the output a
	// row per destination (the same nodes on the whole graph; the first
	// rows of the sources on a block).
	n, cols, e, hf := p.c.N, p.c.Cols, p.c.Edges(), p.heads*p.f
	ow := hf
	if p.mean {
		ow = p.f
	}
	hs := tensor.Shape{cols, hf}
	as := tensor.Shape{1, hf}
	es := tensor.Shape{e, p.heads}
	ss := tensor.Shape{cols, 2 * p.heads}
	os := tensor.Shape{n, ow}
	var want []tensor.Shape
	var out tensor.Shape
	switch p.kind {
	case gatKAttn:
		want, out = []tensor.Shape{hs, as, as}, es
	case gatKAttnGrad:
		want, out = []tensor.Shape{es, es, hs, as, as}, ss
	case gatKScoreGradH:
		want, out = []tensor.Shape{ss, as, as}, hs
	case gatKScoreGradSrc, gatKScoreGradDst:
		want, out = []tensor.Shape{ss, hs}, as
	case gatKAgg:
		want, out = []tensor.Shape{es, hs}, os
	case gatKAggT:
		want, out = []tensor.Shape{es, os}, hs
	case gatKEdgeDot:
		want, out = []tensor.Shape{os, hs}, es
	default:
		return nil, fmt.Errorf("gat: unknown op kind %d", p.kind)
	}
	for k := range want {
		if !in[k].Eq(want[k]) {
			return nil, fmt.Errorf("input %d has shape %v, want %v", k, in[k], want[k])
		}
	}
	return out, nil
}

// gatFwd dispatches to the kernel of p.kind; shapes are already checked.
func gatFwd[T spkern.Float](p gatParams, a opkit.Args[T]) error {
	in, out := a.In, a.Out
	c, heads, f, slope := p.c, p.heads, p.f, T(p.slope)
	switch p.kind {
	case gatKAttn:
		spkern.GATAttnForward(c, in[0], in[1], in[2], heads, f, slope, out)
	case gatKAttnGrad:
		spkern.GATAttnBackward(c, in[0], in[1], in[2], in[3], in[4], heads, f, slope, out)
	case gatKScoreGradH:
		spkern.GATScoreGradH(in[0], in[1], in[2], c.Cols, heads, f, out)
	case gatKScoreGradSrc:
		spkern.GATScoreGradA(in[0], in[1], c.Cols, heads, f, 0, out)
	case gatKScoreGradDst:
		spkern.GATScoreGradA(in[0], in[1], c.Cols, heads, f, heads, out)
	case gatKAgg:
		spkern.GATAggregate(c, in[0], in[1], heads, f, p.mean, out)
	case gatKAggT:
		spkern.GATAggregateT(c, in[0], in[1], heads, f, p.mean, out)
	case gatKEdgeDot:
		spkern.GATEdgeDot(c, in[0], in[1], heads, f, p.mean, out)
	}
	return nil
}

// with returns p computing kind.
func (p gatParams) with(kind gatKind) gatParams {
	p.kind = kind
	return p
}

func gatGrad(op *opkit.Op[gatParams], inputs G.Nodes, output, grad *G.Node) (G.Nodes, error) {
	p := op.P
	switch p.kind {
	case gatKAttn:
		h, as, ad := inputs[0], inputs[1], inputs[2]
		dsd, err := op.Apply(p.with(gatKAttnGrad), output, grad, h, as, ad)
		if err != nil {
			return nil, err
		}
		dh, err := op.Apply(p.with(gatKScoreGradH), dsd, as, ad)
		if err != nil {
			return nil, err
		}
		das, err := op.Apply(p.with(gatKScoreGradSrc), dsd, h)
		if err != nil {
			return nil, err
		}
		dad, err := op.Apply(p.with(gatKScoreGradDst), dsd, h)
		if err != nil {
			return nil, err
		}
		return G.Nodes{dh, das, dad}, nil
	case gatKAgg:
		alpha, h := inputs[0], inputs[1]
		dalpha, err := op.Apply(p.with(gatKEdgeDot), grad, h)
		if err != nil {
			return nil, err
		}
		dh, err := op.Apply(p.with(gatKAggT), alpha, grad)
		if err != nil {
			return nil, err
		}
		return G.Nodes{dalpha, dh}, nil
	}
	return nil, fmt.Errorf("%v: no second-order gradient", op)
}

// newGATCSR builds the in-edge structure of gr, with one self-loop per
// node when selfLoops is true (graph.Graph holds no self-loops, so none
// is counted twice).
func newGATCSR(gr *graph.Graph, selfLoops bool) *spkern.GATCSR {
	return spkern.NewGATCSR(gr.N(), gr.Neighbors, selfLoops)
}
