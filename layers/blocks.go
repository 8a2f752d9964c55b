package layers

import (
	"fmt"

	G "gorgonia.org/gorgonia"

	"github.com/fairmp/fairmp/graph"
)

// BlockModel is a Model that can also run on the sampled blocks of a
// mini-batch (package graph/sample): one propagation matrix per hop, each
// mapping the rows of a larger node set to those of the smaller one it
// starts with. MLP, GCN, SGC and APPNP implement it; GAT and JKNet do not
// yet (their attention and layer aggregation would need bipartite
// versions of their ops).
//
// With blocks whose rows are the rows of the model's full propagation
// matrix (a fan-out that covers every neighbour), ForwardBlocks gives the
// targets' rows of Forward, up to floating-point summation order.
type BlockModel interface {
	Model
	// Hops is the number of propagation steps, and so of blocks
	// ForwardBlocks takes: Layers for GCN, K for SGC and APPNP, 0 for an
	// MLP (which then takes the targets' features alone).
	Hops() int
	// ForwardBlocks returns the logits of the first rows(blocks[Hops−1])
	// nodes of the batch (its targets). x holds the features of every node
	// of the batch (cols(blocks[0]) rows, in the batch's order); block l
	// is the propagation of step l+1 and must have as many columns as
	// block l−1 has rows. Dropout follows the model's phase as in Forward.
	ForwardBlocks(x *G.Node, blocks []*graph.Matrix) (*G.Node, error)
}

var (
	_ BlockModel = (*MLP)(nil)
	_ BlockModel = (*GCN)(nil)
	_ BlockModel = (*SGC)(nil)
	_ BlockModel = (*APPNP)(nil)
)

// checkBlocks validates the chain of blocks against x's row count.
func checkBlocks(x *G.Node, blocks []*graph.Matrix, hops int, where string) error {
	if len(blocks) != hops {
		return fmt.Errorf("layers: %s: %d blocks, want %d (one per hop: the sampler's Fanouts must have %d entries)", where, len(blocks), hops, hops)
	}
	if x == nil {
		return fmt.Errorf("layers: %s: nil input node", where)
	}
	rows := x.Shape()[0]
	for l, b := range blocks {
		if b == nil {
			return fmt.Errorf("layers: %s: block %d is nil", where, l)
		}
		r, c := b.Dims()
		if c != rows {
			return fmt.Errorf("layers: %s: block %d is %d × %d, want %d columns (the rows of its input)", where, l, r, c, rows)
		}
		if r > c {
			return fmt.Errorf("layers: %s: block %d is %d × %d, want no more rows than columns (its rows are the first nodes of its input)", where, l, r, c)
		}
		rows = r
	}
	return nil
}

// Hops returns 0: an MLP does not propagate.
func (m *MLP) Hops() int { return 0 }

// ForwardBlocks is Forward on the targets' features (blocks must be
// empty).
func (m *MLP) ForwardBlocks(x *G.Node, blocks []*graph.Matrix) (*G.Node, error) {
	if err := checkBlocks(x, blocks, 0, "MLP "+m.cfg.Name); err != nil {
		return nil, err
	}
	return m.Forward(x)
}

// Hops returns the number of layers.
func (m *GCN) Hops() int { return m.cfg.Layers }

// ForwardBlocks is Forward with layer l propagating with blocks[l].
func (m *GCN) ForwardBlocks(x *G.Node, blocks []*graph.Matrix) (*G.Node, error) {
	where := "GCN " + m.cfg.Name
	if err := checkInput(x, m.convs[0].lin.W, where); err != nil {
		return nil, err
	}
	if err := checkBlocks(x, blocks, m.Hops(), where); err != nil {
		return nil, err
	}
	return m.forward(x, blocks) // Hops ≥ 1, so blocks is not nil
}

// Hops returns K.
func (m *SGC) Hops() int { return m.cfg.K }

// ForwardBlocks propagates x through the blocks (no gradient flows to x)
// and applies the linear layer. Unlike Forward it caches nothing: every
// batch has its own blocks.
func (m *SGC) ForwardBlocks(x *G.Node, blocks []*graph.Matrix) (*G.Node, error) {
	where := "SGC " + m.cfg.Name
	if err := checkInput(x, m.lin.W, where); err != nil {
		return nil, err
	}
	if err := checkBlocks(x, blocks, m.Hops(), where); err != nil {
		return nil, err
	}
	h := x
	var err error
	for l, b := range blocks {
		if h, err = SpMM(b, h); err != nil {
			return nil, fmt.Errorf("layers: %s: block %d: %w", where, l, err)
		}
	}
	return m.lin.Forward(h)
}

// Hops returns K.
func (m *APPNP) Hops() int { return m.cfg.K }

// ForwardBlocks runs the MLP on every node of the batch and the K
// personalised-PageRank steps on the blocks: step k keeps the first
// rows(blocks[k]) nodes, and its teleport term is the MLP's output on
// those rows.
func (m *APPNP) ForwardBlocks(x *G.Node, blocks []*graph.Matrix) (*G.Node, error) {
	where := "APPNP " + m.cfg.Name
	if err := checkBlocks(x, blocks, m.Hops(), where); err != nil {
		return nil, err
	}
	h, err := mlpForward(x, m.layers, m.cfg.Activation, m.cfg.InputDropout, m.cfg.Dropout, m.seeds, m.phase)
	if err != nil {
		return nil, err
	}
	z := h
	coef := []float64{1 - m.cfg.Alpha, m.cfg.Alpha}
	for k, b := range blocks {
		az, err := EdgeDropoutSpMM(b, z, m.cfg.EdgeDropout, m.edgeSeeds[k], m.phase)
		if err != nil {
			return nil, fmt.Errorf("layers: %s: step %d: %w", where, k, err)
		}
		hk := h
		if r, _ := b.Dims(); r != h.Shape()[0] {
			if hk, err = G.Slice(h, G.S(0, r)); err != nil {
				return nil, fmt.Errorf("layers: %s: step %d: %w", where, k, err)
			}
		}
		if z, err = linComb(coef, az, hk); err != nil {
			return nil, fmt.Errorf("layers: %s: step %d: %w", where, k, err)
		}
	}
	return z, nil
}
