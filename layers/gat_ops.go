package layers

import (
	"encoding/binary"
	"fmt"
	"hash"
	"math"

	"github.com/chewxy/hm"
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

// gatKind selects what a gatOp computes.
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

// gatOp is every custom op of the GAT layer; kind selects the computation.
type gatOp struct {
	opkit.Buf // the output, kept between runs
	opkit.Pure
	kind  gatKind
	c     *spkern.GATCSR
	heads int
	f     int
	mean  bool
	slope float64
}

var (
	_ G.SDOp            = (*gatOp)(nil)
	_ G.UsePreallocDoer = (*gatOp)(nil)
)

func (op *gatOp) Arity() int    { return gatKindArity[op.kind] }
func (op *gatOp) Type() hm.Type { return opkit.FnType(op.Arity()) }

func (op *gatOp) String() string {
	agg := "concat"
	if op.mean {
		agg = "mean"
	}
	return fmt.Sprintf("%s(E#%d, heads=%d, f=%d, %s, slope=%g)", gatKindNames[op.kind], op.c.ID, op.heads, op.f, agg, op.slope)
}

func (op *gatOp) WriteHash(h hash.Hash) {
	fmt.Fprintf(h, "fairmp.GAT")
	var b [8]byte
	put := func(v uint64) {
		binary.LittleEndian.PutUint64(b[:], v)
		h.Write(b[:])
	}
	put(uint64(op.kind))
	put(op.c.ID)
	put(uint64(op.heads))
	put(uint64(op.f))
	if op.mean {
		put(1)
	} else {
		put(0)
	}
	put(math.Float64bits(op.slope))
}

func (op *gatOp) Hashcode() uint32 { return opkit.Hash32(op.WriteHash) }

// outShape returns the output shape for the given input shapes.
func (op *gatOp) outShape(in []tensor.Shape) (tensor.Shape, error) {
	if len(in) != op.Arity() {
		return nil, fmt.Errorf("%v: %d inputs, want %d", op, len(in), op.Arity())
	}
	for k, s := range in {
		if len(s) != 2 {
			return nil, fmt.Errorf("%v: input %d has shape %v, want a matrix", op, k, s)
		}
	}
	// H and the scores' gradients have a row per source, the output a
	// row per destination (the same nodes on the whole graph; the first
	// rows of the sources on a block).
	n, cols, e, hf := op.c.N, op.c.Cols, op.c.Edges(), op.heads*op.f
	ow := hf
	if op.mean {
		ow = op.f
	}
	hs := tensor.Shape{cols, hf}
	as := tensor.Shape{1, hf}
	es := tensor.Shape{e, op.heads}
	ss := tensor.Shape{cols, 2 * op.heads}
	os := tensor.Shape{n, ow}
	var want []tensor.Shape
	var out tensor.Shape
	switch op.kind {
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
		return nil, fmt.Errorf("gat: unknown op kind %d", op.kind)
	}
	for k := range want {
		if !in[k].Eq(want[k]) {
			return nil, fmt.Errorf("%v: input %d has shape %v, want %v", op, k, in[k], want[k])
		}
	}
	return out, nil
}

func (op *gatOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	ss := make([]tensor.Shape, len(in))
	for k, d := range in {
		s, ok := d.(tensor.Shape)
		if !ok {
			return nil, fmt.Errorf("%v: input %d: shape of type %T", op, k, d)
		}
		ss[k] = s
	}
	return op.outShape(ss)
}

func (op *gatOp) DiffWRT(inputs int) []bool {
	w := make([]bool, inputs)
	switch op.kind {
	case gatKAttn, gatKAgg:
		for k := range w {
			w[k] = true
		}
	}
	return w
}

func (op *gatOp) Do(inputs ...G.Value) (G.Value, error) {
	return op.UsePreallocDo(nil, inputs...)
}

func (op *gatOp) UsePreallocDo(prealloc G.Value, inputs ...G.Value) (G.Value, error) {
	if len(inputs) != op.Arity() {
		return nil, fmt.Errorf("%v: %d inputs, want %d", op, len(inputs), op.Arity())
	}
	ds := make([]*tensor.Dense, len(inputs))
	shapes := make([]tensor.Shape, len(inputs))
	for k, v := range inputs {
		d, err := opkit.Dense(v)
		if err != nil {
			return nil, fmt.Errorf("%v: input %d: %w", op, k, err)
		}
		if k > 0 && d.Dtype() != ds[0].Dtype() {
			return nil, fmt.Errorf("%v: input %d has dtype %v, want %v (input 0's)", op, k, d.Dtype(), ds[0].Dtype())
		}
		ds[k] = d
		shapes[k] = d.Shape()
	}
	shape, err := op.outShape(shapes)
	if err != nil {
		return nil, err
	}
	dt := ds[0].Dtype()
	out := op.Get(prealloc, dt, shape...)
	switch dt {
	case tensor.Float64:
		gatRun(op, gatData[float64](ds), out.Data().([]float64))
	case tensor.Float32:
		gatRun(op, gatData[float32](ds), out.Data().([]float32))
	default:
		return nil, fmt.Errorf("%v: dtype %v, want float32 or float64", op, dt)
	}
	return out, nil
}

func gatData[T spkern.Float](ds []*tensor.Dense) [][]T {
	out := make([][]T, len(ds))
	for k, d := range ds {
		out[k] = d.Data().([]T)
	}
	return out
}

// gatRun dispatches to the kernel of op.kind; shapes are already checked.
func gatRun[T spkern.Float](op *gatOp, in [][]T, out []T) {
	c, heads, f, slope := op.c, op.heads, op.f, T(op.slope)
	switch op.kind {
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
		spkern.GATAggregate(c, in[0], in[1], heads, f, op.mean, out)
	case gatKAggT:
		spkern.GATAggregateT(c, in[0], in[1], heads, f, op.mean, out)
	case gatKEdgeDot:
		spkern.GATEdgeDot(c, in[0], in[1], heads, f, op.mean, out)
	}
}

// with returns a copy of op computing kind.
func (op *gatOp) with(kind gatKind) *gatOp {
	o := *op
	o.kind, o.Buf = kind, opkit.Buf{} // never share an output buffer
	return &o
}

func (op *gatOp) SymDiff(inputs G.Nodes, output, grad *G.Node) (G.Nodes, error) {
	if len(inputs) != op.Arity() {
		return nil, fmt.Errorf("%v: SymDiff: %d inputs, want %d", op, len(inputs), op.Arity())
	}
	switch op.kind {
	case gatKAttn:
		h, as, ad := inputs[0], inputs[1], inputs[2]
		dsd, err := G.ApplyOp(op.with(gatKAttnGrad), output, grad, h, as, ad)
		if err != nil {
			return nil, err
		}
		dh, err := G.ApplyOp(op.with(gatKScoreGradH), dsd, as, ad)
		if err != nil {
			return nil, err
		}
		das, err := G.ApplyOp(op.with(gatKScoreGradSrc), dsd, h)
		if err != nil {
			return nil, err
		}
		dad, err := G.ApplyOp(op.with(gatKScoreGradDst), dsd, h)
		if err != nil {
			return nil, err
		}
		return G.Nodes{dh, das, dad}, nil
	case gatKAgg:
		alpha, h := inputs[0], inputs[1]
		dalpha, err := G.ApplyOp(op.with(gatKEdgeDot), grad, h)
		if err != nil {
			return nil, err
		}
		dh, err := G.ApplyOp(op.with(gatKAggT), alpha, grad)
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
