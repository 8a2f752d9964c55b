package layers

// Attend, a GAT layer over the hop's edges: its implementations together,
// one per flow: countFlow (Hops), nodeFlow (gorgonia: Forward and
// ForwardBlocks) and rowFlow (plain Go: LayerwiseLogits). The Beam one is
// beamFlow's, in package fmp/fmpbeam (a module of its own, so that this
// one does not depend on Beam).

import (
	"fmt"

	"github.com/fairmp/fairmp/graph"
	"github.com/fairmp/fairmp/internal/spkern"
)

func (f *countFlow) Attend(h Value, l *GATConv) (Value, error) {
	if err := checkAttend(h, l); err != nil {
		return Value{}, err
	}
	return f.at(h, l.cfg.outWidth(), h.level+1), nil
}

func checkAttend(h Value, l *GATConv) error {
	if l == nil {
		return fmt.Errorf("%w: Attend: nil layer", ErrFlow)
	}
	if l.cfg.In != h.cols {
		return fmt.Errorf("%w: Attend: layer %q takes %d columns, the input has %d", ErrFlow, l.cfg.Name, l.cfg.In, h.cols)
	}
	return nil
}

// Attend is the layer's pair of GAT ops over the hop's edges: the whole
// matrix's pattern, or the block's sampled in-edges.
func (f *nodeFlow) Attend(h Value, l *GATConv) (Value, error) {
	if err := checkAttend(h, l); err != nil {
		return Value{}, err
	}
	a, err := f.matrix(h.level)
	if err != nil {
		return Value{}, err
	}
	x, err := f.node(h)
	if err != nil {
		return Value{}, err
	}
	where := fmt.Sprintf("GAT %q", l.cfg.Name)
	if err := checkInput(x, l.w, where); err != nil {
		return Value{}, err
	}
	if f.blocks != nil {
		where = fmt.Sprintf("GAT %q: block %d", l.cfg.Name, h.level)
	}
	y, err := l.forwardWith(f.gatCSR(a), x, where)
	if err != nil {
		return Value{}, err
	}
	return f.val(y, l.cfg.outWidth(), h.level+1), nil
}

// gatCSR returns the attention structure of a matrix's pattern, built
// once per matrix and flow: on the whole graph the one with reverse edges
// (NewGATCSR's), on a block the transposed one.
func (f *nodeFlow) gatCSR(a *graph.Matrix) *spkern.GATCSR {
	if c, ok := f.gat[a]; ok {
		return c
	}
	if f.gat == nil {
		f.gat = map[*graph.Matrix]*spkern.GATCSR{}
	}
	r, c := a.Dims()
	g, ok := (*spkern.GATCSR)(nil), false
	if f.blocks == nil && r == c {
		// The whole graph's matrix: the structure with reverse edges,
		// whose gradient kernels need no transpose.
		g, ok = spkern.NewGATWhole(r, a.Indptr(), a.Indices())
	}
	if !ok {
		g = spkern.NewGATBlock(r, c, a.Indptr(), a.Indices())
	}
	f.gat[a] = g
	return g
}

// Attend computes h·W (Dense), then the attention and aggregation over
// the pattern of the whole graph's matrix (gatLayerRows).
func (f *rowFlow[T]) Attend(h Value, l *GATConv) (Value, error) {
	if err := checkAttend(h, l); err != nil {
		return Value{}, err
	}
	if err := f.checkAdj("attends over edges"); err != nil {
		return Value{}, err
	}
	xw, err := f.Dense(h, l.w, nil, Activation{})
	if err != nil {
		return Value{}, err
	}
	r, err := f.rowsOf(xw)
	if err != nil {
		return Value{}, err
	}
	hw, err := f.all(r, xw.cols)
	if err != nil {
		return Value{}, err
	}
	if f.gat == nil {
		f.gat = spkern.NewGATBlock(f.n, f.n, f.adj.Indptr(), f.adj.Indices())
	}
	return valueOf(&rows[T]{data: gatLayerRows(f.gat, l, hw)}, l.cfg.outWidth()), nil
}
