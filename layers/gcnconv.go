package layers

import (
	"fmt"
	"math/rand"

	G "gorgonia.org/gorgonia"

	"github.com/fairmp/fairmp/graph"
)

// Propagation says how the propagation matrix Ã is built from a graph, as
// PyG's gcn_norm: self-loops of weight 1 (2 when Improved) are added when
// AddSelfLoops, and Ã = D̂^-1/2 Â D̂^-1/2 when Normalize. With
// DoublyStochastic, Ã is then rescaled so that its every row and column
// sums to 1 (RawlsGCN-Graph). The matrix is built once, when a layer or
// model is constructed.
type Propagation struct {
	// Improved uses self-loops of weight 2 (PyG's improved GCN). Default false.
	Improved bool `json:"improved"`
	// AddSelfLoops adds the self-loops. Default true.
	AddSelfLoops bool `json:"add_self_loops"`
	// Normalize applies the symmetric normalisation. Default true.
	Normalize bool `json:"normalize"`
	// DoublyStochastic replaces the matrix the fields above build, Â or
	// its normalisation, by its doubly stochastic scaling P = DÂD
	// (graph.DoublyStochastic, Sinkhorn–Knopp with the options
	// Sinkhorn): the same edges, reweighted so that every node's row
	// and column sum to 1. This is the matrix of RawlsGCN-Graph (Kang et
	// al., WWW 2022; layers/fairtrain's "rawlsgcn"). In D̂^-½ÂD̂^-½ the
	// row and column of a node of degree d among neighbours of degree d̄
	// sum to about √(d/d̄), so that high-degree nodes weigh more in the
	// gradients of the weights than low-degree ones (the paper's
	// analysis); in P every node weighs the same.
	// The scaling is unique, so Normalize only changes where the
	// iteration starts (the reference code starts, as Normalize does,
	// from the symmetric normalisation). Default false; model files
	// written before the field existed, and every file of a model
	// without it, have no "doubly_stochastic" key.
	//
	// P exists only where every node has a self-loop or the graph has
	// total support (see graph.DoublyStochastic): Matrix returns an
	// error wrapping graph.ErrNotConverged otherwise. Every entry of P
	// depends on the whole graph, so MatrixOf builds the whole matrix.
	DoublyStochastic bool `json:"doubly_stochastic,omitempty"`
	// Sinkhorn is the tolerance and the cap of the iteration when
	// DoublyStochastic (start from graph.DefaultSinkhornOptions: every
	// row and column within 1e-6 of 1, at most 1000 steps), recorded in
	// model files so that a loaded model rebuilds the same matrix; the
	// zero value (and no "sinkhorn" key in a file) otherwise.
	Sinkhorn graph.SinkhornOptions `json:"sinkhorn,omitzero"`
}

// DefaultPropagation returns PyG's GCNConv defaults: self-loops of weight
// 1 and symmetric normalisation.
func DefaultPropagation() Propagation {
	return Propagation{AddSelfLoops: true, Normalize: true}
}

// DoublyStochasticPropagation returns RawlsGCN-Graph's propagation: the
// doubly stochastic scaling of DefaultPropagation's matrix, with
// graph.DefaultSinkhornOptions.
func DoublyStochasticPropagation() Propagation {
	p := DefaultPropagation()
	p.DoublyStochastic, p.Sinkhorn = true, graph.DefaultSinkhornOptions()
	return p
}

// Validate returns an error for Improved without AddSelfLoops (the
// improved weight applies to the self-loops), for DoublyStochastic with
// invalid Sinkhorn options, and for Sinkhorn options without
// DoublyStochastic (they would be ignored).
func (p Propagation) Validate() error {
	if p.Improved && !p.AddSelfLoops {
		return fmt.Errorf("Propagation: Improved without AddSelfLoops, want AddSelfLoops when Improved")
	}
	if p.DoublyStochastic {
		if err := p.Sinkhorn.Validate(); err != nil {
			return fmt.Errorf("Propagation: DoublyStochastic: %w (start from graph.DefaultSinkhornOptions)", err)
		}
	} else if p.Sinkhorn != (graph.SinkhornOptions{}) {
		return fmt.Errorf("Propagation: Sinkhorn is %+v without DoublyStochastic, want DoublyStochastic on, or the zero Sinkhorn", p.Sinkhorn)
	}
	return nil
}

// Matrix returns the propagation matrix of gr (see graph.GCNNorm and,
// with DoublyStochastic, graph.DoublyStochastic). It returns an error for
// a nil graph, an invalid Propagation, or a doubly stochastic scaling
// that does not converge (wrapping graph.ErrNotConverged).
func (p Propagation) Matrix(gr *graph.Graph) (*graph.Matrix, error) {
	if gr == nil {
		return nil, fmt.Errorf("layers: Propagation.Matrix: nil graph")
	}
	if err := p.Validate(); err != nil {
		return nil, fmt.Errorf("layers: %w", err)
	}
	a, err := graph.GCNNorm(gr, p.normOptions())
	if err != nil || !p.DoublyStochastic {
		return a, err
	}
	if a, err = graph.DoublyStochastic(a, p.Sinkhorn); err != nil {
		return nil, fmt.Errorf("layers: Propagation.DoublyStochastic: %w", err)
	}
	return a, nil
}

