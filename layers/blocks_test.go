package layers

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/fairmp/fairmp/graph"
)

// TestForwardBlocksErrors: a chain of blocks that does not fit the model
// or the input is an error naming the block, for every BlockModel.
func TestForwardBlocksErrors(t *testing.T) {
	gr, err := graph.FromEdges(4, [][2]int{{0, 1}, {1, 2}, {2, 3}})
	require.NoError(t, err)
	blk := func(rows, cols int) *graph.Matrix {
		m, err := graph.NewMatrixCSR(rows, cols, make([]int, rows+1), nil, nil)
		require.NoError(t, err)
		return m
	}
	g := G.NewGraph()
	x := G.NewMatrix(g, tensor.Float64, G.WithShape(5, 3), G.WithName("x"), G.WithInit(G.Zeroes()))
	gcn, err := NewGCN(g, gr, DefaultGCNConfig(3, 2), nil)
	require.NoError(t, err)
	sgcCfg := DefaultSGCConfig(3, 2)
	sgcCfg.K = 2
	sgc, err := NewSGC(g, gr, sgcCfg, nil)
	require.NoError(t, err)
	appCfg := DefaultAPPNPConfig(3, 2)
	appCfg.K = 2
	app, err := NewAPPNP(g, gr, appCfg, nil)
	require.NoError(t, err)
	mlp, err := NewMLP(g, nil, DefaultMLPConfig(3, 2), nil)
	require.NoError(t, err)
	gat, err := NewGAT(g, gr, DefaultGATConfig(3, 2), nil)
	require.NoError(t, err)
	jk, err := NewJKNet(g, gr, DefaultJKNetConfig(3, 2), nil)
	require.NoError(t, err)
	for _, m := range []BlockModel{gcn, sgc, app, gat, jk} {
		hops, err := Hops(m)
		require.NoError(t, err)
		assert.Equal(t, 2, hops, "%T", m)
		_, err = ForwardBlocks(m, x, []*graph.Matrix{blk(3, 5)})
		assert.ErrorContains(t, err, "1 blocks, want 2")
		_, err = ForwardBlocks(m, x, []*graph.Matrix{blk(3, 4), blk(2, 3)})
		assert.ErrorContains(t, err, "block 0 is 3 × 4, want 5 columns")
		_, err = ForwardBlocks(m, x, []*graph.Matrix{blk(3, 5), blk(4, 3)})
		assert.ErrorContains(t, err, "block 1 is 4 × 3, want no more rows than columns")
		_, err = ForwardBlocks(m, x, []*graph.Matrix{blk(3, 5), nil})
		assert.ErrorContains(t, err, "block 1 is nil")
		z, err := ForwardBlocks(m, x, []*graph.Matrix{blk(3, 5), blk(2, 3)})
		require.NoError(t, err)
		assert.Equal(t, tensor.Shape{2, 2}, z.Shape(), "%T: the targets' logits", m)
	}
	hops, err := Hops(mlp)
	require.NoError(t, err)
	assert.Equal(t, 0, hops)
	_, err = ForwardBlocks(mlp, x, []*graph.Matrix{blk(3, 5)})
	assert.ErrorContains(t, err, "1 blocks, want 0")
	z, err := ForwardBlocks(mlp, x, nil)
	require.NoError(t, err)
	assert.Equal(t, tensor.Shape{5, 2}, z.Shape())
}