// MatrixOf returns the rows and columns nodes (ascending) of Matrix(gr),
// computed from gr's degrees without building the whole matrix (see
// graph.GCNNormOf): the matrix a model needs on the receptive field of
// some nodes. With DoublyStochastic, whose entries depend on the whole
// graph, it builds Matrix(gr) and takes those rows and columns: the cost
// of the whole matrix, whatever the number of nodes.
func (p Propagation) MatrixOf(gr *graph.Graph, nodes []int) (*graph.Matrix, error) {
	if gr == nil {
		return nil, fmt.Errorf("layers: Propagation.MatrixOf: nil graph")
	}
	if err := p.Validate(); err != nil {
		return nil, fmt.Errorf("layers: %w", err)
	}
	if !p.DoublyStochastic {
		return graph.GCNNormOf(gr, nodes, p.normOptions())
	}
	if len(nodes) == 0 {
		return nil, fmt.Errorf("layers: Propagation.MatrixOf: no nodes")
	}
	for r, i := range nodes {
		if i < 0 || i >= gr.N() || (r > 0 && i <= nodes[r-1]) {
			return nil, fmt.Errorf("layers: Propagation.MatrixOf: nodes[%d] = %d, want nodes in [0, %d), strictly ascending", r, i, gr.N())
		}
	}
	a, err := p.Matrix(gr)
	if err != nil || len(nodes) == gr.N() {
		return a, err
	}
	return subMatrix(a, nodes)
}

// subMatrix returns the rows and columns nodes (valid, ascending) of a.
func subMatrix(a *graph.Matrix, nodes []int) (*graph.Matrix, error) {
	n, _ := a.Dims()
	pos := make([]int32, n)
	for i := range pos {
		pos[i] = -1
	}
	for r, i := range nodes {
		pos[i] = int32(r)
	}
	indptr, indices, val := a.Indptr(), a.Indices(), a.Values64()
	outPtr := make([]int, len(nodes)+1)
	var outIdx []int32
	var outVal []float64
	for r, i := range nodes {
		for q := indptr[i]; q < indptr[i+1]; q++ {
			if c := pos[indices[q]]; c >= 0 {
				outIdx, outVal = append(outIdx, c), append(outVal, val[q])
			}
		}
		outPtr[r+1] = len(outIdx)
	}
	return graph.NewMatrixCSR(len(nodes), len(nodes), outPtr, outIdx, outVal)
}

// normOptions returns graph's options for p.
func (p Propagation) normOptions() graph.NormOptions {
	w := 1.0
	if p.Improved {
		w = 2
	}
	return graph.NormOptions{AddSelfLoops: p.AddSelfLoops, SelfLoopWeight: w, Normalize: p.Normalize}
}

// gcnConvConfig configures one graph convolution Ã·(x·W) + b (PyG's
// GCNConv): a layer of GCN and JKNet.
type gcnConvConfig struct {
	// Base names the parameters (Name+".W", Name+".b"), gives the input
	// and output widths In and Out, the Dtype, and the Seed of W's
	// Glorot-uniform initialisation.
	Base
	// Bias adds a learnable bias after the propagation.
	Bias bool
}

// gcnConv is a graph convolution: linear transform without bias, sparse
// propagation with Ã, then the bias (PyG's order).
type gcnConv struct {
	cfg gcnConvConfig
	a   *graph.Matrix
	lin *Linear // bias-free
	B   *G.Node
}

func newGCNConv(g *G.ExprGraph, cfg gcnConvConfig, a *graph.Matrix, rng *rand.Rand) (*gcnConv, error) {
	if a == nil {
		return nil, fmt.Errorf("layers: GCNConv %q: nil propagation matrix", cfg.Name)
	}
	if r, c := a.Dims(); r != c {
		return nil, fmt.Errorf("layers: GCNConv %q: propagation matrix is %d × %d, want square", cfg.Name, r, c)
	}
	l := &gcnConv{cfg: cfg, a: a}
	var err error
	if l.lin, err = newLinear(g, cfg.Name, cfg.In, cfg.Out, false, cfg.Dtype, rng, LinearConfig{}); err != nil {
		return nil, err
	}
	if cfg.Bias {
		if l.B, err = newBias(g, cfg.Dtype, cfg.Out, cfg.Name+".b"); err != nil {
			return nil, err
		}
	}
	return l, nil
}

// Learnables returns W and, with bias, b.
func (l *gcnConv) Learnables() G.Nodes {
	if l.B == nil {
		return G.Nodes{l.lin.W}
	}
	return G.Nodes{l.lin.W, l.B}
}

// compute is the convolution in a Flow's primitives: act(Ã·(h·W) + b).
func (l *gcnConv) compute(f Flow, h Value, act Activation) (Value, error) {
	h, err := f.Dense(h, l.lin.W, nil, Activation{})
	if err != nil {
		return Value{}, err
	}
	return f.Propagate(h, Hop{Bias: l.B, Act: act})
}
